//! The dashboard's sessions, sign-in form values and failed sign-ins, shared by every
//! replica over PostgreSQL (issue 29, point 5: `postgres/sessions.rs`). The embedded store
//! belongs to one process: its dashboard keeps them itself, in memory and in its sessions
//! file (`dashboard::session_file`), and these answer `Invalid` there.

use super::postgres::PgStore;
use super::{FailureKind, SessionLifetimes, Store, StoreError};

impl Store {
    /// Whether the dashboard's sessions and sign-in state are kept here (for every replica).
    pub fn keeps_dashboard_sessions(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// Opens a dashboard session ([`PgRegister::open_dashboard_session`](super::postgres::PgRegister::open_dashboard_session)).
    pub fn open_dashboard_session(
        &self,
        id_sha256: &[u8; 32],
        org: &str,
        token_id: &str,
        lifetimes: SessionLifetimes,
        max_per_org: usize,
    ) -> Result<(), StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(
            p.register()
                .open_dashboard_session(id_sha256, org, token_id, lifetimes, max_per_org),
        )
    }

    /// The organization and token of a live session, its idle clock restarted.
    pub fn touch_dashboard_session(
        &self,
        id_sha256: &[u8; 32],
        lifetimes: SessionLifetimes,
    ) -> Result<Option<(String, String)>, StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(p.register().touch_dashboard_session(id_sha256, lifetimes))
    }

    /// Ends a dashboard session on every replica.
    pub fn close_dashboard_session(&self, id_sha256: &[u8; 32]) -> Result<(), StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(p.register().close_dashboard_session(id_sha256))
    }

    /// Keeps a sign-in form's value given to `peer`.
    pub fn issue_sign_in_value(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: std::time::Duration,
        max_per_peer: usize,
    ) -> Result<(), StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(
            p.register()
                .issue_sign_in_value(value_sha256, peer, lifetime, max_per_peer),
        )
    }

    /// Uses a sign-in form's value up: whether `peer` was given it less than `lifetime` ago.
    pub fn take_sign_in_value(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: std::time::Duration,
    ) -> Result<bool, StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(
            p.register()
                .take_sign_in_value(value_sha256, peer, lifetime),
        )
    }

    /// The failed sign-ins counted for `key`, and the time since the last one.
    pub fn sign_in_failures(
        &self,
        kind: FailureKind,
        key: &str,
    ) -> Result<Option<(u32, std::time::Duration)>, StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(p.register().sign_in_failures(kind, key))
    }

    /// One more failed sign-in for `key`; its count.
    pub fn sign_in_failed(
        &self,
        kind: FailureKind,
        key: &str,
        forget: std::time::Duration,
    ) -> Result<u32, StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(p.register().sign_in_failed(kind, key, forget))
    }

    /// Forgets the failed sign-ins of `key`.
    pub fn sign_in_cleared(&self, kind: FailureKind, key: &str) -> Result<(), StoreError> {
        let p = self.dashboard_sessions()?;
        p.run(p.register().sign_in_cleared(kind, key))
    }

    fn dashboard_sessions(&self) -> Result<&PgStore, StoreError> {
        match self {
            Store::Postgres(p) => Ok(p),
            Store::Embedded(_) => Err(StoreError::Invalid(
                "the embedded store's dashboard keeps its sessions itself".to_owned(),
            )),
        }
    }
}
