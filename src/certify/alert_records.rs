//! What the alerts keep in the store over PostgreSQL (issue 29; `store/alert_state.rs`): their
//! state, shared by replicas, and the record of each e-mail written before it is sent, fenced
//! by this replica's own lease and, for service-wide alerts, by the leader lease under the
//! epoch it leads by (`leader.rs`). The alerts reach the store only through here.

use super::register_writer::blocking;
use super::{Certifier, CertifyError};
pub use crate::store::MailClaim;

impl Certifier {
    /// Whether the alerts' state is the store's, shared by replicas (PostgreSQL); on the
    /// embedded store it is the state directory's `alerts.json`.
    pub fn alerts_shared(&self) -> bool {
        self.store.shares_alert_state()
    }

    /// The epoch this replica leads by now, if it leads (always 1 on the embedded store once
    /// started).
    pub fn leader_epoch(&self) -> Option<u64> {
        self.journal.leadership().epoch()
    }

    /// The alerts' state row `key` (JSON), if written (blocking).
    pub fn alert_state(&self, key: &str) -> Result<Option<String>, CertifyError> {
        Ok(self.store.alert_state(key)?)
    }

    /// Writes the alerts' state row `key` whole, fenced (blocking): whether it was written
    /// (`false`: this replica's lease, or its leadership under `leader`, is gone).
    pub fn save_alert_state(
        &self,
        key: &str,
        state: &str,
        leader: Option<u64>,
    ) -> Result<bool, CertifyError> {
        Ok(self.store.save_alert_state(key, state, leader)?)
    }

    /// Records the e-mail `key` as sent, fenced, before it is sent.
    pub async fn claim_mail(
        &self,
        key: String,
        state: String,
        leader: Option<u64>,
    ) -> Result<MailClaim, CertifyError> {
        blocking(&self.store, move |store| {
            store.claim_mail(&key, &state, leader)
        })
        .await
    }

    /// Forgets the record of the e-mail `key` (the relay did not take it), fenced.
    pub async fn release_mail(
        &self,
        key: String,
        leader: Option<u64>,
    ) -> Result<bool, CertifyError> {
        blocking(&self.store, move |store| store.release_mail(&key, leader)).await
    }
}
