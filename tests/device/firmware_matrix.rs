//! Every firmware profile of the simulator (`emcf-sim --firmware`: how a kind of real box talks
//! where it differs from PROTOCOL.md) x every kind of invoice, through the real binary with
//! the gateway's **default** device settings (no `window_ms`, `line_breaks`... in the file):
//! FV ttc with 3 items in groups A/B/C, FV ht, a USD invoice, an FA `COR` on that FV. Each
//! certifies, a retry replays it (nothing certified twice), and the register equals the box's
//! fiscal memory.

use crate::common;

use common::{
    add_org_with_key, assert_register_matches_device, config_with_box, post_invoice, Gateway,
    Response, Sim,
};
use emcf_sim::Firmware;
use serde_json::{json, Value};

fn operator() -> Value {
    json!({"id": "1", "name": "Caisse 1"})
}

fn cash(amount: &str) -> Value {
    json!([{"name": "ESPECES", "amount": amount, "curCode": "CDF", "curRate": "-1"}])
}

/// FV ttc: a stamp duty line in A (no VAT), a pen in B (16 %), bread in C (5 %).
fn fv_ttc(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FV", "curCode": "CDF", "curRate": "-1",
        "items": [
            {"name": "Timbre fiscal", "type": "TAX", "price": "250.00", "quantity": "1", "taxGroup": "A"},
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00", "quantity": "2", "taxGroup": "B"},
            {"name": "Pain", "type": "BIE", "price": "1050.00", "quantity": "1", "taxGroup": "C"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL"},
        "payments": cash("2500.00"),
        "operator": operator()
    })
}

fn fv_ht(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ht", "type": "FV", "curCode": "CDF", "curRate": "-1",
        "items": [{"name": "Prestation", "type": "SER", "price": "1000.00", "quantity": "1", "taxGroup": "B"}],
        "payments": cash("1160.00"),
        "operator": operator()
    })
}

/// Prices in CDF with the USD rate of the source (the seed's rule): 28505.00 CDF = 10.00 USD.
fn usd(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FV", "curCode": "USD", "curRate": "2850.5",
        "curDate": "2026-02-28T17:05:06.568Z",
        "items": [{"name": "STYLO", "type": "BIE", "price": "14252.50", "quantity": "2", "taxGroup": "B"}],
        "payments": [{"name": "CARTEBANCAIRE", "amount": "28505.00", "curCode": "USD", "curRate": "2850.5"}],
        "operator": operator()
    })
}

fn credit_note(rn: &str, original: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FA", "reference": original, "referenceType": "COR",
        "curCode": "CDF", "curRate": "-1",
        "items": [{"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00", "quantity": "2", "taxGroup": "B"}],
        "operator": operator()
    })
}

fn certified(response: &Response, what: &str) {
    assert_eq!(response.status, 200, "{what}: {}", response.body);
    assert_eq!(
        response.json["codeDEFDGI"].as_str().map(str::len),
        Some(24),
        "{what}: {}",
        response.body
    );
}

/// The four invoices on a box talking like `profile` (its durations at `percent` %).
async fn certify_every_kind(profile: &str, percent: u32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let firmware = Firmware::named(profile)
        .unwrap_or_else(|| panic!("no profile {profile}"))
        .scale_time(percent);
    let sim = Sim::start_custom(dir.path(), move |options| {
        options.firmware = firmware.clone();
    })
    .await;
    let gateway = Gateway::start(dir.path(), &config_with_box(dir.path(), &sim.link));
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;

    let fv = fv_ttc("MX-FV-1");
    let first = post_invoice(gateway.addr, &key, &fv).await;
    certified(&first, &format!("{profile}: FV ttc"));
    assert_eq!(first.json["total"], "2500.00", "{profile}");
    assert_eq!(first.json["groups"]["A"]["vat"], "0.00", "{profile}");
    assert_eq!(first.json["groups"]["B"]["vat"], "165.52", "{profile}");
    assert_eq!(first.json["groups"]["C"]["vat"], "50.00", "{profile}");
    assert_eq!(
        first.json["usdTotal"],
        Value::Null,
        "{profile}: a CDF invoice"
    );
    let original = first.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let ht = post_invoice(gateway.addr, &key, &fv_ht("MX-HT-1")).await;
    certified(&ht, &format!("{profile}: FV ht"));
    assert_eq!(ht.json["total"], "1160.00", "{profile}");

    let usd_invoice = usd("MX-USD-1");
    let in_usd = post_invoice(gateway.addr, &key, &usd_invoice).await;
    certified(&in_usd, &format!("{profile}: USD"));
    assert_eq!(
        in_usd.json["usdTotal"], "10.00",
        "{profile}: the invoice's total at its rate, whatever the box's MCUR"
    );

    let fa = credit_note("MX-FA-1", &original);
    let refund = post_invoice(gateway.addr, &key, &fa).await;
    certified(&refund, &format!("{profile}: FA"));
    assert!(
        refund.json["counters"]
            .as_str()
            .is_some_and(|c| c.ends_with(" FA")),
        "{profile}: {}",
        refund.body
    );

    // Retries replay: the stored result, nothing certified twice.
    for (body, answer) in [(&fv, &first), (&usd_invoice, &in_usd), (&fa, &refund)] {
        let again = post_invoice(gateway.addr, &key, body).await;
        assert_eq!(again.status, 200, "{profile}: {}", again.body);
        assert_eq!(
            again.header("Idempotent-Replayed"),
            Some("true"),
            "{profile}"
        );
        assert_eq!(
            again.json["codeDEFDGI"], answer.json["codeDEFDGI"],
            "{profile}"
        );
    }
    let entries = assert_register_matches_device(dir.path(), &sim);
    assert_eq!(entries.len(), 4, "{profile}");
    assert!(
        !gateway.log().contains("FISCAL ANOMALY"),
        "{profile}: {}",
        gateway.log()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reference() {
    certify_every_kind("reference", 100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cdf_currency() {
    certify_every_kind("cdf-currency", 100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn usd_currency() {
    certify_every_kind("usd-currency", 100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn c1h_27() {
    certify_every_kind("c1h-27", 100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn c1h_11() {
    certify_every_kind("c1h-11", 100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn c1h_10() {
    certify_every_kind("c1h-10", 100).await;
}

/// Silences of 600 ms on C0h, 33h and 35h (longer than the 500 ms window of 1.0.0) and of
/// 10 s on the credit note's 38h, all without SYN: neither a resend nor a link failure.
#[tokio::test(flavor = "multi_thread")]
async fn silent() {
    certify_every_kind("silent", 40).await;
}

/// SYN every 700 ms, slower than the 500 ms window of 1.0.0.
#[tokio::test(flavor = "multi_thread")]
async fn slow_syn() {
    certify_every_kind("slow-syn", 100).await;
}

#[test]
fn every_preset_is_in_the_matrix() {
    let names: Vec<&str> = emcf_sim::firmware::PRESETS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(
        names,
        [
            "reference",
            "cdf-currency",
            "usd-currency",
            "c1h-27",
            "c1h-11",
            "c1h-10",
            "silent",
            "slow-syn"
        ]
    );
}
