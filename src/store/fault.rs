//! Why the register cannot be written now, whichever store keeps it: the embedded journal
//! halted by a failed write (`embedded/journal/fault.rs` says how it resumes) or the
//! PostgreSQL server away (`postgres/store.rs`). The storage watch
//! (`certify/storage_fault.rs`) answers 503 with the kind's code while it lasts.

use std::io::ErrorKind;

use chrono::{DateTime, Utc};

/// Why the register cannot be written: the embedded journal halted, or the PostgreSQL server
/// away.
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
    /// The register's PostgreSQL server does not answer (the PostgreSQL store; never the
    /// journal's).
    Database,
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
            FaultKind::Database => "database",
        }
    }
}
