//! What an ERP integrator checks on refused requests: every error is a JSON body with a
//! numeric `errorCode` and a string `errorDesc` (and `field` when one field is at fault), with
//! the documented HTTP status and code (docs/error-codes.md); a refused request never reaches
//! the device and never uses quota: after each one, `org show` still shows the same quota used
//! and the next valid invoice gets the next counters.
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

use common::{
    assert_error, chunked, counters_of, exchange_streaming, get, invoice, post_invoice, post_raw,
    request, ApiSetup, Response,
};
use serde_json::{json, Value};

/// The body limit (docs/design.md §6).
const BODY_LIMIT: usize = 256 * 1024;

/// Tracks what the device and the quota must show: `certified` invoices so far.
struct Ledger {
    certified: u64,
}

impl Ledger {
    /// Asserts the quota is unchanged, then certifies a valid invoice and asserts it got the
    /// next counters (nothing reached the device's fiscal memory meanwhile).
    async fn check_nothing_happened(&mut self, api: &ApiSetup, after: &str) {
        assert_eq!(
            api.quota_used(),
            self.certified,
            "quota used changed after the refused request {after}"
        );
        let rn = format!("OK-{}", self.certified + 1);
        let response = post_invoice(api.addr(), &api.key, &invoice(&rn)).await;
        assert_eq!(response.status, 200, "after {after}: {}", response.body);
        self.certified += 1;
        assert_eq!(
            counters_of(&response),
            (self.certified, self.certified, "FV".to_string()),
            "counters of the first invoice after the refused request {after}"
        );
    }
}

/// `invoice("E-1")` changed by `edit`.
fn edited(edit: impl FnOnce(&mut Value)) -> Value {
    let mut body = invoice("E-1");
    edit(&mut body);
    body
}

/// A 24-character codeDEFDGI that the device never issued.
const UNKNOWN_DEF: &str = "ABCDEFGHIJKLMNOPQRSTUVWX";

#[tokio::test(flavor = "multi_thread")]
async fn rn_empty_or_missing_is_code_31() {
    let api = ApiSetup::start(None).await;
    let mut ledger = Ledger { certified: 0 };
    for (label, body) in [
        ("rn empty", edited(|b| b["rn"] = json!(""))),
        ("rn blank", edited(|b| b["rn"] = json!("   "))),
        ("rn null", edited(|b| b["rn"] = Value::Null)),
        (
            "rn missing",
            edited(|b| {
                b.as_object_mut().unwrap().remove("rn");
            }),
        ),
    ] {
        let response = post_invoice(api.addr(), &api.key, &body).await;
        let error = assert_error(&response, 400, 31);
        // French unless the client asks otherwise (tests/api/languages.rs).
        assert_eq!(
            error["errorDesc"], "le numéro de facture (rn) ne peut pas être vide",
            "{label}"
        );
        assert_eq!(error["field"], "rn", "{label}");
        ledger.check_nothing_happened(&api, label).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_validation_rule_family_is_refused_with_its_code() {
    let api = ApiSetup::start(None).await;
    let mut ledger = Ledger { certified: 0 };
    let credit_note = |b: &mut Value| {
        b["type"] = json!("FA");
        b["reference"] = json!(UNKNOWN_DEF);
    };
    let raw_invoice = serde_json::to_string(&invoice("E-1")).unwrap();
    // (label, body bytes, code, field)
    let mut cases: Vec<(&str, Vec<u8>, u64, Option<&str>)> = vec![
        ("malformed JSON", br#"{"rn":"1",}"#.to_vec(), 1, None),
        (
            "trailing data",
            format!("{raw_invoice} {{}}").into_bytes(),
            1,
            None,
        ),
        (
            "duplicate field",
            raw_invoice
                .replacen(r#""rn":"E-1""#, r#""rn":"E-1","r\u006e":"E-2""#, 1)
                .into_bytes(),
            4,
            Some("rn"),
        ),
        (
            "exponent decimal",
            raw_invoice
                .replacen(r#""price":"600.00""#, r#""price":6e2"#, 1)
                .into_bytes(),
            6,
            Some("items[0].price"),
        ),
        ("body not an object", b"[]".to_vec(), 5, None),
        (
            "byte-order mark",
            [b"\xEF\xBB\xBF".as_slice(), raw_invoice.as_bytes()].concat(),
            1,
            None,
        ),
        ("not UTF-8", b"{\"rn\":\"\xff\"}".to_vec(), 1, None),
        ("empty body", Vec::new(), 1, None),
    ];
    let value_cases: Vec<(&str, Value, u64, Option<&str>)> = vec![
        (
            "unknown item field",
            edited(|b| b["items"][0]["pricee"] = json!("1")),
            3,
            Some("items[0].pricee"),
        ),
        (
            "unknown top-level field",
            edited(|b| b["Mode"] = json!("ttc")),
            3,
            Some("Mode"),
        ),
        (
            "rn a number",
            edited(|b| b["rn"] = json!(12)),
            5,
            Some("rn"),
        ),
        (
            "client an array",
            edited(|b| b["client"] = json!(["PM"])),
            5,
            Some("client"),
        ),
        (
            "decimal with a comma",
            edited(|b| b["items"][0]["price"] = json!("12,50")),
            6,
            Some("items[0].price"),
        ),
        (
            "mode missing",
            edited(|b| {
                b.as_object_mut().unwrap().remove("mode");
            }),
            7,
            Some("mode"),
        ),
        (
            "rn with a comma",
            edited(|b| b["rn"] = json!("F,1")),
            10,
            Some("rn"),
        ),
        (
            "rn of 25 characters",
            edited(|b| b["rn"] = json!("R".repeat(25))),
            10,
            Some("rn"),
        ),
        (
            "mode in capitals",
            edited(|b| b["mode"] = json!("TTC")),
            11,
            Some("mode"),
        ),
        (
            "unknown type",
            edited(|b| b["type"] = json!("FX")),
            12,
            Some("type"),
        ),
        (
            "nif of another taxpayer",
            edited(|b| b["nif"] = json!("B7654321Z")),
            13,
            Some("nif"),
        ),
        (
            "isF of another taxpayer",
            edited(|b| b["isF"] = json!("ISF-OTHER")),
            14,
            Some("isF"),
        ),
        (
            "currency EUR",
            edited(|b| b["curCode"] = json!("EUR")),
            15,
            Some("curCode"),
        ),
        (
            "CDF with a rate",
            edited(|b| b["curRate"] = json!("2500")),
            16,
            Some("curRate"),
        ),
        (
            "USD with rate -1",
            edited(|b| {
                b["curCode"] = json!("USD");
                b["curDate"] = json!("2026-02-28");
            }),
            17,
            Some("curRate"),
        ),
        (
            "curDate not ISO 8601",
            edited(|b| b["curDate"] = json!("28/02/2026")),
            18,
            Some("curDate"),
        ),
        (
            "credit note without reference",
            edited(|b| b["type"] = json!("FA")),
            19,
            Some("reference"),
        ),
        (
            "reference too short",
            edited(|b| {
                credit_note(b);
                b["reference"] = json!("SHORT");
            }),
            20,
            Some("reference"),
        ),
        (
            "unknown referenceType",
            edited(|b| {
                credit_note(b);
                b["referenceType"] = json!("ANN");
            }),
            21,
            Some("referenceType"),
        ),
        (
            "FV with a reference",
            edited(|b| b["reference"] = json!(UNKNOWN_DEF)),
            22,
            Some("reference"),
        ),
        (
            "operator without name",
            edited(|b| b["operator"] = json!({"id": "1"})),
            23,
            Some("operator.name"),
        ),
        (
            "no items",
            edited(|b| b["items"] = json!([])),
            40,
            Some("items"),
        ),
        (
            "item type in lower case",
            edited(|b| b["items"][0]["type"] = json!("bie")),
            42,
            Some("items[0].type"),
        ),
        (
            "tax group Q",
            edited(|b| b["items"][0]["taxGroup"] = json!("Q")),
            43,
            Some("items[0].taxGroup"),
        ),
        (
            "negative price",
            edited(|b| b["items"][0]["price"] = json!("-30.00")),
            44,
            Some("items[0].price"),
        ),
        (
            "price with 3 decimals",
            edited(|b| b["items"][0]["price"] = json!("30.001")),
            45,
            Some("items[0].price"),
        ),
        (
            "quantity zero",
            edited(|b| b["items"][0]["quantity"] = json!("0")),
            46,
            Some("items[0].quantity"),
        ),
        (
            "specific tax value without %",
            edited(|b| b["items"][0]["taxSpecificValue"] = json!("5")),
            48,
            Some("items[0].taxSpecificValue"),
        ),
        (
            "incoherent specific tax",
            edited(|b| {
                b["items"][0]["taxSpecificValue"] = json!("5.00%");
                b["items"][0]["taxSpecificAmount"] = json!("61.00");
            }),
            50,
            Some("items[0].taxSpecificAmount"),
        ),
        (
            "price changed without a reason",
            edited(|b| {
                b["items"][0]["originalPrice"] = json!("700.00");
                b["items"][0]["priceModification"] = json!("");
            }),
            52,
            Some("items[0].priceModification"),
        ),
        (
            "amount beyond 15 digits",
            edited(|b| b["items"][0]["price"] = json!("1000000000000000")),
            53,
            Some("items[0].price"),
        ),
        (
            "payment method CASH",
            edited(|b| b["payments"][0]["name"] = json!("CASH")),
            60,
            Some("payments[0].name"),
        ),
        (
            "payment of zero",
            edited(|b| b["payments"][0]["amount"] = json!("0")),
            61,
            Some("payments[0].amount"),
        ),
        (
            "typeDesc of 201 bytes",
            edited(|b| b["client"]["typeDesc"] = json!("T".repeat(201))),
            24,
            Some("client.typeDesc"),
        ),
        (
            "blank item name",
            edited(|b| b["items"][0]["name"] = json!("  ")),
            41,
            Some("items[0].name"),
        ),
        (
            "quantity with 4 decimals",
            edited(|b| b["items"][0]["quantity"] = json!("1.2345")),
            47,
            Some("items[0].quantity"),
        ),
        (
            "specific tax amount with 3 decimals",
            edited(|b| b["items"][0]["taxSpecificAmount"] = json!("0.001")),
            49,
            Some("items[0].taxSpecificAmount"),
        ),
        (
            "negative original price",
            edited(|b| b["items"][0]["originalPrice"] = json!("-600")),
            51,
            Some("items[0].originalPrice"),
        ),
        (
            "payment with 3 decimals",
            edited(|b| b["payments"][0]["amount"] = json!("1200.001")),
            62,
            Some("payments[0].amount"),
        ),
        (
            "payment currency EUR",
            edited(|b| b["payments"][0]["curCode"] = json!("EUR")),
            63,
            Some("payments[0].curCode"),
        ),
        (
            "CDF payment with a rate",
            edited(|b| b["payments"][0]["curRate"] = json!("2500")),
            64,
            Some("payments[0].curRate"),
        ),
        (
            "payment amount missing",
            edited(|b| {
                b["payments"][0].as_object_mut().unwrap().remove("amount");
            }),
            7,
            Some("payments[0].amount"),
        ),
        (
            "item name too long for the frame",
            edited(|b| b["items"][0]["name"] = json!("N".repeat(200))),
            70,
            Some("items[0].name"),
        ),
        (
            "TAB in the client name",
            edited(|b| b["client"]["name"] = json!("DU\tPONT")),
            71,
            Some("client.name"),
        ),
        (
            "line feed in the client name",
            edited(|b| b["client"]["name"] = json!("DUPONT\nNom HONEST SARL")),
            71,
            Some("client.name"),
        ),
        (
            "carriage return in a comment",
            edited(|b| b["cmta"] = json!("Livraison\rNIF A000000A")),
            71,
            Some("cmta"),
        ),
        (
            "right-to-left override in the third item's name",
            edited(|b| {
                let line = b["items"][0].clone();
                b["items"] = json!([line.clone(), line.clone(), line]);
                b["items"][2]["name"] = json!("STYLO \u{202E}000 1");
                b["payments"][0]["amount"] = json!("3600.00");
            }),
            73,
            Some("items[2].name"),
        ),
        (
            "isolates around the operator's name",
            edited(|b| b["operator"]["name"] = json!("\u{2066}Caisse 1\u{2069}")),
            73,
            Some("operator.name"),
        ),
    ];
    for (label, body, code, field) in value_cases {
        cases.push((label, serde_json::to_vec(&body).unwrap(), code, field));
    }

    let mut codes = std::collections::BTreeSet::new();
    for (label, body, code, field) in &cases {
        let response = post_raw(api.addr(), &api.key, Some("application/json"), body).await;
        assert_eq!(
            response.json["errorCode"], *code,
            "{label}: {} {}",
            response.status, response.body
        );
        let error = assert_error(&response, 400, *code);
        match field {
            Some(field) => {
                assert_eq!(error["field"], *field, "{label}: {}", response.body);
                if *code == 3 {
                    let desc = error["errorDesc"].as_str().unwrap();
                    let name = field.rsplit('.').next().unwrap();
                    assert!(
                        desc.contains(name),
                        "{label}: errorDesc must name the unknown field: {desc}"
                    );
                }
            }
            None => assert!(error.get("field").is_none(), "{label}: {}", response.body),
        }
        codes.insert(*code);
        ledger.check_nothing_happened(&api, label).await;
    }
    assert!(codes.len() >= 12, "distinct codes checked: {codes:?}");
}

/// A text that would forge what an auditor reads (a line break, a control sequence, a
/// direction override) is refused with its exact path, and `errorDesc` says which character
/// and where, in the reader's language; nothing reaches the box.
#[tokio::test(flavor = "multi_thread")]
async fn a_text_that_would_forge_a_line_is_refused_naming_the_character_and_its_place() {
    let api = ApiSetup::start(None).await;
    let mut ledger = Ledger { certified: 0 };
    let auth = format!("Bearer {}", api.key);
    let forged = edited(|b| {
        b["items"][0]["name"] = json!("STYLO \u{202E}000 1");
        b["client"]["address"] = json!("Gombe\u{1b}[2J");
    });
    let bytes = serde_json::to_vec(&forged).unwrap();
    for (lang, said) in [
        (
            "fr",
            "items[0].name contient U+202E, un caractère invisible qui change le sens \
             d'écriture ou coupe la ligne (marque bidirectionnelle ou séparateur de ligne), au \
             caractère 7",
        ),
        (
            "en",
            "items[0].name contains U+202E, an invisible character that changes the writing \
             direction or breaks the line (a bidirectional mark or a line separator), at \
             character 7",
        ),
    ] {
        let response = request(
            api.addr(),
            "POST",
            "/api/v1/Invoice",
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
                ("Accept-Language", lang),
            ],
            Some(&bytes),
        )
        .await;
        let error = assert_error(&response, 400, 73);
        assert_eq!(error["field"], "items[0].name");
        let desc = error["errorDesc"].as_str().unwrap();
        assert!(desc.starts_with(said), "{lang}: {desc}");
    }
    // The escape sequence of the address, once the name is fixed: 71, named.
    let mut escape = forged.clone();
    escape["items"][0]["name"] = json!("STYLO BIC");
    let response = post_invoice(api.addr(), &api.key, &escape).await;
    let error = assert_error(&response, 400, 71);
    assert_eq!(error["field"], "client.address");
    let desc = error["errorDesc"].as_str().unwrap();
    assert!(
        desc.contains("U+001B (échappement), au caractère 6"),
        "{desc}"
    );
    ledger.check_nothing_happened(&api, "forged texts").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn payments_below_the_device_total_are_code_141() {
    let api = ApiSetup::start(None).await;
    let mut ledger = Ledger { certified: 0 };
    let short = edited(|b| {
        b["payments"] = json!([
            {"name": "ESPECES", "amount": "1000.00"},
            {"name": "MOBILEMONEY", "amount": "199.99"}
        ])
    });
    let response = post_invoice(api.addr(), &api.key, &short).await;
    let error = assert_error(&response, 400, 141);
    assert_eq!(error["field"], "payments", "{}", response.body);
    let desc = error["errorDesc"].as_str().unwrap();
    assert!(
        desc.contains("1199.99") && desc.contains("1200.00"),
        "the message gives what was paid and the device's total: {desc}"
    );
    ledger.check_nothing_happened(&api, "payments short").await;
    // The same rn, now paid in full, certifies: the refused attempt left nothing behind.
    let full = edited(|b| {
        b["payments"] = json!([
            {"name": "ESPECES", "amount": "1000.00"},
            {"name": "MOBILEMONEY", "amount": "200.00"}
        ])
    });
    let response = post_invoice(api.addr(), &api.key, &full).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(counters_of(&response), (2, 2, "FV".into()));
    assert!(response.header("idempotent-replayed").is_none());
    // No payments at all: one ESPECES payment of the device's total.
    let unpaid = edited(|b| {
        b["rn"] = json!("E-2");
        b.as_object_mut().unwrap().remove("payments");
    });
    let response = post_invoice(api.addr(), &api.key, &unpaid).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(counters_of(&response), (3, 3, "FV".into()));
    assert_eq!(api.quota_used(), 3);
}

/// Asserts an HTTP-level error (status, code, JSON body, X-Request-Id), then that nothing
/// reached the device or the quota.
async fn check_http_error(
    api: &ApiSetup,
    ledger: &mut Ledger,
    label: &str,
    response: Response,
    status: u16,
    code: u64,
) -> Response {
    assert_error(&response, status, code);
    assert!(
        response.header("x-request-id").is_some(),
        "{label}: every response carries X-Request-Id"
    );
    ledger.check_nothing_happened(api, label).await;
    response
}

#[tokio::test(flavor = "multi_thread")]
async fn http_layer_errors_are_json_and_harmless() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let mut ledger = Ledger { certified: 0 };
    let auth = format!("Bearer {}", api.key);
    let valid = serde_json::to_vec(&invoice("H-1")).unwrap();

    // 415: no JSON content type.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let response = post_raw(addr, &api.key, content_type, &valid).await;
        check_http_error(&api, &mut ledger, "415", response, 415, 123).await;
    }
    // A JSON content type with parameters is fine.
    let response = post_raw(
        addr,
        &api.key,
        Some("application/json; charset=utf-8"),
        &valid,
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body);
    ledger.certified += 1;

    // 413 with Content-Length: one byte above the limit.
    let mut big = serde_json::to_vec(&invoice("H-BIG")).unwrap();
    big.pop();
    big.extend(std::iter::repeat_n(b' ', BODY_LIMIT + 1 - big.len() - 1));
    big.push(b'}');
    assert_eq!(big.len(), BODY_LIMIT + 1);
    let head = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        big.len()
    );
    let response = exchange_streaming(addr, head, big.clone()).await;
    check_http_error(&api, &mut ledger, "413 content-length", response, 413, 122).await;
    // 413 chunked (no Content-Length to look at).
    let chunked_head = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let response = exchange_streaming(addr, chunked_head.clone(), chunked(&big, 4096)).await;
    check_http_error(&api, &mut ledger, "413 chunked", response, 413, 122).await;
    // Exactly at the limit, and chunked under the limit, are read and certified.
    let mut at_limit = big.clone();
    at_limit.remove(at_limit.len() - 2);
    assert_eq!(at_limit.len(), BODY_LIMIT);
    let response = post_raw(addr, &api.key, Some("application/json"), &at_limit).await;
    assert_eq!(
        response.status, 200,
        "a body of exactly 256 KiB: {}",
        response.body
    );
    ledger.certified += 1;
    let small = serde_json::to_vec(&invoice("H-CHUNKED")).unwrap();
    let response = exchange_streaming(addr, chunked_head, chunked(&small, 50)).await;
    assert_eq!(
        response.status, 200,
        "a small chunked body: {}",
        response.body
    );
    ledger.certified += 1;
    assert_eq!(counters_of(&response).1, ledger.certified);

    // 404 and 405, JSON.
    for path in [
        "/nosuch",
        "/api/v2/Invoice",
        "/api/v1/invoice",
        "/api/v1/Invoice/A/B",
    ] {
        let response = get(addr, path, Some(&api.key)).await;
        check_http_error(&api, &mut ledger, path, response, 404, 120).await;
    }
    let response = get(addr, "/api/v1/Invoice/UNKNOWN", Some(&api.key)).await;
    check_http_error(&api, &mut ledger, "unknown rn", response, 404, 170).await;
    let response = get(addr, "/api/v1/Invoice", Some(&api.key)).await;
    let response = check_http_error(&api, &mut ledger, "GET Invoice", response, 405, 121).await;
    assert_eq!(response.header("allow"), Some("POST"));
    let response = request(
        addr,
        "DELETE",
        "/api/v1/Invoice/H-1",
        &[("Authorization", &auth)],
        None,
    )
    .await;
    let response = check_http_error(&api, &mut ledger, "DELETE", response, 405, 121).await;
    assert_eq!(response.header("allow"), Some("GET"));
    let response = request(addr, "POST", "/api/v1/status", &[], Some(b"{}")).await;
    let response = check_http_error(&api, &mut ledger, "POST status", response, 405, 121).await;
    assert_eq!(response.header("allow"), Some("GET, HEAD"));

    // Nesting bombs: 400 code 2, and the gateway keeps answering.
    let arrays = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    let in_items = format!(
        r#"{{"rn":"BOMB","mode":"ttc","type":"FV","items":{}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for (label, bomb) in [
        ("arrays", arrays),
        ("objects", objects),
        ("in items", in_items),
    ] {
        let response = post_raw(addr, &api.key, Some("application/json"), bomb.as_bytes()).await;
        check_http_error(&api, &mut ledger, label, response, 400, 2).await;
        let status = get(addr, "/api/v1/status", None).await;
        assert_eq!(status.status, 200);
        assert_eq!(status.json["status"], true, "{}", status.body);
    }
    // Just under the documented depth bound the body is read (and refused by the schema).
    let deep_ok = format!("{}{}", "[".repeat(32), "]".repeat(32));
    let response = post_raw(addr, &api.key, Some("application/json"), deep_ok.as_bytes()).await;
    check_http_error(&api, &mut ledger, "32 deep", response, 400, 5).await;
    let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
    let response = post_raw(addr, &api.key, Some("application/json"), deep.as_bytes()).await;
    check_http_error(&api, &mut ledger, "33 deep", response, 400, 2).await;
    assert_eq!(api.quota_used(), ledger.certified);
}
