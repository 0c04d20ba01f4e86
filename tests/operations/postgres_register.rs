//! The register's writes on PostgreSQL (`src/store/postgres/register.rs`, issue 28) on a real
//! server: an invoice is an intent (with its quota unit) then an entry, numbered without a
//! gap and chained per organization; a retry of a certified rn, a quota used up, an intent
//! settled twice are refused changing nothing; an abandoned intent gives its unit back; many
//! certifications at once, for two organizations, keep every number and every chain whole.

use chrono::{DateTime, NaiveDate, Utc};
use emcf_gateway::model::{
    DeviceTotals, Environment, Intent, Organization, Plan, SecurityElements,
};
use emcf_gateway::store::postgres::{
    migrate, PgRegister, PgVerifyReport, QuotaClaim, Refusal, MIGRATIONS,
};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use super::postgres::{app_pool, server};
use crate::pg::PgServer;

const P: Environment = Environment::Production;

pub(super) fn at() -> DateTime<Utc> {
    "2026-11-27T08:00:00.123456Z".parse().unwrap()
}

pub(super) fn organization(id: &str) -> Organization {
    Organization {
        id: id.into(),
        name: format!("Shop {id}"),
        nif: "A1234567B".into(),
        isf: "ISF-1".into(),
        plan: Plan::Start,
        quota_override: None,
        device: "web".into(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    }
}

/// The invoice an intent keeps (its canonical form, whose SHA-256 is the request digest).
fn invoice(rn: &str) -> String {
    format!(
        "{{\"canon\":\"1\",\"rn\":\"{rn}\",\"type\":\"FV\",\"mode\":\"ht\",\"curCode\":\"CDF\",\"items\":[]}}"
    )
}

pub(super) fn intent(org: &str, rn: &str) -> Intent {
    Intent {
        org: org.into(),
        environment: P,
        rn: rn.into(),
        invoice_type: "FV".into(),
        key_id: format!("{org}-key"),
        device: "web".into(),
        request_digest: format!("{:x}", Sha256::digest(invoice(rn).as_bytes())),
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
        nif: "A1234567B".into(),
        isf: "ISF-1".into(),
        idempotency_key: Some(format!("idem-{rn}")),
        device_tc: None,
        channel_ref: Some(format!("uid-{rn}")),
        invoice: Some(invoice(rn)),
    }
}

pub(super) fn security(rn: &str) -> SecurityElements {
    SecurityElements {
        code_def: format!("CODE-{rn}"),
        qr_code: format!("RDCDEF01;NIM;CODE-{rn};A1234567B;20261127080000"),
        counters: "1/1 FV".into(),
        nim: "NIM".into(),
        date_time: NaiveDate::from_ymd_opt(2026, 11, 27)
            .unwrap()
            .and_hms_opt(8, 0, 0)
            .unwrap(),
        date_time_as_sent: None,
    }
}

pub(super) fn claim(quota: u64) -> Option<QuotaClaim> {
    Some(QuotaClaim { year: 2026, quota })
}

/// A server with the schema, and its register holding `demo` and `acme`.
pub(super) async fn register_on(subject: &str) -> Option<(PgServer, PgRegister)> {
    let server = server(subject)?;
    let pool = app_pool(&server).await;
    migrate(&pool, MIGRATIONS).await.unwrap();
    let register = PgRegister::new(pool);
    for org in ["demo", "acme"] {
        register
            .save_organization(&organization(org), at())
            .await
            .unwrap();
    }
    Some((server, register))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoice_is_an_intent_then_an_entry_and_a_retry_changes_nothing() {
    let Some((server, register)) = register_on("PostgreSQL register").await else {
        return;
    };

    let id = register
        .record_intent(&intent("demo", "FV-1"), claim(2))
        .await
        .unwrap()
        .unwrap();
    // The unit is held by the intent (no other replica can take it); used counts only
    // certifications, as on the embedded store.
    let held = || server.sql("emcf_app", "SELECT used FROM quota_use WHERE org = 'demo'");
    assert_eq!(held(), "1", "held by the intent");
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 0);
    let entry = register
        .record_certified(id, 2026, at(), security("FV-1"), "finalize")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((entry.sequence, entry.intent), (1, id));
    // The entry comes back with its invoice, as the embedded store's does (the intent keeps
    // it: the entry's row does not).
    assert_eq!(entry.request.invoice, Some(invoice("FV-1")));
    let read = register.entry_by_rn("demo", P, "FV-1").await.unwrap();
    let whole = entry.clone();
    assert_eq!(
        read,
        Some(whole),
        "read back with the invoice its intent keeps"
    );

    // A retry of a certified rn: refused before any device is asked, nothing written.
    let again = register
        .record_intent(&intent("demo", "FV-1"), claim(2))
        .await
        .unwrap();
    assert_eq!(again, Err(Refusal::RnTaken));
    let twice = register
        .record_certified(id, 2026, at(), security("FV-1"), "finalize")
        .await
        .unwrap();
    assert_eq!(twice, Err(Refusal::IntentNotOpen));
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 1);

    // An Idempotency-Key already bound (another replica's request): refused, nothing held.
    let mut reused = intent("demo", "FV-9");
    reused.idempotency_key = Some("idem-FV-1".into());
    let refused = register.record_intent(&reused, claim(2)).await.unwrap();
    assert_eq!(refused, Err(Refusal::IdempotencyKeyTaken));
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 1);

    // An intent abandoned gives its unit back, once; its rn is free again.
    let lost = register
        .record_intent(&intent("demo", "FV-2"), claim(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held(), "2");
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 1);
    assert_eq!(
        register
            .record_abandoned(lost, "device refused", at())
            .await
            .unwrap(),
        Ok(())
    );
    assert_eq!(
        register
            .record_abandoned(lost, "device refused", at())
            .await
            .unwrap(),
        Err(Refusal::IntentNotOpen)
    );
    assert_eq!(held(), "1", "given back once");
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 1);
    let certified = register
        .record_certified(lost, 2026, at(), security("FV-2"), "finalize")
        .await
        .unwrap();
    assert_eq!(
        certified,
        Err(Refusal::IntentNotOpen),
        "never after abandoned"
    );

    // The quota: 2 units; FV-2 takes the second, FV-3 finds none and leaves no intent.
    let second = register
        .record_intent(&intent("demo", "FV-2"), claim(2))
        .await
        .unwrap()
        .unwrap();
    register
        .record_certified(second, 2026, at(), security("FV-2"), "finalize")
        .await
        .unwrap()
        .unwrap();
    let over = register
        .record_intent(&intent("demo", "FV-3"), claim(2))
        .await
        .unwrap();
    assert_eq!(over, Err(Refusal::QuotaExhausted));
    assert_eq!(register.quota_used("demo", 2026).await.unwrap(), 2);
    assert_eq!(
        server.sql("emcf_app", "SELECT count(*) FROM intents WHERE rn = 'FV-3'"),
        "0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certifications_at_once_keep_every_number_and_every_chain_whole() {
    let Some((server, register)) = register_on("PostgreSQL register at once").await else {
        return;
    };
    // One intent certified twice at once (a retry on another replica): one entry.
    let id = register
        .record_intent(&intent("demo", "TWICE"), claim(1000))
        .await
        .unwrap()
        .unwrap();
    let (a, b) = tokio::join!(
        register.record_certified(id, 2026, at(), security("TWICE"), "finalize"),
        register.record_certified(id, 2026, at(), security("TWICE"), "finalize"),
    );
    let outcomes = [
        a.unwrap().map(|e| e.sequence),
        b.unwrap().map(|e| e.sequence),
    ];
    assert!(
        outcomes.contains(&Ok(1)) && outcomes.contains(&Err(Refusal::IntentNotOpen)),
        "{outcomes:?}"
    );

    let mut tasks = Vec::new();
    for i in 0..24 {
        let register = register.clone();
        let org = if i % 2 == 0 { "demo" } else { "acme" };
        tasks.push(tokio::spawn(async move {
            let rn = format!("{org}-{i}");
            let id = register
                .record_intent(&intent(org, &rn), claim(1000))
                .await
                .unwrap()
                .unwrap();
            // Two first entries of one organization at once: one of them tries again.
            loop {
                match register
                    .record_certified(id, 2026, at(), security(&rn), "finalize")
                    .await
                    .unwrap()
                {
                    Ok(entry) => return entry.sequence,
                    Err(Refusal::Raced) => continue,
                    Err(other) => panic!("{rn}: {other:?}"),
                }
            }
        }));
    }
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await.unwrap());
    }
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (2..=25).collect::<Vec<u64>>(),
        "no gap, nothing twice"
    );

    // Each organization's chain, recomputed from what the server keeps.
    for org in ["demo", "acme"] {
        let rows = server.sql(
            "emcf_app",
            &format!(
                "SELECT encode(prev_hash, 'hex') || ' ' || encode(hash, 'hex') || ' ' || \
                 encode(convert_to(entry, 'UTF8'), 'hex') FROM register_entries \
                 WHERE org = '{org}' ORDER BY chain_seq"
            ),
        );
        let mut head = [0u8; 32].to_vec();
        let mut count = 0;
        for row in rows.lines() {
            let parts: Vec<&str> = row.split(' ').collect();
            assert_eq!(
                parts[0],
                hex::encode(&head),
                "{org}: entry {count} links its previous"
            );
            let entry = hex::decode(parts[2]).unwrap();
            head = Sha256::new()
                .chain_update(&head)
                .chain_update(&entry)
                .finalize()
                .to_vec();
            assert_eq!(parts[1], hex::encode(&head));
            count += 1;
        }
        assert_eq!(count, if org == "demo" { 13 } else { 12 }, "{org}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_what_was_changed_behind_the_schema_s_back() {
    let Some((server, register)) = register_on("PostgreSQL register verify").await else {
        return;
    };
    for org in ["demo", "acme"] {
        for n in 1..=3 {
            let rn = format!("{org}-{n}");
            let id = register
                .record_intent(&intent(org, &rn), claim(100))
                .await
                .unwrap()
                .unwrap();
            register
                .record_certified(id, 2026, at(), security(&rn), "finalize")
                .await
                .unwrap()
                .unwrap();
        }
    }
    let whole = register.verify().await.unwrap();
    assert_eq!(
        whole,
        PgVerifyReport {
            entries: 6,
            chains: 2,
            invoices_kept: 6,
            problems: Vec::new(),
        }
    );

    // Someone with the database's keys turns the triggers off and edits the register.
    let behind = |sql: &str| {
        server.sql(
            "emcf_app",
            &format!(
                "ALTER TABLE register_entries DISABLE TRIGGER USER; \
                 ALTER TABLE intents DISABLE TRIGGER USER; {sql}; \
                 ALTER TABLE register_entries ENABLE TRIGGER USER; \
                 ALTER TABLE intents ENABLE TRIGGER USER"
            ),
        )
    };
    behind("UPDATE register_entries SET entry = replace(entry, 'CODE-demo-2', 'CODE-demo-9')");
    behind(
        "UPDATE intents SET body = jsonb_set(body, '{invoice}', '\"{\\\"rn\\\":\\\"X\\\"}\"') \
         WHERE rn = 'acme-1'",
    );
    behind("DELETE FROM register_entries WHERE rn = 'acme-3'");
    behind("UPDATE register_entries SET code_def = 'CODE-demo-1' WHERE rn = 'demo-3'");
    let found = register.verify().await.unwrap().problems;
    let said = |what: &str| found.iter().any(|p| p.contains(what));
    assert!(
        said("demo: chain entry 2") && said("was changed"),
        "{found:#?}"
    );
    assert!(said("does not hash to its digest"), "{found:#?}");
    assert!(said("is missing") || said("recorded head"), "{found:#?}");
    assert!(said("acme: the chain's recorded head"), "{found:#?}");
    assert!(
        said("production entry 3: its columns are not the entry it hashes"),
        "{found:#?}"
    );
}
