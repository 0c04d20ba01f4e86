//! One case (at least) per validation rule: the reference example, changed, is refused with
//! the rule's code and the field's path; and the accepted forms.

use std::collections::BTreeSet;

use rust_decimal_macros::dec;
use serde_json::json;

use super::cases::{cases, credit, DEF};
use super::*;
use crate::certify::invoice::{
    code, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, MAX_AMOUNT,
};
use crate::i18n::Lang;

#[test]
fn each_rule_refuses_with_its_code_and_field() {
    assert!(check_value(&reference()).is_ok());
    for (i, (change, code, field)) in cases().into_iter().enumerate() {
        let mut value = reference();
        change(&mut value);
        let error = refused(&value);
        assert_eq!(
            (error.code, error.field.as_deref()),
            (code, field),
            "case {i}: {error}"
        );
        for lang in Lang::ALL {
            let text = error.message.render(lang);
            assert!(
                !text.is_empty() && text != error.message.id() && !text.contains("{$"),
                "case {i} in {lang}: {text:?} ({:?})",
                error.message
            );
        }
    }
}

#[test]
fn every_code_is_tested_and_documented() {
    let mut tested: BTreeSet<u16> = cases().iter().map(|c| c.1).collect();
    // Body codes are tested in `parse`, TOO_LARGE_TO_KEEP in `digest`, TEXT_TOO_LONG with the
    // box's frames (`certify/box_channel/commands.rs`); NOT_ENCODABLE is a catch-all no valid
    // path reaches.
    tested.extend([
        code::MALFORMED_JSON,
        code::TOO_DEEP,
        code::UNKNOWN_FIELD,
        code::DUPLICATE_FIELD,
        code::WRONG_TYPE,
        code::BAD_DECIMAL,
        code::TOO_LARGE_TO_KEEP,
        code::TEXT_TOO_LONG,
        code::NOT_ENCODABLE,
    ]);
    let all: BTreeSet<u16> = code::ALL.iter().copied().collect();
    assert_eq!(all.len(), code::ALL.len(), "a code is used twice");
    assert_eq!(tested, all);
    assert!(code::ALL.iter().all(|c| (1..100).contains(c)));
    let doc = include_str!("../../../../docs/error-codes.md");
    for c in code::ALL {
        assert!(
            doc.contains(&format!("\n| {c} |")),
            "code {c} is not in docs/error-codes.md"
        );
    }
}

#[test]
fn the_reference_example_validates_field_by_field() {
    let invoice = check(REFERENCE.as_bytes()).unwrap();
    assert_eq!(invoice.rn, "FC0002");
    assert_eq!(invoice.invoice_type, InvoiceType::Fv);
    assert_eq!(invoice.price_mode, PriceMode::Ttc);
    assert!(!invoice.is_credit_note() && invoice.has_client());
    assert_eq!(invoice.client.client_type, "PM");
    assert_eq!(
        (invoice.operator_id.as_str(), invoice.operator_name.as_str()),
        ("01", "ADMIN")
    );
    assert_eq!(
        (invoice.currency_code.as_str(), invoice.usd_rate),
        ("CDF", None)
    );
    assert_eq!(invoice.items.len(), 2);
    let first = &invoice.items[0];
    assert_eq!(
        (first.item_type, first.line_amount),
        (ItemType::Bie, dec!(1200.00))
    );
    assert_eq!(
        (first.specific_tax, first.price_change.clone()),
        (None, None)
    );
    assert_eq!(invoice.payments[0].method, PaymentMethod::Especes);
    assert_eq!(invoice.payments_total(), dec!(1230.00));
    assert_eq!(invoice.digest.len(), 64);
    assert!(invoice
        .digest
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
}

#[test]
fn optional_parts_are_typed() {
    let mut v = reference();
    credit(&mut v, "FA", DEF, None);
    v["curCode"] = json!("USD");
    v["curRate"] = json!(2850.5);
    v["curDate"] = json!("2026-02-28T23:30:00-02:00");
    v["cmtc"] = json!("Merci, a bientot");
    v["cmta"] = json!("");
    v["items"][0]["taxSpecificValue"] = json!("5.00%");
    v["items"][0]["taxSpecificAmount"] = json!("60");
    v["items"][1]["originalPrice"] = json!("35.00");
    v["items"][1]["priceModification"] = json!("remise fidelite");
    v["items"][1]["taxSpecificValue"] = json!("");
    v["items"][1]["taxSpecificAmount"] = json!("10.00");
    v.as_object_mut().unwrap().remove("payments");
    let invoice = check_value(&v).unwrap();
    let reference = invoice.reference.clone().unwrap();
    assert_eq!(
        (reference.kind, reference.code_def.as_str()),
        (ReferenceType::Cor, DEF)
    );
    assert!(invoice.is_credit_note());
    let usd = invoice.usd_rate.unwrap();
    assert_eq!(
        (usd.rate, usd.date.to_string().as_str()),
        (dec!(2850.5), "2026-02-28")
    );
    assert_eq!(invoice.comments.len(), 1);
    assert_eq!(invoice.comments[0].line.as_str(), "C");
    let tax = invoice.items[0].specific_tax.unwrap();
    assert_eq!((tax.rate, tax.amount), (Some(dec!(5.00)), dec!(60)));
    assert_eq!(invoice.items[1].specific_tax.unwrap().rate, None);
    assert_eq!(
        invoice.items[1]
            .price_change
            .as_ref()
            .unwrap()
            .original_price,
        dec!(35)
    );
    assert!(invoice.payments.is_empty());
    assert_eq!(invoice.payments_total(), dec!(0));
}

#[test]
fn seller_ids_and_client_are_optional() {
    let mut v = reference();
    let o = v.as_object_mut().unwrap();
    for key in ["nif", "isF", "client", "curCode", "curRate", "curDate"] {
        o.remove(key);
    }
    v["nif"] = json!("");
    let invoice = check_value(&v).unwrap();
    assert!(!invoice.has_client());
    assert_eq!(invoice.currency_code, "CDF");
    // Operator id may be absent.
    let v = with_items(
        "ht",
        json!([{"name": "N", "type": "TAX", "price": "0", "quantity": "1", "taxGroup": "P"}]),
    );
    let invoice = check_value(&v).unwrap();
    assert_eq!(invoice.operator_id, "");
    assert_eq!(MAX_AMOUNT, dec!(999999999999999.99));
}

#[test]
fn the_error_displays_its_message_and_rn_has_the_seed_text() {
    let mut v = reference();
    v["rn"] = json!("");
    let error = refused(&v);
    assert_eq!(error.to_string(), "the invoice number (rn) cannot be empty");
    assert_eq!(
        error.message.render(Lang::Fr),
        "le numéro de facture (rn) ne peut pas être vide"
    );
    assert_eq!(error.code, 31);
}

#[test]
fn messages_quote_the_value_and_keep_field_names_in_both_languages() {
    let mut v = reference();
    v["items"][1]["price"] = json!("30.001");
    let error = refused(&v);
    assert_eq!(error.field.as_deref(), Some("items[1].price"));
    assert_eq!(
        error.message.render(Lang::Fr),
        "items[1].price a 2 décimales au plus, reçu 30.001"
    );
    assert_eq!(
        error.message.render(Lang::En),
        "items[1].price has at most 2 decimals, got 30.001"
    );
    let mut v = reference();
    v["mode"] = json!("TTC");
    let error = refused(&v);
    assert_eq!(
        error.message.render(Lang::Fr),
        "mode \"TTC\" n'est ni ht ni ttc"
    );
    let mut v = reference();
    v["items"][0]["quantity"] = json!({"n": 1});
    let error = parse_body(v.to_string().as_bytes()).unwrap_err();
    assert_eq!(
        error.message.render(Lang::Fr),
        "items[0].quantity doit être un décimal (chaîne ou nombre), pas un objet"
    );
    assert_eq!(
        error.message.render(Lang::En),
        "items[0].quantity must be a decimal (string or number), not an object"
    );
}

#[test]
fn the_published_usd_example_validates() {
    // The seed-family example: ht, USD at 2500 with a date-time, a USD cheque payment.
    let mut v = reference();
    v["mode"] = json!("ht");
    v["curCode"] = json!("USD");
    v["curRate"] = json!("2500");
    v["payments"] =
        json!([{"name": "CHEQUES", "amount": "1476.0", "curCode": "USD", "curRate": "2500"}]);
    let invoice = check_value(&v).unwrap();
    let usd = invoice.usd_rate.unwrap();
    assert_eq!(
        (usd.rate, usd.date.to_string().as_str()),
        (dec!(2500), "2026-02-28")
    );
    assert_eq!(invoice.currency_code, "USD");
    assert_eq!(invoice.payments[0].method, PaymentMethod::Cheques);
    assert!(invoice
        .canonical
        .contains(r#""curCode":"USD","curRate":"2500","name":"CHEQUES""#));
}
