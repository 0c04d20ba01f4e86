//! DATA fields: comma-separated UTF-8 text with escapes, decimals with `.`, device dates.
//!
//! Escapes inside a field: `&` `^amp;`, `,` `^x2c;`, `<` `^lt;`, `>` `^gt;`, CR `^xd;`,
//! LF `^xa;`. This crate also writes `^` as `^x5e;` so that a literal `^amp;` survives a
//! round trip (assumed: the public sources do not say how a device treats `^`); on reading,
//! any `^x<hex>;` is accepted and an unknown `^...` is kept as it stands.

use std::str::FromStr;

use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::dialect::LineBreaks;

/// A value that cannot be put into a frame. Nothing is truncated or rounded silently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// A control character other than CR and LF (which are escaped), e.g. TAB.
    #[error("{field}: control character U+{code:04X} is not allowed")]
    ControlChar {
        /// Field name.
        field: &'static str,
        /// The character's code point.
        code: u32,
    },
    /// More decimal places than the protocol carries.
    #[error("{field}: {value} has more than {places} decimal places")]
    TooPrecise {
        /// Field name.
        field: &'static str,
        /// The value given.
        value: Decimal,
        /// Decimal places the field carries.
        places: u32,
    },
    /// A field that must not be empty is empty.
    #[error("{field}: must not be empty")]
    Empty {
        /// Field name.
        field: &'static str,
    },
    /// The encoded DATA is longer than a frame can carry.
    #[error("command {cmd:#04x}: DATA would be {len} bytes, a frame carries at most {max}; shorten the text fields")]
    DataTooLong {
        /// Command byte.
        cmd: u8,
        /// Encoded length.
        len: usize,
        /// Largest DATA of the frame.
        max: usize,
    },
    /// A value outside what the field allows.
    #[error("{field}: {reason}")]
    Invalid {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// DATA that does not parse as the command or reply it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// DATA is not UTF-8.
    #[error("DATA is not UTF-8")]
    NotUtf8,
    /// Wrong number of fields.
    #[error("{what}: expected {expected} fields, got {got}")]
    FieldCount {
        /// What was being parsed.
        what: &'static str,
        /// Accepted count(s), as text.
        expected: &'static str,
        /// Count received.
        got: usize,
    },
    /// One field does not parse.
    #[error("{field}: cannot read {value:?}: {reason}")]
    BadField {
        /// Field name.
        field: &'static str,
        /// The raw (unescaped) value.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A command byte this crate does not know.
    #[error("unknown command 0x{0:02X}")]
    UnknownCommand(u8),
}

/// Whether `c` is written as an escape sequence by [`escape`] (besides CR and LF): text
/// that must appear on the wire exactly as written (FN, NIM, NIF) excludes these.
pub fn is_escaped(c: char) -> bool {
    matches!(c, ',' | '&' | '<' | '>' | '^')
}

/// Escapes one text field. Fails on control characters other than CR and LF.
pub fn escape(field: &'static str, value: &str) -> Result<String, FieldError> {
    let mut out = String::with_capacity(value.len());
    for ch in value.chars() {
        match ch {
            '&' => out.push_str("^amp;"),
            ',' => out.push_str("^x2c;"),
            '<' => out.push_str("^lt;"),
            '>' => out.push_str("^gt;"),
            '\r' => out.push_str("^xd;"),
            '\n' => out.push_str("^xa;"),
            '^' => out.push_str("^x5e;"),
            c if c.is_control() => {
                return Err(FieldError::ControlChar {
                    field,
                    code: u32::from(c),
                })
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Reverses [`escape`]. Never fails: an unknown escape is kept as it stands.
pub fn unescape(value: &str) -> String {
    unescape_with(value, LineBreaks::Protocol)
}

/// [`unescape`] for a box that writes CR and LF with `line_breaks`.
pub fn unescape_with(value: &str, line_breaks: LineBreaks) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('^') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match decode_escape(tail) {
            Some((ch, used)) => {
                out.push(line_breaks.map(ch));
                rest = &tail[used..];
            }
            None => {
                out.push('^');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `tail` starts with `^`: the character it encodes and the bytes it takes.
fn decode_escape(tail: &str) -> Option<(char, usize)> {
    let end = tail.get(1..)?.find(';')? + 1;
    let name = tail.get(1..end)?;
    let ch = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        _ => {
            let hex = name.strip_prefix('x')?;
            if hex.is_empty() || hex.len() > 6 {
                return None;
            }
            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
        }
    };
    Some((ch, end + 1))
}

/// Splits DATA into unescaped fields (an empty DATA is one empty field).
pub fn split(data: &[u8]) -> Result<Vec<String>, DataError> {
    let text = std::str::from_utf8(data).map_err(|_| DataError::NotUtf8)?;
    Ok(split_text(text, LineBreaks::Protocol))
}

/// Splits text into unescaped fields, CR and LF escaped as `line_breaks` says.
pub fn split_text(text: &str, line_breaks: LineBreaks) -> Vec<String> {
    text.split(',')
        .map(|field| unescape_with(field, line_breaks))
        .collect()
}

/// Joins already escaped fields.
pub fn join(fields: &[String]) -> Vec<u8> {
    fields.join(",").into_bytes()
}

/// Checks that `data` fits a frame of `max` bytes for command `cmd`.
pub fn fit(cmd: u8, data: Vec<u8>, max: usize) -> Result<Vec<u8>, FieldError> {
    if data.len() > max {
        return Err(FieldError::DataTooLong {
            cmd,
            len: data.len(),
            max,
        });
    }
    Ok(data)
}

/// An amount with exactly 2 decimals (`1200` -> `1200.00`); more places are an error.
pub fn amount(field: &'static str, value: Decimal) -> Result<String, FieldError> {
    fixed(field, value, 2)
}

/// A decimal with exactly `places` decimals; more places (not zeros) are an error.
pub fn fixed(field: &'static str, value: Decimal, places: u32) -> Result<String, FieldError> {
    let rounded = value.round_dp_with_strategy(places, RoundingStrategy::MidpointAwayFromZero);
    if rounded != value {
        return Err(FieldError::TooPrecise {
            field,
            value,
            places,
        });
    }
    // Not `format!("{:.N}")`: rust_decimal formats a precision into a 32-byte buffer and
    // panics on a 29-digit value with 3 places. `rounded` has at most `places` decimals: pad.
    let mut text = rounded.to_string();
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals == 0 && places > 0 {
        text.push('.');
    }
    text.extend(std::iter::repeat_n(
        '0',
        (places as usize).saturating_sub(decimals),
    ));
    Ok(text)
}

/// A quantity: at most 3 decimals, trailing zeros dropped (`2.500` -> `2.5`).
pub fn quantity(field: &'static str, value: Decimal) -> Result<String, FieldError> {
    fixed(field, value, 3)?;
    Ok(value.normalize().to_string())
}

/// Reads a decimal written with `.`.
pub fn parse_decimal(field: &'static str, value: &str) -> Result<Decimal, DataError> {
    let bad = |reason| DataError::BadField {
        field,
        value: value.to_owned(),
        reason,
    };
    if value.is_empty() || value.contains(['e', 'E', '_', ' ']) {
        return Err(bad("not a decimal number"));
    }
    Decimal::from_str(value).map_err(|_| bad("not a decimal number"))
}

/// Reads an optional decimal: empty is `None`.
pub fn parse_optional_decimal(
    field: &'static str,
    value: &str,
) -> Result<Option<Decimal>, DataError> {
    if value.is_empty() {
        return Ok(None);
    }
    parse_decimal(field, value).map(Some)
}

/// Reads an unsigned counter.
pub fn parse_count(field: &'static str, value: &str) -> Result<u64, DataError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DataError::BadField {
            field,
            value: value.to_owned(),
            reason: "not a whole number",
        });
    }
    value.parse().map_err(|_| DataError::BadField {
        field,
        value: value.to_owned(),
        reason: "number too large",
    })
}

/// Device date-time format, `yyyyMMddHHmmss` (device clock, no zone).
pub const DATETIME_FORMAT: &str = "%Y%m%d%H%M%S";
/// Device date format, `yyyyMMdd`.
pub const DATE_FORMAT: &str = "%Y%m%d";

/// `yyyyMMddHHmmss`.
pub fn datetime(value: NaiveDateTime) -> String {
    value.format(DATETIME_FORMAT).to_string()
}

/// `yyyyMMdd`.
pub fn date(value: NaiveDate) -> String {
    value.format(DATE_FORMAT).to_string()
}

/// Reads `yyyyMMddHHmmss`.
pub fn parse_datetime(field: &'static str, value: &str) -> Result<NaiveDateTime, DataError> {
    if value.len() != 14 {
        return Err(DataError::BadField {
            field,
            value: value.to_owned(),
            reason: "expected yyyyMMddHHmmss",
        });
    }
    NaiveDateTime::parse_from_str(value, DATETIME_FORMAT).map_err(|_| DataError::BadField {
        field,
        value: value.to_owned(),
        reason: "expected yyyyMMddHHmmss",
    })
}

/// Reads an optional `yyyyMMddHHmmss`: empty is `None`.
pub fn parse_optional_datetime(
    field: &'static str,
    value: &str,
) -> Result<Option<NaiveDateTime>, DataError> {
    if value.is_empty() {
        return Ok(None);
    }
    parse_datetime(field, value).map(Some)
}

/// Reads `yyyyMMdd`.
pub fn parse_date(field: &'static str, value: &str) -> Result<NaiveDate, DataError> {
    if value.len() != 8 {
        return Err(DataError::BadField {
            field,
            value: value.to_owned(),
            reason: "expected yyyyMMdd",
        });
    }
    NaiveDate::parse_from_str(value, DATE_FORMAT).map_err(|_| DataError::BadField {
        field,
        value: value.to_owned(),
        reason: "expected yyyyMMdd",
    })
}

/// An empty string for `None`.
pub fn optional(value: Option<String>) -> String {
    value.unwrap_or_default()
}

/// Text as `Some` unless empty.
pub fn non_empty(value: String) -> Option<String> {
    (!value.is_empty()).then_some(value)
}

/// Checks the number of fields.
pub fn expect_count(
    what: &'static str,
    fields: &[String],
    accepted: &[usize],
    expected: &'static str,
) -> Result<(), DataError> {
    if accepted.contains(&fields.len()) {
        Ok(())
    } else {
        Err(DataError::FieldCount {
            what,
            expected,
            got: fields.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn escapes_round_trip() {
        let raw = "A&B, <C> ^amp; line\r\nend";
        let escaped = escape("name", raw).unwrap();
        assert_eq!(escaped, "A^amp;B^x2c; ^lt;C^gt; ^x5e;amp; line^xd;^xa;end");
        assert!(!escaped.contains([',', '\n', '\r']));
        assert_eq!(unescape(&escaped), raw);
    }

    #[test]
    fn is_escaped_names_exactly_the_printable_characters_escape_rewrites() {
        for c in (' '..='~').chain(['\u{e9}', '\u{20ac}']) {
            let rewritten = escape("x", &c.to_string()).unwrap() != c.to_string();
            assert_eq!(rewritten, is_escaped(c), "{c:?}");
        }
    }

    #[test]
    fn tab_is_refused() {
        assert_eq!(
            escape("name", "a\tb"),
            Err(FieldError::ControlChar {
                field: "name",
                code: 9
            })
        );
    }

    #[test]
    fn swapped_line_breaks_read_the_other_way_round() {
        assert_eq!(unescape_with("a^xa;b^xd;", LineBreaks::Swapped), "a\rb\n");
        assert_eq!(unescape_with("a\nb", LineBreaks::Swapped), "a\nb");
        assert_eq!(unescape("a^xa;b^xd;"), "a\nb\r");
    }

    #[test]
    fn unknown_escapes_are_kept() {
        assert_eq!(unescape("a^b;c^"), "a^b;c^");
        assert_eq!(unescape("^x41;"), "A");
    }

    #[test]
    fn amounts_have_exactly_two_places() {
        assert_eq!(amount("price", dec!(1200)).unwrap(), "1200.00");
        assert_eq!(amount("price", dec!(-0.5)).unwrap(), "-0.50");
        assert_eq!(amount("price", dec!(1.230)).unwrap(), "1.23");
        assert!(matches!(
            amount("price", dec!(1.234)),
            Err(FieldError::TooPrecise { places: 2, .. })
        ));
        assert_eq!(quantity("qty", dec!(2.500)).unwrap(), "2.5");
        assert!(quantity("qty", dec!(0.0001)).is_err());
    }

    #[test]
    fn decimals_parse_strictly() {
        assert_eq!(parse_decimal("x", "16.00").unwrap(), dec!(16.00));
        assert!(parse_decimal("x", "1e3").is_err());
        assert!(parse_decimal("x", "").is_err());
        assert!(parse_decimal("x", "1,5").is_err());
    }
}
