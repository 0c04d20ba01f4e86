//! Warnings on a certified invoice (docs/error-codes.md, "Warnings"): a USD invoice whose
//! amounts look like USD (worth less than one dollar in all: USD prices sent as CDF amounts)
//! is certified as sent, and its answer carries `warnings: [{"warningCode": 301,
//! "warningDesc"}]`, the same in the POST, its replay and `GET /api/v1/Invoice/{rn}`; a real
//! USD invoice and a CDF invoice carry no `warnings` at all. The gateway's log says it once.
//! A credit note whose original is not in this register (certified before the gateway) is
//! certified with warning 302.
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

use common::{
    add_org_with_key, config_with_device, credit_note_of, get, invoice, post_invoice, request,
    usd_invoice, ApiSetup, Gateway, Response,
};
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

#[tokio::test(flavor = "multi_thread")]
async fn a_credit_note_of_an_invoice_certified_before_the_gateway_is_certified_with_a_warning() {
    let mut setup = ApiSetup::start(None).await;
    // The box certified an invoice through another register (a gateway installed before this
    // one, on the same box).
    let before = post_invoice(setup.addr(), &setup.key, &invoice("OLD-1")).await;
    assert_eq!(before.status, 200, "{}", before.body);
    let old_code = before.json["codeDEFDGI"].as_str().unwrap().to_owned();
    assert!(setup.gateway.terminate(), "the first gateway stops cleanly");
    let fresh = tempfile::tempdir().unwrap();
    let gateway = Gateway::start(
        fresh.path(),
        &config_with_device(fresh.path(), &setup.sim.link),
    );
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(fresh.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    let addr = gateway.addr;

    // Its credit note: the box knows the original, this register does not. Certified as sent,
    // with 302 naming the reference.
    let note = post_invoice(addr, &key, &credit_note_of("AV-OLD-1", &old_code, "FA")).await;
    let warnings = warnings_of(&note);
    assert_eq!(warnings.len(), 1, "{}", note.body);
    let (code, desc) = &warnings[0];
    assert_eq!(*code, 302);
    assert!(
        desc.contains("AV-OLD-1") && desc.contains(&old_code) && desc.contains("ne contient pas"),
        "{desc}"
    );
    // The replay and the lookup say the same; English on request.
    let replay = post_invoice(addr, &key, &credit_note_of("AV-OLD-1", &old_code, "FA")).await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(warnings_of(&replay), warnings);
    let stored = get(addr, "/api/v1/Invoice/AV-OLD-1", Some(&key)).await;
    assert_eq!(warnings_of(&stored), warnings);
    let auth = format!("Bearer {key}");
    let english = request(
        addr,
        "GET",
        "/api/v1/Invoice/AV-OLD-1",
        &[("Authorization", auth.as_str()), ("Accept-Language", "en")],
        None,
    )
    .await;
    let in_english = warnings_of(&english);
    assert_eq!(in_english[0].0, 302);
    assert!(
        in_english[0].1.contains("does not hold"),
        "{}",
        english.body
    );
    let log = gateway.log();
    assert!(log.contains("code=302"), "{log}");

    // A credit note of an invoice of this register carries none.
    let sale = post_invoice(addr, &key, &invoice("NEW-1")).await;
    let new_code = sale.json["codeDEFDGI"].as_str().unwrap().to_owned();
    let note = post_invoice(addr, &key, &credit_note_of("AV-NEW-1", &new_code, "FA")).await;
    assert_eq!(warnings_of(&note), Vec::new(), "{}", note.body);
    drop(gateway);
}
