//! The README's promise: `serve` with no configuration certifies on the bundled simulator
//! with the printed demo key, and the public status endpoint answers.

use crate::common;

use common::{get, invoice, post_invoice, Gateway};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn demo_mode_certifies_with_the_printed_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start_demo(dir.path());
    let live = gateway
        .banner_value("live key:")
        .expect("a live key is printed");
    assert!(live.starts_with("mcf_live_"));
    assert!(gateway
        .banner
        .iter()
        .any(|line| line.starts_with("curl ") && line.contains(&live)));
    gateway.wait_ready().await;

    let status = get(gateway.addr, "/api/v1/status", None).await;
    assert_eq!(status.status, 200);
    assert_eq!(status.json["version"], "1.0");
    let time = status.json["serverDateTime"]
        .as_str()
        .expect("serverDateTime");
    assert!(chrono::DateTime::parse_from_rfc3339(time).is_ok() && time.ends_with('Z'));
    // Beside the seed's three fields, each configured device for monitoring: here only the
    // bundled simulator (the demo's sandbox is never listed).
    let devices = status.json["devices"].as_array().expect("devices");
    assert_eq!(devices.len(), 1, "{}", status.body);
    assert_eq!(devices[0]["name"], "embedded");
    assert_eq!(devices[0]["kind"], "box");
    assert_eq!(devices[0]["ready"], true, "{}", status.body);
    assert_eq!(devices[0]["connected"], true);
    // For a load balancer: this process takes requests (short, whatever its devices).
    let replica = get(gateway.addr, "/api/v1/status/replica", None).await;
    assert_eq!(
        (replica.status, replica.body.as_str()),
        (200, "{\"ready\":true}")
    );

    let response = post_invoice(gateway.addr, &live, &invoice("SMOKE-1")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    let code = response.json["codeDEFDGI"].as_str().expect("codeDEFDGI");
    assert_eq!(code.len(), 24);
    assert_eq!(response.json["counters"], "1/1 FV");
    assert_eq!(response.json["nim"], "SIM0000001");
    assert_eq!(response.json["total"], "1200.00");
    let qr = response.json["qrCode"].as_str().expect("qrCode");
    assert!(
        qr.starts_with(&format!("RDCDEF01;SIM0000001;{code};A1234567B;")),
        "{qr}"
    );
    assert_eq!(response.json["rn"], Value::from("SMOKE-1"));
}
