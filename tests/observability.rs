//! What an operator scrapes and an ERP without a QR library fetches: `/metrics` in Prometheus
//! text, the QR code of a certification as SVG, and a request id on every response.

mod common;

use common::{get, invoice, post_invoice, ApiSetup};

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_certifications_and_show_the_device_and_quota() {
    let setup = ApiSetup::start(Some(10)).await;
    let addr = setup.addr();
    let done = post_invoice(addr, &setup.key, &invoice("OBS-1")).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let replay = post_invoice(addr, &setup.key, &invoice("OBS-1")).await;
    assert_eq!(replay.status, 200);
    let mut bad = invoice("OBS-2");
    bad["mode"] = "XX".into();
    assert_eq!(post_invoice(addr, &setup.key, &bad).await.status, 400);

    let metrics = get(addr, "/metrics", None).await;
    assert_eq!(metrics.status, 200);
    assert!(metrics
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/plain")));
    let text = &metrics.body;
    for line in [
        "emcf_certifications_total{outcome=\"certified\",type=\"FV\"} 1",
        "emcf_certifications_total{outcome=\"replayed\",type=\"FV\"} 1",
        "emcf_certifications_total{outcome=\"invalid\",type=\"unknown\"} 1",
        "emcf_device_link_up{device=\"shop\"} 1",
        "emcf_device_queue_depth{device=\"shop\"} 0",
        "emcf_device_round_trip_seconds_count{device=\"shop\",command=\"38h\"} 1",
        "emcf_device_queue_wait_seconds_count{device=\"shop\"} 1",
        "emcf_organizations 1",
        "emcf_organizations_quota_exhausted 0",
        "emcf_ready 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
    assert!(!text.contains(&setup.key), "no secret in metrics");
    assert!(!text.contains("acme"), "no organization named by default");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_qr_code_is_served_as_svg_and_every_response_has_a_request_id() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let done = post_invoice(addr, &setup.key, &invoice("QR-1")).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let request_id = done.header("x-request-id").expect("request id").to_string();
    assert_eq!(request_id.len(), 16);
    assert!(
        setup.gateway.log().contains(&request_id),
        "the log carries the request id"
    );

    let svg = get(addr, "/api/v1/Invoice/QR-1/qr.svg", Some(&setup.key)).await;
    assert_eq!(svg.status, 200, "{}", svg.body);
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    assert!(svg.body.contains("<svg") && svg.body.contains("</svg>"));
    let other = post_invoice(addr, &setup.key, &invoice("QR-2")).await;
    assert_eq!(other.status, 200);
    let other_svg = get(addr, "/api/v1/Invoice/QR-2/qr.svg", Some(&setup.key)).await;
    assert_ne!(svg.body, other_svg.body, "each invoice has its own code");

    assert_eq!(
        get(addr, "/api/v1/Invoice/QR-1/qr.svg", None).await.status,
        401
    );
    let unknown = get(addr, "/api/v1/Invoice/NOPE/qr.svg", Some(&setup.key)).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json["errorCode"], 170);
    assert!(unknown.header("x-request-id").is_some());
}
