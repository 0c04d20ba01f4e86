//! What the channel last saw of the DGI (reachable, the token and its expiry, the e-MCF's NIF
//! and NIM, its VAT rates) and the background watch that keeps it fresh: a status call every
//! `status_interval`, requests left pending by an earlier
//! run cancelled (they eat the window), and the token's expiry warned about 7 days ahead.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tracing::{error, info, warn};

use super::calls::{Api, ApiError};
use super::invoice::Rates;
use super::Shared;
use crate::certify::register_writer::RegisterWriter;
use crate::certify::status::{ChannelView, Problem};
use crate::certify::{CertifyError, TokenReason};
use crate::i18n::Lang;
use crate::model::{Organization, ProbeReport};
use crate::msg;

/// How long before its expiry a token is warned about.
const TOKEN_WARNING: chrono::Duration = chrono::Duration::days(7);

#[derive(Default)]
struct Seen {
    connected: bool,
    since: Option<DateTime<Utc>>,
    last_error: Option<String>,
    last_reply_at: Option<DateTime<Utc>>,
    token_valid: Option<DateTime<Utc>>,
    token_problem: Option<TokenReason>,
    nif: Option<String>,
    nim: Option<String>,
    blocked: bool,
    rates: Option<(Rates, Instant)>,
    odd_dates: bool,
    token_warned: Option<DateTime<Utc>>,
}

/// The channel's view of the DGI.
pub(super) struct Health {
    seen: Mutex<Seen>,
    /// The register, given when the service starts (to tell its uids from strays).
    journal: OnceLock<RegisterWriter>,
}

impl Health {
    pub(super) fn new() -> Health {
        Health {
            seen: Mutex::new(Seen::default()),
            journal: OnceLock::new(),
        }
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        crate::sync::lock(&self.seen)
    }

    /// The register, once given.
    pub(super) fn journal(&self) -> Option<&RegisterWriter> {
        self.journal.get()
    }

    pub(super) fn adopt(&self, journal: RegisterWriter) {
        let _ = self.journal.set(journal);
    }

    fn set_connected(seen: &mut Seen, connected: bool) {
        if seen.connected != connected || seen.since.is_none() {
            seen.connected = connected;
            seen.since = Some(Utc::now());
        }
    }

    /// The DGI answered.
    pub(super) fn answered(&self) {
        let mut seen = self.seen();
        Self::set_connected(&mut seen, true);
        seen.last_reply_at = Some(Utc::now());
        seen.token_problem = None;
    }

    /// The DGI could not be reached.
    pub(super) fn unreachable(&self, reason: &str) {
        let mut seen = self.seen();
        Self::set_connected(&mut seen, false);
        seen.last_error = Some(reason.to_owned());
    }

    /// The DGI rejected the token (or it cannot be read): logged at `error`, naming the device.
    pub(super) fn token_rejected(&self, device: &str, reason: &TokenReason) {
        let mut seen = self.seen();
        if seen.token_problem.as_ref() != Some(reason) {
            error!(device, %reason, "the DGI web API does not accept the token: install a new token (docs/error-codes.md, 155)");
        }
        seen.token_problem = Some(reason.clone());
        seen.last_error = Some(reason.to_string());
        seen.last_reply_at = Some(Utc::now());
    }

    /// 503 (153) at once when the DGI said this e-MCF is another taxpayer's than `org_nif`
    /// (the request would carry the organization's NIF under another's token).
    pub(super) fn refuse_foreign_nif(&self, org_nif: &str) -> Result<(), CertifyError> {
        match &self.seen().nif {
            Some(nif) if nif != org_nif => Err(CertifyError::WrongDevice {
                device_nif: nif.clone(),
                org_nif: org_nif.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    /// 503 (155) at once while the token is known to be refused.
    pub(super) fn refuse_if_down(&self, device: &str) -> Result<(), CertifyError> {
        match &self.seen().token_problem {
            Some(reason) => Err(CertifyError::TokenRejected {
                device: device.to_owned(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// What a failed invoice request means for the client (nothing was confirmed).
    pub(super) fn request_failed(&self, device: &str, error: ApiError) -> CertifyError {
        match error {
            ApiError::NotSent(reason) | ApiError::NoAnswer(reason) => {
                self.unreachable(&reason);
                CertifyError::DeviceUnavailable {
                    reason: msg!("reason-dgi-no-answer", detail = reason),
                    retry_after: Duration::from_secs(10),
                }
            }
            ApiError::Token(reason) => {
                self.token_rejected(device, &reason);
                CertifyError::TokenRejected {
                    device: device.to_owned(),
                    reason,
                }
            }
            error if error.is_window_full() => {
                self.answered();
                CertifyError::QueueFull {
                    retry_after: Duration::from_secs(5),
                }
            }
            ApiError::Refused(refusal) => {
                self.answered();
                CertifyError::DgiRefused {
                    code: refusal.code,
                    text: refusal.description,
                }
            }
            ApiError::Unreadable(reason) => CertifyError::DeviceNotReady {
                reason: msg!("reason-dgi-unreadable", detail = reason),
            },
        }
    }

    /// The VAT rates, read again when older than `interval` or forgotten.
    pub(super) async fn rates(&self, api: &Api, interval: Duration) -> Result<Rates, CertifyError> {
        let fresh = self
            .seen()
            .rates
            .filter(|(_, at)| at.elapsed() < interval)
            .map(|(rates, _)| rates);
        if let Some(rates) = fresh {
            return Ok(rates);
        }
        match api.tax_rates().await {
            Ok(edef::TaxRates(rates)) => {
                self.answered();
                self.seen().rates = Some((rates, Instant::now()));
                Ok(rates)
            }
            Err(error) => Err(self.request_failed(&api.device, error)),
        }
    }

    pub(super) fn forget_rates(&self) {
        self.seen().rates = None;
    }

    /// A confirmation's NIM differs from the e-MCF's: said once (the token names the e-MCF).
    pub(super) fn check_nim(&self, device: &str, nim: &str) {
        let mut seen = self.seen();
        if let Some(known) = &seen.nim {
            if known != nim {
                warn!(device, known = %known, confirmed = %nim, "the confirmation names another NIM than the e-MCF's status");
            }
        } else {
            seen.nim = Some(nim.to_owned());
        }
    }

    pub(super) fn odd_date_time(&self, device: &str, text: &str) {
        let mut seen = self.seen();
        if !seen.odd_dates {
            seen.odd_dates = true;
            warn!(device, date_time = %text, "the DGI's dateTime has a form not seen before: kept as sent, the gateway's clock used for display (logged once)");
        }
        crate::metrics::device_reply_anomaly(device, 0, "confirm.dateTime");
    }

    pub(super) fn view(&self, name: &str, queued: usize, pending: usize) -> ChannelView {
        let seen = self.seen();
        ChannelView {
            name: name.to_owned(),
            connected: seen.connected && seen.token_problem.is_none(),
            since: seen.since.unwrap_or_else(Utc::now),
            last_error: seen.last_error.clone(),
            last_reply_at: seen.last_reply_at,
            queued,
            dgi: None,
            token_valid: seen.token_valid,
            pending: Some(pending),
        }
    }

    /// The e-MCF's NIF, as the DGI's status last said.
    pub(super) fn known_nif(&self) -> Option<String> {
        self.seen().nif.clone()
    }

    /// Why the channel `device` could not certify now for `organizations` (those bound to it
    /// are checked).
    pub(super) fn problem(
        &self,
        device: &str,
        organizations: &[Organization],
        settling: bool,
    ) -> Option<Problem> {
        let seen = self.seen();
        let problem = |code, text| {
            Some(Problem {
                code,
                channel: "web_api",
                text,
            })
        };
        if let Some(reason) = &seen.token_problem {
            return problem(
                "token_rejected",
                msg!("problem-dgi-token-rejected", why = reason.message()),
            );
        }
        if !seen.connected {
            return problem(
                "link_down",
                match seen.last_error.as_deref() {
                    Some(why) => msg!("problem-dgi-down", detail = why),
                    None => msg!("problem-dgi-not-reached-yet"),
                },
            );
        }
        if seen.blocked {
            return problem("box_blocked", msg!("problem-dgi-blocked"));
        }
        if let Some(nif) = &seen.nif {
            let foreign: Vec<String> = organizations
                .iter()
                .filter(|org| org.device == device && org.nif != *nif)
                .map(|org| format!("{} ({})", org.id, org.nif))
                .collect();
            if !foreign.is_empty() {
                return problem(
                    "nif_mismatch",
                    msg!(
                        "problem-dgi-nif-mismatch",
                        nif = nif.as_str(),
                        organizations = foreign.join(", ")
                    ),
                );
            }
        }
        if settling {
            return problem("settling", msg!("problem-dgi-settling"));
        }
        None
    }

    fn status_seen(&self, device: &str, status: &edef::EmcfStatus) {
        let mut seen = self.seen();
        Self::set_connected(&mut seen, true);
        seen.last_reply_at = Some(Utc::now());
        seen.token_problem = None;
        seen.token_valid = status.token_valid;
        seen.nif.clone_from(&status.nif);
        if status.nim.is_some() {
            seen.nim.clone_from(&status.nim);
        }
        seen.blocked = status.status == Some(false);
        if let Some(valid) = status.token_valid {
            let now = Utc::now();
            let due = seen
                .token_warned
                .is_none_or(|at| now - at > chrono::Duration::days(1));
            if valid - now < TOKEN_WARNING && due {
                seen.token_warned = Some(now);
                warn!(device, token_valid = %valid.to_rfc3339(), "the e-MCF's token expires within 7 days: install a new one from the DGI portal");
            }
        }
    }
}

/// Starts the watch of `shared`'s channel; it ends when the channel is dropped.
pub(super) fn spawn_watch(shared: &Arc<Shared>) {
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut strays: HashMap<String, Instant> = HashMap::new();
        loop {
            let Some(shared) = weak.upgrade() else { return };
            let interval = shared.settings.status_interval;
            let wait = match watch_once(&shared, &mut strays).await {
                // A second look soon at requests that may be strays.
                true => interval.min(Duration::from_secs(5)),
                false => interval,
            };
            drop(shared);
            tokio::time::sleep(wait).await;
        }
    });
}

/// One status call; `true` when stray requests are waiting for a second look.
async fn watch_once(shared: &Arc<Shared>, strays: &mut HashMap<String, Instant>) -> bool {
    let device = shared.settings.name.as_str();
    let status = match shared.api.status().await {
        Ok(status) => status,
        Err(ApiError::Token(reason)) => {
            shared.health.token_rejected(device, &reason);
            return false;
        }
        Err(error) => {
            shared.health.unreachable(&error.to_string());
            return false;
        }
    };
    shared.health.status_seen(device, &status);
    let Some(journal) = shared.health.journal.get() else {
        return false;
    };
    // Strays are cancelled by one replica at a time, the leader (`certify/leader.rs`).
    if !journal.leads() {
        strays.clear();
        return false;
    }
    let Some(pending) = status.pending else {
        return false;
    };
    // A register that cannot be read (its database away) owns nothing we can see: no
    // request is a stray then, or an invoice in doubt would be cancelled.
    let Some(owned) = journal.open_refs(device).await else {
        return !strays.is_empty();
    };
    let owned: HashSet<String> = owned.into_iter().collect();
    let now: HashSet<String> = pending
        .into_iter()
        .map(|p| p.uid)
        .filter(|uid| !owned.contains(uid) && !shared.is_live(uid))
        .collect();
    // A uid is a stray when two looks apart show it pending, owned by no intent and no lane;
    // while other replicas run, also pending for longer than a lane holds a request before
    // its intent is written (their lanes are not seen from here).
    let least_age = if journal.others_run().await {
        shared.settings.hold
    } else {
        Duration::ZERO
    };
    strays.retain(|uid, _| now.contains(uid));
    for uid in &now {
        match strays.get(uid) {
            Some(first) if first.elapsed() >= least_age => {
                info!(device, %uid, "cancelling a request pending on the DGI that no invoice of this gateway owns (it eats the pending window)");
                super::run::cancel(shared, uid).await;
                strays.remove(uid);
            }
            Some(_) => {}
            None => {
                strays.insert(uid.clone(), Instant::now());
            }
        }
    }
    !strays.is_empty()
}

/// What `device probe` shows of a web API channel.
pub(super) async fn probe(shared: &Arc<Shared>, lang: Lang) -> Result<ProbeReport, CertifyError> {
    let device = shared.settings.name.clone();
    let mut report = ProbeReport {
        device: device.clone(),
        ..ProbeReport::default()
    };
    match shared.api.status().await {
        Ok(status) => {
            shared.health.status_seen(&device, &status);
            report.nif = status.nif.clone();
            report.nim = status.nim.clone();
            report.clock = status.server_date_time.clone();
            let until = match status.token_valid {
                Some(at) => msg!("probe-web-api-token-until", at = at.to_rfc3339()),
                None => msg!("probe-web-api-token-not-said"),
            };
            report.dgi = Some(
                msg!(
                    "probe-web-api",
                    url = shared.settings.url.as_str(),
                    until = until,
                    pending = status.pending.as_ref().map_or(0, Vec::len)
                )
                .render(lang),
            );
            if status.status == Some(false) {
                report.blocked = Some(msg!("probe-web-api-blocked").render(lang));
            }
        }
        Err(error) => report.errors.push(
            msg!(
                "probe-failed",
                command = "status",
                reason = error.to_string()
            )
            .render(lang),
        ),
    }
    match shared.api.tax_rates().await {
        Ok(edef::TaxRates(rates)) => {
            report.rates = Some(
                edef::GROUPS
                    .iter()
                    .zip(rates.iter())
                    .map(|(g, r)| (*g, r.map_or("-".to_owned(), |r| r.to_string())))
                    .collect(),
            );
        }
        Err(error) => report.errors.push(
            msg!(
                "probe-failed",
                command = "taxGroups",
                reason = error.to_string()
            )
            .render(lang),
        ),
    }
    Ok(report)
}
