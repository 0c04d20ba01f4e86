use std::time::{Duration, Instant};

use chrono::NaiveDate;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

use super::*;
use crate::edef::state::Signer;

const NIF: &str = "A1234567B";

fn rates() -> Rates {
    mcf_sfe::types::dgi_rates()
}

fn group(letter: char) -> usize {
    TaxGroup::from_letter(letter).unwrap().index()
}

/// An FV request with `items`, and `extra` members over the defaults.
fn request(mode: &str, items: Value, extra: Value) -> Vec<u8> {
    let mut body = json!({
        "nif": NIF, "rn": "F-001", "mode": mode, "isf": "X", "type": "FV",
        "items": items,
        "client": {"type": "PP", "name": "Client"},
        "operator": {"id": "1", "name": "Op"},
        "payment": [{"name": "ESPECES", "amount": 100}],
        "cmta": "ignored", "futureField": {"nested": true}
    });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    serde_json::to_vec(&body).unwrap()
}

fn calc(body: &[u8], state: &EmcfState) -> Result<Calculation, DgiError> {
    let rates = rates();
    calculate(
        body,
        &Checks {
            nif: NIF,
            rates: &rates,
            state,
        },
    )
}

fn ok(body: &[u8]) -> Calculation {
    calc(body, &EmcfState::default()).unwrap()
}

fn code(body: &[u8], state: &EmcfState) -> u16 {
    calc(body, state).unwrap_err().code()
}

fn item(group: &str, price: Value, quantity: Value) -> Value {
    json!({"code": "X1", "type": "BIE", "name": "Article", "price": price,
           "quantity": quantity, "taxGroup": group})
}

#[test]
fn ht_mode_adds_vat_per_group() {
    let items = json!([
        item("B", json!("600.00"), json!(2)),
        item("c", json!("33.33"), json!(3)),
        item("A", json!(10), json!(1)),
    ]);
    let c = ok(&request("ht", items, json!({})));
    assert_eq!(c.invoice_type, InvoiceType::Fv);
    assert_eq!(c.ht[group('B')], dec!(1200.00));
    assert_eq!(c.vat[group('B')], dec!(192.00));
    assert_eq!(c.ttc[group('B')], dec!(1392.00));
    assert_eq!(c.ht[group('C')], dec!(99.99));
    assert_eq!(c.vat[group('C')], dec!(5.00));
    assert_eq!(c.ttc[group('A')], dec!(10));
    assert_eq!(c.rates[group('B')], dec!(16));
    assert_eq!(c.rates[group('A')], dec!(0));
    assert_eq!(c.total, dec!(1506.99));
    assert_eq!(c.vat_total, dec!(197.00));
    assert_eq!(c.foreign_total, None);
}

#[test]
fn ttc_mode_extracts_the_vat() {
    let c = ok(&request(
        "TTC",
        json!([item("B", json!(600), json!(2))]),
        json!({}),
    ));
    assert_eq!(c.ttc[group('B')], dec!(1200.00));
    assert_eq!(c.vat[group('B')], dec!(165.52));
    assert_eq!(c.ht[group('B')], dec!(1034.48));
    assert_eq!(c.total, dec!(1200));
    assert_eq!(c.vat_total, dec!(165.52));
}

#[test]
fn numbers_as_strings_compute_the_same_and_exactly() {
    let as_numbers = br#"{"nif":"A1234567B","rn":"1","mode":"ht","type":"FV",
        "items":[{"type":"SER","name":"x","price":0.1,"quantity":3,"taxGroup":"B"}]}"#;
    let as_strings = br#"{"nif":"A1234567B","rn":"1","mode":"ht","type":"FV",
        "items":[{"type":"SER","name":"x","price":"0.10","quantity":"3","taxGroup":"B"}]}"#;
    let a = ok(as_numbers);
    assert_eq!(a, ok(as_strings));
    assert_eq!(a.ht[group('B')], dec!(0.30));
    assert_eq!(a.vat[group('B')], dec!(0.05));
    assert_eq!(a.total, dec!(0.35));
}

#[test]
fn specific_taxes_go_to_ts_and_foreign_total_is_computed() {
    let mut line = item("E", json!(1000), json!(1));
    line["taxSpecificValue"] = json!(10);
    line["taxSpecificAmount"] = json!("100.004");
    let c = ok(&request(
        "ttc",
        json!([line]),
        json!({"curCode": "USD", "curRate": 2850}),
    ));
    assert_eq!(c.specific_tax, dec!(100.00));
    assert_eq!(c.total, dec!(1100.00));
    assert_eq!(c.foreign_total, Some(dec!(0.39)));
    let cdf = ok(&request(
        "ttc",
        json!([item("E", json!(1), json!(1))]),
        json!({"curCode": "CDF", "curRate": -1}),
    ));
    assert_eq!(cdf.foreign_total, None);
}

#[test]
fn the_answer_writes_every_group_with_exact_digits() {
    let c = ok(&request(
        "ht",
        json!([item("B", json!("600.00"), json!(2))]),
        json!({}),
    ));
    let text = c.answer("u-1", NumberStyle::Number);
    assert!(
        text.starts_with(r#"{"uid":"u-1","ta":0,"tb":16,"tc":5,"#),
        "{text}"
    );
    for fragment in [
        r#""tab":1392.00"#,
        r#""hab":1200.00"#,
        r#""vab":192.00"#,
        r#""vap":0.00"#,
        r#""ts":0.00,"total":1392.00,"vtotal":192.00,"errorCode":null,"errorDesc":null}"#,
    ] {
        assert!(text.contains(fragment), "{fragment} not in {text}");
    }
    let parsed: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed.len(), 1 + 16 * 4 + 3 + 2);
    let strings = c.answer("u-1", NumberStyle::Text);
    assert!(strings.contains(r#""tb":"16""#) && strings.contains(r#""total":"1392.00""#));
}

#[test]
fn refusals_carry_the_benin_codes() {
    let state = EmcfState::default();
    let good = || json!([item("B", json!(1), json!(1))]);
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (request("ht", good(), json!({"type": "XX"})), 3),
        (request("ht", good(), json!({"type": "FA"})), 4),
        (
            request("ht", good(), json!({"type": "FA", "reference": "SHORT"})),
            5,
        ),
        (
            request("ht", good(), json!({"payment": [{"name": "BITCOIN"}]})),
            7,
        ),
        (request("ht", json!([]), json!({})), 8),
        (request("ht", Value::Null, json!({})), 8),
        (
            request("ht", json!([item("Z", json!(1), json!(1))]), json!({})),
            9,
        ),
        (
            request("ht", json!([item("BB", json!(1), json!(1))]), json!({})),
            9,
        ),
        (
            request(
                "ht",
                json!([{"type": "TAX", "name": "t", "price": 1, "quantity": 1, "taxGroup": "B"}]),
                json!({}),
            ),
            9,
        ),
        (
            request(
                "ht",
                good(),
                json!({"type": "FA", "reference": "ABCDEFGHIJKLMNOPQRSTUVWX"}),
            ),
            11,
        ),
        (request("xx", good(), json!({})), 99),
        (request("ht", good(), json!({"nif": "B0000000Z"})), 99),
        (
            request("ht", json!([item("B", json!(1), json!(-2))]), json!({})),
            99,
        ),
        (
            request("ht", json!([item("B", json!(-1), json!(2))]), json!({})),
            99,
        ),
        (
            request("ht", json!([item("B", json!("1,5"), json!(2))]), json!({})),
            99,
        ),
        (request("ht", good(), json!({"client": {"type": "XX"}})), 99),
        (request("ht", good(), json!({"rn": ""})), 99),
        (b"{not json".to_vec(), 99),
    ];
    for (body, expected) in cases {
        assert_eq!(
            code(&body, &state),
            expected,
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    let error = calc(&request("ht", good(), json!({"nif": "B0000000Z"})), &state).unwrap_err();
    assert!(error.to_string().contains("B0000000Z"), "{error}");
    let error = calc(
        &request("ht", json!([item("B", json!("abc"), json!(1))]), json!({})),
        &state,
    )
    .unwrap_err();
    assert!(error.to_string().contains("items[0].price"), "{error}");
}

#[test]
fn credit_notes_need_a_finalized_original_and_stay_within_its_total() {
    let mut state = EmcfState::default();
    let original = ok(&request(
        "ttc",
        json!([item("B", json!(100), json!(1))]),
        json!({}),
    ));
    let uid = state.add_pending(original, Instant::now(), Duration::from_secs(60), "s");
    let signer = Signer {
        nim: "NIM",
        signing_key: "key",
    };
    let at = NaiveDate::from_ymd_opt(2026, 1, 2)
        .and_then(|d| d.and_hms_opt(3, 4, 5))
        .unwrap();
    let code_def = state.finalize(&uid, signer, at).unwrap().code_def;

    let credit = |price: i64, reference: &str| {
        request(
            "ttc",
            json!([item("B", json!(price), json!(1))]),
            json!({"type": "FA", "reference": reference, "referenceType": "RAM"}),
        )
    };
    let c = calc(&credit(60, &code_def.to_lowercase()), &state).unwrap();
    assert_eq!(c.reference.as_deref(), Some(code_def.as_str()));
    assert_eq!(code(&credit(101, &code_def), &state), 12);
    // EA cannot credit an FV.
    let ea = request(
        "ttc",
        json!([item("B", json!(1), json!(1))]),
        json!({"type": "EA", "reference": code_def}),
    );
    assert_eq!(code(&ea, &state), 11);
    let bad_kind = request(
        "ttc",
        json!([item("B", json!(1), json!(1))]),
        json!({"type": "FA", "reference": code_def, "referenceType": "XXX"}),
    );
    assert_eq!(code(&bad_kind, &state), 99);

    // A first credit note of 60 leaves 40.
    let uid = state.add_pending(c, Instant::now(), Duration::from_secs(60), "s");
    state.finalize(&uid, signer, at).unwrap();
    assert_eq!(code(&credit(41, &code_def), &state), 12);
    assert!(calc(&credit(40, &code_def), &state).is_ok());
}
