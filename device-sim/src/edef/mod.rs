//! A simulator of the DGI's e-MCF web API ("e-DEF", docs/web-api.md of the gateway), over a real
//! socket: the gateway runs it in-process as a sandbox ([`start_edef`]), or it runs alone with
//! `emcf-sim edef`.
//!
//! # Command line
//!
//! ```text
//! emcf-sim edef --listen 127.0.0.1:0 [--nif X] [--nim Y] [--token T | --token-file F]
//!     [--token-valid-days N] [--pending-limit 10] [--expiry-secs 120] [--latency-ms N]
//!     [--tls [--tls-cert-out FILE]] [--date-format benin|iso] [--no-control]
//! ```
//!
//! The first line on stdout is the base URL (`http://127.0.0.1:43121`, or `https://...`
//! with `--tls`, whose self-signed certificate `--tls-cert-out` writes as PEM); logs go to
//! stderr; it runs until SIGINT or SIGTERM.
//!
//! # Endpoints
//!
//! Those of docs/web-api.md §2, under the base URL: `GET|POST /api/invoice`,
//! `PUT|POST /api/invoice/{uid}/confirm|cancel` (the action in any case), `GET /api/info/status`,
//! `taxGroups`, `currencyRates`, `invoiceTypes`, `paymentTypes`, `clientTypes`,
//! `referenceTypes`, `itemTypes`. Paths match in any case (as ASP.NET routes do). Every call
//! needs `Authorization: Bearer <token>` (the bare token is accepted too). Numbers in
//! requests may be JSON numbers or strings and are read exactly; unknown members are
//! ignored. Requests are checked with Benin's error codes (§7): 1 too many pending, 3 bad
//! invoice type, 4 missing reference, 5 reference not 24 characters, 7 bad payment type,
//! 8 no items, 9 bad tax group (or a TAX item outside L and N), 11 original not found,
//! 12 credit notes above the original's total (all finalized credit notes on it counted),
//! 20 confirm/cancel of a uid that is not pending, 99 anything else (the text says what).
//!
//! # Choices where docs/web-api.md says "unknown"
//!
//! - **Error shape**, for every error (DGI refusals on 400, and 401, 404, 405, 413):
//!   `{"errorCode":"<digits>","errorDesc":"<French text>"}`; `errorCode` is always a
//!   **string** of digits (the HTTP status for HTTP-level errors). Success answers of
//!   request, confirm and cancel carry `"errorCode":null,"errorDesc":null`.
//! - **Cancel** answers `{"uid":"<uid>","status":"cancelled","errorCode":null,"errorDesc":null}`.
//! - **Confirm** answers `{"dateTime","qrCode","codeDEFDGI","counters","nim","errorCode",
//!   "errorDesc"}`. `dateTime` is the DGI clock (Kinshasa, UTC+01:00) as
//!   `dd/MM/yyyy HH:mm:ss` ([`DateFormat::Benin`], default) or `yyyy-MM-ddTHH:mm:ss`
//!   ([`DateFormat::Iso`]); `qrCode` is `DGI-RDC;<nim>;<codeDEFDGI>;<nif>;<yyyyMMddHHmmss>`;
//!   `counters` is `"<FC>/<TC> <type>"`, FC counting per invoice type, both from 1.
//!   The codeDEFDGI is the device simulator's ([`crate::fiscal::code_def`]).
//! - Amounts are written with 2 decimals (`1392.00`), rates without trailing zeros (`16`);
//!   `curTotal` is added when `curRate` > 0 and `curCode` is not CDF. `taxSpecificAmount` is
//!   the line's specific tax (rounded to 2 places); it goes to `ts`, outside every group.
//! - `tokenValid`, `serverDateTime` and the pending list's `date` are RFC 3339 in UTC.
//! - Pending requests expire `expiry` after their creation; status, request, confirm and
//!   cancel forget the expired ones first. Nothing survives a restart.
//!
//! # Faults and the control endpoint
//!
//! [`EDEF_FAULTS`] lists them (name, values, what each does, an example; `emcf-sim edef --help`
//! and the README print that list). Set them in [`EdefOptions::faults`], with
//! [`RunningEdef::faults`], or with `POST /_sim/faults` and a JSON object of some of them (the
//! others stay; a wrong name or value is a 400 in French saying which and why, and changes
//! nothing; `DELETE /_sim/faults` clears them all; `GET /_sim/faults` reads them).
//! `GET /_sim/state` answers `{"pending":[uid...],"finalized":[{"uid","rn","type",
//! "codeDEFDGI","counters","total","vtotal","reference","at"}...]}`. The control endpoint
//! needs no token, ignores the faults and is off with `control: false` (`--no-control`).

mod answer;
mod api;
pub mod cli;
mod compute;
mod control;
mod dgi_error;
mod faults;
mod json;
mod lenient;
mod reference;
mod request;
mod server;
mod state;
mod tls;
mod validate;

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::info;

use crate::config::{check_identity, Rates};
use api::Api;
use state::{lock, EmcfState};

pub use dgi_error::DgiError;
pub use faults::{
    EdefFaults, FaultHandle, FaultPatch, FaultPatchError, EDEF_FAULTS, LATENCY_MS, MAX_LATENCY,
};
pub use state::FinalizedInvoice;
pub use tls::CERTIFICATE_NAMES;

/// How the confirmation's `dateTime` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DateFormat {
    /// `dd/MM/yyyy HH:mm:ss`, as Benin's e-MECeF writes it.
    #[default]
    Benin,
    /// `yyyy-MM-ddTHH:mm:ss`.
    Iso,
}

impl DateFormat {
    /// `at` in this format.
    pub fn format(self, at: NaiveDateTime) -> String {
        let pattern = match self {
            DateFormat::Benin => "%d/%m/%Y %H:%M:%S",
            DateFormat::Iso => "%Y-%m-%dT%H:%M:%S",
        };
        at.format(pattern).to_string()
    }
}

/// How an e-DEF simulator is configured.
#[derive(Debug, Clone)]
pub struct EdefOptions {
    /// The taxpayer's NIF; invoice requests must carry it.
    pub nif: String,
    /// The e-MCF's NIM (in the confirmations and the QR code).
    pub nim: String,
    /// The bearer token every call must carry.
    pub token: String,
    /// When the token expires (calls after it answer 401).
    pub token_valid_until: DateTime<Utc>,
    /// VAT rate per group A..P (`taxGroups`); the seed table by default.
    pub rates: Rates,
    /// Most pending requests at once (error 1 beyond).
    pub pending_limit: usize,
    /// How long a request stays pending.
    pub expiry: Duration,
    /// Secret mixed into every codeDEFDGI.
    pub signing_key: String,
    /// Serve HTTPS with a self-signed certificate ([`RunningEdef::ca_pem`]).
    pub tls: bool,
    /// Faults from the start.
    pub faults: EdefFaults,
    /// How the confirmation's `dateTime` is written.
    pub date_format: DateFormat,
    /// Serve the control endpoint `/_sim/...`.
    pub control: bool,
}

impl Default for EdefOptions {
    /// NIF `A1234567B`, NIM `CD01000001-1`, token `sim-token` valid 30 days from now, the
    /// seed VAT table, 10 pending requests expiring after 120 s, plain HTTP, control on.
    fn default() -> Self {
        EdefOptions {
            nif: "A1234567B".to_owned(),
            nim: "CD01000001-1".to_owned(),
            token: "sim-token".to_owned(),
            token_valid_until: Utc::now() + chrono::TimeDelta::days(30),
            rates: mcf_sfe::types::dgi_rates(),
            pending_limit: 10,
            expiry: Duration::from_secs(120),
            signing_key: "emcf-sim-demo-key".to_owned(),
            tls: false,
            faults: EdefFaults::default(),
            date_format: DateFormat::Benin,
            control: true,
        }
    }
}

impl EdefOptions {
    /// Checks that the simulator can run with these options.
    pub fn validate(&self) -> Result<(), EdefError> {
        check_identity("nif", &self.nif).map_err(EdefError::Config)?;
        check_identity("nim", &self.nim).map_err(EdefError::Config)?;
        if self.token.trim().is_empty() || self.token.trim() != self.token {
            return Err(EdefError::Config(
                "the token is empty or has surrounding spaces".to_owned(),
            ));
        }
        if self.signing_key.is_empty() {
            return Err(EdefError::Config("the signing key is empty".to_owned()));
        }
        for (index, rate) in self.rates.iter().enumerate() {
            if let Some(rate) = rate {
                if rate.is_sign_negative() || *rate >= rust_decimal::Decimal::ONE_HUNDRED {
                    return Err(EdefError::Config(format!(
                        "the rate of group {index} ({rate}) is not a percentage in [0, 100)"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Why an e-DEF simulator cannot start.
#[derive(Debug, thiserror::Error)]
pub enum EdefError {
    /// The options cannot be used.
    #[error("invalid e-DEF simulator options: {0}")]
    Config(String),
    /// The listening socket could not be opened.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address asked for.
        address: SocketAddr,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The certificate or the TLS configuration could not be made.
    #[error("TLS: {0}")]
    Tls(String),
    /// The token file could not be read.
    #[error("token file {}: {source}", path.display())]
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

/// An e-DEF simulator serving in this process. Dropping it stops the server.
#[derive(Debug)]
pub struct RunningEdef {
    local_addr: SocketAddr,
    ca_pem: Option<String>,
    api: Arc<Api>,
    task: JoinHandle<()>,
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
}

/// Binds `listen` (port 0 for any free port) and serves the e-DEF API on a tokio task.
/// Must be called within a tokio runtime.
pub async fn start_edef(
    listen: SocketAddr,
    options: EdefOptions,
) -> Result<RunningEdef, EdefError> {
    options.validate()?;
    let tls = options.tls.then(tls::self_signed).transpose()?;
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|source| EdefError::Listen {
            address: listen,
            source,
        })?;
    let local_addr = listener.local_addr().map_err(|source| EdefError::Listen {
        address: listen,
        source,
    })?;
    let state = Arc::new(Mutex::new(EmcfState::default()));
    let faults = FaultHandle::new(options.faults.clone(), Arc::clone(&state));
    let api = Arc::new(Api {
        options,
        faults,
        state,
    });
    let stop = CancellationToken::new();
    let (acceptor, ca_pem) = match tls {
        Some(identity) => (Some(identity.acceptor), Some(identity.certificate_pem)),
        None => (None, None),
    };
    let task = tokio::spawn(server::accept_loop(
        listener,
        Arc::clone(&api),
        acceptor,
        stop.clone(),
    ));
    let running = RunningEdef {
        local_addr,
        ca_pem,
        api,
        task,
        _stop_on_drop: stop.clone().drop_guard(),
        stop,
    };
    info!(url = %running.url(), nif = %running.api.options.nif, nim = %running.api.options.nim,
        "e-DEF simulator listening");
    Ok(running)
}

impl RunningEdef {
    /// The base URL: `http://127.0.0.1:PORT`, or `https://...` with TLS. An unspecified
    /// listening address (`0.0.0.0`, `::`) is written as the loopback address.
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        let ip = match self.local_addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("{scheme}://{}", SocketAddr::new(ip, self.local_addr.port()))
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The self-signed certificate (PEM) a client trusts, when serving TLS.
    pub fn ca_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    /// Changes the faults at run time.
    pub fn faults(&self) -> FaultHandle {
        self.api.faults.clone()
    }

    /// How many invoices were finalized (confirmed).
    pub fn finalized_count(&self) -> usize {
        lock(&self.api.state).finalized().len()
    }

    /// Every finalized invoice, in order.
    pub fn finalized(&self) -> Vec<FinalizedInvoice> {
        lock(&self.api.state).finalized().to_vec()
    }

    /// How many requests were refused because `pending_limit` requests were pending (the
    /// DGI's error 1): what a gateway sends beyond the window.
    pub fn refused_full_count(&self) -> u64 {
        lock(&self.api.state).refused_full()
    }

    /// The uids of the pending requests (expired ones excluded), oldest first.
    pub fn pending_uids(&self) -> Vec<String> {
        let mut state = lock(&self.api.state);
        state.purge_expired(std::time::Instant::now());
        state.pending().iter().map(|r| r.uid.clone()).collect()
    }

    /// Stops accepting, closes every connection and waits for the server task.
    pub async fn shutdown(self) {
        self.stop.cancel();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "the e-DEF server task ended abnormally");
        }
        info!("e-DEF simulator stopped");
    }
}
