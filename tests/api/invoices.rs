//! What an ERP integrator checks on `POST /api/v1/Invoice` and `GET /api/v1/Invoice/{rn}`:
//! every invoice type and price mode certifies with the device's totals, counters and a QR
//! string of the documented shape; credit notes, USD, the seed's reference example and comment
//! lines are carried; the result can be fetched again and is in the LogInvoices register;
//! a retry of the same invoice is an idempotent replay (no second certification); sandbox keys
//! certify into their own register without using the quota.
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

use common::{counters_of, get, invoice, post_invoice, post_raw, ApiSetup, Response, SIM_NIF};
use serde_json::{json, Value};

/// The NIM of the simulator the tests run.
const SIM_NIM: &str = "SIM0000001";

/// An invoice of `kind` in `mode` with one item of `group` worth 1000.00 HT (2 x 500.00), so
/// 1160.00 TTC in group B and 1000.00 in group E. Every scalar is a string.
fn typed(rn: &str, kind: &str, mode: &str, group: &str, with_payments: bool) -> Value {
    let ttc_price = if group == "B" { "580.00" } else { "500.00" };
    let price = if mode == "ht" { "500.00" } else { ttc_price };
    let total = if group == "B" { "1160.00" } else { "1000.00" };
    let mut body = json!({
        "rn": rn,
        "mode": mode,
        "type": kind,
        "curCode": "CDF",
        "curRate": "-1",
        "items": [
            {"code": "ART-01", "name": "CAHIER A4", "type": "BIE", "price": price,
             "quantity": "2", "taxGroup": group}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL"},
        "operator": {"id": "1", "name": "Caisse 1"}
    });
    if with_payments {
        body["payments"] = json!([{"name": "VIREMENT", "amount": total}]);
    }
    body
}

/// Asserts the security elements of a 200 certification of `rn` of `kind`, and that the
/// qrCode is `RDCDEF01;{nim};{codeDEFDGI};{NIF};{yyyyMMddHHmmss}` with the response's
/// `dateTime`. Returns the codeDEFDGI.
#[track_caller]
fn assert_certified(response: &Response, rn: &str, kind: &str) -> String {
    assert_eq!(response.status, 200, "{rn}: {}", response.body);
    let body = &response.json;
    let code = body["codeDEFDGI"]
        .as_str()
        .unwrap_or_else(|| panic!("no codeDEFDGI: {}", response.body));
    assert_eq!(code.len(), 24, "codeDEFDGI {code:?}");
    assert!(code.bytes().all(|b| b.is_ascii_graphic()), "{code:?}");
    assert_eq!(body["nim"], SIM_NIM, "{}", response.body);
    assert_eq!(body["rn"], rn, "{}", response.body);
    assert_eq!(body["type"], kind, "{}", response.body);
    let (_, _, counted_kind) = counters_of(response);
    assert_eq!(counted_kind, kind, "counters {}", body["counters"]);
    let date_time = body["dateTime"].as_str().expect("dateTime");
    let parsed = chrono::NaiveDateTime::parse_from_str(date_time, "%Y-%m-%dT%H:%M:%S")
        .unwrap_or_else(|e| panic!("dateTime {date_time:?}: {e}"));
    let compact = parsed.format("%Y%m%d%H%M%S").to_string();
    assert_eq!(
        body["qrCode"],
        format!("RDCDEF01;{SIM_NIM};{code};{SIM_NIF};{compact}"),
        "{}",
        response.body
    );
    code.to_string()
}

/// Asserts total, vtotal and one group's totals of a certification. The group's VAT is
/// compared as a number (its text form is checked by `group_amounts_have_two_decimals`).
#[track_caller]
fn assert_totals(response: &Response, total: &str, vat: &str, group: &str) {
    let body = &response.json;
    assert_eq!(body["total"], total, "{}", response.body);
    assert_eq!(body["vtotal"], vat, "{}", response.body);
    assert_eq!(body["groups"][group]["total"], total, "{}", response.body);
    let group_vat: f64 = body["groups"][group]["vat"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("groups.{group}.vat: {}", response.body));
    assert_eq!(group_vat, vat.parse::<f64>().unwrap(), "{}", response.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_invoice_type_in_both_modes_and_credit_notes_certify() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let mut originals = std::collections::HashMap::new();
    let mut expected_tc = 0;
    let mut expected_fvc = 0;
    for kind in ["FV", "FT", "EV", "ET"] {
        for (mode, with_payments) in [("ht", false), ("ttc", true)] {
            let group = if kind.starts_with('E') { "E" } else { "B" };
            let rn = format!("{kind}-{mode}-1");
            let response = post_invoice(
                addr,
                &api.key,
                &typed(&rn, kind, mode, group, with_payments),
            )
            .await;
            let code = assert_certified(&response, &rn, kind);
            if group == "B" {
                assert_totals(&response, "1160.00", "160.00", "B");
            } else {
                assert_totals(&response, "1000.00", "0.00", "E");
            }
            assert_eq!(response.json["environment"], "production");
            assert_eq!(response.json["usdTotal"], Value::Null, "a CDF invoice");
            expected_tc += 1;
            expected_fvc += 1;
            assert_eq!(
                counters_of(&response),
                (expected_fvc, expected_tc, kind.to_string()),
                "sales invoices share one counter, the total counter counts all"
            );
            originals.insert(kind, code);
        }
    }

    // Credit notes carry the original's codeDEFDGI and the reference type, and have their
    // own counter. FA refers to a sales invoice (FV), EA to an export invoice (EV).
    let mut expected_frc = 0;
    for (kind, original, reference_type) in [("FA", "FV", "RAM"), ("EA", "EV", "COR")] {
        let rn = format!("{kind}-1");
        let group = if kind == "EA" { "E" } else { "B" };
        let mut body = typed(&rn, kind, "ttc", group, true);
        body["reference"] = json!(originals[original]);
        body["referenceType"] = json!(reference_type);
        let response = post_invoice(addr, &api.key, &body).await;
        assert_certified(&response, &rn, kind);
        expected_tc += 1;
        expected_frc += 1;
        assert_eq!(
            counters_of(&response),
            (expected_frc, expected_tc, kind.to_string())
        );
        assert_ne!(response.json["codeDEFDGI"], originals[original].as_str());
    }
    // An export credit note cannot refer to a domestic sale: the device refuses it (422).
    // (The FV is refunded in full by FA-1 already: against it, 180 would answer first.)
    let mut body = typed("EA-2", "EA", "ttc", "E", true);
    body["reference"] = json!(originals["FT"]);
    let response = post_invoice(addr, &api.key, &body).await;
    common::assert_error(&response, 422, 140);
    // referenceType defaults to COR.
    let mut body = typed("FA-2", "FA", "ht", "B", false);
    body["reference"] = json!(originals["FT"]);
    let response = post_invoice(addr, &api.key, &body).await;
    assert_certified(&response, "FA-2", "FA");
    assert_eq!(counters_of(&response), (3, expected_tc + 1, "FA".into()));
    assert_eq!(api.quota_used(), expected_tc + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn usd_reference_example_comments_and_number_forms() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();

    // A USD source: amounts in CDF, with the rate and its date; the device gives the USD
    // equivalent of the total (28505.00 / 2850.5 = 10.00).
    let mut usd = invoice("USD-1");
    usd["curCode"] = json!("USD");
    usd["curRate"] = json!("2850.5");
    usd["curDate"] = json!("2026-02-28T17:05:06.568Z");
    usd["items"][0]["price"] = json!("14252.50");
    usd["payments"] = json!([
        {"name": "CARTEBANCAIRE", "amount": "28505.00", "curCode": "USD", "curRate": "2850.5"}
    ]);
    let response = post_invoice(addr, &api.key, &usd).await;
    assert_certified(&response, "USD-1", "FV");
    assert_eq!(response.json["total"], "28505.00", "{}", response.body);
    assert_eq!(response.json["usdTotal"], "10.00", "{}", response.body);
    assert_eq!(counters_of(&response), (1, 1, "FV".into()));

    // The seed's reference example, verbatim in form: every scalar a string, nif and isF of
    // the seller, client PM, ESPECES, CDF with curRate "-1".
    let reference = json!({
        "nif": SIM_NIF,
        "rn": "FC0002",
        "mode": "ttc",
        "isF": "ISF-1",
        "type": "FV",
        "curCode": "CDF",
        "curDate": "2026-02-28T17:05:06.568Z",
        "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00",
             "quantity": "2.0", "taxGroup": "B", "taxSpecificValue": "0.00%",
             "taxSpecificAmount": "0.00", "originalPrice": "600.00", "priceModification": ""},
            {"code": " ---DEEE", "name": "MAIN D'OEUVRE", "type": "SER", "price": "30.00",
             "quantity": "1.0", "taxGroup": "B", "taxSpecificValue": "0.00%",
             "taxSpecificAmount": "0.0", "originalPrice": "30.00", "priceModification": ""}
        ],
        "client": {"nif": "A000000A", "type": "PM", "typeDesc": "Personne morale",
                   "name": "DUPONT", "contact": "+330562380000",
                   "address": "25 rue du taur 31850 MONTRABE"},
        "payments": [{"name": "ESPECES", "amount": "1230.00", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "01", "name": "ADMIN"}
    });
    let response = post_invoice(addr, &api.key, &reference).await;
    assert_certified(&response, "FC0002", "FV");
    assert_totals(&response, "1230.00", "169.66", "B");
    assert_eq!(counters_of(&response), (2, 2, "FV".into()));

    // Comment lines A..H go with the invoice; they are part of its content.
    let mut commented = invoice("CMT-1");
    commented["client"]["email"] = json!("compta@client.cd");
    commented["client"]["rccm"] = json!("CD/KIN/RCCM/24-B-01234");
    for (i, letter) in ('a'..='h').enumerate() {
        commented[format!("cmt{letter}")] =
            json!(format!("Ligne {i}: merci, à bientôt & <bonne> journée"));
    }
    let response = post_invoice(addr, &api.key, &commented).await;
    let commented_code = assert_certified(&response, "CMT-1", "FV");
    assert_eq!(counters_of(&response), (3, 3, "FV".into()));
    let again = post_invoice(addr, &api.key, &commented).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json["codeDEFDGI"], commented_code.as_str());
    let mut other_comment = commented.clone();
    other_comment["cmth"] = json!("another last line");
    let conflict = post_invoice(addr, &api.key, &other_comment).await;
    assert_eq!(
        conflict.status, 409,
        "a changed comment line is other content: {}",
        conflict.body
    );
    assert_eq!(conflict.json["errorCode"], 110);

    // Decimals as JSON numbers give the same result as strings.
    let as_strings = serde_json::to_vec(&invoice("NUM-S")).expect("json");
    let as_numbers = |rn: &str| {
        format!(
            r#"{{"rn":"{rn}","mode":"ttc","type":"FV","curCode":"CDF","curRate":-1,
            "items":[{{"code":"LR 1515","name":"STYLO BIC","type":"BIE","price":600.00,
            "quantity":2,"taxGroup":"B"}}],
            "client":{{"nif":"A7654321C","type":"PM","name":"CLIENT SARL",
            "contact":"+243 810 000 001","address":"Gombe, Kinshasa"}},
            "payments":[{{"name":"ESPECES","amount":1200.0,"curCode":"CDF","curRate":-1}}],
            "operator":{{"id":"1","name":"Caisse 1"}}}}"#
        )
    };
    let strings = post_raw(addr, &api.key, Some("application/json"), &as_strings).await;
    let string_code = assert_certified(&strings, "NUM-S", "FV");
    assert_eq!(counters_of(&strings), (4, 4, "FV".into()));
    let numbers = post_raw(
        addr,
        &api.key,
        Some("application/json"),
        as_numbers("NUM-N").as_bytes(),
    )
    .await;
    assert_certified(&numbers, "NUM-N", "FV");
    assert_eq!(counters_of(&numbers), (5, 5, "FV".into()));
    for field in ["total", "vtotal", "specificTax", "groups"] {
        assert_eq!(strings.json[field], numbers.json[field], "{field}");
    }
    assert_totals(&numbers, "1200.00", "165.52", "B");
    // The same invoice (rn NUM-S) written with numbers is the same content: a replay.
    let replay = post_raw(
        addr,
        &api.key,
        Some("application/json"),
        as_numbers("NUM-S").as_bytes(),
    )
    .await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["codeDEFDGI"], string_code.as_str());
    assert_eq!(api.quota_used(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn results_can_be_fetched_again_and_are_in_the_register() {
    let mut api = ApiSetup::start(None).await;
    let addr = api.addr();
    let first = post_invoice(addr, &api.key, &invoice("REG-1")).await;
    let first_code = assert_certified(&first, "REG-1", "FV");
    // An rn with a space and a slash (allowed by the device's FN rule).
    let odd_rn = "F 2026/001";
    let second = post_invoice(addr, &api.key, &invoice(odd_rn)).await;
    let second_code = assert_certified(&second, odd_rn, "FV");

    for (posted, path) in [
        (&first, "/api/v1/Invoice/REG-1".to_string()),
        (&second, "/api/v1/Invoice/F%202026%2F001".to_string()),
    ] {
        let fetched = get(addr, &path, Some(&api.key)).await;
        assert_eq!(fetched.status, 200, "{path}: {}", fetched.body);
        for field in [
            "codeDEFDGI",
            "qrCode",
            "counters",
            "nim",
            "dateTime",
            "rn",
            "type",
            "total",
            "vtotal",
            "groups",
            "environment",
        ] {
            assert_eq!(fetched.json[field], posted.json[field], "{path}: {field}");
        }
        assert!(fetched.header("idempotent-replayed").is_none());
    }
    // Characters that mean something in a URL (# ? % +) are taken literally once escaped.
    let url_rn = "F#1?a=%41+b";
    let posted = post_invoice(addr, &api.key, &invoice(url_rn)).await;
    let url_code = assert_certified(&posted, url_rn, "FV");
    let fetched = get(
        addr,
        "/api/v1/Invoice/F%231%3Fa%3D%2541%2Bb",
        Some(&api.key),
    )
    .await;
    assert_eq!(fetched.status, 200, "{}", fetched.body);
    assert_eq!(fetched.json["rn"], url_rn);
    assert_eq!(fetched.json["codeDEFDGI"], url_code.as_str());
    // Lowercase percent escapes are the same path segment.
    let lower = get(addr, "/api/v1/Invoice/F%202026%2f001", Some(&api.key)).await;
    assert_eq!(lower.status, 200, "{}", lower.body);
    assert_eq!(lower.json["codeDEFDGI"], second_code.as_str());

    // Another organization sees none of this, and has its own rn space.
    let (_second_box, other) = common::second_shop(&mut api.gateway, "other").await;
    let addr = api.addr();
    let hidden = get(addr, "/api/v1/Invoice/REG-1", Some(&other)).await;
    common::assert_error(&hidden, 404, 170);
    let own = post_invoice(addr, &other, &invoice("REG-1")).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(
        own.json["nim"], "SIM0000002",
        "certified on its own box: {}",
        own.body
    );
    assert!(own.header("idempotent-replayed").is_none());
    assert_ne!(own.json["codeDEFDGI"], first_code.as_str());
    let mine = get(addr, "/api/v1/Invoice/REG-1", Some(&api.key)).await;
    assert_eq!(mine.json["codeDEFDGI"], first_code.as_str());

    // The register (LogInvoices) through the CLI.
    let list = api.cli_ok(&["log", "list", "--org", "acme"]);
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{list}");
    assert!(
        rows[0].contains("REG-1") && rows[0].contains(&first_code),
        "{list}"
    );
    assert!(
        rows[1].contains(odd_rn) && rows[1].contains(&second_code),
        "{list}"
    );
    let shown: Value =
        serde_json::from_str(&api.cli_ok(&["log", "show", "1", "--json"])).expect("JSON");
    assert_eq!(shown["sequence"], 1);
    assert_eq!(shown["rn"], "REG-1");
    assert_eq!(shown["org"], "acme");
    assert_eq!(shown["nif"], SIM_NIF);
    assert_eq!(shown["security"]["codeDEFDGI"], first_code.as_str());
    assert_eq!(shown["security"]["qrCode"], first.json["qrCode"]);
    assert_eq!(shown["security"]["counters"], first.json["counters"]);
    let digest = shown["request_digest"].as_str().expect("request_digest");
    assert_eq!(digest.len(), 64, "SHA-256 hex: {digest}");

    let csv = api.cli_ok(&["log", "export", "--format", "csv", "--org", "acme"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert_eq!(rows[0][column("rn")], "REG-1");
    assert_eq!(rows[0][column("codeDEFDGI")], first_code);
    assert_eq!(rows[0][column("qrCode")], first.json["qrCode"]);
    assert_eq!(rows[0][column("counters")], first.json["counters"]);
    assert_eq!(rows[0][column("total")], "1200.00");
    assert_eq!(rows[0][column("requestDigest")], digest);
    assert_eq!(rows[1][column("rn")], odd_rn);
    assert_eq!(rows[1][column("codeDEFDGI")], second_code);
    assert_eq!(rows[2][column("rn")], url_rn);
    assert_eq!(rows[2][column("sequence")], "3");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_is_replayed_and_other_content_under_the_same_rn_is_refused() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let body = invoice("IDEM-1");
    let first = post_invoice(addr, &api.key, &body).await;
    let code = assert_certified(&first, "IDEM-1", "FV");
    assert!(first.header("idempotent-replayed").is_none());
    assert_eq!(counters_of(&first), (1, 1, "FV".into()));

    // The same content, with other key order and blanks: the stored result again.
    let reordered = format!(
        "{{ \"operator\": {}, \"payments\": {}, \"client\": {}, \"items\": {},\n \"curRate\": \"-1\", \"curCode\": \"CDF\", \"type\": \"FV\", \"mode\": \"ttc\", \"rn\": \"IDEM-1\" }}",
        body["operator"], body["payments"], body["client"], body["items"]
    );
    let mut trailing_zeros = body.clone();
    trailing_zeros["items"][0]["price"] = json!("600.000");
    trailing_zeros["items"][0]["quantity"] = json!("2.0");
    trailing_zeros["curRate"] = json!("-1.00");
    for raw in [
        serde_json::to_vec(&body).unwrap(),
        reordered.into_bytes(),
        serde_json::to_vec(&trailing_zeros).unwrap(),
    ] {
        let replay = post_raw(addr, &api.key, Some("application/json"), &raw).await;
        assert_eq!(replay.status, 200, "{}", replay.body);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        for field in [
            "codeDEFDGI",
            "qrCode",
            "counters",
            "nim",
            "dateTime",
            "total",
        ] {
            assert_eq!(replay.json[field], first.json[field], "{field}");
        }
    }
    assert_eq!(code, first.json["codeDEFDGI"]);
    // The duplicate index is per organization, whichever of its keys sends the retry.
    let other_key = api.issue_key(false);
    let replay = post_invoice(addr, &other_key, &body).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["codeDEFDGI"], code.as_str());
    assert_eq!(api.quota_used(), 1, "a replay uses no quota");

    // Same rn, other content: 409 code 110, nothing certified.
    let mut changed = body.clone();
    changed["items"][0]["quantity"] = json!("3");
    changed["payments"][0]["amount"] = json!("1800.00");
    let conflict = post_invoice(addr, &api.key, &changed).await;
    common::assert_error(&conflict, 409, 110);

    // The device certified nothing for the replays and the conflict: the next invoice gets
    // the next counters.
    let next = post_invoice(addr, &api.key, &invoice("IDEM-2")).await;
    assert_certified(&next, "IDEM-2", "FV");
    assert_eq!(counters_of(&next), (2, 2, "FV".into()));
    assert_eq!(api.quota_used(), 2);

    // Two simultaneous sends of one invoice (an impatient ERP): one certification. The other
    // answer is the replay, or 409 code 111 "in flight" with Retry-After.
    let twin = invoice("IDEM-3");
    let (a, b) = tokio::join!(
        post_invoice(addr, &api.key, &twin),
        post_invoice(addr, &api.key, &twin)
    );
    let (done, other) = if a.header("idempotent-replayed").is_none() && a.status == 200 {
        (a, b)
    } else {
        (b, a)
    };
    assert_certified(&done, "IDEM-3", "FV");
    assert_eq!(counters_of(&done), (3, 3, "FV".into()));
    match other.status {
        200 => {
            assert_eq!(other.header("idempotent-replayed"), Some("true"));
            assert_eq!(other.json["codeDEFDGI"], done.json["codeDEFDGI"]);
        }
        _ => {
            common::assert_error(&other, 409, 111);
            assert!(other.header("retry-after").is_some(), "{:?}", other.headers);
        }
    }
    let next = post_invoice(addr, &api.key, &invoice("IDEM-4")).await;
    assert_eq!(counters_of(&next), (4, 4, "FV".into()));
    assert_eq!(api.quota_used(), 4);
    let list = api.cli_ok(&["log", "list"]);
    assert_eq!(list.lines().skip(1).count(), 4, "{list}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_key_certifies_into_the_sandbox_register_without_quota() {
    let api = ApiSetup::start(Some(5)).await;
    let addr = api.addr();
    let sandbox = api.issue_key(true);
    assert!(sandbox.starts_with("mcf_test_"), "{sandbox}");

    let response = post_invoice(addr, &sandbox, &invoice("SBX-1")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.json["environment"], "sandbox");
    assert_eq!(response.json["codeDEFDGI"].as_str().map(str::len), Some(24));
    assert_eq!(response.json["total"], "1200.00");
    assert_eq!(api.quota_used(), 0, "sandbox invoices use no quota");

    // Sandbox register only.
    let sandbox_list = api.cli_ok(&["log", "list", "--sandbox"]);
    assert!(sandbox_list.contains("SBX-1"), "{sandbox_list}");
    let production_list = api.cli_ok(&["log", "list"]);
    assert!(!production_list.contains("SBX-1"), "{production_list}");
    let shown: Value =
        serde_json::from_str(&api.cli_ok(&["log", "show", "1", "--sandbox", "--json"]))
            .expect("JSON");
    assert_eq!(shown["rn"], "SBX-1");
    assert_eq!(shown["security"]["codeDEFDGI"], response.json["codeDEFDGI"]);

    // The fiscal box was not used: the first production invoice is its first.
    let live = post_invoice(addr, &api.key, &invoice("LIVE-1")).await;
    assert_certified(&live, "LIVE-1", "FV");
    assert_eq!(counters_of(&live), (1, 1, "FV".into()));
    assert_eq!(api.quota_used(), 1);

    // Separate registers: each key sees its own environment's result.
    let from_sandbox = get(addr, "/api/v1/Invoice/SBX-1", Some(&sandbox)).await;
    assert_eq!(from_sandbox.status, 200, "{}", from_sandbox.body);
    assert_eq!(from_sandbox.json["environment"], "sandbox");
    let from_live = get(addr, "/api/v1/Invoice/SBX-1", Some(&api.key)).await;
    common::assert_error(&from_live, 404, 170);
    // The same rn can be certified in production too (another register).
    let live_same_rn = post_invoice(addr, &api.key, &invoice("SBX-1")).await;
    assert_certified(&live_same_rn, "SBX-1", "FV");
    assert!(live_same_rn.header("idempotent-replayed").is_none());
    assert_eq!(counters_of(&live_same_rn), (2, 2, "FV".into()));
    assert_eq!(api.quota_used(), 2);
}

/// Validation runs before anything is started or reserved: a bad request under a sandbox key
/// does not start the organization's sandbox simulator; the first valid one does.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_sandbox_request_starts_no_simulator() {
    let api = ApiSetup::start(Some(5)).await;
    let sandbox = api.issue_key(true);
    let mut bad = invoice("SBX-BAD");
    bad["rn"] = "".into();
    let refused = post_invoice(api.addr(), &sandbox, &bad).await;
    common::assert_error(&refused, 400, 31);
    let started = "sandbox simulator started";
    assert!(
        !api.gateway.log().contains(started),
        "{}",
        api.gateway.log()
    );

    let certified = post_invoice(api.addr(), &sandbox, &invoice("SBX-GOOD")).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    assert!(api.gateway.log().contains(started), "{}", api.gateway.log());
}

/// reply.rs promises "Amounts are JSON strings with 2 decimals (exact)", as `total`,
/// `vtotal` and the groups' `total` are; a group with no VAT (E, 0%) shows `"vat": "0"`.
#[tokio::test(flavor = "multi_thread")]

async fn group_amounts_have_two_decimals() {
    let api = ApiSetup::start(None).await;
    let response = post_invoice(
        api.addr(),
        &api.key,
        &typed("EXP-1", "EV", "ttc", "E", true),
    )
    .await;
    assert_certified(&response, "EXP-1", "EV");
    assert_eq!(response.json["groups"]["E"]["total"], "1000.00");
    assert_eq!(
        response.json["groups"]["E"]["vat"], "0.00",
        "{}",
        response.body
    );
}

/// A credit note (FA) of the invoice certified as `original`, for `amount` TTC in group B
/// (one line), paid back in cash; `mode` `ttc`, or `ht` (then `amount` is its HT).
fn refund(rn: &str, original: &str, amount: &str, mode: &str) -> Value {
    json!({
        "rn": rn, "mode": mode, "type": "FA", "reference": original, "referenceType": "RAM",
        "curCode": "CDF", "curRate": "-1",
        "items": [{"name": "RETOUR STYLO BIC", "type": "BIE", "price": amount, "quantity": "1", "taxGroup": "B"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}

/// Asserts a refusal with `code` (422, `field` items) that nothing reached the box: no quota
/// used, nothing to find under `rn`, and the next invoice gets the next counters. Returns its
/// `errorDesc`.
async fn assert_refused_before_the_box(
    api: &ApiSetup,
    response: &Response,
    code: u64,
    rn: &str,
    quota_before: u64,
) -> String {
    let error = common::assert_error(response, 422, code);
    assert_eq!(error["field"], "items", "{}", response.body);
    assert!(
        response.header("retry-after").is_none(),
        "{:?}",
        response.headers
    );
    let desc = error["errorDesc"].as_str().unwrap_or_default().to_owned();
    assert_eq!(api.quota_used(), quota_before, "no quota used by {rn}");
    let lookup = get(api.addr(), &format!("/api/v1/Invoice/{rn}"), Some(&api.key)).await;
    common::assert_error(&lookup, 404, 170);
    desc
}

/// How many invoices the box finalized (its fiscal memory).
fn box_counters(api: &ApiSetup) -> u64 {
    common::fiscal_invoices(&api.sim).len() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn credit_notes_never_refund_more_than_their_original() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    // An invoice of 1,200.00 CDF.
    let original = post_invoice(addr, &api.key, &invoice("SALE-1")).await;
    let code = assert_certified(&original, "SALE-1", "FV");
    assert_eq!(original.json["total"], "1200.00");

    // 800.00 of it back: certified, no warning (its original is in this register).
    let first = post_invoice(addr, &api.key, &refund("AV-1", &code, "800.00", "ttc")).await;
    assert_certified(&first, "AV-1", "FA");
    assert!(first.json.get("warnings").is_none(), "{}", first.body);

    // 500.00 more would refund 1,300.00 of 1,200.00: refused before anything reached the
    // box, saying what is left.
    let certified = box_counters(&api);
    let quota = api.quota_used();
    let over = post_invoice(addr, &api.key, &refund("AV-2", &code, "500.00", "ttc")).await;
    let desc = assert_refused_before_the_box(&api, &over, 180, "AV-2", quota).await;
    // Its amounts as a French reader writes them, each with its currency once.
    for said in [
        "SALE-1",
        &code,
        "1\u{202f}200,00\u{a0}CDF",
        "800,00\u{a0}CDF",
        "il reste 400,00\u{a0}CDF",
        "500,00\u{a0}CDF",
    ] {
        assert!(desc.contains(said), "{said}: {desc}");
    }
    assert!(
        desc.contains("facture d'avoir"),
        "French by default: {desc}"
    );
    assert!(
        !desc.contains("CDF CDF") && !desc.contains("CDF\u{a0}CDF"),
        "{desc}"
    );
    assert_eq!(box_counters(&api), certified, "nothing reached the box");
    // Its retry is refused the same way, and another rn too.
    let again = post_invoice(addr, &api.key, &refund("AV-2", &code, "500.00", "ttc")).await;
    common::assert_error(&again, 422, 180);

    // What is left, exactly: certified; then nothing is left, not even a cent.
    let rest = post_invoice(addr, &api.key, &refund("AV-3", &code, "400.00", "ttc")).await;
    assert_certified(&rest, "AV-3", "FA");
    let quota = api.quota_used();
    let cent = post_invoice(addr, &api.key, &refund("AV-4", &code, "0.01", "ttc")).await;
    let desc = assert_refused_before_the_box(&api, &cent, 180, "AV-4", quota).await;
    assert!(desc.contains("il reste 0,00\u{a0}CDF."), "{desc}");

    // Another original is another account; an `ht` credit note's TTC comes from the box's
    // rates: 1,100.00 HT at 16 % is 1,276.00 TTC, more than the 1,200.00 of the original,
    // refused once the box gave its rates (after C1h, before the invoice is opened on it).
    let other = post_invoice(addr, &api.key, &invoice("SALE-2")).await;
    let other_code = assert_certified(&other, "SALE-2", "FV");
    let certified = box_counters(&api);
    let quota = api.quota_used();
    let ht = post_invoice(
        addr,
        &api.key,
        &refund("AV-5", &other_code, "1100.00", "ht"),
    )
    .await;
    let desc = assert_refused_before_the_box(&api, &ht, 180, "AV-5", quota).await;
    assert!(
        desc.contains("de 1\u{202f}276,00\u{a0}CDF dépasse"),
        "the exact TTC: {desc}"
    );
    assert_eq!(
        box_counters(&api),
        certified,
        "nothing certified on the box"
    );
    // 1,000.00 HT is 1,160.00 TTC: it fits.
    let ht = post_invoice(
        addr,
        &api.key,
        &refund("AV-6", &other_code, "1000.00", "ht"),
    )
    .await;
    assert_certified(&ht, "AV-6", "FA");
    assert_eq!(ht.json["total"], "1160.00");

    // In English on request, the code and the field unchanged.
    let auth = format!("Bearer {}", api.key);
    let english = common::request(
        addr,
        "POST",
        "/api/v1/Invoice",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept-Language", "en"),
        ],
        Some(&serde_json::to_vec(&refund("AV-7", &other_code, "100.00", "ttc")).unwrap()),
    )
    .await;
    let error = common::assert_error(&english, 422, 180);
    let desc = error["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.contains("credit note") && desc.contains("40.00 CDF is left"),
        "{desc}"
    );
    // The next sale gets the next counters: nothing refused ever reached the box.
    let next = post_invoice(addr, &api.key, &invoice("SALE-3")).await;
    assert_certified(&next, "SALE-3", "FV");
    assert_eq!(counters_of(&next), (3, 6, "FV".into()));
}

#[tokio::test(flavor = "multi_thread")]
async fn two_credit_notes_of_one_original_sent_together_cannot_both_pass() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let original = post_invoice(addr, &api.key, &invoice("SALE-1")).await;
    let code = assert_certified(&original, "SALE-1", "FV");
    for round in 0..3 {
        // Two of 700.00 against what is left: one fits, not both. Sent at once, the second
        // is admitted while the first is on the box (its share is held) or after it.
        let (a, b) = (format!("AV-{round}-A"), format!("AV-{round}-B"));
        let (note_a, note_b) = (
            refund(&a, &code, "700.00", "ttc"),
            refund(&b, &code, "700.00", "ttc"),
        );
        let (first, second) = tokio::join!(
            post_invoice(addr, &api.key, &note_a),
            post_invoice(addr, &api.key, &note_b),
        );
        let statuses = [first.status, second.status];
        if round == 0 {
            // 1,200.00 left: exactly one of them.
            assert!(
                statuses.contains(&200) && statuses.contains(&422),
                "{}\n{}",
                first.body,
                second.body
            );
            let refused = if first.status == 422 { &first } else { &second };
            common::assert_error(refused, 422, 180);
        } else {
            // 500.00 left: neither.
            assert_eq!(statuses, [422, 422], "{}\n{}", first.body, second.body);
        }
    }
    // One credit note in all, on the box and in the register.
    assert_eq!(api.quota_used(), 2);
    assert_eq!(
        box_counters(&api),
        2,
        "the sale and one credit note on the box"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_organization_s_largest_invoice_total_is_kept_before_anything_is_sent() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    // None by default.
    let shown: Value = serde_json::from_str(&api.cli_ok(&["org", "show", "acme", "--json"]))
        .expect("org show --json");
    assert!(
        shown["organization"].get("max_invoice_total").is_none(),
        "{shown}"
    );
    let shown = api.cli_ok(&["org", "show", "acme"]);
    assert!(
        shown
            .lines()
            .any(|line| line.starts_with("Plafond ") && line.trim_end().ends_with(" aucun")),
        "{shown}"
    );

    // Set: shown by `org show` (people and scripts) and `org list`.
    api.cli_ok(&["org", "update", "acme", "--max-invoice-total", "1000"]);
    let shown = api.cli_ok(&["org", "show", "acme"]);
    assert!(shown.contains("1\u{202f}000,00\u{a0}CDF"), "{shown}");
    let shown: Value = serde_json::from_str(&api.cli_ok(&["org", "show", "acme", "--json"]))
        .expect("org show --json");
    assert_eq!(
        shown["organization"]["max_invoice_total"], "1000",
        "{shown}"
    );
    let listed = api.cli_ok(&["org", "list"]);
    assert!(
        listed.contains("PLAFOND/FACTURE") && listed.contains("1\u{202f}000,00\u{a0}CDF"),
        "{listed}"
    );
    // A value that is not an amount is refused, in French, and changes nothing.
    for bad in ["12,50", "-5", "0", "1000.001", "beaucoup"] {
        let option = format!("--max-invoice-total={bad}");
        let out =
            tokio::task::block_in_place(|| api.gateway.cli(&["org", "update", "acme", &option]));
        assert!(!out.status.success(), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("montant en CDF"), "{bad}: {stderr}");
    }

    // 1,200.00 is above it: refused before the box, no quota used.
    let quota = api.quota_used();
    let over = post_invoice(addr, &api.key, &invoice("BIG-1")).await;
    let desc = assert_refused_before_the_box(&api, &over, 181, "BIG-1", quota).await;
    assert!(
        desc.contains("(1\u{202f}200,00\u{a0}CDF)")
            && desc
                .contains("plafond par facture de cette organisation (1\u{202f}000,00\u{a0}CDF)"),
        "{desc}"
    );
    assert_eq!(box_counters(&api), 0, "nothing reached the box");
    // At the limit: certified.
    let mut at_limit = invoice("BIG-2");
    at_limit["items"][0]["price"] = json!("500.00");
    at_limit["payments"][0]["amount"] = json!("1000.00");
    let response = post_invoice(addr, &api.key, &at_limit).await;
    assert_certified(&response, "BIG-2", "FV");
    // An `ht` invoice of 900.00 HT is 1,044.00 TTC at the box's 16 %: refused with the exact
    // total, after C1h, before anything is opened on the box.
    let quota = api.quota_used();
    let mut ht = invoice("BIG-3");
    ht["mode"] = json!("ht");
    ht["items"][0]["price"] = json!("450.00");
    ht.as_object_mut().unwrap().remove("payments");
    let response = post_invoice(addr, &api.key, &ht).await;
    let desc = assert_refused_before_the_box(&api, &response, 181, "BIG-3", quota).await;
    assert!(desc.contains("(1\u{202f}044,00\u{a0}CDF)"), "{desc}");
    assert_eq!(box_counters(&api), 1, "only BIG-2 on the box");
    // A sandbox key keeps it too.
    let sandbox = api.issue_key(true);
    let response = post_invoice(addr, &sandbox, &invoice("BIG-4")).await;
    common::assert_error(&response, 422, 181);

    // Removed: any total again.
    api.cli_ok(&["org", "update", "acme", "--no-max-invoice-total"]);
    let response = post_invoice(addr, &api.key, &invoice("BIG-1")).await;
    let big = assert_certified(&response, "BIG-1", "FV");
    assert_eq!(counters_of(&response), (2, 2, "FV".into()));

    // Lowered again below that invoice: its full refund is still certified (a credit note of
    // an original in this register is bounded by that original, code 180, not by 181),
    // while a credit note of an unknown original keeps the limit.
    api.cli_ok(&["org", "update", "acme", "--max-invoice-total", "1000"]);
    let refund_all =
        post_invoice(addr, &api.key, &refund("BIG-AV-1", &big, "1200.00", "ttc")).await;
    assert_certified(&refund_all, "BIG-AV-1", "FA");
    let quota = api.quota_used();
    let unknown = refund("BIG-AV-2", "ABCDEFGHIJKLMNOPQRSTUVWX", "1200.00", "ttc");
    let response = post_invoice(addr, &api.key, &unknown).await;
    assert_refused_before_the_box(&api, &response, 181, "BIG-AV-2", quota).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reference_in_lower_case_is_not_a_codedefdgi() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let original = post_invoice(addr, &api.key, &invoice("SALE-1")).await;
    let code = assert_certified(&original, "SALE-1", "FV");
    // The same code in lower case would miss the original in the register (and its credit
    // notes would not be counted against it): refused as not a codeDEFDGI, nothing sent.
    let quota = api.quota_used();
    let lower = refund("AV-1", &code.to_lowercase(), "1200.00", "ttc");
    let response = post_invoice(addr, &api.key, &lower).await;
    let error = common::assert_error(&response, 400, 20);
    assert_eq!(error["field"], "reference", "{}", response.body);
    assert_eq!(api.quota_used(), quota);
    assert_eq!(box_counters(&api), 1, "only the sale on the box");
    // In capitals it is the original's: the whole of it, then nothing more.
    let upper = post_invoice(addr, &api.key, &refund("AV-1", &code, "1200.00", "ttc")).await;
    assert_certified(&upper, "AV-1", "FA");
    let more = post_invoice(addr, &api.key, &refund("AV-2", &code, "1.00", "ttc")).await;
    common::assert_error(&more, 422, 180);
}
