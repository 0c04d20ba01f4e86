//! What an operator scrapes and an ERP without a QR library fetches: `/metrics` in Prometheus
//! text, the QR code of a certification as SVG, and a request id on every response.

use crate::common;

use common::{
    add_org_with_key_nif, config_with_device, get, invoice, issue_key, post_invoice, ApiSetup,
    Gateway, Response, Sim, SIMULATOR_KEYS, SIM_NIF,
};

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

/// `/metrics` needs no key: without `metrics_per_organization` no label carries an
/// organization's id, not even inside a sandbox's channel name (`sandbox-<id>`); the sandboxes
/// count together under `device="(sandboxes)"`, the configured devices under the names the
/// operator gave them.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_name_no_organization_through_the_sandboxes_unless_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (shop_dir, back_dir) = (dir.path().join("shop"), dir.path().join("back"));
    for sub in [&shop_dir, &back_dir] {
        std::fs::create_dir_all(sub).expect("sim dir");
    }
    let shop = Sim::start(&shop_dir).await;
    let back = Sim::start_custom(&back_dir, |options| {
        options.device.nif = "B7654321C".into();
    })
    .await;
    let mut text = config_with_device(dir.path(), &shop.link);
    text.push_str(&format!(
        "\n[[devices]]\nname = \"back\"\npath = {:?}\n",
        back.link
    ));
    for (key, value) in SIMULATOR_KEYS {
        text.push_str(&format!("{key} = {value}\n"));
    }
    let gateway = Gateway::start(dir.path(), &text);
    let orgs = [
        ("kivu-bois", "shop", SIM_NIF),
        ("goma-pneus", "back", "B7654321C"),
    ];
    let keys: Vec<(String, String)> = tokio::task::block_in_place(|| {
        orgs.iter()
            .map(|(id, device, nif)| {
                let live = add_org_with_key_nif(dir.path(), &gateway.config, id, device, nif);
                let test = issue_key(dir.path(), &gateway.config, id, true);
                (live, test)
            })
            .collect()
    });
    gateway.wait_ready().await;

    let addr = gateway.addr;
    let certify = |key: String, rn: &'static str| async move {
        let answer: Response = post_invoice(addr, &key, &invoice(rn)).await;
        assert_eq!(answer.status, 200, "{rn}: {}", answer.body);
    };
    certify(keys[0].0.clone(), "LIVE-1").await;
    for (n, (_, sandbox)) in keys.iter().enumerate() {
        certify(sandbox.clone(), ["SBX-1", "SBX-2"][n]).await;
    }
    let metrics = get(gateway.addr, "/metrics", None).await;
    assert_eq!(metrics.status, 200);
    let public = &metrics.body;
    for id in ["kivu-bois", "goma-pneus", "sandbox-", "kivu", "goma"] {
        assert!(!public.contains(id), "{id} in:\n{public}");
    }
    for line in [
        "emcf_device_link_up{device=\"shop\"} 1",
        "emcf_device_link_up{device=\"back\"} 1",
        "emcf_device_link_up{device=\"(sandboxes)\"} 1",
        "emcf_device_round_trip_seconds_count{device=\"shop\",command=\"38h\"} 1",
        "emcf_device_round_trip_seconds_count{device=\"(sandboxes)\",command=\"38h\"} 2",
        "emcf_device_queue_wait_seconds_count{device=\"(sandboxes)\"} 2",
        "emcf_organizations 2",
    ] {
        assert!(
            public.lines().any(|l| l == line),
            "missing {line:?} in:\n{public}"
        );
    }

    // Asked for: each organization and each sandbox by name, as documented.
    let mut gateway = gateway;
    assert!(gateway.terminate(), "clean exit");
    let named_config = format!("{text}\n[http]\nmetrics_per_organization = true\n");
    let gateway = Gateway::start(dir.path(), &named_config);
    gateway.wait_ready().await;
    let answer = post_invoice(gateway.addr, &keys[1].1, &invoice("SBX-3")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let named = get(gateway.addr, "/metrics", None).await.body;
    for line in [
        "emcf_device_round_trip_seconds_count{device=\"sandbox-goma-pneus\",command=\"38h\"} 1",
        "emcf_quota_used{org=\"kivu-bois\"} 1",
        "emcf_quota_used{org=\"goma-pneus\"} 0",
    ] {
        assert!(
            named.lines().any(|l| l == line),
            "missing {line:?} in:\n{named}"
        );
    }
    assert!(!named.contains("(sandboxes)"), "{named}");
}
