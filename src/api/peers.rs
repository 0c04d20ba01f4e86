//! The connections the server holds, counted per peer address and in all (issues 14 and 27).
//! A new connection is never left unaccepted: over a cap (`max_connections_per_peer` for its
//! address, `max_connections` in all), the connection that has waited longest without a
//! request in progress (an idle keep-alive connection, or one that has sent no complete
//! request head) is closed to make room ([`Peers::admit`] evicts it); when every connection
//! under the cap has a request in progress, the new one is served by the overflow path
//! (`mod.rs`): the probes (`/api/v1/status`, `/metrics`) are answered, anything else gets a
//! 503 with `Retry-After` and `Connection: close` (code 127 for an address over its cap, 193
//! when the whole server is).
//!
//! **A request in progress is never cut by an eviction.** A connection's requests in progress
//! and its eviction are one atomic word ([`Conn`]'s state): a connection is evicted only by a
//! compare-and-swap from "idle, not evicted", and a request begins only by a compare-and-swap
//! that fails once the connection is evicted. Whichever comes first wins: a request begun
//! first keeps its connection (another is chosen, or none: the overflow path); a request whose
//! head completes after the eviction is not begun but answered like the overflow path's (a
//! probe as usual, anything else the 503 of the cap that evicted it, before anything else is
//! done), so an evicted connection only finishes writing what it had already answered.
//!
//! **Which one goes first.** Of the idle connections, the one idle longest, except that a
//! connection between two requests (it has answered one, and is idle for less than
//! [`SETTLED`]) goes after every other: a busy client's keep-alive connection, whose next
//! request is probably on its way, is the last victim while a truly idle one exists.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::i18n::{self, Lang};
use crate::msg;
use crate::sync;

/// Open connections by peer address, capped.
#[derive(Debug)]
pub(crate) struct Peers {
    registry: Mutex<Registry>,
    per_peer: usize,
    max: usize,
    /// How many connections are open (the drain waits for 0).
    open: watch::Sender<usize>,
    /// Closed by every connection's `close` token, child of the server's shutdown.
    shutdown: CancellationToken,
}

#[derive(Debug, Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Arc<Conn>>,
    by_peer: HashMap<IpAddr, usize>,
}

/// Which cap a refused connection met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cap {
    /// Its address holds `max_connections_per_peer` busy connections (code 127).
    PerPeer(usize),
    /// The server holds `max_connections` busy connections (code 193).
    Server(usize),
}

/// How long a connection that has answered a request must have been idle before it is
/// evicted as readily as one that never sent any (see the module documentation).
pub(crate) const SETTLED: std::time::Duration = std::time::Duration::from_secs(1);

/// [`Conn`]'s state: evicted for its address's cap.
const EVICTED_PER_PEER: usize = 1 << (usize::BITS - 1);
/// [`Conn`]'s state: evicted for the server's cap.
const EVICTED_SERVER: usize = 1 << (usize::BITS - 2);
/// [`Conn`]'s state: the requests in progress.
const IN_PROGRESS: usize = !(EVICTED_PER_PEER | EVICTED_SERVER);

/// One open connection: what its requests and the eviction share.
#[derive(Debug)]
pub(crate) struct Conn {
    id: u64,
    ip: IpAddr,
    opened: Instant,
    /// The requests whose answer has not been handed over yet (`IN_PROGRESS` bits) and
    /// whether it was evicted, and for which cap (`EVICTED_*`): one word, so that an eviction
    /// and a request's beginning cannot both win (module documentation).
    state: AtomicUsize,
    /// Requests begun on this connection.
    started: AtomicU64,
    /// When it last had no request in progress: milliseconds after `opened`.
    idle_since_ms: AtomicU64,
    /// The caps it may be evicted for, said to a request that comes after.
    per_peer_cap: Cap,
    server_cap: Cap,
    /// Cancelled to close it: eviction, or the server's shutdown (then it finishes its
    /// request in progress and closes).
    pub(crate) close: CancellationToken,
}

/// A connection's place; given back when dropped.
#[derive(Debug)]
pub(crate) struct PeerSlot {
    peers: Arc<Peers>,
    pub(crate) conn: Arc<Conn>,
}

/// A request in progress on a connection; the connection is idle again when it is dropped
/// (the response body is dropped once hyper has taken it whole).
#[derive(Debug)]
pub(crate) struct Busy(Arc<Conn>);

impl Peers {
    /// At most `per_peer` connections per address and `max` in all (each at least 1); every
    /// connection closes when `shutdown` is cancelled.
    pub(crate) fn new(per_peer: usize, max: usize, shutdown: CancellationToken) -> Arc<Peers> {
        Arc::new(Peers {
            registry: Mutex::new(Registry::default()),
            per_peer: per_peer.max(1),
            max: max.max(1),
            open: watch::Sender::new(0),
            shutdown,
        })
    }

    /// A place for a new connection from `ip`: at once under the caps; over one, after the
    /// longest-idle connection (of that address, or of the server) was told to close; `Err`
    /// with the cap when every connection it could take the place of has a request in
    /// progress.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<PeerSlot, Cap> {
        let ip = canonical(ip);
        let mut registry = sync::lock(&self.registry);
        // Connections told to close still count until they have: they close within a moment.
        let from_peer = registry.by_peer.get(&ip).copied().unwrap_or(0);
        let now = Instant::now();
        if from_peer >= self.per_peer {
            let same_peer = registry.open.values().filter(|c| c.ip == ip);
            if !evict_one(same_peer, EVICTED_PER_PEER, now) {
                return Err(Cap::PerPeer(self.per_peer));
            }
            crate::metrics::connection_refused("idle_closed_per_peer");
        } else if registry.open.len() >= self.max {
            if !evict_one(registry.open.values(), EVICTED_SERVER, now) {
                return Err(Cap::Server(self.max));
            }
            crate::metrics::connection_refused("idle_closed_max_connections");
        }
        registry.next += 1;
        let conn = Arc::new(Conn {
            id: registry.next,
            ip,
            opened: now,
            state: AtomicUsize::new(0),
            started: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(0),
            per_peer_cap: Cap::PerPeer(self.per_peer),
            server_cap: Cap::Server(self.max),
            close: self.shutdown.child_token(),
        });
        registry.open.insert(conn.id, Arc::clone(&conn));
        *registry.by_peer.entry(ip).or_insert(0) += 1;
        self.open.send_replace(registry.open.len());
        Ok(PeerSlot {
            peers: Arc::clone(self),
            conn,
        })
    }

    /// Waits until every connection has closed.
    pub(crate) async fn all_closed(&self) {
        let mut open = self.open.subscribe();
        let _ = open.wait_for(|open| *open == 0).await;
    }
}

/// Evicts (`why`: one of the `EVICTED_*` bits) the first of `conns` in eviction order (module
/// documentation) that is still idle at the instant it is marked: whether one was.
fn evict_one<'a>(conns: impl Iterator<Item = &'a Arc<Conn>>, why: usize, now: Instant) -> bool {
    let mut candidates: Vec<_> = conns
        .filter(|c| c.is_idle() && !c.is_evicted())
        .map(|c| (c.eviction_rank(now), c))
        .collect();
    candidates.sort_by_key(|(rank, _)| *rank);
    // One that began a request since it was looked at is passed over for the next.
    candidates.into_iter().any(|(_, conn)| conn.try_evict(why))
}

impl Conn {
    /// Whether no request is in progress on it.
    pub(crate) fn is_idle(&self) -> bool {
        self.state.load(Ordering::Acquire) & IN_PROGRESS == 0
    }

    /// When it last became idle (its opening when it never had a request).
    pub(crate) fn idle_since(&self) -> Instant {
        self.opened + std::time::Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire))
    }

    /// Requests begun on it so far.
    pub(crate) fn started(&self) -> u64 {
        self.started.load(Ordering::Acquire)
    }

    /// Whether it was told to close to make room for another.
    pub(crate) fn is_evicted(&self) -> bool {
        self.evicted_for().is_some()
    }

    /// The cap it was evicted for, if it was.
    fn evicted_for(&self) -> Option<Cap> {
        let state = self.state.load(Ordering::Acquire);
        if state & EVICTED_PER_PEER != 0 {
            Some(self.per_peer_cap)
        } else if state & EVICTED_SERVER != 0 {
            Some(self.server_cap)
        } else {
            None
        }
    }

    /// A request begins, unless the connection was evicted first: then `Err` with the cap it
    /// was evicted for, and the request is to be answered like the overflow path's.
    pub(crate) fn begin(self: &Arc<Self>) -> Result<Busy, Cap> {
        let begun = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (state & !IN_PROGRESS == 0).then_some(state + 1)
            });
        if begun.is_err() {
            return Err(self.evicted_for().unwrap_or(self.server_cap));
        }
        self.started.fetch_add(1, Ordering::AcqRel);
        Ok(Busy(Arc::clone(self)))
    }

    /// Marks it evicted (`why`) and tells it to close, if it is idle and not evicted at this
    /// instant: whether it was.
    fn try_evict(&self, why: usize) -> bool {
        let evicted = self
            .state
            .compare_exchange(0, why, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if evicted {
            self.close.cancel();
        }
        evicted
    }

    /// Its place in the eviction order (smallest first): a connection between two requests
    /// (one answered, idle for less than [`SETTLED`]) after every other, then the longest idle
    /// first.
    fn eviction_rank(&self, now: Instant) -> (bool, Instant) {
        let idle_since = self.idle_since();
        let between_requests =
            self.started() > 0 && now.saturating_duration_since(idle_since) < SETTLED;
        (between_requests, idle_since)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let conn = &self.0;
        let since = u64::try_from(conn.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        conn.idle_since_ms.store(since, Ordering::Release);
        // No eviction while it was in progress: the flags are clear, the count is at least 1.
        conn.state.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut registry = sync::lock(&self.peers.registry);
        registry.open.remove(&self.conn.id);
        if let Some(count) = registry.by_peer.get_mut(&self.conn.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                registry.by_peer.remove(&self.conn.ip);
            }
        }
        self.peers.open.send_replace(registry.open.len());
    }
}

/// An IPv4 peer seen through an IPv6 socket (`::ffff:a.b.c.d`) counts as itself.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl Cap {
    /// Its code and its text.
    pub(crate) fn code_and_message(self) -> (u16, crate::i18n::Message) {
        match self {
            Cap::PerPeer(max) => (127, msg!("err-too-many-connections", max = max)),
            Cap::Server(max) => (193, msg!("err-server-busy", max = max)),
        }
    }
}

/// The bytes of a 503 to a connection over `cap`, written before any HTTP is read (when even
/// the overflow path is full), so in the installation's default language.
pub(crate) fn refusal(cap: Cap) -> Vec<u8> {
    refusal_in(cap, i18n::default_lang())
}

fn refusal_in(cap: Cap, lang: Lang) -> Vec<u8> {
    let (code, message) = cap.code_and_message();
    let body =
        serde_json::json!({"errorCode": code, "errorDesc": message.render(lang)}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\n\
         content-language: {}\r\nretry-after: 1\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        lang.code(),
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests;
