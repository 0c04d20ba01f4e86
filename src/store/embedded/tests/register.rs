//! The certification flow and the queries: intents, sequences, conflicts, quota, keys.

use std::sync::Arc;

use super::*;
use crate::store::embedded::{EmbeddedStore, EntryFilter, StoreError};

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;

fn all(env: Environment) -> EntryFilter {
    EntryFilter {
        org: None,
        environment: env,
        after_sequence: 0,
        limit: 100,
    }
}

fn sequences(store: &EmbeddedStore, filter: &EntryFilter) -> Vec<(u64, String)> {
    let entries = store.entries(filter).unwrap();
    entries
        .into_iter()
        .map(|e| (e.sequence, e.request.rn))
        .collect()
}

#[test]
fn each_environment_numbers_its_entries_without_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let a = certify(&store, "demo", P, "FN-1", 2026);
    let dropped = store.record_intent(intent("demo", "FN-2")).unwrap();
    store
        .record_abandoned(dropped, "link failure, not finalized")
        .unwrap();
    let b = certify(&store, "demo", S, "T-1", 2026);
    let c = certify(&store, "acme", P, "A-1", 2026);
    let d = certify(&store, "demo", P, "FN-2", 2026);
    let e = certify(&store, "acme", S, "T-1", 2026);
    let got: Vec<_> = [&a, &b, &c, &d, &e]
        .iter()
        .map(|x| (x.request.environment, x.sequence))
        .collect();
    assert_eq!(got, vec![(P, 1), (S, 1), (P, 2), (P, 3), (S, 2)]);

    assert_eq!(a.intent, 7);
    assert_eq!(a.request, intent("demo", "FN-1"));
    assert_eq!(a.security, security(7));
    assert_eq!(
        (a.source.as_str(), a.quota_year, a.certified_at),
        ("finalize", 2026, time(3))
    );
    assert_eq!(store.entry(P, 3).unwrap().as_ref(), Some(&d));
    assert_eq!(store.entry(P, 4).unwrap(), None);
    assert_eq!(
        store.entry_by_rn("demo", P, "FN-2").unwrap().as_ref(),
        Some(&d)
    );
    assert_eq!(store.entry_by_rn("demo", S, "FN-2").unwrap(), None);
    assert_eq!(
        store.entry_by_rn("acme", S, "T-1").unwrap().as_ref(),
        Some(&e)
    );

    let names = |v: &[(u64, &str)]| {
        v.iter()
            .map(|(n, r)| (*n, r.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        sequences(&store, &all(P)),
        names(&[(1, "FN-1"), (2, "A-1"), (3, "FN-2")])
    );
    assert_eq!(sequences(&store, &all(S)), names(&[(1, "T-1"), (2, "T-1")]));
    let demo = EntryFilter {
        org: Some("demo".into()),
        ..all(P)
    };
    assert_eq!(sequences(&store, &demo), names(&[(1, "FN-1"), (3, "FN-2")]));
    let page = EntryFilter {
        after_sequence: 1,
        limit: 1,
        ..all(P)
    };
    assert_eq!(sequences(&store, &page), names(&[(2, "A-1")]));
    let none = EntryFilter { limit: 0, ..all(P) };
    assert_eq!(sequences(&store, &none), vec![]);
    assert_eq!(store.verify().unwrap().certified, 5);
}

#[test]
fn an_rn_in_flight_or_certified_cannot_start_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let id = store.record_intent(intent("demo", "FN-1")).unwrap();
    assert_eq!(id, 7);
    assert_eq!(store.open_intent_for("demo", P, "FN-1").unwrap(), Some(7));
    assert_eq!(
        store.open_intents().unwrap(),
        vec![(7, intent("demo", "FN-1"))]
    );
    let again = store.record_intent(intent("demo", "FN-1"));
    assert!(
        matches!(&again, Err(StoreError::Conflict(m)) if m.contains("in flight")),
        "{again:?}"
    );
    // Another environment or organization is another register.
    let other = store.record_intent(intent_in("demo", S, "FN-1")).unwrap();
    let acme = store.record_intent(intent("acme", "FN-1")).unwrap();
    assert_eq!((other, acme), (8, 9));

    store
        .record_certified(id, 2026, time(3), security(1), "reconciled")
        .unwrap();
    assert_eq!(store.open_intent_for("demo", P, "FN-1").unwrap(), None);
    let again = store.record_intent(intent("demo", "FN-1"));
    assert!(
        matches!(&again, Err(StoreError::Conflict(m)) if m.contains("already certified")),
        "{again:?}"
    );

    // An abandoned rn may be tried again.
    store.record_abandoned(other, "cancelled").unwrap();
    assert_eq!(
        store.record_intent(intent_in("demo", S, "FN-1")).unwrap(),
        12
    );
    let ids: Vec<_> = store
        .open_intents()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, vec![9, 12]);
}

#[test]
fn only_an_open_intent_can_be_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let id = store.record_intent(intent("demo", "FN-1")).unwrap();
    store.record_abandoned(id, "device refused").unwrap();
    let certified = store.record_certified(id, 2026, time(3), security(1), "finalize");
    assert!(
        matches!(certified, Err(StoreError::IntentNotOpen(7))),
        "{certified:?}"
    );
    assert!(matches!(
        store.record_abandoned(id, "again"),
        Err(StoreError::IntentNotOpen(7))
    ));
    assert!(matches!(
        store.record_abandoned(99, "x"),
        Err(StoreError::UnknownIntent(99))
    ));
    // A seq that is not an intent (an organization saved) is not one either.
    assert!(matches!(
        store.record_abandoned(1, "x"),
        Err(StoreError::UnknownIntent(1))
    ));
    let unknown = store.record_certified(3, 2026, time(3), security(1), "finalize");
    assert!(matches!(unknown, Err(StoreError::UnknownIntent(3))));
    // Refusals journal nothing.
    assert_eq!(store.verify().unwrap().records, 8);
}

#[test]
fn intents_need_a_known_organization_and_its_own_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let nobody = store.record_intent(intent("nobody", "FN-1"));
    assert!(matches!(nobody, Err(StoreError::UnknownOrganization(ref o)) if o == "nobody"));
    let mut wrong_key = intent("demo", "FN-1");
    wrong_key.key_id = key_id("acme", P);
    assert!(matches!(
        store.record_intent(wrong_key),
        Err(StoreError::Invalid(_))
    ));
    let mut test_key = intent("demo", "FN-1");
    test_key.key_id = key_id("demo", S);
    assert!(matches!(
        store.record_intent(test_key),
        Err(StoreError::Invalid(_))
    ));
    let mut no_key = intent("demo", "FN-1");
    no_key.key_id = "gone".into();
    assert!(matches!(
        store.record_intent(no_key),
        Err(StoreError::UnknownKey(_))
    ));
    assert_eq!(store.verify().unwrap().records, 6);
}

#[test]
fn quota_counts_production_entries_per_year() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    certify(&store, "demo", P, "1", 2025);
    certify(&store, "demo", P, "2", 2026);
    certify(&store, "demo", P, "3", 2026);
    certify(&store, "demo", S, "4", 2026);
    certify(&store, "acme", P, "5", 2026);
    let dropped = store.record_intent(intent("demo", "6")).unwrap();
    store.record_abandoned(dropped, "refused").unwrap();
    assert_eq!(store.quota_used("demo", 2025).unwrap(), 1);
    assert_eq!(store.quota_used("demo", 2026).unwrap(), 2);
    assert_eq!(store.quota_used("demo", 2027).unwrap(), 0);
    assert_eq!(store.quota_used("acme", 2026).unwrap(), 1);
    assert_eq!(store.quota_used("nobody", 2026).unwrap(), 0);
    assert_eq!(store.quota_used("demo", -1).unwrap(), 0);
}

#[test]
fn keys_and_organizations() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ids: Vec<_> = store
        .organizations()
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .collect();
    assert_eq!(ids, vec!["acme", "demo"]);
    let mut renamed = org("demo");
    renamed.quota_override = Some(50);
    store.save_organization(renamed.clone()).unwrap();
    assert_eq!(store.organization("demo").unwrap(), Some(renamed));
    assert_eq!(store.organization("nobody").unwrap(), None);
    assert!(matches!(
        store.save_organization(org("")),
        Err(StoreError::Invalid(_))
    ));

    let dup = store.issue_key(key("demo", P));
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    let orphan = store.issue_key(key("nobody", P));
    assert!(matches!(orphan, Err(StoreError::UnknownOrganization(_))));
    let keys: Vec<_> = store
        .keys_of("demo")
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    assert_eq!(keys, vec!["live-demo", "test-demo"]);
    assert_eq!(store.keys_of("nobody").unwrap(), vec![]);

    let off = store.set_key_enabled("live-demo", false).unwrap();
    assert!(!off.enabled);
    let records = store.verify().unwrap().records;
    assert_eq!(store.set_key_enabled("live-demo", false).unwrap(), off);
    assert_eq!(
        store.verify().unwrap().records,
        records,
        "no change, no record"
    );
    assert!(matches!(
        store.set_key_enabled("gone", true),
        Err(StoreError::UnknownKey(_))
    ));
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.key("live-demo").unwrap(), Some(off));
    assert!(store.set_key_enabled("live-demo", true).unwrap().enabled);
    assert!(store.key("live-demo").unwrap().unwrap().enabled);
}

#[test]
fn concurrent_certifications_get_distinct_consecutive_sequences() {
    fn shared<T: Send + Sync>(_: &T) {}
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(seeded(dir.path()));
    shared(&store);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                (0..5)
                    .map(|i| certify(&store, "demo", P, &format!("T{t}-{i}"), 2026).sequence)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut got: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    got.sort_unstable();
    assert_eq!(got, (1..=40).collect::<Vec<_>>());
    assert_eq!(store.quota_used("demo", 2026).unwrap(), 40);
    assert_eq!(store.verify().unwrap().certified, 40);
}

#[test]
fn an_idempotency_key_stays_bound_unless_its_intent_is_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let keyed = |rn: &str, idem: &str| Intent {
        idempotency_key: Some(idem.to_string()),
        ..intent("demo", rn)
    };
    // Abandoned: the key is free again.
    let first = store.record_intent(keyed("FN-1", "k1")).unwrap();
    let bound = store.idempotency_binding("demo", P, "k1").unwrap().unwrap();
    assert_eq!((bound.intent, bound.rn.as_str()), (first, "FN-1"));
    assert!(matches!(
        store.record_intent(keyed("FN-2", "k1")),
        Err(StoreError::Conflict(_))
    ));
    store.record_abandoned(first, "not finalized").unwrap();
    assert_eq!(store.idempotency_binding("demo", P, "k1").unwrap(), None);

    // Certified: bound for good, also across a reopen (and a rebuilt index).
    let second = store.record_intent(keyed("FN-2", "k1")).unwrap();
    store
        .record_certified(second, 2026, time(3), security(2), "finalize")
        .unwrap();
    drop(store);
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let bound = store.idempotency_binding("demo", P, "k1").unwrap().unwrap();
    assert_eq!(bound.rn, "FN-2");
    assert_eq!(bound.request_digest, intent("demo", "FN-2").request_digest);
    // Another environment or organization has its own keys.
    assert_eq!(store.idempotency_binding("demo", S, "k1").unwrap(), None);
    assert_eq!(store.idempotency_binding("acme", P, "k1").unwrap(), None);
}
