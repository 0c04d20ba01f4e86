//! Sign-in attempts slowed after failures (issue 14: 300 wrong tokens in 0.19 s were all
//! answered). Failures are counted per peer address and per organization (a token whose id
//! names one of its tokens, with a wrong secret or revoked). After a few free failures, each
//! further attempt must wait twice as long as the one before, up to a cap; an attempt that
//! comes sooner is answered 429 with `Retry-After`, without checking the token. A success
//! clears the peer's and the organization's count; a count is forgotten after [`FORGET`]
//! without failure. Tokens are 256-bit random values, so this is defence in depth and a
//! signal in the log (`dashboard sign-in throttled`), not what keeps them unguessable.

use crate::sync;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures from one address before attempts are slowed.
pub const PEER_FREE_FAILURES: u32 = 5;
/// Failures against one organization (from any address) before attempts are slowed.
pub const ORG_FREE_FAILURES: u32 = 20;
/// The longest wait between two attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(60);
/// A count is forgotten after this long without a failure.
pub const FORGET: Duration = Duration::from_secs(15 * 60);
/// Counts kept per kind at once (the oldest is forgotten first).
const MAX_COUNTS: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

/// Failure counts by key, with the free failures before slowing.
#[derive(Debug)]
struct Counts<K> {
    map: Mutex<HashMap<K, Failures>>,
    free: u32,
}

impl<K: Eq + Hash + Clone> Counts<K> {
    fn new(free: u32) -> Counts<K> {
        Counts {
            map: Mutex::new(HashMap::new()),
            free,
        }
    }

    /// How long `key` must still wait before its next attempt (zero: go ahead).
    fn wait(&self, key: &K, now: Instant) -> Duration {
        let map = sync::lock(&self.map);
        let Some(failures) = map.get(key) else {
            return Duration::ZERO;
        };
        wait_after(
            failures.count,
            now.saturating_duration_since(failures.last),
            self.free,
        )
    }

    fn fail(&self, key: K, now: Instant) -> u32 {
        let mut map = sync::lock(&self.map);
        if map.len() >= MAX_COUNTS && !map.contains_key(&key) {
            map.retain(|_, f| now.saturating_duration_since(f.last) < FORGET);
            if map.len() >= MAX_COUNTS {
                if let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, f)| f.last)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&oldest);
                }
            }
        }
        let entry = map.entry(key).or_insert(Failures {
            count: 0,
            last: now,
        });
        if now.saturating_duration_since(entry.last) >= FORGET {
            entry.count = 0;
        }
        entry.count = entry.count.saturating_add(1);
        entry.last = now;
        entry.count
    }

    fn clear(&self, key: &K) {
        sync::lock(&self.map).remove(key);
    }
}

/// How long the next attempt must still wait after `count` failures, the last `since` ago,
/// when `free` of them are free (zero: go ahead). The one rule of both ways of counting: in
/// memory here, or in the store for every replica (`shared`).
pub fn wait_after(count: u32, since: Duration, free: u32) -> Duration {
    if since >= FORGET || count < free {
        return Duration::ZERO;
    }
    delay(count - free).saturating_sub(since)
}

/// The wait after `over` failures beyond the free ones: 1 s, 2 s, 4 s ... up to [`MAX_DELAY`].
fn delay(over: u32) -> Duration {
    Duration::from_secs(1u64 << over.min(16)).min(MAX_DELAY)
}

/// The sign-in failure counts of the dashboard.
#[derive(Debug)]
pub struct SignInThrottle {
    peers: Counts<IpAddr>,
    orgs: Counts<String>,
}

impl SignInThrottle {
    /// Nothing counted yet.
    pub fn new() -> SignInThrottle {
        SignInThrottle {
            peers: Counts::new(PEER_FREE_FAILURES),
            orgs: Counts::new(ORG_FREE_FAILURES),
        }
    }

    /// How long `peer` must wait before its next attempt.
    pub fn peer_wait(&self, peer: IpAddr) -> Duration {
        self.peers.wait(&peer, Instant::now())
    }

    /// How long attempts against `org` must wait.
    pub fn org_wait(&self, org: &str) -> Duration {
        self.orgs.wait(&org.to_string(), Instant::now())
    }

    /// A failed attempt from `peer`, against `org` when the token named one; the peer's count.
    pub fn failed(&self, peer: IpAddr, org: Option<&str>) -> u32 {
        let now = Instant::now();
        if let Some(org) = org {
            self.orgs.fail(org.to_string(), now);
        }
        self.peers.fail(peer, now)
    }

    /// A successful sign-in: `peer` and `org` start afresh.
    pub fn succeeded(&self, peer: IpAddr, org: &str) {
        self.peers.clear(&peer);
        self.orgs.clear(&org.to_string());
    }
}

impl Default for SignInThrottle {
    fn default() -> Self {
        SignInThrottle::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const PEER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));

    #[test]
    fn waits_double_after_the_free_failures_and_are_forgotten() {
        let counts: Counts<IpAddr> = Counts::new(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(counts.wait(&PEER, t0), Duration::ZERO);
            counts.fail(PEER, t0);
        }
        assert_eq!(
            counts.wait(&PEER, t0),
            Duration::from_secs(1),
            "4th attempt waits 1 s"
        );
        counts.fail(PEER, t0);
        assert_eq!(counts.wait(&PEER, t0), Duration::from_secs(2));
        let later = t0 + Duration::from_millis(1500);
        assert_eq!(counts.wait(&PEER, later), Duration::from_millis(500));
        for _ in 0..20 {
            counts.fail(PEER, t0);
        }
        assert_eq!(counts.wait(&PEER, t0), MAX_DELAY, "capped");
        assert_eq!(counts.wait(&PEER, t0 + FORGET), Duration::ZERO, "forgotten");
        counts.clear(&PEER);
        assert_eq!(counts.wait(&PEER, t0), Duration::ZERO);
    }

    #[test]
    fn peers_and_organizations_are_counted_apart() {
        let throttle = SignInThrottle::new();
        let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 10));
        for _ in 0..PEER_FREE_FAILURES {
            throttle.failed(PEER, None);
        }
        assert!(throttle.peer_wait(PEER) > Duration::ZERO);
        assert_eq!(throttle.peer_wait(other), Duration::ZERO);
        assert_eq!(
            throttle.org_wait("acme"),
            Duration::ZERO,
            "no organization named"
        );
        for i in 0..ORG_FREE_FAILURES {
            let peer = IpAddr::V4(Ipv4Addr::new(10, 1, 0, i as u8));
            throttle.failed(peer, Some("acme"));
        }
        assert!(
            throttle.org_wait("acme") > Duration::ZERO,
            "spread over addresses"
        );
        assert_eq!(throttle.org_wait("beta"), Duration::ZERO);
        throttle.succeeded(PEER, "acme");
        assert_eq!(throttle.peer_wait(PEER), Duration::ZERO);
        assert_eq!(throttle.org_wait("acme"), Duration::ZERO);
    }
}
