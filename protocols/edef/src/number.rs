//! Amounts on the wire: written as JSON numbers with their exact decimal digits (never through
//! a binary float), read from a JSON number or from a string holding one.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// Writes `value` as a JSON number with its exact digits (`12.50` stays `12.50`).
pub fn write<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    let raw = RawValue::from_string(value.normalize_sign().to_string())
        .map_err(serde::ser::Error::custom)?;
    raw.serialize(serializer)
}

/// Writes an optional amount: a number, or `null`.
pub fn write_option<S: Serializer>(
    value: &Option<Decimal>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => write(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// How an amount was written in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// A JSON number (the expected form).
    Number,
    /// A string holding a number.
    Text,
}

/// Reads an amount from the raw JSON of one field: a number, or a string holding a number.
/// `None` when it is neither (or `null`).
pub fn read(raw: &RawValue) -> Option<(Decimal, Written)> {
    let text = raw.get().trim();
    if text.starts_with('"') {
        let inner: String = serde_json::from_str(text).ok()?;
        return parse(inner.trim()).map(|value| (value, Written::Text));
    }
    parse(text).map(|value| (value, Written::Number))
}

fn parse(text: &str) -> Option<Decimal> {
    if text.is_empty() || text == "null" {
        return None;
    }
    if text.contains(['e', 'E']) {
        return Decimal::from_scientific(text).ok();
    }
    Decimal::from_str(text).ok()
}

trait NormalizeSign {
    fn normalize_sign(self) -> Decimal;
}

impl NormalizeSign for &Decimal {
    /// `-0.00` is written `0.00`.
    fn normalize_sign(self) -> Decimal {
        if self.is_zero() {
            let mut zero = *self;
            zero.set_sign_positive(true);
            zero
        } else {
            *self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[derive(Serialize)]
    struct One {
        #[serde(serialize_with = "write")]
        amount: Decimal,
    }

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn amounts_are_written_with_their_exact_digits() {
        for (value, text) in [
            (dec!(12.50), r#"{"amount":12.50}"#),
            (dec!(0.1), r#"{"amount":0.1}"#),
            (dec!(99999999999.99), r#"{"amount":99999999999.99}"#),
            (dec!(-0.00), r#"{"amount":0.00}"#),
            (dec!(-3), r#"{"amount":-3}"#),
        ] {
            assert_eq!(serde_json::to_string(&One { amount: value }).unwrap(), text);
        }
    }

    #[test]
    fn amounts_are_read_from_numbers_and_strings() {
        assert_eq!(read(&raw("12.5")), Some((dec!(12.5), Written::Number)));
        assert_eq!(read(&raw("\"12.50\"")), Some((dec!(12.50), Written::Text)));
        assert_eq!(read(&raw("\" 7 \"")), Some((dec!(7), Written::Text)));
        assert_eq!(read(&raw("1.6E3")), Some((dec!(1600), Written::Number)));
        assert_eq!(read(&raw("null")), None);
        assert_eq!(read(&raw("\"abc\"")), None);
        assert_eq!(read(&raw("true")), None);
        assert_eq!(read(&raw("{}")), None);
    }
}
