//! The steps of the disk-full tests that depend on where the journal's last page ends: the
//! gateway paused at a failpoint, one invoice's records measured, the journal padded with
//! organization records, the disk filled while an invoice is held.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::common::Response;
use crate::tmpfs::Tmpfs;

/// The gateway's pause at `point` (`EMCF_PAUSE_AT`, src/failpoint.rs; `after_finalize`
/// unless said): armed while its file exists; the gateway writes `<file>.here` when it waits
/// there.
pub(super) struct Pause {
    pub(super) path: PathBuf,
}

impl Pause {
    pub(super) fn env(&self) -> String {
        self.env_at("after_finalize")
    }

    pub(super) fn env_at(&self, point: &str) -> String {
        format!("{point}:{}", self.path.display())
    }

    pub(super) fn arm(&self) {
        std::fs::write(&self.path, "armed").expect("pause armed");
    }

    pub(super) async fn reached(&self) {
        let here = PathBuf::from(format!("{}.here", self.path.display()));
        let started = Instant::now();
        while !here.exists() {
            assert!(started.elapsed() < Duration::from_secs(20), "never paused");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(super) fn release(&self) {
        std::fs::remove_file(&self.path).expect("pause released");
    }
}

/// An invoice sent by `send` with `pause` armed measures the records of one invoice in the
/// journal of `dir` (its intent while paused, then its certification, returned); then the
/// journal is padded for the next one ([`pad_journal`], with `org`'s records).
pub(super) async fn measure_then_pad(
    dir: &Path,
    org: &str,
    pause: &Pause,
    send: impl FnOnce() -> JoinHandle<Response>,
) -> u64 {
    let before = journal_len(dir);
    pause.arm();
    let first = send();
    pause.reached().await;
    let intent = journal_len(dir) - before;
    pause.release();
    assert_eq!(first.await.expect("request").status, 200);
    let certification = journal_len(dir) - before - intent;
    pad_journal(dir, org, intent);
    certification
}

/// An invoice sent by `send` with `pause` armed, held there (its channel has certified it, its
/// certification is not journaled yet) once the journal's last page has no room for a
/// `certification` record; returns the request.
pub(super) async fn held_after_finalize(
    dir: &Path,
    pause: &Pause,
    certification: u64,
    send: impl FnOnce() -> JoinHandle<Response>,
) -> JoinHandle<Response> {
    pause.arm();
    let pending = send();
    pause.reached().await;
    let slack = (PAGE - journal_len(dir) % PAGE) % PAGE;
    assert!(
        slack + 32 < certification,
        "the certification would fit in the page: {slack} of {certification}"
    );
    pending
}

/// Once the index has written the held invoice's intent (sled flushes within half a
/// second), the disk fills and the paused gateway goes on; returns the filler.
pub(super) async fn fill_then_release(disk: &Tmpfs, pause: &Pause) -> PathBuf {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let filler = disk.fill();
    pause.release();
    filler
}

/// The size of the gateway's journal.
pub(super) fn journal_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("state").join("journal").join("journal.log"))
        .expect("journal")
        .len()
}

/// tmpfs gives space by pages: a record that fits in the journal's last page is written even
/// on a full file system.
pub(super) const PAGE: u64 = 4096;
/// What is left in the journal's last page once DF-A's intent is written: less than a
/// certification record, with room either side for records a few bytes longer or shorter
/// (their times).
pub(super) const SLACK: u64 = 128;

/// Renames the organization with `name_len` times `letter` (a record whose size follows the
/// name's); returns how much the journal grew.
fn org_record(dir: &Path, org: &str, letter: char, name_len: usize) -> u64 {
    let before = journal_len(dir);
    let name: String = std::iter::repeat_n(letter, name_len).collect();
    let out = tokio::task::block_in_place(|| {
        crate::common::cli(
            dir,
            &dir.join("config.toml"),
            &["org", "update", org, "--name", &name],
        )
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    journal_len(dir) - before
}

/// Pads the journal with organization records so that the next `intent` bytes end [`SLACK`]
/// bytes before a page boundary: the certification after them cannot fit on a full disk.
pub(super) fn pad_journal(dir: &Path, org: &str, intent: u64) {
    let small = org_record(dir, org, 'a', 10);
    let large = org_record(dir, org, 'b', 60);
    assert!(
        large.abs_diff(small + 50) < 4,
        "one byte of record per character of name"
    );
    let base = small - 10;
    let now = journal_len(dir);
    let mut padding = (4 * PAGE - SLACK - (now + intent) % PAGE) % PAGE;
    let count = loop {
        let count = padding.div_ceil(base + 100).max(1);
        if count * (base + 1) <= padding {
            break count;
        }
        padding += PAGE;
    };
    let mut left = padding - count * (base + 1);
    for i in 0..count {
        let extra = left.min(99);
        left -= extra;
        let letter = if i % 2 == 0 { 'c' } else { 'd' };
        org_record(dir, org, letter, 1 + extra as usize);
    }
}
