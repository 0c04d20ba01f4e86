//! Client retries never certify twice (docs/design.md §4, step 3): concurrent identical
//! requests, a client that gives up while the box finalizes and then retries, and the optional
//! `Idempotency-Key` header as the IETF draft describes it (same key, same request: the same
//! answer; same key, another request: 422).

use crate::common;

use std::time::Duration;

use common::{
    add_org_with_key, config_with_device, fiscal_invoices, get, invoice, request,
    start_sim_with_timing, Gateway, Response,
};
use emcf_sim::faults::FaultConfig;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A gateway on a simulator whose 38h takes `finalize`, and a live key.
async fn setup(finalize: Duration) -> (tempfile::TempDir, common::Sim, Gateway, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = start_sim_with_timing(
        dir.path(),
        Duration::from_millis(1),
        finalize,
        FaultConfig::default(),
    )
    .await;
    let gateway = Gateway::start(dir.path(), &config_with_device(dir.path(), &sim.link));
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    (dir, sim, gateway, key)
}

async fn post(addr: std::net::SocketAddr, key: &str, body: &Value, idem: Option<&str>) -> Response {
    let auth = format!("Bearer {key}");
    let bytes = serde_json::to_vec(body).expect("json");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    if let Some(idem) = idem {
        headers.push(("Idempotency-Key", idem));
    }
    request(addr, "POST", "/api/v1/Invoice", &headers, Some(&bytes)).await
}

fn device_count_of(sim: &common::Sim, rn: &str) -> usize {
    fiscal_invoices(sim)
        .iter()
        .filter(|invoice| invoice["rn"] == rn)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_identical_requests_certify_once() {
    let (_dir, sim, gateway, key) = setup(Duration::from_millis(300)).await;
    let body = invoice("SAME-1");
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (key, body) = (key.clone(), body.clone());
        let addr = gateway.addr;
        tasks.push(tokio::spawn(
            async move { post(addr, &key, &body, None).await },
        ));
    }
    let mut codes = Vec::new();
    let mut fresh = 0;
    for task in tasks {
        let response = task.await.expect("task");
        match response.status {
            200 => {
                codes.push(response.json["codeDEFDGI"].clone());
                if response.header("idempotent-replayed").is_none() {
                    fresh += 1;
                }
            }
            409 => {
                assert_eq!(response.json["errorCode"], 111, "{}", response.body);
                assert!(response.header("retry-after").is_some());
            }
            other => panic!("unexpected {other}: {}", response.body),
        }
    }
    assert_eq!(fresh, 1, "exactly one request certified");
    assert!(codes.windows(2).all(|w| w[0] == w[1]), "{codes:?}");
    assert_eq!(device_count_of(&sim, "SAME-1"), 1);
    let stored = get(gateway.addr, "/api/v1/Invoice/SAME-1", Some(&key)).await;
    assert_eq!(stored.status, 200);
    assert_eq!(stored.json["codeDEFDGI"], codes[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_gives_up_and_retries_gets_the_one_certification() {
    let (_dir, sim, gateway, key) = setup(Duration::from_millis(1500)).await;
    let body = invoice("LEFT-1");
    // The client sends the request, waits a little, and hangs up while the box finalizes.
    let bytes = serde_json::to_vec(&body).expect("json");
    let mut stream = TcpStream::connect(gateway.addr).await.expect("connect");
    let head = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        bytes.len()
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    stream.write_all(&bytes).await.expect("body");
    tokio::time::sleep(Duration::from_millis(400)).await;
    drop(stream);

    // The retry while it runs: 409 with Retry-After, never a second certification.
    let during = post(gateway.addr, &key, &body, None).await;
    assert_eq!(during.status, 409, "{}", during.body);
    assert_eq!(during.json["errorCode"], 111);
    assert!(during.header("retry-after").is_some());

    // Retrying until done: the stored result of the one certification.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let done = loop {
        let response = post(gateway.addr, &key, &body, None).await;
        if response.status == 200 {
            break response;
        }
        assert_eq!(response.status, 409, "{}", response.body);
        assert!(std::time::Instant::now() < deadline, "never settled");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(done.header("idempotent-replayed"), Some("true"));
    assert_eq!(done.json["counters"], "1/1 FV");
    assert_eq!(device_count_of(&sim, "LEFT-1"), 1);
    assert_eq!(fiscal_invoices(&sim).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_idempotency_key_binds_one_request() {
    let (_dir, sim, gateway, key) = setup(Duration::from_millis(20)).await;
    let addr = gateway.addr;
    let first = post(addr, &key, &invoice("IDEM-1"), Some("\"order-77\"")).await;
    assert_eq!(first.status, 200, "{}", first.body);

    // Same key, same request (the key given bare this time): the same answer, replayed.
    let again = post(addr, &key, &invoice("IDEM-1"), Some("order-77")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json["codeDEFDGI"], first.json["codeDEFDGI"]);

    // Same key, another request (another rn): 422, nothing certified.
    let other = post(addr, &key, &invoice("IDEM-2"), Some("order-77")).await;
    assert_eq!(other.status, 422, "{}", other.body);
    assert_eq!(other.json["errorCode"], 112);
    assert!(other.json["errorDesc"]
        .as_str()
        .unwrap_or("")
        .contains("IDEM-1"));
    assert_eq!(device_count_of(&sim, "IDEM-2"), 0);

    // A malformed key: 400, nothing certified.
    let bad = post(addr, &key, &invoice("IDEM-3"), Some("\"\"")).await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.json["errorCode"], 113);

    // A key whose request certified nothing (refused before the device) stays free.
    let mut refused = invoice("IDEM-4");
    refused["mode"] = Value::from("XX");
    let refused = post(addr, &key, &refused, Some("order-78")).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let reused = post(addr, &key, &invoice("IDEM-5"), Some("order-78")).await;
    assert_eq!(reused.status, 200, "{}", reused.body);

    // The binding survives a restart (it is journaled with the intent).
    let mut gateway = gateway;
    assert!(gateway.terminate());
    let config = std::fs::read_to_string(&gateway.config).expect("config");
    let dir = gateway.dir.clone();
    drop(gateway);
    let gateway = Gateway::start(&dir, &config);
    gateway.wait_ready().await;
    let after = post(gateway.addr, &key, &invoice("IDEM-6"), Some("order-77")).await;
    assert_eq!(after.status, 422, "{}", after.body);
    assert_eq!(fiscal_invoices(&sim).len(), 2, "IDEM-1 and IDEM-5 only");
}
