//! A small JSON writer for the simulator's answers: keys keep their order and decimals are
//! written digit for digit from their [`Decimal`] (never through `f64`), as JSON numbers or,
//! under the `numbers_as_strings` fault, as strings.

use std::fmt::Write as _;

use rust_decimal::Decimal;

/// How decimals are written in an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum NumberStyle {
    /// `1392.00`
    #[default]
    Number,
    /// `"1392.00"`
    Text,
}

/// A JSON object whose members are written in the order they were added.
#[derive(Debug, Clone, Default)]
pub(crate) struct JsonObject {
    members: Vec<(String, String)>,
}

impl JsonObject {
    /// An empty object.
    pub(crate) fn new() -> JsonObject {
        JsonObject::default()
    }

    /// Adds `key` with an already encoded JSON value.
    fn raw(mut self, key: &str, encoded: String) -> JsonObject {
        self.members.push((key.to_owned(), encoded));
        self
    }

    /// Adds a string member.
    pub(crate) fn text(self, key: &str, value: &str) -> JsonObject {
        self.raw(key, quote(value))
    }

    /// Adds a string member, or `null`.
    pub(crate) fn optional_text(self, key: &str, value: Option<&str>) -> JsonObject {
        self.raw(key, value.map_or_else(|| "null".to_owned(), quote))
    }

    /// Adds an integer member.
    pub(crate) fn integer(self, key: &str, value: u64) -> JsonObject {
        self.raw(key, value.to_string())
    }

    /// Adds a boolean member.
    pub(crate) fn boolean(self, key: &str, value: bool) -> JsonObject {
        self.raw(key, value.to_string())
    }

    /// Adds a `null` member.
    pub(crate) fn null(self, key: &str) -> JsonObject {
        self.raw(key, "null".to_owned())
    }

    /// Adds an amount, always with 2 decimals (`1392.00`).
    pub(crate) fn amount(self, key: &str, value: Decimal, style: NumberStyle) -> JsonObject {
        self.raw(key, decimal_text(format!("{value:.2}"), style))
    }

    /// Adds a rate or a plain decimal with no trailing zeros (`16`, `2850.5`).
    pub(crate) fn decimal(self, key: &str, value: Decimal, style: NumberStyle) -> JsonObject {
        self.raw(key, decimal_text(value.normalize().to_string(), style))
    }

    /// Adds an array of objects.
    pub(crate) fn array(self, key: &str, values: Vec<JsonObject>) -> JsonObject {
        self.raw(key, array(values))
    }

    /// Adds an array of strings.
    pub(crate) fn text_array<'a>(
        self,
        key: &str,
        values: impl IntoIterator<Item = &'a str>,
    ) -> JsonObject {
        let items: Vec<String> = values.into_iter().map(quote).collect();
        self.raw(key, format!("[{}]", items.join(",")))
    }

    /// The object's JSON text.
    pub(crate) fn finish(self) -> String {
        let mut out = String::from("{");
        for (index, (key, value)) in self.members.into_iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            out.push_str(&quote(&key));
            out.push(':');
            out.push_str(&value);
        }
        out.push('}');
        out
    }
}

/// The JSON text of an array of objects.
pub(crate) fn array(values: Vec<JsonObject>) -> String {
    let items: Vec<String> = values.into_iter().map(JsonObject::finish).collect();
    format!("[{}]", items.join(","))
}

/// A decimal's digits as a JSON number or string.
fn decimal_text(digits: String, style: NumberStyle) -> String {
    match style {
        NumberStyle::Number => digits,
        NumberStyle::Text => quote(&digits),
    }
}

/// `text` as a JSON string literal.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn members_keep_their_order_and_decimals_their_digits() {
        let json = JsonObject::new()
            .text("uid", "a\"b\\c\u{1}é")
            .amount("total", dec!(1392), NumberStyle::Number)
            .amount("vtotal", dec!(192.5), NumberStyle::Text)
            .decimal("tb", dec!(16.00), NumberStyle::Number)
            .integer("n", 3)
            .boolean("ok", true)
            .null("errorCode")
            .optional_text("errorDesc", None)
            .text_array("uids", ["x", "y"])
            .array("list", vec![JsonObject::new().integer("a", 1)])
            .finish();
        assert_eq!(
            json,
            r#"{"uid":"a\"b\\c\u0001é","total":1392.00,"vtotal":"192.50","tb":16,"n":3,"ok":true,"errorCode":null,"errorDesc":null,"uids":["x","y"],"list":[{"a":1}]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["uid"], "a\"b\\c\u{1}é");
    }

    #[test]
    fn an_empty_array_and_object_are_valid_json() {
        assert_eq!(array(Vec::new()), "[]");
        assert_eq!(JsonObject::new().finish(), "{}");
    }
}
