//! Box counters and fiscal anomalies on PostgreSQL (`src/store/postgres/boxes.rs`, issue 28)
//! answer as the embedded store does: the same certifications, anomalies and
//! acknowledgements written to both, then every read compared. A box's counters move with
//! its certification only (a certification whose counters cannot be written leaves no
//! entry), in the register's order when many certify at once; an anomaly found twice at
//! once is recorded once; the schema keeps an anomaly as recorded, acknowledged once
//! (`postgres_boxes/at_once.rs`); a device's view read with its writes (`postgres_boxes/device_view.rs`).

use chrono::{DateTime, NaiveDate, Utc};
use emcf_gateway::model::{
    AnomalyAck, AnomalyRecord, BoxCounters, DeviceTotals, Environment, FiscalAnomaly,
    FiscalAnomalyKind, Intent, KeyRecord, LostInvoice, Organization, Plan, SecurityElements,
};
use emcf_gateway::store::postgres::{migrate, PgRegister, QuotaClaim, Refusal, MIGRATIONS};
use emcf_gateway::store::Store;
use rust_decimal::Decimal;

use super::postgres::{app_pool, server};
use crate::pg::PgServer;

mod at_once;
mod device_view;

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;

fn at() -> DateTime<Utc> {
    "2026-11-27T08:00:00Z".parse().unwrap()
}

fn organization(id: &str) -> Organization {
    Organization {
        id: id.into(),
        name: format!("Shop {id}"),
        nif: format!("NIF-{id}"),
        isf: format!("ISF-{id}"),
        plan: Plan::Start,
        quota_override: None,
        device: "box1".into(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    }
}

fn key_id(org: &str, env: Environment) -> String {
    format!("{}-{org}", env.as_str())
}

fn key(org: &str, env: Environment) -> KeyRecord {
    KeyRecord {
        id: key_id(org, env),
        org: org.into(),
        environment: env,
        secret_sha256: "ab".repeat(32),
        label: "till 1".into(),
        enabled: true,
        created_at: at(),
    }
}

fn intent(org: &str, env: Environment, rn: &str) -> Intent {
    Intent {
        org: org.into(),
        environment: env,
        rn: rn.into(),
        invoice_type: "FV".into(),
        key_id: key_id(org, env),
        device: "box1".into(),
        request_digest: format!("{:0>64}", rn.len()),
        received_at: at(),
        totals: DeviceTotals {
            total: Decimal::new(11600, 2),
            vat: Decimal::new(1600, 2),
            group_ttc: vec![('B', Decimal::new(11600, 2))],
            group_vat: vec![('B', Decimal::new(1600, 2))],
            specific_tax: Decimal::ZERO,
            usd_equivalent: None,
            mcur: None,
        },
        nif: format!("NIF-{org}"),
        isf: format!("ISF-{org}"),
        idempotency_key: None,
        device_tc: None,
        channel_ref: None,
        invoice: None,
    }
}

/// What box `nim` answered for `rn`: its total counter `tc` (none: counters without one)
/// and the NIF of its qrCode (empty: the organization's).
fn security(rn: &str, nim: &str, tc: Option<u64>, nif: &str) -> SecurityElements {
    SecurityElements {
        code_def: format!("CODE-{rn}"),
        qr_code: format!("RDCDEF01;{nim};CODE-{rn};{nif};20261127080000"),
        counters: tc.map(|tc| format!("{tc}/{tc} FV")).unwrap_or_default(),
        nim: nim.into(),
        date_time: NaiveDate::from_ymd_opt(2026, 11, 27)
            .and_then(|d| d.and_hms_opt(8, 0, 0))
            .unwrap(),
        date_time_as_sent: None,
    }
}

fn claim(env: Environment) -> Option<QuotaClaim> {
    (env == P).then_some(QuotaClaim {
        year: 2026,
        quota: 1000,
    })
}

/// An embedded store and a PostgreSQL register, both holding `demo` and `acme` and their keys.
struct Both {
    _dir: tempfile::TempDir,
    store: Store,
    pg: PgRegister,
    server: PgServer,
}

async fn both(subject: &str) -> Option<Both> {
    let server = server(subject)?;
    let pool = app_pool(&server).await;
    migrate(&pool, MIGRATIONS).await.unwrap();
    let pg = PgRegister::new(pool);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for org in ["demo", "acme"] {
        pg.save_organization(&organization(org), at())
            .await
            .unwrap();
        store.save_organization(organization(org)).unwrap();
        for env in [P, S] {
            store.issue_key(key(org, env)).unwrap();
        }
    }
    Some(Both {
        _dir: dir,
        store,
        pg,
        server,
    })
}

/// Certifies `rn` on PostgreSQL (trying again when another writer moved the chain).
async fn certify_pg(
    pg: &PgRegister,
    org: &str,
    env: Environment,
    rn: &str,
    sec: &SecurityElements,
) -> u64 {
    let id = pg
        .record_intent(&intent(org, env, rn), claim(env))
        .await
        .unwrap()
        .unwrap();
    loop {
        match pg
            .record_certified(id, 2026, at(), sec.clone(), "finalize")
            .await
            .unwrap()
        {
            Ok(entry) => return entry.sequence,
            Err(Refusal::Raced) => continue,
            Err(other) => panic!("{rn}: {other:?}"),
        }
    }
}

fn certify_embedded(
    store: &Store,
    org: &str,
    env: Environment,
    rn: &str,
    sec: &SecurityElements,
) -> u64 {
    let id = store.record_intent(intent(org, env, rn), None).unwrap();
    store
        .record_certified(id, 2026, at(), sec.clone(), "finalize")
        .unwrap()
        .sequence
}

/// Certifies `rn` on both, with box `nim`'s answer; both give it the same number.
async fn certify(
    b: &Both,
    org: &str,
    env: Environment,
    rn: &str,
    nim: &str,
    tc: Option<u64>,
    nif: &str,
) {
    let sec = security(rn, nim, tc, nif);
    let embedded = certify_embedded(&b.store, org, env, rn, &sec);
    let pg = certify_pg(&b.pg, org, env, rn, &sec).await;
    assert_eq!(pg, embedded, "{rn}: the same number on both");
}

/// Records `anomaly` on both: the same answer (new or not) on both.
async fn record(b: &Both, anomaly: &FiscalAnomaly) -> (AnomalyRecord, AnomalyRecord, bool) {
    let (embedded, new) = b.store.record_fiscal_anomaly(anomaly.clone()).unwrap();
    let (pg, pg_new) = b.pg.record_fiscal_anomaly(anomaly.clone()).await.unwrap();
    assert_eq!(pg_new, new, "{anomaly:?}");
    assert_eq!(
        comparable(std::slice::from_ref(&pg)),
        comparable(std::slice::from_ref(&embedded))
    );
    (embedded, pg, new)
}

/// Acknowledges anomaly (`embedded`, `pg`) on both; both return the same record.
async fn acknowledge(
    b: &Both,
    (embedded, pg): (u64, u64),
    by: &str,
    numbers: &[u64],
    rns: &[LostInvoice],
) -> AnomalyRecord {
    let note = "understood";
    let e = b
        .store
        .acknowledge_fiscal_anomaly(embedded, by, note, numbers, rns)
        .unwrap();
    let p =
        b.pg.acknowledge_fiscal_anomaly(pg, by, note, numbers, rns)
            .await
            .unwrap()
            .expect("a known anomaly");
    assert_eq!(p.id, pg);
    assert_eq!(comparable(std::slice::from_ref(&p)), comparable(&[e]));
    p
}

/// Anomaly records with what each store gives of its own (the id: its place in its log;
/// the times: when it was written) replaced by their rank and a fixed time.
fn comparable(records: &[AnomalyRecord]) -> Vec<AnomalyRecord> {
    records
        .iter()
        .enumerate()
        .map(|(rank, record)| AnomalyRecord {
            id: rank as u64,
            detected_at: at(),
            acknowledged: record
                .acknowledged
                .clone()
                .map(|ack| AnomalyAck { at: at(), ..ack }),
            ..record.clone()
        })
        .collect()
}

/// Every read of this part answers the same on both stores.
async fn same_answers(b: &Both, nims: &[&str], lost: &[(&str, &str)]) {
    for nim in nims {
        assert_eq!(
            b.pg.box_counters(nim).await.unwrap(),
            b.store.box_counters(nim).unwrap(),
            "box {nim}"
        );
    }
    assert_eq!(
        b.pg.all_box_counters().await.unwrap(),
        b.store.all_box_counters().unwrap()
    );
    let pg = b.pg.fiscal_anomalies().await.unwrap();
    let embedded = b.store.fiscal_anomalies().unwrap();
    assert_eq!(comparable(&pg), comparable(&embedded));
    assert!(pg.windows(2).all(|w| w[0].id < w[1].id), "oldest first");
    for (device, rn) in lost {
        assert_eq!(
            b.pg.lost_rn(device, rn).await.unwrap(),
            b.store.lost_rn(device, rn).unwrap(),
            "{device} {rn}"
        );
    }
}

fn counters(nim: &str, nif: &str, tc: u64, sequence: u64, highest_tc: u64) -> BoxCounters {
    BoxCounters {
        nim: nim.into(),
        nif: nif.into(),
        tc,
        sequence,
        highest_tc,
    }
}

fn anomaly(kind: FiscalAnomalyKind, known: &BoxCounters, seen_tc: u64) -> FiscalAnomaly {
    FiscalAnomaly {
        device: "box1".into(),
        nim: known.nim.clone(),
        kind,
        known: known.clone(),
        seen_nif: known.nif.clone(),
        seen_tc,
        seen_in: "C1h".into(),
        missing: Vec::new(),
        last: None,
    }
}

fn lost(number: u64, rn: &str) -> LostInvoice {
    LostInvoice {
        number,
        rn: rn.into(),
        code_def: String::new(),
        invoice_type: String::new(),
        at: None,
    }
}

const NIMS: [&str; 7] = [
    "NIM-b", "NIM-B", "NIM-a", "nim-c", "a-box", "NIM-z", "NIM-none",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_and_anomalies_answer_as_on_the_embedded_store() {
    let Some(b) = both("PostgreSQL boxes").await else {
        return;
    };
    // A database whose collation is a language's, as most are (not this test server's C):
    // the boxes still come back in byte order, as the embedded index holds them.
    b.server.sql(
        "emcf_app",
        "ALTER TABLE box_counters ALTER COLUMN nim TYPE text COLLATE \"und-x-icu\"",
    );
    let start = Utc::now();
    certify(&b, "demo", P, "FV-1", "NIM-b", Some(1), "NIF-X").await;
    certify(&b, "demo", P, "FV-2", "NIM-b", Some(2), "NIF-X").await;
    certify(&b, "acme", P, "AC-1", "NIM-B", Some(7), "").await;
    certify(&b, "demo", P, "FV-3", "NIM-b", Some(4), "NIF-X").await;
    // Recorded out of counter order (a web API e-MCF's requests confirmed side by side).
    certify(&b, "demo", P, "FV-4", "NIM-b", Some(3), "NIF-X").await;
    // A sandbox box is the gateway's own simulator; counters without a TC say nothing.
    certify(&b, "demo", S, "SB-1", "NIM-a", Some(1), "NIF-X").await;
    certify(&b, "demo", P, "FV-5", "nim-c", None, "NIF-X").await;
    certify(&b, "acme", P, "AC-2", "a-box", Some(1), "NIF-A").await;
    same_answers(&b, &NIMS, &[]).await;
    let nim_b = b.pg.box_counters("NIM-b").await.unwrap().unwrap();
    assert_eq!(nim_b, counters("NIM-b", "NIF-X", 3, 5, 4));
    let nim_big_b = b.pg.box_counters("NIM-B").await.unwrap().unwrap();
    assert_eq!(
        nim_big_b,
        counters("NIM-B", "NIF-acme", 7, 3, 0),
        "the organization's NIF"
    );
    let all: Vec<String> =
        b.pg.all_box_counters()
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.nim)
            .collect();
    assert_eq!(
        all,
        ["NIM-B", "NIM-b", "a-box"],
        "in byte order, as the index"
    );

    // Found at a C1h, then again at the certification: one anomaly.
    let went_back = anomaly(FiscalAnomalyKind::CounterWentBack, &nim_b, 1);
    let (e_back, p_back, new) = record(&b, &went_back).await;
    assert!(new);
    let again = FiscalAnomaly {
        seen_tc: 2,
        seen_in: "38h".into(),
        ..went_back.clone()
    };
    let (e_again, p_again, new) = record(&b, &again).await;
    assert!(!new);
    assert_eq!((e_again, p_again.clone()), (e_back.clone(), p_back.clone()));
    assert!(
        p_back.detected_at >= start - chrono::Duration::seconds(1)
            && p_back.detected_at <= Utc::now()
    );

    let nif_changed = FiscalAnomaly {
        seen_nif: "NIF-OTHER".into(),
        ..anomaly(FiscalAnomalyKind::NifChanged, &nim_big_b, 8)
    };
    let (e_nif, p_nif, _) = record(&b, &nif_changed).await;
    let behind = FiscalAnomaly {
        missing: vec![8, 9, 10, 11, 12],
        last: Some(LostInvoice {
            code_def: "CODE-AC-LOST-12".into(),
            invoice_type: "FV".into(),
            at: NaiveDate::from_ymd_opt(2026, 11, 26).and_then(|d| d.and_hms_opt(17, 5, 9)),
            ..lost(12, "AC-LOST-12")
        }),
        ..anomaly(FiscalAnomalyKind::RegisterBehind, &nim_big_b, 12)
    };
    let (e_behind, p_behind, _) = record(&b, &behind).await;
    // A box the register holds no entry of (its register lost them all).
    let unknown_box = FiscalAnomaly {
        device: "box2".into(),
        missing: vec![4, 5],
        ..anomaly(
            FiscalAnomalyKind::RegisterBehind,
            &counters("NIM-z", "NIF-Z", 3, 0, 0),
            5,
        )
    };
    let (e_unknown, p_unknown, _) = record(&b, &unknown_box).await;
    let lost_rns = [
        ("box1", "AC-LOST-12"),
        ("box1", "AC-LOST-10"),
        ("box2", "AC-LOST-10"),
        ("box1", "FV-1"),
    ];
    same_answers(&b, &NIMS, &lost_rns).await;
    assert_eq!(
        b.pg.lost_rn("box1", "AC-LOST-12").await.unwrap(),
        None,
        "not acknowledged"
    );

    // Acknowledged: a box whose counter went back starts again; a register behind its box
    // takes the box's counter as its baseline, also for a box it knew nothing of.
    acknowledge(&b, (e_back.id, p_back.id), "admin", &[], &[]).await;
    let rns = [behind.last.clone().unwrap(), lost(10, "AC-LOST-10")];
    let acked = acknowledge(
        &b,
        (e_behind.id, p_behind.id),
        "admin",
        &behind.missing,
        &rns,
    )
    .await;
    assert_eq!(
        acked.acknowledged.as_ref().map(|a| a.rns.clone()),
        Some(rns.to_vec())
    );
    acknowledge(&b, (e_unknown.id, p_unknown.id), "ops", &[4, 5], &[]).await;
    acknowledge(&b, (e_nif.id, p_nif.id), "ops", &[], &[]).await;
    same_answers(&b, &NIMS, &lost_rns).await;
    assert_eq!(
        b.pg.box_counters("NIM-b").await.unwrap(),
        Some(counters("NIM-b", "NIF-X", 3, 5, 0))
    );
    assert_eq!(
        b.pg.box_counters("NIM-B").await.unwrap(),
        Some(counters("NIM-B", "NIF-acme", 12, 3, 0))
    );
    assert_eq!(
        b.pg.box_counters("NIM-z").await.unwrap(),
        Some(counters("NIM-z", "NIF-Z", 5, 0, 0))
    );
    assert_eq!(b.pg.lost_rn("box1", "AC-LOST-10").await.unwrap(), Some(10));
    assert_eq!(
        b.pg.lost_rn("box2", "AC-LOST-10").await.unwrap(),
        None,
        "another box"
    );

    // Acknowledged again: returned as it is, nothing recorded; an unknown id is none.
    let acks = "SELECT count(*) FROM events WHERE kind = 'fiscal_anomaly_acknowledged'";
    assert_eq!(b.server.sql("emcf_app", acks), "4");
    let first = b.pg.fiscal_anomalies().await.unwrap()[0].clone();
    let twice =
        b.pg.acknowledge_fiscal_anomaly(p_back.id, "x", "y", &[], &[])
            .await
            .unwrap();
    assert_eq!(twice, Some(first));
    assert_eq!(b.server.sql("emcf_app", acks), "4");
    assert_eq!(
        b.pg.acknowledge_fiscal_anomaly(999_999, "x", "y", &[], &[])
            .await
            .unwrap(),
        None
    );
    assert!(b
        .store
        .acknowledge_fiscal_anomaly(999_999, "x", "y", &[], &[])
        .is_err());

    // After its acknowledgement, the same break is a new anomaly.
    assert!(record(&b, &went_back).await.2);
    // The box goes on from its baseline, in and out of order.
    certify(&b, "acme", P, "AC-3", "NIM-B", Some(13), "").await;
    certify(&b, "acme", P, "AC-4", "NIM-B", Some(11), "").await;
    same_answers(&b, &NIMS, &lost_rns).await;
    assert_eq!(
        b.pg.box_counters("NIM-B").await.unwrap(),
        Some(counters("NIM-B", "NIF-acme", 11, 9, 13))
    );

    // Each anomaly's id is its event's, as the embedded store's is its record's.
    let ids: Vec<String> =
        b.pg.fiscal_anomalies()
            .await
            .unwrap()
            .iter()
            .map(|a| a.id.to_string())
            .collect();
    assert_eq!(
        b.server.sql("emcf_app", "SELECT string_agg(id::text, ',' ORDER BY id) FROM events WHERE kind = 'fiscal_anomaly'"),
        ids.join(",")
    );
}
