//! Many writers at once on PostgreSQL's box counters and fiscal anomalies: certifications
//! of one box in the register's order (the embedded store, given them in that order, says
//! the same), counters moved only with their certification, one anomaly found by many
//! replicas recorded once, and the schema keeping an anomaly as recorded.

use emcf_gateway::model::FiscalAnomalyKind;
use emcf_gateway::store::postgres::Refusal;
use tokio_postgres::error::SqlState;

use super::{
    anomaly, at, both, certify_embedded, certify_pg, claim, intent, same_answers, security, Both, P,
};
use crate::postgres::app_pool;

/// Runs `sql` on `b`'s database as the application; the SQLSTATE of its refusal.
async fn refusal(b: &Both, sql: &str) -> Option<SqlState> {
    let pool = app_pool(&b.server).await;
    let client = pool.client().await.unwrap();
    client.execute(sql, &[]).await.err().map(|e| {
        e.as_db_error()
            .expect("refused by the server")
            .code()
            .clone()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_move_with_their_certification_only_and_an_anomaly_is_recorded_once() {
    let Some(b) = both("PostgreSQL boxes at once").await else {
        return;
    };
    // Sixteen certifications at once for two organizations on two boxes, counters shuffled.
    let mut tasks = Vec::new();
    for i in 0..16u64 {
        let pg = b.pg.clone();
        tasks.push(tokio::spawn(async move {
            let org = if i % 2 == 0 { "demo" } else { "acme" };
            let rn = format!("AT-{i}");
            let nim = if i % 3 == 0 { "NIM-2" } else { "NIM-1" };
            let sec = security(&rn, nim, Some((i * 7) % 16 + 1), "NIF-X");
            (certify_pg(&pg, org, P, &rn, &sec).await, org, rn, sec)
        }));
    }
    let mut done = Vec::new();
    for task in tasks {
        done.push(task.await.unwrap());
    }
    // The embedded store, given them in PostgreSQL's register order, says the same.
    done.sort_by_key(|(sequence, ..)| *sequence);
    for (sequence, org, rn, sec) in &done {
        assert_eq!(certify_embedded(&b.store, org, P, rn, sec), *sequence);
    }
    same_answers(&b, &["NIM-1", "NIM-2"], &[]).await;
    let before = b.pg.all_box_counters().await.unwrap();
    assert_eq!(before.len(), 2);

    // A certification refused moves nothing.
    let entry = b.pg.entry_by_rn("demo", P, "AT-0").await.unwrap().unwrap();
    let refused =
        b.pg.record_certified(
            entry.intent,
            2026,
            at(),
            security("AT-0", "NIM-1", Some(99), "NIF-X"),
            "finalize",
        )
        .await
        .unwrap();
    assert_eq!(refused, Err(Refusal::IntentNotOpen));
    assert_eq!(b.pg.all_box_counters().await.unwrap(), before);

    // Counters that cannot be written: the certification is not written either.
    b.server.sql(
        "emcf_app",
        "ALTER TABLE box_counters ADD CONSTRAINT refuses_one CHECK (nim <> 'NIM-BROKEN')",
    );
    let id =
        b.pg.record_intent(&intent("demo", P, "BROKEN-1"), claim(P))
            .await
            .unwrap()
            .unwrap();
    let failed =
        b.pg.record_certified(
            id,
            2026,
            at(),
            security("BROKEN-1", "NIM-BROKEN", Some(1), "NIF-X"),
            "finalize",
        )
        .await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(b.pg.entry_by_rn("demo", P, "BROKEN-1").await.unwrap(), None);
    assert_eq!(
        b.server.sql(
            "emcf_app",
            "SELECT next_sequence FROM register_heads WHERE environment = 'production'"
        ),
        "17"
    );
    // Its intent is still open: certified on a box that can be written, with the next number.
    let entry =
        b.pg.record_certified(
            id,
            2026,
            at(),
            security("BROKEN-1", "NIM-1", Some(40), "NIF-X"),
            "finalize",
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entry.sequence, 17);
    assert_eq!(
        b.pg.box_counters("NIM-1")
            .await
            .unwrap()
            .map(|c| (c.tc, c.sequence)),
        Some((40, 17))
    );

    // The same anomaly found by eight replicas at once: recorded once.
    let known = b.pg.box_counters("NIM-2").await.unwrap().unwrap();
    let went_back = anomaly(FiscalAnomalyKind::CounterWentBack, &known, 1);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let pg = b.pg.clone();
        let found = went_back.clone();
        tasks.push(tokio::spawn(async move {
            pg.record_fiscal_anomaly(found).await.unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|(_, new)| *new).count(),
        1,
        "{outcomes:?}"
    );
    assert!(outcomes.iter().all(|(record, _)| record == &outcomes[0].0));
    assert_eq!(
        b.server.sql(
            "emcf_app",
            "SELECT count(*) FROM events WHERE kind = 'fiscal_anomaly'"
        ),
        "1"
    );

    // The schema keeps an anomaly as recorded, acknowledged once, never deleted.
    let id = outcomes[0].0.id;
    let denied = Some(SqlState::INSUFFICIENT_PRIVILEGE);
    let forged = format!(
        "UPDATE fiscal_anomalies SET anomaly = anomaly || '{{\"seen_tc\": 9}}' WHERE id = {id}"
    );
    assert_eq!(refusal(&b, &forged).await, denied);
    assert_eq!(
        refusal(&b, &format!("DELETE FROM fiscal_anomalies WHERE id = {id}")).await,
        denied
    );
    assert_eq!(refusal(&b, "TRUNCATE fiscal_anomalies").await, denied);
    b.pg.acknowledge_fiscal_anomaly(id, "admin", "replaced", &[], &[])
        .await
        .unwrap()
        .unwrap();
    let rewritten =
        format!("UPDATE fiscal_anomalies SET acknowledged = '{{\"by\": \"x\"}}' WHERE id = {id}");
    assert_eq!(refusal(&b, &rewritten).await, denied);
    let now = b.pg.fiscal_anomalies().await.unwrap();
    assert_eq!(now.len(), 1);
    assert_eq!(
        now[0].acknowledged.as_ref().map(|a| a.by.as_str()),
        Some("admin")
    );
}
