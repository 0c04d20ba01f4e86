//! An in-memory file for the journal ([`JournalFile`]) that models what Linux does with a
//! file's pages, so that the real append, open and resume can be run over crashes and
//! storage faults:
//!
//! * A write goes to the page cache (dirty); a successful `fsync` writes every dirty byte
//!   and the length to the disk. A power cut keeps only the disk, plus any prefix of the
//!   bytes not yet synced (the kernel writes back when it likes; the cut can tear at any
//!   byte), optionally followed by garbage (see [`Disk::power_cut`]).
//! * A failed `fsync` may have written some dirty pages and not others. With `gate` (what
//!   Linux does since "fsyncgate"), the pages it did not write are marked clean anyway: the
//!   cache still shows them, reads return them, the next `fsync` says `Ok`, and the disk never
//!   gets them; dropping the cached pages (`posix_fadvise(DONTNEED)`) shows the disk again.
//!   Without `gate`, they stay dirty and a later `fsync` may write them. A length change
//!   (an extension, a truncation) is metadata a journaling file system commits whatever became
//!   of the data: it stays pending until a sync succeeds.
//! * Faults on command: one write fails after some bytes, one `fsync` fails; or, until
//!   cleared, the disk is full (a write needing a new block fails: ENOSPC), read-only
//!   (EROFS), or dying (writes land in the cache, every `fsync` of dirty pages fails with
//!   EIO, `gate`, and a read of a dropped page fails).
//! * A process that dies without a power cut ([`Disk::restart`]) leaves the cache as it is.
//!
//! The model assumes a failed or torn write never changes bytes that were already on disk.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::store::embedded::journal::{JournalFile, PAGE};
use crate::sync;

/// A small seeded generator (splitmix64): the same seed gives the same run, everywhere.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 0..n (0 when n is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// true with probability 1/n.
    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// A storage failure that lasts until cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sticky {
    /// ENOSPC on any write that needs a new block.
    NoSpace,
    /// EROFS on every change.
    ReadOnly,
    /// EIO: every fsync of dirty pages fails (and marks them clean), dropped pages unreadable.
    Dying,
}

/// A one-shot failure, for the next operation of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shot {
    /// The next write stores `after` bytes, then fails with `errno`.
    Write { after: usize, errno: i32 },
    /// The next fsync fails with `errno` after writing back some of the dirty pages; with
    /// `gate` the others are marked clean without being written; with `remount_ro` the file
    /// system then turns read-only (ext4's `errors=remount-ro`) until cleared.
    Sync {
        errno: i32,
        gate: bool,
        remount_ro: bool,
    },
}

#[derive(Debug)]
struct State {
    /// What is on the disk (its length is the length on disk).
    disk: Vec<u8>,
    /// What the kernel shows (its length is the file's length).
    cache: Vec<u8>,
    /// Which bytes of `cache` are not on disk and will be written back.
    dirty: Vec<bool>,
    /// No byte outside `dirty_lo..dirty_hi` is dirty (for speed).
    dirty_lo: usize,
    dirty_hi: usize,
    /// The length changed since the last sync.
    len_dirty: bool,
    /// Reads at or after this offset come from the disk, which fails (`Sticky::Dying`).
    unreadable_from: Option<u64>,
    sticky: Option<Sticky>,
    shot: Option<Shot>,
    rng: Rng,
    /// The bytes of each write asked for (whole, even when it failed), last last.
    writes: Vec<Vec<u8>>,
    /// Files kept aside (torn tails): name, bytes.
    aside: Vec<(String, Vec<u8>)>,
}

/// The disk under one journal file; [`FaultFile`]s are handles on it.
#[derive(Debug, Clone)]
pub(crate) struct Disk(Arc<Mutex<State>>);

/// A handle on a [`Disk`]'s file.
#[derive(Debug)]
pub(crate) struct FaultFile(Disk);

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl Disk {
    /// A disk holding `bytes` (synced), its write-backs drawn from `seed`.
    pub(crate) fn with(bytes: Vec<u8>, seed: u64) -> Disk {
        Disk(Arc::new(Mutex::new(State {
            dirty: vec![false; bytes.len()],
            dirty_lo: 0,
            dirty_hi: 0,
            cache: bytes.clone(),
            disk: bytes,
            len_dirty: false,
            unreadable_from: None,
            sticky: None,
            shot: None,
            rng: Rng::new(seed),
            writes: Vec::new(),
            aside: Vec::new(),
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        sync::lock(&self.0)
    }

    /// A handle on the file.
    pub(crate) fn file(&self) -> FaultFile {
        FaultFile(self.clone())
    }

    /// What is on the disk now.
    pub(crate) fn on_disk(&self) -> Vec<u8> {
        self.state().disk.clone()
    }

    /// The file's length as the kernel shows it.
    pub(crate) fn cached_len(&self) -> u64 {
        self.state().cache.len() as u64
    }

    /// The bytes of the last write asked for.
    pub(crate) fn last_write(&self) -> Option<Vec<u8>> {
        self.state().writes.last().cloned()
    }

    /// How many writes were asked for.
    pub(crate) fn writes(&self) -> usize {
        self.state().writes.len()
    }

    /// The files kept aside.
    pub(crate) fn aside(&self) -> Vec<(String, Vec<u8>)> {
        self.state().aside.clone()
    }

    pub(crate) fn set_sticky(&self, sticky: Option<Sticky>) {
        let mut state = self.state();
        state.sticky = sticky;
        if sticky != Some(Sticky::Dying) {
            state.unreadable_from = None;
        }
    }

    pub(crate) fn sticky(&self) -> Option<Sticky> {
        self.state().sticky
    }

    /// The next operation of its kind fails (replacing a shot not taken yet; `None` clears).
    pub(crate) fn arm(&self, shot: Option<Shot>) {
        self.state().shot = shot;
    }

    /// A power cut: a new disk with what was on this one, plus a prefix (any byte) of the
    /// dirty bytes in file order, and with `garbage`, a few bytes after that: zeros (blocks
    /// allocated, never written), or, when the cut tore a write past its record's 8-byte
    /// header, random bytes (stale blocks). Random bytes where a header would start read as
    /// a length above 1 MiB, which the recovery rules call damage, not a torn tail.
    pub(crate) fn power_cut(&self, garbage: bool) -> Disk {
        let mut state = self.state();
        let dirty: Vec<usize> = state.dirty_range().filter(|&i| state.dirty[i]).collect();
        let kept = state.rng.below(dirty.len() as u64 + 1) as usize;
        for &i in &dirty[..kept] {
            let byte = state.cache[i];
            put(&mut state.disk, i, byte);
        }
        let mut image = state.disk.clone();
        if garbage {
            let random = kept >= 8 && kept < dirty.len() && state.rng.one_in(2);
            let n = 1 + state.rng.below(48) as usize;
            for _ in 0..n {
                let byte = if random { state.rng.next() as u8 } else { 0 };
                image.push(byte);
            }
        }
        let seed = state.rng.next();
        Disk::with(image, seed)
    }

    /// The process died, the machine did not: the cache stays, faults are gone.
    pub(crate) fn restart(&self) {
        let mut state = self.state();
        state.sticky = None;
        state.shot = None;
        state.unreadable_from = None;
    }
}

/// Writes `byte` at `i` of the disk, extending it with zeros (blocks never written).
fn put(disk: &mut Vec<u8>, i: usize, byte: u8) {
    if disk.len() <= i {
        disk.resize(i + 1, 0);
    }
    disk[i] = byte;
}

impl State {
    /// Where dirty bytes may be.
    fn dirty_range(&self) -> std::ops::Range<usize> {
        let end = self.dirty_hi.min(self.cache.len());
        self.dirty_lo.min(end)..end
    }

    fn mark_dirty(&mut self, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        if self.dirty_lo >= self.dirty_hi {
            (self.dirty_lo, self.dirty_hi) = (range.start, range.end);
        } else {
            self.dirty_lo = self.dirty_lo.min(range.start);
            self.dirty_hi = self.dirty_hi.max(range.end);
        }
        self.dirty[range].fill(true);
    }

    /// A successful sync: every dirty byte goes to the disk, and the length if it changed.
    fn flush(&mut self) {
        for i in self.dirty_range() {
            if self.dirty[i] {
                let byte = self.cache[i];
                put(&mut self.disk, i, byte);
                self.dirty[i] = false;
            }
        }
        (self.dirty_lo, self.dirty_hi) = (0, 0);
        if self.len_dirty {
            self.disk.resize(self.cache.len(), 0);
            self.len_dirty = false;
        }
    }

    /// A failed sync: some dirty pages written, the others marked clean (`gate`) or left
    /// dirty. A length change stays pending: it is metadata, which a journaling file system
    /// (ext4) commits on its own, whatever became of the data pages.
    fn fail_flush(&mut self, gate: bool) {
        let range = self.dirty_range();
        let page = PAGE as usize;
        let mut at = range.start - range.start % page;
        while at < range.end {
            let pages = at..(at + page).min(self.cache.len());
            at += page;
            if !self.dirty[pages.clone()].contains(&true) {
                continue;
            }
            let written = self.rng.one_in(2);
            for i in pages {
                if self.dirty[i] && written {
                    let byte = self.cache[i];
                    put(&mut self.disk, i, byte);
                }
                if written || gate {
                    self.dirty[i] = false;
                }
            }
        }
        if gate {
            (self.dirty_lo, self.dirty_hi) = (0, 0);
        }
    }

    fn something_dirty(&self) -> bool {
        self.len_dirty || self.dirty[self.dirty_range()].contains(&true)
    }

    fn sync(&mut self) -> io::Result<()> {
        if let Some(Shot::Sync {
            errno: code,
            gate,
            remount_ro,
        }) = self.shot
        {
            self.shot = None;
            self.fail_flush(gate);
            if remount_ro {
                self.sticky = Some(Sticky::ReadOnly);
            }
            return Err(errno(code));
        }
        match self.sticky {
            Some(Sticky::ReadOnly) if self.something_dirty() => {
                self.fail_flush(true);
                Err(errno(libc::EROFS))
            }
            Some(Sticky::Dying) if self.something_dirty() => {
                self.fail_flush(true);
                Err(errno(libc::EIO))
            }
            _ => {
                self.flush();
                Ok(())
            }
        }
    }
}

impl JournalFile for FaultFile {
    fn write_all_at(&self, bytes: &[u8], offset: u64) -> io::Result<()> {
        let mut state = self.0.state();
        state.writes.push(bytes.to_vec());
        let offset = offset as usize;
        let (take, failure) = match (state.shot, state.sticky) {
            (Some(Shot::Write { after, errno: code }), _) => {
                state.shot = None;
                (after.min(bytes.len()), Some(errno(code)))
            }
            (_, Some(Sticky::ReadOnly)) => (0, Some(errno(libc::EROFS))),
            (_, Some(Sticky::NoSpace)) => {
                // The last block has room up to its end; nothing more can be allocated.
                let room = state.cache.len().div_ceil(PAGE as usize) * PAGE as usize;
                let fits = room.saturating_sub(offset).min(bytes.len());
                if fits == bytes.len() {
                    (fits, None)
                } else {
                    (fits, Some(errno(libc::ENOSPC)))
                }
            }
            _ => (bytes.len(), None),
        };
        let end = offset + take;
        if state.cache.len() < end {
            state.cache.resize(end, 0);
            state.dirty.resize(end, false);
            state.len_dirty = true;
        }
        state.cache[offset..end].copy_from_slice(&bytes[..take]);
        state.mark_dirty(offset..end);
        failure.map_or(Ok(()), Err)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let state = self.0.state();
        let end = offset as usize + buf.len();
        if state.unreadable_from.is_some_and(|from| end as u64 > from) {
            return Err(errno(libc::EIO));
        }
        let bytes = state
            .cache
            .get(offset as usize..end)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.state().sync()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.state().sync()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.0.state();
        if state.sticky == Some(Sticky::ReadOnly) {
            return Err(errno(libc::EROFS));
        }
        let len = len as usize;
        state.cache.resize(len, 0);
        state.dirty.resize(len, false);
        state.len_dirty = true;
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.cached_len())
    }

    fn drop_cached_pages(&self, from: u64) {
        let mut state = self.0.state();
        let from = from - from % PAGE;
        if state.sticky == Some(Sticky::Dying) {
            state.unreadable_from = Some(from);
        }
        let (from, len) = (from as usize, state.cache.len());
        let dirty = state.dirty_range();
        for i in (from..len).filter(|i| dirty.contains(i)) {
            if !state.dirty[i] {
                state.cache[i] = state.disk.get(i).copied().unwrap_or(0);
            }
        }
        // The clean bytes outside the dirty range, a slice at a time.
        let State { cache, disk, .. } = &mut *state;
        for range in [from..dirty.start.max(from), dirty.end.max(from)..len] {
            let range = range.start.min(len)..range.end.min(len);
            let on_disk = range.start.min(disk.len())..range.end.min(disk.len());
            let n = on_disk.len();
            cache[range.start..range.start + n].copy_from_slice(&disk[on_disk]);
            cache[range.start + n..range.end].fill(0);
        }
    }

    fn reopen(&self, _path: &Path) -> io::Result<Self> {
        Ok(self.0.file())
    }

    fn keep_aside(&self, path: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let mut state = self.0.state();
        match state.sticky {
            Some(Sticky::NoSpace) => return Err(errno(libc::ENOSPC)),
            Some(Sticky::ReadOnly) => return Err(errno(libc::EROFS)),
            Some(Sticky::Dying) => return Err(errno(libc::EIO)),
            None => {}
        }
        state.aside.push((name.to_string(), bytes.to_vec()));
        Ok(path.with_file_name(name))
    }
}

/// Reads a [`FaultFile`] as a stream, for the journal's scan.
pub(crate) struct Reader<'a> {
    file: &'a FaultFile,
    at: u64,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(file: &'a FaultFile) -> Reader<'a> {
        Reader { file, at: 0 }
    }
}

impl io::Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = self.file.len()?;
        let n = (len.saturating_sub(self.at) as usize).min(buf.len());
        self.file.read_exact_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl io::Seek for Reader<'_> {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        self.at = match to {
            io::SeekFrom::Start(at) => at,
            io::SeekFrom::Current(d) => self.at.saturating_add_signed(d),
            io::SeekFrom::End(d) => self.file.len()?.saturating_add_signed(d),
        };
        Ok(self.at)
    }
}
