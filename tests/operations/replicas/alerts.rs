//! One e-mail per alert across replicas (issue 29): three replicas behind HAProxy, each with
//! `[smtp]` pointing at one SMTP sink (`tests/support/smtp.rs`), the organization with a quota
//! of 5 and an administrator's address. Its 4th invoice crosses 80 %: the administrator's
//! mailbox gets exactly one e-mail, although every replica sees the crossing. The leader is
//! then killed (`kill -9`) and another takes over: it carries on from the alerts' state in the
//! store, and several of its evaluations later the mailbox still holds one e-mail. When the
//! condition clears (a larger quota) and comes back (the quota of 5 again), exactly one more.

use std::time::{Duration, Instant};

use super::harness::{Cluster, Replicas, ORG};
use super::load;
use crate::common;
use crate::smtp::{Received, SmtpSink};

/// Long enough for every replica, the leader included, to evaluate several times.
const SEVERAL_TICKS: Duration = Duration::from_secs(6);
/// The leader's periodic evaluation (30 s) and a margin.
const FIRST_EVALUATION: Duration = Duration::from_secs(40);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_e_mail_per_alert_whichever_replica_leads() {
    let subject = "replicas: one e-mail per alert";
    let sink = SmtpSink::start().await;
    let smtp = format!(
        "\n[smtp]\nhost = \"127.0.0.1\"\nport = {}\n\
         from = \"emcf-gateway <alertes@passerelle.cd>\"\ntls = \"none\"\n",
        sink.addr.port()
    );
    let Some(mut cluster) = Cluster::start_with(subject, 3, Some(5), Duration::ZERO, &smtp).await
    else {
        return;
    };
    cluster
        .replicas
        .cli_ok(1, &["org", "update", ORG, "--admin-email", "admin@acme.cd"]);

    // 4 of 5 through HAProxy, whichever replicas take them: 80 %.
    for n in 1..=4 {
        let answer = load::post(cluster.proxy.addr, &cluster.key, &rn(n), Instant::now()).await;
        assert_eq!(answer.status, Ok(200), "{answer:?}");
    }
    // The leader evaluates the service's alerts within a second of an invoice it answered
    // itself, else every 30 s (`src/alerts/engine.rs`): HAProxy may have sent all four to the
    // others (a replica not yet seen up by its checks on a loaded machine).
    let mails = sink.wait_for(1, FIRST_EVALUATION).await;
    assert_eq!(mails.len(), 1, "{mails:?}\n{}", cluster.replicas.logs());
    // Every replica evaluates again after an invoice; none sends it again.
    for i in 0..cluster.replicas.count() {
        poke(&cluster, i).await;
    }
    tokio::time::sleep(SEVERAL_TICKS).await;
    assert_one_each(&sink.messages(), 1, &cluster);

    // The leader dies; another takes over within seconds and evaluates, several times.
    let old = cluster.leader().expect("a leader");
    cluster.replicas.kill(old);
    let leader = until_another_leads(&cluster, old).await;
    for _ in 0..3 {
        poke(&cluster, leader).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    tokio::time::sleep(SEVERAL_TICKS).await;
    assert_one_each(&sink.messages(), 1, &cluster);

    // The condition clears (a larger quota: 4 of 100) and comes back (4 of 5 again).
    cluster
        .replicas
        .cli_ok(leader, &["org", "update", ORG, "--quota", "100"]);
    until_quota_80(&cluster, leader, 0).await;
    assert_one_each(&sink.messages(), 1, &cluster);
    cluster
        .replicas
        .cli_ok(leader, &["org", "update", ORG, "--quota", "5"]);
    until_quota_80(&cluster, leader, 1).await;
    let mails = sink.wait_for(2, Duration::from_secs(20)).await;
    for i in 0..cluster.replicas.count() {
        if cluster.replicas.is_running(i) {
            poke(&cluster, i).await;
        }
    }
    tokio::time::sleep(SEVERAL_TICKS).await;
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert_one_each(&sink.messages(), 2, &cluster);
}

fn rn(n: usize) -> String {
    format!("AL-{n}")
}

/// Replica `i` answers an invoice (its 4th again: a replay, no quota used), so that it
/// evaluates the alerts within a second.
async fn poke(cluster: &Cluster, i: usize) {
    let answer = load::post(
        cluster.replicas.addr(i),
        &cluster.key,
        &rn(4),
        Instant::now(),
    )
    .await;
    assert_eq!(answer.status, Ok(200), "{answer:?}");
}

/// What the administrator's mailbox holds: `count` e-mails, each about the organization's
/// quota, each once (distinct Message-IDs, to its administrator).
fn assert_one_each(mails: &[Received], count: usize, cluster: &Cluster) {
    assert_eq!(mails.len(), count, "{mails:?}\n{}", cluster.replicas.logs());
    let mut ids = Vec::new();
    for mail in mails {
        let read = mail.strict();
        assert_eq!(read["to"], serde_json::json!(["admin@acme.cd"]), "{read}");
        ids.push(read["message_id"].as_str().unwrap_or_default().to_owned());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "{ids:?}");
}

/// The replica that leads once `old` is gone (within its lease's term and a few renewals).
async fn until_another_leads(cluster: &Cluster, old: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(leader) = cluster.leader().filter(|i| *i != old) {
            return leader;
        }
        assert!(
            Instant::now() < deadline,
            "no replica took the lead\n{}",
            cluster.replicas.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Pokes replica `i` until its `/metrics` shows `count` active `quota_80` alert.
async fn until_quota_80(cluster: &Cluster, i: usize, count: u32) {
    let line = format!("emcf_alerts_active{{kind=\"quota_80\"}} {count}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        poke(cluster, i).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let metrics = common::get(cluster.replicas.addr(i), "/metrics", None).await;
        if metrics.body.contains(&line) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} never shows {line}\n{}",
            Replicas::name(i),
            metrics.body
        );
    }
}
