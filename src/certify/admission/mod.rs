//! Admission: who is calling (an API key -> its organization and environment), and whether a
//! valid invoice may go to its channel: an rn already certified is replayed (same content) or
//! refused (409); an rn or `Idempotency-Key` in flight is refused (409); a total the register
//! or the organization rules out is refused (422: 180, 181, `ceiling.rs`); an rn its device
//! certified and the register lost, acknowledged with its rn, is refused (409, 173); a quota unit is
//! reserved (429 when none is left). The claims (`claims.rs`) are held until the answer and
//! released whatever the outcome: a success has been journaled by then, and the register is
//! what counts from there on.
//!
//! Every step that reads the store runs on the blocking pool, never on the runtime's
//! workers: [`Admission::authenticate`], [`Admission::admit`] and [`Admission::lookup`] each
//! make one hop there, with what they need of the request ([`Asked`]).
//!
//! A certified invoice costs admission one read of the store ([`crate::store::AdmissionView`]:
//! one statement on PostgreSQL): its key, remembered since it last matched
//! (`principals.rs`), is confirmed in the same read as its rn, its `Idempotency-Key` and
//! its quota; the claims' release marks (`claims.rs`) say when something must be read again
//! after claiming (docs/design.md §11).

mod ceiling;
mod claims;
mod principals;

use std::sync::Arc;

use chrono::{DateTime, Datelike, Utc};
use rust_decimal::Decimal;

use crate::certify::invoice::ValidInvoice;
use crate::certify::register_writer::blocking;
use crate::certify::{AuthFailure, CertifierSettings, CertifyError};
use crate::keys::{self, PresentedKey};
use crate::model::{
    Environment, IdempotencyBinding, KeyId, KeyRecord, Organization, Plan, RegisterEntry,
};
use crate::store::{AdmissionAsk, Store};
pub use ceiling::Ceiling;
use claims::{Claimed, Claims, CreditClaim, Mark, QuotaClaim, RnClaim};
use principals::Principals;

/// Who is calling: the organization and key behind a valid, enabled API key.
#[derive(Clone)]
pub struct Principal {
    /// The key's organization.
    pub org: Organization,
    /// The key's public id.
    pub key_id: KeyId,
    /// Production or Sandbox.
    pub environment: Environment,
    /// The SHA-256 of the key's secret, as it matched (to tell the same key read again).
    key_sha256: String,
    /// Whether it was remembered (`principals.rs`), not read for this request: admission's
    /// read confirms it ([`Admission::recheck`] where an answer comes before).
    pub(in crate::certify) remembered: bool,
}

impl Principal {
    /// The principal of `record` (enabled, its secret matched) in `org`.
    fn of(record: &KeyRecord, org: Organization, remembered: bool) -> Principal {
        Principal {
            org,
            key_id: record.id.clone(),
            environment: record.environment,
            key_sha256: record.secret_sha256.clone(),
            remembered,
        }
    }
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Principal")
            .field("org", &self.org)
            .field("key_id", &self.key_id)
            .field("environment", &self.environment)
            .field("remembered", &self.remembered)
            .finish_non_exhaustive()
    }
}

/// What admission decided for a valid invoice.
pub(crate) enum Admitted {
    /// This rn was certified before with the same content: its entry, nothing else to do.
    Replay(Box<RegisterEntry>),
    /// It may go to its channel, under its ceiling; the claims are held until the answer.
    Go(Box<(Held, Ceiling)>),
    /// The key's organization is not what the principal says (it changed since the key was
    /// remembered): the principal as it is now; nothing is held, the invoice is to be
    /// validated and admitted again as the organization now is.
    Moved(Box<Principal>),
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
    principals: Arc<Principals>,
    quotas: CertifierSettings,
}

/// How many times admission reads the quota again while units are released around it.
const QUOTA_READS: usize = 3;

impl Admission {
    pub(crate) fn new(store: Arc<Store>, quotas: CertifierSettings) -> Admission {
        Admission {
            store,
            claims: Arc::new(Claims::default()),
            principals: Arc::new(Principals::default()),
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

    /// Resolves the `Authorization` header to a principal, read from the store. The key is
    /// checked in constant time and never logged.
    pub(crate) async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, CertifyError> {
        let presented = presented(authorization)?;
        let this = self.clone();
        blocking(&self.store, move |_| Ok(this.principal_of(&presented))).await?
    }

    /// [`Admission::authenticate`] for an invoice to admit: a key that matched before is
    /// remembered, without a read ([`Admission::admit`] confirms it).
    pub(crate) async fn authenticate_remembered(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, CertifyError> {
        let presented = presented(authorization)?;
        if let Some(principal) = self.principals.recall(&presented) {
            return Ok(principal);
        }
        let this = self.clone();
        blocking(&self.store, move |_| Ok(this.principal_of(&presented))).await?
    }

    /// The principal behind `presented`, from the store (blocking): remembered when its key
    /// is good, forgotten when the key is gone or disabled (not for a wrong secret: the key
    /// itself may be good).
    fn principal_of(&self, presented: &PresentedKey) -> Result<Principal, CertifyError> {
        let refused = |failure| {
            self.principals.forget(&presented.id);
            Err(CertifyError::Unauthorized(failure))
        };
        let Some(record) = self.store.key(&presented.id)? else {
            return refused(AuthFailure::Invalid);
        };
        if !presented.matches(&record) {
            return Err(CertifyError::Unauthorized(AuthFailure::Invalid));
        }
        if !record.enabled {
            return refused(AuthFailure::Disabled);
        }
        let Some(org) = self.store.organization(&record.org)? else {
            return refused(AuthFailure::Invalid);
        };
        self.principals.remember(&record, &org);
        Ok(Principal::of(&record, org, false))
    }

    /// A remembered `principal`'s key as the store has it now: 401 when it is refused now,
    /// the principal as it now is when its organization changed, `None` when nothing did (or
    /// the principal was read for this request).
    pub(crate) async fn recheck(
        &self,
        principal: &Principal,
    ) -> Result<Option<Principal>, CertifyError> {
        if !principal.remembered {
            return Ok(None);
        }
        let (this, principal) = (self.clone(), principal.clone());
        blocking(&self.store, move |_| {
            let key = this.store.key(&principal.key_id)?;
            let org = match &key {
                Some(key) => this.store.organization(&key.org)?,
                None => None,
            };
            Ok(this.confirm(&principal, key.as_ref(), org))
        })
        .await?
    }

    /// `principal` against its key and organization as the store has them now: 401 (the key
    /// forgotten) when the key is gone, disabled or another; the principal as it now is when
    /// its organization changed (remembered so); `None` when nothing did.
    fn confirm(
        &self,
        principal: &Principal,
        key: Option<&KeyRecord>,
        org: Option<Organization>,
    ) -> Result<Option<Principal>, CertifyError> {
        let refused = |failure| {
            self.principals.forget(&principal.key_id);
            Err(CertifyError::Unauthorized(failure))
        };
        let Some(key) = key else {
            return refused(AuthFailure::Invalid);
        };
        let same = key.id == principal.key_id
            && key.secret_sha256 == principal.key_sha256
            && key.org == principal.org.id
            && key.environment == principal.environment;
        if !same {
            return refused(AuthFailure::Invalid);
        }
        if !key.enabled {
            return refused(AuthFailure::Disabled);
        }
        let Some(org) = org else {
            return refused(AuthFailure::Invalid);
        };
        if org == principal.org {
            return Ok(None);
        }
        self.principals.remember(key, &org);
        Ok(Some(Principal::of(key, org, false)))
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

    /// [`Admission::admit`], reading the store (blocking): one read ([`Store::admission_view`])
    /// unless a claim was released meanwhile that the answer depends on.
    fn admit_now(
        &self,
        principal: &Principal,
        invoice: &Asked,
        idempotency_key: Option<&str>,
        received_at: DateTime<Utc>,
    ) -> Result<Admitted, CertifyError> {
        let (org, env, rn) = (&principal.org, principal.environment, &invoice.rn);
        let production = env == Environment::Production;
        let year = production.then(|| received_at.with_timezone(&self.quotas.offset).year());
        // Taken before the read: a claim released after them is read again after claiming.
        let rn_mark = self.claims.mark(Claimed::Rn(&org.id, env, rn));
        let key_mark =
            idempotency_key.map(|key| self.claims.mark(Claimed::IdempotencyKey(&org.id, env, key)));
        let quota_mark = year.map(|year| self.claims.mark(Claimed::Quota(&org.id, year)));
        let view = self.store.admission_view(&AdmissionAsk {
            key_id: principal.key_id.clone(),
            org: org.id.clone(),
            environment: env,
            rn: rn.clone(),
            idempotency_key: idempotency_key.map(str::to_owned),
            device: production.then(|| org.device.clone()),
            quota_year: year,
        })?;
        if let Some(fresh) = self.confirm(principal, view.key.as_ref(), view.org)? {
            return Ok(Admitted::Moved(Box::new(fresh)));
        }
        let key_claim = match (idempotency_key, key_mark) {
            (Some(key), Some(mark)) => {
                Some(self.claim_idempotency_key(principal, invoice, key, view.binding, mark)?)
            }
            _ => None,
        };
        if let Some(entry) = replayed(invoice, view.entry)? {
            return Ok(Admitted::Replay(Box::new(entry)));
        }
        // An rn the device certified and the register lost (an acknowledged register behind
        // its box named it): never certified again (before quota and device).
        if let Some(number) = view.lost {
            return Err(CertifyError::LostRn {
                rn: rn.clone(),
                number,
            });
        }
        if view.open_intent.is_some() {
            return Err(CertifyError::InFlight { rn: rn.clone() });
        }
        let rn_claim = self
            .claims
            .claim_rn(&org.id, env, rn)
            .ok_or_else(|| CertifyError::InFlight { rn: rn.clone() })?;
        // Another request may have finished this rn between the read and the claim: it
        // released its claim after its certification was committed.
        if self.claims.released_since(rn_mark) {
            if let Some(entry) = self.replay(principal, invoice)? {
                return Ok(Admitted::Replay(Box::new(entry)));
            }
        }
        // After the replays (an invoice certified before a limit changed still answers), before
        // the quota (a refusal uses none).
        let (ceiling, credit_claim) = self.plausible(principal, invoice)?;
        let (quota_claim, quota) = match (year, quota_mark) {
            (Some(year), Some(mark)) => {
                let (claim, limit) = self.reserve_quota(org, year, view.quota_used, mark)?;
                (Some(claim), Some(limit))
            }
            _ => (None, None),
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
    /// key in flight is 409. `bound` is the key's binding as read after `mark`.
    fn claim_idempotency_key(
        &self,
        principal: &Principal,
        invoice: &Asked,
        key: &str,
        bound: Option<IdempotencyBinding>,
        mark: Mark,
    ) -> Result<RnClaim, CertifyError> {
        let (org, env) = (&principal.org.id, principal.environment);
        let reused = |bound: Option<IdempotencyBinding>| match bound {
            Some(bound) if bound.request_digest != invoice.digest => {
                Err(CertifyError::IdempotencyKeyReused { rn: bound.rn })
            }
            _ => Ok(()),
        };
        reused(bound)?;
        let claim = self
            .claims
            .claim_idempotency_key(org, env, key)
            .ok_or_else(|| CertifyError::InFlight {
                rn: invoice.rn.clone(),
            })?;
        // A request with this key that finished since the read may have bound it.
        if self.claims.released_since(mark) {
            reused(self.store.idempotency_binding(org, env, key)?)?;
        }
        Ok(claim)
    }

    /// The entry of this rn when it was certified with the same content; 409 with another.
    fn replay(
        &self,
        principal: &Principal,
        invoice: &Asked,
    ) -> Result<Option<RegisterEntry>, CertifyError> {
        let (org, env) = (&principal.org.id, principal.environment);
        replayed(invoice, self.store.entry_by_rn(org, env, &invoice.rn)?)
    }

    /// One unit of `org`'s quota of `year` (429 when none is left), `used` as read after
    /// `mark`: read again while units were released meanwhile (certified, they are in the
    /// store now and no longer reserved).
    fn reserve_quota(
        &self,
        org: &Organization,
        year: i32,
        mut used: u64,
        mut mark: Mark,
    ) -> Result<(QuotaClaim, crate::store::QuotaClaim), CertifyError> {
        let quota = self.quota_of(org);
        let mut reads = 1;
        loop {
            match self
                .claims
                .reserve_quota_since(&org.id, year, used, quota, mark)
            {
                Ok(claim) => return Ok((claim, crate::store::QuotaClaim { year, quota })),
                Err(0) => return Err(CertifyError::QuotaExhausted { used, quota, year }),
                // Near the limit while units were released around the read: each counted as
                // used may not be; the count is read again, and after three reads still
                // moving the invoice is refused for now (never admitted on a short count,
                // never 429 on a long one). Nothing is reserved.
                Err(_) if reads >= QUOTA_READS => {
                    return Err(CertifyError::DeviceUnavailable {
                        reason: crate::msg!("reason-quota-changing"),
                        retry_after: std::time::Duration::from_secs(1),
                    })
                }
                Err(_) => {
                    mark = self.claims.mark(Claimed::Quota(&org.id, year));
                    used = self.store.quota_used(&org.id, year)?;
                    reads += 1;
                }
            }
        }
    }
}

/// The key of the `Authorization` header (401 without one, or with a malformed one).
fn presented(authorization: Option<&str>) -> Result<PresentedKey, CertifyError> {
    let header = authorization.ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
    let text = keys::bearer(header).ok_or(CertifyError::Unauthorized(AuthFailure::Missing))?;
    keys::parse(text).map_err(|_| CertifyError::Unauthorized(AuthFailure::Invalid))
}

/// `entry` (the rn's, as read) when it is `invoice` certified with the same content; 409 with
/// another content.
fn replayed(
    invoice: &Asked,
    entry: Option<RegisterEntry>,
) -> Result<Option<RegisterEntry>, CertifyError> {
    match entry {
        Some(entry) if entry.request.request_digest == invoice.digest => Ok(Some(entry)),
        Some(_) => Err(CertifyError::DuplicateRn {
            rn: invoice.rn.clone(),
        }),
        None => Ok(None),
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
