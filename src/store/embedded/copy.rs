//! A copy of the journal for a backup, taken while a service may be appending to it, and the
//! checks of such a copy (`emcf-gateway backup` / `restore`, docs/backup.md).
//!
//! The journal is append-only and every record is fsynced before its invoice is answered, so
//! the bytes up to the file's length when the copy starts hold every record acknowledged
//! before it. The copy is read from the live file up to that length with the open-time scan
//! ([`Mode::Open`]): a record being appended at that instant is a torn tail and is left out,
//! and the copy ends on the last record whose CRC and chain link hold. Damage (a bad record
//! with valid records after it, a broken chain) fails the copy: a backup never hides it. The
//! copy is then checked again from its own bytes ([`summarize`], [`Mode::Strict`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{io_at, DamageAt, StoreError};
use super::event::{Event, Hash, Record};
use super::journal::{self, private_file, Mode};
use super::EmbeddedStore;
use crate::model::Environment;

/// The journal of a state directory.
pub fn journal_path(state_dir: &Path) -> PathBuf {
    state_dir.join("journal").join("journal.log")
}

/// An organization's register entries in a journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryTally {
    /// Production entries.
    pub production: u64,
    /// Sandbox entries.
    pub sandbox: u64,
}

/// What a journal (or its copy) holds, up to its last valid record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalSummary {
    /// Records (the last seq).
    pub records: u64,
    /// Byte length of those records.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the last record's payload (64 zeros when empty).
    pub head_sha256: String,
    /// Register entries (`certified` records) per organization.
    pub entries: BTreeMap<String, EntryTally>,
}

impl JournalSummary {
    /// Register entries of every organization, both environments.
    pub fn total_entries(&self) -> u64 {
        self.entries
            .values()
            .map(|t| t.production + t.sandbox)
            .sum()
    }
}

/// Counts the entries of each record it is shown.
#[derive(Default)]
struct Tally(BTreeMap<String, EntryTally>);

impl Tally {
    fn see(&mut self, record: &Record) {
        if let Event::Certified(entry) = &record.event {
            let tally = self.0.entry(entry.request.org.clone()).or_default();
            match entry.request.environment {
                Environment::Production => tally.production += 1,
                Environment::Sandbox => tally.sandbox += 1,
            }
        }
    }
}

fn summary(scanned: &journal::Scanned, tally: Tally) -> JournalSummary {
    JournalSummary {
        records: scanned.records,
        bytes: scanned.end,
        head_sha256: hex::encode(scanned.head),
        entries: tally.0,
    }
}

/// How far an open store's journal is durable: the records written and fsynced (a record
/// being written, or whose fsync failed and which the store cuts off, is beyond `bytes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurableJournal {
    /// Byte length of the durable records.
    pub bytes: u64,
    /// The last durable record's seq.
    pub records: u64,
    /// Lowercase hex SHA-256 of its payload.
    pub head_sha256: String,
}

impl EmbeddedStore {
    /// How far the journal is durable now ([`DurableJournal`]).
    pub fn durable_journal(&self) -> Result<DurableJournal, StoreError> {
        let inner = self.lock()?;
        Ok(DurableJournal {
            bytes: inner.journal.end(),
            records: inner.journal.last_seq(),
            head_sha256: hex::encode(inner.journal.head()),
        })
    }
}

/// Copies the journal of `state_dir` to the new file `to` (0600), up to the last complete
/// record within `durable` bytes (what the running service says is fsynced; `None`: the file
/// as it stands, the caller holding the state directory's lock), a torn or growing tail left
/// out, fsynced. Does not take the store's lock: a running service keeps appending meanwhile.
pub fn copy_journal(
    state_dir: &Path,
    to: &Path,
    durable: Option<u64>,
) -> Result<JournalSummary, StoreError> {
    let from = journal_path(state_dir);
    let mut source = File::open(&from).map_err(|e| io_at(&from, "opening", e))?;
    let on_disk = source
        .metadata()
        .map_err(|e| io_at(&from, "reading", e))?
        .len();
    let len = durable.map_or(on_disk, |durable| durable.min(on_disk));
    let mut tally = Tally::default();
    let scanned = journal::scan(&mut source, len, Mode::Open, &from, |record, _, _| {
        tally.see(&record);
        Ok(())
    })?;
    let mut out = private_file()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| io_at(to, "creating", e))?;
    source
        .seek(SeekFrom::Start(0))
        .map_err(|e| io_at(&from, "reading", e))?;
    let copied = std::io::copy(&mut (&mut source).take(scanned.end), &mut out)
        .map_err(|e| io_at(to, "writing", e))?;
    if copied != scanned.end {
        return Err(StoreError::damaged(
            DamageAt::JournalFile,
            format!(
                "{} became shorter while it was copied ({copied} of {} bytes)",
                from.display(),
                scanned.end
            ),
        ));
    }
    out.flush()
        .and_then(|()| out.sync_all())
        .map_err(|e| io_at(to, "syncing", e))?;
    Ok(summary(&scanned, tally))
}

/// Reads the journal file at `path` (read-only, no lock) and checks every byte of it as
/// `log verify` does ([`Mode::Strict`]: a torn tail is damage here), each kept invoice
/// against its entry's digest, in one pass.
pub fn summarize(path: &Path) -> Result<JournalSummary, StoreError> {
    let mut file = File::open(path).map_err(|e| io_at(path, "opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_at(path, "reading", e))?
        .len();
    let mut tally = Tally::default();
    let scanned = journal::scan(&mut file, len, Mode::Strict, path, |record, _, _| {
        if let Event::Certified(entry) = &record.event {
            if let Some(Err(error)) = entry.request.content() {
                return Err(StoreError::damaged(
                    DamageAt::Seq(record.seq),
                    format!("entry {}: {error}", entry.sequence),
                ));
            }
        }
        tally.see(&record);
        Ok(())
    })?;
    Ok(summary(&scanned, tally))
}

/// How a state directory's journal stands against a backup's copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    /// Records both have, identical, from the first.
    pub common: u64,
    /// The current journal's records after those.
    pub current_beyond: u64,
    /// Of those, register entries: what putting the copy back would lose.
    pub entries_beyond: u64,
    /// The copy's records after the common ones.
    pub copy_beyond: u64,
}

impl Comparison {
    /// The copy holds every record of the current journal (it is equal or longer): putting
    /// it back loses nothing.
    pub fn copy_holds_current(&self) -> bool {
        self.current_beyond == 0
    }
}

/// Compares the journal at `current` (read as an open would: a torn tail left out) with the
/// verified copy at `copy`, record by record.
pub fn compare(current: &Path, copy: &Path) -> Result<Comparison, StoreError> {
    let mut hashes: Vec<Hash> = Vec::new();
    let mut file = File::open(copy).map_err(|e| io_at(copy, "opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_at(copy, "reading", e))?
        .len();
    journal::scan(&mut file, len, Mode::Strict, copy, |_, hash, _| {
        hashes.push(*hash);
        Ok(())
    })?;
    let mut file = File::open(current).map_err(|e| io_at(current, "opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_at(current, "reading", e))?
        .len();
    let mut common = 0u64;
    let mut diverged = false;
    let mut entries_beyond = 0u64;
    let scanned = journal::scan(&mut file, len, Mode::Open, current, |record, hash, _| {
        let same = !diverged && hashes.get(common as usize) == Some(hash);
        if same {
            common += 1;
        } else {
            diverged = true;
            if matches!(record.event, Event::Certified(_)) {
                entries_beyond += 1;
            }
        }
        Ok(())
    })?;
    Ok(Comparison {
        common,
        current_beyond: scanned.records - common,
        entries_beyond,
        copy_beyond: hashes.len() as u64 - common,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;
    use crate::store::embedded::tests::{certify, seeded};
    use crate::store::embedded::EmbeddedStore;

    #[test]
    fn a_copy_ends_on_the_last_whole_record_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = seeded(dir.path());
        certify(&store, "demo", Environment::Production, "FN-1", 2026);
        certify(&store, "demo", Environment::Sandbox, "FN-2", 2026);
        let head = store.verify().unwrap().head_sha256;
        // A record being appended: half of one, after the last whole record.
        let path = journal_path(dir.path());
        let mut live = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        live.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, b'{']).unwrap();
        let out = dir.path().join("copy.log");
        let copied = copy_journal(dir.path(), &out, None).unwrap();
        assert_eq!(copied.head_sha256, head);
        assert_eq!(
            copied.entries["demo"],
            EntryTally {
                production: 1,
                sandbox: 1
            }
        );
        assert_eq!(summarize(&out).unwrap(), copied);
        assert_eq!(std::fs::metadata(&out).unwrap().len(), copied.bytes);
        // The torn bytes stay in the live journal: the copy never cuts it.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), copied.bytes + 9);
        drop(store);
    }

    #[test]
    fn the_comparison_counts_what_a_restore_would_lose() {
        let dir = tempfile::tempdir().unwrap();
        let store = seeded(dir.path());
        certify(&store, "demo", Environment::Production, "FN-1", 2026);
        let copy = dir.path().join("copy.log");
        copy_journal(dir.path(), &copy, None).unwrap();
        let path = journal_path(dir.path());
        let same = compare(&path, &copy).unwrap();
        assert!(same.copy_holds_current());
        certify(&store, "demo", Environment::Production, "FN-2", 2026);
        certify(&store, "demo", Environment::Production, "FN-3", 2026);
        let longer = compare(&path, &copy).unwrap();
        assert!(!longer.copy_holds_current());
        assert_eq!((longer.entries_beyond, longer.copy_beyond), (2, 0));
        // The other way round: the current journal is a prefix of a longer copy.
        let later = dir.path().join("later.log");
        copy_journal(dir.path(), &later, None).unwrap();
        drop(store);
        let other = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(other.path()).unwrap();
        drop(store);
        let fresh = compare(&journal_path(other.path()), &later).unwrap();
        assert!(fresh.copy_holds_current());
        assert_eq!(fresh.common, 0);
    }
}
