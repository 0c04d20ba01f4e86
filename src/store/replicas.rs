//! What replicas over one store need of it (issue 29; `store/postgres/replicas.rs`): a
//! process's name and its fenced lease, the open intents it owns, and the taking over of
//! those a replica gone left open. The embedded store belongs to one process
//! (`gateway.lock`): it owns every intent, and there is nothing to take over.

use std::time::Duration;

use super::{Store, StoreError};
use crate::model::{Intent, IntentId};

impl Store {
    /// Names this process's replica: its intents name it, and its writes of them are refused
    /// once its lease (`replica:<name>`, taken with [`Store::take_lease`]) is fenced.
    pub fn set_replica(&self, replica: &str) {
        if let Store::Postgres(p) = self {
            p.register().set_replica(replica);
        }
    }

    /// Fences the lease of `replica`, a predecessor known to be dead (nothing it sends
    /// afterwards is written).
    pub fn fence_replica(&self, replica: &str) -> Result<(), StoreError> {
        match self {
            Store::Embedded(_) => Ok(()),
            Store::Postgres(p) => p.run(p.register().fence_replica(replica)),
        }
    }

    /// Fences the replicas whose lease was given back or ran out more than `grace` ago (none
    /// without a grace: only those fenced already are gone), and
    /// makes this replica the owner of their open intents on `devices` (and on the sandboxes
    /// of replica `sandboxes_of`, this state directory's predecessor): these, to settle.
    pub fn take_over(
        &self,
        devices: &[String],
        sandboxes_of: Option<&str>,
        grace: Option<Duration>,
    ) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(Vec::new()),
            Store::Postgres(p) => p.run(p.register().take_over(devices, sandboxes_of, grace)),
        }
    }

    /// Whether this process may still write: its replica lease is its own.
    pub fn holds_own_lease(&self) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().holds_own_lease()),
        }
    }

    /// The open intents this process owns, by id (every open intent on the embedded store).
    pub fn owned_open_intents(&self) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        match self {
            Store::Embedded(s) => s.open_intents(),
            Store::Postgres(p) => p.run(p.register().owned_open_intents()),
        }
    }

    /// Says why only an administrator can settle intent `id`, for every replica to show
    /// (the embedded store's one process keeps it in memory). Whether it was written.
    pub fn mark_awaiting(&self, id: IntentId, why: &str) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().mark_awaiting(id, why)),
        }
    }

    /// The open intents another replica (or this one) found only an administrator can settle,
    /// and why; none on the embedded store (its one process keeps them in memory).
    pub fn awaiting_administrator(&self) -> Result<Vec<(IntentId, String)>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(Vec::new()),
            Store::Postgres(p) => p.run(p.register().awaiting_administrator()),
        }
    }

    /// Makes this process the owner of intent `id`, waiting for an administrator, so that the
    /// administrator settles it here. Whether it is this process's now.
    pub fn adopt_awaiting(&self, id: IntentId) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().adopt_awaiting(id)),
        }
    }

    /// Whether a replica other than this process holds its lease now.
    pub fn other_replicas_live(&self) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(false),
            Store::Postgres(p) => p.run(p.register().other_replicas_live()),
        }
    }
}
