//! The embedded store: journal (truth) + sled index (projection), the default (the seam
//! over it and PostgreSQL: `super`).
//!
//! # Files
//!
//! ```text
//! <state_dir>/gateway.lock          exclusive lock (File::try_lock) while a EmbeddedStore is open
//! <state_dir>/journal/journal.log   the journal: the only source of truth
//! <state_dir>/journal/torn-*.bin    copies of torn tails cut off at open (kept for forensics)
//! <state_dir>/index.sled/           the sled index: a projection, rebuilt from the journal
//!                                   (layout in `index.rs`; an index of another layout is
//!                                   rebuilt at open)
//! ```
//!
//! # Record format
//!
//! The journal is a sequence of records, each `[len u32 LE][crc32 u32 LE][payload]`: `len` is
//! the payload's length (1 ..= 1 MiB; a header announcing more is damage), the CRC
//! (`crc32fast`, IEEE) is over the payload. The payload is one JSON object, fields in this order:
//!
//! ```json
//! {"seq":7,"prev":"<64 hex>","at":"2026-01-02T10:00:00.123Z","event":{"type":"certified",...}}
//! ```
//!
//! * `seq`: 1, 2, 3... with no gap. An intent's id ([`IntentId`]) is the seq of its record.
//! * `prev`: lowercase hex SHA-256 of the previous record's payload bytes exactly as stored
//!   (64 zeros for seq 1). This is the hash chain: changing any record, even with its CRC
//!   recomputed, breaks the link of the record after it; the hash of the last payload is the
//!   journal's head ([`VerifyReport::head_sha256`]).
//! * `at`: UTC time of the append (RFC 3339).
//! * `event`: an [`Event`], tagged by `"type"`: `organization_saved`, `key_issued`,
//!   `key_enabled`, `key_disabled`, `intent`, `certified` (one LogInvoices entry; since 1.8.0
//!   without the invoice its intent record keeps: `kept.rs`),
//!   `abandoned`, `dashboard_token_issued` (id, organization, SHA-256 of the secret, label),
//!   `dashboard_token_revoked`; since 1.1.0 `fiscal_anomaly` (a box contradicting its
//!   register history, `boxes.rs`) and `fiscal_anomaly_acknowledged`. A release reads every
//!   event an older one wrote; an older release refuses a journal with an event it does not
//!   know (it fails closed: `Damaged`).
//!
//! Every append is written at the end of the last valid record and `fsync`ed (`sync_data`)
//! before the call returns; the directory is fsynced when the file is created. Only then is
//! the record applied to sled. A write or fsync failure halts the journal: it is cut back to
//! the last good record and further appends fail with [`StoreError::Halted`]
//! ([`EmbeddedStore::write_fault`] says why: disk full, read-only, I/O error) until
//! [`EmbeddedStore::resume_writes`] succeeds or the store is reopened. After a failed fsync the page
//! cache cannot be trusted (Linux may mark pages clean that never reached the disk), so a
//! resume reopens the file, sets its length back to the end of the last acknowledged record
//! whatever length the kernel shows, fsyncs it, drops its cached pages and re-reads that
//! record from the disk; and an open fsyncs the journal and drops the cached pages of its
//! tail before scanning it, so that it never builds on bytes only the cache holds. A resume
//! also writes a page of zeros after the last record and cuts it off again, so that it never
//! claims a full disk writable. If sled cannot write (a full disk often fails sled before the
//! journal), appends halt the same way, with the fault's kind; sled then refuses every read
//! and write until it is reopened, so `resume_writes` reopens it (once every reader let go of
//! the old one) and replays from the journal what it lacks, as an open does (`reopen.rs`);
//! reads fail (`Halted`) for the moment it takes. Nothing acknowledged is lost either way: the
//! journal is the truth.
//!
//! The journal reaches its file through a small trait (`journal/storage.rs`), which unit tests
//! implement with an in-memory file that keeps only what was fsynced and fails on command
//! (`tests/fault_file.rs`): `tests/crash_seeds.rs` runs the real append, open and resume over
//! thousands of seeded power cuts and storage faults.
//!
//! # Recovery rules (at [`EmbeddedStore::open`])
//!
//! The journal is scanned from the start: every CRC, every seq and every `prev` link (the
//! records the index already applied are checked without parsing their events:
//! `journal/prefix.rs`). With [`StoreOptions::background_check_above`] (what `serve` uses for
//! a journal of 64 MiB or more), an open starts instead from the checkpoint the index keeps
//! (a record's seq, hash and byte range, written at every open and close), once that record is
//! found intact and in its place, and the records before it are checked on a thread
//! (`history.rs`): damage found there refuses every write from then on, as the rules below
//! refuse the open. A checkpoint that does not hold is ignored (the whole journal is checked).
//!
//! * **Torn tail**: the last record is incomplete, or has a bad CRC (or a zero length), and no
//!   valid record follows it (at most one record's worth of bytes remains). This is an append
//!   interrupted by a crash; that record was never acknowledged. The bytes are copied to
//!   `journal/torn-<offset>-<time>.bin`, the file is truncated to the last valid record, and a
//!   `warn!` is logged. Appends continue after it. (If the index had already applied that
//!   record, it was acknowledged: that is the "index ahead" case below, not a torn tail.)
//! * **Damage**: a bad record with valid data after it, a record with a valid CRC that does
//!   not parse, a seq gap or a broken chain anywhere, a length above 1 MiB: `open` fails with
//!   [`StoreError::Damaged`] (fail closed). Nothing is repaired or re-initialised; an operator
//!   restores the journal from a backup.
//! * **Missing journal** (or an empty one) while `index.sled` holds records, or a missing
//!   `journal.log` in an existing `journal/` folder: `Damaged`. The store never starts a new
//!   journal where one was.
//! * **Unreadable index** (sled refuses its own files, e.g. after a crash during its snapshot:
//!   sled #1527): moved aside to `index.sled.corrupt-<time>` and rebuilt from the journal, with
//!   a `warn!`; `Damaged` if there is no journal to rebuild from.
//! * **A file system that refuses** (sled's open fails with ENOSPC, EDQUOT, EROFS, EACCES,
//!   EPERM or EIO: a full disk, a read-only mount, wrong owner, a failing disk): that says
//!   nothing of the index's state, and a rebuild would be refused the same way, so the index is
//!   left as it is and `open` fails with [`StoreError::Io`] of that kind ("the disk is full",
//!   "the file system is read-only"...). The service does not start and says why; systemd's
//!   restart tries again, and once space is freed the store opens as before.
//! * **Index behind the journal** (sled lost its last writes, or was deleted): the records
//!   after the index's last applied seq are replayed. Deleting `index.sled` loses nothing.
//! * **Index of another layout, or without its last-applied marker**: cleared and rebuilt
//!   from the journal, with a `warn!`.
//! * **Index ahead of the journal, or disagreeing with it** (the index has applied a seq the
//!   journal does not have, or the hash of the journal record at the index's position differs):
//!   the journal lost or changed acknowledged records, and the index may hold the only copy of
//!   register entries; rebuilding would hand out their sequence numbers again. So by default
//!   `open` fails with `Damaged`. With [`StoreOptions::rebuild_stale_index`] the old index is
//!   moved aside to `index.sled.stale-<time>` (never deleted) and a new one is built from the
//!   journal, with a `warn!`: a deliberate operator decision.
//!
//! Applying records to sled is one atomic batch (their effects plus the last-applied seq and
//! hash: one record per append, up to 4096 when the open replays or rebuilds the index) and is
//! idempotent. The index does not copy register entries: it keeps where each entry's
//! `certified` record is in the journal and that record's hash, and reads the entry from the
//! journal when asked (`entry_ref.rs`; the record's CRC and hash are checked at each read). sled is not flushed after each write: the journal's fsync is the
//! durability point, sled flushes itself every 500 ms and on close, and an index that lost its
//! last writes in a crash is behind the journal, which the open replays (see above).
//!
//! # Concurrency
//!
//! Every method blocks (file I/O, fsync, sled flush): call them from `spawn_blocking` in async
//! code. [`EmbeddedStore`] is `Send + Sync`; share it as `Arc<EmbeddedStore>`. Writes are serialised by a mutex
//! and validated against the index under it, so checks like "no open intent for this rn" and
//! "next sequence" cannot race. Queries read sled directly and do not wait for writers.
//! If applying to sled fails after a record was fsynced, the write still succeeds (the record
//! is durable) and the record is re-applied before the next read or write.
//!
//! # For callers
//!
//! * Writes validate before journaling and journal nothing when they refuse: `issue_key`
//!   needs a new id and a known organization; `record_intent` needs a known organization, a
//!   key of that organization and environment, a non-empty rn, and no open intent nor entry
//!   for (organization, environment, rn) ([`StoreError::Conflict`]); `record_certified` and
//!   `record_abandoned` need an open intent ([`StoreError::UnknownIntent`],
//!   [`StoreError::IntentNotOpen`]). `set_key_enabled` to the state a key already has
//!   journals nothing. `issue_dashboard_token` needs a new id and a known organization;
//!   `revoke_dashboard_token` of a revoked token journals nothing.
//! * The register sequence is per environment (Production and Sandbox each 1, 2, 3...);
//!   quota counts Production entries under the `quota_year` the caller passes.
//! * An `Err` from `record_certified` means the certification is *not* journaled (the intent
//!   stays open): reconcile it with the device, never certify twice.
//! * [`StoreError::Damaged`] and [`StoreError::Halted`] mean: stop certifying, tell an operator.

mod apply;
mod blocks;
mod boxes;
mod copy;
mod entry_ref;
mod event;
mod event_read;
mod grouped;
mod history;
mod index;
mod index_org;
pub(super) mod journal;
mod kept;
mod links;
mod open;
mod queries;
mod reopen;
mod staged;
#[cfg(test)]
pub(crate) mod tests;
mod write;

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use tracing::{info, warn};

use super::error;
pub use super::error::{DamageAt, StoreError};
pub use copy::{
    compare, copy_journal, journal_path, summarize, Comparison, DurableJournal, EntryTally,
    JournalSummary,
};

/// The file a restore writes in a state directory before it moves anything, and removes
/// last (`emcf-gateway restore`, docs/backup.md): while it is there, no store opens.
pub const RESTORE_MARKER: &str = "restore-in-progress";
use crate::store::WriteFault;
pub use event::{DashboardToken, Event, Record};
pub use history::HistoryCheck;
pub use journal::MAX_RECORD;

use crate::model::Environment;
use event::Hash;
use index::{Applied, Index};
use journal::Journal;

/// sled's page cache for the index when nothing else is said ([`StoreOptions::index_cache_mib`]):
/// queries read the recent end of the register, which this holds; with 1,000,000 entries the
/// idle service stays under 48 MiB of RSS (docs/performance.md, "Register scale").
pub const DEFAULT_INDEX_CACHE_MIB: u64 = 8;

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// When the index is ahead of the journal or disagrees with it, move `index.sled` aside
    /// and rebuild it from the journal instead of failing with [`StoreError::Damaged`]. For an
    /// operator's explicit repair command only, never for a normal start.
    pub rebuild_stale_index: bool,
    /// For a journal of at least this many bytes, open from the index's checkpoint and check
    /// the records before it in the background ([`HistoryCheck`], `history.rs`) instead of
    /// before returning. `None` (the default): every open checks the whole journal first.
    pub background_check_above: Option<u64>,
    /// sled's page cache for the index, in MiB (the configuration's `index_cache_mib`).
    pub index_cache_mib: u64,
    /// Told how far a replay or rebuild at the open has read (a CLI's progress bar).
    pub progress: Progress,
}

/// A hook told how far an open's replay or rebuild has applied the journal: (bytes applied,
/// the journal's length). Called from the thread that opens, once per few hundred records.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<dyn Fn(u64, u64) + Send + Sync>>);

impl Progress {
    /// A hook calling `report`.
    pub fn new(report: impl Fn(u64, u64) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(report)))
    }

    pub(crate) fn report(&self, done: u64, total: u64) {
        if let Some(report) = &self.0 {
            report(done, total);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(hook)"
        } else {
            "Progress(none)"
        })
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            rebuild_stale_index: false,
            background_check_above: None,
            index_cache_mib: DEFAULT_INDEX_CACHE_MIB,
            progress: Progress::default(),
        }
    }
}

/// Which register entries [`EmbeddedStore::entries`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryFilter {
    /// Only this organization's entries, or all.
    pub org: Option<String>,
    /// The register (Production or Sandbox).
    pub environment: Environment,
    /// Entries with a sequence above this one (0 for the start).
    pub after_sequence: u64,
    /// At most this many (0 returns none).
    pub limit: usize,
}

/// What `log verify` found: the register is intact (`store::Store::verify`, either store).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifyReport {
    /// Number of records (= the last seq).
    pub records: u64,
    /// Number of `certified` records (LogInvoices entries, both environments).
    pub certified: u64,
    /// Of those, the entries that keep the invoice as certified (1.5.0 and later), each found
    /// to hash to its request digest. Absent from reports of 1.4.0 and before.
    #[serde(default)]
    pub invoices_kept: u64,
    /// Lowercase hex SHA-256 of the last record's payload (64 zeros when empty); empty, and
    /// left out of the JSON, for a register in PostgreSQL, which has one chain per
    /// organization.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub head_sha256: String,
    /// For a register in PostgreSQL: the organizations whose chain was recomputed (and
    /// `records` is its entries). Absent for the embedded store's journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chains: Option<u64>,
}

/// The gateway's persistent state. See the [module documentation](self).
pub struct EmbeddedStore {
    journal_path: PathBuf,
    /// The index, `None` only while [`EmbeddedStore::resume_writes`] reopens it (`reopen.rs`).
    index: RwLock<Option<Arc<Index>>>,
    /// Where the index is and its cache, to reopen it.
    index_dir: PathBuf,
    index_cache_mib: u64,
    inner: Mutex<Inner>,
    /// Records are waiting in `Inner::pending` (applying them to sled failed).
    stale: AtomicBool,
    /// The check of the journal's history (done at the open, or running in the background).
    history: Arc<history::History>,
    _lock: File,
}

/// What the write mutex guards.
struct Inner {
    journal: Journal,
    /// Journaled (fsynced) records not yet applied to sled, in order.
    pending: VecDeque<(Record, Hash, journal::Place)>,
}

impl EmbeddedStore {
    /// Re-reads the whole journal from disk: every CRC, seq and chain link, and that the last
    /// record and the file's length are those this store wrote; then that the index has
    /// applied exactly the journal. Does not block writers while reading.
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        let (end, records, head) = {
            let inner = self.lock()?;
            (
                inner.journal.end(),
                inner.journal.last_seq(),
                inner.journal.head(),
            )
        };
        let (scanned, counted) = journal::verify(&self.journal_path, end)?;
        if scanned.records != records || scanned.head != head {
            return Err(StoreError::damaged(
                DamageAt::Seq(records),
                format!(
                    "the last record on disk (seq {}, sha256 {}) is not the one written (seq {records}, sha256 {})",
                    scanned.records,
                    hex::encode(scanned.head),
                    hex::encode(head)
                ),
            ));
        }
        let inner = self.lock()?;
        let len = std::fs::metadata(&self.journal_path)
            .map_err(|e| error::io_at(&self.journal_path, "reading", e))?
            .len();
        if len != inner.journal.end() {
            return Err(StoreError::damaged(
                DamageAt::Offset(inner.journal.end()),
                format!(
                    "the journal is {len} bytes long but the records written end at byte {}",
                    inner.journal.end()
                ),
            ));
        }
        if inner.pending.is_empty() {
            let (last, head) = (inner.journal.last_seq(), inner.journal.head());
            let agrees = match self.index()?.applied()? {
                Applied::Empty => last == 0,
                Applied::At { seq, hash } => seq == last && hash == head,
                Applied::Unknown(_) => false,
            };
            if !agrees {
                return Err(StoreError::damaged(
                    DamageAt::Seq(last),
                    "the index does not end at the journal's last record: reopen the store to \
                     replay or rebuild it",
                ));
            }
        }
        Ok(VerifyReport {
            records,
            certified: counted.certified,
            invoices_kept: counted.invoices_kept,
            head_sha256: hex::encode(head),
            chains: None,
        })
    }

    /// Why the journal refuses appends now (a write or fsync failed, or the index cannot
    /// write), if it does. Cheap: for checking before a channel is used.
    pub fn write_fault(&self) -> Option<WriteFault> {
        let inner = self.inner.lock().ok()?;
        inner.journal.fault().cloned()
    }

    /// After a write fault, tries to resume appending (see
    /// `journal::Journal::resume_after_fault`): `Ok(true)` when it resumed, `Ok(false)` when
    /// there was no fault, `Err` while the storage still fails. The index must answer too:
    /// sled, once one of its own writes failed (a full disk), refuses every later read and
    /// write until it is reopened, which only a restart does; until then this stays `Err`.
    pub fn resume_writes(&self) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        let Some(fault) = inner.journal.fault().cloned() else {
            return Ok(false);
        };
        inner.journal.resume_after_fault()?;
        // sled keeps a failed background flush to itself until its next write or flush: a
        // flush that succeeds is what shows it writes again (a read would not).
        let index_answers = self
            .index()
            .and_then(|index| index.flush())
            .and_then(|_| self.apply_pending(&mut inner));
        if let Err(e) = index_answers {
            // sled refuses every read and write once one of its own writes failed: reopen
            // it, and replay what it lacks from the journal.
            warn!(error = %e, "the index does not answer after the write fault: reopening it");
            if let Err(e) = self.reopen_index(&mut inner) {
                inner.journal.halt(index_fault(&e).unwrap_or(fault));
                return Err(e);
            }
            // The failed apply halted the journal again: the same checks lift it.
            inner.journal.resume_after_fault()?;
        }
        info!(journal = %self.journal_path.display(), "journal writable again: appends resumed");
        Ok(true)
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>, StoreError> {
        self.inner.lock().map_err(|_| {
            StoreError::Halted("a thread panicked while writing to the store".to_string())
        })
    }

    /// Runs a query, after re-applying records that failed to reach sled, if any.
    fn read<T>(
        &self,
        query: impl FnOnce(&Index) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.stale.load(Ordering::Acquire) {
            let mut inner = self.lock()?;
            self.apply_pending(&mut inner)?;
        }
        query(&*self.index()?)
    }

    /// The index (an `Err` while it is being reopened).
    fn index(&self) -> Result<Arc<Index>, StoreError> {
        crate::sync::read(&self.index)
            .clone()
            .ok_or_else(|| StoreError::Halted(reopen::REOPENING.to_string()))
    }

    /// Applies the journaled records that are not in sled yet. sled is not flushed here:
    /// its own thread flushes every 500 ms and [`Drop`] flushes on close; an index that lost
    /// its last writes in a crash is behind the journal and is replayed at open, so a flush
    /// per write would only add two fsyncs to every invoice's path.
    fn apply_pending(&self, inner: &mut Inner) -> Result<(), StoreError> {
        let applied = (|| {
            let index = self.index()?;
            while let Some((record, hash, place)) = inner.pending.front() {
                index.apply(record, hash, *place)?;
                inner.pending.pop_front();
            }
            Ok(())
        })();
        self.stale.store(applied.is_err(), Ordering::Release);
        if let Some(fault) = applied.as_ref().err().and_then(index_fault) {
            warn!(detail = %fault.detail, "the index cannot write: appends halted");
            inner.journal.halt(fault);
        }
        applied
    }
}

/// The write fault an index error is, when the file system refuses sled's writes (a full
/// disk...): appends stop, as for the journal's own faults.
fn index_fault(error: &StoreError) -> Option<WriteFault> {
    let StoreError::Index(sled) = error else {
        return None;
    };
    let io = journal::storage_refusal(sled)?;
    Some(WriteFault {
        kind: crate::store::FaultKind::of(&io),
        detail: format!(
            "the index (sled) cannot write: {io}; sled refuses every later read and write \
             until it is reopened (`EmbeddedStore::resume_writes`)"
        ),
        since: chrono::Utc::now(),
    })
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        let Ok(index) = self.index() else {
            return;
        };
        // The next open starts from here (see `history.rs`), if every record is applied.
        if let Ok(inner) = self.inner.lock() {
            if let Some(checkpoint) = inner
                .journal
                .checkpoint()
                .filter(|_| inner.pending.is_empty())
            {
                if let Err(e) = index.set_checkpoint(&checkpoint) {
                    warn!(error = %e, "keeping the journal's checkpoint in the index failed");
                }
            }
        }
        if let Err(e) = index.flush() {
            warn!(error = %e, "flushing the index on close failed (it will be replayed from the journal)");
        }
    }
}
