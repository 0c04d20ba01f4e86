//! Issue 27, point 4: a service that always answers, against the real binary and the
//! simulator on a pty, as an attacker on the LAN and an operator would try it:
//!
//! - ~300 idle connections from 8 addresses (127.0.0.2..=127.0.0.9, each over its cap of 32,
//!   together over the server's 256) do not stop a status request from a 9th address nor from
//!   one of the 8: the longest-idle connections are closed to make room;
//! - a request whose head completes on a connection just closed to make room is never begun
//!   then cut: an invoice gets a 503 (127, nothing certified, its retry certifies it once), a
//!   status request its answer;
//! - SIGTERM with invoices queued: the port is closed at once (a new client is refused), the
//!   queued invoices get their 200 (with `Connection: close`) and are in the register;
//! - a head with too many headers gets a JSON 431, a head that does not come in time a JSON
//!   408, each in the language its `Accept-Language` asked for.

use crate::common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use common::{
    add_org_with_key, assert_error, config_with_device, config_with_device_timing,
    exported_entries, http, invoice, request, start_sim_with_timing, Gateway, Sim,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

fn status_request(addr: SocketAddr) -> Vec<u8> {
    format!("GET /api/v1/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").into_bytes()
}

/// The answer to `GET /api/v1/status` on a new connection from the address `from` (3 s at
/// the most).
async fn status_of(from: IpAddr, addr: SocketAddr) -> Result<http::Response, String> {
    http::exchange_from(
        Some(from),
        addr,
        &status_request(addr),
        Duration::from_secs(3),
    )
    .await
}

/// A gateway in `dir` with `config` (its device `shop`), `acme` and its key, ready.
async fn start(dir: &Path, config: String) -> (Gateway, String) {
    let gateway = Gateway::start(dir, &config);
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir, &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    (gateway, key)
}

/// [`start`] on a new simulator in `dir`: the configuration is `top` (top-level keys), the
/// device's ([`config_with_device`]), then `tables`.
async fn start_on_sim(dir: &Path, top: &str, tables: &str) -> (Sim, Gateway, String) {
    let sim = Sim::start(dir).await;
    let config = format!("{top}{}{tables}", config_with_device(dir, &sim.link));
    let (gateway, key) = start(dir, config).await;
    (sim, gateway, key)
}

/// Whether the server has closed `stream` (EOF or reset), without waiting.
async fn closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_millis(1), stream.read(&mut byte)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_from_many_addresses_never_silence_the_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The default caps: 32 per address, 256 in all.
    let (_sim, gateway, _key) = start_on_sim(dir.path(), "", "").await;
    let addr = gateway.addr;
    let mut idle = Vec::new();
    for i in 0..300u32 {
        let from = loopback(2 + (i % 8) as u8);
        let mut stream = http::connect_from(Some(from), addr).await.expect("connect");
        if i % 2 == 1 {
            // Half of them keep-alive connections after one answered request.
            let bytes = format!("GET /api/v1/status HTTP/1.1\r\nHost: {addr}\r\n\r\n");
            stream.write_all(bytes.as_bytes()).await.expect("write");
            let mut buf = [0u8; 4096];
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await;
        }
        idle.push(stream);
    }
    // Every one of them accepted (held, or closed to make room) before the probes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (label, from) in [
        ("a 9th address", loopback(10)),
        ("one of the 8", loopback(2)),
    ] {
        for attempt in 0..3 {
            let at = Instant::now();
            let status = status_of(from, addr).await.unwrap_or_else(|e| {
                panic!("{label}, attempt {attempt}: the status is unanswered: {e}")
            });
            assert_eq!(status.status, 200, "{label}: {}", status.body);
            assert_eq!(status.json["status"], true, "{label}: {}", status.body);
            assert!(
                at.elapsed() < Duration::from_secs(2),
                "{label}: the status took {:?}",
                at.elapsed()
            );
        }
    }
    let mut gone = 0;
    for stream in &mut idle {
        if closed(stream).await {
            gone += 1;
        }
    }
    // 300 - 256 at least were closed to make room (the probes' too).
    assert!(gone >= 300 - 256, "only {gone} idle connections closed");
    eprintln!("{gone} of 300 idle connections closed to make room");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_on_a_connection_closed_to_make_room_is_refused_not_cut() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tables = "\n[http]\nmax_connections_per_peer = 1\n";
    let (_sim, mut gateway, key) = start_on_sim(dir.path(), "", tables).await;
    let addr = gateway.addr;
    // Two connections, from two addresses, each with the first line of a head read by the
    // server but no request begun: idle, so each is closed for the next from its address.
    let (invoice_from, status_from) = (loopback(2), loopback(3));
    let mut invoicing = http::connect_from(Some(invoice_from), addr)
        .await
        .expect("connect");
    invoicing
        .write_all(format!("POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .await
        .expect("write");
    let mut probing = http::connect_from(Some(status_from), addr)
        .await
        .expect("connect");
    probing
        .write_all(b"GET /api/v1/status HTTP/1.1\r\n")
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(500)).await;
    for from in [invoice_from, status_from] {
        let status = status_of(from, addr)
            .await
            .expect("the new connection is answered");
        assert_eq!(status.status, 200, "{}", status.body);
    }
    // Their heads complete after they were told to close.
    let body = serde_json::to_vec(&invoice("EVICTED-1")).expect("json");
    let mut rest = format!(
        "Authorization: Bearer {key}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    rest.extend_from_slice(&body);
    let mut answers = Vec::new();
    for (stream, rest) in [
        (&mut invoicing, rest),
        (&mut probing, format!("Host: {addr}\r\n\r\n").into_bytes()),
    ] {
        stream.write_all(&rest).await.expect("write");
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw))
            .await
            .expect("the server closes the connection after its answer")
            .expect("read");
        answers.push(http::parse_response(&raw).expect("an answer, not a cut connection"));
    }
    let (refused, probed) = (&answers[0], &answers[1]);
    assert_error(refused, 503, 127);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("connection"), Some("close"));
    assert_eq!(probed.status, 200, "{}", probed.body);
    assert_eq!(probed.json["status"], true, "{}", probed.body);
    // Nothing of the refused invoice was done: its retry is certified, not replayed.
    let auth = format!("Bearer {key}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let retry = request(addr, "POST", "/api/v1/Invoice", &headers, Some(&body)).await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.header("idempotent-replayed"), None, "{}", retry.body);
    assert!(gateway.terminate(), "the gateway exits cleanly");
    let entries = exported_entries(dir.path(), &gateway.config);
    assert_eq!(entries.len(), 1, "certified once: {entries:?}");
    assert_eq!(entries[0]["rn"], "EVICTED-1");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_refuses_new_clients_at_once_and_finishes_the_queued_invoices() {
    const QUEUED: usize = 20;
    let dir = tempfile::tempdir().expect("tempdir");
    // Each invoice takes some 200 ms on the box: 20 of them queue for about 4 s.
    let sim = start_sim_with_timing(
        dir.path(),
        Duration::from_millis(5),
        Duration::from_millis(150),
        Default::default(),
    )
    .await;
    let config = config_with_device_timing(dir.path(), &sim.link, &[]);
    let (mut gateway, key) = start(dir.path(), config).await;
    let addr = gateway.addr;
    let mut sent = Vec::new();
    for i in 0..QUEUED {
        let body = serde_json::to_vec(&invoice(&format!("DRAIN-{i}"))).expect("json");
        let auth = format!("Bearer {key}");
        sent.push(tokio::spawn(async move {
            let headers = [
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ];
            http::try_request(
                addr,
                "POST",
                "/api/v1/Invoice",
                &headers,
                Some(&body),
                Duration::from_secs(60),
            )
            .await
        }));
    }
    // One more on a keep-alive connection (no `Connection: close`), behind the others: its
    // answer, after SIGTERM, closes it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let body = serde_json::to_vec(&invoice("DRAIN-KEEP")).expect("json");
    let mut kept = TcpStream::connect(addr).await.expect("connect");
    let mut bytes = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(&body);
    kept.write_all(&bytes).await.expect("write");
    let kept = tokio::spawn(async move {
        let mut raw = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), kept.read_to_end(&mut raw));
        (read.await.is_ok(), raw)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    common::sigterm(gateway.pid());
    let stopped_at = Instant::now();
    // A new client is refused (the port is closed) or told 503 at once: never left hanging.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let new_client = tokio::time::timeout(
        Duration::from_secs(2),
        http::exchange_from(None, addr, &status_request(addr), Duration::from_secs(2)),
    )
    .await
    .expect("a new client during the drain does not hang");
    match &new_client {
        Err(error) => assert!(error.contains("connect"), "{error}"),
        Ok(response) => assert_eq!(response.status, 503, "{}", response.body),
    }
    let mut certified = Vec::new();
    for (i, answer) in sent.into_iter().enumerate() {
        let response = answer
            .await
            .expect("task")
            .unwrap_or_else(|e| panic!("DRAIN-{i}: {e}"));
        assert_eq!(response.status, 200, "DRAIN-{i}: {}", response.body);
        certified.push(format!("DRAIN-{i}"));
    }
    let (closed_by_server, raw) = kept.await.expect("task");
    assert!(
        closed_by_server,
        "the keep-alive connection was closed after its answer"
    );
    let answer = http::parse_response(&raw).expect("the keep-alive invoice's answer");
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("connection"), Some("close"));
    certified.push("DRAIN-KEEP".to_string());
    let drained_in = stopped_at.elapsed();
    assert!(
        stopped_at.elapsed() > Duration::from_millis(500),
        "the queued invoices were not still in progress at SIGTERM ({drained_in:?})"
    );
    assert!(
        gateway.terminate(),
        "the gateway exits cleanly after the drain"
    );
    let entries = exported_entries(dir.path(), &gateway.config);
    let mut in_register: Vec<String> = entries
        .iter()
        .filter_map(|e| e["rn"].as_str().map(str::to_string))
        .collect();
    in_register.sort();
    certified.sort();
    assert_eq!(
        in_register, certified,
        "every 200 of the drain is in the register, once"
    );
    eprintln!("SIGTERM with {QUEUED} invoices queued: a new client got {new_client:?}; drained in {drained_in:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn heads_too_large_or_too_slow_get_json_errors_in_the_reader_s_language() {
    let dir = tempfile::tempdir().expect("tempdir");
    let top = "header_read_timeout_secs = 2\n";
    let (_sim, gateway, _key) = start_on_sim(dir.path(), top, "").await;
    let addr = gateway.addr;

    // Too many header fields (hyper takes 100): 431 with the JSON body, in English.
    let mut head =
        format!("GET /api/v1/status HTTP/1.1\r\nHost: {addr}\r\nAccept-Language: en\r\n");
    for i in 0..200 {
        head.push_str(&format!("X-Filler-{i}: {i}\r\n"));
    }
    head.push_str("\r\n");
    let answer = http::exchange_from(None, addr, head.as_bytes(), Duration::from_secs(5))
        .await
        .expect("an answer to a head too large");
    let json = assert_error(&answer, 431, 129);
    assert_eq!(answer.header("content-language"), Some("en"));
    assert!(
        json["errorDesc"]
            .as_str()
            .is_some_and(|d| d.contains("headers are too large")),
        "{json}"
    );

    // A head that does not end: 408 with the JSON body when the header timeout fires, in
    // French (the default and what it asked for).
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /api/v1/status HTTP/1.1\r\nAccept-Language: fr\r\nX-Slow: ")
        .await
        .expect("part of a head");
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(6), stream.read_to_end(&mut raw)).await;
    let waited = started.elapsed();
    let answer = http::parse_response(&raw).expect("a whole answer before the close");
    let json = assert_error(&answer, 408, 190);
    assert_eq!(answer.header("content-language"), Some("fr"));
    assert_eq!(answer.header("connection"), Some("close"));
    assert!(
        json["errorDesc"]
            .as_str()
            .is_some_and(|d| d.contains("en-têtes")),
        "{json}"
    );
    assert!(
        waited >= Duration::from_millis(1800) && waited < Duration::from_secs(5),
        "answered after {waited:?}; the header timeout is 2 s"
    );

    // A connection that sends nothing gets the 408 too; the status is answered meanwhile.
    let mut silent = TcpStream::connect(addr).await.expect("connect");
    let status = request(addr, "GET", "/api/v1/status", &[], None).await;
    assert_eq!(status.status, 200);
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(6), silent.read_to_end(&mut raw)).await;
    let answer = http::parse_response(&raw).expect("a whole answer before the close");
    assert_error(&answer, 408, 190);
}
