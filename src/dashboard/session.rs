//! Dashboard sessions, found by the SHA-256 of the cookie's random id (256 bits from the OS),
//! ended after [`IDLE`] without a request or [`ABSOLUTE`] after sign-in, on sign-out, or when
//! the token is revoked or the organization removed (checked by the caller on every request).
//!
//! Each session's CSRF token is derived from its id (SHA-256 of a label and the id), so the
//! server keeps nothing but the id's hash, and a session read back after a restart has the
//! same token as the pages already open. What is kept across a restart (`session_file`) is
//! what [`Sessions::stored`] gives: the hash, the organization, the token's public id and the
//! times; never the id or the CSRF token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::session_file::StoredSession;
use crate::sync;

/// A session ends after this long without a request.
pub const IDLE: Duration = Duration::from_secs(8 * 3600);
/// A session ends this long after sign-in, whatever its use.
pub const ABSOLUTE: Duration = Duration::from_secs(24 * 3600);
/// Most sessions kept at once; beyond it the least recently used ends.
const MAX_SESSIONS: usize = 10_000;
/// Most sessions of one organization; beyond it that organization's least recently used ends,
/// so that one organization signing in again and again cannot end the others' (issue 14).
pub const MAX_SESSIONS_PER_ORG: usize = 50;
/// A session's last use is written down again once it is this much newer than what the file
/// says: a restart then measures its idle time from at most this much earlier.
const TOUCH_SAVED_EVERY: Duration = Duration::from_secs(60);

/// One signed-in admin. `Debug` never shows the CSRF token.
#[derive(Clone)]
pub struct Session {
    /// The organization every page shows and every action is limited to.
    pub org: String,
    /// The dashboard token it was opened with.
    pub token_id: String,
    /// The token every POST form of this session carries.
    pub csrf: String,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("org", &self.org)
            .field("token_id", &self.token_id)
            .field("csrf", &format_args!("<redacted>"))
            .finish()
    }
}

impl Session {
    /// The session of cookie id `id`, of `org`, opened with `token_id` (its CSRF token derived
    /// from the id: the same on every replica).
    pub fn of(id: &str, org: String, token_id: String) -> Session {
        Session {
            org,
            token_id,
            csrf: csrf_of(id),
        }
    }

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

/// A live session as the server keeps it.
#[derive(Debug, Clone)]
struct Entry {
    org: String,
    token_id: String,
    created: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    /// `last_seen` as last handed to the file.
    saved_seen: DateTime<Utc>,
}

#[derive(Default)]
struct State {
    entries: HashMap<[u8; 32], Entry>,
    /// Something the file keeps changed since [`Sessions::stored`] was last taken.
    dirty: bool,
}

/// The live sessions.
pub struct Sessions {
    state: Mutex<State>,
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
            state: Mutex::new(State::default()),
            idle,
            absolute,
        }
    }

    /// Opens a session; returns the id for the cookie (shown nowhere else) and the session.
    pub fn open(&self, org: &str, token_id: &str) -> (String, Session) {
        self.open_at(org, token_id, Utc::now())
    }

    fn open_at(&self, org: &str, token_id: &str, now: DateTime<Utc>) -> (String, Session) {
        let id = random_hex();
        let entry = Entry {
            org: org.to_string(),
            token_id: token_id.to_string(),
            created: now,
            last_seen: now,
            saved_seen: now,
        };
        let mut state = sync::lock(&self.state);
        state.entries.retain(|_, e| self.alive(e, now));
        let map = &mut state.entries;
        let same_org = map.values().filter(|e| e.org == org).count();
        if same_org >= MAX_SESSIONS_PER_ORG {
            let oldest = map
                .iter()
                .filter(|(_, e)| e.org == org)
                .min_by_key(|(_, e)| e.last_seen)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        if map.len() >= MAX_SESSIONS {
            if let Some(oldest) = map.iter().min_by_key(|(_, e)| e.last_seen).map(|(k, _)| *k) {
                map.remove(&oldest);
            }
        }
        let session = session_of(&id, &entry);
        map.insert(digest(&id), entry);
        state.dirty = true;
        (id, session)
    }

    /// The session a cookie names, if it is live; restarts its idle clock.
    pub fn get(&self, id: &str) -> Lookup {
        self.get_at(id, Utc::now())
    }

    fn get_at(&self, id: &str, now: DateTime<Utc>) -> Lookup {
        let key = digest(id);
        let mut state = sync::lock(&self.state);
        let touched = match state.entries.get_mut(&key) {
            Some(entry) if self.alive(entry, now) => {
                entry.last_seen = entry.last_seen.max(now);
                let touched = since(entry.saved_seen, now) >= TOUCH_SAVED_EVERY;
                let session = session_of(id, entry);
                state.dirty |= touched;
                return Lookup::Live(session);
            }
            Some(_) => true,
            None => false,
        };
        if touched {
            state.entries.remove(&key);
            state.dirty = true;
        }
        Lookup::Gone
    }

    /// Ends the session a cookie names (sign-out, revoked token).
    pub fn close(&self, id: &str) {
        let mut state = sync::lock(&self.state);
        if state.entries.remove(&digest(id)).is_some() {
            state.dirty = true;
        }
    }

    /// Whether something the file keeps changed since it was last written.
    pub fn dirty(&self) -> bool {
        sync::lock(&self.state).dirty
    }

    /// The live sessions as the file keeps them (and marks them written); expired ones are
    /// dropped first.
    pub fn stored(&self) -> Vec<StoredSession> {
        let now = Utc::now();
        let mut state = sync::lock(&self.state);
        state.entries.retain(|_, e| self.alive(e, now));
        state.dirty = false;
        state
            .entries
            .iter_mut()
            .map(|(hash, entry)| {
                entry.saved_seen = entry.last_seen;
                StoredSession {
                    id_sha256: hex::encode(hash),
                    org: entry.org.clone(),
                    token_id: entry.token_id.clone(),
                    created_at: entry.created,
                    last_seen: entry.last_seen,
                }
            })
            .collect()
    }

    /// Marks the sessions as not written (a write failed: the next change tries again).
    pub fn mark_unsaved(&self) {
        sync::lock(&self.state).dirty = true;
    }

    /// Takes back sessions read from the file: those still live at `now` and whose hash reads
    /// back; returns how many were taken.
    pub fn restore(&self, stored: Vec<StoredSession>, now: DateTime<Utc>) -> usize {
        let mut state = sync::lock(&self.state);
        let mut taken = 0;
        for s in stored {
            let Some(hash) = hex::decode(&s.id_sha256)
                .ok()
                .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            else {
                continue;
            };
            let entry = Entry {
                org: s.org,
                token_id: s.token_id,
                created: s.created_at,
                last_seen: s.last_seen,
                saved_seen: s.last_seen,
            };
            if self.alive(&entry, now) && state.entries.len() < MAX_SESSIONS {
                state.entries.insert(hash, entry);
                taken += 1;
            }
        }
        taken
    }

    /// Whether a stored session is live at `now` (its lifetimes not over).
    pub fn live_at(&self, stored: &StoredSession, now: DateTime<Utc>) -> bool {
        since(stored.last_seen, now) < self.idle && since(stored.created_at, now) < self.absolute
    }

    fn alive(&self, entry: &Entry, now: DateTime<Utc>) -> bool {
        since(entry.last_seen, now) < self.idle && since(entry.created, now) < self.absolute
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new()
    }
}

/// The time from `then` to `now`; zero if the clock went back.
fn since(then: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (now - then).to_std().unwrap_or(Duration::ZERO)
}

fn session_of(id: &str, entry: &Entry) -> Session {
    Session::of(id, entry.org.clone(), entry.token_id.clone())
}

/// The CSRF token of session `id`: SHA-256 of a label and the id, in hex. It cannot be told
/// from the id's hash the server keeps, nor the id from it.
fn csrf_of(id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"emcf-dashboard-csrf\0");
    hasher.update(id.as_bytes());
    hex::encode(hasher.finalize())
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

/// The SHA-256 of a session's id: what is kept of it.
pub fn digest(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_s_debug_never_shows_its_csrf_token() {
        let sessions = Sessions::new();
        let (id, session) = sessions.open("acme", "tok1");
        let shown = format!("{session:?} {:?}", Lookup::Live(session.clone()));
        assert!(shown.contains("acme") && shown.contains("tok1"), "{shown}");
        assert!(!shown.contains(&session.csrf), "{shown}");
        assert!(!shown.contains(&id), "{shown}");
    }

    fn live(lookup: Lookup) -> Option<Session> {
        match lookup {
            Lookup::Live(session) => Some(session),
            Lookup::Gone => None,
        }
    }

    fn secs(s: u64) -> chrono::Duration {
        chrono::Duration::seconds(s as i64)
    }

    #[test]
    fn sessions_expire_when_idle_or_old_and_end_on_close() {
        let sessions = Sessions::with_lifetimes(Duration::from_secs(10), Duration::from_secs(25));
        let t0 = Utc::now();
        let (id, opened) = sessions.open_at("demo", "tok", t0);
        assert_eq!(id.len(), 64);
        assert_ne!(id, opened.csrf);
        let at = |s| t0 + secs(s);
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
        let t0 = Utc::now();
        let (other, _) = sessions.open_at("beta", "t2", t0);
        let (first, _) = sessions.open_at("acme", "t1", t0);
        let mut last = String::new();
        for i in 1..=10 * MAX_SESSIONS_PER_ORG as i64 {
            last = sessions
                .open_at("acme", "t1", t0 + chrono::Duration::milliseconds(i))
                .0;
        }
        let at = t0 + secs(1);
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
        let acme = sync::lock(&sessions.state)
            .entries
            .values()
            .filter(|e| e.org == "acme")
            .count();
        assert_eq!(acme, MAX_SESSIONS_PER_ORG);
    }

    #[test]
    fn csrf_tokens_are_per_session_and_checked() {
        let sessions = Sessions::new();
        let (a_id, a) = sessions.open("demo", "t1");
        let (_, b) = sessions.open("demo", "t1");
        assert_ne!(a.csrf, b.csrf);
        assert!(a.csrf_ok(Some(&a.csrf)));
        assert!(!a.csrf_ok(Some(&b.csrf)));
        assert!(!a.csrf_ok(Some("")));
        assert!(!a.csrf_ok(None));
        let again = live(sessions.get(&a_id)).expect("live");
        assert_eq!(again.csrf, a.csrf, "the same token on every page");
    }

    #[test]
    fn what_is_stored_reads_back_with_the_same_csrf_token_and_never_the_id() {
        let sessions = Sessions::new();
        let t0 = Utc::now();
        let (id, opened) = sessions.open_at("acme", "tok", t0);
        assert!(sessions.dirty(), "a new session is to be written");
        let stored = sessions.stored();
        assert!(!sessions.dirty());
        assert_eq!(stored.len(), 1);
        let text = serde_json::to_string(&stored).unwrap();
        assert!(!text.contains(&id), "the id is never kept");
        assert!(!text.contains(&opened.csrf), "nor the CSRF token");
        assert_eq!(stored[0].id_sha256, hex::encode(digest(&id)));

        let restarted = Sessions::new();
        assert_eq!(restarted.restore(stored.clone(), t0 + secs(5)), 1);
        let back = live(restarted.get_at(&id, t0 + secs(6))).expect("read back");
        assert_eq!(
            (back.org.as_str(), back.token_id.as_str(), back.csrf),
            ("acme", "tok", opened.csrf)
        );
        // Expired while the gateway was stopped: not taken back.
        let later = Sessions::new();
        assert_eq!(later.restore(stored, t0 + secs(9 * 3600)), 0);
        assert!(live(later.get_at(&id, t0 + secs(9 * 3600))).is_none());
    }

    #[test]
    fn a_use_is_written_down_again_only_after_a_minute() {
        let sessions = Sessions::new();
        let t0 = Utc::now();
        let (id, _) = sessions.open_at("acme", "tok", t0);
        let _ = sessions.stored();
        assert!(live(sessions.get_at(&id, t0 + secs(30))).is_some());
        assert!(!sessions.dirty(), "a use within the minute");
        assert!(live(sessions.get_at(&id, t0 + secs(61))).is_some());
        assert!(sessions.dirty(), "a use a minute later");
        sessions.close(&id);
        let _ = sessions.stored();
        sessions.close(&id);
        assert!(
            !sessions.dirty(),
            "closing a closed session changes nothing"
        );
    }
}
