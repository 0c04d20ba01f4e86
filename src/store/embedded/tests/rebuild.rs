//! Rebuilding the index from a journal longer than one sled batch ([`REPLAY_BATCH`] records):
//! the same answers as appends one by one, and a rebuild stopped midway leaves an index that
//! the next open builds again from the first record (`Staged::commit_build`: `m:building`).

use super::*;
use crate::store::embedded::event::{hash, Event, Hash, Record, GENESIS};
use crate::store::embedded::index::{Applied, Index};
use crate::store::embedded::journal::Place;
use crate::store::embedded::staged::REPLAY_BATCH;
use crate::store::embedded::{DamageAt, EntryFilter, DEFAULT_INDEX_CACHE_MIB};

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;

/// Journal payloads of `events`, seq 1.. chained as the store writes them; with the hash of
/// each payload.
pub(super) fn chain(events: Vec<Event>) -> (Vec<Vec<u8>>, Vec<Hash>) {
    let mut head = GENESIS;
    let mut payloads = Vec::new();
    let mut hashes = Vec::new();
    for (i, event) in events.into_iter().enumerate() {
        let record = Record {
            seq: i as u64 + 1,
            prev: hex::encode(head),
            at: time(3),
            event,
        };
        let payload = serde_json::to_vec(&record).unwrap();
        head = hash(&payload);
        payloads.push(payload);
        hashes.push(head);
    }
    (payloads, hashes)
}

/// `demo` and `acme` with their keys, then `entries` invoices (every 3rd of `acme`, the
/// others of `demo`; every 7th in the Sandbox; every 5th abandoned once first under another
/// rn), then one open intent.
fn events(entries: u64) -> Vec<Event> {
    let mut events = Vec::new();
    for id in ["demo", "acme"] {
        events.push(Event::OrganizationSaved(org(id)));
        events.push(Event::KeyIssued(key(id, P)));
        events.push(Event::KeyIssued(key(id, S)));
    }
    let mut next = [1u64, 1u64];
    for i in 0..entries {
        let env = if i % 7 == 0 { S } else { P };
        let org = if i % 3 == 1 { "acme" } else { "demo" };
        if i % 5 == 0 {
            events.push(Event::Intent(intent_in(org, env, &format!("LOST-{i}"))));
            events.push(Event::Abandoned {
                intent: events.len() as u64,
                reason: "refused".into(),
            });
        }
        let request = intent_in(org, env, &format!("FN-{i}"));
        events.push(Event::Intent(request.clone()));
        let slot = usize::from(env == S);
        let entry = certified_entry(next[slot], events.len() as u64, request);
        next[slot] += 1;
        events.push(Event::Certified(entry));
    }
    events.push(Event::Intent(intent("acme", "OPEN-1")));
    events
}

fn register(store: &EmbeddedStore, env: Environment) -> Vec<RegisterEntry> {
    let mut all = Vec::new();
    loop {
        let page = store
            .entries(&EntryFilter {
                org: None,
                environment: env,
                after_sequence: all.last().map_or(0, |e: &RegisterEntry| e.sequence),
                limit: 1000,
            })
            .unwrap();
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

#[test]
fn a_rebuild_in_batches_answers_as_appends_one_by_one() {
    let entries = REPLAY_BATCH as u64 + 700;
    let (payloads, _) = chain(events(entries));
    assert!(payloads.len() > 2 * REPLAY_BATCH, "several batches");

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("journal")).unwrap();
    write_frames(dir.path(), &payloads);

    // The same records applied one at a time, each in a batch of its own.
    let one_by_one = tempfile::tempdir().unwrap();
    let reference = one_by_one.path().join("index");
    {
        let index = Index::open(
            &reference,
            &journal_path(dir.path()),
            DEFAULT_INDEX_CACHE_MIB,
        )
        .unwrap();
        let mut start = 0;
        for payload in &payloads {
            let record: Record = serde_json::from_slice(payload).unwrap();
            let len = payload.len() as u32;
            index
                .apply(&record, &hash(payload), Place { start, len })
                .unwrap();
            start += 8 + u64::from(len);
        }
        assert_eq!(index.applied_seq().unwrap(), payloads.len() as u64);
    }

    let store = EmbeddedStore::open(dir.path()).unwrap();
    let (production, sandbox) = (register(&store, P), register(&store, S));
    assert_eq!(production.len() + sandbox.len(), entries as usize);
    assert_eq!(sandbox.len(), entries.div_ceil(7) as usize);
    for (i, entry) in production.iter().enumerate() {
        assert_eq!(entry.sequence, i as u64 + 1);
    }
    let of = |org: &str| -> Vec<RegisterEntry> {
        let mut own: Vec<_> = production
            .iter()
            .filter(|e| e.request.org == org)
            .cloned()
            .collect();
        own.reverse();
        own
    };
    for org in ["demo", "acme"] {
        let own = of(org);
        assert_eq!(store.quota_used(org, 2026).unwrap(), own.len() as u64);
        assert_eq!(store.org_entry_count(org, P).unwrap(), own.len() as u64);
        // Pages across 64-entry blocks, newest first and in sequence order.
        let before = own[100].sequence;
        let back = store
            .org_entries_back(org, P, before, 90, |_| true)
            .unwrap();
        assert_eq!(back, own[101..191]);
        let odd = store
            .org_entries_back(org, P, u64::MAX, 40, |e| e.sequence % 2 == 1)
            .unwrap();
        let expected: Vec<_> = own
            .iter()
            .filter(|e| e.sequence % 2 == 1)
            .take(40)
            .cloned()
            .collect();
        assert_eq!(odd, expected);
        let forward = store
            .entries(&EntryFilter {
                org: Some(org.to_string()),
                environment: P,
                after_sequence: own[200].sequence,
                limit: 150,
            })
            .unwrap();
        let mut expected: Vec<_> = own[50..200].to_vec();
        expected.reverse();
        assert_eq!(forward, expected);
    }
    let open = store.open_intents().unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].1.rn, "OPEN-1");
    assert_eq!(store.open_intent_for("demo", P, "LOST-5").unwrap(), None);
    assert_eq!(store.open_intent_for("acme", P, "LOST-10").unwrap(), None);
    for (env, register) in [(P, &production), (S, &sandbox)] {
        let last = register.last().unwrap();
        assert_eq!(
            store
                .entry_by_rn(&last.request.org, env, &last.request.rn)
                .unwrap()
                .as_ref(),
            Some(last)
        );
    }
    assert_eq!(store.verify().unwrap().records, payloads.len() as u64);

    // Every key and value sled holds is the one the record-by-record index holds.
    let pairs = |index: &Index| -> Vec<(Vec<u8>, Vec<u8>)> {
        index
            .tree
            .iter()
            .map(|kv| {
                let (k, v) = kv.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .filter(|(k, _)| k.as_slice() != crate::store::embedded::index::META_CHECKPOINT)
            .collect()
    };
    let reference = Index::open(
        &reference,
        &journal_path(dir.path()),
        DEFAULT_INDEX_CACHE_MIB,
    )
    .unwrap();
    assert!(
        pairs(&store.index().unwrap()) == pairs(&reference),
        "the two indexes differ"
    );

    // Appends go on from where the rebuild ended.
    let next = certify(&store, "acme", P, "A-1", 2026);
    assert_eq!(next.sequence, production.len() as u64 + 1);
}

#[test]
fn a_build_stopped_midway_is_built_again_from_the_first_record() {
    // More than three batches (the buckets written to sled more than once with the unit
    // tests' small limit), then a certification of an intent that was never open.
    let mut events = events(2 * REPLAY_BATCH as u64);
    let cut = 3 * REPLAY_BATCH + 500;
    assert!(events.len() > cut);
    events.truncate(cut);
    events.push(Event::Certified(certified_entry(
        1_000_000,
        999_999,
        intent("demo", "NEVER"),
    )));
    let (payloads, _) = chain(events);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("journal")).unwrap();
    write_frames(dir.path(), &payloads);

    let bad = cut as u64 + 1;
    assert_damaged(
        EmbeddedStore::open(dir.path()).map(|_| ()),
        DamageAt::Seq(bad),
    );
    let index = open_index(dir.path());
    assert!(
        index.next_sequence(P).unwrap() > 1,
        "the build wrote entries before it stopped"
    );
    assert!(
        matches!(index.applied().unwrap(), Applied::Unknown(ref why) if why.contains("interrupted")),
        "an interrupted build is no index: {:?}",
        index.applied().unwrap()
    );
    drop(index);

    // The journal as if it ended before the bad record: the open builds the index again,
    // to what a build of the same journal into an empty directory gives.
    write_frames(dir.path(), &payloads[..cut]);
    let fresh = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fresh.path().join("journal")).unwrap();
    write_frames(fresh.path(), &payloads[..cut]);
    let (again, built) = (
        EmbeddedStore::open(dir.path()).unwrap(),
        EmbeddedStore::open(fresh.path()).unwrap(),
    );
    assert_eq!(
        again.index().unwrap().applied().unwrap(),
        built.index().unwrap().applied().unwrap()
    );
    let production = register(&built, P);
    for env in [P, S] {
        assert_eq!(register(&again, env), register(&built, env));
    }
    for org in ["demo", "acme"] {
        assert_eq!(
            again.quota_used(org, 2026).unwrap(),
            built.quota_used(org, 2026).unwrap(),
            "{org}: each entry counted once"
        );
    }
    for entry in production.iter().step_by(97) {
        let req = &entry.request;
        let found = again.entry_by_rn(&req.org, P, &req.rn).unwrap();
        assert_eq!(found.as_ref(), Some(entry), "{}", req.rn);
    }
    assert_eq!(again.verify().unwrap(), built.verify().unwrap());
}

#[test]
fn an_index_of_layout_3_is_rebuilt_once_with_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    for rn in ["FN-1", "FN-2"] {
        certify(&store, "demo", P, rn, 2026);
    }
    certify(&store, "acme", S, "A-1", 2026);
    let before = (register(&store, P), register(&store, S));
    // What the release before wrote: layout 3, each entry's JSON under `r`.
    for (env, entries) in [(P, &before.0), (S, &before.1)] {
        for entry in entries {
            let json = serde_json::to_vec(entry).unwrap();
            let mut k = vec![b'r', crate::store::embedded::index::env_byte(env)];
            k.extend_from_slice(&entry.sequence.to_be_bytes());
            store.index().unwrap().tree.insert(k, json).unwrap();
        }
    }
    let format = crate::store::embedded::index::META_FORMAT;
    store
        .index()
        .unwrap()
        .tree
        .insert(format, &3u32.to_be_bytes()[..])
        .unwrap();
    drop(store);

    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!((register(&store, P), register(&store, S)), before);
    let layout = store.index().unwrap().tree.get(format).unwrap().unwrap();
    assert_eq!(
        layout.as_ref(),
        &crate::store::embedded::index::FORMAT.to_be_bytes()[..]
    );
    let block = crate::store::embedded::grouped::k_entry_block(P, 2);
    let r = store.index().unwrap().tree.get(block).unwrap().unwrap();
    assert_eq!(
        r.len(),
        3 * crate::store::embedded::entry_ref::ENCODED,
        "places and hashes of seqs 0 (none), 1 and 2"
    );
    let old_keys = store.index().unwrap().tree.scan_prefix(b"r").count();
    assert_eq!(old_keys, 2, "one block per register, none of the old keys");
    assert_eq!(certify(&store, "demo", P, "FN-3", 2026).sequence, 3);
}
