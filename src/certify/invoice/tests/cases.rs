//! The rule table: one change of the reference example per rule (at least), with the code
//! and field it must be refused with.

use serde_json::{json, Value};

use crate::certify::invoice::code;

/// A valid codeDEFDGI shape.
pub(crate) const DEF: &str = "4B2RQ5DXMT4N4AODOS5H4YXR";

type Change = fn(&mut Value);

/// (change to the reference example, expected code, expected field).
#[rustfmt::skip]
pub(super) fn cases() -> Vec<(Change, u16, Option<&'static str>)> {
    vec![
        (|v| drop(v.as_object_mut().unwrap().remove("rn")), code::RN_EMPTY, Some("rn")),
        (|v| v["rn"] = json!(""), code::RN_EMPTY, Some("rn")),
        (|v| v["rn"] = json!("   "), code::RN_EMPTY, Some("rn")),
        (|v| v["rn"] = json!("F,1"), code::RN_INVALID, Some("rn")),
        (|v| v["rn"] = json!("X".repeat(25)), code::RN_INVALID, Some("rn")),
        (|v| v["mode"] = json!("TTC"), code::MODE_INVALID, Some("mode")),
        (|v| drop(v.as_object_mut().unwrap().remove("mode")), code::MISSING_FIELD, Some("mode")),
        (|v| v["type"] = json!("FX"), code::TYPE_INVALID, Some("type")),
        (|v| v["type"] = Value::Null, code::MISSING_FIELD, Some("type")),
        (|v| v["nif"] = json!("B7654321A"), code::NIF_MISMATCH, Some("nif")),
        (|v| v["isF"] = json!("ISF02"), code::ISF_MISMATCH, Some("isF")),
        (|v| v["curCode"] = json!("EUR"), code::CURRENCY_INVALID, Some("curCode")),
        (|v| v["curRate"] = json!("2500"), code::CDF_RATE_INVALID, Some("curRate")),
        (|v| v["curDate"] = json!("28/02/2026"), code::CUR_DATE_INVALID, Some("curDate")),
        (|v| usd(v, Some("-1"), Some("2026-02-28")), code::USD_RATE_INVALID, Some("curRate")),
        (|v| usd(v, Some("2500.12345"), Some("2026-02-28")), code::USD_RATE_INVALID, Some("curRate")),
        (|v| usd(v, None, Some("2026-02-28")), code::USD_RATE_INVALID, Some("curRate")),
        (|v| usd(v, Some("2500"), None), code::CUR_DATE_INVALID, Some("curDate")),
        (|v| usd(v, Some("2500"), Some("2026-02-30")), code::CUR_DATE_INVALID, Some("curDate")),
        (|v| v["type"] = json!("FA"), code::REFERENCE_MISSING, Some("reference")),
        (|v| credit(v, "EA", "SHORT", None), code::REFERENCE_INVALID, Some("reference")),
        (|v| credit(v, "FA", "4B2RQ5DXMT4N4AODOS5H4YX,", None), code::REFERENCE_INVALID, Some("reference")),
        (|v| credit(v, "FA", DEF, Some("ANN")), code::REFERENCE_TYPE_INVALID, Some("referenceType")),
        (|v| v["reference"] = json!(DEF), code::REFERENCE_NOT_ALLOWED, Some("reference")),
        (|v| v["referenceType"] = json!("COR"), code::REFERENCE_NOT_ALLOWED, Some("referenceType")),
        (|v| v["operator"]["name"] = json!(" "), code::OPERATOR_NAME_EMPTY, Some("operator.name")),
        (|v| drop(v.as_object_mut().unwrap().remove("operator")), code::MISSING_FIELD, Some("operator")),
        (|v| v["client"]["typeDesc"] = json!("x".repeat(201)), code::TYPE_DESC_TOO_LONG, Some("client.typeDesc")),
        (|v| v["items"] = json!([]), code::NO_ITEMS, Some("items")),
        (|v| drop(v.as_object_mut().unwrap().remove("items")), code::NO_ITEMS, Some("items")),
        (|v| v["items"][1]["name"] = json!(""), code::ITEM_NAME_EMPTY, Some("items[1].name")),
        (|v| v["items"][0]["type"] = json!("bie"), code::ITEM_TYPE_INVALID, Some("items[0].type")),
        (|v| v["items"][0]["taxGroup"] = json!("Q"), code::TAX_GROUP_INVALID, Some("items[0].taxGroup")),
        (|v| v["items"][0]["taxGroup"] = json!("BB"), code::TAX_GROUP_INVALID, Some("items[0].taxGroup")),
        (|v| v["items"][0]["taxGroup"] = json!(""), code::MISSING_FIELD, Some("items[0].taxGroup")),
        (|v| v["items"][1]["price"] = json!("-30.00"), code::PRICE_NEGATIVE, Some("items[1].price")),
        (|v| v["items"][1]["price"] = json!("30.001"), code::PRICE_TOO_PRECISE, Some("items[1].price")),
        (|v| v["items"][1]["price"] = json!(""), code::MISSING_FIELD, Some("items[1].price")),
        (|v| v["items"][0]["quantity"] = json!("0"), code::QUANTITY_NOT_POSITIVE, Some("items[0].quantity")),
        (|v| v["items"][0]["quantity"] = json!("-1"), code::QUANTITY_NOT_POSITIVE, Some("items[0].quantity")),
        (|v| v["items"][0]["quantity"] = json!("1.2345"), code::QUANTITY_TOO_PRECISE, Some("items[0].quantity")),
        (|v| v["items"][0]["taxSpecificValue"] = json!("5"), code::SPECIFIC_VALUE_INVALID, Some("items[0].taxSpecificValue")),
        (|v| v["items"][0]["taxSpecificValue"] = json!("-5%"), code::SPECIFIC_VALUE_INVALID, Some("items[0].taxSpecificValue")),
        (|v| v["items"][0]["taxSpecificAmount"] = json!("-1"), code::SPECIFIC_AMOUNT_INVALID, Some("items[0].taxSpecificAmount")),
        (|v| v["items"][0]["taxSpecificAmount"] = json!("0.001"), code::SPECIFIC_AMOUNT_INVALID, Some("items[0].taxSpecificAmount")),
        (|v| specific(v, "5.00%", Some("61.00")), code::SPECIFIC_TAX_INCOHERENT, Some("items[0].taxSpecificAmount")),
        (|v| specific(v, "5.00%", None), code::SPECIFIC_TAX_INCOHERENT, Some("items[0].taxSpecificAmount")),
        (|v| specific(v, "0%", Some("1.00")), code::SPECIFIC_TAX_INCOHERENT, Some("items[0].taxSpecificAmount")),
        (|v| v["items"][0]["originalPrice"] = json!("-600"), code::ORIGINAL_PRICE_INVALID, Some("items[0].originalPrice")),
        (|v| v["items"][0]["originalPrice"] = json!("600.005"), code::ORIGINAL_PRICE_INVALID, Some("items[0].originalPrice")),
        (|v| v["items"][0]["originalPrice"] = json!("700.00"), code::PRICE_CHANGE_INCOHERENT, Some("items[0].priceModification")),
        (|v| {
            v["items"][0]["originalPrice"] = Value::Null;
            v["items"][0]["priceModification"] = json!("remise");
        }, code::PRICE_CHANGE_INCOHERENT, Some("items[0].originalPrice")),
        (|v| v["items"][0]["price"] = json!("1000000000000000.00"), code::AMOUNT_OUT_OF_RANGE, Some("items[0].price")),
        (|v| v["items"][0]["quantity"] = json!("10000000000000"), code::AMOUNT_OUT_OF_RANGE, Some("items[0]")),
        (|v| v["payments"][0]["name"] = json!("CASH"), code::PAYMENT_METHOD_INVALID, Some("payments[0].name")),
        (|v| v["payments"][0]["name"] = json!("especes"), code::PAYMENT_METHOD_INVALID, Some("payments[0].name")),
        (|v| v["payments"][0]["amount"] = json!("0"), code::PAYMENT_NOT_POSITIVE, Some("payments[0].amount")),
        (|v| v["payments"][0]["amount"] = json!("1230.001"), code::PAYMENT_TOO_PRECISE, Some("payments[0].amount")),
        (|v| v["payments"][0]["amount"] = Value::Null, code::MISSING_FIELD, Some("payments[0].amount")),
        (|v| v["payments"][0]["curCode"] = json!("EUR"), code::PAYMENT_CURRENCY_INVALID, Some("payments[0].curCode")),
        (|v| v["payments"][0]["curRate"] = json!("2500"), code::PAYMENT_RATE_INVALID, Some("payments[0].curRate")),
        (|v| v["payments"][0]["curCode"] = json!("USD"), code::PAYMENT_RATE_INVALID, Some("payments[0].curRate")),
        (|v| {
            let big = json!({"name": "AUTRE", "amount": "999999999999999.99"});
            v["payments"] = json!([big.clone(), big]);
        }, code::AMOUNT_OUT_OF_RANGE, Some("payments[1].amount")),
        (|v| v["client"]["name"] = json!("DU\tPONT"), code::CONTROL_CHARACTER, Some("client.name")),
        (|v| v["items"][1]["code"] = json!("A\u{0}"), code::CONTROL_CHARACTER, Some("items[1].code")),
        (|v| v["cmta"] = json!("bell\u{7}"), code::CONTROL_CHARACTER, Some("cmta")),
        // Line breaks too (1.6.0): in every text of the body, with its exact path.
        (|v| v["client"]["name"] = json!("DUPONT\nNom HONEST SARL"), code::CONTROL_CHARACTER, Some("client.name")),
        (|v| v["cmtc"] = json!("a\r\nb"), code::CONTROL_CHARACTER, Some("cmtc")),
        (|v| v["items"][1]["name"] = json!("x\u{1b}[2Jy"), code::CONTROL_CHARACTER, Some("items[1].name")),
        (|v| v["items"][0]["priceModification"] = json!("r\u{7f}"), code::CONTROL_CHARACTER, Some("items[0].priceModification")),
        (|v| v["operator"]["id"] = json!("1\u{85}"), code::CONTROL_CHARACTER, Some("operator.id")),
        (|v| v["payments"][0]["name"] = json!("ESPECES\n"), code::CONTROL_CHARACTER, Some("payments[0].name")),
        (|v| v["rn"] = json!("F\t1"), code::CONTROL_CHARACTER, Some("rn")),
        (|v| v["client"]["typeDesc"] = json!("x\ny"), code::CONTROL_CHARACTER, Some("client.typeDesc")),
        // Characters that reorder or break a line without being control characters.
        (|v| v["items"][1]["name"] = json!("PRIX \u{202E}000 1"), code::LAYOUT_CHARACTER, Some("items[1].name")),
        (|v| v["client"]["nif"] = json!("\u{2066}A000000A\u{2069}"), code::LAYOUT_CHARACTER, Some("client.nif")),
        (|v| v["client"]["address"] = json!("rue\u{2028}Nom"), code::LAYOUT_CHARACTER, Some("client.address")),
        (|v| v["client"]["contact"] = json!("\u{200F}+243"), code::LAYOUT_CHARACTER, Some("client.contact")),
        (|v| v["cmth"] = json!("\u{061C}x"), code::LAYOUT_CHARACTER, Some("cmth")),
        (|v| credit(v, "FA", "4B2RQ5DXMT4N4AODOS5H4Y\u{202A}", None), code::LAYOUT_CHARACTER, Some("reference")),
    ]
}

fn usd(v: &mut Value, rate: Option<&str>, date: Option<&str>) {
    v["curCode"] = json!("USD");
    v["curRate"] = json!(rate);
    v["curDate"] = json!(date);
}

/// Makes the reference example a credit note of `kind`.
pub(crate) fn credit(v: &mut Value, kind: &str, reference: &str, reference_type: Option<&str>) {
    v["type"] = json!(kind);
    v["reference"] = json!(reference);
    v["referenceType"] = json!(reference_type);
}

/// Item 0 is 600.00 x 2 = 1200.00.
fn specific(v: &mut Value, value: &str, amount: Option<&str>) {
    v["items"][0]["taxSpecificValue"] = json!(value);
    v["items"][0]["taxSpecificAmount"] = json!(amount);
}
