//! The journal on disk: round trip, torn tails, damage, tampering, index rebuilds, the lock.

use std::io::Write;

use super::*;
use crate::store::embedded::{DamageAt, EmbeddedStore, EntryFilter, StoreOptions, MAX_RECORD};

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;

/// Everything a caller can ask, to compare two openings.
fn answers(store: &EmbeddedStore) -> String {
    let mut out = format!("{:?}\n", store.organizations().unwrap());
    for org in ["demo", "acme"] {
        out += &format!("{:?}\n", store.keys_of(org).unwrap());
        for year in [2025, 2026] {
            out += &format!("{org} {year} {}\n", store.quota_used(org, year).unwrap());
        }
    }
    for env in [P, S] {
        let all = EntryFilter {
            org: None,
            environment: env,
            after_sequence: 0,
            limit: 100,
        };
        out += &format!("{:?}\n", store.entries(&all).unwrap());
    }
    out + &format!("{:?}\n", store.open_intents().unwrap())
}

/// A store with entries in both environments, an abandoned and an open intent, a disabled key.
fn busy(dir: &Path) -> EmbeddedStore {
    let store = seeded(dir);
    more(&store);
    store
}

/// The records of [`busy`] after the 6 of [`seeded`] (10 records, seq 7..=16).
fn more(store: &EmbeddedStore) {
    certify(store, "demo", P, "FN-1", 2025);
    certify(store, "demo", S, "FN-1", 2026);
    let dropped = store.record_intent(intent("acme", "A-1")).unwrap();
    store.record_abandoned(dropped, "device refused").unwrap();
    certify(store, "acme", P, "A-2", 2026);
    store.set_key_enabled("test-acme", false).unwrap();
    store.record_intent(intent("demo", "FN-2")).unwrap();
}

#[test]
fn records_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let store = busy(dir.path());
    let before = answers(&store);
    let report = store.verify().unwrap();
    assert_eq!(report.records, 16);
    assert_eq!(report.certified, 3);
    drop(store);

    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(answers(&store), before);
    assert_eq!(store.verify().unwrap(), report);
    assert_eq!(store.quota_used("demo", 2025).unwrap(), 1);
    assert!(!store.key("test-acme").unwrap().unwrap().enabled);
    // The chain: each prev is the hash of the payload before.
    let frames = frames(dir.path());
    let mut prev = "0".repeat(64);
    for (i, (_, payload)) in frames.iter().enumerate() {
        let record: serde_json::Value = serde_json::from_slice(payload).unwrap();
        assert_eq!(record["seq"], i as u64 + 1);
        assert_eq!(record["prev"], prev.as_str());
        prev = hex::encode(crate::store::embedded::event::hash(payload));
    }
    assert_eq!(prev, report.head_sha256);
}

#[test]
fn torn_tail_is_cut_off_and_appends_continue() {
    let dir = tempfile::tempdir().unwrap();
    let store = busy(dir.path());
    let report = store.verify().unwrap();
    drop(store);
    let path = journal_path(dir.path());
    let good_len = std::fs::metadata(&path).unwrap().len();
    let (_, last) = frames(dir.path()).pop().unwrap();
    let half = journal::frame(&last);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&half[..half.len() / 2])
        .unwrap();

    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
    assert_eq!(store.verify().unwrap(), report);
    let copies: Vec<_> = std::fs::read_dir(dir.path().join("journal"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&format!("torn-{good_len}-")))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let id = store.record_intent(intent("acme", "A-3")).unwrap();
    assert_eq!(id, report.records + 1);
    assert_eq!(store.verify().unwrap().records, report.records + 1);
}

#[test]
fn a_few_bytes_of_header_are_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    drop(seeded(dir.path()));
    let path = journal_path(dir.path());
    let good_len = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&[0x10, 0x00, 0x00]).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
    assert_eq!(store.verify().unwrap().records, 6);
}

#[test]
fn flipped_byte_in_the_middle_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    drop(busy(dir.path()));
    let path = journal_path(dir.path());
    let (offset, _) = frames(dir.path())[3];
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset as usize + 20] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let reason = assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Offset(offset),
    );
    assert!(reason.contains("CRC mismatch"), "{reason}");
    // Fail closed: the file was not touched.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn oversized_length_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    drop(seeded(dir.path()));
    let path = journal_path(dir.path());
    let (offset, _) = frames(dir.path())[5];
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset as usize..offset as usize + 4].copy_from_slice(&(MAX_RECORD + 1).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let reason = assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Offset(offset),
    );
    assert!(reason.contains("exceeds"), "{reason}");
}

#[test]
fn bad_last_record_is_truncated_when_the_index_never_applied_it() {
    let dir = tempfile::tempdir().unwrap();
    drop(seeded(dir.path()));
    let path = journal_path(dir.path());
    let (offset, _) = frames(dir.path())[5];
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    // The index applied seq 6: the journal lost an acknowledged record.
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Seq(6),
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Without an index it is a torn tail.
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offset);
    assert_eq!(store.verify().unwrap().records, 5);
    assert_eq!(store.keys_of("acme").unwrap().len(), 1);
}

#[test]
fn tampering_with_a_recomputed_crc_breaks_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let store = busy(dir.path());
    assert!(store.verify().is_ok());
    let mut payloads: Vec<_> = frames(dir.path()).into_iter().map(|(_, p)| p).collect();
    let text = String::from_utf8(payloads[7].clone()).unwrap();
    assert!(text.contains("\"rn\":\"FN-1\""), "{text}");
    payloads[7] = text
        .replace("\"rn\":\"FN-1\"", "\"rn\":\"FN-9\"")
        .into_bytes();
    write_frames(dir.path(), &payloads);

    let reason = assert_damaged(store.verify(), DamageAt::Seq(9));
    assert!(reason.contains("hash chain broken"), "{reason}");
    drop(store);
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Seq(9),
    );
}

#[test]
fn verify_detects_a_changed_last_record_and_stray_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let original: Vec<_> = frames(dir.path()).into_iter().map(|(_, p)| p).collect();
    let mut payloads = original.clone();
    let text = String::from_utf8(payloads[5].clone()).unwrap();
    payloads[5] = text.replace("till 1", "till 2").into_bytes();
    write_frames(dir.path(), &payloads);
    assert_damaged(store.verify(), DamageAt::Seq(6));

    write_frames(dir.path(), &original);
    assert_eq!(store.verify().unwrap().records, 6);
    let path = journal_path(dir.path());
    let end = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"junk").unwrap();
    assert_damaged(store.verify(), DamageAt::Offset(end));
}

#[test]
fn missing_journal_with_an_index_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    drop(seeded(dir.path()));
    let path = journal_path(dir.path());
    std::fs::remove_file(&path).unwrap();
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::JournalFile,
    );
    assert!(!path.exists(), "no new journal was started");
    // An emptied journal is no better.
    std::fs::write(&path, b"").unwrap();
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Seq(6),
    );
}

#[test]
fn deleted_index_is_rebuilt_with_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = busy(dir.path());
    let before = answers(&store);
    drop(store);
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(answers(&store), before);
    assert_eq!(store.quota_used("acme", 2026).unwrap(), 1);
    assert_eq!(store.open_intent_for("demo", P, "FN-2").unwrap(), Some(16));
}

#[test]
fn index_behind_the_journal_is_caught_up() {
    let dir = tempfile::tempdir().unwrap();
    drop(seeded(dir.path()));
    let index = dir.path().join("index.sled");
    let old = dir.path().join("old-index");
    copy_dir(&index, &old);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    more(&store); // on top of the 6 records in the old index
    let before = answers(&store);
    drop(store);
    std::fs::remove_dir_all(&index).unwrap();
    std::fs::rename(&old, &index).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(answers(&store), before);
}

#[test]
fn a_marker_older_than_the_data_is_replayed_idempotently() {
    let dir = tempfile::tempdir().unwrap();
    let store = busy(dir.path());
    let before = answers(&store);
    // Rewind the last-applied marker to seq 7 (its data for 8.. stays).
    let payloads = frames(dir.path());
    let mut marker = 7u64.to_be_bytes().to_vec();
    marker.extend_from_slice(&crate::store::embedded::event::hash(&payloads[6].1));
    store
        .index()
        .unwrap()
        .tree
        .insert(crate::store::embedded::index::META_APPLIED, marker)
        .unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(answers(&store), before);
    assert_eq!(
        store.index().unwrap().applied_seq().unwrap(),
        payloads.len() as u64
    );
    // Without any marker it is rebuilt.
    store
        .index()
        .unwrap()
        .tree
        .remove(crate::store::embedded::index::META_APPLIED)
        .unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(answers(&store), before);
}

#[test]
fn index_ahead_of_the_journal_is_damage_unless_a_rebuild_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    drop(busy(dir.path()));
    let mut payloads: Vec<_> = frames(dir.path()).into_iter().map(|(_, p)| p).collect();
    let n = payloads.len() as u64;
    payloads.pop();
    write_frames(dir.path(), &payloads);
    let reason = assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Seq(n),
    );
    assert!(reason.contains("journal ends at seq"), "{reason}");

    let options = StoreOptions {
        rebuild_stale_index: true,
        ..StoreOptions::default()
    };
    let store = EmbeddedStore::open_with(dir.path(), &options).unwrap();
    assert_eq!(store.verify().unwrap().records, n - 1);
    assert_eq!(store.open_intents().unwrap(), vec![]);
    let aside = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("index.sled.stale-")
        })
        .count();
    assert_eq!(aside, 1);
}

#[test]
fn a_second_open_is_locked_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let second = EmbeddedStore::open(dir.path());
    assert!(
        matches!(second, Err(StoreError::Locked)),
        "{:?}",
        second.err()
    );
    assert_eq!(
        StoreError::Locked.to_string(),
        "another gateway process uses this state directory"
    );
    drop(store);
    assert!(EmbeddedStore::open(dir.path()).is_ok());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn an_unreadable_index_is_moved_aside_and_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let entry = certify(&store, "demo", Environment::Production, "FN-1", 2026);
    drop(store);
    // What sled leaves after a crash during its snapshot, or any corruption it refuses.
    let index = dir.path().join("index.sled");
    for file in std::fs::read_dir(&index).unwrap() {
        let path = file.unwrap().path();
        if path.is_file() {
            std::fs::write(&path, b"\xff\xfe not sled \x00\x01").unwrap();
        }
    }
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(
        store
            .entry_by_rn("demo", Environment::Production, "FN-1")
            .unwrap(),
        Some(entry)
    );
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("index.sled.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "the unreadable index is kept aside");
    drop(store);

    // With no journal to rebuild from, it is damage, never a fresh start.
    let lonely = tempfile::tempdir().unwrap();
    let store = seeded(lonely.path());
    drop(store);
    std::fs::remove_file(journal_path(lonely.path())).unwrap();
    for file in std::fs::read_dir(lonely.path().join("index.sled")).unwrap() {
        let path = file.unwrap().path();
        if path.is_file() {
            std::fs::write(&path, b"garbage").unwrap();
        }
    }
    let opened = EmbeddedStore::open(lonely.path());
    assert!(
        matches!(opened, Err(StoreError::Damaged { .. })),
        "{:?}",
        opened.err()
    );
}
