//! A build of the index from nothing interrupted at any point (`Staged::commit_build`): the
//! next open builds it again from the first record, to the index a build into an empty
//! directory gives. Each test builds as the open does, then stops where a crash could.

use super::*;
use crate::model::{FiscalAnomaly, FiscalAnomalyKind, SecurityElements};
use crate::store::embedded::event::{hash, Event, Record};
use crate::store::embedded::index::Applied;
use crate::store::embedded::journal::Place;
use crate::store::embedded::staged::{Write, REPLAY_BATCH};

const P: Environment = Environment::Production;

/// The journal's payloads of `events` (`rebuild.rs`).
fn chain(events: Vec<Event>) -> Vec<Vec<u8>> {
    super::rebuild::chain(events).0
}

fn base() -> Vec<Event> {
    let mut events = Vec::new();
    for id in ["demo", "acme"] {
        events.push(Event::OrganizationSaved(org(id)));
        events.push(Event::KeyIssued(key(id, P)));
        events.push(Event::KeyIssued(key(id, Environment::Sandbox)));
    }
    events
}

/// An invoice of `demo` (intent then entry `seq`), with `sec` or the fixture's.
fn invoice(events: &mut Vec<Event>, rn: &str, seq: u64, sec: Option<SecurityElements>) {
    let request = intent("demo", rn);
    events.push(Event::Intent(request.clone()));
    let mut entry = certified_entry(seq, events.len() as u64, request);
    if let Some(sec) = sec {
        entry.security = sec;
    }
    events.push(Event::Certified(entry));
}

/// What `scan_and_apply` does for a build from nothing (`building`), record by record;
/// `stop` decides, after all records are staged, what reaches sled before the "crash".
fn build_then_crash(dir: &std::path::Path, payloads: &[Vec<u8>], buckets_only: bool) {
    let index = open_index(dir);
    assert_eq!(index.applied().unwrap(), Applied::Empty);
    let mut staged = index.staged().unwrap();
    let mut start = 0;
    for payload in payloads {
        let record: Record = serde_json::from_slice(payload).unwrap();
        let len = payload.len() as u32;
        staged
            .apply(&record, &hash(payload), Place { start, len })
            .unwrap();
        if staged.len() >= REPLAY_BATCH {
            staged.commit_build().unwrap();
        }
        start += 8 + u64::from(len);
    }
    if buckets_only {
        // `commit_built`'s first half: the buckets' sled batches, then the crash (process
        // killed, or sled keeping only a prefix of its writes) before `self.commit()`.
        let buckets: Vec<_> = staged
            .writes
            .iter()
            .filter(|(k, _)| crate::store::embedded::grouped::is_bucket(k))
            .filter_map(|(k, w)| match w {
                Write::Put(v) | Write::PutNew(v) => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect();
        for (k, v) in buckets {
            index.tree.insert(k, v).unwrap();
        }
    }
    drop(staged);
    index.flush().unwrap();
    assert!(
        matches!(index.applied().unwrap(), Applied::Unknown(_)),
        "an interrupted build is no index"
    );
}

#[test]
fn a_build_cut_while_writing_its_last_buckets_is_built_again() {
    let mut events = base();
    for i in 0..5000u64 {
        invoice(&mut events, &format!("FN-{i}"), i + 1, None);
    }
    let payloads = chain(events);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("journal")).unwrap();
    write_frames(dir.path(), &payloads);
    build_then_crash(dir.path(), &payloads, true);
    // The journal is intact: the open must succeed and complete the index.
    let opened = EmbeddedStore::open(dir.path());
    assert!(opened.is_ok(), "{:?}", opened.err());
}

#[test]
fn a_build_cut_between_batches_keeps_an_acknowledged_counter_that_went_back() {
    let nim9 = |seq: u64, tc: u64| SecurityElements {
        nim: "NIM9".into(),
        counters: format!("{tc}/{tc} FV"),
        ..security(seq)
    };
    let mut events = base();
    invoice(&mut events, "B-1", 1, Some(nim9(1, 100)));
    invoice(&mut events, "B-2", 2, Some(nim9(2, 3)));
    let known = crate::model::BoxCounters {
        nim: "NIM9".into(),
        nif: "NIF".into(),
        tc: 100,
        sequence: 1,
        highest_tc: 0,
    };
    events.push(Event::FiscalAnomaly(FiscalAnomaly {
        device: "box1".into(),
        nim: "NIM9".into(),
        kind: FiscalAnomalyKind::CounterWentBack,
        known,
        seen_nif: "NIF".into(),
        seen_tc: 3,
        seen_in: "38h".into(),
        missing: Vec::new(),
        last: None,
    }));
    events.push(Event::FiscalAnomalyAcknowledged {
        anomaly: events.len() as u64,
        by: "admin".into(),
        note: "box replaced".into(),
        numbers: Vec::new(),
        rns: Vec::new(),
    });
    invoice(&mut events, "B-3", 3, Some(nim9(3, 4)));
    // More than three batches, the buckets written to sled on the way.
    for i in 0..6200u64 {
        invoice(&mut events, &format!("FN-{i}"), i + 4, None);
    }
    let payloads = chain(events);
    assert!(payloads.len() > 3 * REPLAY_BATCH);
    let (dir, fresh) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [&dir, &fresh] {
        std::fs::create_dir_all(d.path().join("journal")).unwrap();
        write_frames(d.path(), &payloads);
    }
    build_then_crash(dir.path(), &payloads, false);
    let built = EmbeddedStore::open(fresh.path()).unwrap();
    let expected = built.box_counters("NIM9").unwrap().unwrap();
    assert_eq!(
        (expected.tc, expected.highest_tc),
        (4, 0),
        "the fresh build"
    );
    let completed = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(completed.box_counters("NIM9").unwrap().unwrap(), expected);
}

#[test]
fn an_interrupted_build_then_an_older_journal_gives_the_older_journal_s_index() {
    for env in [P, Environment::Sandbox] {
        let mut events = base();
        for i in 0..6500u64 {
            let request = intent_in("demo", env, &format!("FN-{i}"));
            events.push(Event::Intent(request.clone()));
            let entry = certified_entry(i + 1, events.len() as u64, request);
            events.push(Event::Certified(entry));
        }
        // Damage after the third batch: a certification of an intent that was never open.
        events.truncate(3 * REPLAY_BATCH + 500);
        events.push(Event::Certified(certified_entry(
            1_000_000,
            999_999,
            intent("demo", "NEVER"),
        )));
        let payloads = chain(events);
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("journal")).unwrap();
        write_frames(dir.path(), &payloads);
        assert!(EmbeddedStore::open(dir.path()).is_err());
        // The operator puts back an older copy of journal.log (as the error advises),
        // shorter than what the stopped build had written (up to 12,288 records).
        let older = &payloads[..10_000];
        write_frames(dir.path(), older);
        let fresh = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(fresh.path().join("journal")).unwrap();
        write_frames(fresh.path(), older);
        let built = EmbeddedStore::open(fresh.path()).unwrap();
        let opened = EmbeddedStore::open(dir.path()).unwrap();
        let next = |store: &EmbeddedStore| store.index().unwrap().next_sequence(env).unwrap();
        assert_eq!(
            next(&opened),
            next(&built),
            "{env:?}: the register's next number"
        );
        assert_eq!(opened.verify().unwrap(), built.verify().unwrap());
    }
}
