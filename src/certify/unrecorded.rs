//! Certifications the channel made while the register could not write them (a full disk, a
//! read-only or failing file system): the device (or the DGI) certified the invoice, its
//! intent is durable in the journal, but the certification record failed. Its security
//! elements are kept here, in memory, until the register can be written again; then
//! `storage_fault.rs` journals them at once, so that the client's retry gets its 200 with the
//! same codeDEFDGI, without a restart and without a second certification. Meanwhile a retry
//! of the rn hears 164 (`CertifyError::CertifiedNotRecorded`), never 152 or 111.
//!
//! Memory is the only copy of the elements: the intent stays open in the journal, and what a
//! restart (before the register could take them) does with it depends on the channel. A box's
//! are read back from its C1h (its last certification), as for any open intent. The DGI's are
//! not: a confirmed request is no longer in the e-MCF's pending list and no call returns its
//! elements again, so the intent waits for an administrator (`settle_from_pending.rs`, 409/111),
//! who settles it from the DGI's portal; the `error!` logged when it was kept here names its
//! rn, device and codeDEFDGI (and the web API's, its counters) for that.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tracing::{error, info};

use crate::model::{Environment, IntentId, SecurityElements};
use crate::store::{Store, StoreError};
use crate::sync::lock;

/// One certification the register could not take yet.
#[derive(Debug, Clone)]
pub(crate) struct Unrecorded {
    /// Its organization, environment and rn (what a retry names).
    pub org: String,
    pub environment: Environment,
    pub rn: String,
    /// The channel it was certified on.
    pub device: String,
    /// What the channel answered.
    pub security: SecurityElements,
    /// `finalize` or `reconciled`.
    pub source: String,
    /// When the channel answered, and its quota year.
    pub certified_at: DateTime<Utc>,
    pub quota_year: i32,
}

/// The kept certifications, by intent. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub(crate) struct UnrecordedSet(Arc<Mutex<BTreeMap<IntentId, Unrecorded>>>);

impl UnrecordedSet {
    /// Keeps `kept` for `intent` (a newer answer for the same intent replaces it).
    pub(crate) fn keep(&self, intent: IntentId, kept: Unrecorded) {
        error!(
            intent,
            rn = %kept.rn,
            device = %kept.device,
            code_def = %kept.security.code_def,
            "certified on the channel but the register cannot write it: kept in memory until it can"
        );
        lock(&self.0).insert(intent, kept);
    }

    /// The channel that certified `rn` of `org` in `environment`, if it is kept here.
    pub(crate) fn holds(&self, org: &str, environment: Environment, rn: &str) -> Option<String> {
        lock(&self.0)
            .values()
            .find(|k| k.org == org && k.environment == environment && k.rn == rn)
            .map(|k| k.device.clone())
    }

    /// Whether `intent` is kept here.
    pub(crate) fn contains(&self, intent: IntentId) -> bool {
        lock(&self.0).contains_key(&intent)
    }

    /// How many are kept.
    pub(crate) fn len(&self) -> usize {
        lock(&self.0).len()
    }

    /// Journals every kept certification (blocking: the store fsyncs). One that is no longer
    /// open (settled meanwhile from the channel) is forgotten; the first write that fails
    /// stops the round (the rest stay kept). Returns how many were journaled.
    pub(crate) fn record_all(&self, store: &Store) -> Result<usize, StoreError> {
        let kept: Vec<(IntentId, Unrecorded)> = lock(&self.0)
            .iter()
            .map(|(id, k)| (*id, k.clone()))
            .collect();
        let mut recorded = 0;
        for (id, k) in kept {
            match store.record_certified(
                id,
                k.quota_year,
                k.certified_at,
                k.security.clone(),
                &k.source,
            ) {
                Ok(entry) => {
                    info!(
                        rn = %k.rn,
                        device = %k.device,
                        sequence = entry.sequence,
                        "a certification kept in memory while the register could not write is now journaled"
                    );
                    recorded += 1;
                }
                Err(StoreError::IntentNotOpen(_) | StoreError::UnknownIntent(_)) => {
                    info!(rn = %k.rn, "a kept certification was settled meanwhile");
                }
                Err(error) => return Err(error),
            }
            lock(&self.0).remove(&id);
        }
        Ok(recorded)
    }
}
