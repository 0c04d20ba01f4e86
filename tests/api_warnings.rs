//! Warnings on a certified invoice (docs/error-codes.md, "Warnings"): a USD invoice whose
//! amounts look like USD (worth less than one dollar in all: USD prices sent as CDF amounts)
//! is certified as sent, and its answer carries `warnings: [{"warningCode": 301,
//! "warningDesc"}]`, the same in the POST, its replay and `GET /api/v1/Invoice/{rn}`; a real
//! USD invoice and a CDF invoice carry no `warnings` at all. The gateway's log says it once.
//!
//! Real binary, simulator on a pty (see `common`).

mod common;

use common::{get, invoice, post_invoice, request, usd_invoice, ApiSetup, Response};
use serde_json::{json, Value};

/// A USD invoice whose prices were typed in USD: 2 x 40.00 "CDF" at 2850 CDF per USD, so
/// total 80.00 CDF and 0.03 USD (the case).
fn usd_prices_as_cdf(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FV", "curCode": "USD", "curRate": "2850",
        "curDate": "2026-11-20",
        "items": [{"name": "Ciment", "type": "BIE", "price": "40.00", "quantity": "2", "taxGroup": "B"}],
        "operator": {"id": "2", "name": "Caisse 2"}
    })
}

#[track_caller]
fn warnings_of(response: &Response) -> Vec<(u64, String)> {
    assert_eq!(response.status, 200, "{}", response.body);
    match response.json.get("warnings") {
        None => Vec::new(),
        Some(list) => {
            let list = list
                .as_array()
                .unwrap_or_else(|| panic!("warnings is a list: {}", response.body));
            assert!(
                !list.is_empty(),
                "an empty list is left out: {}",
                response.body
            );
            list.iter()
                .map(|w| {
                    let code = w["warningCode"].as_u64().expect("warningCode");
                    let desc = w["warningDesc"].as_str().expect("warningDesc");
                    assert_eq!(w.as_object().map(|o| o.len()), Some(2), "{w}");
                    (code, desc.to_string())
                })
                .collect()
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_usd_invoice_worth_less_than_a_dollar_is_certified_with_a_warning() {
    let setup = ApiSetup::start(None).await;
    let (addr, key) = (setup.addr(), setup.key.as_str());

    let first = post_invoice(addr, key, &usd_prices_as_cdf("USD-TINY-1")).await;
    assert_eq!(first.json["total"], "80.00", "{}", first.body);
    assert_eq!(first.json["usdTotal"], "0.03", "{}", first.body);
    let warnings = warnings_of(&first);
    assert_eq!(warnings.len(), 1, "{}", first.body);
    let (code, desc) = &warnings[0];
    assert_eq!(*code, 301);
    // French by default (the configuration's language).
    assert!(
        desc.contains("USD-TINY-1") && desc.contains("0.03 USD") && desc.contains("80.00 CDF"),
        "{desc}"
    );
    assert!(desc.contains("montants sont toujours en CDF"), "{desc}");
    // The seed's fields are unchanged.
    assert_eq!(first.json["codeDEFDGI"].as_str().map(str::len), Some(24));

    // The replay and the lookup say the same.
    let replay = post_invoice(addr, key, &usd_prices_as_cdf("USD-TINY-1")).await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(warnings_of(&replay), warnings);
    let stored = get(addr, "/api/v1/Invoice/USD-TINY-1", Some(key)).await;
    assert_eq!(warnings_of(&stored), warnings);
    assert_eq!(stored.json["codeDEFDGI"], first.json["codeDEFDGI"]);
    // In the request's language: English when asked, the code unchanged.
    let auth = format!("Bearer {key}");
    let english = request(
        addr,
        "GET",
        "/api/v1/Invoice/USD-TINY-1",
        &[("Authorization", auth.as_str()), ("Accept-Language", "en")],
        None,
    )
    .await;
    let in_english = warnings_of(&english);
    assert_eq!(in_english[0].0, 301);
    assert_eq!(english.header("content-language"), Some("en"));
    assert_eq!(stored.header("content-language"), Some("fr"));
    assert_ne!(in_english[0].1, warnings[0].1, "{}", english.body);
    assert!(in_english[0].1.contains("USD-TINY-1"), "{}", english.body);

    // Logged once, when it was certified (not at the replay or the lookup).
    let log = setup.gateway.log();
    assert_eq!(log.matches("certified with a warning").count(), 1, "{log}");
    assert!(log.contains("code=301"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_usd_invoice_and_a_cdf_invoice_carry_no_warnings() {
    let setup = ApiSetup::start(None).await;
    let (addr, key) = (setup.addr(), setup.key.as_str());

    let usd = post_invoice(addr, key, &usd_invoice("USD-REAL-1")).await;
    assert!(usd.json["usdTotal"].is_string(), "{}", usd.body);
    assert!(usd.json.get("warnings").is_none(), "{}", usd.body);

    let cdf = post_invoice(addr, key, &invoice("CDF-1")).await;
    assert_eq!(cdf.status, 200, "{}", cdf.body);
    assert!(cdf.json.get("warnings").is_none(), "{}", cdf.body);

    // A CDF invoice of small amounts is not a USD mistake.
    let mut small = invoice("CDF-SMALL-1");
    small["items"][0]["price"] = json!("40.00");
    small["payments"] = json!([{"name": "ESPECES", "amount": "80.00"}]);
    let small = post_invoice(addr, key, &small).await;
    assert_eq!(small.status, 200, "{}", small.body);
    assert!(small.json.get("warnings").is_none(), "{}", small.body);

    let stored = get(addr, "/api/v1/Invoice/USD-REAL-1", Some(key)).await;
    assert!(stored.json.get("warnings").is_none(), "{}", stored.body);
    assert!(!setup.gateway.log().contains("certified with a warning"));
}
