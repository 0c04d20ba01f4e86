//! Leadership (issue 29): the work that one replica at a time does over a shared PostgreSQL
//! store (reconciliation of invoices in doubt, the web API's checks, alerts and their
//! e-mails) is done by the holder of the `leader` lease (`store/postgres/leases.rs`).
//!
//! Each replica tries to take or renew it every [`RENEW`], for [`TERM`]. A replica counts
//! itself leader only until its own deadline: [`TERM`] from the moment it *sent* the request
//! that granted it, on its monotonic clock, less [`MARGIN`]. The database grants the lease
//! from its own clock, later than that moment, so the holder's deadline always comes before
//! the lease's end in the database, and another replica takes it over only after that
//! end: two replicas never both count themselves leader, given (1) clocks whose rates agree
//! within [`MARGIN`] over [`TERM`], (2) one database clock that does not jump (an NTP step
//! forward, or a failover to a standby whose clock is ahead, shortens a lease by as much), and
//! (3) a replica's monotonic clock that runs while its host does (`CLOCK_MONOTONIC` stops
//! while a machine is suspended). A renewal that does not answer (the database away) lets the
//! deadline pass: the replica stops leading on its own.
//!
//! Counting oneself leader is therefore never the last word: what the leader settles is
//! written under its own replica lease, fenced in the database (`certify/replica.rs`), and
//! what it does outside the database (the sweep of stray requests at the DGI, the alerts'
//! e-mails) is harmless if the next leader does it again (a stray cancelled twice; an alert
//! e-mailed once more, until the alerts' state is kept in the store).
//!
//! On the embedded store (one process, `gateway.lock`) the process always leads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::time::Instant;
use tracing::{info, warn};

use crate::store::Store;

/// The lease's name.
pub const LEADER: &str = "leader";

/// How long a taking or renewal holds the lease.
pub const TERM: Duration = Duration::from_secs(5);

/// How often the leader renews, and the others try to take it over.
pub const RENEW: Duration = Duration::from_secs(1);

/// Taken off the holder's own deadline, for clocks that do not run quite at the same rate.
const MARGIN: Duration = Duration::from_millis(500);

/// This replica's view of the `leader` lease. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Leadership {
    replica: Arc<str>,
    held: Arc<Mutex<Option<Held>>>,
    /// This replica's own lease (`replica:<name>`, `certify/replica.rs` renews it): since when
    /// it has been held without a gap, and until when it surely is, by the same rule as the
    /// leader lease's.
    own: Arc<Mutex<Option<OwnLease>>>,
}

#[derive(Debug, Clone, Copy)]
struct OwnLease {
    since: Instant,
    until: Instant,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    epoch: u64,
    until: Instant,
}

impl Leadership {
    /// A replica named `replica` (unique per process start), not leading yet.
    pub fn new(replica: &str) -> Leadership {
        Leadership {
            replica: Arc::from(replica),
            held: Arc::new(Mutex::new(None)),
            own: Arc::new(Mutex::new(None)),
        }
    }

    /// A name for this process: its host, its pid and a random part (a restarted process
    /// is another replica: it must not take over what its predecessor held as its own).
    pub fn replica_name() -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "host".to_owned());
        format!(
            "{host}/{}/{:08x}",
            std::process::id(),
            rand::random::<u32>()
        )
    }

    /// This replica's name.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// The epoch this replica leads under now, if it leads.
    pub fn epoch(&self) -> Option<u64> {
        let held = *crate::sync::lock(&self.held);
        held.filter(|held| Instant::now() < held.until)
            .map(|held| held.epoch)
    }

    /// This replica's own lease was granted by a request sent at `sent`: held without a gap
    /// since the run's first renewal, unless it may have run out since the last one.
    pub fn own_lease_renewed(&self, sent: Instant) {
        let mut own = crate::sync::lock(&self.own);
        let since = match *own {
            Some(held) if sent < held.until => held.since,
            _ => sent,
        };
        *own = Some(OwnLease {
            since,
            until: sent + TERM - MARGIN,
        });
    }

    /// Whether this replica surely holds its own lease now: it may start a call to the DGI
    /// (the grace after its lease runs out covers the calls started before).
    pub fn holds_own_lease(&self) -> bool {
        crate::sync::lock(&self.own).is_some_and(|own| Instant::now() < own.until)
    }

    /// Whether this replica has held its own lease without a gap for longer than `span`.
    pub fn own_lease_held_longer_than(&self, span: Duration) -> bool {
        crate::sync::lock(&self.own)
            .is_some_and(|own| Instant::now() < own.until && own.since.elapsed() > span)
    }

    /// Whether this replica leads now.
    pub fn leads(&self) -> bool {
        self.epoch().is_some()
    }

    /// One taking or renewal of the lease (blocking: run it off the runtime's workers).
    pub fn renew(&self, store: &Store) {
        let sent = Instant::now();
        let before = self.epoch();
        let taken = store.take_lease(LEADER, &self.replica, TERM);
        let now = match taken {
            Ok(Some(epoch)) => Some(Held {
                epoch,
                until: sent + TERM - MARGIN,
            }),
            Ok(None) => None,
            Err(error) => {
                warn!(%error, "the leader lease could not be renewed; leading only until it runs out");
                return;
            }
        };
        let after = now.map(|held| held.epoch);
        *crate::sync::lock(&self.held) = now;
        match (before, after) {
            (None, Some(epoch)) => info!(replica = %self.replica, epoch, "this replica leads"),
            (Some(old), Some(new)) if old != new => {
                info!(replica = %self.replica, epoch = new, "this replica leads again, under a new epoch")
            }
            (Some(_), None) => info!(replica = %self.replica, "another replica leads"),
            _ => {}
        }
    }

    /// Gives the lease back (a shutdown), so that another replica leads at once.
    pub fn resign(&self, store: &Store) {
        let held = crate::sync::lock(&self.held).take();
        if let Some(held) = held {
            if let Err(error) = store.release_lease(LEADER, &self.replica, held.epoch) {
                warn!(%error, "the leader lease could not be given back; it runs out by itself");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_the_embedded_store_the_process_leads_until_it_resigns() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        let leadership = Leadership::new(&Leadership::replica_name());
        assert!(!leadership.leads(), "not before the first renewal");
        leadership.renew(&store);
        assert_eq!(leadership.epoch(), Some(1));
        leadership.resign(&store);
        assert!(!leadership.leads());
    }

    #[test]
    fn two_processes_have_two_names() {
        assert_ne!(Leadership::replica_name(), Leadership::replica_name());
    }
}
