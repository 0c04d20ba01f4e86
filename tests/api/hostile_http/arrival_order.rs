//! Issue 27, point 4: arrival order under load. 100 invoices sent 5 ms apart, each on a
//! connection of its own, are certified in the order they were sent: the register's sequence
//! follows the send order with no inversion.
//!
//! What it proves and where it stops: the client connects and writes each request whole, in
//! turn, from one task, so the kernel queues the connections in send order; the gateway
//! accepts them in that order from one task and each accepted connection takes its place in
//! the invoices' order at once (kept for its first request, src/api/mod.rs `EARLY_PLACE`),
//! before its head is parsed, its key checked (a blocking thread) and its body read
//! (src/arrivals.rs). So the threads' scheduling after the accept cannot reorder them; what
//! could is a connection whose task is stalled past `EARLY_PLACE` (100 ms) before its head is
//! read, or past `ORDER_WAIT` (500 ms) before its body is. On a loaded machine the gaps
//! between sends can shrink (the sending task stalls, then sends two at once), which makes
//! the test harder, never easier. Before the accept-time place, the same test failed 2 runs
//! of 3 at load 10 on 2 cores beside the 100,000-keys test (an invoice stalled ~20 ms between
//! its accept and its handler).

use crate::common;

use std::time::{Duration, Instant};

use common::{
    add_org_with_key, config_with_device_timing, exported_entries, http, invoice, Gateway, Sim,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INVOICES: usize = 100;
const GAP: Duration = Duration::from_millis(5);

#[tokio::test(flavor = "multi_thread")]
async fn invoices_sent_five_ms_apart_are_certified_in_the_order_sent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    // The whole burst waits for the box: a queue that holds it, and connections for each
    // (all from 127.0.0.1).
    let config = format!(
        "max_connections = 512\n{}\n[http]\nmax_connections_per_peer = 512\n",
        config_with_device_timing(dir.path(), &sim.link, &[("queue_capacity", 500)])
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    let addr = gateway.addr;

    let mut readers = Vec::new();
    let mut sent_at = Vec::new();
    let started = Instant::now();
    for i in 0..INVOICES {
        let body = serde_json::to_vec(&invoice(&format!("ORDER-{i:03}"))).expect("json");
        let auth = format!("Bearer {key}");
        let bytes = http::request_bytes(
            addr,
            "POST",
            "/api/v1/Invoice",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            Some(&body),
        );
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream.write_all(&bytes).await.expect("write");
        sent_at.push(started.elapsed());
        readers.push(tokio::spawn(async move {
            let mut raw = Vec::new();
            let read = tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut raw));
            let _ = read.await;
            http::parse_response(&raw)
        }));
        tokio::time::sleep(GAP).await;
    }
    let mut sequences = Vec::new();
    for (i, reader) in readers.into_iter().enumerate() {
        let response = reader
            .await
            .expect("reader")
            .unwrap_or_else(|e| panic!("ORDER-{i:03}: {e}"));
        assert_eq!(response.status, 200, "ORDER-{i:03}: {}", response.body);
        let sequence = response.json["sequence"].as_u64().expect("sequence");
        sequences.push(sequence);
    }
    let gaps: Vec<Duration> = sent_at.windows(2).map(|w| w[1] - w[0]).collect();
    let smallest = gaps.iter().min().copied().unwrap_or_default();
    let inversions: Vec<(usize, usize)> = (0..INVOICES)
        .flat_map(|i| (i + 1..INVOICES).map(move |j| (i, j)))
        .filter(|&(i, j)| sequences[i] > sequences[j])
        .collect();
    eprintln!(
        "{INVOICES} invoices sent over {:?} (smallest gap {smallest:?}); {} inversions",
        sent_at.last().copied().unwrap_or_default(),
        inversions.len()
    );
    assert!(
        inversions.is_empty(),
        "certified out of the order sent: {:?}",
        inversions
            .iter()
            .take(10)
            .map(|&(i, j)| format!(
                "ORDER-{i:03} (sent at {:?}, sequence {}) after ORDER-{j:03} (sent at {:?}, sequence {})",
                sent_at[i], sequences[i], sent_at[j], sequences[j]
            ))
            .collect::<Vec<_>>()
    );
    // The register says the same as the answers.
    let entries = exported_entries(dir.path(), &gateway.config);
    let in_register: Vec<&str> = entries.iter().filter_map(|e| e["rn"].as_str()).collect();
    let sent: Vec<String> = (0..INVOICES).map(|i| format!("ORDER-{i:03}")).collect();
    assert_eq!(in_register, sent, "the register's order is the send order");
}
