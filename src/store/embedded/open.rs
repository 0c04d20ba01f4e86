//! Opening a store: the lock, the journal scan, bringing the index up to date.

use std::collections::VecDeque;
use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Mutex};

use tracing::{info, warn};

use super::error::{self, DamageAt, StoreError};
use super::event::{Hash, Record, GENESIS};
use super::history::History;
use super::index::{Applied, Index};
use super::journal::{self, Journal, Mode, Place, Scanned, Start};
use super::staged::REPLAY_BATCH;
use super::{EmbeddedStore, Inner, Progress, StoreOptions};

/// sled's page cache (MiB) while an index is built from a large journal (a first open, a
/// new layout after an upgrade, `index rebuild`): the rns' buckets are read and written all
/// over the index, and with a cache much smaller than them the build spends its time reading
/// them back from sled's files (1,000,000 entries: 40,000 entries/s with 8 MiB, 78,000 with
/// 64 MiB). Once built, the index is reopened with the configured cache.
const BUILD_CACHE_MIB: u64 = 64;

/// From this journal size (about 45,000 entries) a build uses [`BUILD_CACHE_MIB`]; in unit
/// tests every build does, so that their rebuilds go through the reopening.
const BUILD_CACHE_ABOVE: u64 = if cfg!(test) { 1 } else { 64 << 20 };

/// The index is ahead of the journal or disagrees with it.
pub(super) struct StaleIndex(pub(super) StoreError);

impl EmbeddedStore {
    /// Opens (or creates) the store in `state_dir`, with default options.
    pub fn open(state_dir: &Path) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::open_with(state_dir, &StoreOptions::default())
    }

    /// Opens (or creates) the store in `state_dir`: takes the lock, scans the journal (see the
    /// recovery rules), brings the index up to date.
    pub fn open_with(
        state_dir: &Path,
        options: &StoreOptions,
    ) -> Result<EmbeddedStore, StoreError> {
        refuse_unfinished_restore(state_dir)?;
        journal::create_private_dir(state_dir)?;
        let lock = take_lock(&state_dir.join("gateway.lock"))?;
        // Checked again under the lock: a restore holds it while it writes its marker.
        refuse_unfinished_restore(state_dir)?;
        let journal_path = super::copy::journal_path(state_dir);
        let index_dir = state_dir.join("index.sled");
        // The journal's folder exists once a store was opened here: a missing journal file in
        // it is a lost journal, not a fresh state directory.
        let used_before = journal_path.parent().is_some_and(Path::exists);
        // A journal this large is opened from the index's checkpoint, its history checked
        // in the background (`history.rs`); any other has its chain checked on other threads
        // while sled opens (see `replay`).
        let background = options.background_check_above.is_some_and(|min| {
            std::fs::metadata(&journal_path).is_ok_and(|meta| meta.len() >= min)
        });
        // No index yet: it is built from the first record, so the check's result would not
        // be used, and its thread would take a core from the build.
        let chain = if background || !index_dir.exists() {
            None
        } else {
            journal::ChainCheck::spawn(&journal_path)
        };
        let mut index = open_index(
            state_dir,
            &index_dir,
            &journal_path,
            options.index_cache_mib,
        )?;

        let exists = journal_path
            .try_exists()
            .map_err(|e| error::io_at(&journal_path, "checking", e))?;
        if !exists {
            if !index.is_empty() || used_before {
                return Err(StoreError::damaged(
                    DamageAt::JournalFile,
                    format!(
                        "{} is missing in a state directory that was used before (index: {}): \
                         restore the journal from a backup (the store never starts a new \
                         journal where one was)",
                        journal_path.display(),
                        index_dir.display()
                    ),
                ));
            }
            journal::create(&journal_path)?;
        }
        let (mut file, len) = journal::open_file(&journal_path)?;
        let cache = options.index_cache_mib;
        let building = len >= BUILD_CACHE_ABOVE
            && cache < BUILD_CACHE_MIB
            && matches!(index.applied()?, Applied::Empty | Applied::Unknown(_));
        if building {
            drop(index);
            index = Index::open(&index_dir, &journal_path, BUILD_CACHE_MIB)?;
        }
        let mut built_with = building.then_some(BUILD_CACHE_MIB);
        let (scanned, history) = match replay(
            &index,
            &mut file,
            len,
            &journal_path,
            chain,
            background,
            &options.progress,
        )? {
            Ok(opened) => opened,
            Err(StaleIndex(err)) if options.rebuild_stale_index => {
                let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
                let aside = state_dir.join(format!("index.sled.stale-{stamp}"));
                warn!(error = %err, aside = %aside.display(), "moving the stale index aside and rebuilding it from the journal");
                drop(index);
                std::fs::rename(&index_dir, &aside)
                    .map_err(|e| error::io_at(&index_dir, "moving", e))?;
                journal::sync_dir(state_dir)?;
                let build = if len >= BUILD_CACHE_ABOVE {
                    BUILD_CACHE_MIB.max(cache)
                } else {
                    cache
                };
                built_with = (build != cache).then_some(build);
                index = Index::open(&index_dir, &journal_path, build)?;
                replay(
                    &index,
                    &mut file,
                    len,
                    &journal_path,
                    None,
                    false,
                    &options.progress,
                )?
                .map_err(|StaleIndex(e)| e)?
            }
            Err(StaleIndex(err)) => return Err(err),
        };
        if built_with.is_some() {
            // Built: from now on the configured cache (`replay` flushed it).
            drop(index);
            index = Index::open(&index_dir, &journal_path, cache)?;
            release_freed_memory();
        }
        let journal = Journal::resume(&journal_path, file, &scanned)?;
        if let Some(checkpoint) = journal.checkpoint() {
            index.set_checkpoint(&checkpoint)?;
        }
        Ok(EmbeddedStore {
            journal_path,
            index: std::sync::RwLock::new(Some(Arc::new(index))),
            index_dir,
            index_cache_mib: cache,
            inner: Mutex::new(Inner {
                journal,
                pending: VecDeque::new(),
            }),
            stale: AtomicBool::new(false),
            history,
            _lock: lock,
        })
    }
}

/// Hands the heap memory freed by the process back to the system: glibc keeps it otherwise,
/// and a service that built its index with [`BUILD_CACHE_MIB`] at start-up would idle at
/// about 120 MiB instead of 36 (1,000,000 entries; 24 after a start without a build) until
/// its next restart.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only returns free memory of the heap to the
    // system; it is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Opens the index. If sled cannot read its own files (a crash while sled wrote a snapshot
/// can leave one it refuses at every later open: sled #1527, #1533), the index is moved aside
/// (`index.sled.corrupt-<time>`, never deleted) and rebuilt from the journal, which is the
/// truth, with a loud warning; but only when the journal has records: an unreadable index
/// beside a missing or empty journal is damage (nothing to rebuild from). When the file
/// system refuses instead (ENOSPC, EDQUOT, EROFS, EACCES, EPERM, EIO: `journal::storage_refusal`),
/// the open fails with that I/O error and the index stays where it is.
pub(super) fn open_index(
    state_dir: &Path,
    index_dir: &Path,
    journal_path: &Path,
    cache_mib: u64,
) -> Result<Index, StoreError> {
    // sled creates its files with the process's umask (the binary's is 077); its folder is
    // created here for the owner only in any case.
    journal::create_private_dir(index_dir)?;
    let error = match Index::open(index_dir, journal_path, cache_mib) {
        Ok(index) => return Ok(index),
        Err(StoreError::Index(error)) => error,
        Err(other) => return Err(other),
    };
    if let Some(refused) = journal::storage_refusal(&error) {
        // The file system refuses (full, read-only, no permission, failing): sled's files are
        // not known to be damaged, and a rebuild would be refused the same way.
        warn!(%error, index = %index_dir.display(), "the index cannot be opened: the file system refuses (the index is left as it is)");
        return Err(error::io_at(
            index_dir,
            "opening the index (left as it is: the file system refuses, the index is not known to be damaged)",
            refused,
        ));
    }
    let journal_len = match std::fs::metadata(journal_path) {
        Ok(meta) => meta.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(error::io_at(journal_path, "checking", e)),
    };
    if journal_len == 0 {
        return Err(StoreError::damaged(
            DamageAt::JournalFile,
            format!(
                "{} cannot be read ({error}) and there is no journal to rebuild it from: restore \
                 journal/journal.log from a backup",
                index_dir.display()
            ),
        ));
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let aside = state_dir.join(format!("index.sled.corrupt-{stamp}"));
    warn!(
        %error,
        aside = %aside.display(),
        "the index cannot be read: moving it aside and rebuilding it from the journal"
    );
    std::fs::rename(index_dir, &aside).map_err(|e| error::io_at(index_dir, "moving", e))?;
    journal::sync_dir(state_dir)?;
    Index::open(index_dir, journal_path, cache_mib)
}

/// Refuses a state directory where a restore began and did not finish (its marker is
/// there): its journal may be missing, half written or the old one.
pub(super) fn refuse_unfinished_restore(state_dir: &Path) -> Result<(), StoreError> {
    let marker = state_dir.join(super::RESTORE_MARKER);
    match marker.try_exists() {
        Ok(false) => Ok(()),
        Ok(true) => Err(StoreError::RestoreUnfinished(state_dir.to_path_buf())),
        Err(e) => Err(error::io_at(&marker, "checking", e)),
    }
}

/// Takes the exclusive lock on `path` (created for the owner only).
fn take_lock(path: &Path) -> Result<File, StoreError> {
    let file = journal::private_file()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| error::io_at(path, "opening", e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked),
        Err(TryLockError::Error(e)) => Err(error::io_at(path, "locking", e)),
    }
}

/// Scans the journal and applies to `index` the records it lacks. The outer error is fatal; the
/// inner one says the index is ahead of the journal or disagrees with it.
///
/// Three ways, each falling back to the next when it does not hold:
/// * `background` (a large journal, see `history.rs`): from the index's checkpoint, if that
///   record is intact and where the index says; the records up to it are checked on a thread.
/// * When the index has applied records, they are checked first with
///   [`journal::check_prefix`] (every CRC, seq and chain link up to the index's last record,
///   whose hash must be the one the index recorded, without parsing the events again; `chain`
///   is the same check started before sled was opened, used when the index's last record is
///   among the journal's last ones): if that holds, only the records after it are scanned in
///   full and applied.
/// * Otherwise the whole journal is scanned from the start, so every recovery rule (torn
///   tail, damage, index behind, ahead or disagreeing) is decided by the same full scan.
pub(super) fn replay(
    index: &Index,
    file: &mut File,
    len: u64,
    path: &Path,
    chain: Option<journal::ChainCheck>,
    background: bool,
    progress: &Progress,
) -> Result<Result<(Scanned, Arc<History>), StaleIndex>, StoreError> {
    let started = std::time::Instant::now();
    let applied = index.applied()?;
    let why = match &applied {
        Applied::Empty => "the index is empty (deleted, or a first open)",
        Applied::At { .. } => {
            "the index is behind the journal (it lost its last writes, or is older)"
        }
        Applied::Unknown(_) => "the index is of another layout or without its marker: rebuilt",
    };
    let (probe_seq, probe_hash) = match applied {
        Applied::Empty => (0, GENESIS),
        Applied::At { seq, hash } => (seq, hash),
        Applied::Unknown(why) => {
            if len == 0 {
                return Err(StoreError::damaged(
                    DamageAt::JournalFile,
                    format!("the journal is empty but the index holds records ({why})"),
                ));
            }
            warn!(reason = %why, "the index is not usable: rebuilding it from the journal");
            index.clear()?;
            (0, GENESIS)
        }
    };
    // An index written by 1.0.0 lacks the box counters: filled from its entries, once.
    index.complete_boxes()?;
    let probe = Probe {
        seq: probe_seq,
        hash: probe_hash,
    };
    if background && probe_seq > 0 {
        let usable = index
            .checkpoint()?
            .filter(|c| c.seq >= 1 && c.seq <= probe_seq && c.end <= len && c.holds_in(file));
        if let Some(checkpoint) = usable {
            let scanned = match scan_and_apply(
                index,
                file,
                (checkpoint.next(), len),
                path,
                &probe,
                progress,
            )? {
                Ok(scanned) => scanned,
                Err(stale) => return Ok(Err(stale)),
            };
            index.flush()?;
            log_replay(why, probe_seq, &scanned, started);
            return Ok(Ok((scanned, History::spawn(path, checkpoint))));
        }
    }
    // Records 1..=probe_seq intact (CRC, seq, chain) and the last one hashing to what the
    // index recorded: only the records after it are parsed and applied. Anything else falls
    // through to the full scan, which finds and classifies it.
    let checked = chain
        .and_then(|chain| chain.start_after(len, probe_seq, &probe_hash))
        .or_else(|| journal::check_prefix(file, len, probe_seq, &probe_hash));
    let start = checked.unwrap_or(Start::GENESIS);
    let scanned = match scan_and_apply(index, file, (start, len), path, &probe, progress)? {
        Ok(scanned) => scanned,
        Err(stale) => return Ok(Err(stale)),
    };
    index.flush()?;
    log_replay(why, probe_seq, &scanned, started);
    Ok(Ok((scanned, History::intact())))
}

/// Says at `info` how many records a replay or rebuild applied to the index, in how long,
/// and why (nothing when the index was up to date).
fn log_replay(why: &str, applied_before: u64, scanned: &Scanned, started: std::time::Instant) {
    let records = scanned.records.saturating_sub(applied_before);
    if records == 0 {
        return;
    }
    let seconds = started.elapsed().as_secs_f64();
    info!(
        records,
        from_seq = applied_before + 1,
        to_seq = scanned.records,
        seconds,
        per_second = (records as f64 / seconds.max(1e-6)).round(),
        reason = why,
        "index brought up to date from the journal"
    );
}

/// Where the index stands: its last applied seq and that record's hash.
struct Probe {
    seq: u64,
    hash: Hash,
}

/// Records handed from the journal's reader to the thread applying them, at a time.
const CHUNK: usize = 256;

/// Scans the records after `start` and applies them (records the index has are skipped by
/// `apply`); the inner error: the index is ahead of the journal or disagrees with it.
fn scan_and_apply(
    index: &Index,
    file: &mut File,
    (start, len): (Start, u64),
    path: &Path,
    probe: &Probe,
    progress: &Progress,
) -> Result<Result<Scanned, StaleIndex>, StoreError> {
    let advice = "the journal lost or changed acknowledged records: restore journal/journal.log \
                  from a backup, or rebuild the index from the journal as it is \
                  (StoreOptions::rebuild_stale_index; entries missing from the journal are lost)";
    let mut stale = None;
    // Many records per sled batch (a batch is atomic, its last-applied marker included): a
    // crash mid-replay leaves the index at the end of its last batch, replayed from there.
    // An index built from nothing keeps its buckets across batches and writes its marker
    // with its last batch only; interrupted, it is built again (`Staged::commit_build`).
    let building = probe.seq == 0 && start.seq == 0;
    let mut staged = index.staged()?;
    // The journal is read, checked, parsed and hashed on a thread of its own while this one
    // applies its records to sled, in order. The records go back to the reader once
    // applied, to be freed there: memory freed by a thread other than the one that
    // allocated it is slow with glibc's malloc (it takes the other thread's arena lock),
    // and that was half of a build's time.
    let (tx, rx) = mpsc::sync_channel::<Vec<(Record, Hash, Place)>>(8);
    let (back_tx, back_rx) = mpsc::channel::<Vec<(Record, Hash, Place)>>();
    let (scanned, applied) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            let scanned =
                journal::scan_from(file, start, len, Mode::Open, path, |record, hash, place| {
                    chunk.push((record, *hash, place));
                    if chunk.len() == CHUNK {
                        // The chunks applied since: freed here, their vectors used again.
                        let mut next = None;
                        while let Ok(mut done) = back_rx.try_recv() {
                            done.clear();
                            next = Some(done);
                        }
                        let next = next.unwrap_or_else(|| Vec::with_capacity(CHUNK));
                        let full = std::mem::replace(&mut chunk, next);
                        tx.send(full)
                            .map_err(|_| StoreError::Conflict("replay stopped".into()))?;
                    }
                    Ok(())
                });
            if scanned.is_ok() && !chunk.is_empty() {
                let _ = tx.send(chunk);
            }
            scanned
        });
        let applied = rx.iter().try_for_each(|chunk| {
            let end = chunk.last().map(|(_, _, place)| place.start + 8 + u64::from(place.len));
            for (record, hash, place) in &chunk {
                if record.seq == probe.seq && *hash != probe.hash {
                    stale = Some(StoreError::damaged(
                        DamageAt::Seq(probe.seq),
                        format!(
                            "the index applied seq {} with sha256 {} but the journal's record hashes to {}: {advice}",
                            probe.seq,
                            hex::encode(probe.hash),
                            hex::encode(hash)
                        ),
                    ));
                    return Err(StoreError::Conflict("stale index".to_string()));
                }
                staged.apply(record, hash, *place)?;
                if staged.len() >= REPLAY_BATCH {
                    if building {
                        staged.commit_build()?;
                    } else {
                        staged.commit()?;
                    }
                }
            }
            if let Some(end) = end {
                progress.report(end, len);
            }
            // The reader may have stopped already: then they are freed here.
            let _ = back_tx.send(chunk);
            Ok(())
        });
        drop(rx); // a reader still sending stops
        let scanned = reader.join().unwrap_or_else(|_| {
            Err(StoreError::Io(std::io::Error::other(
                "the journal's reader panicked",
            )))
        });
        (scanned, applied)
    });
    if let Some(err) = stale {
        return Ok(Err(StaleIndex(err)));
    }
    // An error of the applying side comes first: the reader's is then only that it stopped.
    applied?;
    let scanned = scanned?;
    if building {
        staged.commit_built()?;
    } else {
        staged.commit()?;
    }
    if scanned.records < probe.seq {
        return Ok(Err(StaleIndex(StoreError::damaged(
            DamageAt::Seq(probe.seq),
            format!(
                "the index has applied journal records up to seq {} but the journal ends at seq {}: {advice}",
                probe.seq, scanned.records
            ),
        ))));
    }
    Ok(Ok(scanned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;
    use crate::store::embedded::tests::{
        certify, certify_range, frames, production_register, seeded, write_frames,
    };

    #[test]
    fn reopening_through_the_prefix_check_gives_the_same_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = seeded(dir.path());
        certify_range(&store, 0..20);
        let before = (production_register(&store), store.verify().unwrap());
        drop(store);
        for _ in 0..2 {
            let store = EmbeddedStore::open(dir.path()).unwrap();
            assert_eq!(
                (production_register(&store), store.verify().unwrap()),
                before
            );
            // Appends continue the chain where the prefix check ended.
            drop(store);
        }
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let entry = certify(&store, "acme", Environment::Production, "A-1", 2026);
        assert_eq!(entry.sequence, 21);
        assert_eq!(store.verify().unwrap().records, before.1.records + 2);
    }

    #[test]
    fn a_journal_the_prefix_check_leaves_is_opened_by_the_full_scan() {
        // Records in another JSON spacing (CRC and chain recomputed): not the writer's exact
        // form, so the fast path declines and the full scan reads them as before.
        let dir = tempfile::tempdir().unwrap();
        let store = seeded(dir.path());
        certify(&store, "demo", Environment::Production, "FN-1", 2026);
        let before = production_register(&store);
        drop(store);
        let mut prev = "0".repeat(64);
        let payloads: Vec<Vec<u8>> = frames(dir.path())
            .into_iter()
            .map(|(_, p)| {
                let mut record: super::super::Record = serde_json::from_slice(&p).unwrap();
                record.prev = prev.clone();
                let bytes = serde_json::to_vec_pretty(&record).unwrap();
                prev = hex::encode(super::super::event::hash(&bytes));
                bytes
            })
            .collect();
        write_frames(dir.path(), &payloads);
        std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
        drop(EmbeddedStore::open(dir.path()).unwrap()); // index built from the respaced journal
        let store = EmbeddedStore::open(dir.path()).unwrap(); // index applied: full scan again
        assert_eq!(production_register(&store), before);
        assert_eq!(store.verify().unwrap().records, payloads.len() as u64);
    }
}
