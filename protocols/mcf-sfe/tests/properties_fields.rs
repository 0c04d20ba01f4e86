//! Properties of the field layer (`mcf_sfe::fields`): escaping and unescaping text, splitting
//! escaped fields, and writing and reading fixed-point decimals, up to the largest ones.

mod strategies;

use mcf_sfe::command::{code, Item};
use mcf_sfe::fields::{self, FieldError};
use mcf_sfe::types::{ItemType, TaxGroup};
use mcf_sfe::Command;
use proptest::collection::vec;
use proptest::prelude::*;
use rust_decimal::Decimal;
use strategies::typed::text;

// ---------------------------------------------------------------------------------------------
// Fields

/// The largest decimals are written in full (rust_decimal's `{:.N}` formatting panics on them:
/// a 29-digit value with 3 places, 28 digits with 4).
#[test]
fn the_largest_decimals_are_written_not_a_panic() {
    let max = "79228162514264337593543950335";
    for value in [Decimal::MAX, Decimal::MIN] {
        let sign = if value.is_sign_negative() { "-" } else { "" };
        assert_eq!(fields::amount("a", value), Ok(format!("{sign}{max}.00")));
        assert_eq!(fields::fixed("q", value, 3), Ok(format!("{sign}{max}.000")));
        assert_eq!(
            fields::fixed("r", value, 4),
            Ok(format!("{sign}{max}.0000"))
        );
        assert_eq!(fields::quantity("q", value), Ok(format!("{sign}{max}")));
    }
    let item = Command::Item(Item {
        name: "X".into(),
        code: None,
        item_type: ItemType::Bie,
        group: TaxGroup::from_letter('B').unwrap(),
        rate: Decimal::new(1600, 2),
        line_amount: Decimal::ONE,
        price: Decimal::ONE,
        quantity: Decimal::MAX,
        specific_tax: None,
        price_change: None,
    });
    let data = item.encode().unwrap();
    assert!(data.ends_with(format!("1.00*{max}").as_bytes()));
    assert_eq!(Command::parse(code::ITEM, &data), Ok(item));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// An escaped field carries no separator or markup and unescapes to the original.
    #[test]
    fn escape_then_unescape_is_the_identity(value in text(20)) {
        let escaped = fields::escape("field", &value).unwrap();
        prop_assert!(!escaped.contains([',', '\r', '\n', '&', '<', '>', '\t']), "{:?}", escaped);
        prop_assert_eq!(fields::unescape(&escaped), value);
    }

    /// Escaping refuses exactly the control characters other than CR and LF, naming the first.
    #[test]
    fn escape_refuses_control_characters(value in any::<String>()) {
        let first_bad = value.chars().find(|&c| c.is_control() && c != '\r' && c != '\n');
        match (fields::escape("field", &value), first_bad) {
            (Ok(escaped), None) => prop_assert_eq!(fields::unescape(&escaped), value),
            (Err(FieldError::ControlChar { field, code }), Some(c)) => {
                prop_assert_eq!(field, "field");
                prop_assert_eq!(code, u32::from(c));
            }
            (result, bad) => {
                prop_assert!(false, "{:?} for {:?} (control char {:?})", result, value, bad)
            }
        }
    }

    /// Escaped fields joined with commas split back into the same fields.
    #[test]
    fn escaped_fields_split_back(values in vec(text(6), 1..8)) {
        let escaped: Vec<String> = values.iter().map(|v| fields::escape("f", v).unwrap()).collect();
        prop_assert_eq!(fields::split(&fields::join(&escaped)), Ok(values));
    }

    /// Unescaping never panics, and text without `^` is left alone.
    #[test]
    fn unescape_accepts_anything(value in any::<String>(), plain in "[^^]{0,20}") {
        let _ = fields::unescape(&value);
        prop_assert_eq!(fields::unescape(&plain), plain);
    }

    /// Any decimal, up to the largest, is written with exactly 2 (amounts), 3 or 4 (USD rate)
    /// places and reads back to the same value, or is refused as too precise: never a panic.
    #[test]
    fn fixed_point_fields_take_any_decimal(
        parts in (any::<u32>(), any::<u32>(), any::<u32>(), any::<bool>(), 0u32..=5),
    ) {
        let (lo, mid, hi, negative, scale) = parts;
        let value = Decimal::from_parts(lo, mid, hi, negative, scale);
        for places in [2, 3, 4] {
            match fields::fixed("field", value, places) {
                Ok(text) => {
                    let (_, decimals) = text.split_once('.').expect("a decimal point");
                    prop_assert_eq!(decimals.len(), places as usize, "{}", text);
                    prop_assert_eq!(fields::parse_decimal("field", &text), Ok(value));
                }
                Err(FieldError::TooPrecise { .. }) => {
                    prop_assert!(value.normalize().scale() > places)
                }
                Err(other) => prop_assert!(false, "{}", other),
            }
        }
        prop_assert_eq!(fields::amount("amount", value), fields::fixed("amount", value, 2));
        if let Ok(text) = fields::quantity("quantity", value) {
            prop_assert_eq!(fields::parse_decimal("quantity", &text), Ok(value));
        }
    }
}
