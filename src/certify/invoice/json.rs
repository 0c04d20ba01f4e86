//! Reading JSON with paths: the request body one object level at a time through
//! `serde_json::value::RawValue`, so that every refusal names the JSON path of the field at
//! fault (`items[2].pricee`), which `#[serde(deny_unknown_fields)]` cannot do, and decimals
//! are read from their text, never through `f64`.

use rust_decimal::Decimal;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{code, quoted, ValidationError};
use crate::i18n::format::is_hidden_effect;
use crate::msg;

/// Checks `body` (UTF-8, nesting at most `max_depth`, one JSON value) and returns its value,
/// unparsed.
pub(crate) fn root(body: &[u8], max_depth: usize) -> Result<&RawValue, ValidationError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        ValidationError::body(
            code::MALFORMED_JSON,
            msg!("err-body-not-utf8", byte = e.valid_up_to()),
        )
    })?;
    check_depth(body, max_depth)?;
    serde_json::from_str(text).map_err(|e| syntax_error("", &e))
}

/// Refuses nesting deeper than `max` by counting brackets outside strings. It runs before
/// any recursive parser, so a `[[[[...` bomb costs one pass and no stack.
pub(crate) fn check_depth(bytes: &[u8], max: usize) -> Result<(), ValidationError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(ValidationError::body(
                        code::TOO_DEEP,
                        msg!("err-body-too-deep", max = max, byte = at),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The JSON kind of a raw value, from its first byte (serde_json strips leading blanks); the
/// messages' `$actual` and `$expected` select their words by it.
fn kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// `expected`: `object`, `array`, `string` or `decimal`.
fn wrong_type(path: &str, expected: &'static str, raw: &RawValue) -> ValidationError {
    ValidationError::at(
        code::WRONG_TYPE,
        path,
        msg!(
            "err-wrong-type",
            field = path,
            expected = expected,
            actual = kind(raw)
        ),
    )
}

/// An object's entries in order, keys unescaped, values unparsed.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    out.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Entries(out))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// One JSON object checked against its schema: `values[i]` is the value of `fields[i]`,
/// `None` when absent or `null`.
pub(crate) struct Obj<'a> {
    path: String,
    fields: &'static [&'static str],
    values: Vec<Option<&'a RawValue>>,
}

impl<'a> Obj<'a> {
    /// Reads `raw` as an object whose keys must be in `fields`, each at most once.
    pub(crate) fn read(
        raw: &'a RawValue,
        path: &str,
        fields: &'static [&'static str],
    ) -> Result<Obj<'a>, ValidationError> {
        if !raw.get().starts_with('{') {
            return Err(if path.is_empty() {
                ValidationError::body(
                    code::WRONG_TYPE,
                    msg!("err-body-not-object", actual = kind(raw)),
                )
            } else {
                wrong_type(path, "object", raw)
            });
        }
        let Entries(entries) =
            serde_json::from_str(raw.get()).map_err(|e| syntax_error(path, &e))?;
        let mut values = vec![None; fields.len()];
        let mut seen = vec![false; fields.len()];
        for (key, value) in entries {
            let child = join(path, &key);
            let Some(index) = fields.iter().position(|f| *f == key) else {
                return Err(ValidationError::at(
                    code::UNKNOWN_FIELD,
                    &child,
                    msg!(
                        "err-unknown-field",
                        field = &child,
                        known = fields.join(", ")
                    ),
                ));
            };
            if std::mem::replace(&mut seen[index], true) {
                return Err(ValidationError::at(
                    code::DUPLICATE_FIELD,
                    &child,
                    msg!("err-duplicate-field", field = &child),
                ));
            }
            values[index] = (value.get() != "null").then_some(value);
        }
        Ok(Obj {
            path: path.to_owned(),
            fields,
            values,
        })
    }

    fn child(&self, key: &str) -> String {
        join(&self.path, key)
    }

    fn get(&self, key: &str) -> Option<&'a RawValue> {
        let index = self.fields.iter().position(|f| *f == key)?;
        self.values.get(index).copied().flatten()
    }

    /// A text field: a JSON string.
    pub(crate) fn text(&self, key: &str) -> Result<Option<String>, ValidationError> {
        let Some(raw) = self.get(key) else {
            return Ok(None);
        };
        let path = self.child(key);
        match kind(raw) {
            "string" => text_of(raw, &path).map(Some),
            _ => Err(wrong_type(&path, "string", raw)),
        }
    }

    /// A decimal field: a JSON string or number holding a plain decimal; `""` is absent.
    pub(crate) fn decimal(&self, key: &str) -> Result<Option<Decimal>, ValidationError> {
        let Some(raw) = self.get(key) else {
            return Ok(None);
        };
        let path = self.child(key);
        let text = match kind(raw) {
            "number" => raw.get().to_owned(),
            "string" => text_of(raw, &path)?,
            _ => return Err(wrong_type(&path, "decimal", raw)),
        };
        if text.is_empty() {
            return Ok(None);
        }
        parse_decimal(&text).map(Some).map_err(|reason| {
            ValidationError::at(
                code::BAD_DECIMAL,
                &path,
                msg!(
                    "err-bad-decimal",
                    field = &path,
                    value = quoted(&text),
                    reason = reason.as_str()
                ),
            )
        })
    }

    /// An array of objects with the keys `fields`, each read by `build`.
    pub(crate) fn array<T>(
        &self,
        key: &str,
        fields: &'static [&'static str],
        build: fn(&Obj<'_>) -> Result<T, ValidationError>,
    ) -> Result<Option<Vec<T>>, ValidationError> {
        let Some(raw) = self.get(key) else {
            return Ok(None);
        };
        let path = self.child(key);
        if !raw.get().starts_with('[') {
            return Err(wrong_type(&path, "array", raw));
        }
        let elements: Vec<&RawValue> =
            serde_json::from_str(raw.get()).map_err(|e| syntax_error(&path, &e))?;
        elements
            .iter()
            .enumerate()
            .map(|(i, e)| build(&Obj::read(e, &format!("{path}[{i}]"), fields)?))
            .collect::<Result<Vec<T>, _>>()
            .map(Some)
    }

    /// A nested object with the keys `fields`, read by `build`.
    pub(crate) fn object<T>(
        &self,
        key: &str,
        fields: &'static [&'static str],
        build: fn(&Obj<'_>) -> Result<T, ValidationError>,
    ) -> Result<Option<T>, ValidationError> {
        match self.get(key) {
            None => Ok(None),
            Some(raw) => build(&Obj::read(raw, &self.child(key), fields)?).map(Some),
        }
    }
}

/// A syntax error inside the value at `path` (the body when empty), said with the
/// catalogue's words for what is wrong ([`json_fault`]) and, for the body, where (line and
/// column, from 1); never the parser's own English.
fn syntax_error(path: &str, error: &serde_json::Error) -> ValidationError {
    let fault = json_fault(error);
    let message = if path.is_empty() {
        msg!(
            "err-body-not-json",
            fault = fault,
            line = error.line(),
            column = error.column()
        )
    } else {
        // A nested value was cut out of a body that parsed: its positions are its own, not
        // the body's, so only the field is named.
        msg!("err-json-syntax-at", field = path, fault = fault)
    };
    ValidationError::body(code::MALFORMED_JSON, message)
}

/// What a JSON error is, as the key the catalogue's `json-fault` selects its words by.
/// serde_json classifies its errors only coarsely ([`serde_json::error::Category`]); the kind
/// within a class is read from its fixed text (its `Display` without the position), which
/// the tests pin for every kind a body can produce. A text not known here is `other`.
pub(crate) fn json_fault(error: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    let text = error.to_string();
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(what, _)| what);
    match (error.classify(), what) {
        (Category::Eof, "EOF while parsing a list") => "eof-list",
        (Category::Eof, "EOF while parsing an object") => "eof-object",
        (Category::Eof, "EOF while parsing a string") => "eof-string",
        (Category::Eof, _) => "eof-value",
        (Category::Syntax, "expected `:`") => "expected-colon",
        (Category::Syntax, "expected `,` or `]`") => "expected-comma-list",
        (Category::Syntax, "expected `,` or `}`") => "expected-comma-object",
        (Category::Syntax, "expected ident" | "expected value") => "expected-value",
        (Category::Syntax, "expected `\"`" | "key must be a string") => "key-not-string",
        (Category::Syntax, "invalid escape") => "invalid-escape",
        (Category::Syntax, "invalid number") => "invalid-number",
        (Category::Syntax, "number out of range") => "number-out-of-range",
        (
            Category::Syntax,
            "invalid unicode code point"
            | "lone leading surrogate in hex escape"
            | "unexpected end of hex escape",
        ) => "invalid-unicode",
        (Category::Syntax, w) if w.starts_with("control character") => "control-in-string",
        (Category::Syntax, "trailing comma") => "trailing-comma",
        (Category::Syntax, "trailing characters") => "trailing-characters",
        (Category::Syntax, "recursion limit exceeded") => "too-deep",
        _ => "other",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A JSON string's text; a string that holds no text (a `\uD800`-`\uDFFF` escape without
/// its pair: JSON's grammar allows it, Unicode has no such character) is refused as such, and
/// so is a text with a character that would change what a person reads around it
/// ([`check_text`]).
fn text_of(raw: &RawValue, path: &str) -> Result<String, ValidationError> {
    let text = string_of(raw).ok_or_else(|| {
        ValidationError::at(
            code::WRONG_TYPE,
            path,
            msg!("err-lone-surrogate", field = path),
        )
    })?;
    check_text(&text, path)?;
    Ok(text)
}

/// Refuses, in any text of the body, what would let it forge what a person reads around it
/// (`log show` on a terminal, the dashboard, an export, a receipt): every control character
/// (71: C0 including TAB, CR and LF, DEL, C1), and the characters that reorder or break a
/// line without being control characters (73: the bidirectional embeddings, overrides,
/// isolates and marks, and the Unicode line and paragraph separators): the characters of
/// [`is_hidden_effect`], the one definition the displays share. Checked as each text is read,
/// so that no text field, present or future, escapes it; `field` is its exact path.
pub(crate) fn check_text(text: &str, path: &str) -> Result<(), ValidationError> {
    let Some((index, c)) = text.chars().enumerate().find(|(_, c)| is_hidden_effect(*c)) else {
        return Ok(());
    };
    let (char_code, position) = (format!("{:04X}", u32::from(c)), index + 1);
    let (code, message) = if c.is_control() {
        (
            code::CONTROL_CHARACTER,
            msg!(
                "err-control-character",
                field = path,
                char = char_code,
                name = control_name(c),
                position = position
            ),
        )
    } else {
        (
            code::LAYOUT_CHARACTER,
            msg!(
                "err-layout-character",
                field = path,
                char = char_code,
                position = position
            ),
        )
    };
    Err(ValidationError::at(code, path, message))
}

/// The key `err-control-character`'s `$name` selects the control character's name by.
pub(crate) fn control_name(c: char) -> &'static str {
    match c {
        '\t' => "tab",
        '\n' => "lf",
        '\r' => "cr",
        '\u{1B}' => "esc",
        _ => "other",
    }
}

fn string_of(raw: &RawValue) -> Option<String> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// Why a text is not a plain decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecimalFault {
    /// `1e3`.
    Exponent,
    /// Letters, blanks, a `+`, a comma...
    NotANumber,
    /// More than 28 significant digits.
    TooManyDigits,
}

impl DecimalFault {
    /// The key `err-bad-decimal`'s `$reason` selects its words by.
    fn as_str(self) -> &'static str {
        match self {
            DecimalFault::Exponent => "exponent",
            DecimalFault::NotANumber => "other",
            DecimalFault::TooManyDigits => "digits",
        }
    }
}

/// Reads `-?digits[.digits]` exactly (at most 28 significant digits, scale kept, `-0` read
/// as `0`); why not, otherwise.
pub(crate) fn parse_decimal(text: &str) -> Result<Decimal, DecimalFault> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if unsigned.contains(['e', 'E']) {
        return Err(DecimalFault::Exponent);
    }
    if !digits(whole) || !fraction.is_none_or(digits) {
        return Err(DecimalFault::NotANumber);
    }
    let mut value = Decimal::from_str_exact(text).map_err(|_| DecimalFault::TooManyDigits)?;
    if value.is_zero() {
        // "-0.00" is 0.00: a negative sign on zero would read as negative downstream.
        value.set_sign_positive(true);
    }
    Ok(value)
}
