//! `expected_totals` on its own: overflow, the USD equivalent's places, the VAT of each mode.
//! Against the box's own figures (emcf-sim's 33h): `certify/box_channel/commands/tests.rs`.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::json;

use super::*;
use crate::certify::invoice::{PriceMode, TaxGroup};

/// The DGI's table: B and F 16 %, C and G 5 %, O and P 1 %, E 0 %, the others none.
fn rates() -> [Option<Decimal>; TaxGroup::COUNT] {
    let mut rates = [None; TaxGroup::COUNT];
    for (letter, rate) in [
        ('B', dec!(16)),
        ('F', dec!(16)),
        ('C', dec!(5)),
        ('G', dec!(5)),
        ('O', dec!(1)),
        ('P', dec!(1)),
        ('E', dec!(0)),
    ] {
        rates[group(letter)] = Some(rate);
    }
    rates
}

fn group(letter: char) -> usize {
    TaxGroup::from_letter(letter).unwrap().index()
}

#[test]
fn the_reference_example_comes_to_its_total() {
    let invoice = check(REFERENCE.as_bytes()).unwrap();
    let totals = invoice.expected_totals(&rates()).unwrap();
    assert_eq!(totals.total, dec!(1230.00));
    // ttc: VAT = round(1230 x 16 / 116) = round(169.655...) = 169.66.
    assert_eq!(totals.group_vat[group('B')], dec!(169.66));
    assert_eq!(totals.vat(), dec!(169.66));
    assert_eq!(totals.usd_equivalent, None);
}

#[test]
fn ht_mode_adds_the_vat() {
    let v = with_items(
        "ht",
        json!([{"name": "STYLO BIC", "type": "BIE", "price": "600.00", "quantity": "2", "taxGroup": "B"}]),
    );
    let totals = check_value(&v).unwrap().expected_totals(&rates()).unwrap();
    assert_eq!((totals.total, totals.vat()), (dec!(1392.00), dec!(192.00)));
}

#[test]
fn the_usd_equivalent_has_two_places() {
    // 0.09 at 2 CDF per USD is 0.045 -> 0.05; 100.00 at 4 is 25 -> "25.00".
    for (price, rate, usd) in [("0.09", "2", "0.05"), ("100.00", "4", "25.00")] {
        let mut v = with_items(
            "ttc",
            json!([{"name": "X", "type": "BIE", "price": price, "quantity": "1", "taxGroup": "A"}]),
        );
        v["curCode"] = json!("USD");
        v["curRate"] = json!(rate);
        v["curDate"] = json!("2026-11-20");
        let totals = check_value(&v).unwrap().expected_totals(&rates()).unwrap();
        assert_eq!(
            totals.usd_equivalent.map(|u| u.to_string()).as_deref(),
            Some(usd)
        );
    }
}

#[test]
fn overflow_gives_none_not_a_panic() {
    let mut invoice = check(REFERENCE.as_bytes()).unwrap();
    for item in &mut invoice.items {
        item.line_amount = Decimal::MAX;
    }
    assert_eq!(invoice.expected_totals(&rates()), None);
    invoice.items.truncate(1);
    assert_eq!(
        invoice.expected_totals(&rates()),
        None,
        "MAX x 16 overflows"
    );
    invoice.price_mode = PriceMode::Ttc;
    let mut no_vat = [None; TaxGroup::COUNT];
    no_vat[0] = Some(Decimal::ZERO);
    assert!(invoice.expected_totals(&no_vat).is_some());
}
