//! The journal file: framing, the hash chain, the open-time scan and the append.
//!
//! See the [module documentation](super) for the format and the recovery rules.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::Utc;
use tracing::{error, warn};

use super::error::{io_at, DamageAt, StoreError};
use super::event::{hash, Event, Hash, Record, GENESIS};

mod checkpoint;
mod fault;
mod files;
mod prefix;
mod read;
mod storage;

use crate::store::{FaultKind, WriteFault};
pub use checkpoint::Checkpoint;
pub use fault::storage_refusal;
pub use files::{create, create_private_dir, open_file, private_file, sync_dir};
pub use prefix::{check_prefix, ChainCheck};
pub use read::payload_at;
pub use storage::{settle, JournalFile, PAGE};

/// The largest payload a record may have (1 MiB). A header announcing more is damage.
pub const MAX_RECORD: u32 = 1 << 20;

/// Length of the `[len u32 LE][crc32 u32 LE]` header.
const HEADER: u64 = 8;

/// How the scan treats a record it cannot read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// At open: a bad last record with nothing valid after it is a torn tail.
    Open,
    /// For `verify`: every byte up to the limit must be valid records.
    Strict,
}

/// A torn tail found by the scan (not yet truncated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    /// Where the unreadable bytes start (the end of the last valid record).
    pub offset: u64,
    /// How many bytes follow it.
    pub len: u64,
    /// Why the record there is unreadable.
    pub reason: String,
}

/// What a scan found.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// Number of valid records (= the last seq).
    pub records: u64,
    /// Byte offset just after the last valid record.
    pub end: u64,
    /// Hash of the last valid record's payload ([`GENESIS`] when there is none).
    pub head: Hash,
    /// A torn tail after `end`, in [`Mode::Open`].
    pub torn: Option<Torn>,
    /// Where the last valid record starts, if this scan read it.
    pub last_start: Option<u64>,
}

/// Where a scan starts: just after record `seq`, whose payload hashes to `head` and which
/// ends at byte `offset` ([`Start::GENESIS`]: the beginning of the journal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Byte offset just after record `seq`.
    pub offset: u64,
    /// The last record before the scan (0 for none).
    pub seq: u64,
    /// Hash of that record's payload ([`GENESIS`] for none).
    pub head: Hash,
    /// Where record `seq` starts (0 for none).
    pub record_start: u64,
}

impl Start {
    /// The beginning of the journal.
    pub const GENESIS: Start = Start {
        offset: 0,
        seq: 0,
        head: GENESIS,
        record_start: 0,
    };
}

/// Where a record is in the journal: the offset of its header and its payload's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Byte offset of the record's `[len][crc32]` header.
    pub start: u64,
    /// Length of its payload.
    pub len: u32,
}

/// Reads the records of `src` from offset 0 up to `limit`, checking each CRC, the sequence
/// numbers and the hash chain, and hands each valid record to `visit` in order.
pub fn scan<R: Read + Seek>(
    src: &mut R,
    limit: u64,
    mode: Mode,
    path: &Path,
    visit: impl FnMut(Record, &Hash, Place) -> Result<(), StoreError>,
) -> Result<Scanned, StoreError> {
    scan_from(src, Start::GENESIS, limit, mode, path, visit)
}

/// [`scan`] of the records after `start` (which the caller has checked, e.g. with
/// [`check_prefix`]): the first one must be seq `start.seq + 1` with `prev` = `start.head`.
pub fn scan_from<R: Read + Seek>(
    src: &mut R,
    start: Start,
    limit: u64,
    mode: Mode,
    path: &Path,
    mut visit: impl FnMut(Record, &Hash, Place) -> Result<(), StoreError>,
) -> Result<Scanned, StoreError> {
    let read_err = |e| io_at(path, "reading", e);
    src.seek(SeekFrom::Start(start.offset)).map_err(read_err)?;
    let mut offset = start.offset;
    let mut head = start.head;
    let mut seq = start.seq;
    let mut last_start = (start.seq > 0).then_some(start.record_start);
    let mut payload = Vec::new();
    let bad = {
        let mut reader = BufReader::with_capacity(1 << 16, &mut *src);
        loop {
            let remaining = limit - offset;
            if remaining == 0 {
                break None;
            }
            if remaining < HEADER {
                break Some((
                    offset,
                    format!("incomplete record header ({remaining} bytes)"),
                ));
            }
            let mut header = [0u8; HEADER as usize];
            reader.read_exact(&mut header).map_err(read_err)?;
            let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
            let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
            if len > MAX_RECORD {
                return Err(StoreError::damaged(
                    DamageAt::Offset(offset),
                    format!("record length {len} exceeds the limit of {MAX_RECORD} bytes"),
                ));
            }
            if len == 0 {
                break Some((offset, "zero-length record".to_string()));
            }
            if HEADER + u64::from(len) > remaining {
                let present = remaining - HEADER;
                break Some((
                    offset,
                    format!("incomplete record ({len} bytes announced, {present} present)"),
                ));
            }
            payload.resize(len as usize, 0);
            reader.read_exact(&mut payload).map_err(read_err)?;
            if crc32fast::hash(&payload) != crc {
                break Some((offset, "CRC mismatch".to_string()));
            }
            let record: Record = serde_json::from_slice(&payload).map_err(|e| {
                StoreError::damaged(
                    DamageAt::Offset(offset),
                    format!("record with a valid CRC does not parse: {e}"),
                )
            })?;
            check_link(&record, seq, &head, offset)?;
            let digest = hash(&payload);
            seq = record.seq;
            visit(record, &digest, Place { start: offset, len })?;
            head = digest;
            last_start = Some(offset);
            offset += HEADER + u64::from(len);
        }
    };
    let torn = match bad {
        None => None,
        Some((at, reason)) => Some(classify_bad(src, at, limit, reason, mode, path)?),
    };
    Ok(Scanned {
        records: seq,
        end: offset,
        head,
        torn,
        last_start,
    })
}

/// Checks that `record` follows the record `seq` whose payload hashes to `head`.
fn check_link(record: &Record, seq: u64, head: &Hash, offset: u64) -> Result<(), StoreError> {
    if record.seq != seq + 1 {
        return Err(StoreError::damaged(
            DamageAt::Seq(seq + 1),
            format!(
                "the record at byte offset {offset} has seq {}, expected {}",
                record.seq,
                seq + 1
            ),
        ));
    }
    let expected = hex::encode(head);
    if record.prev != expected {
        return Err(StoreError::damaged(
            DamageAt::Seq(record.seq),
            format!(
                "hash chain broken: prev is {}, but the previous record hashes to {expected}",
                record.prev
            ),
        ));
    }
    Ok(())
}

/// A bad record at `at`: a torn tail if nothing valid follows it (and in [`Mode::Open`]),
/// damage otherwise.
fn classify_bad<R: Read + Seek>(
    src: &mut R,
    at: u64,
    limit: u64,
    reason: String,
    mode: Mode,
    path: &Path,
) -> Result<Torn, StoreError> {
    let rest = limit - at;
    if mode == Mode::Strict {
        return Err(StoreError::damaged(DamageAt::Offset(at), reason));
    }
    if rest > HEADER + u64::from(MAX_RECORD) {
        return Err(StoreError::damaged(
            DamageAt::Offset(at),
            format!("{reason}, and {rest} bytes follow (more than one record: not a torn tail)"),
        ));
    }
    let mut tail = vec![0u8; rest as usize];
    src.seek(SeekFrom::Start(at))
        .and_then(|_| src.read_exact(&mut tail))
        .map_err(|e| io_at(path, "reading", e))?;
    if let Some(found) = (1..tail.len()).find(|&i| is_valid_frame(&tail[i..])) {
        return Err(StoreError::damaged(
            DamageAt::Offset(at),
            format!(
                "{reason}, but a valid record follows at byte offset {}",
                at + found as u64
            ),
        ));
    }
    Ok(Torn {
        offset: at,
        len: rest,
        reason,
    })
}

/// Whether `bytes` start with a whole record whose CRC matches and whose payload parses.
fn is_valid_frame(bytes: &[u8]) -> bool {
    if bytes.len() < HEADER as usize {
        return false;
    }
    let len = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let crc = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    let Some(payload) = bytes.get(HEADER as usize..HEADER as usize + len as usize) else {
        return false;
    };
    len > 0
        && len <= MAX_RECORD
        && crc32fast::hash(payload) == crc
        && serde_json::from_slice::<Record>(payload).is_ok()
}

/// Encodes one record: header and payload.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER as usize + payload.len());
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// The open journal: appends records after the last valid one, through `F` (the real
/// [`File`]; an in-memory file that fails on command in unit tests).
#[derive(Debug)]
pub struct Journal<F: JournalFile = File> {
    path: PathBuf,
    file: F,
    end: u64,
    last_seq: u64,
    head: Hash,
    /// Where the last record starts, when known (see [`Journal::checkpoint`]).
    last_start: Option<u64>,
    halted: Option<WriteFault>,
}

impl<F: JournalFile> Journal<F> {
    /// Takes over a scanned file: a torn tail is copied aside (`torn-<offset>-<time>.bin`
    /// beside the journal), then truncated, with a warning.
    pub fn resume(path: &Path, file: F, scanned: &Scanned) -> Result<Journal<F>, StoreError> {
        if let Some(torn) = &scanned.torn {
            truncate_torn(path, &file, torn)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            end: scanned.end,
            last_seq: scanned.records,
            head: scanned.head,
            last_start: scanned.last_start,
            halted: None,
        })
    }

    /// The last record's seq (0 when empty).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Byte length of the valid records.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Hash of the last record's payload.
    pub fn head(&self) -> Hash {
        self.head
    }

    /// The last record's place, when known (after an append, or an open that read it).
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        let start = self.last_start?;
        (self.last_seq > 0 && self.halted.is_none()).then_some(Checkpoint {
            seq: self.last_seq,
            hash: self.head,
            start,
            end: self.end,
        })
    }

    /// Appends `event` as the next record and fsyncs it before returning (with its hash and
    /// place). After a write or fsync failure the journal refuses further appends
    /// ([`StoreError::Halted`]).
    pub fn append(&mut self, event: Event) -> Result<(Record, Hash, Place), StoreError> {
        if let Some(fault) = &self.halted {
            return Err(StoreError::Halted(fault.detail.clone()));
        }
        let record = Record {
            seq: self.last_seq + 1,
            prev: hex::encode(self.head),
            at: Utc::now(),
            event,
        };
        let payload = serde_json::to_vec(&record)?;
        if payload.len() > MAX_RECORD as usize {
            return Err(StoreError::Invalid(format!(
                "a {} record of {} bytes exceeds the limit of {MAX_RECORD} bytes",
                record.event.kind(),
                payload.len()
            )));
        }
        let bytes = frame(&payload);
        let written = self
            .file
            .write_all_at(&bytes, self.end)
            .and_then(|_| self.file.sync_data());
        if let Err(e) = written {
            // The record may or may not be on disk: cut it off, and stop appending (after a
            // failed fsync the page cache cannot be trusted). The next open rescans.
            let undo = self
                .file
                .set_len(self.end)
                .and_then(|_| self.file.sync_all());
            let why = format!("appending seq {} failed: {e}; undo: {undo:?}", record.seq);
            error!(journal = %self.path.display(), "{why}");
            self.halted = Some(WriteFault {
                kind: FaultKind::of(&e),
                detail: why,
                since: Utc::now(),
            });
            return Err(io_at(&self.path, "appending to", e));
        }
        let digest = hash(&payload);
        let place = Place {
            start: self.end,
            len: payload.len() as u32,
        };
        self.last_start = Some(self.end);
        self.end += bytes.len() as u64;
        self.last_seq = record.seq;
        self.head = digest;
        Ok((record, digest, place))
    }

    /// Why appends are refused, if they are.
    pub fn fault(&self) -> Option<&WriteFault> {
        self.halted.as_ref()
    }
}

/// Copies the torn bytes aside, then truncates the journal to the last valid record.
fn truncate_torn<F: JournalFile>(path: &Path, file: &F, torn: &Torn) -> Result<(), StoreError> {
    let mut bytes = vec![0u8; torn.len as usize];
    file.read_exact_at(&mut bytes, torn.offset)
        .map_err(|e| io_at(path, "reading", e))?;
    let stamp = Utc::now().format("%Y%m%dT%H%M%S%.fZ");
    let name = format!("torn-{}-{stamp}.bin", torn.offset);
    let aside = file
        .keep_aside(path, &name, &bytes)
        .map_err(|e| io_at(&path.with_file_name(&name), "writing", e))?;
    file.set_len(torn.offset)
        .and_then(|_| file.sync_all())
        .map_err(|e| io_at(path, "truncating", e))?;
    warn!(
        journal = %path.display(),
        offset = torn.offset,
        bytes = torn.len,
        reason = %torn.reason,
        copy = %aside.display(),
        "journal had a torn tail (an append interrupted by a crash): truncated to the last valid record"
    );
    Ok(())
}

/// What [`verify`] counted.
pub struct Counted {
    /// `certified` records.
    pub certified: u64,
    /// Of those, the ones that keep their invoice (1.5.0 and later: in the record or, since
    /// 1.8.0, in their intent's: `kept.rs`), each checked against its request digest.
    pub invoices_kept: u64,
}

/// Re-reads the journal at `path` from disk up to `end` in [`Mode::Strict`]; returns the
/// scan and what it counted. A kept invoice that does not hash to its entry's request digest
/// is damage: the register would show content that is not what was certified.
pub fn verify(path: &Path, end: u64) -> Result<(Scanned, Counted), StoreError> {
    let mut file = File::open(path).map_err(|e| io_at(path, "opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_at(path, "reading", e))?
        .len();
    if len < end {
        return Err(StoreError::damaged(
            DamageAt::JournalFile,
            format!("the journal is {len} bytes long but {end} bytes were written"),
        ));
    }
    let mut kept = super::kept::Tally::default();
    let scanned = scan(&mut file, end, Mode::Strict, path, |record, _, _| {
        kept.see(&record)
    })?;
    Ok((scanned, kept.counted()))
}
