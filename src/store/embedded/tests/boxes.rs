//! Counter continuity in the store: each box's last counters from its production entries
//! (filled at the first open of an index written by 1.0.0), fiscal anomalies journaled once
//! and acknowledged.

use super::{certify_range, seeded};
use crate::model::{BoxCounters, FiscalAnomaly, FiscalAnomalyKind, LostInvoice};
use crate::store::embedded::boxes::META_BOXES;
use crate::store::embedded::EmbeddedStore;

/// A store in `dir` with two certifications on `NIM1`, and that box's counters.
fn two_certified(dir: &std::path::Path) -> (EmbeddedStore, BoxCounters) {
    let store = seeded(dir);
    certify_range(&store, 0..2);
    let known = store.box_counters("NIM1").unwrap().unwrap();
    (store, known)
}

/// The register behind `known`'s box by the numbers `missing` (the box seen at the last).
fn register_behind(known: &BoxCounters, missing: Vec<u64>) -> FiscalAnomaly {
    let seen_tc = missing.last().copied().unwrap_or(known.tc);
    FiscalAnomaly {
        kind: FiscalAnomalyKind::RegisterBehind,
        missing,
        ..anomaly(known.clone(), seen_tc)
    }
}

/// A release that does not know the `b` keys applied a record since they were written: the
/// index's marker lags, and the next open reads them again from the journal.
fn lag_the_boxes_marker(store: &EmbeddedStore) {
    store
        .index()
        .unwrap()
        .tree
        .insert(META_BOXES, &1u64.to_be_bytes()[..])
        .unwrap();
}

fn anomaly(known: BoxCounters, seen_tc: u64) -> FiscalAnomaly {
    FiscalAnomaly {
        device: "box1".into(),
        nim: known.nim.clone(),
        kind: FiscalAnomalyKind::CounterWentBack,
        known,
        seen_nif: "NIF".into(),
        seen_tc,
        seen_in: "C1h".into(),
        missing: Vec::new(),
        last: None,
    }
}

#[test]
fn each_box_keeps_its_last_production_counters() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    assert_eq!(store.box_counters("NIM1").unwrap(), None);
    certify_range(&store, 0..3);
    let known = store.box_counters("NIM1").unwrap().expect("known box");
    // The fixtures' security elements: counters "id/id FV" (the intent's seq), qrCode NIF "NIF".
    assert_eq!(
        (known.tc, known.sequence, known.nif.as_str()),
        (11, 3, "NIF")
    );
}

#[test]
fn an_anomaly_is_journaled_once_and_acknowledged_with_who_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let (store, known) = two_certified(dir.path());
    let (first, new) = store
        .record_fiscal_anomaly(anomaly(known.clone(), 0))
        .unwrap();
    assert!(new);
    // Seen again at the certification (another TC, same register entry): the same anomaly.
    let (again, new) = store
        .record_fiscal_anomaly(anomaly(known.clone(), 1))
        .unwrap();
    assert!(!new);
    assert_eq!(again.id, first.id);
    let acked = store
        .acknowledge_fiscal_anomaly(first.id, "admin", "memory replaced", &[], &[])
        .unwrap();
    assert_eq!(
        acked.acknowledged.as_ref().map(|a| a.by.as_str()),
        Some("admin")
    );
    let records = store.verify().unwrap().records;
    // Acknowledging twice journals nothing; an unknown id is refused.
    store
        .acknowledge_fiscal_anomaly(first.id, "x", "y", &[], &[])
        .unwrap();
    assert_eq!(store.verify().unwrap().records, records);
    assert!(store
        .acknowledge_fiscal_anomaly(9999, "x", "y", &[], &[])
        .is_err());
    // After the acknowledgement, the same break is a new anomaly.
    assert!(store.record_fiscal_anomaly(anomaly(known, 0)).unwrap().1);
    drop(store);
    // The index is a projection: rebuilt from the journal, it says the same.
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let all = store.fiscal_anomalies().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].acknowledged.as_ref().map(|a| a.note.as_str()),
        Some("memory replaced")
    );
    assert!(all[1].acknowledged.is_none());
}

#[test]
fn an_index_without_box_counters_gets_them_at_its_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/release-1.0.0/journal.log"
    );
    std::fs::create_dir_all(dir.path().join("journal")).unwrap();
    std::fs::copy(fixture, dir.path().join("journal/journal.log")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let expected = store
        .box_counters("SIM0000001")
        .unwrap()
        .expect("from 1.0.0's entries");
    assert_eq!(
        (expected.tc, expected.sequence),
        (5, 5),
        "FX-SHOP-1, counters 4/5 EV"
    );
    assert_eq!(expected.nif, "A1234567B");
    // As 1.0.0 left its index: no `b` keys, no marker.
    let stale: Vec<_> = store
        .index()
        .unwrap()
        .tree
        .scan_prefix(b"b")
        .keys()
        .map(|k| k.unwrap())
        .collect();
    for key in stale {
        store.index().unwrap().tree.remove(key).unwrap();
    }
    store.index().unwrap().tree.remove(META_BOXES).unwrap();
    assert_eq!(store.box_counters("SIM0000001").unwrap(), None);
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(
        store.box_counters("SIM0000001").unwrap(),
        Some(expected.clone())
    );
    // A release that does not know the `b` keys applied a record since (the marker lags):
    // they are read again from the entries.
    lag_the_boxes_marker(&store);
    let bogus = crate::model::BoxCounters {
        tc: 1,
        ..expected.clone()
    };
    store
        .index()
        .unwrap()
        .tree
        .insert(b"bSIM0000001", serde_json::to_vec(&bogus).unwrap())
        .unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.box_counters("SIM0000001").unwrap(), Some(expected));
}

#[test]
fn an_acknowledged_register_behind_becomes_the_baseline_and_survives_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let (store, known) = two_certified(dir.path());
    let ahead = register_behind(&known, vec![known.tc + 1, known.tc + 2]);
    let (record, new) = store.record_fiscal_anomaly(ahead).unwrap();
    assert!(new);
    // Not acknowledged yet: the register still knows its own last entry.
    assert_eq!(store.box_counters("NIM1").unwrap(), Some(known.clone()));
    let numbers = [known.tc + 1, known.tc + 2];
    let rns = [LostInvoice {
        number: known.tc + 2,
        rn: "RB-9".into(),
        code_def: "DEF-9".into(),
        invoice_type: "FV".into(),
        at: None,
    }];
    let acked = store
        .acknowledge_fiscal_anomaly(record.id, "admin", "lost with the old disk", &numbers, &rns)
        .unwrap();
    assert_eq!(
        acked.acknowledged.as_ref().map(|a| a.numbers.clone()),
        Some(numbers.to_vec())
    );
    let baseline = BoxCounters {
        tc: known.tc + 2,
        ..known.clone()
    };
    assert_eq!(store.box_counters("NIM1").unwrap(), Some(baseline.clone()));
    drop(store);
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.box_counters("NIM1").unwrap(), Some(baseline.clone()));
    let all = store.fiscal_anomalies().unwrap();
    assert_eq!(all[0].anomaly.missing, numbers.to_vec());
    assert_eq!(
        all[0].acknowledged.as_ref().map(|a| a.rns.clone()),
        Some(rns.to_vec()),
        "the lost rns survive a rebuild"
    );
    // An index whose `b` keys lag (another release wrote to it) gets them again from the
    // entries and the acknowledgements: the baseline stays.
    lag_the_boxes_marker(&store);
    store.index().unwrap().tree.remove(b"bNIM1").unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.box_counters("NIM1").unwrap(), Some(baseline));
}

#[test]
fn the_same_anomaly_found_side_by_side_is_journaled_once() {
    let dir = tempfile::tempdir().unwrap();
    let (store, known) = two_certified(dir.path());
    let store = std::sync::Arc::new(store);
    let ahead = register_behind(&known, vec![known.tc + 1]);
    // The start-up check, an invoice's C1h and web API confirmations at once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (store, ahead, barrier) = (store.clone(), ahead.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                store.record_fiscal_anomaly(ahead).unwrap()
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|(_, new)| *new).count(), 1);
    let ids: std::collections::BTreeSet<u64> = results.iter().map(|(r, _)| r.id).collect();
    assert_eq!(ids.len(), 1, "every caller names the one anomaly");
    assert_eq!(store.fiscal_anomalies().unwrap().len(), 1);
}
