//! The store seam's reads of a [`DeviceView`], what the register holds of one device, with
//! the write it goes with (issue 28: the register-behind check and counter continuity cost no
//! transaction of their own): the intent recorded with it, the certification recorded with
//! it, and the view alone (the start-up check); and a device's own open intents.

use chrono::{DateTime, Utc};

use super::seam::{refused, Store};
use super::{QuotaClaim, StoreError};
use crate::model::{DeviceView, Intent, IntentId, RegisterEntry, SecurityElements};

impl Store {
    /// [`Store::record_intent`], and the view of the intent's device and of the machine `nim`
    /// before it, read with it: in the same statement on PostgreSQL; on the embedded store the
    /// device's open intents just before, the counters under the intent's write lock.
    pub fn record_intent_with_view(
        &self,
        intent: Intent,
        quota: Option<QuotaClaim>,
        nim: &str,
    ) -> Result<(IntentId, DeviceView), StoreError> {
        match self {
            Store::Embedded(s) => {
                let _held_by_admission = quota;
                s.record_intent_with_view(intent, nim)
            }
            Store::Postgres(p) => {
                let what = intent.org.clone();
                p.write(
                    || p.register().record_intent_with_view(&intent, quota, nim),
                    |r| refused(r, &what),
                )
            }
        }
    }

    /// [`Store::record_certified`], and the view of the intent's device (its other open
    /// intents) and of the entry's machine, its counters as they were before this entry moved
    /// them (`known` is `None` for an entry that moves no counters: a sandbox one, or one
    /// whose counters carry no TC), read in the certifying transaction.
    pub fn record_certified_with_view(
        &self,
        intent: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Result<(RegisterEntry, DeviceView), StoreError> {
        match self {
            Store::Embedded(s) => {
                s.record_certified_with_view(intent, quota_year, certified_at, security, source)
            }
            Store::Postgres(p) => {
                let what = intent.to_string();
                p.write(
                    || {
                        p.register().record_certified_with_view(
                            intent,
                            quota_year,
                            certified_at,
                            security.clone(),
                            source,
                        )
                    },
                    |r| refused(r, &what),
                )
            }
        }
    }

    /// The view of `device` (its open intents but `except`) and of the machine `nim` now, in
    /// one read (one statement on PostgreSQL): the start-up check of a box, and a web API
    /// confirmation whose certification could not be journaled.
    pub fn device_view(
        &self,
        device: &str,
        nim: &str,
        except: Option<IntentId>,
    ) -> Result<DeviceView, StoreError> {
        match self {
            Store::Embedded(s) => s.device_view(device, nim, except),
            Store::Postgres(p) => p.run(p.register().device_view(device, nim, except)),
        }
    }

    /// The open intents of `device`, by id (on PostgreSQL by the index of open intents by
    /// device, not every open intent).
    pub fn open_intents_of(&self, device: &str) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        match self {
            Store::Embedded(s) => s.open_intents_of(device),
            Store::Postgres(p) => p.run(p.register().open_intents_of(device)),
        }
    }
}
