//! The real journal (append, the open's scan and torn-tail cut, `resume_after_fault`) over
//! the fault-injecting file of `fault_file.rs`, thousands of seeded runs of random appends,
//! write and fsync failures (with Linux's "fsyncgate" behaviour), disks full, read-only or
//! dying, power cuts tearing the last write at any byte, and processes killed without one.
//!
//! After every open: every acknowledged record (its append returned `Ok`) is there, byte for
//! byte, in order, and nothing else but possibly the one unacknowledged record whose append
//! failed, whole; and what the open accepted is on the disk, not only in the cache. After
//! every resume: the disk holds exactly the acknowledged records, and appending continues
//! after the last one.
//!
//! `EMCF_FAULT_SEEDS=n` runs n seeds (3,000 by default); `EMCF_FAULT_SEED=s` runs seed s
//! alone. A failure names its seed.

use std::path::{Path, PathBuf};

use super::fault_file::{Disk, FaultFile, Reader, Rng, Shot, Sticky};
use super::org;
use crate::store::embedded::event::{hash, Event, Hash};
use crate::store::embedded::journal::{self, Journal, Mode};
use crate::store::embedded::StoreError;
use crate::store::FaultKind;

/// One acknowledged record: its seq, its whole frame as written, its payload's hash.
#[derive(Debug, Clone)]
struct Acked {
    seq: u64,
    frame: Vec<u8>,
    hash: Hash,
}

/// What the test knows the journal must hold.
#[derive(Debug, Default)]
struct Expected {
    acked: Vec<Acked>,
    /// Their frames, one after the other: what the journal must be.
    bytes: Vec<u8>,
    /// The frame of the last append that failed, if nothing was acknowledged after it: it
    /// may be on disk, whole, or not at all.
    failed: Option<Vec<u8>>,
}

impl Expected {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn push(&mut self, acked: Acked) {
        self.bytes.extend_from_slice(&acked.frame);
        self.acked.push(acked);
    }

    fn last_seq(&self) -> u64 {
        self.acked.last().map_or(0, |a| a.seq)
    }
}

fn payload(frame: &[u8]) -> &[u8] {
    &frame[8..]
}

/// The journal's part of `EmbeddedStore::open` over the fault file: settle, scan, cut a torn tail.
fn open(disk: &Disk, path: &Path) -> Result<(Journal<FaultFile>, Vec<Hash>), StoreError> {
    let file = disk.file();
    let len = journal::settle(&file).map_err(StoreError::Io)?;
    let mut found = Vec::new();
    let scanned = journal::scan(
        &mut Reader::new(&file),
        len,
        Mode::Open,
        path,
        |_, hash, _| {
            found.push(*hash);
            Ok(())
        },
    )?;
    Ok((Journal::resume(path, file, &scanned)?, found))
}

/// Opens and checks what the open found against `expected` (which then takes the failed
/// record if the open found it).
fn open_and_check(
    disk: &Disk,
    path: &Path,
    expected: &mut Expected,
    power_cut: bool,
) -> Journal<FaultFile> {
    let asides = disk.aside().len();
    let before = disk.on_disk();
    let (journal, found) = open(disk, path).unwrap_or_else(|e| panic!("open failed: {e}"));
    let acked = expected.acked.len();
    assert!(
        found.len() >= acked,
        "acknowledged records lost: {} found, {acked} acknowledged",
        found.len()
    );
    for (i, a) in expected.acked.iter().enumerate() {
        assert_eq!(
            found[i], a.hash,
            "acknowledged record seq {} changed",
            a.seq
        );
    }
    match (found.len() - acked, expected.failed.take()) {
        (0, _) => {}
        (1, Some(frame)) => {
            assert_eq!(
                found[acked],
                hash(payload(&frame)),
                "the record after the acknowledged ones is not the failed append, whole"
            );
            expected.push(Acked {
                seq: expected.last_seq() + 1,
                hash: found[acked],
                frame,
            });
        }
        (extra, _) => panic!("{extra} records beyond the acknowledged ones"),
    }
    assert_eq!(journal.last_seq(), expected.last_seq());
    assert_eq!(
        journal.head(),
        expected
            .acked
            .last()
            .map_or(crate::store::embedded::event::GENESIS, |a| a.hash)
    );
    let bytes = expected.bytes();
    assert_eq!(journal.end(), bytes.len() as u64);
    assert!(
        disk.on_disk() == *bytes,
        "after the open the disk holds {} bytes, the records it accepted are {} bytes \
         (or differ): what it accepted is not durable",
        disk.on_disk().len(),
        bytes.len()
    );
    assert_eq!(disk.cached_len(), bytes.len() as u64);
    // A torn tail cut off was kept aside, byte for byte.
    if power_cut && before.len() > bytes.len() {
        let aside = disk.aside();
        assert_eq!(aside.len(), asides + 1, "torn tail not kept");
        assert!(before.ends_with(&aside[asides].1));
    }
    journal
}

/// A record of some size: organizations with names of 0..400 characters (several records
/// in a page), one in eight up to 6000 (records across pages).
fn event(rng: &mut Rng) -> Event {
    let mut o = org("acme");
    let most = if rng.one_in(8) { 6000 } else { 400 };
    o.name = "x".repeat(rng.below(most) as usize);
    Event::OrganizationSaved(o)
}

const ERRNOS: [i32; 4] = [libc::ENOSPC, libc::EIO, libc::EROFS, libc::EDQUOT];

/// One seeded run.
fn run(seed: u64) {
    let mut rng = Rng::new(seed);
    let path = PathBuf::from("/fault-file/journal/journal.log");
    let mut disk = Disk::with(Vec::new(), rng.next());
    let mut expected = Expected::default();
    let mut journal = open_and_check(&disk, &path, &mut expected, true);
    let steps = 10 + rng.below(40);
    for _ in 0..steps {
        match rng.below(100) {
            0..=59 => {
                if rng.one_in(6) {
                    let errno = ERRNOS[rng.below(4) as usize];
                    disk.arm(Some(if rng.one_in(2) {
                        Shot::Write {
                            after: rng.below(3100) as usize,
                            errno,
                        }
                    } else {
                        Shot::Sync {
                            errno,
                            gate: !rng.one_in(4),
                            remount_ro: rng.one_in(3),
                        }
                    }));
                }
                let halted = journal.fault().is_some();
                let writes = disk.writes();
                let appended = journal.append(event(&mut rng));
                disk.arm(None);
                match appended {
                    Ok((record, digest, _)) => {
                        assert!(!halted, "a halted journal appended");
                        let frame = disk.last_write().unwrap_or_default();
                        assert_eq!(hash(payload(&frame)), digest);
                        assert_eq!(record.seq, expected.last_seq() + 1);
                        expected.push(Acked {
                            seq: record.seq,
                            frame,
                            hash: digest,
                        });
                        expected.failed = None;
                    }
                    Err(StoreError::Halted(_)) if halted => {
                        assert_eq!(disk.writes(), writes, "a halted journal wrote");
                    }
                    Err(e) => {
                        assert!(!halted, "{e}");
                        let fault = journal.fault().expect("a failed append halts");
                        let StoreError::Io(io) = &e else {
                            panic!("{e}")
                        };
                        assert_eq!(fault.kind, FaultKind::of(io));
                        expected.failed = disk.last_write();
                    }
                }
            }
            60..=67 => disk.set_sticky(Some(match rng.below(3) {
                0 => Sticky::NoSpace,
                1 => Sticky::ReadOnly,
                _ => Sticky::Dying,
            })),
            68..=74 => disk.set_sticky(None),
            75..=86 => {
                let was = journal.fault().is_some();
                let sticky = disk.sticky();
                let failing = sticky.is_some() || (was && rng.one_in(5));
                if disk.sticky().is_none() && failing {
                    let errno = ERRNOS[rng.below(4) as usize];
                    let gate = !rng.one_in(4);
                    disk.arm(Some(Shot::Sync {
                        errno,
                        gate,
                        remount_ro: false,
                    }));
                }
                let resumed = journal.resume_after_fault();
                disk.arm(None);
                match resumed {
                    Ok(()) => {
                        assert!(
                            !was || sticky.is_none(),
                            "resumed on a disk still {sticky:?}"
                        );
                        assert!(journal.fault().is_none());
                        let bytes = expected.bytes().to_vec();
                        assert_eq!(journal.end(), bytes.len() as u64);
                        assert_eq!(journal.last_seq(), expected.last_seq());
                        if was {
                            assert!(
                                disk.on_disk() == bytes,
                                "resumed, but the disk holds {} bytes where the acknowledged \
                                 records are {} (or differ)",
                                disk.on_disk().len(),
                                bytes.len()
                            );
                            assert_eq!(disk.cached_len(), bytes.len() as u64);
                            // Cut back: the failed append can no longer appear.
                            expected.failed = None;
                        }
                    }
                    Err(StoreError::Damaged { reason, .. }) => {
                        panic!("resume found damage the model never makes: {reason}")
                    }
                    Err(e) => {
                        assert!(failing, "resume failed on a healthy disk: {e}");
                        assert!(
                            journal.fault().is_some(),
                            "a failed resume left it writable"
                        );
                    }
                }
            }
            87..=95 => {
                drop(journal);
                disk = disk.power_cut(rng.one_in(4));
                journal = open_and_check(&disk, &path, &mut expected, true);
            }
            _ => {
                drop(journal);
                disk.restart();
                journal = open_and_check(&disk, &path, &mut expected, false);
            }
        }
    }
    drop(journal);
    let disk = disk.power_cut(rng.one_in(4));
    let mut journal = open_and_check(&disk, &path, &mut expected, true);
    // It still appends, and that survives one more cut.
    let (record, digest, _) = journal
        .append(event(&mut rng))
        .unwrap_or_else(|e| panic!("append after the last open: {e}"));
    expected.push(Acked {
        seq: record.seq,
        frame: disk.last_write().unwrap_or_default(),
        hash: digest,
    });
    drop(journal);
    open_and_check(&disk.power_cut(false), &path, &mut expected, true);
}

fn seeds() -> Vec<u64> {
    let var = |name| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    match (var("EMCF_FAULT_SEED"), var("EMCF_FAULT_SEEDS")) {
        (Some(seed), _) => vec![seed],
        (None, n) => (0..n.unwrap_or(3000)).collect(),
    }
}

#[test]
fn acknowledged_records_survive_faults_and_power_cuts_over_many_seeds() {
    for seed in seeds() {
        let outcome = std::panic::catch_unwind(|| run(seed));
        if let Err(panic) = outcome {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("seed {seed} failed (rerun it alone with EMCF_FAULT_SEED={seed}): {why}");
        }
    }
}
