//! The e-DEF simulator over a real socket, spoken to with hand-written HTTP/1.1.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use emcf_sim::edef::{start_edef, EdefFaults, EdefOptions, RunningEdef};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Child;

const TOKEN: &str = "Bearer sim-token";

const HT_INVOICE: &str = r#"{"nif":"A1234567B","rn":"F-2026-001","mode":"ht","isf":"SIM","type":"FV",
  "items":[{"code":"P1","type":"BIE","name":"Ciment","price":600.00,"quantity":2,"taxGroup":"B"},
           {"code":"P2","type":"SER","name":"Livraison","price":33.33,"quantity":3,"taxGroup":"c"},
           {"code":"P3","type":"BIE","name":"Pain","price":10,"quantity":1,"taxGroup":"A"}],
  "client":{"nif":"","name":"Client","contact":"","address":"","type":"PP","typeDesc":""},
  "operator":{"id":"1","name":"Caisse"},
  "payment":[{"name":"ESPECES","amount":1506.99,"currencyCode":"CDF","currencyRate":1}]}"#;

const TTC_INVOICE_AS_STRINGS: &str = r#"{"nif":"A1234567B","rn":"F-2026-002","mode":"ttc","type":"FV",
  "items":[{"type":"BIE","name":"Ciment","price":"600.00","quantity":"2","taxGroup":"b"}],
  "client":{"type":"PM","name":"SARL"},"payment":[{"name":"MOBILEMONEY","amount":"1200.00"}]}"#;

/// An HTTP answer.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// A member's JSON text exactly as written (`1392.00`, `"1392.00"`).
    fn raw(&self, key: &str) -> String {
        let members: HashMap<String, Box<RawValue>> = serde_json::from_str(&self.body).unwrap();
        members.get(key).map_or_else(
            || panic!("no {key} in {}", self.body),
            |v| v.get().to_owned(),
        )
    }
}

/// Sends one request on `stream` and reads the answer up to its Content-Length. An
/// `UnexpectedEof` error when the server closes before any answer.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    method: &str,
    path: &str,
    authorization: Option<&str>,
    body: &str,
) -> io::Result<Reply> {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if let Some(value) = authorization {
        request.push_str(&format!("Authorization: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes()).await?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        received.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&received[..header_end]).into_owned();
    let status = head[9..12].parse().expect("status code");
    let header = |name: &str| {
        head.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim().to_owned())
    };
    let length: usize = header("content-length").map_or(0, |v| v.parse().unwrap());
    while received.len() < header_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        received.extend_from_slice(&chunk[..n]);
    }
    Ok(Reply {
        status,
        content_type: header("content-type").unwrap_or_default(),
        body: String::from_utf8_lossy(&received[header_end..header_end + length]).into_owned(),
    })
}

/// One request on a new plain connection.
async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: &str,
) -> io::Result<Reply> {
    let mut stream = TcpStream::connect(addr).await?;
    tokio::time::timeout(
        Duration::from_secs(10),
        exchange(&mut stream, method, path, auth, body),
    )
    .await
    .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))?
}

/// One API call with the token; an error when the connection closes without an answer.
async fn try_call(sim: &RunningEdef, method: &str, path: &str, body: &str) -> io::Result<Reply> {
    http(sim.local_addr(), method, path, Some(TOKEN), body).await
}

/// One API call with the token; panics on a transport error.
async fn call(sim: &RunningEdef, method: &str, path: &str, body: &str) -> Reply {
    try_call(sim, method, path, body)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

async fn start(options: EdefOptions) -> RunningEdef {
    start_edef("127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap()
}

async fn request(sim: &RunningEdef, body: &str) -> String {
    let reply = call(sim, "POST", "/api/invoice", body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["uid"].as_str().unwrap().to_owned()
}

async fn confirm(sim: &RunningEdef, uid: &str, total: &str, vtotal: &str) -> Reply {
    let body = format!(r#"{{"total":{total},"vtotal":{vtotal}}}"#);
    call(sim, "PUT", &format!("/api/invoice/{uid}/confirm"), &body).await
}

async fn sim_state(sim: &RunningEdef) -> Value {
    call(sim, "GET", "/_sim/state", "").await.json()
}

async fn set_faults(sim: &RunningEdef, faults: Value) {
    let reply = call(sim, "POST", "/_sim/faults", &faults.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn status_and_reference_calls() {
    let sim = start(EdefOptions::default()).await;
    assert!(sim.url().starts_with("http://127.0.0.1:"), "{}", sim.url());
    let status = call(&sim, "GET", "/api/invoice", "").await;
    assert_eq!(status.status, 200);
    assert!(status.content_type.starts_with("application/json"));
    let status = status.json();
    assert_eq!(status["status"], true);
    assert_eq!(status["nif"], "A1234567B");
    assert_eq!(status["nim"], "CD01000001-1");
    assert_eq!(status["pendingRequestsCount"], 0);
    assert!(status["tokenValid"].as_str().unwrap().ends_with('Z'));
    let info = call(&sim, "GET", "/api/info/status", "").await.json();
    assert_eq!(info["emcfList"][0]["nim"], "CD01000001-1");
    let groups = call(&sim, "GET", "/api/info/taxGroups", "").await;
    assert_eq!(
        (groups.raw("a"), groups.raw("b"), groups.raw("c")),
        ("0".into(), "16".into(), "5".into())
    );
    let kinds = call(&sim, "GET", "/api/info/invoiceTypes", "").await.json();
    assert_eq!(kinds.as_array().unwrap().len(), 6);
    let missing = call(&sim, "GET", "/api/nowhere", "").await;
    assert_eq!(
        (missing.status, missing.json()["errorCode"].clone()),
        (404, json!("404"))
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn an_ht_invoice_is_computed_and_finalized_with_exact_figures() {
    let sim = start(EdefOptions::default()).await;
    let reply = call(&sim, "POST", "/api/invoice", HT_INVOICE).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    for (key, expected) in [
        ("total", "1506.99"),
        ("vtotal", "197.00"),
        ("ts", "0.00"),
        ("tb", "16"),
        ("tab", "1392.00"),
        ("hab", "1200.00"),
        ("vab", "192.00"),
        ("tac", "104.99"),
        ("hac", "99.99"),
        ("vac", "5.00"),
        ("taa", "10.00"),
        ("haa", "10.00"),
        ("vaa", "0.00"),
        ("errorCode", "null"),
    ] {
        assert_eq!(reply.raw(key), expected, "{key}");
    }
    let uid = reply.json()["uid"].as_str().unwrap().to_owned();
    let done = confirm(&sim, &uid, "1506.99", "197").await;
    assert_eq!(done.status, 200, "{}", done.body);
    let done = done.json();
    assert_eq!(done["counters"], "1/1 FV");
    assert_eq!(done["nim"], "CD01000001-1");
    let code = done["codeDEFDGI"].as_str().unwrap();
    assert_eq!(code.len(), 24);
    assert!(done["qrCode"]
        .as_str()
        .unwrap()
        .starts_with(&format!("DGI-RDC;CD01000001-1;{code};A1234567B;")));
    // Benin form: dd/MM/yyyy HH:mm:ss.
    assert_eq!(done["dateTime"].as_str().unwrap().as_bytes()[2], b'/');
    assert_eq!(sim.finalized_count(), 1);
    assert_eq!(sim.finalized()[0].code_def, code);
}

#[tokio::test]
async fn a_ttc_invoice_with_numbers_as_strings_and_upper_case_confirm_by_post() {
    let sim = start(EdefOptions::default()).await;
    let reply = call(&sim, "POST", "/api/invoice", TTC_INVOICE_AS_STRINGS).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.raw("total"), "1200.00");
    assert_eq!(reply.raw("vtotal"), "165.52");
    assert_eq!(reply.raw("hab"), "1034.48");
    assert_eq!(reply.raw("tab"), "1200.00");
    let uid = reply.json()["uid"].as_str().unwrap().to_owned();
    let path = format!("/api/invoice/{uid}/CONFIRM");
    let done = call(
        &sim,
        "POST",
        &path,
        r#"{"total":"1200.00","vtotal":"165.52"}"#,
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.json()["counters"], "1/1 FV");
    let second = request(&sim, TTC_INVOICE_AS_STRINGS).await;
    let done = confirm(&sim, &second, "1200", "165.52").await;
    assert_eq!(done.json()["counters"], "2/2 FV");
}

#[tokio::test]
async fn the_eleventh_pending_request_is_refused() {
    let sim = start(EdefOptions::default()).await;
    for _ in 0..10 {
        request(&sim, HT_INVOICE).await;
    }
    let refused = call(&sim, "POST", "/api/invoice", HT_INVOICE).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["errorCode"], "1");
    let status = call(&sim, "GET", "/api/invoice", "").await.json();
    assert_eq!(status["pendingRequestsCount"], 10);
    assert_eq!(status["pendingRequestsList"].as_array().unwrap().len(), 10);
    assert_eq!(sim.pending_uids().len(), 10);
}

#[tokio::test]
async fn pending_requests_expire() {
    let sim = start(EdefOptions {
        expiry: Duration::from_secs(1),
        ..EdefOptions::default()
    })
    .await;
    let uid = request(&sim, HT_INVOICE).await;
    assert_eq!(sim.pending_uids(), vec![uid.clone()]);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let status = call(&sim, "GET", "/api/invoice", "").await.json();
    assert_eq!(status["pendingRequestsCount"], 0);
    let late = confirm(&sim, &uid, "1506.99", "197.00").await;
    assert_eq!(
        (late.status, late.json()["errorCode"].clone()),
        (400, json!("20"))
    );
    assert_eq!(sim.finalized_count(), 0);
}

#[tokio::test]
async fn unknown_uids_cancel_and_tokens() {
    let sim = start(EdefOptions::default()).await;
    let unknown = confirm(&sim, "00000000-0000-4000-8000-000000000000", "1", "0").await;
    assert_eq!(unknown.json()["errorCode"], "20");
    let uid = request(&sim, HT_INVOICE).await;
    let cancelled = call(&sim, "PUT", &format!("/api/invoice/{uid}/cancel"), "").await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    assert_eq!(cancelled.json()["status"], "cancelled");
    let after = confirm(&sim, &uid, "1506.99", "197.00").await;
    assert_eq!(after.json()["errorCode"], "20");

    let addr = sim.local_addr();
    let bad = http(addr, "GET", "/api/invoice", Some("Bearer wrong"), "")
        .await
        .unwrap();
    assert_eq!(bad.status, 401);
    assert_eq!(bad.json()["errorCode"], "401");
    let none = http(addr, "GET", "/api/invoice", None, "").await.unwrap();
    assert_eq!(none.status, 401);
    let bare = http(addr, "GET", "/api/invoice", Some("sim-token"), "")
        .await
        .unwrap();
    assert_eq!(bare.status, 200);
}

#[tokio::test]
async fn a_503_or_a_reset_does_nothing() {
    let sim = start(EdefOptions::default()).await;
    set_faults(&sim, json!({"fail_next_5xx": 1})).await;
    let failed = call(&sim, "POST", "/api/invoice", HT_INVOICE).await;
    assert_eq!(failed.status, 503);
    assert!(failed.content_type.starts_with("text/html"));
    assert_eq!(sim_state(&sim).await["pending"], json!([]));

    set_faults(&sim, json!({"reset_next": 1})).await;
    let reset = try_call(&sim, "POST", "/api/invoice", HT_INVOICE).await;
    assert!(reset.is_err(), "{reset:?}");
    assert_eq!(sim_state(&sim).await["pending"], json!([]));
    request(&sim, HT_INVOICE).await;
    assert_eq!(
        sim_state(&sim).await["pending"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn lost_answers_still_do_the_work() {
    let sim = start(EdefOptions::default()).await;
    set_faults(&sim, json!({"drop_next_request_answer": 1})).await;
    let lost = try_call(&sim, "POST", "/api/invoice", HT_INVOICE).await;
    assert_eq!(lost.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    let state = sim_state(&sim).await;
    let uid = state["pending"][0].as_str().unwrap().to_owned();

    // The issue's body: `true` is the next one (a count of 1, as above, is the same).
    set_faults(&sim, json!({"drop_next_confirm_answer": true})).await;
    let body = r#"{"total":1506.99,"vtotal":197.00}"#;
    let path = format!("/api/invoice/{uid}/confirm");
    let lost = try_call(&sim, "PUT", &path, body).await;
    assert_eq!(lost.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    let state = sim_state(&sim).await;
    assert_eq!(state["pending"], json!([]));
    assert_eq!(state["finalized"][0]["uid"], uid.as_str());
    assert_eq!(state["finalized"][0]["counters"], "1/1 FV");
    assert_eq!(
        state["finalized"][0]["codeDEFDGI"].as_str().unwrap().len(),
        24
    );
    // The status cannot tell a lost confirmation from an expiry; the counters went on.
    let next = request(&sim, HT_INVOICE).await;
    assert_eq!(
        confirm(&sim, &next, "1506.99", "197").await.json()["counters"],
        "2/2 FV"
    );
}

#[tokio::test]
async fn early_expiry_expired_token_and_latency() {
    let sim = start(EdefOptions::default()).await;
    let uid = request(&sim, HT_INVOICE).await;
    set_faults(&sim, json!({"expire_all_pending": true})).await;
    assert_eq!(sim_state(&sim).await["pending"], json!([]));
    assert_eq!(
        confirm(&sim, &uid, "1506.99", "197").await.json()["errorCode"],
        "20"
    );
    let faults: Value = call(&sim, "GET", "/_sim/faults", "").await.json();
    assert_eq!(faults["expire_all_pending"], false);

    set_faults(&sim, json!({"token_expired": true})).await;
    assert_eq!(call(&sim, "GET", "/api/invoice", "").await.status, 401);
    sim.faults().set(EdefFaults::default());
    assert_eq!(call(&sim, "GET", "/api/invoice", "").await.status, 200);

    set_faults(&sim, json!({"latency_ms": 300})).await;
    let started = Instant::now();
    assert_eq!(call(&sim, "GET", "/api/invoice", "").await.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    let bad = call(&sim, "POST", "/_sim/faults", r#"{"no_such_fault":1}"#).await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        call(&sim, "DELETE", "/_sim/faults", "").await.json()["latency_ms"],
        0
    );
}

#[tokio::test]
async fn a_wrong_fault_is_refused_in_french_with_an_example_and_changes_nothing() {
    let sim = start(EdefOptions::default()).await;
    let before: Value = call(&sim, "GET", "/_sim/faults", "").await.json();
    for (body, says) in [
        (
            r#"{"token_expired": true, "drop_next_confirm_answer": "yes"}"#,
            "valeur refusée pour la panne simulée drop_next_confirm_answer\u{a0}: \
             «\u{a0}\"yes\"\u{a0}»\u{a0}; elle prend true (la prochaine fois), false (inactive) ou un nombre entier N (les N \
             prochaines fois), par exemple {\"drop_next_confirm_answer\": true}",
        ),
        (
            r#"{"latency_ms": 600001}"#,
            "valeur refusée pour la panne simulée latency_ms\u{a0}: «\u{a0}600001\u{a0}»\u{a0}; \
             elle prend des millisecondes, de 0 à 600000, par exemple {\"latency_ms\": 250}",
        ),
        (
            r#"{"token_expired": 1}"#,
            "elle prend true (active) ou false (inactive), par exemple {\"token_expired\": true}",
        ),
        (
            r#"{"drop_confirm": true}"#,
            "panne simulée inconnue\u{a0}: «\u{a0}drop_confirm\u{a0}»",
        ),
        (r#"{"token_expired": tr"#, "(ligne 1, colonne 20)"),
        ("", "le corps est vide"),
    ] {
        let refused = call(&sim, "POST", "/_sim/faults", body).await;
        assert_eq!(refused.status, 400, "{body}");
        let desc = refused.json()["errorDesc"].as_str().unwrap().to_owned();
        assert!(desc.contains(says), "{body}: {desc}");
        for english in ["invalid type", "expected", "EOF", "unknown field"] {
            assert!(!desc.contains(english), "{body}: {desc}");
        }
    }
    let after: Value = call(&sim, "GET", "/_sim/faults", "").await.json();
    assert_eq!(after, before);
    assert_eq!(call(&sim, "GET", "/api/invoice", "").await.status, 200);
}

#[tokio::test]
async fn the_control_endpoint_can_be_off() {
    let sim = start(EdefOptions {
        control: false,
        ..EdefOptions::default()
    })
    .await;
    assert_eq!(call(&sim, "GET", "/_sim/state", "").await.status, 404);
}

#[tokio::test]
async fn tls_serves_with_the_self_signed_certificate() {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
    use tokio_rustls::rustls::{crypto::ring, ClientConfig, RootCertStore};

    let sim = start(EdefOptions {
        tls: true,
        ..EdefOptions::default()
    })
    .await;
    assert!(sim.url().starts_with("https://127.0.0.1:"));
    let pem = sim.ca_pem().expect("a certificate");
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
        .unwrap();
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    for name in ["localhost", "127.0.0.1"] {
        let tcp = TcpStream::connect(sim.local_addr()).await.unwrap();
        let server_name = ServerName::try_from(name).unwrap().to_owned();
        let mut tls = connector.connect(server_name, tcp).await.unwrap();
        let reply = exchange(&mut tls, "GET", "/api/invoice", Some(TOKEN), "")
            .await
            .unwrap();
        assert_eq!(reply.status, 200, "{name}");
    }
    sim.shutdown().await;
}

/// Starts `emcf-sim edef` with `args`; the child and the URL it prints first.
async fn spawn_edef(args: &[&str]) -> (Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .arg("edef")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start emcf-sim edef");
    let stdout = child.stdout.take().expect("stdout");
    let url = tokio::time::timeout(
        Duration::from_secs(20),
        BufReader::new(stdout).lines().next_line(),
    )
    .await
    .expect("the URL in time")
    .unwrap()
    .expect("a first line");
    (child, url)
}

#[tokio::test]
async fn the_binary_prints_its_url_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("edef.pem");
    let (mut child, url) = spawn_edef(&[
        "--listen",
        "127.0.0.1:0",
        "--token",
        "t0k",
        "--nim",
        "CD09000009-1",
        "--tls",
        "--tls-cert-out",
        cert.to_str().unwrap(),
    ])
    .await;
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    assert!(std::fs::read_to_string(&cert)
        .unwrap()
        .contains("BEGIN CERTIFICATE"));

    let (mut plain, url) = spawn_edef(&["--token", "t0k", "--nim", "CD09000009-1"]).await;
    let addr: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let status = http(addr, "GET", "/api/invoice", Some("Bearer t0k"), "")
        .await
        .unwrap();
    assert_eq!(status.json()["nim"], "CD09000009-1");
    // SIGTERM stops it cleanly.
    for process in [&mut child, &mut plain] {
        let pid = process.id().expect("running").to_string();
        let kill = tokio::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status();
        assert!(kill.await.unwrap().success());
        let exit = tokio::time::timeout(Duration::from_secs(10), process.wait()).await;
        assert!(exit.expect("it stops in time").unwrap().success());
    }
}
