//! A partition (issue 29, item 7): one replica, the outsider, runs in a network namespace
//! (`harness.rs`, `Netns`) and reaches PostgreSQL and the DGI's web API only through its link;
//! two replicas run on this host; HAProxy sends four clients' invoices to all three, the
//! clients retrying each invoice until it is settled (`load.rs`). The outsider is made to
//! stop its invoices between the DGI's confirm and their journaling (`EMCF_PAUSE_AT`,
//! `src/failpoint.rs`), and the test takes its link down while it holds its lease and such
//! an invoice. What must hold, read from the database itself (every row any client writes is
//! copied, with the writer's address and the server's clock, by triggers the test adds):
//! the leader fences the outsider and takes its open intents over only once its lease ran out
//! in the database and the grace passed (`Certifier::takeover_grace`,
//! `src/certify/replica.rs`), and settles them from the DGI's pending list (here: to an
//! administrator, the DGI having finalized them); the outsider writes nothing once its lease
//! ran out, not even when its link comes back and it resumes the invoice it held, and exits
//! non-zero once it sees itself fenced; every invoice the DGI confirmed is in the register
//! once, no rn twice in either, every 200 in the register.

use std::time::{Duration, Instant};

use super::harness::{resolve_args, Cluster, Netns, Outsider, DATABASE};
use super::load::{self, Load};

/// Concurrent clients.
const CLIENTS: usize = 4;

/// The web API device's call limits in every replica: the takeover grace is their sum and
/// 5 s ([`GRACE`]) instead of 25 s by default.
const DEVICE_KEYS: &str = "connect_timeout_ms = 1000\nrequest_timeout_ms = 2000\n";

/// `Certifier::takeover_grace` with [`DEVICE_KEYS`].
const GRACE: Duration = Duration::from_secs(8);

/// Every row written to any table of the register's database, copied with the writer's
/// address (`inet_client_addr()`: NULL over the Unix socket the host's replicas use, the
/// namespace's address for the outsider) and the server's clock when it was written.
const AUDIT: &str = "\
CREATE TABLE partition_audit (
    n      bigserial PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    client inet DEFAULT inet_client_addr(),
    tbl    text NOT NULL,
    op     text NOT NULL,
    row    jsonb
);
CREATE FUNCTION partition_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO partition_audit (tbl, op, row)
    VALUES (TG_TABLE_NAME, TG_OP, to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END));
    RETURN NULL;
END $$;
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables
             WHERE schemaname = 'public' AND tablename <> 'partition_audit' LOOP
        EXECUTE format('CREATE TRIGGER zz_partition_audit AFTER INSERT OR UPDATE OR DELETE '
                       'ON %I FOR EACH ROW EXECUTE FUNCTION partition_audit()', t);
    END LOOP;
END $$;";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_cut_off_is_fenced_before_its_work_is_taken_over_and_duplicates_nothing() {
    let subject = "replicas: a partition";
    let Some(ns) = Netns::create(subject) else {
        return;
    };
    let pause_dir = tempfile::tempdir().expect("temporary folder");
    let pause = pause_dir.path().join("pause");
    let paused = pause_dir.path().join("pause.here");
    let pause_at = format!("after_finalize:{}", pause.display());
    let latency = Duration::from_millis(100);
    let env = [("EMCF_PAUSE_AT", pause_at.as_str())];
    let Some((cluster, mut outsider)) =
        Cluster::start_with_outsider(subject, 2, latency, DEVICE_KEYS, &ns, &env).await
    else {
        return;
    };
    cluster.pg.sql(DATABASE, AUDIT);
    let context = |outsider: &Outsider| {
        format!(
            "{}\n---- {} ----\n{}\n{}",
            cluster.replicas.logs(),
            Outsider::NAME,
            outsider.log(),
            cluster.proxy.log()
        )
    };

    // Load on every replica, the outsider included.
    let load = Load::start_retrying(cluster.proxy.addr, &cluster.key, "N", CLIENTS);
    let deadline = Instant::now() + Duration::from_secs(30);
    while load.certified() < 8 || !outsider.log().contains("certified sequence=") {
        assert!(Instant::now() < deadline, "no load\n{}", context(&outsider));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The outsider's next invoice is confirmed by the DGI and not journaled yet: cut then.
    std::fs::write(&pause, "").expect("pause file");
    until(Duration::from_secs(30), || paused.exists()).await;
    let me = outsider.replica();
    assert!(!me.is_empty(), "the outsider has no replica name");
    ns.set_link(false);
    let cut = Instant::now();

    // The leader fences it and takes its open intents over, once its lease ran out and the
    // grace passed.
    let lease = format!("replica:{me}");
    let fenced = format!(
        "SELECT count(*) FROM partition_audit WHERE tbl = 'leases' \
         AND row ->> 'name' = '{lease}' AND row ->> 'holder' = '(fenced)'"
    );
    let deadline = Instant::now() + Duration::from_secs(45);
    while cluster.pg.sql(DATABASE, &fenced) == "0" {
        assert!(
            Instant::now() < deadline,
            "the outsider was never fenced\n{}",
            context(&outsider)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let fenced_after = cut.elapsed();
    // The end of its lease as the database last granted it (by the server's clock), the
    // fence, and the first change of owner of an intent it wrote.
    let held_until = format!(
        "(SELECT max((row ->> 'held_until')::timestamptz) FROM partition_audit \
         WHERE tbl = 'leases' AND row ->> 'name' = '{lease}' AND row ->> 'holder' = '{me}')"
    );
    let fence_at = format!(
        "(SELECT min(at) FROM partition_audit WHERE tbl = 'leases' \
         AND row ->> 'name' = '{lease}' AND row ->> 'holder' = '(fenced)')"
    );
    let its_intents = format!(
        "(SELECT (row ->> 'id')::bigint FROM partition_audit \
         WHERE tbl = 'intents' AND row ->> 'owner' = '{me}')"
    );
    let taken_at = format!(
        "(SELECT min(at) FROM partition_audit WHERE tbl = 'intents' \
         AND row ->> 'owner' IS DISTINCT FROM '{me}' AND (row ->> 'id')::bigint IN {its_intents})"
    );
    let seconds = |from: &str, to: &str| -> f64 {
        let text = cluster.pg.sql(
            DATABASE,
            &format!("SELECT coalesce(extract(epoch FROM {to} - {from}), -1000)"),
        );
        text.parse().unwrap_or(-1000.0)
    };
    let fence_gap = seconds(&held_until, &fence_at);
    let taken_gap = seconds(&held_until, &taken_at);
    eprintln!(
        "fenced {fenced_after:?} after the cut; {fence_gap:.2} s after its lease ran out, \
         its intents taken {taken_gap:.2} s after"
    );
    assert!(
        fence_gap >= GRACE.as_secs_f64(),
        "fenced {fence_gap} s after its lease ran out, before the grace of {GRACE:?}\n{}",
        context(&outsider)
    );
    assert!(
        taken_gap >= fence_gap,
        "an intent of the outsider taken over ({taken_gap} s) before the fence ({fence_gap} s)"
    );

    // Settled from the DGI's pending list: the DGI finalized what the outsider held, so
    // only an administrator can tell, and the register says so.
    let unsettled = format!(
        "SELECT count(*) FROM intents WHERE state = 'open' AND awaiting IS NULL \
         AND id IN {its_intents}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while cluster.pg.sql(DATABASE, &unsettled) != "0" {
        assert!(
            Instant::now() < deadline,
            "the outsider's intents were not settled\n{}",
            context(&outsider)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The outsider resumes the invoice it held, still cut off, then its link comes back.
    std::fs::remove_file(&pause).expect("pause file removed");
    until(Duration::from_secs(10), || !paused.exists()).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    ns.set_link(true);
    let exit = tokio::task::block_in_place(|| outsider.wait_exit(Duration::from_secs(60)));
    let log = outsider.log();
    let Some(exit) = exit else {
        panic!(
            "the outsider still runs after its link came back\n{}",
            context(&outsider)
        );
    };
    assert!(!exit.success(), "a fenced replica exited cleanly:\n{log}");
    assert!(
        log.contains("lease was fenced off"),
        "the outsider did not see itself fenced:\n{log}"
    );

    // It wrote nothing once its lease had run out: no row of any table.
    let late = cluster.pg.sql(
        DATABASE,
        &format!(
            "SELECT tbl || ' ' || op || ' ' || at || ' ' || row FROM partition_audit \
             WHERE client = '{}' AND at >= {held_until} ORDER BY n",
            ns.ns_ip()
        ),
    );
    assert!(
        late.is_empty(),
        "written by the outsider after its lease ran out:\n{late}\n{}",
        context(&outsider)
    );
    let before = cluster.pg.sql(
        DATABASE,
        &format!(
            "SELECT count(*) FROM partition_audit WHERE client = '{}'",
            ns.ns_ip()
        ),
    );
    assert_ne!(before, "0", "the audit never saw the outsider write");

    // An administrator settles what only they can, on a replica of the host; then every
    // invoice is accounted for, once.
    // The invoice it held was finalized by the DGI before the cut: not pending any more, it
    // waits for an administrator.
    let finalized = settle_awaiting(&cluster);
    assert!(
        finalized >= 1,
        "the invoice the outsider held, confirmed by the DGI, was not left to an administrator"
    );
    let answers = load.finish().await;
    cluster.assert_each_once(&load::certified(&answers));
}

/// Waits up to `within` for `done`.
async fn until(within: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "waited {within:?} in vain");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `intent resolve` on the first replica of every intent waiting for an administrator, with
/// what the DGI's portal shows of its request (`kills.rs` does the same); how many the DGI
/// had finalized.
fn settle_awaiting(cluster: &Cluster) -> usize {
    let mut finalized = 0;
    let rows = cluster.pg.sql(
        DATABASE,
        "SELECT id || ' ' || coalesce(body ->> 'channel_ref', '') FROM intents \
         WHERE state = 'open' AND awaiting IS NOT NULL ORDER BY id",
    );
    for row in rows.lines() {
        let (id, uid) = row.split_once(' ').unwrap_or((row, ""));
        let (args, on_portal) = resolve_args(&cluster.api, id, uid, "the partition test");
        finalized += usize::from(on_portal);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster.replicas.cli_ok(0, &args);
    }
    finalized
}
