//! This `serve` as a replica over a PostgreSQL store (`certify/replica.rs`): its state
//! directory is its own (`replica.lock`, held while it runs), and names in `replica` the
//! replica it ran as, so that the next process started on it knows its predecessor is dead
//! (the lock was free) and fences it at once: a box's invoices left in doubt are settled by
//! the process the box is plugged into, without waiting for a lease to run out.

use std::fs::{self, File, TryLockError};
use std::path::Path;
use std::sync::Arc;

use tracing::info;

use crate::atomic_file;
use crate::certify::Certifier;
use crate::msg;

/// The state directory held by this replica, for as long as it runs.
pub(super) struct Seat {
    _lock: File,
}

/// Takes `state_dir` for this replica and joins the others (before any invoice).
pub(super) fn join(certifier: &Arc<Certifier>, state_dir: &Path) -> anyhow::Result<Seat> {
    let path = state_dir.join("replica.lock");
    let lock = atomic_file::private_file()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => anyhow::bail!(msg!(
            "cli-replica-dir-held",
            dir = state_dir.display().to_string()
        )),
        Err(TryLockError::Error(error)) => return Err(error.into()),
    }
    let name_file = state_dir.join("replica");
    let predecessor = fs::read_to_string(&name_file)
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty());
    let me = certifier.replica().to_owned();
    // The predecessor fenced, then this replica's name kept, then its predecessor's intents
    // taken: a start that dies half-way leaves nothing owned by a name no one knows.
    if let Some(predecessor) = &predecessor {
        certifier.fence_predecessor(predecessor)?;
    }
    atomic_file::write_private(&name_file, format!("{me}\n").as_bytes())?;
    certifier.join_replicas(&me, predecessor.as_deref())?;
    info!(replica = %me, predecessor = ?predecessor, "joined the replicas");
    Ok(Seat { _lock: lock })
}
