//! The alerts' state over PostgreSQL, shared by replicas (issue 29; docs/design.md §12). Every
//! replica evaluates every alert for its own dashboard and `/metrics`; what is e-mailed, and
//! to whom it was, is kept in the store in two kinds of rows (`certify/alert_records.rs`):
//!
//! * `alerts:service`: what the service as a whole is alerted about (organizations' quotas
//!   and invoices in doubt, web API e-MCFs, and what is told to every organization: the
//!   register that cannot be written, backups), written and e-mailed by the replica that leads
//!   only, each write fenced by the leader lease under the epoch it leads by. A replica that
//!   starts leading reads it first and carries on from it: what its predecessor sent is
//!   never sent again.
//! * `alerts:place:<host>:<state_dir>`: what only this replica can see (a box plugged into
//!   it), written and e-mailed by it, leader or not, fenced by its own lease. The place outlives the process: the next one
//!   on that directory carries on from it.
//!
//! Before an e-mail is sent, its recipient is taken out of `unsent` and the row written, in
//! one short fenced transaction: never sent when that write is refused or fails; sent at most
//! once, since two replicas cannot both write the row. A crash between the write and the
//! relay's acceptance loses that one e-mail (the alert stays on the dashboard): never two.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use std::sync::Arc;

use tracing::warn;

use super::conditions::Snapshot;
use super::engine::AlertEngine;
use super::kind::{AlertKey, Subject};
use super::state::AlertState;
use crate::certify::Certifier;
use crate::sync;

/// The row of what the service as a whole is alerted about.
pub const SERVICE: &str = "alerts:service";

/// Who writes (and e-mails) an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The replica that leads.
    Service,
    /// The replica that sees it (its boxes, its state directory).
    Place,
}

/// This replica's part of the shared state.
#[derive(Debug)]
pub struct Shared {
    /// Its place's row.
    place: String,
    /// Whether its place's row was read (once, at the first evaluation).
    place_read: bool,
    /// The leader epoch under which the service's row was read, while it leads by it.
    service_epoch: Option<u64>,
    /// The boxes this replica has (their alerts are its place's).
    boxes: BTreeSet<String>,
    /// Each row as last written or read.
    written: BTreeMap<String, String>,
}

impl Shared {
    /// The shared state of the replica on `state_dir`.
    pub fn new(state_dir: &Path) -> Shared {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "host".to_owned());
        let dir = std::fs::canonicalize(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
        Shared {
            place: format!("alerts:place:{host}:{}", dir.display()),
            place_read: false,
            service_epoch: None,
            boxes: BTreeSet::new(),
            written: BTreeMap::new(),
        }
    }

    /// Who writes and e-mails the alert `key`.
    pub fn scope(&self, key: &AlertKey) -> Scope {
        match &key.subject {
            Subject::Org(_) => Scope::Service,
            Subject::Device(name) if self.boxes.contains(name) => Scope::Place,
            Subject::Device(_) => Scope::Service,
            // Told to every organization (the register cannot be written: the database, the
            // same for every replica; backups): once for the service, not once per replica.
            Subject::Gateway => Scope::Service,
        }
    }

    /// Whether this replica may e-mail (and write) the alerts of `scope` now; the leader
    /// epoch its writes are fenced by.
    pub fn writer(&self, scope: Scope) -> Option<Option<u64>> {
        match scope {
            Scope::Service => self.service_epoch.map(Some),
            Scope::Place => self.place_read.then_some(None),
        }
    }

    /// Before an evaluation (blocking): notes this replica's `boxes`, and reads the rows it
    /// writes from now on: its place's at the first evaluation, the service's when it starts
    /// leading (under a new epoch). A row never written leaves `state` as it is (the state
    /// file of a replica that ran alone before).
    pub fn before(
        &mut self,
        state: &mut AlertState,
        certifier: &Certifier,
        boxes: BTreeSet<String>,
    ) {
        self.boxes = boxes;
        if !self.place_read {
            let place = self.place.clone();
            self.place_read = self.read(state, certifier, &place, Scope::Place);
        }
        match certifier.leader_epoch() {
            Some(epoch) if self.service_epoch != Some(epoch) => {
                let read = self.read(state, certifier, SERVICE, Scope::Service);
                self.service_epoch = read.then_some(epoch);
            }
            Some(_) => {}
            None => self.service_epoch = None,
        }
    }

    fn read(
        &mut self,
        state: &mut AlertState,
        certifier: &Certifier,
        row: &str,
        scope: Scope,
    ) -> bool {
        let text = match certifier.alert_state(row) {
            Ok(text) => text,
            Err(error) => {
                warn!(%error, row, "alerts: the shared state could not be read; not e-mailing these alerts for now");
                return false;
            }
        };
        if let Some(text) = text {
            if let Err(reason) = state.adopt_where(&text, |key| self.scope(key) == scope) {
                warn!(row, %reason, "alerts: the shared state is not what this version writes; carrying on from this replica's own");
            }
            self.written.insert(row.to_owned(), text);
        }
        true
    }

    /// Writes the row of `scope` if this replica writes it and it changed (blocking): whether
    /// the store holds `state`'s alerts of `scope` now. A write refused (its lease, or its
    /// leadership, gone) stops this replica writing that row until it reads it again.
    pub fn write(&mut self, state: &AlertState, certifier: &Certifier, scope: Scope) -> bool {
        let Some(leader) = self.writer(scope) else {
            return false;
        };
        let row = match scope {
            Scope::Service => SERVICE.to_owned(),
            Scope::Place => self.place.clone(),
        };
        let text = state.encode_where(|key| self.scope(key) == scope);
        if self.written.get(&row) == Some(&text) {
            return true;
        }
        match certifier.save_alert_state(&row, &text, leader) {
            Ok(true) => {
                self.written.insert(row, text);
                true
            }
            Ok(false) => {
                warn!(row, "alerts: this replica no longer writes this shared state (fenced off); it e-mails none of these alerts");
                match scope {
                    Scope::Service => self.service_epoch = None,
                    Scope::Place => self.place_read = false,
                }
                false
            }
            Err(error) => {
                warn!(%error, row, "alerts: the shared state could not be written; e-mailing none of these alerts for now");
                false
            }
        }
    }

    /// [`Shared::write`] of both rows.
    pub fn write_all(&mut self, state: &AlertState, certifier: &Certifier) {
        for scope in [Scope::Service, Scope::Place] {
            if self.writer(scope).is_some() {
                self.write(state, certifier, scope);
            }
        }
    }
}

impl AlertEngine {
    /// Before an evaluation, over PostgreSQL (blocking): the shared rows this replica writes
    /// from now on, read into its state.
    pub(super) fn read_shared(&self, certifier: &Certifier, snapshot: &Snapshot) {
        let mut shared = sync::lock(&self.shared);
        let Some(shared) = shared.as_mut() else {
            return;
        };
        let boxes = snapshot
            .channels
            .iter()
            .filter(|c| c.kind == "box")
            .map(|c| c.name.clone())
            .collect();
        let mut state = sync::lock(&self.state);
        shared.before(&mut state, certifier, boxes);
    }

    /// Writes the shared rows this replica writes that changed (blocking; only `scope`'s
    /// with one): whether that scope's row holds this state now (always on the embedded
    /// store).
    pub(super) fn write_shared(&self, certifier: &Certifier, scope: Option<Scope>) -> bool {
        let mut shared = sync::lock(&self.shared);
        let Some(shared) = shared.as_mut() else {
            return true;
        };
        let state = sync::lock(&self.state).clone();
        match scope {
            Some(scope) => shared.write(&state, certifier, scope),
            None => {
                shared.write_all(&state, certifier);
                true
            }
        }
    }

    /// Over PostgreSQL, records the e-mail of `key` to `org` as sent before it is sent: `org`
    /// taken out of the alert's `unsent` and the row written, fenced. Whether it may be sent
    /// (`false`: not this replica's to send now, or not recorded; `org` is still owed).
    pub(super) async fn claim(
        self: &Arc<Self>,
        certifier: &Arc<Certifier>,
        key: &AlertKey,
        org: &str,
        scope: Scope,
    ) -> bool {
        let writes = sync::lock(&self.shared)
            .as_ref()
            .is_some_and(|s| s.writer(scope).is_some());
        if !writes {
            return false;
        }
        self.owe(key, org, false).await;
        let (engine, shared) = (Arc::clone(self), Arc::clone(certifier));
        let recorded =
            tokio::task::spawn_blocking(move || engine.write_shared(&shared, Some(scope)))
                .await
                .unwrap_or(false);
        if !recorded {
            self.owe(key, org, true).await;
        }
        recorded
    }

    /// Over PostgreSQL, the e-mail of `key` to `org` the relay did not take: owed again, and
    /// so recorded (best effort: the next evaluation writes it otherwise).
    pub(super) async fn unclaim(
        self: &Arc<Self>,
        certifier: &Arc<Certifier>,
        key: &AlertKey,
        org: &str,
        scope: Option<Scope>,
    ) {
        let Some(scope) = scope else { return };
        self.owe(key, org, true).await;
        let (engine, shared) = (Arc::clone(self), Arc::clone(certifier));
        let _ =
            tokio::task::spawn_blocking(move || engine.write_shared(&shared, Some(scope))).await;
    }

    /// Whether the alert of `key` (if still raised) owes `org` its e-mail.
    async fn owe(self: &Arc<Self>, key: &AlertKey, org: &str, owed: bool) {
        self.change(|state| {
            if let Some(raised) = state.get_mut(key) {
                if owed {
                    raised.unsent.insert(org.to_owned());
                } else {
                    raised.unsent.remove(org);
                }
            }
        })
        .await;
    }
}
