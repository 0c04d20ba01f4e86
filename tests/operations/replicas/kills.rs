//! Replicas killed with `kill -9` under four clients that retry whatever does not settle
//! their invoice, as an ERP retries a lost answer (`load.rs`, `Load::start_retrying`). One
//! replica is started again on its state directory (it fences its predecessor and settles its
//! invoices at once), another is not (the leader takes its invoices over once its lease ran
//! out and the grace passed: `src/certify/replica.rs`). What a hosting provider must see:
//! nothing lost (every invoice the DGI confirmed is in the register, or waits for an
//! administrator, shown as such by every replica and settled by the administrator on a
//! replica that is not the one that found it so), nothing twice (at the DGI or in the
//! register), every 200 in the register, and the register's chains whole.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{resolve_args, Cluster};
use super::load::{self, Load};

const CLIENTS: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_killed_under_load_lose_nothing_and_certify_nothing_twice() {
    let subject = "replicas: kill -9 under load";
    let Some(mut cluster) = Cluster::start(subject, 3, None, Duration::from_millis(300)).await
    else {
        return;
    };
    let load = Load::start_retrying(cluster.proxy.addr, &cluster.key, "K", CLIENTS);
    let more = |n: usize, within: u64| {
        let from = load.certified();
        let load = &load;
        async move {
            load.until_certified(from, n, Duration::from_secs(within))
                .await
        }
    };
    assert!(more(8, 30).await, "no load\n{}", cluster.replicas.logs());

    // The first replica (the leader: started first) dies, and comes back on its directory.
    cluster.replicas.kill(0);
    assert!(
        more(6, 60).await,
        "stopped after a kill\n{}",
        cluster.replicas.logs()
    );
    cluster.replicas.start(0);
    cluster.replicas.wait_ready(0).await;
    assert!(
        more(6, 60).await,
        "stopped after a restart\n{}",
        cluster.replicas.logs()
    );

    // The second dies for good: its invoices are the leader's to settle.
    cluster.replicas.kill(1);
    assert!(
        more(8, 90).await,
        "stopped after a kill\n{}",
        cluster.replicas.logs()
    );
    let answers = load.finish().await;

    // Every open intent settled, or waiting for an administrator on one replica.
    let deadline = Instant::now() + Duration::from_secs(90);
    let awaiting = loop {
        let awaiting = awaiting_administrator(&cluster);
        if cluster.open_intents() == awaiting.len() {
            break awaiting;
        }
        assert!(
            Instant::now() < deadline,
            "{} open intents, {} waiting for an administrator\n{}",
            cluster.open_intents(),
            awaiting.len(),
            cluster.replicas.logs()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };

    let certified = load::certified(&answers);
    let register = once_each("the register", cluster.register_rns());
    let confirmed = once_each("the DGI", cluster.confirmed_rns());
    let context = || cluster.replicas.logs();
    let missing: Vec<_> = certified.difference(&register).collect();
    assert!(
        missing.is_empty(),
        "answered 200, not in the register: {missing:?}\n{}",
        context()
    );
    let unanswered: Vec<_> = register.difference(&certified).collect();
    assert!(
        unanswered.is_empty(),
        "in the register, never answered 200: {unanswered:?}"
    );
    let unconfirmed: Vec<_> = register.difference(&confirmed).collect();
    assert!(
        unconfirmed.is_empty(),
        "in the register, not at the DGI: {unconfirmed:?}"
    );
    // What the DGI confirmed and the register lacks waits for an administrator, said once.
    let lost: BTreeSet<&String> = confirmed.difference(&register).collect();
    let surfaced: BTreeSet<&String> = awaiting.keys().collect();
    assert!(
        lost.is_subset(&surfaced),
        "confirmed at the DGI, neither in the register nor waiting: {:?}\n{}",
        lost.difference(&surfaced).collect::<Vec<_>>(),
        context()
    );
    let running: Vec<usize> = (0..cluster.replicas.count())
        .filter(|i| cluster.replicas.is_running(*i))
        .collect();
    let partial: Vec<_> = awaiting
        .iter()
        .filter(|(_, n)| **n != running.len())
        .collect();
    assert!(
        partial.is_empty(),
        "not shown by every replica: {partial:?}"
    );
    eprintln!(
        "certified {}, waiting for an administrator {}",
        certified.len(),
        awaiting.len()
    );

    // The administrator settles each from the DGI's portal, on a replica that is not its
    // owner: then each invoice the DGI confirmed is in the register, once.
    for rn in awaiting.keys() {
        settle_elsewhere(&cluster, &running, rn);
    }
    assert_eq!(cluster.open_intents(), 0, "{}", context());
    let register = once_each("the register", cluster.register_rns());
    assert_eq!(
        register, confirmed,
        "the register is what the DGI confirmed"
    );
    cluster.replicas.cli_ok(running[0], &["log", "verify"]);
}

/// `intent resolve` of the open intent of `rn`, on a running replica other than its owner,
/// with what the DGI shows of its request (certified, or not if it finalized none).
fn settle_elsewhere(cluster: &Cluster, running: &[usize], rn: &str) {
    let row = cluster.pg.sql(
        "register",
        &format!(
            "SELECT id || ' ' || owner || ' ' || coalesce(body ->> 'channel_ref', '') \
             FROM intents WHERE state = 'open' AND rn = '{rn}'"
        ),
    );
    let mut parts = row.split(' ');
    let (id, owner, uid) = (
        parts.next().unwrap_or_default().to_owned(),
        parts.next().unwrap_or_default().to_owned(),
        parts.next().unwrap_or_default().to_owned(),
    );
    let other = running
        .iter()
        .copied()
        .find(|i| {
            std::fs::read_to_string(cluster.replicas.dir(*i).join("state/replica"))
                .map(|name| name.trim() != owner)
                .unwrap_or(true)
        })
        .expect("a replica other than the owner runs");
    let (args, _) = resolve_args(&cluster.api, &id, &uid, "the replicas test");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cluster.replicas.cli_ok(other, &args);
}

/// `rns` as a set, after checking that none is there twice.
fn once_each(what: &str, rns: Vec<String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let twice: Vec<_> = rns
        .iter()
        .filter(|rn| !seen.insert((*rn).clone()))
        .collect();
    assert!(twice.is_empty(), "{what} holds twice: {twice:?}");
    seen
}

/// The rns each running replica shows waiting for an administrator (`intent list`), and by
/// how many replicas.
fn awaiting_administrator(cluster: &Cluster) -> BTreeMap<String, usize> {
    let mut shown = BTreeMap::new();
    for i in (0..cluster.replicas.count()).filter(|i| cluster.replicas.is_running(*i)) {
        let listed = cluster.replicas.cli_ok(i, &["intent", "list", "--json"]);
        let open: Vec<Value> = serde_json::from_str(&listed).expect("intent list --json");
        for intent in open
            .iter()
            .filter(|intent| intent["state"] == "awaiting_administrator")
        {
            let rn = intent["rn"].as_str().unwrap_or_default().to_owned();
            *shown.entry(rn).or_insert(0) += 1;
        }
    }
    shown
}
