//! The reads of a large register on PostgreSQL, from the server's own plans: each reads a few
//! rows, never an organization's register or a table whole.

use emcf_gateway::store::postgres::PgRegister;
use emcf_gateway::store::EntryFilter;

use super::{app_pool, scenario, Both, P};

/// The rows each step of the plans read, from `auto_explain`'s lines: what it gave
/// (`(actual rows=N loops=M)`, N per loop) and what it read and left
/// (`Rows Removed by Filter: N`, also per loop; a table scanned whole shows there).
fn rows_read(plans: &str) -> Vec<(u64, &str)> {
    let number = |text: &str, key: &str| -> u64 {
        let Some(after) = text.split(key).nth(1) else {
            return 0;
        };
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap_or(0)
    };
    let mut read = Vec::new();
    for line in plans.lines() {
        if let Some(actual) = line.split("(actual").nth(1) {
            let loops = number(actual, "loops=").max(1);
            read.push((number(actual, "rows=") * loops, line));
        }
        if line.contains("Rows Removed by") {
            read.push((number(line, ": "), line));
        }
    }
    read
}

/// A large register: every read is answered from an index, reading a few rows, never the
/// organization's register or the table whole (the server's own plans, logged by
/// `auto_explain` with what each step read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_of_a_large_register_reads_a_few_rows() {
    let Some((server, both)) = Both::on("PostgreSQL reads of a large register").await else {
        return;
    };
    let certified = scenario(&both).await;
    let client = both.pool.client().await.unwrap();
    let role: String = client
        .query_one("SELECT current_user::text", &[])
        .await
        .unwrap()
        .get(0);
    // 20,000 more entries of demo's, as copies of its first (the reads below look at plans,
    // not at them), written past the triggers (`replica`), then the statistics a server keeps.
    const BULK: i64 = 20_000;
    let first = &certified[0];
    server.sql(
        &role,
        &format!(
            "SET session_replication_role = replica;
             INSERT INTO intents (id, org, environment, rn, request_digest, body, created_at,
                 quota_year, quota_limit, state, settled_at) OVERRIDING SYSTEM VALUE
                 SELECT 100000 + g, org, environment, 'BULK-' || g, request_digest, body,
                     created_at, quota_year, quota_limit, 'certified', created_at
                 FROM generate_series(1, {BULK}) g, intents WHERE id = {intent};
             INSERT INTO register_entries (environment, sequence, org, rn, intent, code_def,
                 certified_at, quota_year, chain_seq, prev_hash, hash, entry)
                 SELECT environment, 1000 + g, org, 'BULK-' || g, 100000 + g, 'BULK-' || g,
                     certified_at, quota_year, 1000 + g, prev_hash, hash, entry
                 FROM generate_series(1, {BULK}) g, register_entries
                 WHERE environment = 'production' AND sequence = 1;
             INSERT INTO credit_notes (org, environment, reference, sequence)
                 SELECT 'demo', 'production', 'BULK-' || g, 1001 + g
                 FROM generate_series(1, {BULK} - 1, 2) g;
             ANALYZE;",
            intent = first.intent
        ),
    );
    for setting in [
        "session_preload_libraries = 'auto_explain'",
        "auto_explain.log_min_duration = 0",
        "auto_explain.log_analyze = on",
        "auto_explain.log_timing = off",
    ] {
        server.sql("postgres", &format!("ALTER ROLE {role} SET {setting}"));
    }
    let log = server.socket_dir().join("server.log");
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    let before = logged().len();
    // New sessions, with the role's settings.
    let pg = PgRegister::new(app_pool(&server).await);
    let code = &first.security.code_def;
    assert_eq!(pg.entry(P, 3).await.unwrap().unwrap(), certified[2]);
    pg.entry_by_rn("demo", P, "FA-1").await.unwrap().unwrap();
    for org in [None, Some("demo".to_string())] {
        let filter = EntryFilter {
            org,
            environment: P,
            after_sequence: 2,
            limit: 3,
        };
        assert_eq!(pg.entries(&filter).await.unwrap().len(), 3);
    }
    let newest = pg.org_entries_back("demo", P, u64::MAX, 3, |_| true);
    assert_eq!(newest.await.unwrap().len(), 3);
    let back = pg
        .org_entries_back("demo", P, 10, 2, |_| true)
        .await
        .unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(pg.org_entry_count("demo", P).await.unwrap(), 15);
    assert_eq!(pg.register_length(P).await.unwrap(), 21);
    assert_eq!(pg.credit_links(first).await.unwrap().1.len(), 2);
    assert!(pg.holds_code("demo", P, code).await.unwrap());
    pg.credited_original("demo", P, code)
        .await
        .unwrap()
        .unwrap();
    pg.credited_original("demo", P, "BULK-7")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pg.open_intents().await.unwrap().len(), 2);
    pg.open_intent_for("demo", P, "FV-21")
        .await
        .unwrap()
        .unwrap();
    pg.idempotency_binding("demo", P, "idem-FV-1")
        .await
        .unwrap()
        .unwrap();

    let plans = logged()[before..].to_string();
    assert!(
        plans.matches("Query Text:").count() >= 16,
        "every read's plan is logged:\n{plans}"
    );
    let most = rows_read(&plans).into_iter().max().unwrap_or_default();
    assert!(
        most.0 <= 50,
        "a read of {} rows: {}\n{plans}",
        most.0,
        most.1
    );
}
