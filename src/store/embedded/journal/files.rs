//! The journal's files on disk: created durably (the directory fsync'd) and for their owner
//! only (0700 folders, 0600 files, whatever the umask: `atomic_file`), opened for appending.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::super::error::{io_at, StoreError};
use crate::atomic_file;

/// fsyncs a directory, so that a file created (or renamed) in it survives a crash.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    atomic_file::sync_dir(dir).map_err(|e| io_at(dir, "syncing directory", e))
}

/// Creates `dir` and its missing parents for the owner only (0700, whatever the umask).
pub fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    atomic_file::private_dir(dir).map_err(|e| io_at(dir, "creating", e))
}

pub use atomic_file::private_file;

/// Creates an empty journal file at `path` (its directory too), durably, owner only.
pub fn create(path: &Path) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if !dir.exists() {
        create_private_dir(dir)?;
        if let Some(parent) = dir.parent() {
            sync_dir(parent)?;
        }
    }
    let file = private_file()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io_at(path, "creating", e))?;
    file.sync_all().map_err(|e| io_at(path, "syncing", e))?;
    sync_dir(dir)
}

/// Opens an existing journal for reading and appending, with its current length, settled
/// for an open's scan ([`super::settle`]: fsynced, the cached pages of its tail dropped).
pub fn open_file(path: &Path) -> Result<(File, u64), StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| io_at(path, "opening", e))?;
    let len = super::settle(&file).map_err(|e| io_at(path, "syncing", e))?;
    Ok((file, len))
}
