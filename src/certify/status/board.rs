//! The status the service keeps: read by `GET /api/v1/status`, the dashboard's overview and
//! `/metrics` as one `Arc`, with the monitored devices' JSON rendered once per change.
//!
//! Every read looks at what is in memory (each channel's state, the invoices in doubt, the
//! store's health) and keeps the current snapshot, JSON included, when nothing changed: no
//! store I/O and no rendering per request, and no lag behind a channel. The organizations (a
//! NIF a channel is not personalized for) are the one thing read from the store: by the watch
//! task ([`Certifier::spawn_status_watch`]) off the runtime's workers, every `every` and at
//! once after [`Certifier::organizations_changed`]; the task also looks at the channels every
//! [`POLL`], so that readiness changes reach the log when nobody reads the status. Without the
//! watch task (a certifier no server runs) every read also reads the organizations.

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

/// The status last computed, what it was computed from, and the reasons last logged.
#[derive(Default)]
pub(crate) struct StatusBoard {
    current: RwLock<Option<Arc<ServiceStatus>>>,
    organizations: Mutex<Arc<Vec<Organization>>>,
    maintained: AtomicBool,
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
    fn publish(&self, mut fresh: ServiceStatus) -> Arc<ServiceStatus> {
        if let Some(same) = self.current().filter(|now| now.says_the_same(&fresh)) {
            return same;
        }
        let mut current = recover(self.current.write());
        if let Some(same) = current.as_ref().filter(|now| now.says_the_same(&fresh)) {
            return Arc::clone(same);
        }
        self.reported.log_changes(&fresh.not_ready);
        fresh.render_monitored();
        let fresh = Arc::new(fresh);
        *current = Some(Arc::clone(&fresh));
        fresh
    }

    fn organizations(&self) -> Arc<Vec<Organization>> {
        Arc::clone(&lock(&self.organizations))
    }
}

impl Certifier {
    /// Whether the certification path works, from each channel's state now (in memory) and
    /// the organizations last read: the kept snapshot (and its rendered JSON) when nothing
    /// changed. Logs each change of a channel's readiness.
    pub fn status(&self) -> Arc<ServiceStatus> {
        if !self.board.maintained.load(Ordering::Acquire) {
            let organizations = self.store.organizations().unwrap_or_default();
            return self.board.publish(self.compute_status(&organizations));
        }
        self.refresh_status()
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

    /// A snapshot from the channels' state now and the organizations last read (no I/O).
    fn refresh_status(&self) -> Arc<ServiceStatus> {
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
