//! Outages under load, through HAProxy, four clients posting as an ERP does (`load.rs`): the
//! register's database restarted, a replica stopped with SIGTERM. What a shop must see: every
//! answer a certification or a 503 with `Retry-After` (never a 500, never a connection cut
//! instead of an answer), certification going on by itself, and every invoice answered 200 in
//! the register once and confirmed once at the DGI, nothing else in either.

use std::time::Duration;

use super::harness::{Cluster, Replicas};
use super::load::{self, Load};

/// Concurrent clients.
const CLIENTS: usize = 4;

/// Fails with every unclean answer, the replicas' and HAProxy's logs; says on stderr what
/// the clients met and when HAProxy took a replica out or back.
fn assert_clean(cluster: &Cluster, answers: &[load::Answer]) {
    let mut met: std::collections::BTreeMap<String, usize> = Default::default();
    for answer in answers {
        let key = match (&answer.status, answer.error_code) {
            (Ok(status), Some(code)) => format!("{status} ({code})"),
            (Ok(status), None) => status.to_string(),
            (Err(_), _) => "no answer".to_owned(),
        };
        *met.entry(key).or_default() += 1;
    }
    let proxy_log = cluster.proxy.log();
    let servers: Vec<&str> = proxy_log
        .lines()
        .filter(|l| l.contains("is DOWN") || l.contains("is UP"))
        .collect();
    eprintln!("answers: {met:?}; HAProxy: {servers:#?}");
    let mut said: std::collections::BTreeSet<&str> = Default::default();
    said.extend(answers.iter().filter_map(|a| a.error_desc.as_deref()));
    eprintln!("refusals: {said:#?}");
    let unclean = load::unclean(answers);
    assert!(
        unclean.is_empty(),
        "answers other than 200 or 503 with Retry-After: {unclean:#?}\n{}\n{}",
        cluster.replicas.logs(),
        cluster.proxy.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgresql_restarted_under_load_costs_only_clean_503s_and_loses_nothing() {
    let subject = "replicas: PostgreSQL restarted under load";
    let latency = Duration::from_millis(50);
    let Some(mut cluster) = Cluster::start(subject, 3, None, latency).await else {
        return;
    };
    let load = Load::start(cluster.proxy.addr, &cluster.key, "P", CLIENTS);
    assert!(
        load.until_certified(0, 12, Duration::from_secs(30)).await,
        "no load before the restart\n{}",
        cluster.replicas.logs()
    );
    // Stopped as a crash of its machine would (no checkpoint), down long enough for HAProxy
    // to take every replica out of service, then started again on the same port.
    let down_at = load.elapsed();
    tokio::task::block_in_place(|| cluster.pg.stop_immediate());
    tokio::time::sleep(Duration::from_secs(3)).await;
    tokio::task::block_in_place(|| cluster.pg.start());
    let up_at = load.elapsed();
    // Certification resumes by itself: no replica restarted.
    let before = load.certified();
    let resumed = load
        .until_certified(before, 12, Duration::from_secs(60))
        .await;
    let answers = load.finish().await;
    assert!(
        resumed,
        "certification did not resume after the restart\n{}",
        cluster.replicas.logs()
    );
    assert_clean(&cluster, &answers);
    // The clients met the outage: 503s with Retry-After while it lasted.
    let refused = answers
        .iter()
        .filter(|a| a.status == Ok(503) && a.at >= down_at && a.at <= up_at + latency * 40)
        .count();
    assert!(refused > 0, "no client met the outage: {answers:#?}");
    cluster.assert_each_once(&load::certified(&answers));
    for i in 0..cluster.replicas.count() {
        cluster.replicas.wait_ready(i).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_stopped_with_sigterm_under_load_costs_no_client_an_error() {
    let subject = "replicas: a replica stopped with SIGTERM";
    // The DGI answers slowly: the replica has invoices under way when it is told to stop.
    let latency = Duration::from_millis(300);
    let Some(mut cluster) = Cluster::start(subject, 3, None, latency).await else {
        return;
    };
    let load = Load::start(cluster.proxy.addr, &cluster.key, "T", CLIENTS);
    assert!(
        load.until_certified(0, 8, Duration::from_secs(30)).await,
        "no load before the stop\n{}",
        cluster.replicas.logs()
    );
    let stopped = 1;
    // Stopped while HAProxy counts a request in progress on it (each takes two calls to
    // the DGI, 600 ms at least).
    let name = Replicas::name(stopped);
    let busy_by = std::time::Instant::now() + Duration::from_secs(10);
    while cluster.proxy.in_progress(&name) == 0 {
        assert!(std::time::Instant::now() < busy_by, "{name} is never busy");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let stopped_at = load.elapsed();
    let clean_exit = cluster.replicas.stop(stopped).await;
    let exited_at = load.elapsed();
    // The others take every request: certification goes on.
    let before = load.certified();
    let went_on = load
        .until_certified(before, 8, Duration::from_secs(30))
        .await;
    let answers = load.finish().await;
    let log = cluster.replicas.log(stopped);
    assert!(clean_exit, "the replica did not exit cleanly:\n{log}");
    assert!(
        went_on,
        "certification stopped\n{}",
        cluster.replicas.logs()
    );
    assert_clean(&cluster, &answers);
    // It finished what it had under way: what HAProxy sent it was answered by it, and it
    // took nothing after its exit.
    let proxy_log = cluster.proxy.log();
    let name = format!("replicas/{name} ");
    let served: Vec<&str> = proxy_log
        .lines()
        .filter(|l| l.contains(&name) && l.contains("POST /api/v1/Invoice"))
        .collect();
    assert!(!served.is_empty(), "HAProxy sent it nothing:\n{proxy_log}");
    assert!(
        served.iter().all(|l| l.contains(" 200 ")),
        "it answered something else than a certification: {served:#?}"
    );
    // What it had under way when told to stop was certified and answered.
    let after_stop = log
        .split_once("stop requested")
        .map(|(_, after)| after)
        .unwrap_or_else(|| panic!("no stop in its log:\n{log}"));
    assert!(
        after_stop.contains("certified sequence="),
        "nothing finished after the stop (told after {stopped_at:?}, exited after \
         {exited_at:?}):\n{log}"
    );
    cluster.assert_each_once(&load::certified(&answers));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_restart_under_load_costs_no_client_an_error_and_raises_no_false_doubt() {
    let subject = "replicas: a rolling restart under load";
    let latency = Duration::from_millis(300);
    let Some(mut cluster) = Cluster::start(subject, 3, None, latency).await else {
        return;
    };
    let load = Load::start(cluster.proxy.addr, &cluster.key, "R", CLIENTS);
    assert!(load.until_certified(0, 8, Duration::from_secs(30)).await);
    // Each replica in turn, as an upgrade does: stopped, started again, in service again.
    for i in 0..cluster.replicas.count() {
        assert!(
            cluster.replicas.stop(i).await,
            "{}",
            cluster.replicas.log(i)
        );
        cluster.replicas.start(i);
        cluster.replicas.wait_ready(i).await;
        let before = load.certified();
        assert!(
            load.until_certified(before, 6, Duration::from_secs(30))
                .await,
            "certification stopped after {} came back\n{}",
            Replicas::name(i),
            cluster.replicas.logs()
        );
    }
    let answers = load.finish().await;
    assert_clean(&cluster, &answers);
    cluster.assert_each_once(&load::certified(&answers));
    // No invoice another replica was certifying is reported in doubt (an administrator
    // would be asked to settle an invoice that was certified).
    let logs = cluster.replicas.logs();
    let doubts: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("invoice in doubt"))
        .collect();
    assert!(doubts.is_empty(), "false doubts: {doubts:#?}");
}
