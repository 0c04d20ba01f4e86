//! A record's place in the journal, kept by the index so that an open can start from it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use super::{prefix, Start, HEADER, MAX_RECORD};
use crate::store::embedded::event::{hash, Hash};

/// One record's place in the journal: its seq, the SHA-256 of its payload, and the byte range
/// of the whole record (header included). The index keeps one (see `Index::checkpoint`) so
/// that an open can start from it; an open checks the record there before trusting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// The record's seq.
    pub seq: u64,
    /// The SHA-256 of its payload.
    pub hash: Hash,
    /// Where its header starts.
    pub start: u64,
    /// Where it ends (the next record starts).
    pub end: u64,
}

impl Checkpoint {
    /// Where a scan of the records after it starts.
    pub fn next(&self) -> Start {
        Start {
            offset: self.end,
            seq: self.seq,
            head: self.hash,
            record_start: self.start,
        }
    }

    /// Whether the record at this place of `file` is intact (header, CRC), is seq `seq` as
    /// the writer writes it and hashes to `hash`.
    pub fn holds_in(&self, file: &mut File) -> bool {
        let Some(len) = self.end.checked_sub(self.start + HEADER) else {
            return false;
        };
        if len == 0 || len > u64::from(MAX_RECORD) {
            return false;
        }
        let mut bytes = vec![0u8; (HEADER + len) as usize];
        let read = file
            .seek(SeekFrom::Start(self.start))
            .and_then(|_| file.read_exact(&mut bytes));
        if read.is_err() {
            return false;
        }
        let (header, payload) = bytes.split_at(HEADER as usize);
        let announced = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        u64::from(announced) == len
            && crc32fast::hash(payload) == crc
            && prefix::writer_seq(payload) == Some(self.seq)
            && hash(payload) == self.hash
    }
}
