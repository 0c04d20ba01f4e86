//! The PostgreSQL store's schema (`migrations/0001_register.sql`) holds the register's rules
//! by itself, whatever a client sends (issue 28): one live intent per rn (open or certified),
//! one entry per rn,
//! register numbers with no gap, each organization's hash chain recomputed by the server,
//! the register append-only, an intent settled once, a quota that concurrent claims cannot
//! pass, and an abandoned intent that gives its quota unit and Idempotency-Key back.

use emcf_gateway::store::postgres::{migrate, PgPool, MIGRATIONS};
use sha2::{Digest, Sha256};
use tokio_postgres::error::SqlState;

use super::postgres::{app_pool, server};

const T: &str = "'2026-11-27T08:00:00Z'";

/// Runs `sql`; the SQLSTATE and message of its error, if it fails.
async fn run(pool: &PgPool, sql: &str) -> Result<u64, (SqlState, String)> {
    let client = pool.client().await.expect("a connection");
    client.execute(sql, &[]).await.map_err(|e| {
        let db = e.as_db_error().expect("the server's own refusal");
        (db.code().clone(), db.message().to_owned())
    })
}

/// `sql` must be refused with `code`, its message containing `says`.
async fn refused(pool: &PgPool, sql: &str, code: SqlState, says: &str) {
    match run(pool, sql).await {
        Err((got, message)) => {
            assert_eq!(got, code, "{sql}: {message}");
            assert!(message.contains(says), "{sql}: {message}");
        }
        Ok(rows) => panic!("{sql}: accepted ({rows} rows)"),
    }
}

async fn one(pool: &PgPool, sql: &str) -> String {
    let client = pool.client().await.expect("a connection");
    let row = client.query_one(sql, &[]).await.expect(sql);
    row.get(0)
}

/// An intent of `demo` for `rn`, claiming a unit of 2026's quota of `quota` units.
fn intent_of(rn: &str, quota: u64) -> String {
    format!(
        "INSERT INTO intents (org, environment, rn, request_digest, body, created_at, \
         quota_year, quota_limit) VALUES ('demo', 'production', '{rn}', repeat('a', 64), \
         '{{}}', {T}, 2026, {quota})"
    )
}

/// An intent of `demo` for `rn`, its quota 2 units.
fn intent(rn: &str) -> String {
    intent_of(rn, 2)
}

/// Entry `sequence` of the production register for `demo`'s `rn` (intent `intent`), the
/// `chain_seq`-th of its chain after `prev`, hashed as the server recomputes it unless
/// `hash` is given.
fn entry(sequence: u64, rn: &str, intent: u64, chain_seq: u64, prev: [u8; 32]) -> String {
    let text = format!("{{\"sequence\":{sequence}}}");
    let hash: [u8; 32] = Sha256::new()
        .chain_update(prev)
        .chain_update(text.as_bytes())
        .finalize()
        .into();
    entry_hashed(sequence, rn, intent, chain_seq, prev, &text, hash)
}

fn entry_hashed(
    sequence: u64,
    rn: &str,
    intent: u64,
    chain_seq: u64,
    prev: [u8; 32],
    text: &str,
    hash: [u8; 32],
) -> String {
    format!(
        "INSERT INTO register_entries VALUES ('production', {sequence}, 'demo', '{rn}', \
         {intent}, 'CODE-{rn}', {T}, 2026, {chain_seq}, '\\x{}', '\\x{}', '{text}')",
        hex::encode(prev),
        hex::encode(hash)
    )
}

fn head_after(prev: [u8; 32], sequence: u64) -> [u8; 32] {
    Sha256::new()
        .chain_update(prev)
        .chain_update(format!("{{\"sequence\":{sequence}}}").as_bytes())
        .finalize()
        .into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_holds_the_register_s_rules_whatever_a_client_sends() {
    let Some(server) = server("PostgreSQL schema rules") else {
        return;
    };
    let pool = app_pool(&server).await;
    let applied = migrate(&pool, MIGRATIONS).await.unwrap();
    assert_eq!(applied.applied, [1], "the binary's schema, version 1");
    assert!(migrate(&pool, MIGRATIONS).await.unwrap().applied.is_empty());

    run(
        &pool,
        &format!("INSERT INTO organizations VALUES ('demo', '{{}}', {T}), ('acme', '{{}}', {T})"),
    )
    .await
    .unwrap();
    run(&pool, &intent("FV-1")).await.unwrap();
    refused(
        &pool,
        &intent("FV-1"),
        SqlState::UNIQUE_VIOLATION,
        "one_live_per_rn",
    )
    .await;
    assert_eq!(
        one(&pool, "SELECT used::text FROM quota_use").await,
        "1",
        "claimed once"
    );
    // An intent is certified only by its entry (and recorded open: at the end, below).
    refused(
        &pool,
        &format!("UPDATE intents SET state = 'certified', settled_at = {T} WHERE id = 1"),
        SqlState::INSUFFICIENT_PRIVILEGE,
        "only by its register entry",
    )
    .await;

    let zero = [0u8; 32];
    run(&pool, &entry(1, "FV-1", 1, 1, zero)).await.unwrap();
    assert_eq!(
        one(&pool, "SELECT state FROM intents WHERE id = 1").await,
        "certified"
    );
    let head = head_after(zero, 1);

    run(&pool, &intent("FV-2")).await.unwrap();
    let check = SqlState::CHECK_VIOLATION;
    refused(
        &pool,
        &entry(3, "FV-2", 3, 2, head),
        check.clone(),
        "not the next one",
    )
    .await;
    refused(
        &pool,
        &entry(2, "FV-2", 3, 2, zero),
        check.clone(),
        "does not follow",
    )
    .await;
    refused(
        &pool,
        &entry(2, "FV-2", 3, 1, zero),
        check.clone(),
        "does not follow",
    )
    .await;
    let forged = entry_hashed(2, "FV-2", 3, 2, head, "{\"sequence\":2}", [7; 32]);
    refused(&pool, &forged, check.clone(), "does not hash").await;
    refused(
        &pool,
        &entry(2, "FV-1", 3, 2, head),
        check.clone(),
        "not the open intent",
    )
    .await;
    assert_eq!(
        one(
            &pool,
            "SELECT next_sequence::text FROM register_heads WHERE environment = 'production'"
        )
        .await,
        "2",
        "nothing refused moved the register on"
    );

    let denied = SqlState::INSUFFICIENT_PRIVILEGE;
    for sql in [
        "UPDATE register_entries SET code_def = 'X'",
        "DELETE FROM register_entries",
        "TRUNCATE register_entries CASCADE",
        "TRUNCATE events",
        "DELETE FROM intents WHERE id = 1",
        "UPDATE intents SET body = '{\"x\": 1}' WHERE id = 1",
    ] {
        refused(&pool, sql, denied.clone(), "").await;
    }
    assert_eq!(
        one(&pool, "SELECT count(*)::text FROM register_entries").await,
        "1"
    );

    // The quota: 2 units, the first used by FV-1, the second held by FV-2: FV-3 is refused
    // and leaves no intent.
    assert_eq!(one(&pool, "SELECT used::text FROM quota_use").await, "2");
    refused(&pool, &intent("FV-3"), check.clone(), "quota_use").await;
    assert_eq!(
        one(
            &pool,
            "SELECT count(*)::text FROM intents WHERE rn = 'FV-3'"
        )
        .await,
        "0"
    );
    // FV-2 abandoned: its unit and its Idempotency-Key are given back, once.
    run(
        &pool,
        "INSERT INTO idempotency_keys VALUES ('demo', 'production', 'K-1', 3, 'FV-2', \
         repeat('a', 64))",
    )
    .await
    .unwrap();
    run(
        &pool,
        &format!("UPDATE intents SET state = 'abandoned', settled_at = {T}, reason = 'refused' WHERE id = 3"),
    )
    .await
    .unwrap();
    assert_eq!(one(&pool, "SELECT used::text FROM quota_use").await, "1");
    assert_eq!(
        one(&pool, "SELECT count(*)::text FROM idempotency_keys").await,
        "0"
    );
    refused(
        &pool,
        &format!("UPDATE intents SET state = 'certified', settled_at = {T} WHERE id = 3"),
        denied,
        "settled, once",
    )
    .await;
    // The rn is free again: a new intent may open for it and be certified as entry 2.
    run(&pool, &intent("FV-2")).await.unwrap();
    let reopened: i64 = one(
        &pool,
        "SELECT id::text FROM intents WHERE rn = 'FV-2' AND state = 'open'",
    )
    .await
    .parse()
    .unwrap();
    run(&pool, &entry(2, "FV-2", reopened as u64, 2, head))
        .await
        .unwrap();
    // No intent for an rn already certified, however the transactions interleave.
    refused(
        &pool,
        &intent("FV-2"),
        SqlState::UNIQUE_VIOLATION,
        "one_live_per_rn",
    )
    .await;
    // An intent is recorded open (last: a refused insert uses up an id).
    let settled = format!(
        "INSERT INTO intents (org, environment, rn, request_digest, body, created_at, \
         quota_year, quota_limit, state, settled_at) VALUES ('demo', 'production', 'FV-X', \
         repeat('a', 64), '{{}}', {T}, 2026, 2, 'certified', {T})"
    );
    refused(&pool, &settled, SqlState::CHECK_VIOLATION, "recorded open").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_never_pass_the_quota() {
    let Some(server) = server("PostgreSQL quota claims") else {
        return;
    };
    let pool = app_pool(&server).await;
    migrate(&pool, MIGRATIONS).await.unwrap();
    run(
        &pool,
        &format!("INSERT INTO organizations VALUES ('demo', '{{}}', {T})"),
    )
    .await
    .unwrap();
    // A quota of 3; 12 intents at once, each on a connection of its own.
    let mut claims = Vec::new();
    for i in 0..12 {
        let pool = pool.clone();
        let claim = intent_of(&format!("C-{i}"), 3);
        claims.push(tokio::spawn(
            async move { run(&pool, &claim).await.is_ok() },
        ));
    }
    let mut granted = 0;
    for claim in claims {
        granted += usize::from(claim.await.unwrap());
    }
    assert_eq!(granted, 3, "exactly the quota");
    assert_eq!(one(&pool, "SELECT used::text FROM quota_use").await, "3");
}
