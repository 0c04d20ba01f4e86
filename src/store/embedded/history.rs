//! The check of the journal's history in the background.
//!
//! An open normally checks every record of the journal before it returns (every CRC, seq and
//! chain link), which takes time in proportion to the journal: about 1 s per 1,000,000
//! entries. With [`super::StoreOptions::background_check_above`], an open that can start from
//! the index's checkpoint (a record whose place and hash the index kept, itself checked
//! against the journal) reads only the records after it, and checks the records up to it on a
//! thread of its own. Those records are immutable and were all checked when written and at
//! earlier opens: what the check looks for is damage since (a failing disk, a hand edit).
//!
//! While it runs the store works as usual. If it finds damage, the store turns fail-closed as
//! an open would have: every write is refused with [`StoreError::Damaged`] (nothing more is
//! journaled on a damaged register) and [`super::EmbeddedStore::history_check`] says why, for the
//! service's status. Reads still work: the index holds what was applied.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tracing::{error, info};

use super::error::{DamageAt, StoreError};
use super::journal::{self, Checkpoint};
use crate::sync;

/// Where the check of the history stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryCheck {
    /// Every record was checked (at the open, or since in the background).
    Intact,
    /// The background check is running.
    Running,
    /// The background check found damage: the store refuses writes.
    Damaged {
        /// Where.
        at: DamageAt,
        /// What is wrong, and what an operator can do.
        reason: String,
    },
}

/// The state shared with the checking thread.
#[derive(Debug)]
pub(super) struct History {
    state: Mutex<HistoryCheck>,
    changed: Condvar,
}

impl History {
    /// Checked at the open: nothing runs.
    pub(super) fn intact() -> Arc<History> {
        Arc::new(History {
            state: Mutex::new(HistoryCheck::Intact),
            changed: Condvar::new(),
        })
    }

    /// Starts checking records 1..=`upto.seq` of the journal at `path` on a thread.
    pub(super) fn spawn(path: &Path, upto: Checkpoint) -> Arc<History> {
        let history = Arc::new(History {
            state: Mutex::new(HistoryCheck::Running),
            changed: Condvar::new(),
        });
        let shared = Arc::clone(&history);
        let path = path.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("history-check".to_string())
            .spawn(move || {
                let started = Instant::now();
                let outcome = match check(&path, &upto) {
                    Ok(()) => {
                        info!(
                            records = upto.seq,
                            seconds = started.elapsed().as_secs_f64(),
                            "journal history checked in the background: intact"
                        );
                        HistoryCheck::Intact
                    }
                    Err((at, reason)) => {
                        error!(
                            journal = %path.display(),
                            %at,
                            %reason,
                            "THE INVOICE REGISTER IS DAMAGED (found by the background check of the journal): certification is stopped (503) until an operator restores journal/journal.log from a backup"
                        );
                        HistoryCheck::Damaged { at, reason }
                    }
                };
                shared.set(outcome);
            });
        if let Err(e) = spawned {
            history.set(HistoryCheck::Damaged {
                at: DamageAt::JournalFile,
                reason: format!("the journal's history could not be checked: {e}"),
            });
        }
        history
    }

    fn set(&self, outcome: HistoryCheck) {
        *sync::lock(&self.state) = outcome;
        self.changed.notify_all();
    }

    /// Where it stands now.
    pub(super) fn now(&self) -> HistoryCheck {
        sync::lock(&self.state).clone()
    }

    /// Waits up to `timeout` for the check to end; returns where it stands then.
    pub(super) fn wait(&self, timeout: Duration) -> HistoryCheck {
        let guard = sync::lock(&self.state);
        let (guard, _) = sync::recover(
            self.changed
                .wait_timeout_while(guard, timeout, |state| *state == HistoryCheck::Running),
        );
        guard.clone()
    }

    /// `Err(Damaged)` once the check found damage.
    pub(super) fn refuse_if_damaged(&self) -> Result<(), StoreError> {
        match &*sync::lock(&self.state) {
            HistoryCheck::Damaged { at, reason } => Err(StoreError::damaged(*at, reason.clone())),
            _ => Ok(()),
        }
    }
}

/// The records 1..=`upto.seq` of `path`: the fast check first, and if it declines, the full
/// strict scan that `log verify` runs, which names the damage.
fn check(path: &Path, upto: &Checkpoint) -> Result<(), (DamageAt, String)> {
    let fast = std::fs::File::open(path)
        .ok()
        .and_then(|mut file| journal::check_prefix(&mut file, upto.end, upto.seq, &upto.hash));
    if fast.is_some_and(|start| start.offset == upto.end) {
        return Ok(());
    }
    match journal::verify(path, upto.end) {
        Ok((scanned, _)) if scanned.records == upto.seq && scanned.head == upto.hash => Ok(()),
        Ok((scanned, _)) => Err((
            DamageAt::Seq(upto.seq),
            format!(
                "the journal's first {} bytes hold {} records ending in sha256 {}, but record \
                 {} there hashed to {} when the store opened",
                upto.end,
                scanned.records,
                hex::encode(scanned.head),
                upto.seq,
                hex::encode(upto.hash)
            ),
        )),
        Err(StoreError::Damaged {
            seq_or_offset,
            reason,
        }) => Err((seq_or_offset, reason)),
        Err(other) => Err((
            DamageAt::JournalFile,
            format!("the journal's history could not be read: {other}"),
        )),
    }
}
