//! The DGI's window of pending requests of an e-MCF, shared by the replicas over PostgreSQL
//! (issue 29; `store/window.rs`). Each process keeps its own window in memory (the arrival
//! order, the semaphore of `mod.rs`); over PostgreSQL a lane also takes one of the e-MCF's
//! places kept in the database, so that all the replicas together keep at most
//! `pending_limit` requests pending on the DGI. The place is taken before the request, its
//! request's uid noted at once, and given back when the confirm is sent, like the process's
//! own permit (`run.rs`).
//!
//! A place whose holder's lease is gone (a replica killed, cut off) is recovered by the leader
//! only when the DGI's pending list shows its request gone: the list is read once the place
//! has been in doubt for longer than any call its holder may have sent before its lease ran
//! out ([`RECOVERY_MARGIN`] beyond the longest call), then the place is given back if its
//! uid is not pending, or, when its holder died before noting one, if every pending request
//! of the e-MCF is one the service knows (noted under a place, or held by an intent).
//! A place whose giving back failed (the database away) is given back by a later look.
//! Until then the others run with fewer places: never more than the DGI's limit.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::Shared;
use crate::certify::register_writer::{RegisterWriter, WindowSlot};
use crate::certify::CertifyError;
use crate::msg;
use crate::sync::lock;

/// The longest an invoice waits for a place of the shared window (every place taken by
/// the replicas' requests): then 503 (151) with `Retry-After`.
const LONGEST_WAIT: Duration = Duration::from_secs(20);

/// The first and the longest pause between two tries for a place.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(200);

/// Beyond the longest call, before a place in doubt is checked against the pending list.
const RECOVERY_MARGIN: Duration = Duration::from_secs(5);

/// Between two looks at the places (this process's lost ones; the leader: those whose holder
/// is gone).
const RECOVERY_TICK: Duration = Duration::from_secs(2);

/// Every how many looks this process also checks for places no lane of it holds.
const LOST_LOOK_EVERY: u32 = 30;

/// Every how many looks the leader checks an e-MCF's places for a holder gone, while none is
/// in doubt (every look while one is): two statements per e-MCF each time, so that an idle
/// service with many e-MCFs costs its database little.
const DOUBT_LOOK_EVERY: u32 = 5;

/// A place of this process no lane holds is given back only once taken longer ago than this
/// (a lane notes its place in memory as soon as the database gave it).
const LOST_AFTER: Duration = Duration::from_secs(10);

/// The places this process's lanes hold, and whether one could not be given back (the
/// database away for longer than the tries): those are given back by the next look
/// ([`spawn_recovery`]).
#[derive(Default)]
pub(super) struct HeldPlaces {
    held: Mutex<BTreeSet<i32>>,
    lost: AtomicBool,
}

/// A place of the shared window held by a lane; given back when dropped (its lane ended, or
/// was given up before its request).
pub(super) struct SharedPlace {
    journal: RegisterWriter,
    slot: WindowSlot,
    places: Arc<HeldPlaces>,
}

/// What a lane needs to note its request's uid under its place.
pub(super) struct PlaceNote {
    journal: RegisterWriter,
    slot: WindowSlot,
}

/// A place of `shared`'s shared window, waited for while every place is taken; `None` when
/// the window is not shared (the embedded store, or no register given yet).
pub(super) async fn take(shared: &Shared) -> Result<Option<SharedPlace>, CertifyError> {
    let Some(journal) = shared.health.journal().filter(|j| j.shares_window()) else {
        return Ok(None);
    };
    let device = shared.settings.name.as_str();
    let limit = u32::try_from(shared.settings.pending_limit).unwrap_or(u32::MAX);
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(slot) = journal.take_window_slot(device, limit).await? {
            lock(&shared.places.held).insert(slot.slot);
            return Ok(Some(SharedPlace {
                journal: journal.clone(),
                slot,
                places: Arc::clone(&shared.places),
            }));
        }
        if started.elapsed() >= LONGEST_WAIT {
            warn!(
                device,
                "every place of the DGI's pending window is taken by the replicas: invoice refused (151)"
            );
            return Err(CertifyError::QueueFull {
                retry_after: Duration::from_secs(2),
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

impl SharedPlace {
    /// What noting a uid under this place needs.
    pub(super) fn note(&self) -> PlaceNote {
        PlaceNote {
            journal: self.journal.clone(),
            slot: self.slot.clone(),
        }
    }
}

impl PlaceNote {
    /// Notes the uid of the request sent under the place. Refused when the place is no
    /// longer this replica's (it was fenced, or its lease was gone long enough for the leader
    /// to recover the place): the caller cancels the request.
    pub(super) async fn note(&self, uid: &str) -> Result<(), CertifyError> {
        if self.journal.note_window_uid(&self.slot, uid).await? {
            Ok(())
        } else {
            Err(CertifyError::DeviceUnavailable {
                reason: msg!("reason-replica-lease"),
                retry_after: Duration::from_secs(2),
            })
        }
    }
}

impl Drop for SharedPlace {
    /// Gives the place back, in the background (tried again for a while when the database
    /// is away; then by a later look of this process, [`give_back_lost`]).
    fn drop(&mut self) {
        let (journal, slot) = (self.journal.clone(), self.slot.clone());
        let places = Arc::clone(&self.places);
        lock(&places.held).remove(&slot.slot);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            places.lost.store(true, Ordering::SeqCst);
            return;
        };
        runtime.spawn(async move {
            let mut pause = Duration::from_millis(200);
            for _ in 0..5 {
                match journal.give_back_window_slot(&slot).await {
                    Ok(()) => return,
                    Err(error) => {
                        warn!(device = %slot.device, slot = slot.slot, %error,
                            "a place of the DGI's window could not be given back; trying again");
                    }
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
            // Given back by a later look, once the database answers.
            places.lost.store(true, Ordering::SeqCst);
        });
    }
}

/// Starts the looks at `shared`'s places: this process's own places whose giving back failed,
/// and (the leader) the places of replicas gone; it ends when the channel is dropped.
pub(super) fn spawn_recovery(shared: &Arc<Shared>) {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut ticks: u32 = 0;
        let mut in_doubt = false;
        loop {
            tokio::time::sleep(RECOVERY_TICK).await;
            let Some(shared) = weak.upgrade() else { return };
            ticks = ticks.wrapping_add(1);
            // Also now and then without a failed giving back: a lane dropped while the
            // database was giving it its place never knew it had one.
            if ticks.is_multiple_of(LOST_LOOK_EVERY) {
                shared.places.lost.store(true, Ordering::SeqCst);
            }
            give_back_lost(&shared).await;
            if in_doubt || ticks.is_multiple_of(DOUBT_LOOK_EVERY) {
                in_doubt = recover(&shared).await;
            }
        }
    });
}

/// Gives back this process's places no lane holds any more, after a failed giving back.
async fn give_back_lost(shared: &Shared) {
    let Some(journal) = shared.health.journal().filter(|j| j.shares_window()) else {
        return;
    };
    if !shared.places.lost.swap(false, Ordering::SeqCst) {
        return;
    }
    let held: Vec<i32> = lock(&shared.places.held).iter().copied().collect();
    let device = shared.settings.name.as_str();
    match journal
        .give_back_lost_window_slots(device, held, LOST_AFTER)
        .await
    {
        Ok(0) => {}
        Ok(given) => info!(
            device,
            given, "places of the DGI's window whose giving back had failed are free again"
        ),
        Err(error) => {
            warn!(device, %error, "places of the DGI's window not given back yet; trying again");
            shared.places.lost.store(true, Ordering::SeqCst);
        }
    }
}

/// One look at the places whose holder is gone (the leader's, over PostgreSQL); whether some
/// are in doubt still (or may be: the database did not answer).
async fn recover(shared: &Shared) -> bool {
    let Some(journal) = shared
        .health
        .journal()
        .filter(|j| j.shares_window() && j.leads())
    else {
        return false;
    };
    let device = shared.settings.name.as_str();
    let after = shared.settings.connect_timeout + shared.settings.request_timeout + RECOVERY_MARGIN;
    let doubted = match journal.window_doubts(device, after).await {
        Ok(doubted) => doubted,
        Err(error) => {
            warn!(device, %error, "the DGI's window: places in doubt not read");
            return true;
        }
    };
    let in_doubt = !doubted.is_empty();
    let ready: Vec<_> = doubted.into_iter().filter(|d| d.ready).collect();
    if ready.is_empty() {
        return in_doubt;
    }
    // Read after the places were found ready: whatever their holders sent is there.
    let pending: Vec<String> = match shared.api.status().await {
        Ok(status) => match status.pending {
            Some(pending) => pending.into_iter().map(|p| p.uid).collect(),
            None => return true,
        },
        Err(error) => {
            warn!(device, %error, "the DGI's window: pending list not read");
            return true;
        }
    };
    // Read after the pending list: a request a live lane sent is noted by then (or has its
    // intent), whatever became of it since.
    let known = match journal.known_window_uids(device, pending.clone()).await {
        Ok(known) => known,
        Err(error) => {
            warn!(device, %error, "the DGI's window: known requests not read");
            return true;
        }
    };
    let all_known = pending.iter().all(|uid| known.contains(uid));
    for place in ready {
        let gone = match &place.uid {
            Some(uid) => !pending.contains(uid),
            None => all_known,
        };
        if !gone {
            continue;
        }
        match journal.free_window_slot(&place, after).await {
            Ok(true) => info!(
                device,
                slot = place.slot.slot,
                "a place of the DGI's window held by a replica gone is free again (its request is no longer pending)"
            ),
            Ok(false) => {}
            Err(error) => warn!(device, %error, "the DGI's window: a place not recovered"),
        }
    }
    true
}
