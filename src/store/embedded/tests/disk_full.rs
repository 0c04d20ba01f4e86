//! A start on a full disk: sled cannot write its files, which are not damaged. The index is
//! never moved aside as corrupt; the open fails saying the disk is full (or opens), and once
//! space is freed the store opens with the same register. On a real file system: a small
//! tmpfs mounted by the test (root; skipped with a line saying so otherwise, failing under
//! `CI=true`).

use std::path::{Path, PathBuf};

use super::{certify, certify_range, production_register, seeded};
use crate::model::Environment;
use crate::store::embedded::{EmbeddedStore, StoreError};
use crate::store::FaultKind;

// The one tmpfs helper of the full-disk tests, shared with the test binaries.
#[path = "../../../../tests/support/tmpfs.rs"]
mod tmpfs;

/// A tmpfs mounted on a temporary folder: unmounted before the folder goes (fields drop in
/// order).
struct Mounted {
    fs: tmpfs::Tmpfs,
    _dir: tempfile::TempDir,
}

/// A tmpfs of `size` mounted on a new temporary folder for `subject`; `None` when not root
/// (skipped with a line saying so, failing under `CI=true`).
fn mounted(size: &str, subject: &str) -> Option<Mounted> {
    let dir = tempfile::tempdir().unwrap();
    let fs = tmpfs::Tmpfs::mount(dir.path(), size, subject)?;
    Some(Mounted { fs, _dir: dir })
}

fn moved_aside(state: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("index.sled."))
        })
        .collect()
}

#[test]
fn a_start_on_a_full_disk_never_calls_a_healthy_index_corrupt() {
    let Some(mounted) = mounted(
        "6m",
        "a_start_on_a_full_disk_never_calls_a_healthy_index_corrupt",
    ) else {
        return;
    };
    let fs = &mounted.fs;
    let state = fs.path().join("state");
    let store = seeded(&state);
    certify_range(&store, 0..20);
    let before = production_register(&store);
    drop(store);
    let filler = fs.fill();

    match EmbeddedStore::open(&state) {
        Err(StoreError::Io(error)) => {
            assert_eq!(
                FaultKind::of(&error),
                FaultKind::NoSpace,
                "an open on a full disk fails saying so: {error}"
            );
            eprintln!("open on a full disk: {error}");
        }
        Ok(store) => {
            // sled opened without writing: the register reads, and the first append says
            // the disk is full.
            assert_eq!(production_register(&store), before);
            let refused = store.record_intent(super::intent("demo", "FULL-1"));
            assert!(refused.is_err(), "an append on a full disk succeeded");
            assert_eq!(
                store.write_fault().map(|f| f.kind),
                Some(FaultKind::NoSpace)
            );
        }
        Err(other) => panic!("an open on a full disk failed with {other:?}"),
    }
    assert_eq!(
        moved_aside(&state),
        Vec::<PathBuf>::new(),
        "index moved aside"
    );

    std::fs::remove_file(filler).unwrap();
    let store = EmbeddedStore::open(&state).unwrap();
    assert_eq!(production_register(&store), before);
    assert_eq!(
        moved_aside(&state),
        Vec::<PathBuf>::new(),
        "index moved aside"
    );
    let entry = certify(&store, "demo", Environment::Production, "AFTER-1", 2026);
    assert_eq!(entry.sequence, before.len() as u64 + 1);
    store.verify().unwrap();
}

#[test]
fn a_full_disk_halts_appends_and_loses_nothing_acknowledged() {
    let Some(mounted) = mounted(
        "6m",
        "a_full_disk_halts_appends_and_loses_nothing_acknowledged",
    ) else {
        return;
    };
    let fs = &mounted.fs;
    let state = fs.path().join("state");
    let store = seeded(&state);
    certify_range(&store, 0..5);
    let before = production_register(&store);
    let filler = fs.fill();
    let mut acked = 0;
    while store.write_fault().is_none() {
        // Each intent needs room; the last block's slack takes a few.
        let rn = format!("FULL-{acked}");
        if let Err(e) = store.record_intent(super::intent("demo", &rn)) {
            eprintln!("refused on a full disk: {e}");
            break;
        }
        acked += 1;
        assert!(acked < 1000, "the disk never filled");
    }
    let fault = store.write_fault().expect("a write fault on a full disk");
    assert_eq!(fault.kind, FaultKind::NoSpace, "{}", fault.detail);
    assert!(
        store.resume_writes().is_err(),
        "resumed while the disk is still full"
    );
    assert!(store.write_fault().is_some());
    let refused = store.record_intent(super::intent("demo", "WHILE-FULL"));
    assert!(refused.is_err(), "an append while halted");

    std::fs::remove_file(filler).unwrap();
    let mut expected = before.clone();
    expected.extend(resumed_or_refused(&store, &fault));
    drop(store);
    // Whatever failed first, nothing acknowledged is lost, and a reopen (a restart) writes.
    let store = EmbeddedStore::open(&state).unwrap();
    assert!(store.write_fault().is_none());
    assert_eq!(production_register(&store), expected);
    let open = store.open_intents().unwrap().len();
    assert!(
        open == acked || open == acked + 1,
        "{open} intents open, {acked} acknowledged (and perhaps the one that failed)"
    );
    let entry = certify(&store, "demo", Environment::Production, "AFTER-2", 2026);
    assert_eq!(entry.sequence, expected.len() as u64 + 1);
    store.verify().unwrap();
}

/// Once space is freed the store resumes without a reopen, whichever failed first: the
/// journal, or the index (sled, which refuses everything after a failed write of its own
/// until `resume_writes` reopens it). Returns the entry certified after resuming.
fn resumed_or_refused(
    store: &EmbeddedStore,
    fault: &crate::store::embedded::WriteFault,
) -> Vec<crate::model::RegisterEntry> {
    let resumed = store.resume_writes();
    assert!(
        matches!(resumed, Ok(true)),
        "no resume after freeing space ({}): {resumed:?}",
        fault.detail
    );
    assert_eq!(store.write_fault(), None);
    let entry = certify(store, "demo", Environment::Production, "AFTER-1", 2026);
    eprintln!("resumed after: {}", fault.detail);
    vec![entry]
}

#[test]
fn a_refusing_file_system_is_told_from_a_damaged_index() {
    use crate::store::embedded::journal::storage_refusal;
    use std::io::{Error, ErrorKind};
    for code in [
        libc::ENOSPC,
        libc::EDQUOT,
        libc::EROFS,
        libc::EACCES,
        libc::EPERM,
        libc::EIO,
    ] {
        let refused = storage_refusal(&sled::Error::Io(Error::from_raw_os_error(code)));
        let kind = Error::from_raw_os_error(code).kind();
        assert_eq!(refused.map(|e| e.kind()), Some(kind), "errno {code}");
    }
    let full = storage_refusal(&sled::Error::Io(Error::from_raw_os_error(libc::ENOSPC)));
    assert_eq!(full.map(|e| FaultKind::of(&e)), Some(FaultKind::NoSpace));
    // What sled says of files it cannot read: damage, moved aside and rebuilt.
    for damaged in [
        sled::Error::Corruption { at: None, bt: () },
        sled::Error::Io(Error::new(ErrorKind::InvalidData, "bad snapshot")),
        sled::Error::Io(Error::new(ErrorKind::UnexpectedEof, "short read")),
        sled::Error::Unsupported("format".to_string()),
        sled::Error::ReportableBug("bug".to_string()),
    ] {
        assert!(storage_refusal(&damaged).is_none(), "{damaged:?}");
    }
}
