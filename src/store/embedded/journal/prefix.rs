//! The fast check of an open: the journal's records up to the index's position, checked
//! (headers, CRCs, seq, the SHA-256 chain) without parsing their events, on several threads.
//! See [`check_prefix`] and `open::replay`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use super::{Start, HEADER, MAX_RECORD};
use crate::store::embedded::event::{hash, Hash, GENESIS};

/// Bytes read at a time by [`check_prefix`] (small enough to stay in cache while checked).
const PREFIX_BLOCK: usize = 1 << 20;

/// The fast path of an open: checks that records 1..=`seq` of the journal are intact without
/// parsing their events (the index applied them already): every header, every CRC, seq
/// 1, 2, 3... and every `prev` link of the SHA-256 chain, and that record `seq`'s payload
/// hashes to `head` (the hash the index recorded for it). The payloads are hashed on several
/// threads. Returns where the records after `seq` start.
///
/// `None` at the first thing that is not exactly so (a bad or torn record, a gap, a broken
/// link, another hash, a payload that does not start with the writer's own
/// `{"seq":N,"prev":"<64 hex>"`, fewer than `seq` records, a read error): the caller then runs
/// the full [`scan`] from the start, which finds and classifies it. Passing this check implies
/// the full scan would accept the same records (byte-identical, by the chain, to those the
/// writer wrote and the index applied), so it changes no recovery outcome, only the time.
pub fn check_prefix(file: &mut File, len: u64, seq: u64, head: &Hash) -> Option<Start> {
    check_prefix_in_blocks(file, len, seq, head, PREFIX_BLOCK)
}

/// [`check_prefix`] reading `block` bytes at a time (small blocks in tests).
fn check_prefix_in_blocks(
    file: &mut File,
    len: u64,
    target: u64,
    head: &Hash,
    block: usize,
) -> Option<Start> {
    if target == 0 {
        return None;
    }
    let mut last = None;
    link_records(
        file,
        len,
        Some(target),
        block,
        &AtomicBool::new(false),
        |start| last = Some(start),
    );
    last.filter(|start| start.seq == target && start.head == *head)
}

/// How many of the last intact records a [`ChainCheck`] remembers.
const CHAIN_TAIL: usize = 1024;

/// The same check as [`check_prefix`] over the whole journal, started on a thread of its own
/// before the index is opened (so that the two overlap), for an index position not known yet:
/// it remembers where each of the last [`CHAIN_TAIL`] intact records ends.
pub struct ChainCheck {
    thread: Option<std::thread::JoinHandle<(u64, VecDeque<Start>)>>,
    cancel: Arc<AtomicBool>,
}

impl ChainCheck {
    /// Starts checking the journal at `path`; `None` if it cannot be opened (the open that
    /// follows reports why).
    pub fn spawn(path: &Path) -> Option<ChainCheck> {
        ChainCheck::spawn_with(path, PREFIX_BLOCK, CHAIN_TAIL)
    }

    fn spawn_with(path: &Path, block: usize, tail: usize) -> Option<ChainCheck> {
        let mut file = File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let thread = std::thread::Builder::new()
            .name("journal-check".to_string())
            .spawn(move || {
                let mut last = VecDeque::with_capacity(tail);
                link_records(&mut file, len, None, block, &stop, |start| {
                    if last.len() == tail {
                        last.pop_front();
                    }
                    last.push_back(start);
                });
                (len, last)
            })
            .ok()?;
        Some(ChainCheck {
            thread: Some(thread),
            cancel,
        })
    }

    /// What [`check_prefix`] would return for (`seq`, `head`) on a journal of `len` bytes:
    /// `Some` only if records 1..=`seq` were found intact, record `seq` among the last ones
    /// and hashing to `head`. `None` otherwise (the caller falls back to [`check_prefix`]).
    pub fn start_after(mut self, len: u64, seq: u64, head: &Hash) -> Option<Start> {
        if seq == 0 {
            // An empty index (its first build): nothing to skip, and no reason to wait for
            // the thread, which `Drop` stops.
            return None;
        }
        let (checked_len, last) = self.thread.take()?.join().ok()?;
        if checked_len != len {
            return None;
        }
        last.into_iter()
            .find(|start| start.seq == seq)
            .filter(|start| start.head == *head)
    }
}

impl Drop for ChainCheck {
    fn drop(&mut self) {
        // Not used (the open failed first): let the thread stop at its next block.
        self.cancel.store(true, Ordering::Release);
    }
}

/// Checks the records of `file` from its start, in order, and calls `linked` with where each
/// intact record ends, until record `target` (or the end of the journal), the first record
/// that is not intact, a read error, or `cancel`. This thread reads and frames the blocks;
/// worker threads check the CRCs and hash the payloads of the blocks in flight; the links are
/// checked here, in order, as their results come back.
fn link_records(
    file: &mut File,
    len: u64,
    target: Option<u64>,
    block: usize,
    cancel: &AtomicBool,
    linked: impl FnMut(Start),
) {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    if file.seek(SeekFrom::Start(0)).is_err() {
        return;
    }
    std::thread::scope(|scope| {
        let (jobs, queue) = mpsc::sync_channel::<Job>(workers);
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            scope.spawn(move || loop {
                let next = queue.lock().map(|q| q.recv());
                let Ok(Ok(job)) = next else { return };
                let checked = job.records.iter().map(|r| r.check(&job.buf)).collect();
                let _ = job.reply.send(checked);
            });
        }
        let limits = Limits {
            len,
            target: target.unwrap_or(u64::MAX),
            block,
            workers,
        };
        read_and_link(file, &limits, &jobs, cancel, linked);
        drop(jobs); // the workers end once the queue is empty
    });
}

/// What a worker finds in one block: each record's (SHA-256, decoded `prev`), or `None` at a
/// CRC mismatch or a malformed link.
type Checked = Option<Vec<(Hash, Hash)>>;

/// One block's payloads for a worker; the result goes back on `reply`.
struct Job {
    buf: Arc<Vec<u8>>,
    records: Vec<Framed>,
    reply: mpsc::Sender<Checked>,
}

/// A block sent to the workers: where its records start and end in the file, and their results.
struct InFlight {
    places: Vec<(u64, u64)>,
    result: mpsc::Receiver<Checked>,
}

/// The bounds of [`read_and_link`].
struct Limits {
    len: u64,
    target: u64,
    block: usize,
    workers: usize,
}

/// The reading side of [`link_records`].
fn read_and_link(
    file: &mut File,
    limits: &Limits,
    jobs: &mpsc::SyncSender<Job>,
    cancel: &AtomicBool,
    mut linked: impl FnMut(Start),
) -> Option<()> {
    let mut read_to = 0u64;
    let mut seq = 0u64; // the last record framed
    let mut linked_seq = 0u64; // the last record whose link was checked
    let mut prev = GENESIS;
    let mut offset = 0u64; // where the bytes of `carry` start in the file
    let mut carry: Vec<u8> = Vec::new();
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    loop {
        if cancel.load(Ordering::Acquire) {
            return None;
        }
        // The next block: the partial record left over, then up to `block` more bytes.
        let want = (limits.block as u64).min(limits.len - read_to);
        let mut stop = want == 0; // the end of the journal (a partial record left is torn)
        if want > 0 {
            let mut buf = Vec::with_capacity(carry.len() + want as usize);
            buf.extend_from_slice(&carry);
            (&mut *file).take(want).read_to_end(&mut buf).ok()?;
            if (buf.len() - carry.len()) as u64 != want {
                return None;
            }
            read_to += want;
            let framed = frame_records(&buf, seq, limits.target);
            seq += framed.records.len() as u64;
            stop = framed.bad || seq == limits.target;
            carry = buf[framed.end..].to_vec();
            if !framed.records.is_empty() {
                let places = framed
                    .records
                    .iter()
                    .map(|r| (offset + (r.start as u64 - HEADER), offset + r.end as u64))
                    .collect();
                let (reply, result) = mpsc::channel();
                jobs.send(Job {
                    buf: Arc::new(buf),
                    records: framed.records,
                    reply,
                })
                .ok()?;
                in_flight.push_back(InFlight { places, result });
            }
            offset += framed.end as u64;
        }
        while in_flight.len() > limits.workers || (stop && !in_flight.is_empty()) {
            let block = in_flight.pop_front()?;
            let results = block.result.recv().ok()??;
            for ((digest, to), (start, end)) in results.into_iter().zip(block.places) {
                if to != prev {
                    return None;
                }
                prev = digest;
                linked_seq += 1;
                linked(Start {
                    offset: end,
                    seq: linked_seq,
                    head: prev,
                    record_start: start,
                });
            }
        }
        if stop {
            return Some(());
        }
    }
}

/// The whole records at the start of a buffer (up to record `target`), where they end, and
/// whether framing stopped at a record that is not as the writer writes it.
struct FramedBlock {
    records: Vec<Framed>,
    end: usize,
    bad: bool,
}

/// A whole record in a block: its payload `start..end`, the CRC of its header, and where
/// its `prev` hex starts.
struct Framed {
    start: usize,
    end: usize,
    crc: u32,
    link: usize,
}

impl Framed {
    /// The payload's SHA-256 and its `prev` link decoded; `None` if the CRC does not match or
    /// the link is not 64 lowercase hex digits.
    fn check(&self, buf: &[u8]) -> Option<(Hash, Hash)> {
        let payload = &buf[self.start..self.end];
        if crc32fast::hash(payload) != self.crc {
            return None;
        }
        let mut link = [0u8; 32];
        let hex = &buf[self.link..self.link + 64];
        for (i, byte) in link.iter_mut().enumerate() {
            let (hi, lo) = (HEX[hex[2 * i] as usize], HEX[hex[2 * i + 1] as usize]);
            if (hi | lo) & 0xF0 != 0 {
                return None;
            }
            *byte = (hi << 4) | lo;
        }
        Some((hash(payload), link))
    }
}

/// Values of the lowercase hex digits; 0xFF for any other byte.
const HEX: [u8; 256] = {
    let mut table = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Frames the whole records of `buf`, which starts at record `seq + 1`, stopping after record
/// `target`, or at a bad header or a payload not as the writer writes it (`bad`).
fn frame_records(buf: &[u8], seq: u64, target: u64) -> FramedBlock {
    let mut records = Vec::new();
    let mut at = 0usize;
    let mut bad = false;
    while at + HEADER as usize <= buf.len() {
        let header = &buf[at..at + HEADER as usize];
        let n = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if n == 0 || n > MAX_RECORD {
            bad = true;
            break;
        }
        let start = at + HEADER as usize;
        let end = start + n as usize;
        if end > buf.len() {
            break;
        }
        let Some((record_seq, link)) = writer_prefix(&buf[start..end]) else {
            bad = true;
            break;
        };
        if record_seq != seq + 1 + records.len() as u64 {
            bad = true;
            break;
        }
        records.push(Framed {
            start,
            end,
            crc,
            link: start + link,
        });
        at = end;
        if record_seq == target {
            break;
        }
    }
    FramedBlock {
        records,
        end: at,
        bad,
    }
}

/// The `seq` of a payload as [`super::Journal::append`] writes it; `None` for anything else.
pub(super) fn writer_seq(payload: &[u8]) -> Option<u64> {
    writer_prefix(payload).map(|(seq, _)| seq)
}

/// `seq` and the offset of the 64 hex bytes of `prev` in a payload as [`Journal::append`]
/// writes it (`{"seq":N,"prev":"<64 hex>",...`); `None` for anything else.
fn writer_prefix(payload: &[u8]) -> Option<(u64, usize)> {
    let rest = payload.strip_prefix(b"{\"seq\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 19 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let seq = rest[..digits]
        .iter()
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    if !rest[digits..].starts_with(b",\"prev\":\"") {
        return None;
    }
    let link = b"{\"seq\":".len() + digits + b",\"prev\":\"".len();
    (payload.get(link + 64) == Some(&b'"')).then_some((seq, link))
}

#[cfg(test)]
mod tests;
