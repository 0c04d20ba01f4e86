//! Dashboard sessions: kept in memory only (a restart signs everyone out), found by the
//! SHA-256 of the cookie's random id (256 bits from the OS), ended after [`IDLE`] without a
//! request or [`ABSOLUTE`] after sign-in, on sign-out, or when the token is revoked (checked
//! by the caller on every request). Each session has its own CSRF token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A session ends after this long without a request.
pub const IDLE: Duration = Duration::from_secs(8 * 3600);
/// A session ends this long after sign-in, whatever its use.
pub const ABSOLUTE: Duration = Duration::from_secs(24 * 3600);
/// Most sessions kept at once; beyond it the least recently used ends.
const MAX_SESSIONS: usize = 10_000;
/// Most sessions of one organization; beyond it that organization's least recently used ends,
/// so that one organization signing in again and again cannot end the others' (issue 14).
pub const MAX_SESSIONS_PER_ORG: usize = 50;

/// One signed-in admin.
#[derive(Debug, Clone)]
pub struct Session {
    /// The organization every page shows and every action is limited to.
    pub org: String,
    /// The dashboard token it was opened with.
    pub token_id: String,
    /// The token every POST form of this session carries.
    pub csrf: String,
    created: Instant,
    last_seen: Instant,
}

impl Session {
    /// Whether `presented` is this session's CSRF token (constant time).
    pub fn csrf_ok(&self, presented: Option<&str>) -> bool {
        presented.is_some_and(|p| equal(p, &self.csrf))
    }
}

/// What a cookie's session id names.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// A live session (its idle clock restarted).
    Live(Session),
    /// No live session: expired, signed out, or never issued.
    Gone,
}

/// The live sessions.
pub struct Sessions {
    map: Mutex<HashMap<[u8; 32], Session>>,
    idle: Duration,
    absolute: Duration,
}

impl Sessions {
    /// Sessions with the default lifetimes.
    pub fn new() -> Sessions {
        Sessions::with_lifetimes(IDLE, ABSOLUTE)
    }

    /// Sessions ending after `idle` without use or `absolute` after sign-in.
    pub fn with_lifetimes(idle: Duration, absolute: Duration) -> Sessions {
        Sessions {
            map: Mutex::new(HashMap::new()),
            idle,
            absolute,
        }
    }

    /// Opens a session; returns the id for the cookie (shown nowhere else) and the session.
    pub fn open(&self, org: &str, token_id: &str) -> (String, Session) {
        self.open_at(org, token_id, Instant::now())
    }

    fn open_at(&self, org: &str, token_id: &str, now: Instant) -> (String, Session) {
        let id = random_hex();
        let session = Session {
            org: org.to_string(),
            token_id: token_id.to_string(),
            csrf: random_hex(),
            created: now,
            last_seen: now,
        };
        let mut map = self.lock();
        map.retain(|_, s| self.alive(s, now));
        let same_org = map.values().filter(|s| s.org == org).count();
        if same_org >= MAX_SESSIONS_PER_ORG {
            let oldest = map
                .iter()
                .filter(|(_, s)| s.org == org)
                .min_by_key(|(_, s)| s.last_seen)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        if map.len() >= MAX_SESSIONS {
            if let Some(oldest) = map.iter().min_by_key(|(_, s)| s.last_seen).map(|(k, _)| *k) {
                map.remove(&oldest);
            }
        }
        map.insert(digest(&id), session.clone());
        (id, session)
    }

    /// The session a cookie names, if it is live; restarts its idle clock.
    pub fn get(&self, id: &str) -> Lookup {
        self.get_at(id, Instant::now())
    }

    fn get_at(&self, id: &str, now: Instant) -> Lookup {
        let key = digest(id);
        let mut map = self.lock();
        match map.get_mut(&key) {
            Some(session) if self.alive(session, now) => {
                session.last_seen = now;
                Lookup::Live(session.clone())
            }
            Some(_) => {
                map.remove(&key);
                Lookup::Gone
            }
            None => Lookup::Gone,
        }
    }

    /// Ends the session a cookie names (sign-out, revoked token).
    pub fn close(&self, id: &str) {
        self.lock().remove(&digest(id));
    }

    fn alive(&self, session: &Session, now: Instant) -> bool {
        now.saturating_duration_since(session.last_seen) < self.idle
            && now.saturating_duration_since(session.created) < self.absolute
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new()
    }
}

/// 32 random bytes from the OS, as 64 hex digits.
pub fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Constant-time equality of two texts (their lengths are not secret).
pub fn equal(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

fn digest(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(lookup: Lookup) -> Option<Session> {
        match lookup {
            Lookup::Live(session) => Some(session),
            Lookup::Gone => None,
        }
    }

    #[test]
    fn sessions_expire_when_idle_or_old_and_end_on_close() {
        let sessions = Sessions::with_lifetimes(Duration::from_secs(10), Duration::from_secs(25));
        let t0 = Instant::now();
        let (id, opened) = sessions.open_at("demo", "tok", t0);
        assert_eq!(id.len(), 64);
        assert_ne!(id, opened.csrf);
        let at = |s| t0 + Duration::from_secs(s);
        let got = live(sessions.get_at(&id, at(9))).expect("live");
        assert_eq!((got.org.as_str(), got.token_id.as_str()), ("demo", "tok"));
        assert!(
            live(sessions.get_at(&id, at(18))).is_some(),
            "idle clock restarted"
        );
        assert!(
            live(sessions.get_at(&id, at(26))).is_none(),
            "absolute lifetime"
        );
        assert!(
            live(sessions.get_at(&id, at(1))).is_none(),
            "removed once expired"
        );

        let (idle, _) = sessions.open_at("demo", "tok", t0);
        assert!(
            live(sessions.get_at(&idle, at(10))).is_none(),
            "idle lifetime"
        );
        let (closed, _) = sessions.open_at("demo", "tok", t0);
        sessions.close(&closed);
        assert!(live(sessions.get_at(&closed, t0)).is_none());
        assert!(live(sessions.get_at("not-an-id", t0)).is_none());
    }

    #[test]
    fn one_organization_signing_in_again_and_again_ends_only_its_own_sessions() {
        let sessions = Sessions::new();
        let t0 = Instant::now();
        let (other, _) = sessions.open_at("beta", "t2", t0);
        let (first, _) = sessions.open_at("acme", "t1", t0);
        let mut last = String::new();
        for i in 1..=10 * MAX_SESSIONS_PER_ORG as u64 {
            last = sessions
                .open_at("acme", "t1", t0 + Duration::from_millis(i))
                .0;
        }
        let at = t0 + Duration::from_secs(1);
        assert!(
            live(sessions.get_at(&other, at)).is_some(),
            "beta's session survives"
        );
        assert!(
            live(sessions.get_at(&last, at)).is_some(),
            "acme's newest is live"
        );
        assert!(
            live(sessions.get_at(&first, at)).is_none(),
            "acme's oldest ended"
        );
        let acme = sessions.lock().values().filter(|s| s.org == "acme").count();
        assert_eq!(acme, MAX_SESSIONS_PER_ORG);
    }

    #[test]
    fn csrf_tokens_are_per_session_and_checked() {
        let sessions = Sessions::new();
        let (_, a) = sessions.open("demo", "t1");
        let (_, b) = sessions.open("demo", "t1");
        assert_ne!(a.csrf, b.csrf);
        assert!(a.csrf_ok(Some(&a.csrf)));
        assert!(!a.csrf_ok(Some(&b.csrf)));
        assert!(!a.csrf_ok(Some("")));
        assert!(!a.csrf_ok(None));
    }
}
