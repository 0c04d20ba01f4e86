//! Reopening the index in a running store, after sled failed one of its own writes.
//!
//! sled, once a write of its own failed (a full disk), refuses every later read and write of
//! that instance. When the file system takes writes again, [`EmbeddedStore::resume_writes`] reopens
//! it here: the old instance is taken out of the store (reads fail with `Halted` meanwhile),
//! dropped once no reader holds it, opened again (an unreadable one moved aside and rebuilt,
//! as at an open), and brought up to the journal's last acknowledged record by the open's own
//! replay. The writer mutex is held throughout, so no record is appended meanwhile.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::error::{DamageAt, StoreError};
use super::index::Index;
use super::open::{open_index, replay, StaleIndex};
use super::{EmbeddedStore, Inner, Progress};
use crate::sync;

/// What a read says while the index is being reopened.
pub(super) const REOPENING: &str = "the index is being reopened after a write fault";

/// How long a reopen waits for readers to let go of the old index.
const READERS_GONE: Duration = Duration::from_secs(10);

impl EmbeddedStore {
    /// Reopens the index and replays the journal into it up to the last acknowledged record;
    /// `inner` (the writer mutex) is held by the caller. On `Err` the store has no index and
    /// every read fails until a later call succeeds (or a restart).
    pub(super) fn reopen_index(&self, inner: &mut Inner) -> Result<(), StoreError> {
        let started = Instant::now();
        let taken = sync::write(&self.index).take();
        if let Some(old) = taken {
            drop_when_unused(old)?;
        }
        let state_dir = self.index_dir.parent().unwrap_or(std::path::Path::new("."));
        let index = open_index(
            state_dir,
            &self.index_dir,
            &self.journal_path,
            self.index_cache_mib,
        )?;
        let (mut file, _) = super::journal::open_file(&self.journal_path)?;
        let end = inner.journal.end();
        let scanned = match replay(
            &index,
            &mut file,
            end,
            &self.journal_path,
            None,
            false,
            &Progress::default(),
        )? {
            Ok((scanned, _history)) => scanned,
            Err(StaleIndex(error)) => return Err(error),
        };
        if scanned.records != inner.journal.last_seq() || scanned.head != inner.journal.head() {
            return Err(StoreError::damaged(
                DamageAt::Seq(inner.journal.last_seq()),
                format!(
                    "reopening the index, the journal read back ends at seq {}, not at the last \
                     record written (seq {})",
                    scanned.records,
                    inner.journal.last_seq()
                ),
            ));
        }
        // Every record, the ones that waited for the old index included, is applied now.
        inner.pending.clear();
        self.stale
            .store(false, std::sync::atomic::Ordering::Release);
        *sync::write(&self.index) = Some(Arc::new(index));
        info!(
            records = scanned.records,
            seconds = started.elapsed().as_secs_f64(),
            "index reopened after a write fault and brought up to the journal"
        );
        Ok(())
    }
}

/// Drops `old` once no reader holds a clone of it (sled's files can be opened again only
/// then); `Err` if readers still hold it after [`READERS_GONE`].
fn drop_when_unused(mut old: Arc<Index>) -> Result<(), StoreError> {
    let deadline = Instant::now() + READERS_GONE;
    loop {
        match Arc::try_unwrap(old) {
            Ok(index) => {
                if let Err(error) = index.flush() {
                    warn!(%error, "the failed index could not be flushed before reopening it");
                }
                drop(index);
                return Ok(());
            }
            Err(shared) if Instant::now() < deadline => {
                old = shared;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => {
                return Err(StoreError::Halted(
                    "the index is still in use by a reader: reopening it is tried again later"
                        .to_string(),
                ))
            }
        }
    }
}
