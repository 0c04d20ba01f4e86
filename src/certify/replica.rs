//! This process as one replica among others over one PostgreSQL store (issue 29;
//! docs/design.md §12). It holds a lease of its own, `replica:<name>`, and writes its intents
//! only under it (`store/postgres/replicas.rs`: fenced writes); it stops when it finds that
//! lease fenced (a new process is a new replica). The replica that leads (`leader.rs`) takes
//! over the open web API and sandbox intents of replicas gone, after [`Certifier::takeover_grace`], and
//! settles them as a restarted process settles its own. A box's intents are settled only by
//! the process it is plugged into: the next one started on the same state directory, which
//! fences its predecessor at once (the state directory's lock says it is dead).
//!
//! On the embedded store (one process) every step is a no-op: the process owns every intent.

use std::sync::Arc;
use std::time::Duration;

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

    /// Joins the replicas as `replica` (blocking, at start-up, before any invoice): fences
    /// `predecessor` (the process this state directory last ran, dead since its lock was
    /// free), takes this replica's lease, and takes over the predecessor's open intents on
    /// this process's channels (settled by [`Certifier::start_reconciliation`]).
    pub fn join_replicas(
        &self,
        replica: &str,
        predecessor: Option<&str>,
    ) -> Result<(), CertifyError> {
        if let Some(previous) = predecessor.filter(|previous| *previous != replica) {
            self.store.fence_replica(previous)?;
        }
        let taken = self.store.take_lease(&lease_of(replica), replica, TERM)?;
        if taken.is_none() {
            // Its lease is another's: a name taken twice, or fenced already.
            return Err(CertifyError::Store(crate::store::StoreError::Fenced(
                lease_of(replica),
            )));
        }
        self.store.set_replica(replica);
        let devices = self.channels.configured_names();
        let taken = self
            .store
            .take_over(&devices, true, self.takeover_grace())?;
        if !taken.is_empty() {
            info!(
                count = taken.len(),
                "open intents of a replica gone are now this replica's to settle"
            );
        }
        Ok(())
    }

    /// Keeps this replica's lease and the leader lease every [`RENEW`]; as leader, takes
    /// over the web API and sandbox intents of replicas gone. When this replica's lease is
    /// found fenced, logs why and cancels `stop` (the service stops; systemd starts a new
    /// replica).
    pub fn spawn_replica_watch(self: &Arc<Self>, replica: String, stop: CancellationToken) {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut first = true;
            loop {
                if !std::mem::take(&mut first) {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(RENEW) => {}
                    }
                }
                let lease = lease_of(&replica);
                let name = replica.clone();
                let own = blocking(&this.store, move |store| {
                    store.take_lease(&lease, &name, TERM)
                })
                .await;
                match own {
                    Ok(Some(_)) => {}
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
                if renewed.is_err() || !this.journal.leads() {
                    continue;
                }
                this.take_over_gone().await;
            }
        });
    }

    /// The leader's part: the web API and sandbox intents of replicas gone, settled here.
    async fn take_over_gone(self: &Arc<Self>) {
        let devices = self.channels.web_api_names();
        let grace = self.takeover_grace();
        let taken = blocking(&self.store, move |store| {
            store.take_over(&devices, true, grace)
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

    /// Leaves the replicas at shutdown, once the invoices under way are journaled: gives the
    /// leader lease and this replica's lease back, so that another replica leads at once and
    /// settles what this one leaves in doubt.
    pub async fn leave_replicas(self: &Arc<Self>, replica: String) {
        let leadership = self.journal.leadership().clone();
        let left = blocking(&self.store, move |store| {
            leadership.resign(store);
            let lease = lease_of(&replica);
            if let Some(epoch) = store.take_lease(&lease, &replica, Duration::from_secs(1))? {
                store.release_lease(&lease, &replica, epoch)?;
            }
            Ok(())
        })
        .await;
        if let Err(error) = left {
            warn!(%error, "this replica's leases could not be given back; they run out by themselves");
        }
    }
}
