//! Why the journal stopped appending, and how it resumes.
//!
//! A failed write or fsync halts the journal (see [`super::Journal::append`]): the record
//! that failed may or may not be on disk, and after a failed fsync the page cache cannot be
//! trusted. [`super::Journal::resume_after_fault`] resumes on a fresh file handle only once
//! the file is cut back to the last acknowledged record, fsynced, its cached pages dropped,
//! and that record re-read from the disk and found to be the one written.

use std::io::ErrorKind;

use chrono::{DateTime, Utc};

/// Why the journal cannot append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFault {
    /// What kind of failure.
    pub kind: FaultKind,
    /// The technical text (English, for logs and details).
    pub detail: String,
    /// When it began.
    pub since: DateTime<Utc>,
}

/// The kinds of storage failure an administrator acts on differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The file system is full (ENOSPC, EDQUOT): free space.
    NoSpace,
    /// The file system is read-only (EROFS), e.g. remounted after errors.
    ReadOnly,
    /// Any other I/O error (EIO...): the disk may be failing.
    Io,
}

impl FaultKind {
    /// The kind of an I/O error.
    pub fn of(error: &std::io::Error) -> FaultKind {
        match error.kind() {
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => FaultKind::NoSpace,
            ErrorKind::ReadOnlyFilesystem => FaultKind::ReadOnly,
            _ => FaultKind::Io,
        }
    }

    /// A stable name (logs, metrics labels).
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::NoSpace => "no_space",
            FaultKind::ReadOnly => "read_only",
            FaultKind::Io => "io",
        }
    }
}

/// Drops the kernel's cached pages of `file`, so that the next read comes from the disk.
pub(super) fn drop_cached_pages(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fadvise only reads its arguments; the descriptor is open for the call.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}
