//! Tests of parsing and validation: `parse` (body reading), `rules` (one case per rule),
//! `digest` (canonical form), `totals` (the invoice's totals). Helpers shared with the
//! channels' tests (`certify/box_channel/commands/tests.rs`).

use serde_json::{json, Value};

use super::{validate, Seller, ValidInvoice, ValidationError, WireCheck};
use crate::certify::invoice::request::parse_body;

pub(crate) mod cases;
mod digest;
mod parse;
mod rules;
mod totals;

/// The seller of the examples (the simulator's default NIF).
pub(crate) fn seller() -> Seller {
    Seller {
        nif: "A1234567B".into(),
        isf: "ISF01".into(),
    }
}

/// A seed-like reference example: every scalar a string, FV, ttc, group B, client PM,
/// ESPECES, CDF with curRate "-1".
pub(crate) const REFERENCE: &str = r#"{
    "nif": "A1234567B",
    "rn": "FC0002",
    "mode": "ttc",
    "isF": "ISF01",
    "type": "FV",
    "curCode": "CDF",
    "curDate": "2026-02-28T17:05:06.568Z",
    "curRate": "-1",
    "items": [
        {
            "code": "LR 1515",
            "name": "STYLO BIC",
            "type": "BIE",
            "price": "600.00",
            "quantity": "2.0",
            "taxGroup": "B",
            "taxSpecificValue": "0.00%",
            "taxSpecificAmount": "0.00",
            "originalPrice": "600.00",
            "priceModification": ""
        },
        {
            "code": " ---DEEE",
            "name": "MAIN D'OEUVRE",
            "type": "SER",
            "price": "30.00",
            "quantity": "1.0",
            "taxGroup": "B",
            "taxSpecificValue": "0.00%",
            "taxSpecificAmount": "0.0",
            "originalPrice": "30.00",
            "priceModification": ""
        }
    ],
    "client": {
        "nif": "A000000A",
        "type": "PM",
        "typeDesc": "Personne morale",
        "name": "DUPONT",
        "contact": "+330562380000",
        "address": "25 rue du taur 31850 MONTRABE"
    },
    "payments": [
        { "name": "ESPECES", "amount": "1230.00", "curCode": "CDF", "curRate": "-1" }
    ],
    "operator": { "id": "01", "name": "ADMIN" }
}"#;

/// The reference example as a JSON value to mutate.
pub(crate) fn reference() -> Value {
    serde_json::from_str(REFERENCE).unwrap()
}

/// No wire: the invoice's own rules only (the box's frames are tested with them in
/// `certify/box_channel/commands.rs`).
pub(crate) fn no_wire(_: &ValidInvoice, _: &Seller) -> Result<(), ValidationError> {
    Ok(())
}

/// Parses and validates a body, with the wire's check.
pub(crate) fn check_with(body: &[u8], wire: WireCheck) -> Result<ValidInvoice, ValidationError> {
    validate(parse_body(body)?, &seller(), wire)
}

/// Parses and validates a body.
fn check(body: &[u8]) -> Result<ValidInvoice, ValidationError> {
    check_with(body, no_wire)
}

/// Parses and validates a JSON value.
fn check_value(value: &Value) -> Result<ValidInvoice, ValidationError> {
    check(serde_json::to_string(value).unwrap().as_bytes())
}

/// The error of a JSON value that must be refused.
fn refused(value: &Value) -> ValidationError {
    match check_value(value) {
        Ok(invoice) => panic!("accepted: {value}\n{invoice:?}"),
        Err(error) => error,
    }
}

/// A minimal valid body with the given items (and nothing optional).
pub(crate) fn with_items(mode: &str, items: Value) -> Value {
    json!({
        "rn": "T-1",
        "mode": mode,
        "type": "FV",
        "items": items,
        "operator": { "name": "ADMIN" }
    })
}
