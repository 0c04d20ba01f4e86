//! This process as one replica among others over one PostgreSQL store (issue 29;
//! docs/design.md §12). It holds a lease of its own, `replica:<name>`, and writes its intents
//! only under it (`store/postgres/replicas.rs`: fenced writes); it stops when it finds that
//! lease fenced (a new process is a new replica). Intents of replicas gone are taken over
//! after [`Certifier::takeover_grace`] and settled as a restarted process settles its own:
//! the web API's by the replica that leads (`leader.rs`), a box's by the replica it is
//! plugged into. The next process started on a state directory fences its predecessor at once
//! (the directory's lock says it is dead) and takes over its intents, its sandboxes' too
//! (their fiscal memory is in that directory).
//!
//! On the embedded store (one process) every step is a no-op: the process owns every intent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

use crate::certify::leader::{RENEW, TERM};
use crate::certify::register_writer::blocking;
use crate::certify::{Certifier, CertifyError};
use crate::store::postgres::lease_of;

/// Added to the longest call to the DGI for the grace before a replica gone's web API intents
/// are taken over ([`Certifier::takeover_grace`]).
const GRACE_MARGIN: Duration = Duration::from_secs(5);

impl Certifier {
    /// This process's replica name (unique per process start).
    pub fn replica(&self) -> &str {
        self.journal.leadership().replica()
    }

    /// Whether this process takes requests: always on the embedded store; over PostgreSQL
    /// while it surely holds its replica lease (its load balancer's readiness).
    pub fn may_take_requests(&self) -> bool {
        self.journal.may_call_dgi()
    }

    /// Whether this process does the work one replica at a time does: the alerts' e-mails,
    /// the web API's sweep of stray requests, the settling of replicas gone's intents.
    pub fn leads(&self) -> bool {
        self.journal.leads()
    }

    /// How long after a replica's lease ran out its web API intents are taken over: longer
    /// than any call to the DGI it may have sent before (a connect and a request: 5 s and 15 s
    /// by default; every replica is expected to run the same `[[devices]]` settings), so that
    /// none of its calls is still on its way when the successor asks the DGI.
    pub fn takeover_grace(&self) -> Duration {
        self.channels.longest_dgi_call() + GRACE_MARGIN
    }

    /// Fences `predecessor`, the process this state directory last ran (blocking, at
    /// start-up): its lock was free, so it is dead, and nothing it sent can be written now.
    pub fn fence_predecessor(&self, predecessor: &str) -> Result<(), CertifyError> {
        if predecessor != self.replica() {
            self.store.fence_replica(predecessor)?;
        }
        Ok(())
    }

    /// Joins the replicas as `replica` (blocking, at start-up, before any invoice): takes
    /// this replica's lease, and the open intents on this process's devices of replicas
    /// fenced off (its predecessor `predecessor`, [`Certifier::fence_predecessor`], and any
    /// before it), with the predecessor's sandboxes (their fiscal memory is in this state
    /// directory); settled by [`Certifier::start_reconciliation`]. Nobody is fenced for being
    /// gone here: that is for a replica that has held its lease for a while (the watch).
    pub fn join_replicas(
        &self,
        replica: &str,
        predecessor: Option<&str>,
    ) -> Result<(), CertifyError> {
        let sent = Instant::now();
        let taken = self.store.take_lease(&lease_of(replica), replica, TERM)?;
        if taken.is_none() {
            // Its lease is another's: a name taken twice, or fenced already.
            return Err(CertifyError::Store(crate::store::StoreError::Fenced(
                lease_of(replica),
            )));
        }
        self.journal.leadership().own_lease_renewed(sent);
        self.store.set_replica(replica);
        let devices = self.channels.configured_names();
        let taken = self.store.take_over(&devices, predecessor, None)?;
        if !taken.is_empty() {
            info!(
                count = taken.len(),
                "open intents of a replica gone are now this replica's to settle"
            );
        }
        Ok(())
    }

    /// Keeps this replica's lease and the leader lease every [`RENEW`], until `until`; takes
    /// over the open intents of replicas gone: on this process's boxes (every replica), and
    /// as leader on the web API. When this replica's lease is found fenced, logs why and
    /// cancels `stop` (the service stops; systemd starts a new replica).
    ///
    /// Another replica is fenced only by a replica that has held its own lease without a gap
    /// for longer than the grace and a term: after an outage of the database every replica
    /// renews before any fences (one that could not reach it is no more dead than the fencer).
    pub fn spawn_replica_watch(
        self: &Arc<Self>,
        stop: CancellationToken,
        until: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        let replica = self.replica().to_owned();
        tokio::spawn(async move {
            let mut first = true;
            loop {
                if !std::mem::take(&mut first) {
                    tokio::select! {
                        () = until.cancelled() => return,
                        () = tokio::time::sleep(RENEW) => {}
                    }
                }
                let lease = lease_of(&replica);
                let name = replica.clone();
                let sent = Instant::now();
                let own = blocking(&this.store, move |store| {
                    store.take_lease(&lease, &name, TERM)
                })
                .await;
                match own {
                    Ok(Some(_)) => this.journal.leadership().own_lease_renewed(sent),
                    Ok(None) => {
                        error!(replica = %replica, "this replica's lease was fenced off: another replica took its work over; stopping (a new process is a new replica)");
                        stop.cancel();
                        return;
                    }
                    Err(error) => {
                        warn!(%error, "this replica's lease could not be renewed");
                        continue;
                    }
                }
                let leadership = this.journal.leadership().clone();
                let renewed = blocking(&this.store, move |store| {
                    leadership.renew(store);
                    Ok(())
                })
                .await;
                let held = this.journal.leadership().clone();
                if renewed.is_err()
                    || !held.own_lease_held_longer_than(this.takeover_grace() + TERM)
                {
                    continue;
                }
                this.take_over_gone(this.channels.box_names()).await;
                if this.journal.leads() {
                    this.take_over_gone(this.channels.web_api_names()).await;
                }
            }
        })
    }

    /// The open intents on `devices` of replicas gone, settled here.
    async fn take_over_gone(self: &Arc<Self>, devices: Vec<String>) {
        if devices.is_empty() {
            return;
        }
        let grace = self.takeover_grace();
        let taken = blocking(&self.store, move |store| {
            store.take_over(&devices, None, Some(grace))
        })
        .await;
        match taken {
            Ok(taken) if taken.is_empty() => {}
            Ok(taken) => {
                warn!(
                    count = taken.len(),
                    "open intents of a replica gone are now this replica's: settling them"
                );
                self.reconciler.adopt(taken);
            }
            Err(error) => warn!(%error, "the intents of replicas gone could not be taken over"),
        }
    }

    /// Whether this replica's lease is still its own (`false` once fenced off; `true` while
    /// the database cannot tell).
    pub async fn still_a_replica(self: &Arc<Self>) -> bool {
        blocking(&self.store, |store| store.holds_own_lease())
            .await
            .unwrap_or(true)
    }

    /// Leaves the replicas at shutdown, once the invoices under way are journaled and the
    /// watch stopped: gives the leader lease back, so that another replica leads at once.
    /// This replica's own lease runs out by itself: what it leaves in doubt is taken over
    /// after the grace, when no call of its can still be on its way to the DGI.
    pub async fn leave_replicas(self: &Arc<Self>) {
        let leadership = self.journal.leadership().clone();
        let left = blocking(&self.store, move |store| {
            leadership.resign(store);
            // No lane runs any more: a place of the DGI's window still held is one whose
            // giving back failed (`web_api_channel/window.rs`).
            if let Err(error) = store.give_back_window_slots() {
                warn!(%error, "places of the DGI's window not given back; the leader recovers them");
            }
            Ok(())
        })
        .await;
        if let Err(error) = left {
            warn!(%error, "the leader lease could not be given back; it runs out by itself");
        }
    }
}
