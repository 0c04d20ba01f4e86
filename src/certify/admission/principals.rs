//! The principals of keys that matched, kept in memory for `POST /api/v1/Invoice`, so that a
//! certified invoice costs one store read, not three (docs/design.md §11). Only an enabled key
//! whose secret matched is kept (never a refusal), at most [`MAX_KEPT`]; a presented key whose
//! secret does not match the kept one is read from the store as before.
//!
//! A kept principal is only a guess until admission's read of the store
//! ([`crate::store::AdmissionView`]) confirms it, in the same read as the invoice's rn: a key
//! disabled, gone or changed since is refused there (401) and forgotten; an organization
//! changed since is taken as it is now. Any answer given before that read re-reads the key
//! (`Certifier::certify`), so that a disabled key hears 401 at its next request.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::keys::PresentedKey;
use crate::model::{KeyId, KeyRecord, Organization};

use super::Principal;

/// The most principals kept: a gateway's keys in use, with room to spare.
const MAX_KEPT: usize = 10_000;

/// The principals of keys that matched, by key id.
#[derive(Default)]
pub(super) struct Principals {
    kept: Mutex<HashMap<KeyId, (KeyRecord, Organization)>>,
}

impl Principals {
    /// The principal kept for `presented`, when its secret matches the kept key's.
    pub(super) fn recall(&self, presented: &PresentedKey) -> Option<Principal> {
        let kept = crate::sync::lock(&self.kept);
        let (record, org) = kept.get(&presented.id)?;
        if !record.enabled || !presented.matches(record) {
            return None;
        }
        Some(Principal::of(record, org.clone(), true))
    }

    /// Keeps the principal of `record` (enabled, its secret matched) and its `org`.
    pub(super) fn remember(&self, record: &KeyRecord, org: &Organization) {
        if !record.enabled {
            return;
        }
        let mut kept = crate::sync::lock(&self.kept);
        if kept.len() >= MAX_KEPT && !kept.contains_key(&record.id) {
            // Any one makes room: a key forgotten is read again at its next use.
            if let Some(id) = kept.keys().next().cloned() {
                kept.remove(&id);
            }
        }
        kept.insert(record.id.clone(), (record.clone(), org.clone()));
    }

    /// Forgets the principal of key `id` (refused, or changed).
    pub(super) fn forget(&self, id: &str) {
        crate::sync::lock(&self.kept).remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;

    fn org() -> Organization {
        crate::store::tests::org("demo")
    }

    #[test]
    fn only_an_enabled_key_that_matches_is_recalled() {
        let issued =
            crate::keys::issue("demo", Environment::Production, "till", chrono::Utc::now());
        let presented = crate::keys::parse(&issued.plaintext).expect("a key");
        let principals = Principals::default();
        assert!(principals.recall(&presented).is_none());
        principals.remember(&issued.record, &org());
        let recalled = principals.recall(&presented).expect("kept");
        assert!(recalled.remembered);
        assert_eq!(recalled.key_id, issued.record.id);
        // The same id with another secret is not this key.
        let other = crate::keys::issue("demo", Environment::Production, "x", chrono::Utc::now());
        let mut forged = issued.record.clone();
        forged.secret_sha256 = other.record.secret_sha256.clone();
        principals.remember(&forged, &org());
        assert!(principals.recall(&presented).is_none());
        // A disabled key is never kept; a forgotten one is read again.
        principals.forget(&issued.record.id);
        let mut disabled = issued.record.clone();
        disabled.enabled = false;
        principals.remember(&disabled, &org());
        assert!(principals.recall(&presented).is_none());
    }
}
