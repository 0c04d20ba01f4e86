//! What every replica must agree on, because it is in the one database: a key disabled
//! through one replica's CLI is refused by all within a second; an organization's last
//! quota units are certified exactly once whichever replicas the requests reach.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{Cluster, Replicas, ORG};
use super::load::{self, Answer};
use crate::common;

/// How soon every replica must refuse a key disabled on one of them.
const KEY_STATE_SEEN_WITHIN: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_disabled_on_one_replica_is_refused_by_every_replica_within_a_second() {
    let subject = "replicas: a key disabled on one";
    let Some(cluster) = Cluster::start(subject, 3, None, Duration::ZERO).await else {
        return;
    };
    let replicas = &cluster.replicas;
    // Each replica certifies with the key first (it then knows the key matched).
    for i in 0..replicas.count() {
        let answer = load::post(replicas.addr(i), &cluster.key, &rn(i), Instant::now()).await;
        assert_eq!(answer.status, Ok(200), "{answer:?}\n{}", replicas.log(i));
    }
    let keys: Value =
        serde_json::from_str(&replicas.cli_ok(1, &["key", "list", "--org", ORG, "--json"]))
            .expect("key list --json");
    let id = keys[0]["id"].as_str().expect("the key's id").to_owned();

    // Disabled through the third replica's admin socket.
    replicas.cli_ok(2, &["key", "disable", &id]);
    let disabled = Instant::now();
    // Every replica refuses it from then on: the retry of the invoice it certified (the
    // request a shop's ERP sends again most often) gets 401 (102), not the stored answer.
    let mut refused_after: BTreeMap<usize, Duration> = BTreeMap::new();
    while refused_after.len() < replicas.count() && disabled.elapsed() < 2 * KEY_STATE_SEEN_WITHIN {
        for i in 0..replicas.count() {
            if refused_after.contains_key(&i) {
                continue;
            }
            let answer = load::post(replicas.addr(i), &cluster.key, &rn(i), disabled).await;
            match (answer.status.clone(), answer.error_code) {
                (Ok(401), Some(102)) => {
                    refused_after.insert(i, answer.at);
                }
                (Ok(200), _) => {}
                _ => panic!("{}: {answer:?}", Replicas::name(i)),
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 0..replicas.count() {
        let after = refused_after.get(&i).copied();
        assert!(
            after.is_some_and(|after| after <= KEY_STATE_SEEN_WITHIN),
            "{} still accepts the disabled key {after:?} after",
            Replicas::name(i)
        );
    }
    // A new invoice too, on every replica and through HAProxy; reading an invoice as well.
    let mut addrs: Vec<_> = (0..replicas.count()).map(|i| replicas.addr(i)).collect();
    addrs.push(cluster.proxy.addr);
    for addr in addrs {
        let answer = load::post(addr, &cluster.key, "K-new", Instant::now()).await;
        assert_eq!(answer.status, Ok(401), "{addr}: {answer:?}");
        let read = common::get(
            addr,
            &format!("/api/v1/Invoice/{}", rn(0)),
            Some(&cluster.key),
        )
        .await;
        assert_eq!(read.status, 401, "{addr}: {}", read.body);
    }
    // Nothing more was certified.
    assert_eq!(cluster.register_rns(), ["K-1", "K-2", "K-3"]);
    assert_eq!(cluster.api.finalized_count(), 3);

    // Enabled again through the first: every replica takes it at once.
    replicas.cli_ok(0, &["key", "enable", &id]);
    let enabled = Instant::now();
    for i in 0..replicas.count() {
        loop {
            let answer = load::post(replicas.addr(i), &cluster.key, &rn(i), enabled).await;
            if answer.status == Ok(200) {
                break;
            }
            assert!(
                enabled.elapsed() <= KEY_STATE_SEEN_WITHIN,
                "{} still refuses the key enabled again: {answer:?}",
                Replicas::name(i)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The invoice replica `i` certifies.
fn rn(i: usize) -> String {
    format!("K-{}", i + 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_last_quota_units_are_certified_once_across_replicas() {
    const LEFT: usize = 6;
    let subject = "replicas: the quota across replicas";
    let latency = Duration::from_millis(100);
    let Some(cluster) = Cluster::start(subject, 3, Some(LEFT as u64), latency).await else {
        return;
    };
    // 3 x LEFT invoices at once, spread over the replicas by HAProxy.
    let since = Instant::now();
    let requests: Vec<_> = (0..3 * LEFT)
        .map(|n| {
            let (addr, key) = (cluster.proxy.addr, cluster.key.clone());
            tokio::spawn(async move { load::post(addr, &key, &format!("Q-{n}"), since).await })
        })
        .collect();
    let mut answers: Vec<Answer> = Vec::new();
    for request in requests {
        answers.push(request.await.expect("request task"));
    }
    let count = |status: u16, code: Option<u64>| {
        answers
            .iter()
            .filter(|a| a.status == Ok(status) && a.error_code == code)
            .count()
    };
    let context = || format!("{answers:#?}\n{}", cluster.replicas.logs());
    assert_eq!(count(200, None), LEFT, "certified\n{}", context());
    assert_eq!(
        count(429, Some(130)),
        2 * LEFT,
        "quota used up\n{}",
        context()
    );
    // The register and the DGI hold exactly the invoices answered 200, once each.
    cluster.assert_each_once(&load::certified(&answers));
    let used = cluster.pg.sql(
        super::harness::DATABASE,
        &format!("SELECT used FROM quota_use WHERE org = '{ORG}'"),
    );
    assert_eq!(used, LEFT.to_string());
    // HAProxy spread them: every replica answered some.
    let log = cluster.proxy.log();
    for i in 0..cluster.replicas.count() {
        let name = format!("replicas/{} ", Replicas::name(i));
        assert!(
            log.lines()
                .any(|l| l.contains(&name) && l.contains("POST /api/v1/Invoice")),
            "{name} served no invoice:\n{log}"
        );
    }
}
