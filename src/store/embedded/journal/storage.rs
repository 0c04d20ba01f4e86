//! What the journal asks of its file, as a trait: the real [`File`], and in unit tests an
//! in-memory file that keeps only what was fsynced and fails on command
//! (`store/embedded/tests/fault_file.rs`), so that the real append, open and resume run over
//! simulated crashes and storage faults.
//!
//! [`Journal`](super::Journal) is generic over it with `File` as the default: monomorphized,
//! no vtable and no allocation, so production code compiles to the same calls as before
//! (a `Box<dyn>` would cost an indirect call per operation and make `reopen` allocate;
//! nothing here needs a choice at run time).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::atomic_file;

/// The bytes at the end of a journal whose cached pages an open drops before reading (see
/// [`settle`]): the largest record, its header, and the page it may share with the record
/// before it.
const UNSETTLED_TAIL: u64 = super::MAX_RECORD as u64 + super::HEADER + 2 * PAGE;

/// The page size the kernel caches and writes back by (the file systems the gateway runs on
/// use 4 KiB blocks).
pub const PAGE: u64 = 4096;

/// The operations the journal uses on its file. Positioned reads and writes only: the
/// journal never relies on a file position.
pub trait JournalFile: Sized + std::fmt::Debug {
    /// Writes all of `bytes` at `offset` (into the page cache; durable only after a sync).
    fn write_all_at(&self, bytes: &[u8], offset: u64) -> io::Result<()>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// `fdatasync`: the data written and the length are on disk when it returns `Ok`.
    fn sync_data(&self) -> io::Result<()>;
    /// `fsync`: [`JournalFile::sync_data`] and every metadata.
    fn sync_all(&self) -> io::Result<()>;
    /// Sets the file's length (a truncation, for the journal).
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The file's length as the kernel sees it now (not necessarily on disk).
    fn len(&self) -> io::Result<u64>;
    /// Asks the kernel to drop its clean cached pages from `from` to the end, so that the
    /// next reads there come from the disk (`posix_fadvise(DONTNEED)`; advice, no error).
    fn drop_cached_pages(&self, from: u64);
    /// A new handle on the file at `path` (the same file as this one), for reading and writing.
    fn reopen(&self, path: &Path) -> io::Result<Self>;
    /// Writes `bytes` durably to a new private file `name` in the journal's folder (`path` is
    /// the journal's); returns its path.
    fn keep_aside(&self, path: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf>;
}

impl JournalFile for File {
    fn write_all_at(&self, bytes: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, bytes, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn sync_all(&self) -> io::Result<()> {
        File::sync_all(self)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn drop_cached_pages(&self, from: u64) {
        use std::os::fd::AsRawFd;
        let from = libc::off_t::try_from(from - from % PAGE).unwrap_or(0);
        // SAFETY: posix_fadvise only reads its arguments; the descriptor is open for the call.
        let _ =
            unsafe { libc::posix_fadvise(self.as_raw_fd(), from, 0, libc::POSIX_FADV_DONTNEED) };
    }

    fn reopen(&self, path: &Path) -> io::Result<Self> {
        File::options().read(true).write(true).open(path)
    }

    fn keep_aside(&self, path: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        use std::io::Write;
        let dir = path.parent().unwrap_or(Path::new("."));
        let aside = dir.join(name);
        let mut out = atomic_file::private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&aside)?;
        out.write_all(bytes)?;
        out.sync_all()?;
        atomic_file::sync_dir(dir)?;
        Ok(aside)
    }
}

/// Before an open reads the journal: fsyncs it (bytes an earlier process wrote and did not
/// sync are on disk before anything is built on them: an index that applied a record the
/// disk then loses would be ahead of its journal), then drops the cached pages of its tail,
/// so that the scan reads from the disk what a failed fsync may have left clean in the cache
/// and not on disk (Linux marks such pages clean: "fsyncgate"). Only the tail: a halted
/// writer cut its file back after at most one record. Returns the file's length.
pub fn settle<F: JournalFile>(file: &F) -> io::Result<u64> {
    file.sync_all()?;
    let len = file.len()?;
    file.drop_cached_pages(len.saturating_sub(UNSETTLED_TAIL));
    Ok(len)
}
