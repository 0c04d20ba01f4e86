//! The dashboard's sessions, sign-in form values and failed sign-ins kept by the store for
//! every replica (issue 29, point 5), when the store keeps them ([`Admin::shares_sessions`]:
//! PostgreSQL). The dashboard passes hashes only: the cookie's id and the form's value never
//! leave it.

use std::time::Duration;

use super::{Admin, AdminError};
pub use crate::store::{FailureKind, SessionLifetimes};

impl Admin {
    /// Whether the store keeps the dashboard's sessions and sign-in state for every replica;
    /// if not (the embedded store), the dashboard keeps them itself.
    pub fn shares_sessions(&self) -> bool {
        self.store.keeps_dashboard_sessions()
    }

    /// Opens a session of `org` with the dashboard token `token_id`.
    pub fn session_open(
        &self,
        id_sha256: &[u8; 32],
        org: &str,
        token_id: &str,
        lifetimes: SessionLifetimes,
        max_per_org: usize,
    ) -> Result<(), AdminError> {
        Ok(self
            .store
            .open_dashboard_session(id_sha256, org, token_id, lifetimes, max_per_org)?)
    }

    /// The organization and token of a live session (its idle clock restarted).
    pub fn session_touch(
        &self,
        id_sha256: &[u8; 32],
        lifetimes: SessionLifetimes,
    ) -> Result<Option<(String, String)>, AdminError> {
        Ok(self.store.touch_dashboard_session(id_sha256, lifetimes)?)
    }

    /// Ends a session, for every replica.
    pub fn session_close(&self, id_sha256: &[u8; 32]) -> Result<(), AdminError> {
        Ok(self.store.close_dashboard_session(id_sha256)?)
    }

    /// Keeps a sign-in form's value given to `peer`.
    pub fn sign_in_value_issue(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: Duration,
        max_per_peer: usize,
    ) -> Result<(), AdminError> {
        Ok(self
            .store
            .issue_sign_in_value(value_sha256, peer, lifetime, max_per_peer)?)
    }

    /// Uses a sign-in form's value up: whether it was given to `peer` within `lifetime`.
    pub fn sign_in_value_take(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: Duration,
    ) -> Result<bool, AdminError> {
        Ok(self
            .store
            .take_sign_in_value(value_sha256, peer, lifetime)?)
    }

    /// The failed sign-ins of `key` and the time since the last one.
    pub fn sign_in_failures(
        &self,
        kind: FailureKind,
        key: &str,
    ) -> Result<Option<(u32, Duration)>, AdminError> {
        Ok(self.store.sign_in_failures(kind, key)?)
    }

    /// One more failed sign-in of `key`; its count.
    pub fn sign_in_failed(
        &self,
        kind: FailureKind,
        key: &str,
        forget: Duration,
    ) -> Result<u32, AdminError> {
        Ok(self.store.sign_in_failed(kind, key, forget)?)
    }

    /// Forgets the failed sign-ins of `key`.
    pub fn sign_in_cleared(&self, kind: FailureKind, key: &str) -> Result<(), AdminError> {
        Ok(self.store.sign_in_cleared(kind, key)?)
    }
}
