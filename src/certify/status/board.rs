//! The status as a maintained snapshot: computed when something it reads changes, not per
//! request, and read by `GET /api/v1/status`, the dashboard's overview and `/metrics` as one
//! `Arc` (the monitored devices' JSON rendered once per change).
//!
//! What it reads, and how a change reaches it:
//! - the invoices in doubt and the store's health: looked at on every read (a lock of a set
//!   that is empty unless something is in doubt, and two flags): a request that leaves a
//!   channel in doubt or finds the store failing is seen by the very next read;
//! - each channel's state (its link, what it last said): in memory, looked at every
//!   [`POLL`] by the watch task ([`Certifier::spawn_status_watch`]); a new snapshot is made
//!   only when it differs;
//! - the organizations (a NIF a channel is not personalized for): read from the store off
//!   the runtime's workers by the watch task, every `every` and at once after
//!   [`Certifier::organizations_changed`]; kept here between reads.
//!
//! A snapshot older than [`STALE`] is recomputed by the read (the watch task stopped or
//! lags). Without the watch task (a certifier no server runs) every read computes afresh.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tracing::{info, warn};

use super::{Problem, ServiceStatus};
use crate::certify::register_writer::blocking;
use crate::certify::Certifier;
use crate::model::Organization;
use crate::sync::{lock, recover};

/// How often the watch task looks at the channels' state (in memory, no I/O).
pub(super) const POLL: Duration = Duration::from_millis(25);

/// A snapshot older than this is recomputed by the read itself (in memory): a watch task that
/// stopped or lags never leaves an old "ready" standing.
const STALE: Duration = Duration::from_millis(100);

/// The status last computed, what it was computed from, and the reasons last logged.
#[derive(Default)]
pub(crate) struct StatusBoard {
    current: RwLock<Option<Arc<ServiceStatus>>>,
    organizations: Mutex<Arc<Vec<Organization>>>,
    maintained: AtomicBool,
    /// When the channels' state was last looked at.
    refreshed: Mutex<Option<Instant>>,
    wake: Arc<Notify>,
    reported: Reported,
}

impl StatusBoard {
    /// The snapshot, if one was made.
    fn current(&self) -> Option<Arc<ServiceStatus>> {
        recover(self.current.read()).clone()
    }

    /// Keeps `fresh` unless it says what the current snapshot says (then the current one,
    /// and its rendered JSON, stays); logs each change of a channel's readiness.
    fn publish(&self, fresh: ServiceStatus) -> Arc<ServiceStatus> {
        let mut current = recover(self.current.write());
        if let Some(same) = current.as_ref().filter(|now| ***now == fresh) {
            return Arc::clone(same);
        }
        self.reported.log_changes(&fresh.not_ready);
        let fresh = Arc::new(fresh);
        *current = Some(Arc::clone(&fresh));
        fresh
    }

    fn organizations(&self) -> Arc<Vec<Organization>> {
        Arc::clone(&lock(&self.organizations))
    }

    /// Whether the channels' state was looked at within [`STALE`].
    fn recent(&self) -> bool {
        lock(&self.refreshed).is_some_and(|at| at.elapsed() < STALE)
    }
}

impl Certifier {
    /// Whether the certification path works: the maintained snapshot, recomputed here (in
    /// memory) only when the invoices in doubt or the store's health changed since it was
    /// made. Logs each change of a channel's readiness.
    pub fn status(&self) -> Arc<ServiceStatus> {
        if !self.board.maintained.load(Ordering::Acquire) {
            let organizations = self.store.organizations().unwrap_or_default();
            return self.board.publish(self.compute_status(&organizations));
        }
        match self.board.current() {
            Some(current) if self.still_holds(&current) && self.board.recent() => current,
            _ => self.refresh_status(),
        }
    }

    /// Tells the status that an organization was added or changed (its NIF, its device): the
    /// organizations are read again at once, off the runtime's workers.
    pub fn organizations_changed(&self) {
        self.board.wake.notify_one();
    }

    /// Keeps the status maintained (see the module's doc): the channels looked at every
    /// [`POLL`], the organizations read again every `every` and when told. Readiness changes
    /// reach the log even when nothing reads the status.
    pub fn spawn_status_watch(self: &Arc<Self>, every: Duration) {
        let this = Arc::downgrade(self);
        let wake = Arc::clone(&self.board.wake);
        tokio::spawn(async move {
            let mut read_at: Option<Instant> = None;
            loop {
                let Some(this) = this.upgrade() else { return };
                if read_at.is_none_or(|at| at.elapsed() >= every) {
                    match blocking(&this.store, |store| store.organizations()).await {
                        Ok(organizations) => {
                            *lock(&this.board.organizations) = Arc::new(organizations)
                        }
                        Err(error) => warn!(%error, "status: the organizations cannot be read"),
                    }
                    read_at = Some(Instant::now());
                    this.board.maintained.store(true, Ordering::Release);
                }
                this.refresh_status();
                drop(this);
                tokio::select! {
                    _ = tokio::time::sleep(POLL) => {}
                    _ = wake.notified() => read_at = None,
                }
            }
        });
    }

    /// Whether `current` still says what the invoices in doubt and the store's health say.
    fn still_holds(&self, current: &ServiceStatus) -> bool {
        current.store_ok == self.store_ok() && current.reconciling == self.in_doubt.list()
    }

    /// A snapshot from the channels' state now and the organizations last read (no I/O).
    fn refresh_status(&self) -> Arc<ServiceStatus> {
        *lock(&self.board.refreshed) = Some(Instant::now());
        let organizations = self.board.organizations();
        self.board.publish(self.compute_status(&organizations))
    }
}

/// The reasons last logged, per device: a change is logged once, not at every poll.
#[derive(Default)]
struct Reported {
    last: Mutex<BTreeMap<String, String>>,
}

impl Reported {
    /// Logs each device whose reason appeared, changed or went away since the last call.
    fn log_changes(&self, problems: &[(String, Problem)]) {
        let mut last = lock(&self.last);
        let now: BTreeMap<String, String> = problems
            .iter()
            .map(|(device, problem)| (device.clone(), problem.text.to_string()))
            .collect();
        for (device, reason) in &now {
            if last.get(device) != Some(reason) {
                warn!(%device, %reason, "status false: this device cannot certify now");
            }
        }
        for device in last.keys() {
            if !now.contains_key(device) {
                info!(%device, "this device can certify again");
            }
        }
        *last = now;
    }
}
