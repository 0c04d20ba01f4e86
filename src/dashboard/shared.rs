//! Where the dashboard keeps its sessions, its sign-in form values and its failed sign-ins:
//! one seam, two ways (issue 29, point 5).
//!
//! * On the embedded store (one process per state directory), in this process: `session`
//!   (in memory, kept across a restart by `session_file`), `nonces` and `throttle`.
//! * On PostgreSQL, where replicas share one store, in the store for every replica (through
//!   `admin::sessions`): a session opened on one replica is live on all, a sign-out on one
//!   ends it on all at once, a sign-in form loaded from one is accepted by another, and
//!   failed sign-ins count on all as on one. Nothing is signed, so no key is shared: a
//!   session is the SHA-256 of its cookie's id in a row, its CSRF token derived from the id
//!   as on the embedded store, and ending it is deleting the row. The store answers by the
//!   database's clock, with the same lifetimes and caps as in memory.
//!
//! Store calls run on the blocking pool (`Dashboard::blocking`), never on the runtime's
//! workers. A store that cannot answer is the caller's 503 page, never a guess: a session is
//! not taken as live, a form value not as good, a sign-out not as done.

use std::net::IpAddr;
use std::time::Duration;

use super::nonces::{self, LIFETIME, MAX_PER_PEER};
use super::session::{self, Lookup, Session, ABSOLUTE, IDLE, MAX_SESSIONS_PER_ORG};
use super::throttle::{wait_after, FORGET, ORG_FREE_FAILURES, PEER_FREE_FAILURES};
use super::Dashboard;
use crate::admin::sessions::{FailureKind, SessionLifetimes};
use crate::admin::AdminError;

/// The lifetimes of a session, in the store as in memory.
const LIFETIMES: SessionLifetimes = SessionLifetimes {
    idle: IDLE,
    absolute: ABSOLUTE,
};

impl Dashboard {
    /// The session a cookie names, if it is live (its idle clock restarted).
    pub(super) async fn session_lookup(&self, cookie: &str) -> Result<Lookup, AdminError> {
        if !self.shared {
            let found = self.sessions.get(cookie);
            self.save_sessions_later();
            return Ok(found);
        }
        let hash = session::digest(cookie);
        let found = self
            .blocking(move |admin| admin.session_touch(&hash, LIFETIMES))
            .await?;
        Ok(match found {
            Some((org, token_id)) => Lookup::Live(Session::of(cookie, org, token_id)),
            None => Lookup::Gone,
        })
    }

    /// Opens a session of `org` with the token `token_id`: the id for the cookie.
    pub(super) async fn session_open(
        &self,
        org: &str,
        token_id: &str,
    ) -> Result<String, AdminError> {
        if !self.shared {
            let (id, _) = self.sessions.open(org, token_id);
            self.save_sessions().await;
            return Ok(id);
        }
        let id = session::random_hex();
        let hash = session::digest(&id);
        let (org, token_id) = (org.to_owned(), token_id.to_owned());
        self.blocking(move |admin| {
            admin.session_open(&hash, &org, &token_id, LIFETIMES, MAX_SESSIONS_PER_ORG)
        })
        .await?;
        Ok(id)
    }

    /// Ends the session a cookie names (sign-out, token revoked), on every replica.
    pub(super) async fn session_close(&self, cookie: &str) -> Result<(), AdminError> {
        if !self.shared {
            self.sessions.close(cookie);
            self.save_sessions().await;
            return Ok(());
        }
        let hash = session::digest(cookie);
        self.blocking(move |admin| admin.session_close(&hash)).await
    }

    /// A new value for a sign-in form shown to `peer`.
    pub(super) async fn sign_in_value(&self, peer: IpAddr) -> Result<String, AdminError> {
        if !self.shared {
            return Ok(self.nonces.issue(peer));
        }
        let value = session::random_hex();
        let hash = nonces::digest(&value);
        self.blocking(move |admin| {
            admin.sign_in_value_issue(&hash, &peer.to_string(), LIFETIME, MAX_PER_PEER)
        })
        .await?;
        Ok(value)
    }

    /// Whether `value` was given to `peer` within its lifetime and not used; used up.
    pub(super) async fn sign_in_value_taken(
        &self,
        value: &str,
        peer: IpAddr,
    ) -> Result<bool, AdminError> {
        if !self.shared {
            return Ok(self.nonces.take(value, peer));
        }
        let hash = nonces::digest(value);
        self.blocking(move |admin| admin.sign_in_value_take(&hash, &peer.to_string(), LIFETIME))
            .await
    }

    /// How long `peer` must wait before its next attempt.
    pub(super) async fn peer_wait(&self, peer: IpAddr) -> Result<Duration, AdminError> {
        if !self.shared {
            return Ok(self.throttle.peer_wait(peer));
        }
        self.shared_wait(FailureKind::Peer, peer.to_string(), PEER_FREE_FAILURES)
            .await
    }

    /// How long attempts against `org` must wait.
    pub(super) async fn org_wait(&self, org: &str) -> Result<Duration, AdminError> {
        if !self.shared {
            return Ok(self.throttle.org_wait(org));
        }
        self.shared_wait(FailureKind::Org, org.to_owned(), ORG_FREE_FAILURES)
            .await
    }

    async fn shared_wait(
        &self,
        kind: FailureKind,
        key: String,
        free: u32,
    ) -> Result<Duration, AdminError> {
        let counted = self
            .blocking(move |admin| admin.sign_in_failures(kind, &key))
            .await?;
        Ok(counted.map_or(Duration::ZERO, |(count, since)| {
            wait_after(count, since, free)
        }))
    }

    /// A failed attempt from `peer`, against `org` when the token named one; the peer's count.
    pub(super) async fn sign_in_failed(
        &self,
        peer: IpAddr,
        org: Option<&str>,
    ) -> Result<u32, AdminError> {
        if !self.shared {
            return Ok(self.throttle.failed(peer, org));
        }
        let org = org.map(str::to_owned);
        self.blocking(move |admin| {
            if let Some(org) = &org {
                admin.sign_in_failed(FailureKind::Org, org, FORGET)?;
            }
            admin.sign_in_failed(FailureKind::Peer, &peer.to_string(), FORGET)
        })
        .await
    }

    /// A successful sign-in: `peer` and `org` start afresh.
    pub(super) async fn sign_in_succeeded(
        &self,
        peer: IpAddr,
        org: &str,
    ) -> Result<(), AdminError> {
        if !self.shared {
            self.throttle.succeeded(peer, org);
            return Ok(());
        }
        let org = org.to_owned();
        self.blocking(move |admin| {
            admin.sign_in_cleared(FailureKind::Peer, &peer.to_string())?;
            admin.sign_in_cleared(FailureKind::Org, &org)
        })
        .await
    }
}
