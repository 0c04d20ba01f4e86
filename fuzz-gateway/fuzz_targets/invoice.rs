//! Fuzzes the invoice body of `POST /api/v1/Invoice` as the gateway reads it:
//! `certify::invoice::request::parse_body` then `certify::invoice::validate` with the box's
//! frames (`certify::check_frames`), as the service validates it.
//!
//! Input layout: `[mode, rest...]`.
//! - `mode` even: `rest` is the body, raw bytes (depth bombs, broken UTF-8, broken JSON...).
//! - `mode` odd: `rest` drives up to 12 edits of a valid invoice (set a field of the schema to
//!   a value from a hostile palette or to fuzzer text, delete it, add an unknown field, add
//!   lines); the edited invoice is checked written compactly and pretty-printed, and both
//!   must give the same answer (whitespace means nothing in JSON).
//!
//! What must hold for every body:
//! - no panic, no abort, and the same answer twice (validation is a pure function);
//! - a refusal has a documented code (`validate::code::ALL`; `parse_body` only codes 1 to 6),
//!   a non-empty message and, when it names a field, a non-empty JSON path (but for an
//!   unknown or repeated key, which may be `""`);
//! - an accepted invoice is one the device can take: `rn` passes the device's FN rule, at
//!   least one line, every command (C3h, C0h, 31h with any VAT rate up to 100 %, 36h, 35h,
//!   written by `certify::box_commands`) encodes within one frame, the digest is the SHA-256
//!   of the canonical form, which is JSON, and the totals at any rates never panic (checked
//!   arithmetic).
#![no_main]

use emcf_gateway::certify::box_commands::{
    client_command, comment_command, item_command, open_command, payment_command, payment_commands,
    subtotal_of,
};
use emcf_gateway::certify::check_frames;
use emcf_gateway::certify::invoice::request::{
    parse_body, CLIENT_FIELDS, ITEM_FIELDS, OPERATOR_FIELDS, PAYMENT_FIELDS, TOP_FIELDS,
};
use emcf_gateway::certify::invoice::{
    code, validate, Seller, TaxGroup, ValidInvoice, ValidationError,
};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcf_sfe::command::{check_rn, Command};
use mcf_sfe::wire::MAX_REQUEST_DATA;
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

fn seller() -> Seller {
    Seller {
        nif: "A1234567B".into(),
        isf: "ISF-1".into(),
    }
}

/// What the gateway answers to a body, as far as validation goes.
fn answer(body: &[u8]) -> Result<ValidInvoice, ValidationError> {
    let request = parse_body(body);
    if let Err(error) = &request {
        assert!(
            (1..=6).contains(&error.code),
            "parse_body refused with code {} (it only reads the body): {error:?}",
            error.code
        );
    }
    validate(request?, &seller(), check_frames)
}

fn check_refusal(error: &ValidationError) {
    assert!(
        code::ALL.contains(&error.code),
        "undocumented code {}: {error:?}",
        error.code
    );
    assert!(!error.to_string().trim().is_empty(), "{error:?}");
    if let Some(field) = &error.field {
        // An unknown or repeated key may be the empty string: `{"": 1}` names field "".
        let key_named = matches!(error.code, code::UNKNOWN_FIELD | code::DUPLICATE_FIELD);
        assert!(
            key_named || !field.is_empty(),
            "empty field path: {error:?}"
        );
    }
}

fn fits(command: &Command) {
    let data = command.encode().unwrap_or_else(|e| {
        panic!("an accepted invoice's command does not encode: {e} {command:?}")
    });
    assert!(data.len() <= MAX_REQUEST_DATA, "{command:?}");
}

fn check_accepted(invoice: &ValidInvoice) {
    let seller = seller();
    check_rn(&invoice.rn).expect("an accepted rn passes the device's FN rule");
    assert!(!invoice.items.is_empty(), "accepted without lines");
    fits(&Command::SetClient(client_command(&invoice.client)));
    fits(&Command::OpenInvoice(open_command(invoice, &seller)));
    let rates = [
        None,
        Some(Decimal::ZERO),
        Some(Decimal::new(16, 0)),
        Some(Decimal::ONE_HUNDRED),
    ];
    for item in &invoice.items {
        for rate in rates {
            fits(&Command::Item(item_command(item, rate)));
        }
    }
    for comment in &invoice.comments {
        fits(&Command::Comment(comment_command(comment)));
    }
    for payment in &invoice.payments {
        fits(&Command::Payment(payment_command(payment)));
    }
    let _ = invoice.payments_total();
    assert_eq!(invoice.digest.len(), 64);
    assert_eq!(
        invoice.digest,
        format!("{:x}", Sha256::digest(invoice.canonical.as_bytes())),
        "digest is not the SHA-256 of the canonical form"
    );
    serde_json::from_str::<Value>(&invoice.canonical).expect("the canonical form is JSON");
    for rate in rates {
        let table = [rate; TaxGroup::COUNT];
        if let Some(subtotal) = invoice
            .expected_totals(&table)
            .and_then(|t| subtotal_of(&t))
        {
            let _ = subtotal.finalize_totals();
            for payment in payment_commands(invoice, subtotal.total) {
                let _ = Command::Payment(payment).encode();
            }
        }
    }
}

/// Checks one body; returns the answer for comparisons.
fn check(body: &[u8]) -> Result<ValidInvoice, ValidationError> {
    let first = answer(body);
    assert_eq!(first, answer(body), "two answers to the same body");
    match &first {
        Ok(invoice) => check_accepted(invoice),
        Err(error) => check_refusal(error),
    }
    first
}

/// A valid invoice of every part the schema has.
fn template() -> Value {
    json!({
        "nif": "A1234567B", "rn": "F-1", "mode": "ttc", "isF": "ISF-1", "type": "FV",
        "curCode": "CDF", "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00",
             "quantity": "2", "taxGroup": "B", "taxSpecificValue": "5.00%",
             "taxSpecificAmount": "60.00", "originalPrice": "700.00",
             "priceModification": "REMISE"},
            {"name": "SERVICE", "type": "SER", "price": 1500.5, "quantity": 1.25, "taxGroup": "A"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "typeDesc": "Personne morale",
                   "name": "CLIENT SARL", "contact": "+243 810 000 001",
                   "address": "Gombe, Kinshasa", "email": "a@b.cd", "rccm": "CD/KIN/1"},
        "payments": [{"name": "ESPECES", "amount": "1200.00", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "1", "name": "Caisse 1"},
        "cmta": "Merci", "cmth": "A bientot"
    })
}

/// Hostile and boundary texts; the fuzzer's own text is added to these.
const TEXTS: &[&str] = &[
    "",
    " ",
    "   ",
    "0",
    "-0",
    "-1",
    "1",
    "0.001",
    "0.005",
    "12.345",
    "600.00",
    "1e3",
    "+5",
    "12,50",
    " 1",
    "1_000",
    "NaN",
    "Infinity",
    "999999999999999.99",
    "1000000000000000",
    "79228162514264337593543950335",
    "0.0000000000000000000000000001",
    "5%",
    "5.00%",
    "-5.00%",
    "100%",
    "ht",
    "ttc",
    "TTC",
    "FV",
    "FT",
    "FA",
    "EV",
    "ET",
    "EA",
    "FX",
    "CDF",
    "USD",
    "EUR",
    "2026-02-28",
    "2026-02-30",
    "28/02/2026",
    "2026-02-28T17:05:06.568Z",
    "ABCDEFGHIJKLMNOPQRSTUVWX",
    "ABCDEFGHIJKLMNOPQRSTUVW,",
    "COR",
    "RAN",
    "ANN",
    "BIE",
    "SER",
    "TAX",
    "bie",
    "A",
    "P",
    "Q",
    "ESPECES",
    "CASH",
    "A1234567B",
    "ISF-1",
    "F,1",
    "F&1",
    "<>",
    "^x41;",
    "é",
    "\u{1F600}",
    "\t",
    "\u{0}",
    "\r\n",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
];

fn text(u: &mut Unstructured<'_>) -> String {
    match u.int_in_range(0..=3u8).unwrap_or(0) {
        0 => (*u.choose(TEXTS).unwrap_or(&"")).to_string(),
        1 => u.arbitrary::<String>().unwrap_or_default(),
        2 => {
            // A long text of one repeated piece: frame and length limits.
            let piece = *u.choose(&["X", "é", ",", "&", "^", " "]).unwrap_or(&"X");
            piece.repeat(u.int_in_range(0..=300usize).unwrap_or(0))
        }
        _ => format!(
            "{}{}",
            u.choose(TEXTS).unwrap_or(&""),
            u.arbitrary::<String>().unwrap_or_default()
        ),
    }
}

fn value(u: &mut Unstructured<'_>, depth: u32) -> Value {
    match u.int_in_range(0..=9u8).unwrap_or(0) {
        0..=3 => Value::String(text(u)),
        4 => Value::Null,
        5 => Value::Bool(u.arbitrary().unwrap_or(false)),
        6 => {
            // A JSON number from its text (integers, decimals, exponents, huge).
            let t = text(u);
            serde_json::from_str::<Value>(&t)
                .ok()
                .filter(Value::is_number)
                .unwrap_or_else(|| json!(u.arbitrary::<i64>().unwrap_or(0)))
        }
        7 => json!(u
            .arbitrary::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .unwrap_or(0.5)),
        8 if depth < 3 => Value::Array(
            (0..u.int_in_range(0..=3u8).unwrap_or(0))
                .map(|_| value(u, depth + 1))
                .collect(),
        ),
        _ if depth < 3 => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3u8).unwrap_or(0) {
                map.insert(text(u), value(u, depth + 1));
            }
            Value::Object(map)
        }
        _ => Value::String(text(u)),
    }
}

/// An object of the body to edit, and its schema's field names.
fn target<'a>(
    u: &mut Unstructured<'_>,
    body: &'a mut Value,
) -> Option<(&'a mut Map<String, Value>, &'static [&'static str])> {
    let which = u.int_in_range(0..=4u8).ok()?;
    let (slot, fields): (&mut Value, &'static [&'static str]) = match which {
        0 => (body, TOP_FIELDS),
        1 => {
            let len = body["items"].as_array().map_or(0, Vec::len);
            let at = u.int_in_range(0..=len.max(1) - 1).ok()?;
            (body.get_mut("items")?.get_mut(at)?, ITEM_FIELDS)
        }
        2 => (body.get_mut("client")?, CLIENT_FIELDS),
        3 => {
            let len = body["payments"].as_array().map_or(0, Vec::len);
            let at = u.int_in_range(0..=len.max(1) - 1).ok()?;
            (body.get_mut("payments")?.get_mut(at)?, PAYMENT_FIELDS)
        }
        _ => (body.get_mut("operator")?, OPERATOR_FIELDS),
    };
    Some((slot.as_object_mut()?, fields))
}

fn edit(u: &mut Unstructured<'_>, body: &mut Value) {
    match u.int_in_range(0..=5u8).unwrap_or(0) {
        0..=2 => {
            let v = value(u, 0);
            if let Some((object, fields)) = target(u, body) {
                if let Ok(name) = u.choose(fields) {
                    object.insert((*name).to_string(), v);
                }
            }
        }
        3 => {
            if let Some((object, fields)) = target(u, body) {
                if let Ok(name) = u.choose(fields) {
                    object.remove(*name);
                }
            }
        }
        4 => {
            let name = text(u);
            let v = value(u, 0);
            if let Some((object, _)) = target(u, body) {
                object.insert(name, v);
            }
        }
        _ => {
            // More lines or payments: copies of the first (up to 96 in all: sums and totals).
            let copies = u.int_in_range(1..=8usize).unwrap_or(1);
            let key = if u.arbitrary().unwrap_or(true) {
                "items"
            } else {
                "payments"
            };
            if let Some(list) = body.get_mut(key).and_then(Value::as_array_mut) {
                if let Some(first) = list.first().cloned() {
                    list.extend(std::iter::repeat_n(first, copies));
                }
            }
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let _ = check(rest);
        return;
    }
    let mut u = Unstructured::new(rest);
    let mut body = template();
    for _ in 0..u.int_in_range(0..=12u8).unwrap_or(0) {
        edit(&mut u, &mut body);
    }
    let compact = serde_json::to_vec(&body).expect("serializes");
    let pretty = serde_json::to_vec_pretty(&body).expect("serializes");
    let a = check(&compact);
    let b = check(&pretty);
    match (&a, &b) {
        (Ok(x), Ok(y)) => assert_eq!(x, y, "whitespace changed the accepted invoice"),
        (Err(x), Err(y)) => assert_eq!(
            (x.code, &x.field),
            (y.code, &y.field),
            "whitespace changed the refusal"
        ),
        _ => panic!("whitespace changed the answer: compact {a:?}, pretty {b:?}"),
    }
});
