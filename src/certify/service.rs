//! The certification service: the use case of one invoice, as named steps (docs/design.md
//! §4). Arrive (a place in the channel's order) -> validate (400, nothing started or
//! reserved) -> admit (replay, conflicts, quota) -> acquire the channel (503 while it is in
//! doubt) -> certify on it in a task of its own -> answer. Also the lookup of a stored result.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, FixedOffset, Utc};
use futures::FutureExt;
use tracing::{error, info, warn, Instrument};

use super::admission::{self, Admission, Admitted, Held, Principal};
use super::channel::{Job, Lane, RunFailure, SharedChannel, Waiting};
use super::channels::{Channels, SandboxFactory};
use super::in_doubt::{InDoubt, Reconciler};
use super::invoice::{parse_body, validate, Seller, ValidInvoice};
use super::register_writer::RegisterWriter;
use super::status::StatusBoard;
use super::storage_fault::StorageWatch;
use super::warnings::Warning;
use super::CertifyError;

mod finish;
use crate::failpoint;
use crate::metrics;
use crate::model::{Organization, RegisterEntry};
use crate::store::{Store, StoreError};

/// Settings of the certification service.
#[derive(Debug, Clone)]
pub struct CertifierSettings {
    /// Offset of the quota year's time zone (Africa/Kinshasa: +01:00).
    pub offset: FixedOffset,
    /// Annual quota of the Start plan.
    pub quota_start: u64,
    /// Annual quota of the Grow plan.
    pub quota_grow: u64,
}

/// A successful certification.
#[derive(Debug, Clone)]
pub struct Certified {
    /// The LogInvoices entry.
    pub entry: RegisterEntry,
    /// True when this rn was certified before with the same content (nothing was sent to
    /// the channel and no quota was used).
    pub replayed: bool,
    /// What looks like a mistake in it ([`Certifier::warnings`]).
    pub warnings: Vec<Warning>,
}

/// The certification service.
pub struct Certifier {
    pub(super) store: Arc<Store>,
    pub(super) channels: Arc<Channels>,
    pub(super) settings: CertifierSettings,
    pub(super) admission: Admission,
    pub(super) journal: RegisterWriter,
    pub(super) in_doubt: InDoubt,
    pub(super) reconciler: Arc<Reconciler>,
    /// The server's arrival order of invoice requests (src/arrivals.rs).
    arrivals: Arc<crate::arrivals::Arrivals>,
    pub(super) store_failed: AtomicBool,
    pub(super) board: StatusBoard,
    /// Whether the register can be written (`storage_fault.rs`), and where it lives.
    pub(super) storage: StorageWatch,
    pub(super) storage_dir: std::sync::Mutex<Option<std::path::PathBuf>>,
}

/// How many times an invoice is admitted again for its organization changed meanwhile.
const MAX_MOVES: usize = 3;

/// What one attempt to certify came to.
// Returned once per attempt and taken apart at once, never kept: no box for the answer.
#[allow(clippy::large_enum_variant)]
enum Attempt {
    /// The answer.
    Done(Result<Certified, CertifyError>),
    /// The key's organization changed since its principal was remembered: the principal as
    /// it now is (nothing held, its place given up).
    Moved(Box<Principal>),
}

/// A request on its way: who, when, and its place in its channel's order (none yet when its
/// channel is a sandbox not started: it is started only for a valid, admitted invoice).
struct Arrival {
    received_at: DateTime<Utc>,
    place: Option<(SharedChannel, Waiting)>,
}

impl Certifier {
    /// A service over `store` and the configured `channels`; `sandbox` starts an
    /// organization's sandbox (none: `mcf_test_` keys get 503).
    pub fn new(
        store: Arc<Store>,
        channels: Vec<SharedChannel>,
        settings: CertifierSettings,
        sandbox: Option<SandboxFactory>,
    ) -> Arc<Certifier> {
        let journal = RegisterWriter::new(Arc::clone(&store), settings.offset);
        let channels = Arc::new(Channels::new(channels, sandbox, journal.clone()));
        let in_doubt = InDoubt::default();
        let reconciler = Reconciler::new(
            Arc::clone(&store),
            Arc::clone(&channels),
            journal.clone(),
            in_doubt.clone(),
        );
        Arc::new(Certifier {
            admission: Admission::new(Arc::clone(&store), settings.clone()),
            store,
            channels,
            settings,
            journal,
            in_doubt,
            reconciler: Arc::new(reconciler),
            arrivals: Arc::new(crate::arrivals::Arrivals::new()),
            store_failed: AtomicBool::new(false),
            board: StatusBoard::default(),
            storage: StorageWatch::default(),
            storage_dir: std::sync::Mutex::new(None),
        })
    }

    /// The annual quota of `org`.
    pub fn quota_of(&self, org: &Organization) -> u64 {
        self.admission.quota_of(org)
    }

    /// Resolves the `Authorization` header to a principal, read from the store. The key is
    /// checked in constant time and never logged.
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, CertifyError> {
        self.admission.authenticate(authorization).await
    }

    /// [`Certifier::authenticate`] for an invoice to certify ([`Certifier::certify`]): a key
    /// that matched before is remembered, without a read; certifying confirms it in the
    /// same read as the invoice's rn (docs/design.md §11). An answer given before that
    /// (the request refused by the HTTP layer) asks [`Certifier::key_refused`] first.
    pub async fn authenticate_invoice(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, CertifyError> {
        self.admission.authenticate_remembered(authorization).await
    }

    /// The refusal (401) of a remembered `principal` whose key is disabled, gone or another
    /// now; `None` when it is still good, was read for this request, or cannot be read.
    pub async fn key_refused(&self, principal: &Principal) -> Option<CertifyError> {
        match self.admission.recheck(principal).await {
            Err(refused @ CertifyError::Unauthorized(_)) => Some(refused),
            Ok(_) | Err(_) => None,
        }
    }

    /// Settles, in the background, every intent the journal left open (start-up). Channels
    /// with open intents take no invoice until theirs are settled. Channels whose register
    /// is behind them (an unacknowledged anomaly) take none either, and each box is checked
    /// once its first C1h is read (`register_behind.rs`).
    pub fn start_reconciliation(self: &Arc<Self>) -> Result<(), CertifyError> {
        self.journal.registers_behind().load(&self.store)?;
        self.spawn_register_behind_watch();
        self.reconciler.start()
    }

    /// The channels whose register is behind them, with the counter numbers it misses.
    pub fn registers_behind(&self) -> Vec<(String, Vec<u64>)> {
        self.journal.registers_behind().all()
    }

    /// A place in the order invoice requests arrived in, taken as soon as a request arrives
    /// (the HTTP layer takes it when it accepts a new connection, or reads the head of a
    /// request on a kept-alive one), before its key is checked and its body read; given to
    /// [`Certifier::certify`] (dropping it gives it up).
    pub fn take_place(&self) -> crate::arrivals::Turn {
        self.arrivals.take()
    }

    /// Certifies the invoice in `body` for `principal`, in the order of `place`
    /// ([`Certifier::take_place`]). `idempotency_key` is the client's
    /// `Idempotency-Key` header: the same key with the same request answers like the rn would
    /// (replay, or 409 while in flight); the same key with another request is refused (422),
    /// even under another rn.
    pub async fn certify(
        self: &Arc<Self>,
        principal: &Principal,
        body: &[u8],
        idempotency_key: Option<&str>,
        place: crate::arrivals::Turn,
    ) -> Result<Certified, CertifyError> {
        place.wait_at_most(crate::arrivals::ORDER_WAIT).await;
        let mut arrival = self.arrive(principal);
        place.finish();
        let mut principal = principal.clone();
        let mut kind = None;
        let mut moves = 0;
        let result = loop {
            let fresh = match self
                .attempt(&mut principal, arrival, body, idempotency_key, &mut kind)
                .await
            {
                Attempt::Moved(fresh) => fresh,
                // Refused before admission read the key: the key is read now, so that a key
                // disabled since it was remembered hears 401, and an organization changed
                // since is taken as it now is.
                Attempt::Done(Err(error))
                    if principal.remembered && !matches!(error, CertifyError::Unauthorized(_)) =>
                {
                    match self.admission.recheck(&principal).await {
                        Err(refused @ CertifyError::Unauthorized(_)) => break Err(refused),
                        Ok(Some(fresh)) => Box::new(fresh),
                        Ok(None) | Err(_) => break Err(error),
                    }
                }
                Attempt::Done(result) => break result,
            };
            moves += 1;
            if moves > MAX_MOVES {
                // Nothing is held yet: the client may simply try again (never a 500).
                break Err(CertifyError::DeviceUnavailable {
                    reason: crate::msg!("reason-organization-changing"),
                    retry_after: std::time::Duration::from_secs(1),
                });
            }
            // Its organization changed since its key was remembered (its device, NIF, plan...):
            // its place in the old channel's order is given up, and the invoice validated and
            // admitted again as the organization now is.
            info!(org = %fresh.org.id, "organization changed: the invoice is admitted as it now is");
            principal = *fresh;
            arrival = self.arrive(&principal);
        };
        let kind = kind.unwrap_or_else(|| "unknown".to_string());
        metrics::certification(outcome_of(&result), &kind);
        result
    }

    /// One attempt of [`Certifier::certify`] with `principal`: validate, then the steps after.
    async fn attempt(
        self: &Arc<Self>,
        principal: &mut Principal,
        arrival: Result<Arrival, CertifyError>,
        body: &[u8],
        idempotency_key: Option<&str>,
        kind: &mut Option<String>,
    ) -> Attempt {
        let checked = arrival.and_then(|arrival| {
            let (invoice, key) = check_request(principal, body, idempotency_key)?;
            Ok((arrival, invoice, key))
        });
        match checked {
            Ok((arrival, invoice, key)) => {
                kind.get_or_insert_with(|| invoice.invoice_type.to_string());
                self.certify_valid(principal, arrival, invoice, key, body)
                    .await
            }
            Err(error) => Attempt::Done(Err(error)),
        }
    }

    /// Steps after validation: admit, acquire, certify.
    async fn certify_valid(
        self: &Arc<Self>,
        principal: &mut Principal,
        arrival: Arrival,
        invoice: ValidInvoice,
        idempotency_key: Option<String>,
        body: &[u8],
    ) -> Attempt {
        let at = arrival.received_at;
        // A register that cannot be written refuses new work here: no device, no quota
        // (161..164); an invoice it holds already still answers (a read), to a key that is
        // still good.
        if let Err(refused) = self.refuse_if_unwritable(principal, &invoice.rn) {
            if matches!(refused, CertifyError::RegisterUnwritable { .. }) {
                match self.admission.replay_only(principal, &invoice).await {
                    Ok(Some(entry)) => {
                        match self.admission.recheck(principal).await {
                            Err(refused @ CertifyError::Unauthorized(_)) => {
                                return Attempt::Done(Err(refused))
                            }
                            Ok(Some(fresh)) => return Attempt::Moved(Box::new(fresh)),
                            Ok(None) | Err(_) => {}
                        }
                        let warnings = self.warnings(&entry).await;
                        return Attempt::Done(Ok(Certified {
                            entry,
                            replayed: true,
                            warnings,
                        }));
                    }
                    Err(duplicate @ CertifyError::DuplicateRn { .. }) => {
                        return Attempt::Done(Err(duplicate))
                    }
                    Ok(None) | Err(_) => {}
                }
            }
            return Attempt::Done(Err(refused));
        }
        // A channel whose register is behind it: refused before any quota is reserved.
        if principal.environment == crate::model::Environment::Production {
            if let Err(behind) = self
                .journal
                .registers_behind()
                .refuse(&principal.org.device)
            {
                return Attempt::Done(Err(behind));
            }
        }
        let admitted = self
            .admission
            .admit(principal, &invoice, idempotency_key.as_deref(), at)
            .await;
        if !matches!(
            admitted,
            Err(CertifyError::Store(_)) | Err(CertifyError::Internal(_))
        ) {
            // The store was read: the key is confirmed (or refused, or moved).
            principal.remembered = false;
        }
        let (held, ceiling) = match admitted {
            Ok(Admitted::Replay(entry)) => {
                let warnings = self.warnings(&entry).await;
                return Attempt::Done(Ok(Certified {
                    entry: *entry,
                    replayed: true,
                    warnings,
                }));
            }
            Ok(Admitted::Moved(fresh)) => return Attempt::Moved(fresh),
            Ok(Admitted::Go(go)) => *go,
            Err(error) => {
                return Attempt::Done(Err(self.explain_in_flight(principal, error).await))
            }
        };
        let principal = &*principal;
        let result = async {
            let (channel, lane) = self.acquire(principal, arrival).await?;
            let job = Job {
                org: principal.org.clone(),
                environment: principal.environment,
                key_id: principal.key_id.to_string(),
                invoice,
                ceiling,
                received_at: at,
                quota: held.quota,
                idempotency_key,
                body: Arc::from(body),
                in_doubt: self.in_doubt.clone(),
            };
            let entry = self.run(channel, lane, job, held).await?;
            let warnings = self.warnings(&entry).await;
            Ok(Certified {
                entry,
                replayed: false,
                warnings,
            })
        };
        Attempt::Done(result.await)
    }

    /// Arrive: damage found in the journal stops certification before anything (503, 160);
    /// the place in a running channel's order is taken now, before validation, so that a
    /// request preempted while being validated is not overtaken (src/arrivals.rs).
    fn arrive(&self, principal: &Principal) -> Result<Arrival, CertifyError> {
        self.store.refuse_if_damaged()?;
        let place = self
            .channels
            .running(&principal.org, principal.environment)
            .map(|channel| {
                let waiting = channel.arrive();
                (channel, waiting)
            });
        Ok(Arrival {
            received_at: Utc::now(),
            place,
        })
    }

    /// The stored result of `rn` for `principal`.
    pub async fn lookup(
        &self,
        principal: &Principal,
        rn: &str,
    ) -> Result<RegisterEntry, CertifyError> {
        if let Some(device) =
            self.journal
                .unrecorded()
                .holds(&principal.org.id, principal.environment, rn)
        {
            return Err(self.not_recorded(rn, &device));
        }
        match self.admission.lookup(principal, rn).await {
            Ok(entry) => Ok(entry),
            Err(error) => Err(self.explain_in_flight(principal, error).await),
        }
    }

    /// The invoice the credit note `entry` reduces, when its register holds it (the same
    /// organization and environment, found by the codeDEFDGI the credit note named); `None`
    /// for any other invoice. For its printed fiscal block.
    pub fn original_of(
        &self,
        entry: &RegisterEntry,
    ) -> Result<Option<RegisterEntry>, CertifyError> {
        if !entry.request.is_credit_note() {
            return Ok(None);
        }
        Ok(self.store.credit_links(entry)?.0)
    }

    /// Runs `call` on the blocking pool, never on the runtime's workers: for an async caller
    /// of this service's methods that read the store (`gauges`, `open_intents`, ...).
    pub async fn off_workers<T, F>(self: &Arc<Self>, call: F) -> Result<T, CertifyError>
    where
        T: Send + 'static,
        F: FnOnce(&Certifier) -> Result<T, CertifyError> + Send + 'static,
    {
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || call(&this))
            .await
            .map_err(super::register_writer::task_failed)?
    }

    /// Stops the channels after their current invoice.
    pub async fn shutdown(&self) {
        self.channels.shutdown().await;
    }
}

/// Validate: the `Idempotency-Key` header and the body (400), before anything is started or
/// reserved.
fn check_request(
    principal: &Principal,
    body: &[u8],
    idempotency_key: Option<&str>,
) -> Result<(ValidInvoice, Option<String>), CertifyError> {
    let key = idempotency_key
        .map(admission::idempotency_key)
        .transpose()?;
    let seller = Seller {
        nif: principal.org.nif.clone(),
        isf: principal.org.isf.clone(),
    };
    let invoice = validate(parse_body(body)?, &seller, super::box_channel::check_frames)?;
    Ok((invoice, key))
}

/// The `outcome` label of a certification's result.
fn outcome_of(result: &Result<Certified, CertifyError>) -> &'static str {
    match result {
        Ok(done) if done.replayed => "replayed",
        Ok(_) => "certified",
        Err(CertifyError::Validation(_))
        | Err(CertifyError::CreditExceedsOriginal(_))
        | Err(CertifyError::AboveMaxTotal { .. })
        | Err(CertifyError::PaymentsShort { .. })
        | Err(CertifyError::ZeroTotal)
        | Err(CertifyError::BadIdempotencyKey) => "invalid",
        Err(CertifyError::Unauthorized(_)) => "unauthorized",
        Err(CertifyError::DuplicateRn { .. })
        | Err(CertifyError::LostRn { .. })
        | Err(CertifyError::InFlight { .. })
        | Err(CertifyError::AwaitingAdministrator { .. })
        | Err(CertifyError::IdempotencyKeyReused { .. }) => "conflict",
        Err(CertifyError::QuotaExhausted { .. }) => "quota",
        Err(CertifyError::DeviceRefused { .. })
        | Err(CertifyError::TotalsMismatch { .. })
        | Err(CertifyError::TotalsMismatchDgi { .. })
        | Err(CertifyError::DgiRefused { .. })
        | Err(CertifyError::TotalsTooLarge) => "refused",
        Err(CertifyError::DeviceUnavailable { .. })
        | Err(CertifyError::QueueFull { .. })
        | Err(CertifyError::OutcomeUnknown { .. })
        | Err(CertifyError::WrongDevice { .. })
        | Err(CertifyError::DeviceNotReady { .. })
        | Err(CertifyError::TokenRejected { .. })
        | Err(CertifyError::DeviceNotConfigured { .. })
        | Err(CertifyError::NoSandbox)
        | Err(CertifyError::RegisterUnwritable { .. })
        | Err(CertifyError::CertifiedNotRecorded { .. })
        | Err(CertifyError::RegisterBehind { .. })
        | Err(CertifyError::Store(_)) => "unavailable",
        Err(CertifyError::NotFound { .. }) | Err(CertifyError::Internal(_)) => "error",
    }
}
