//! The certification service: authenticate a key, then certify one invoice (DESIGN.md
//! section 4): validate, duplicate check on (organization, environment, rn), quota
//! reservation, one device session, journal, answer. Also the lookup of a stored result and
//! the background reconciliation of intents whose outcome is unknown.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{Datelike, FixedOffset, Utc};
use futures::FutureExt;
use mcf_sfe::types::InvoiceType;
use tracing::{error, info, warn, Instrument};

use crate::certify::claims::Claims;
use crate::certify::devices::{Devices, SandboxFactory};
use crate::certify::readiness::{Problem, Reported};
use crate::certify::request::parse_body;
use crate::certify::run::{run_invoice, RunContext, RunFailure};
use crate::certify::validate::{validate, Seller};
use crate::certify::{AuthFailure, CertifyError};
use crate::device::{DeviceHandle, LinkStatus};
use crate::failpoint;
use crate::keys;
use crate::metrics;
use crate::model::{Environment, KeyId, Organization, Plan, RegisterEntry};
use crate::store::Store;

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

/// Who is calling: the organization and key behind a valid, enabled API key.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The key's organization.
    pub org: Organization,
    /// The key's public id.
    pub key_id: KeyId,
    /// Production or Sandbox.
    pub environment: Environment,
}

/// A successful certification.
#[derive(Debug, Clone)]
pub struct Certified {
    /// The LogInvoices entry.
    pub entry: RegisterEntry,
    /// True when this rn was certified before with the same content (nothing was sent to
    /// the device and no quota was used).
    pub replayed: bool,
}

/// Whether the certification path works, for `GET /status`.
#[derive(Debug, Clone)]
pub struct ServiceStatus {
    /// Store writable and every configured device able to certify now.
    pub ready: bool,
    /// Each device and its link state.
    pub devices: Vec<(String, LinkStatus)>,
    /// Devices waiting for a reconciliation.
    pub reconciling: Vec<String>,
    /// Each configured device that could not certify now, and why (`readiness.rs`), for the
    /// log, `/metrics` and the administrator (it may name every organization bound to it).
    pub not_ready: Vec<(String, Problem)>,
}

/// The certification service.
pub struct Certifier {
    store: Arc<Store>,
    devices: Devices,
    settings: CertifierSettings,
    claims: Arc<Claims>,
    in_doubt: Mutex<HashSet<String>>,
    store_failed: AtomicBool,
    reported: Reported,
}

impl Certifier {
    /// A service over `store` and the configured `devices`; `sandbox` starts an
    /// organization's sandbox device (none: `mcf_test_` keys get 503).
    pub fn new(
        store: Arc<Store>,
        devices: Vec<DeviceHandle>,
        settings: CertifierSettings,
        sandbox: Option<SandboxFactory>,
    ) -> Arc<Certifier> {
        Arc::new(Certifier {
            store,
            devices: Devices::new(devices, sandbox),
            settings,
            claims: Arc::new(Claims::default()),
            in_doubt: Mutex::new(HashSet::new()),
            store_failed: AtomicBool::new(false),
            reported: Reported::default(),
        })
    }

    /// The annual quota of `org`.
    pub fn quota_of(&self, org: &Organization) -> u64 {
        org.quota_override.unwrap_or(match org.plan {
            Plan::Start => self.settings.quota_start,
            Plan::Grow => self.settings.quota_grow,
        })
    }

    /// Resolves the `Authorization` header to a principal. The key is checked in constant
    /// time and never logged.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, CertifyError> {
        let header = authorization.ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
        let text = keys::bearer(header).ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
        let presented =
            keys::parse(text).map_err(|_| CertifyError::Unauthorized(AuthFailure::Invalid))?;
        let record = self
            .store
            .key(&presented.id)?
            .ok_or(CertifyError::Unauthorized(AuthFailure::Invalid))?;
        if !presented.matches(&record) {
            return Err(CertifyError::Unauthorized(AuthFailure::Invalid));
        }
        if !record.enabled {
            return Err(CertifyError::Unauthorized(AuthFailure::Disabled));
        }
        let org = self
            .store
            .organization(&record.org)?
            .ok_or(CertifyError::Unauthorized(AuthFailure::Invalid))?;
        Ok(Principal {
            org,
            key_id: record.id,
            environment: record.environment,
        })
    }

    /// Certifies the invoice in `body` for `principal`. `idempotency_key` is the client's
    /// `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header): the same key with
    /// the same request answers like the rn would (replay, or 409 while in flight); the same key
    /// with another request is refused (422), even under another rn.
    pub async fn certify(
        self: &Arc<Self>,
        principal: &Principal,
        body: &[u8],
        idempotency_key: Option<&str>,
    ) -> Result<Certified, CertifyError> {
        let mut kind = None;
        let result = self
            .certify_counted(principal, body, idempotency_key, &mut kind)
            .await;
        let kind = kind.map_or_else(|| "unknown".to_string(), |k| k.to_string());
        metrics::certification(outcome_of(&result), &kind);
        result
    }

    async fn certify_counted(
        self: &Arc<Self>,
        principal: &Principal,
        body: &[u8],
        idempotency_key: Option<&str>,
        kind: &mut Option<InvoiceType>,
    ) -> Result<Certified, CertifyError> {
        let received_at = Utc::now();
        // Damage found by the background check of the journal stops certification as damage
        // found at the open does (503, 160), before anything reaches the device.
        self.store.refuse_if_damaged()?;
        let org = &principal.org;
        let env = principal.environment;
        // The place in the device's arrival order is taken now, before the work below, so
        // that a request preempted while being validated is not overtaken (device/arrivals.rs).
        // A device that cannot be had is reported only after validation, as before.
        let device = self.devices.for_invoice(org, env).await;
        let turn = device.as_ref().ok().map(|(_, device)| device.take_turn());
        let seller = Seller {
            nif: org.nif.clone(),
            isf: org.isf.clone(),
        };
        let idempotency_key = idempotency_key.map(check_idempotency_key).transpose()?;
        let invoice = validate(parse_body(body)?, &seller)?;
        *kind = Some(invoice.invoice_type);
        let rn = invoice.rn.clone();
        let key_claim = match &idempotency_key {
            None => None,
            Some(key) => {
                if let Some(bound) = self.store.idempotency_binding(&org.id, env, key)? {
                    if bound.request_digest != invoice.digest {
                        return Err(CertifyError::IdempotencyKeyReused { rn: bound.rn });
                    }
                }
                let claim = self
                    .claims
                    .claim_idempotency_key(&org.id, env, key)
                    .ok_or_else(|| CertifyError::InFlight { rn: rn.clone() })?;
                Some(claim)
            }
        };
        if let Some(done) = self.replay(org, env, &rn, &invoice.digest)? {
            return Ok(done);
        }
        if self.store.open_intent_for(&org.id, env, &rn)?.is_some() {
            return Err(CertifyError::InFlight { rn });
        }
        let rn_claim = self
            .claims
            .claim_rn(&org.id, env, &rn)
            .ok_or_else(|| CertifyError::InFlight { rn: rn.clone() })?;
        // Another request may have finished this rn between the check and the claim.
        if let Some(done) = self.replay(org, env, &rn, &invoice.digest)? {
            return Ok(done);
        }
        let quota_claim = match env {
            Environment::Sandbox => None,
            Environment::Production => {
                let year = received_at.with_timezone(&self.settings.offset).year();
                let used = self.store.quota_used(&org.id, year)?;
                let quota = self.quota_of(org);
                let claim = self
                    .claims
                    .reserve_quota(&org.id, year, used, quota)
                    .ok_or(CertifyError::QuotaExhausted { used, quota, year })?;
                Some(claim)
            }
        };
        let (device_name, device) = device?;
        self.refuse_if_in_doubt(&device_name)?;
        // A client that leaves while queued here costs nothing.
        let turn = turn.unwrap_or_else(|| device.take_turn());
        let mut session = device
            .acquire_in_turn(turn)
            .await
            .map_err(CertifyError::from_device)?;
        // Checked again with the port held: an invoice in doubt must be settled before the
        // device finalizes anything else, or C1h could no longer tell.
        self.refuse_if_in_doubt(&device_name)?;
        // The request beside the bytes it became, in the wire capture if one is written: a
        // capture that can be replayed as a regression test (tests/captures.rs). The body
        // holds no secret (the key is a header).
        let annotation = session
            .capturing()
            .then(|| serde_json::from_slice::<serde_json::Value>(body).ok())
            .flatten()
            .map(|value| format!("invoice {value}"));
        // From here the job runs to the end even if the client leaves (hyper drops the
        // handler future): it is a task of its own.
        let this = Arc::clone(self);
        let principal = principal.clone();
        let span = tracing::info_span!("invoice", org = %principal.org.id, rn = %rn, device = %device_name);
        let job = tokio::spawn(
            async move {
                let _held = (rn_claim, quota_claim, key_claim);
                let ctx = RunContext {
                    store: &this.store,
                    org: &principal.org,
                    environment: principal.environment,
                    key_id: &principal.key_id,
                    device: &device_name,
                    invoice: &invoice,
                    received_at,
                    offset: this.settings.offset,
                    idempotency_key,
                };
                if let Some(annotation) = annotation {
                    session.annotate_capture(annotation).await;
                }
                // A bug that panics mid-invoice must not leave an intent behind unnoticed: the
                // device is then treated as in doubt until reconciliation finds nothing open.
                let outcome = AssertUnwindSafe(run_invoice(&mut session, &ctx))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| {
                        error!("the certification panicked: settling the device before it takes another invoice");
                        Err(RunFailure::Panicked)
                    });
                match outcome {
                    Ok(entry) => {
                        failpoint::hit("after_certified");
                        info!(sequence = entry.sequence, "certified");
                        Ok(entry)
                    }
                    Err(RunFailure::Failed(error)) => {
                        if matches!(error, CertifyError::Store(_)) {
                            this.store_failed.store(true, Ordering::SeqCst);
                        }
                        Err(error)
                    }
                    Err(RunFailure::Panicked) => {
                        this.lock_in_doubt().insert(device_name.clone());
                        drop(session);
                        this.spawn_reconciler(device_name.clone());
                        Err(CertifyError::Internal(
                            "the certification failed unexpectedly; the gateway settles it with the device"
                                .to_string(),
                        ))
                    }
                    Err(RunFailure::InDoubt(intent)) => {
                        // Mark before the port is released so nothing else runs first.
                        this.lock_in_doubt().insert(device_name.clone());
                        drop(session);
                        warn!(
                            intent,
                            "outcome unknown: the device takes no invoice until settled"
                        );
                        this.spawn_reconciler(device_name.clone());
                        Err(CertifyError::OutcomeUnknown {
                            rn: invoice.rn.clone(),
                            retry_after: Duration::from_secs(5),
                        })
                    }
                }
            }
            .instrument(span),
        );
        let entry = job
            .await
            .map_err(|e| CertifyError::Internal(format!("certification task failed: {e}")))??;
        Ok(Certified {
            entry,
            replayed: false,
        })
    }

    /// The stored result of `rn` for `principal`.
    pub fn lookup(&self, principal: &Principal, rn: &str) -> Result<RegisterEntry, CertifyError> {
        let org = &principal.org.id;
        let env = principal.environment;
        if let Some(entry) = self.store.entry_by_rn(org, env, rn)? {
            return Ok(entry);
        }
        if self.claims.rn_in_flight(org, env, rn)
            || self.store.open_intent_for(org, env, rn)?.is_some()
        {
            return Err(CertifyError::InFlight { rn: rn.to_string() });
        }
        Err(CertifyError::NotFound { rn: rn.to_string() })
    }

    /// Stops the devices after their current session.
    pub async fn shutdown(&self) {
        self.devices.shutdown().await;
    }

    fn replay(
        &self,
        org: &Organization,
        env: Environment,
        rn: &str,
        digest: &str,
    ) -> Result<Option<Certified>, CertifyError> {
        match self.store.entry_by_rn(&org.id, env, rn)? {
            Some(entry) if entry.request.request_digest == digest => Ok(Some(Certified {
                entry,
                replayed: true,
            })),
            Some(_) => Err(CertifyError::DuplicateRn { rn: rn.to_string() }),
            None => Ok(None),
        }
    }

    fn refuse_if_in_doubt(&self, device: &str) -> Result<(), CertifyError> {
        if self.lock_in_doubt().contains(device) {
            return Err(CertifyError::DeviceUnavailable {
                reason: "the gateway is settling an earlier invoice with the device".to_string(),
                retry_after: Duration::from_secs(5),
            });
        }
        Ok(())
    }

    fn lock_in_doubt(&self) -> MutexGuard<'_, HashSet<String>> {
        self.in_doubt.lock().unwrap_or_else(|p| p.into_inner())
    }
}

mod background;
mod observe;

/// The `outcome` label of a certification's result.
fn outcome_of(result: &Result<Certified, CertifyError>) -> &'static str {
    match result {
        Ok(done) if done.replayed => "replayed",
        Ok(_) => "certified",
        Err(CertifyError::Validation(_))
        | Err(CertifyError::PaymentsShort { .. })
        | Err(CertifyError::ZeroTotal)
        | Err(CertifyError::BadIdempotencyKey) => "invalid",
        Err(CertifyError::Unauthorized(_)) => "unauthorized",
        Err(CertifyError::DuplicateRn { .. })
        | Err(CertifyError::InFlight { .. })
        | Err(CertifyError::IdempotencyKeyReused { .. }) => "conflict",
        Err(CertifyError::QuotaExhausted { .. }) => "quota",
        Err(CertifyError::DeviceRefused { .. })
        | Err(CertifyError::TotalsMismatch { .. })
        | Err(CertifyError::TotalsTooLarge) => "refused",
        Err(CertifyError::DeviceUnavailable { .. })
        | Err(CertifyError::QueueFull { .. })
        | Err(CertifyError::OutcomeUnknown { .. })
        | Err(CertifyError::WrongDevice { .. })
        | Err(CertifyError::DeviceNotReady { .. })
        | Err(CertifyError::Store(_)) => "unavailable",
        Err(CertifyError::NotFound { .. }) | Err(CertifyError::Internal(_)) => "error",
    }
}

/// Longest `Idempotency-Key` accepted.
const MAX_IDEMPOTENCY_KEY: usize = 255;

/// The key of an `Idempotency-Key` header: a structured-field string (`"..."`, as the draft
/// writes it) or a bare token; 1 to 255 printable ASCII characters.
fn check_idempotency_key(header: &str) -> Result<String, CertifyError> {
    let text = header.trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    let ok = !text.is_empty()
        && text.len() <= MAX_IDEMPOTENCY_KEY
        && text.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    if ok {
        Ok(text.to_string())
    } else {
        Err(CertifyError::BadIdempotencyKey)
    }
}

#[cfg(test)]
mod tests {
    use super::check_idempotency_key;

    #[test]
    fn idempotency_keys_are_quoted_or_bare_printable_ascii() {
        assert_eq!(
            check_idempotency_key("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"").ok(),
            Some("8e03978e-40d5-43e8-bc93-6894a57f9324".to_string())
        );
        assert_eq!(
            check_idempotency_key("abc-1").ok(),
            Some("abc-1".to_string())
        );
        assert!(check_idempotency_key("").is_err());
        assert!(check_idempotency_key("\"\"").is_err());
        assert!(check_idempotency_key(&"x".repeat(256)).is_err());
        assert!(check_idempotency_key("caf\u{e9}").is_err());
    }
}
