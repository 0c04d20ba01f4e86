//! Opening a large journal from the index's checkpoint, its history checked in the background
//! (`store/embedded/history.rs`). "Large" is 0 bytes here.

use std::time::Duration;

use super::*;
use crate::store::embedded::{DamageAt, EmbeddedStore, HistoryCheck, StoreOptions};

const P: Environment = Environment::Production;

fn background() -> StoreOptions {
    StoreOptions {
        background_check_above: Some(0),
        ..StoreOptions::default()
    }
}

fn open(dir: &Path) -> Result<EmbeddedStore, StoreError> {
    EmbeddedStore::open_with(dir, &background())
}

fn settled(store: &EmbeddedStore) -> HistoryCheck {
    store.wait_for_history_check(Duration::from_secs(20))
}

/// A store with 20 entries, closed (its index keeps a checkpoint at the last record).
fn twenty(dir: &Path) -> String {
    let store = seeded(dir);
    certify_range(&store, 0..20);
    let report = store.verify().unwrap().head_sha256;
    drop(store);
    report
}

#[test]
fn an_intact_journal_opens_from_the_checkpoint_and_is_found_intact() {
    let dir = tempfile::tempdir().unwrap();
    let head = twenty(dir.path());
    let store = open(dir.path()).unwrap();
    assert_eq!(settled(&store), HistoryCheck::Intact);
    assert_eq!(production_register(&store).len(), 20);
    // Appends continue the chain; the next open starts from the new checkpoint.
    let entry = certify(&store, "demo", P, "FN-20", 2026);
    assert_eq!(entry.sequence, 21);
    drop(store);
    let store = open(dir.path()).unwrap();
    assert_eq!(settled(&store), HistoryCheck::Intact);
    assert_eq!(production_register(&store).len(), 21);
    let report = store.verify().unwrap();
    assert_ne!(report.head_sha256, head);
    assert_eq!(report.records, 6 + 2 * 21);
}

#[test]
fn records_after_the_checkpoint_are_replayed_into_the_index() {
    // The index loses its last writes (deleted and rebuilt once, then the journal grows while
    // the checkpoint stays behind): the open scans from the checkpoint and applies the rest.
    let dir = tempfile::tempdir().unwrap();
    twenty(dir.path());
    let store = open(dir.path()).unwrap();
    let checkpoint = store
        .index()
        .unwrap()
        .checkpoint()
        .unwrap()
        .expect("a checkpoint");
    certify_range(&store, 20..25);
    // As if the service were killed: the checkpoint written at close is put back.
    drop(store);
    {
        let index = open_index(dir.path());
        index.set_checkpoint(&checkpoint).unwrap();
        index.flush().unwrap();
    }
    let store = open(dir.path()).unwrap();
    assert_eq!(settled(&store), HistoryCheck::Intact);
    assert_eq!(production_register(&store).len(), 25);
    assert_eq!(certify(&store, "demo", P, "FN-25", 2026).sequence, 26);
}

#[test]
fn damage_before_the_checkpoint_stops_writes_once_found() {
    let dir = tempfile::tempdir().unwrap();
    twenty(dir.path());
    let path = journal_path(dir.path());
    let (offset, _) = frames(dir.path())[3];
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset as usize + 20] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    // The default open refuses it at once, as before.
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Offset(offset),
    );
    // The background open serves, then finds it, names it, and refuses every write.
    let store = open(dir.path()).unwrap();
    match settled(&store) {
        HistoryCheck::Damaged { at, reason } => {
            assert_eq!(at, DamageAt::Offset(offset), "{reason}");
            assert!(reason.contains("CRC mismatch"), "{reason}");
        }
        other => panic!("expected damage, got {other:?}"),
    }
    assert_damaged(store.refuse_if_damaged(), DamageAt::Offset(offset));
    assert_damaged(
        store.record_intent(intent("demo", "AFTER")),
        DamageAt::Offset(offset),
    );
    // Reads still answer from the index; nothing was written.
    assert_eq!(production_register(&store).len(), 20);
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_record_changed_with_its_crc_recomputed_is_found_by_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    twenty(dir.path());
    let mut payloads: Vec<Vec<u8>> = frames(dir.path()).into_iter().map(|(_, p)| p).collect();
    let text = String::from_utf8(payloads[8].clone()).unwrap();
    payloads[8] = text.replacen("FN-1", "FN-X", 1).into_bytes();
    write_frames(dir.path(), &payloads);
    let store = open(dir.path()).unwrap();
    assert!(
        matches!(
            settled(&store),
            HistoryCheck::Damaged {
                at: DamageAt::Seq(_),
                ..
            }
        ),
        "{:?}",
        store.history_check()
    );
    assert!(store.record_intent(intent("demo", "AFTER")).is_err());
}

#[test]
fn a_checkpoint_that_does_not_hold_falls_back_to_the_full_check() {
    let dir = tempfile::tempdir().unwrap();
    twenty(dir.path());
    // The checkpoint points one byte off: not trusted, the whole journal is checked first.
    {
        let index = open_index(dir.path());
        let mut checkpoint = index.checkpoint().unwrap().expect("a checkpoint");
        checkpoint.start += 1;
        index.set_checkpoint(&checkpoint).unwrap();
        index.flush().unwrap();
    }
    let store = open(dir.path()).unwrap();
    assert_eq!(store.history_check(), HistoryCheck::Intact);
    assert_eq!(production_register(&store).len(), 20);
    // ... and the open wrote a good one again.
    drop(store);
    let store = open(dir.path()).unwrap();
    assert_eq!(settled(&store), HistoryCheck::Intact);
}

#[test]
fn a_journal_cut_before_the_checkpoint_is_damage_at_the_open() {
    let dir = tempfile::tempdir().unwrap();
    twenty(dir.path());
    let path = journal_path(dir.path());
    let (offset, _) = frames(dir.path())[30];
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..offset as usize]).unwrap();
    assert!(matches!(open(dir.path()), Err(StoreError::Damaged { .. })));
}
