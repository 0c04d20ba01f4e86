//! The connections the server holds, counted per peer address and in all (issues 14 and 27).
//! A new connection is never left unaccepted: over a cap (`max_connections_per_peer` for its
//! address, `max_connections` in all), the connection that has waited longest without a
//! request in progress (an idle keep-alive connection, or one that has sent no complete
//! request head) is closed to make room ([`Peers::admit`] evicts it); when every connection
//! under the cap has a request in progress, the new one is served by the overflow path
//! (`mod.rs`): the probes (`/api/v1/status`, `/metrics`) are answered, anything else gets a
//! 503 with `Retry-After` and `Connection: close` (code 127 for an address over its cap, 193
//! when the whole server is).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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

/// One open connection: what its requests and the eviction share.
#[derive(Debug)]
pub(crate) struct Conn {
    id: u64,
    ip: IpAddr,
    opened: Instant,
    /// Requests whose answer has not been handed over yet.
    in_progress: AtomicUsize,
    /// Requests begun on this connection.
    started: AtomicU64,
    /// When it last had no request in progress: milliseconds after `opened`.
    idle_since_ms: AtomicU64,
    evicted: AtomicBool,
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
        if from_peer >= self.per_peer {
            let victim = longest_idle(registry.open.values().filter(|c| c.ip == ip));
            let victim = victim.ok_or(Cap::PerPeer(self.per_peer))?;
            victim.evict();
            crate::metrics::connection_refused("idle_closed_per_peer");
        } else if registry.open.len() >= self.max {
            let victim = longest_idle(registry.open.values());
            let victim = victim.ok_or(Cap::Server(self.max))?;
            victim.evict();
            crate::metrics::connection_refused("idle_closed_max_connections");
        }
        registry.next += 1;
        let conn = Arc::new(Conn {
            id: registry.next,
            ip,
            opened: Instant::now(),
            in_progress: AtomicUsize::new(0),
            started: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
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

/// The connection idle for longest and not told to close yet.
fn longest_idle<'a>(conns: impl Iterator<Item = &'a Arc<Conn>>) -> Option<&'a Arc<Conn>> {
    conns
        .filter(|c| c.is_idle() && !c.evicted.load(Ordering::Acquire))
        .min_by_key(|c| c.idle_since())
}

impl Conn {
    /// Whether no request is in progress on it.
    pub(crate) fn is_idle(&self) -> bool {
        self.in_progress.load(Ordering::Acquire) == 0
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
        self.evicted.load(Ordering::Acquire)
    }

    /// A request begins.
    pub(crate) fn begin(self: &Arc<Self>) -> Busy {
        self.started.fetch_add(1, Ordering::AcqRel);
        self.in_progress.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(self))
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.close.cancel();
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let conn = &self.0;
        let since = u64::try_from(conn.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        conn.idle_since_ms.store(since, Ordering::Release);
        conn.in_progress.fetch_sub(1, Ordering::AcqRel);
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
