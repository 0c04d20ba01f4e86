//! A device's view (`model::DeviceView`: the C1h counters of its open intents, its machine's
//! counters), read with the intent and with the certification it goes with, or alone at
//! start: the same on both stores, and only that device's intents, never another's
//! (`src/store/postgres/device_view.rs`).

use emcf_gateway::model::{DeviceView, Intent};

use super::{both, certify, claim, intent, security, P};

/// `rn` of `org` on `device`, its C1h counter `tc` recorded (`None`: a web API's).
fn on(org: &str, rn: &str, device: &str, tc: Option<u64>) -> Intent {
    let mut intent = intent(org, P, rn);
    intent.device = device.into();
    intent.device_tc = tc;
    intent
}

#[tokio::test(flavor = "multi_thread")]
async fn a_device_s_view_holds_its_own_open_intents_only_with_its_write() {
    let Some(b) = both("a device's view").await else {
        return;
    };
    // box1 (NIM1) certified no. 1; then intents open on box1, box2 and box1 again.
    certify(&b, "demo", P, "V-1", "NIM1", Some(1), "").await;
    let mut ids = Vec::new();
    for open in [
        on("demo", "V-2", "box1", Some(1)),
        on("acme", "V-3", "box2", Some(7)),
        on("acme", "V-4", "box1", None),
    ] {
        let embedded = b.store.record_intent(open.clone(), None).unwrap();
        let pg = b.pg.record_intent(&open, claim(P)).await.unwrap().unwrap();
        ids.push((embedded, pg));
    }
    let known = b.store.box_counters("NIM1").unwrap();
    assert_eq!(known.as_ref().map(|k| k.tc), Some(1));
    let box1 = DeviceView {
        open: vec![Some(1), None],
        known: known.clone(),
    };
    assert_eq!(b.store.device_view("box1", "NIM1", None).unwrap(), box1);
    assert_eq!(b.pg.device_view("box1", "NIM1", None).await.unwrap(), box1);
    let box2 = DeviceView {
        open: vec![Some(7)],
        known: None,
    };
    assert_eq!(b.store.device_view("box2", "NIM2", None).unwrap(), box2);
    assert_eq!(b.pg.device_view("box2", "NIM2", None).await.unwrap(), box2);
    // Without one of them (a confirmation's own intent): V-4's place goes.
    let (v4_embedded, v4_pg) = ids[2];
    let without_v4 = DeviceView {
        open: vec![Some(1)],
        known: known.clone(),
    };
    assert_eq!(
        b.store
            .device_view("box1", "NIM1", Some(v4_embedded))
            .unwrap(),
        without_v4
    );
    assert_eq!(
        b.pg.device_view("box1", "NIM1", Some(v4_pg)).await.unwrap(),
        without_v4
    );
    let open_of_box1 = b.pg.open_intents_of("box1").await.unwrap();
    let rns: Vec<&str> = open_of_box1.iter().map(|(_, i)| i.rn.as_str()).collect();
    assert_eq!(rns, ["V-2", "V-4"]);
    let embedded_rns: Vec<String> = b
        .store
        .open_intents_of("box1")
        .unwrap()
        .into_iter()
        .map(|(_, i)| i.rn)
        .collect();
    assert_eq!(embedded_rns, ["V-2", "V-4"]);

    // Read with an intent: the register as it was before it (the new intent not among the
    // device's own).
    let new = on("demo", "V-5", "box1", Some(1));
    let (_, embedded) = b
        .store
        .record_intent_with_view(new.clone(), None, "NIM1")
        .unwrap();
    let (_, pg) =
        b.pg.record_intent_with_view(&new, claim(P), "NIM1")
            .await
            .unwrap()
            .unwrap();
    assert_eq!(embedded, box1);
    assert_eq!(pg, box1);

    // Read with a certification (V-2, no. 2): the device's other open intents, the counters
    // before this entry moved them.
    let (embedded_id, pg_id) = ids[0];
    let sec = security("V-2", "NIM1", Some(2), "");
    let (entry, embedded) = b
        .store
        .record_certified_with_view(embedded_id, 2026, super::at(), sec.clone(), "finalize")
        .unwrap();
    let (pg_entry, pg) =
        b.pg.record_certified_with_view(pg_id, 2026, super::at(), sec, "finalize")
            .await
            .unwrap()
            .unwrap();
    assert_eq!(pg_entry.sequence, entry.sequence);
    let before = DeviceView {
        open: vec![None, Some(1)],
        known,
    };
    assert_eq!(
        embedded, before,
        "V-4 and V-5 still open, the counters at 1"
    );
    assert_eq!(pg, before);
    let after = b.pg.device_view("box1", "NIM1", None).await.unwrap();
    assert_eq!(after.known.as_ref().map(|k| k.tc), Some(2));
    assert_eq!(after, b.store.device_view("box1", "NIM1", None).unwrap());

    // A sandbox certification moves no counters: nothing known with it.
    let sandbox = intent("demo", super::S, "V-6");
    let embedded_id = b.store.record_intent(sandbox.clone(), None).unwrap();
    let pg_id = b.pg.record_intent(&sandbox, None).await.unwrap().unwrap();
    let sec = security("V-6", "NIM1", Some(3), "");
    let (_, embedded) = b
        .store
        .record_certified_with_view(embedded_id, 2026, super::at(), sec.clone(), "finalize")
        .unwrap();
    let (_, pg) =
        b.pg.record_certified_with_view(pg_id, 2026, super::at(), sec, "finalize")
            .await
            .unwrap()
            .unwrap();
    assert_eq!(embedded.known, None);
    assert_eq!(pg, embedded);
}
