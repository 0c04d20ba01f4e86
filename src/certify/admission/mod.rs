//! Admission: who is calling (an API key -> its organization and environment), and whether a
//! valid invoice may go to its channel: an rn already certified is replayed (same content) or
//! refused (409); an rn or `Idempotency-Key` in flight is refused (409); a total the register
//! or the organization rules out is refused (422: 180, 181, `ceiling.rs`); an rn its device
//! certified and the register lost, acknowledged with its rn, is refused (409, 173); a quota unit is
//! reserved (429 when none is left). The claims (`claims.rs`) are held until the answer and
//! released whatever the outcome: a success has been journaled by then, and the register is
//! what counts from there on.
//!
//! Every step that reads the store (sled) runs on the blocking pool, never on the runtime's
//! workers: [`Admission::authenticate`], [`Admission::admit`] and [`Admission::lookup`] each
//! make one hop there, with what they need of the request ([`Asked`]).

mod ceiling;
mod claims;

use std::sync::Arc;

use chrono::{DateTime, Datelike, Utc};
use rust_decimal::Decimal;

use crate::certify::invoice::ValidInvoice;
use crate::certify::register_writer::blocking;
use crate::certify::{AuthFailure, CertifierSettings, CertifyError};
use crate::keys::{self, PresentedKey};
use crate::model::{Environment, KeyId, Organization, Plan, RegisterEntry};
use crate::store::Store;
pub use ceiling::Ceiling;
use claims::{Claims, CreditClaim, QuotaClaim, RnClaim};

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

/// What admission decided for a valid invoice.
pub(crate) enum Admitted {
    /// This rn was certified before with the same content: its entry, nothing else to do.
    Replay(Box<RegisterEntry>),
    /// It may go to its channel, under its ceiling; the claims are held until the answer.
    Go(Box<(Held, Ceiling)>),
}

/// The claims of one admitted invoice, released when dropped.
pub(crate) struct Held {
    /// The quota unit reserved, as the store claims it with the intent (production only).
    pub(crate) quota: Option<crate::store::QuotaClaim>,
    _rn: RnClaim,
    _quota: Option<QuotaClaim>,
    _idempotency_key: Option<RnClaim>,
    _credit: Option<CreditClaim>,
}

/// What admission needs of a valid invoice, owned so that it goes to the blocking pool.
pub(crate) struct Asked {
    /// The invoice number.
    rn: String,
    /// Its canonical digest.
    digest: String,
    /// The least and most it can total (`None`: too large to compute).
    total_range: Option<(Decimal, Decimal)>,
    /// The codeDEFDGI of the original, for a credit note that names one.
    credits: Option<String>,
}

impl Asked {
    fn of(invoice: &ValidInvoice) -> Asked {
        Asked {
            rn: invoice.rn.clone(),
            digest: invoice.digest.clone(),
            total_range: invoice.total_range(),
            credits: invoice
                .reference
                .as_ref()
                .filter(|_| invoice.is_credit_note())
                .map(|reference| reference.code_def.clone()),
        }
    }
}

/// Keys, duplicates and quotas. Cheap to clone (what it holds is shared).
#[derive(Clone)]
pub(crate) struct Admission {
    store: Arc<Store>,
    claims: Arc<Claims>,
    quotas: CertifierSettings,
}

impl Admission {
    pub(crate) fn new(store: Arc<Store>, quotas: CertifierSettings) -> Admission {
        Admission {
            store,
            claims: Arc::new(Claims::default()),
            quotas,
        }
    }

    /// The annual quota of `org`.
    pub(crate) fn quota_of(&self, org: &Organization) -> u64 {
        org.quota_override.unwrap_or(match org.plan {
            Plan::Start => self.quotas.quota_start,
            Plan::Grow => self.quotas.quota_grow,
        })
    }

    /// Resolves the `Authorization` header to a principal. The key is checked in constant
    /// time and never logged.
    pub(crate) async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, CertifyError> {
        let invalid = || CertifyError::Unauthorized(AuthFailure::Invalid);
        let header = authorization.ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
        let text = keys::bearer(header).ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
        let presented = keys::parse(text).map_err(|_| invalid())?;
        let this = self.clone();
        blocking(&self.store, move |_| Ok(this.principal_of(&presented))).await?
    }

    /// The principal behind `presented`, from the store (blocking).
    fn principal_of(&self, presented: &PresentedKey) -> Result<Principal, CertifyError> {
        let invalid = || CertifyError::Unauthorized(AuthFailure::Invalid);
        let record = self.store.key(&presented.id)?.ok_or_else(invalid)?;
        if !presented.matches(&record) {
            return Err(invalid());
        }
        if !record.enabled {
            return Err(CertifyError::Unauthorized(AuthFailure::Disabled));
        }
        let org = self.store.organization(&record.org)?.ok_or_else(invalid)?;
        Ok(Principal {
            org,
            key_id: record.id,
            environment: record.environment,
        })
    }

    /// Admits `invoice` (valid) of `principal`: replay, conflict, or the claims it goes with.
    pub(crate) async fn admit(
        &self,
        principal: &Principal,
        invoice: &ValidInvoice,
        idempotency_key: Option<&str>,
        received_at: DateTime<Utc>,
    ) -> Result<Admitted, CertifyError> {
        let (this, principal, asked) = (self.clone(), principal.clone(), Asked::of(invoice));
        let idempotency_key = idempotency_key.map(str::to_owned);
        blocking(&self.store, move |_| {
            Ok(this.admit_now(&principal, &asked, idempotency_key.as_deref(), received_at))
        })
        .await?
    }

    /// [`Admission::admit`], reading the store (blocking).
    fn admit_now(
        &self,
        principal: &Principal,
        invoice: &Asked,
        idempotency_key: Option<&str>,
        received_at: DateTime<Utc>,
    ) -> Result<Admitted, CertifyError> {
        let (org, env, rn) = (&principal.org, principal.environment, &invoice.rn);
        let key_claim = idempotency_key
            .map(|key| self.claim_idempotency_key(principal, invoice, key))
            .transpose()?;
        if let Some(entry) = self.replay(principal, invoice)? {
            return Ok(Admitted::Replay(Box::new(entry)));
        }
        // An rn the device certified and the register lost (an acknowledged register behind
        // its box named it): never certified again (before quota and device).
        if env == Environment::Production {
            if let Some(number) = self.store.lost_rn(&org.device, rn)? {
                return Err(CertifyError::LostRn {
                    rn: rn.clone(),
                    number,
                });
            }
        }
        if self.store.open_intent_for(&org.id, env, rn)?.is_some() {
            return Err(CertifyError::InFlight { rn: rn.clone() });
        }
        let rn_claim = self
            .claims
            .claim_rn(&org.id, env, rn)
            .ok_or_else(|| CertifyError::InFlight { rn: rn.clone() })?;
        // Another request may have finished this rn between the check and the claim.
        if let Some(entry) = self.replay(principal, invoice)? {
            return Ok(Admitted::Replay(Box::new(entry)));
        }
        // After the replays (an invoice certified before a limit changed still answers), before
        // the quota (a refusal uses none).
        let (ceiling, credit_claim) = self.plausible(principal, invoice)?;
        let (quota_claim, quota) = match env {
            Environment::Sandbox => (None, None),
            Environment::Production => {
                let (claim, limit) = self.reserve_quota(org, received_at)?;
                (Some(claim), Some(limit))
            }
        };
        Ok(Admitted::Go(Box::new((
            Held {
                quota,
                _rn: rn_claim,
                _quota: quota_claim,
                _idempotency_key: key_claim,
                _credit: credit_claim,
            },
            ceiling,
        ))))
    }

    /// The entry of `invoice` when it was certified with the same content (a replay), 409
    /// with another content, `None` otherwise: a read only, no claim (while the register
    /// cannot be written, a retry of an invoice it holds still answers).
    pub(crate) async fn replay_only(
        &self,
        principal: &Principal,
        invoice: &ValidInvoice,
    ) -> Result<Option<RegisterEntry>, CertifyError> {
        let (this, principal, asked) = (self.clone(), principal.clone(), Asked::of(invoice));
        blocking(&self.store, move |_| Ok(this.replay(&principal, &asked))).await?
    }

    /// The stored result of `rn` for `principal`: 409 while it is in flight, 404 if unknown.
    pub(crate) async fn lookup(
        &self,
        principal: &Principal,
        rn: &str,
    ) -> Result<RegisterEntry, CertifyError> {
        let (this, principal, rn) = (self.clone(), principal.clone(), rn.to_owned());
        blocking(&self.store, move |_| Ok(this.lookup_now(&principal, &rn))).await?
    }

    /// [`Admission::lookup`], reading the store (blocking).
    fn lookup_now(&self, principal: &Principal, rn: &str) -> Result<RegisterEntry, CertifyError> {
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

    /// The same key with another request is refused (422), even under another rn; the same
    /// key in flight is 409.
    fn claim_idempotency_key(
        &self,
        principal: &Principal,
        invoice: &Asked,
        key: &str,
    ) -> Result<RnClaim, CertifyError> {
        let (org, env) = (&principal.org.id, principal.environment);
        if let Some(bound) = self.store.idempotency_binding(org, env, key)? {
            if bound.request_digest != invoice.digest {
                return Err(CertifyError::IdempotencyKeyReused { rn: bound.rn });
            }
        }
        self.claims
            .claim_idempotency_key(org, env, key)
            .ok_or_else(|| CertifyError::InFlight {
                rn: invoice.rn.clone(),
            })
    }

    /// The entry of this rn when it was certified with the same content; 409 with another.
    fn replay(
        &self,
        principal: &Principal,
        invoice: &Asked,
    ) -> Result<Option<RegisterEntry>, CertifyError> {
        let (org, env) = (&principal.org.id, principal.environment);
        match self.store.entry_by_rn(org, env, &invoice.rn)? {
            Some(entry) if entry.request.request_digest == invoice.digest => Ok(Some(entry)),
            Some(_) => Err(CertifyError::DuplicateRn {
                rn: invoice.rn.clone(),
            }),
            None => Ok(None),
        }
    }

    /// One unit of `org`'s quota of the year of `at` (429 when none is left).
    fn reserve_quota(
        &self,
        org: &Organization,
        at: DateTime<Utc>,
    ) -> Result<(QuotaClaim, crate::store::QuotaClaim), CertifyError> {
        let year = at.with_timezone(&self.quotas.offset).year();
        let used = self.store.quota_used(&org.id, year)?;
        let quota = self.quota_of(org);
        let claim = self
            .claims
            .reserve_quota(&org.id, year, used, quota)
            .ok_or(CertifyError::QuotaExhausted { used, quota, year })?;
        Ok((claim, crate::store::QuotaClaim { year, quota }))
    }
}

/// Longest `Idempotency-Key` accepted.
const MAX_IDEMPOTENCY_KEY: usize = 255;

/// The key of an `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header): a
/// structured-field string (`"..."`, as the draft writes it) or a bare token; 1 to 255
/// printable ASCII characters.
pub(crate) fn idempotency_key(header: &str) -> Result<String, CertifyError> {
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
    use super::idempotency_key;

    #[test]
    fn idempotency_keys_are_quoted_or_bare_printable_ascii() {
        assert_eq!(
            idempotency_key("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"").ok(),
            Some("8e03978e-40d5-43e8-bc93-6894a57f9324".to_string())
        );
        assert_eq!(idempotency_key("abc-1").ok(), Some("abc-1".to_string()));
        assert!(idempotency_key("").is_err());
        assert!(idempotency_key("\"\"").is_err());
        assert!(idempotency_key(&"x".repeat(256)).is_err());
        assert!(idempotency_key("caf\u{e9}").is_err());
    }
}
