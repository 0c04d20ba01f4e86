//! Why the journal stopped appending, and how it resumes.
//!
//! A failed write or fsync halts the journal (see [`super::Journal::append`]): the record
//! that failed may or may not be on disk, and after a failed fsync the page cache cannot be
//! trusted. [`super::Journal::resume_after_fault`] resumes on a fresh file handle only once
//! the file is cut back to the last acknowledged record, fsynced, its cached pages dropped,
//! and that record re-read from the disk and found to be the one written.

use std::io::ErrorKind;

use super::{payload_at, Journal, JournalFile, Place, HEADER, PAGE};
use crate::store::embedded::event::hash;
use crate::store::error::{io_at, DamageAt, StoreError};
use crate::store::WriteFault;

/// The I/O error in a sled error when it says the file system refuses to write or read
/// (full, over quota, read-only, no permission, an I/O error: [`FaultKind`]'s cases and
/// EACCES/EPERM), rather than that sled's files are damaged. A copy: `io::Error` is not
/// `Clone`; its kind is kept.
pub fn storage_refusal(error: &sled::Error) -> Option<std::io::Error> {
    let sled::Error::Io(io) = error else {
        return None;
    };
    let by_kind = matches!(
        io.kind(),
        ErrorKind::StorageFull
            | ErrorKind::QuotaExceeded
            | ErrorKind::ReadOnlyFilesystem
            | ErrorKind::PermissionDenied
    );
    let by_code = io.raw_os_error().is_some_and(|code| {
        [
            libc::ENOSPC,
            libc::EDQUOT,
            libc::EROFS,
            libc::EACCES,
            libc::EPERM,
            libc::EIO,
        ]
        .contains(&code)
    });
    (by_kind || by_code).then(|| std::io::Error::new(io.kind(), io.to_string()))
}

impl<F: JournalFile> Journal<F> {
    /// Refuses appends from now on for a reason found outside the journal (the index cannot
    /// write: appending records it cannot apply would only grow what it lacks). Keeps the
    /// first fault if already halted.
    pub fn halt(&mut self, fault: WriteFault) {
        if self.halted.is_none() {
            self.halted = Some(fault);
        }
    }

    /// After a write fault: opens the journal again, cuts it back to the last acknowledged
    /// record, fsyncs it, checks that the disk takes a write again, drops its cached pages and
    /// re-reads that record from the disk. Only when it is the one written does appending
    /// resume. `Err` (and still halted) otherwise:
    /// the disk still fails, or (`Damaged`) acknowledged records are no longer there.
    ///
    /// The cut is made whatever length the kernel shows: after a failed fsync Linux may mark
    /// the pages (and the inode) clean without writing them, so the file can look `end` bytes
    /// long while the disk still holds the failed record after them, whole or torn; setting
    /// the length again and fsyncing writes the length to the disk (`store/embedded/tests/crash_seeds.rs`
    /// finds the disk holding more otherwise).
    pub fn resume_after_fault(&mut self) -> Result<(), StoreError> {
        if self.halted.is_none() {
            return Ok(());
        }
        let path = &self.path;
        let file = self
            .file
            .reopen(path)
            .map_err(|e| io_at(path, "opening", e))?;
        let len = file.len().map_err(|e| io_at(path, "reading", e))?;
        if len < self.end {
            return Err(StoreError::damaged(
                DamageAt::JournalFile,
                format!(
                    "after a write failure the journal is {len} bytes long, but its \
                     acknowledged records end at byte {}",
                    self.end
                ),
            ));
        }
        file.set_len(self.end)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_at(path, "truncating", e))?;
        // A truncation succeeds on a full disk: that the disk takes writes again is shown by
        // writing a page of zeros after the last record (a crash now leaves a zero-length
        // record: a torn tail, cut at the next open), then cutting it off again.
        let probed = file
            .write_all_at(&[0u8; PAGE as usize], self.end)
            .and_then(|()| file.sync_data());
        let cut = file.set_len(self.end).and_then(|()| file.sync_all());
        probed.map_err(|e| io_at(path, "writing to", e))?;
        cut.map_err(|e| io_at(path, "truncating", e))?;
        let last = self.last_start.filter(|_| self.last_seq > 0);
        file.drop_cached_pages(last.unwrap_or(self.end).min(self.end - self.end % PAGE));
        if let Some(start) = last {
            let place = Place {
                start,
                len: (self.end - start - HEADER) as u32,
            };
            let payload = payload_at(&file, place, path)?;
            if hash(&payload) != self.head {
                return Err(StoreError::damaged(
                    DamageAt::Seq(self.last_seq),
                    "after a write failure the journal's last record on disk is not the one \
                     written",
                ));
            }
        }
        self.file = file;
        self.halted = None;
        Ok(())
    }
}
