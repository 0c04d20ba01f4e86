//! The alerts' state shared by replicas over one PostgreSQL store (issue 29;
//! `store/postgres/alert_state.rs`): rows written whole, and e-mails recorded as sent before
//! they are sent, each write fenced by the writer's own lease and, for what the service as a
//! whole is alerted about, by the leader lease. The embedded store belongs to one process:
//! its alerts' state is the state directory's `alerts.json`, kept by the alerts themselves
//! (`alerts/state.rs`), and none of this is asked of it.

use super::{MailClaim, Store, StoreError};

impl Store {
    /// Whether the alerts' state is kept here, shared by replicas (PostgreSQL); the embedded
    /// store's is the state directory's `alerts.json`.
    pub fn shares_alert_state(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// The alerts' state row `key` (JSON), if written; none on the embedded store.
    pub fn alert_state(&self, key: &str) -> Result<Option<String>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(None),
            Store::Postgres(p) => p.run(p.register().alert_state(key)),
        }
    }

    /// Writes the row `key` whole, fenced by this replica's lease and, with `leader`, by the
    /// leader lease under that epoch: whether it was written (`false`: fenced off).
    pub fn save_alert_state(
        &self,
        key: &str,
        state: &str,
        leader: Option<u64>,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().save_alert_state(key, state, leader)),
        }
    }

    /// Records the e-mail `key` as sent before it is sent, fenced likewise, unless recorded
    /// before.
    pub fn claim_mail(
        &self,
        key: &str,
        state: &str,
        leader: Option<u64>,
    ) -> Result<MailClaim, StoreError> {
        match self {
            Store::Embedded(_) => Ok(MailClaim::Claimed),
            Store::Postgres(p) => p.run(p.register().claim_mail(key, state, leader)),
        }
    }

    /// Forgets the record of the e-mail `key` (the relay did not take it), fenced likewise.
    pub fn release_mail(&self, key: &str, leader: Option<u64>) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().release_mail(key, leader)),
        }
    }
}
