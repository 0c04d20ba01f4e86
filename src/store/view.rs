//! What admission reads of the store for one invoice, in one read ([`Store::admission_view`]):
//! the key and its organization as they are now, the rn's entry and open intent, the
//! `Idempotency-Key`'s binding, a number the box certified and the register lost, and the
//! quota used (docs/design.md §11). On PostgreSQL it is one statement, one snapshot
//! (`postgres/view.rs`); on the embedded store the reads of each, in an order that keeps a
//! race safe: the open intent before the entry, so that an intent certified between the two
//! shows as the entry.

use super::{Store, StoreError};
use crate::model::{
    Environment, IdempotencyBinding, IntentId, KeyRecord, Organization, RegisterEntry,
};

/// What admission asks about one invoice.
#[derive(Debug, Clone)]
pub struct AdmissionAsk {
    /// The API key's public id.
    pub key_id: String,
    /// The key's organization.
    pub org: String,
    /// The key's environment.
    pub environment: Environment,
    /// The invoice number.
    pub rn: String,
    /// The request's `Idempotency-Key`, if it has one.
    pub idempotency_key: Option<String>,
    /// The device whose lost numbers count (production only).
    pub device: Option<String>,
    /// The quota year whose use counts (production only).
    pub quota_year: Option<i32>,
}

/// What the store answered to an [`AdmissionAsk`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmissionView {
    /// The key as it is now (`None`: unknown).
    pub key: Option<KeyRecord>,
    /// The key's organization as it is now.
    pub org: Option<Organization>,
    /// The request the `Idempotency-Key` is bound to ([`Store::idempotency_binding`]).
    pub binding: Option<IdempotencyBinding>,
    /// The rn's open intent ([`Store::open_intent_for`]).
    pub open_intent: Option<IntentId>,
    /// The rn's entry ([`Store::entry_by_rn`]).
    pub entry: Option<RegisterEntry>,
    /// The counter number under which the device certified the rn and the register lost it
    /// ([`Store::lost_rn`]).
    pub lost: Option<u64>,
    /// The quota units the year's certifications used ([`Store::quota_used`]; 0 without a
    /// year).
    pub quota_used: u64,
}

impl Store {
    /// The [`AdmissionView`] of `ask`, one read of the store.
    pub fn admission_view(&self, ask: &AdmissionAsk) -> Result<AdmissionView, StoreError> {
        match self {
            Store::Embedded(_) => self.admission_view_by_parts(ask),
            Store::Postgres(p) => p.run(p.register().admission_view(ask)),
        }
    }

    /// The view read by the store's methods of each part, the open intent before the entry.
    fn admission_view_by_parts(&self, ask: &AdmissionAsk) -> Result<AdmissionView, StoreError> {
        let (org, env, rn) = (ask.org.as_str(), ask.environment, ask.rn.as_str());
        let binding = match &ask.idempotency_key {
            Some(key) => self.idempotency_binding(org, env, key)?,
            None => None,
        };
        let open_intent = self.open_intent_for(org, env, rn)?;
        let entry = self.entry_by_rn(org, env, rn)?;
        let lost = match &ask.device {
            Some(device) => self.lost_rn(device, rn)?,
            None => None,
        };
        let quota_used = match ask.quota_year {
            Some(year) => self.quota_used(org, year)?,
            None => 0,
        };
        Ok(AdmissionView {
            key: self.key(&ask.key_id)?,
            org: self.organization(org)?,
            binding,
            open_intent,
            entry,
            lost,
            quota_used,
        })
    }
}
