//! The DGI's window of pending requests per e-MCF (10) held by the whole service, not by each
//! replica (`src/certify/web_api_channel/window.rs`): three replicas under thirty clients send
//! the simulator no more requests than its window takes (the DGI's error 1 is what a window
//! counted per replica would get, thirty at once); the places a replica killed held are free
//! again once the simulator's pending list shows their requests gone, and the others then use
//! every place.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::harness::{Cluster, DEVICE};
use super::load;

/// Clients at once: three windows' worth.
const CLIENTS: usize = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_keep_the_dgi_window_of_ten_between_them() {
    let subject = "replicas: the DGI's window shared";
    let Some(cluster) = Cluster::start(subject, 3, None, Duration::from_millis(300)).await else {
        return;
    };
    let since = Instant::now();
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (addr, key) = (cluster.replicas.addr(c % 3), cluster.key.clone());
        clients.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for n in 0..2 {
                answers.push(load::post(addr, &key, &format!("W-{c}-{n}"), since).await);
            }
            answers
        }));
    }
    let mut answers = Vec::new();
    for client in clients {
        answers.extend(client.await.expect("a client"));
    }
    let refused: Vec<_> = answers.iter().filter(|a| a.status != Ok(200)).collect();
    assert!(
        refused.is_empty(),
        "refused: {refused:?}\n{}",
        cluster.replicas.logs()
    );
    // A place is given back when its confirm is sent (`run.rs`): the DGI may count one more
    // for the moment the confirm takes, and refuse a request (sent again shortly). Never the
    // twenty at a time of three windows of ten.
    let window_full = cluster.api.refused_full_count();
    assert!(
        window_full <= (2 * CLIENTS / 10) as u64,
        "the DGI refused {window_full} requests for its full window"
    );
    cluster.assert_each_once(&load::certified(&answers));
    // Every place is free again once the load is over.
    assert_eq!(held(&cluster, None), 0, "{}", places(&cluster));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_places_of_a_replica_killed_are_free_again_once_its_requests_are_gone() {
    let subject = "replicas: the window of a replica killed";
    let Some(mut cluster) = Cluster::start(subject, 3, None, Duration::from_millis(300)).await
    else {
        return;
    };
    let victim = std::fs::read_to_string(cluster.replicas.dir(0).join("state/replica"))
        .expect("the replica's name file")
        .trim()
        .to_owned();
    // The first replica takes places for twelve invoices at once; it dies while it holds some.
    let since = Instant::now();
    let mut posts = Vec::new();
    for n in 0..12 {
        let (addr, key) = (cluster.replicas.addr(0), cluster.key.clone());
        posts.push(tokio::spawn(async move {
            load::post(addr, &key, &format!("V-{n}"), since).await
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while held(&cluster, Some(&victim)) < 5 {
        assert!(Instant::now() < deadline, "{}", places(&cluster));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cluster.replicas.kill(0);
    let mut certified = BTreeSet::new();
    for post in posts {
        let answer = post.await.expect("a client");
        if answer.status == Ok(200) {
            certified.insert(answer.rn);
        }
    }
    assert!(held(&cluster, Some(&victim)) > 0, "{}", places(&cluster));

    // The ERP sends again what it got no answer for, through HAProxy, until it is certified
    // (the leader takes the dead replica's invoices over after its lease and the grace).
    let killed: Vec<String> = (0..12)
        .map(|n| format!("V-{n}"))
        .filter(|rn| !certified.contains(rn))
        .collect();
    for rn in &killed {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let answer = load::post(cluster.proxy.addr, &cluster.key, rn, since).await;
            if answer.status == Ok(200) {
                certified.insert(rn.clone());
                break;
            }
            // A lost answer (HAProxy's 502 until its check finds the replica dead), a clean
            // 503, the 409 of an invoice still in flight: sent again.
            let again = matches!(answer.status, Ok(409 | 502) | Err(_)) || answer.is_clean();
            assert!(
                again && Instant::now() < deadline,
                "{answer:?}\n{}",
                cluster.replicas.logs()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    // Its places are recovered once the DGI's pending list shows their requests gone (those
    // it never noted wait for the sweep of stray requests: the hold, 60 s).
    let deadline = Instant::now() + Duration::from_secs(150);
    while held(&cluster, Some(&victim)) > 0 {
        assert!(
            Instant::now() < deadline,
            "{}\n{}",
            places(&cluster),
            cluster.replicas.logs()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The two replicas left use every place: twenty invoices at once, none refused, and the
    // DGI never finds its window full for more than the moment a confirm takes (places freed
    // too early would have it refuse the extra requests).
    let window_full = cluster.api.refused_full_count();
    let mut clients = Vec::new();
    for c in 0..20 {
        let (addr, key) = (cluster.replicas.addr(1 + c % 2), cluster.key.clone());
        clients.push(tokio::spawn(async move {
            load::post(addr, &key, &format!("A-{c}"), since).await
        }));
    }
    for client in clients {
        let answer = client.await.expect("a client");
        assert_eq!(answer.status, Ok(200), "{answer:?}");
        certified.insert(answer.rn);
    }
    let window_full = cluster.api.refused_full_count() - window_full;
    assert!(
        window_full <= 4,
        "the DGI refused {window_full} requests for its full window"
    );
    cluster.assert_each_once(&certified);
}

/// Places of the e-MCF held (by `holder`, or by anyone).
fn held(cluster: &Cluster, holder: Option<&str>) -> usize {
    let sql = match holder {
        Some(holder) => format!(
            "SELECT count(*) FROM window_slots WHERE device = '{DEVICE}' AND holder = '{holder}'"
        ),
        None => format!(
            "SELECT count(*) FROM window_slots WHERE device = '{DEVICE}' AND holder IS NOT NULL"
        ),
    };
    cluster
        .pg
        .sql(super::harness::DATABASE, &sql)
        .trim()
        .parse()
        .expect("a count")
}

/// The e-MCF's places as they stand, for a failure's message.
fn places(cluster: &Cluster) -> String {
    cluster.pg.sql(
        super::harness::DATABASE,
        "SELECT slot, epoch, holder, uid, doubted_at FROM window_slots ORDER BY slot",
    )
}
