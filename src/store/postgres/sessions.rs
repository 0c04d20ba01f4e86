//! The dashboard's state shared by every replica (issue 29, point 5;
//! `migrations/0001_register.sql`, `dashboard_sessions`, `dashboard_sign_in_values`,
//! `dashboard_sign_in_failures`): a user may land on any replica. Sessions are found by the
//! SHA-256 of the cookie's id, the sign-in form's values by theirs; nothing here is a secret.
//! Lifetimes are measured by the database's clock, so replicas whose clocks differ agree.
//! Each statement is short; a row past its lifetime is deleted by the next one that adds a
//! row of its kind, so the tables hold only what is live (and what expired since).

use std::time::Duration;

use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;

/// A session opened; ended sessions (idle too long, too old) are deleted first.
const SESSIONS_EXPIRED: &str = "DELETE FROM dashboard_sessions \
     WHERE last_seen <= now() - make_interval(secs => $1) \
        OR created_at <= now() - make_interval(secs => $2)";

/// Beyond the organization's cap, its least recently used sessions end (`$2`: how many of
/// its sessions stay besides the new one).
const SESSIONS_OVER_CAP: &str = "DELETE FROM dashboard_sessions WHERE id_sha256 IN \
     (SELECT id_sha256 FROM dashboard_sessions WHERE org = $1 \
      ORDER BY last_seen DESC OFFSET $2)";

const SESSION_OPEN: &str = "INSERT INTO dashboard_sessions \
     (id_sha256, org, token_id, created_at, last_seen) VALUES ($1, $2, $3, now(), now())";

/// A live session's use: its idle clock restarted, its organization and token returned.
const SESSION_TOUCH: &str = "UPDATE dashboard_sessions SET last_seen = now() \
     WHERE id_sha256 = $1 \
       AND last_seen > now() - make_interval(secs => $2) \
       AND created_at > now() - make_interval(secs => $3) \
     RETURNING org, token_id";

const SESSION_CLOSE: &str = "DELETE FROM dashboard_sessions WHERE id_sha256 = $1";

const VALUES_EXPIRED: &str = "DELETE FROM dashboard_sign_in_values \
     WHERE issued_at <= now() - make_interval(secs => $1)";

/// Beyond the cap of one address, its oldest values are forgotten (`$2`: how many stay
/// besides the new one).
const VALUES_OVER_CAP: &str = "DELETE FROM dashboard_sign_in_values WHERE value_sha256 IN \
     (SELECT value_sha256 FROM dashboard_sign_in_values WHERE peer = $1 \
      ORDER BY issued_at DESC OFFSET $2)";

const VALUE_ISSUE: &str = "INSERT INTO dashboard_sign_in_values (value_sha256, peer, issued_at) \
     VALUES ($1, $2, now())";

/// A value used up, whoever posts it; whether it was given to this address and is not too old.
const VALUE_TAKE: &str = "DELETE FROM dashboard_sign_in_values WHERE value_sha256 = $1 \
     RETURNING peer = $2 AND issued_at > now() - make_interval(secs => $3)";

/// A count and the time since its last failure (in seconds, by the database's clock).
const FAILURES: &str = "SELECT failures, \
     greatest(extract(epoch FROM now() - last_failure), 0)::float8 \
     FROM dashboard_sign_in_failures WHERE kind = $1 AND key = $2";

const FAILURES_FORGOTTEN: &str = "DELETE FROM dashboard_sign_in_failures \
     WHERE last_failure <= now() - make_interval(secs => $1)";

/// One more failure; a count forgotten (no failure for `$3` seconds) starts again at one.
const FAILED: &str = "INSERT INTO dashboard_sign_in_failures AS f \
     (kind, key, failures, last_failure) VALUES ($1, $2, 1, now()) \
     ON CONFLICT (kind, key) DO UPDATE SET \
         failures = CASE WHEN f.last_failure <= now() - make_interval(secs => $3) THEN 1 \
                         ELSE least(f.failures, 1000000) + 1 END, \
         last_failure = now() \
     RETURNING failures";

const FAILURES_CLEARED: &str = "DELETE FROM dashboard_sign_in_failures \
     WHERE kind = $1 AND key = $2";

/// Whose failed sign-ins a count is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// A client's address.
    Peer,
    /// An organization (a token naming one of its tokens).
    Org,
}

impl FailureKind {
    fn as_str(self) -> &'static str {
        match self {
            FailureKind::Peer => "peer",
            FailureKind::Org => "org",
        }
    }
}

/// How long sessions live: after their last use, after their sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLifetimes {
    /// Without a request.
    pub idle: Duration,
    /// After sign-in, whatever its use.
    pub absolute: Duration,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl PgRegister {
    /// Opens the session whose cookie id hashes to `id_sha256`, of `org`, opened with the
    /// dashboard token `token_id`; ended sessions are deleted first, and the organization's
    /// least recently used beyond `max_per_org`.
    pub async fn open_dashboard_session(
        &self,
        id_sha256: &[u8; 32],
        org: &str,
        token_id: &str,
        lifetimes: SessionLifetimes,
        max_per_org: usize,
    ) -> Result<(), PgError> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to open a dashboard session", e))?;
        tx.cached_execute(
            SESSIONS_EXPIRED,
            &[&secs(lifetimes.idle), &secs(lifetimes.absolute)],
        )
        .await
        .map_err(|e| fail("deleting ended dashboard sessions", e))?;
        let keep = count(max_per_org.saturating_sub(1));
        tx.cached_execute(SESSIONS_OVER_CAP, &[&org, &keep])
            .await
            .map_err(|e| fail("ending an organization's oldest sessions", e))?;
        tx.cached_execute(SESSION_OPEN, &[&id_sha256.as_slice(), &org, &token_id])
            .await
            .map_err(|e| fail("opening a dashboard session", e))?;
        tx.commit()
            .await
            .map_err(|e| fail("committing a dashboard session", e))
    }

    /// The organization and token of the live session `id_sha256`, its idle clock restarted;
    /// `None` when it ended, was closed or never existed.
    pub async fn touch_dashboard_session(
        &self,
        id_sha256: &[u8; 32],
        lifetimes: SessionLifetimes,
    ) -> Result<Option<(String, String)>, PgError> {
        let fail =
            |e: tokio_postgres::Error| self.pool().query_error("using a dashboard session", &e);
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(
                SESSION_TOUCH,
                &[
                    &id_sha256.as_slice(),
                    &secs(lifetimes.idle),
                    &secs(lifetimes.absolute),
                ],
            )
            .await
            .map_err(fail)?;
        match row {
            None => Ok(None),
            Some(row) => Ok(Some((
                row.try_get(0).map_err(fail)?,
                row.try_get(1).map_err(fail)?,
            ))),
        }
    }

    /// Ends the session `id_sha256` (sign-out, token revoked), on every replica at once.
    pub async fn close_dashboard_session(&self, id_sha256: &[u8; 32]) -> Result<(), PgError> {
        let client = self.pool().client().await?;
        client
            .cached_execute(SESSION_CLOSE, &[&id_sha256.as_slice()])
            .await
            .map_err(|e| self.pool().query_error("closing a dashboard session", &e))?;
        Ok(())
    }

    /// Keeps a sign-in form's value (its SHA-256) given to `peer`; values older than
    /// `lifetime` are deleted first, and `peer`'s oldest beyond `max_per_peer`.
    pub async fn issue_sign_in_value(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: Duration,
        max_per_peer: usize,
    ) -> Result<(), PgError> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to keep a sign-in form value", e))?;
        tx.cached_execute(VALUES_EXPIRED, &[&secs(lifetime)])
            .await
            .map_err(|e| fail("deleting expired sign-in form values", e))?;
        let keep = count(max_per_peer.saturating_sub(1));
        tx.cached_execute(VALUES_OVER_CAP, &[&peer, &keep])
            .await
            .map_err(|e| fail("forgetting an address's oldest sign-in form values", e))?;
        tx.cached_execute(VALUE_ISSUE, &[&value_sha256.as_slice(), &peer])
            .await
            .map_err(|e| fail("keeping a sign-in form value", e))?;
        tx.commit()
            .await
            .map_err(|e| fail("committing a sign-in form value", e))
    }

    /// Uses up the value `value_sha256`: whether it was given to `peer` less than `lifetime`
    /// ago (and not used before).
    pub async fn take_sign_in_value(
        &self,
        value_sha256: &[u8; 32],
        peer: &str,
        lifetime: Duration,
    ) -> Result<bool, PgError> {
        let fail =
            |e: tokio_postgres::Error| self.pool().query_error("using a sign-in form value", &e);
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(
                VALUE_TAKE,
                &[&value_sha256.as_slice(), &peer, &secs(lifetime)],
            )
            .await
            .map_err(fail)?;
        match row {
            None => Ok(false),
            Some(row) => Ok(row.try_get::<_, Option<bool>>(0).map_err(fail)? == Some(true)),
        }
    }

    /// The failed sign-ins counted for `key` and the time since the last one; `None` when
    /// none is counted.
    pub async fn sign_in_failures(
        &self,
        kind: FailureKind,
        key: &str,
    ) -> Result<Option<(u32, Duration)>, PgError> {
        let fail =
            |e: tokio_postgres::Error| self.pool().query_error("reading failed sign-ins", &e);
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(FAILURES, &[&kind.as_str(), &key])
            .await
            .map_err(fail)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let failures: i32 = row.try_get(0).map_err(fail)?;
        let since: f64 = row.try_get(1).map_err(fail)?;
        let since = Duration::try_from_secs_f64(since).unwrap_or(Duration::ZERO);
        Ok(Some((failures.unsigned_abs(), since)))
    }

    /// One more failed sign-in for `key` (a count without failure for `forget` starts
    /// again); the count. Counts forgotten are deleted first.
    pub async fn sign_in_failed(
        &self,
        kind: FailureKind,
        key: &str,
        forget: Duration,
    ) -> Result<u32, PgError> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let client = self.pool().client().await?;
        client
            .cached_execute(FAILURES_FORGOTTEN, &[&secs(forget)])
            .await
            .map_err(|e| fail("deleting forgotten sign-in failures", e))?;
        let row = client
            .cached_query_one(FAILED, &[&kind.as_str(), &key, &secs(forget)])
            .await
            .map_err(|e| fail("counting a failed sign-in", e))?;
        let failures: i32 = row
            .try_get(0)
            .map_err(|e| fail("counting a failed sign-in", e))?;
        Ok(failures.unsigned_abs())
    }

    /// Forgets the failed sign-ins of `key` (a successful sign-in).
    pub async fn sign_in_cleared(&self, kind: FailureKind, key: &str) -> Result<(), PgError> {
        let client = self.pool().client().await?;
        client
            .cached_execute(FAILURES_CLEARED, &[&kind.as_str(), &key])
            .await
            .map_err(|e| self.pool().query_error("clearing failed sign-ins", &e))?;
        Ok(())
    }
}
