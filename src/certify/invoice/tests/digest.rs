//! The canonical form and digest: same content, same digest, whatever the JSON spelling.

use proptest::prelude::*;
use rust_decimal::Decimal;
use serde_json::json;

use super::*;

/// The reference example spelt differently: keys in another order, other blanks, decimals
/// as numbers or with other trailing zeros, an escaped character, defaults written out or
/// left out, null for absent values.
const REFERENCE_RESPELT: &str = r#"{"operator":{"name":"ADMIN","id":"01"},
 "payments":[{"curRate":-1,"amount":1230,"name":"ESPECES"}],
 "client":{"address":"25 rue du taur 31850 MONTRABE","contact":"+330562380000","name":"DUPONT",
   "typeDesc":"Personne morale","type":"PM","nif":"A000000A","email":""},
 "items":[{"priceModification":"","originalPrice":600,"taxSpecificAmount":0,"taxSpecificValue":"0%",
   "taxGroup":"B","quantity":2,"price":600.0,"type":"BIE","name":"STYLO BIC","code":"LR 1515"},
  {"name":"MAIN D\u0027OEUVRE","code":" ---DEEE","type":"SER","price":"30","quantity":"1",
   "taxGroup":"B","taxSpecificValue":null,"taxSpecificAmount":null}],
 "curRate":-1.00,"type":"FV","rn":"FC0002","mode":"ttc","cmtd":""}"#;

#[test]
fn numbers_strings_key_order_and_defaults_give_the_same_digest() {
    let a = check(REFERENCE.as_bytes()).unwrap();
    let b = check(REFERENCE_RESPELT.as_bytes()).unwrap();
    assert_eq!(a.canonical, b.canonical);
    assert_eq!(a.digest, b.digest);
}

#[test]
fn the_canonical_form_is_pinned() {
    let invoice = check(REFERENCE.as_bytes()).unwrap();
    let expected = concat!(
        r#"{"canon":"1","client":{"address":"25 rue du taur 31850 MONTRABE","contact":"+330562380000","#,
        r#""name":"DUPONT","nif":"A000000A","type":"PM","typeDesc":"Personne morale"},"curCode":"CDF","#,
        r#""items":[{"code":"LR 1515","name":"STYLO BIC","price":"600","quantity":"2","taxGroup":"B","type":"BIE"},"#,
        r#"{"code":" ---DEEE","name":"MAIN D'OEUVRE","price":"30","quantity":"1","taxGroup":"B","type":"SER"}],"#,
        r#""mode":"ttc","operator":{"id":"01","name":"ADMIN"},"#,
        r#""payments":[{"amount":"1230","curCode":"CDF","name":"ESPECES"}],"rn":"FC0002","type":"FV"}"#
    );
    assert_eq!(invoice.canonical, expected);
    // The canonical form is JSON, and the digest is its SHA-256.
    serde_json::from_str::<serde_json::Value>(&invoice.canonical).unwrap();
    assert_eq!(invoice.digest, super::super::canonical::digest(expected));
    assert_eq!(
        super::super::canonical::digest(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn any_change_of_content_changes_the_digest() {
    let base = check(REFERENCE.as_bytes()).unwrap().digest;
    let changes: Vec<fn(&mut serde_json::Value)> = vec![
        |v| {
            v["items"][0]["price"] = json!("600.01");
            v["items"][0]["originalPrice"] = json!("600.01");
        },
        |v| v["items"][0]["quantity"] = json!("3"),
        |v| v["items"][0]["taxGroup"] = json!("C"),
        |v| v["items"][0]["name"] = json!("STYLO BIC "),
        |v| v["client"]["typeDesc"] = json!("PM"),
        |v| v["payments"][0]["name"] = json!("CHEQUES"),
        |v| v["payments"][0]["curCode"] = serde_json::Value::Null,
        |v| v["mode"] = json!("ht"),
        |v| v["cmta"] = json!("merci"),
        |v| v["operator"]["id"] = json!("02"),
        |v| {
            let items = v["items"].as_array_mut().unwrap();
            items.swap(0, 1);
        },
    ];
    for (i, change) in changes.into_iter().enumerate() {
        let mut v = reference();
        change(&mut v);
        let digest = check_value(&v).unwrap().digest;
        // A payment's curCode left out defaults to the invoice's (CDF): same content.
        if i == 6 {
            assert_eq!(digest, base, "change {i}");
        } else {
            assert_ne!(digest, base, "change {i}");
        }
    }
}

/// A decimal written as a JSON string or number with `zeros` extra trailing zeros.
fn spell(value: Decimal, as_number: bool, zeros: usize) -> String {
    let mut text = value.normalize().to_string();
    if zeros > 0 {
        if !text.contains('.') {
            text.push('.');
        }
        text.push_str(&"0".repeat(zeros));
    }
    if as_number {
        text
    } else {
        format!("\"{text}\"")
    }
}

/// An invoice body from `items` (group letter, price in cents, quantity in thousandths),
/// its keys in an order and its decimals in a spelling chosen by `seed`.
fn render(items: &[(char, i64, i64)], seed: u64) -> String {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let object = |mut fields: Vec<String>, next: &mut dyn FnMut() -> u64| {
        for i in (1..fields.len()).rev() {
            fields.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let blank = if next().is_multiple_of(2) {
            " "
        } else {
            "\n  "
        };
        format!("{{{blank}{}{blank}}}", fields.join(&format!(",{blank}")))
    };
    let rendered: Vec<String> = items
        .iter()
        .map(|&(group, cents, thousandths)| {
            let price = spell(
                Decimal::new(cents, 2),
                next().is_multiple_of(2),
                (next() % 4) as usize,
            );
            let quantity = spell(
                Decimal::new(thousandths, 3),
                next().is_multiple_of(2),
                (next() % 4) as usize,
            );
            let fields = vec![
                "\"name\":\"ARTICLE\"".to_owned(),
                "\"type\":\"BIE\"".to_owned(),
                format!("\"taxGroup\":\"{group}\""),
                format!("\"price\":{price}"),
                format!("\"quantity\":{quantity}"),
            ];
            object(fields, &mut next)
        })
        .collect();
    let rate = spell(
        Decimal::NEGATIVE_ONE,
        next().is_multiple_of(2),
        (next() % 3) as usize,
    );
    let top = vec![
        "\"rn\":\"P-1\"".to_owned(),
        "\"mode\":\"ht\"".to_owned(),
        "\"type\":\"FV\"".to_owned(),
        format!("\"curRate\":{rate}"),
        format!("\"items\":[{}]", rendered.join(",")),
        "\"operator\":{\"name\":\"ADMIN\"}".to_owned(),
    ];
    object(top, &mut next)
}

fn item_strategy() -> impl Strategy<Value = (char, i64, i64)> {
    (
        prop::sample::select(vec!['A', 'B', 'C', 'E', 'O', 'P']),
        0i64..100_000_000,
        1i64..1_000_000,
    )
}

proptest! {
    #[test]
    fn the_digest_is_stable_under_key_order_and_decimal_spelling(
        items in prop::collection::vec(item_strategy(), 1..6),
        seed_a in any::<u64>(),
        seed_b in any::<u64>(),
    ) {
        let a = check(render(&items, seed_a).as_bytes()).unwrap();
        let b = check(render(&items, seed_b).as_bytes()).unwrap();
        prop_assert_eq!(&a.canonical, &b.canonical);
        prop_assert_eq!(&a.digest, &b.digest);
    }

    #[test]
    fn the_digest_follows_the_amounts(
        items in prop::collection::vec(item_strategy(), 1..6),
        seed in any::<u64>(),
        which in any::<prop::sample::Index>(),
    ) {
        let mut other = items.clone();
        let i = which.index(other.len());
        other[i].1 += 1;
        let a = check(render(&items, seed).as_bytes()).unwrap();
        let b = check(render(&other, seed).as_bytes()).unwrap();
        prop_assert_ne!(a.digest, b.digest);
    }
}

/// What the register keeps of an invoice (its canonical form) reads back as the invoice the
/// client sent: client, items, payments, operator, under the seed's names.
#[test]
fn the_kept_form_reads_back_as_the_invoice_sent() {
    let invoice = check(REFERENCE.as_bytes()).unwrap();
    let content = crate::model::InvoiceContent::read(&invoice.canonical, &invoice.digest)
        .expect("the kept form reads back");
    assert_eq!(content.rn, "FC0002");
    assert_eq!(content.invoice_type, "FV");
    let client = content.client.expect("client kept");
    assert_eq!(client.name.as_deref(), Some("DUPONT"));
    assert_eq!(client.type_desc.as_deref(), Some("Personne morale"));
    assert_eq!(content.items.len(), 2);
    assert_eq!(content.items[0].name, "STYLO BIC");
    assert_eq!(content.items[0].line_amount(), Some(Decimal::from(1200)));
    assert_eq!(content.payments[0].amount, Decimal::from(1230));
    assert_eq!(content.operator.name, "ADMIN");
    assert_eq!(content.reference, None);
}

/// An invoice whose canonical form the register could not keep whole is refused with code 8
/// before anything is reserved or sent.
#[test]
fn an_invoice_too_large_to_keep_is_refused_with_code_8() {
    let item = json!({"name": "x".repeat(100), "type": "BIE", "price": "1",
                      "quantity": "1", "taxGroup": "B"});
    let items: Vec<_> = std::iter::repeat_n(item, 4000).collect();
    let error = refused(&with_items("ttc", json!(items)));
    assert_eq!(error.code, crate::certify::invoice::code::TOO_LARGE_TO_KEEP);
    assert_eq!(error.field, None);
}

proptest! {
    #[test]
    fn every_kept_form_reads_back(
        items in prop::collection::vec(item_strategy(), 1..6),
        seed in any::<u64>(),
    ) {
        let invoice = check(render(&items, seed).as_bytes()).unwrap();
        let content = crate::model::InvoiceContent::read(&invoice.canonical, &invoice.digest);
        prop_assert!(content.is_ok(), "{:?}", content);
        prop_assert_eq!(content.unwrap().items.len(), items.len());
    }
}
