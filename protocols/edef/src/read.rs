//! The tolerant reader: a reply's JSON object, its fields looked up by name in any case, the
//! fields the gateway uses read strictly, every other field left alone. What was odd is kept
//! as [`Anomaly`]s for the caller to log once and count; it never fails a reply by itself.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde_json::value::RawValue;

use crate::number::{self, Written};

/// Something odd in a reply that did not stop it from being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    /// The field (or `body`).
    pub field: String,
    /// What was odd, in words (no value that could be a secret: replies carry none).
    pub what: String,
}

/// Why a reply could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The body is not a JSON object.
    #[error("the reply is not a JSON object: {0}")]
    NotAnObject(String),
    /// A field the gateway uses is absent or `null`.
    #[error("the reply has no {0:?}")]
    Missing(&'static str),
    /// A field the gateway uses cannot be read.
    #[error("the reply's {field:?} cannot be read: {why}")]
    Unreadable {
        /// The field.
        field: &'static str,
        /// Why.
        why: String,
    },
}

/// A reply's top-level object.
pub struct Object {
    fields: BTreeMap<String, Box<RawValue>>,
    anomalies: Vec<Anomaly>,
}

impl Object {
    /// Reads `body` as a JSON object (any other JSON is an error).
    pub fn parse(body: &[u8]) -> Result<Object, ReplyError> {
        let fields: BTreeMap<String, Box<RawValue>> =
            serde_json::from_slice(body).map_err(|e| ReplyError::NotAnObject(e.to_string()))?;
        Ok(Object {
            fields,
            anomalies: Vec::new(),
        })
    }

    /// The raw value of `name`, looked up exactly, then in any case (noted); `None` when
    /// absent or `null`.
    pub fn raw(&mut self, name: &'static str) -> Option<&RawValue> {
        let key = if self.fields.contains_key(name) {
            name.to_owned()
        } else {
            let other = self
                .fields
                .keys()
                .find(|key| key.eq_ignore_ascii_case(name))?
                .clone();
            self.anomalies.push(Anomaly {
                field: name.to_owned(),
                what: format!("sent as {other:?}"),
            });
            other
        };
        let raw = self.fields.get(&key)?;
        (raw.get().trim() != "null").then_some(&**raw)
    }

    /// Whether `name` is present and not `null`.
    pub fn has(&mut self, name: &'static str) -> bool {
        self.raw(name).is_some()
    }

    /// A required string (a number is taken as its text, noted).
    pub fn string(&mut self, name: &'static str) -> Result<String, ReplyError> {
        self.optional_string(name)?.ok_or(ReplyError::Missing(name))
    }

    /// An optional string (a number is taken as its text, noted).
    pub fn optional_string(&mut self, name: &'static str) -> Result<Option<String>, ReplyError> {
        let Some(raw) = self.raw(name) else {
            return Ok(None);
        };
        let text = raw.get().trim().to_owned();
        if text.starts_with('"') {
            let value: String =
                serde_json::from_str(&text).map_err(|e| ReplyError::Unreadable {
                    field: name,
                    why: e.to_string(),
                })?;
            return Ok(Some(value));
        }
        if text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            self.note(name, "a number where text was expected");
            return Ok(Some(text));
        }
        Err(ReplyError::Unreadable {
            field: name,
            why: "neither text nor a number".to_owned(),
        })
    }

    /// A required amount (a number, or text holding one: noted).
    pub fn amount(&mut self, name: &'static str) -> Result<Decimal, ReplyError> {
        self.optional_amount(name)?.ok_or(ReplyError::Missing(name))
    }

    /// An optional amount; present but unreadable is an error (it is used).
    pub fn optional_amount(&mut self, name: &'static str) -> Result<Option<Decimal>, ReplyError> {
        let Some(raw) = self.raw(name) else {
            return Ok(None);
        };
        match number::read(raw) {
            Some((value, Written::Number)) => Ok(Some(value)),
            Some((value, Written::Text)) => {
                self.note(name, "an amount written as text");
                Ok(Some(value))
            }
            None => Err(ReplyError::Unreadable {
                field: name,
                why: format!("not an amount: {}", excerpt(raw.get())),
            }),
        }
    }

    /// An amount the gateway only reports (never decides on): unreadable is noted and taken
    /// as absent, so it never fails a reply.
    pub fn informative_amount(&mut self, name: &'static str) -> Option<Decimal> {
        match self.optional_amount(name) {
            Ok(value) => value,
            Err(error) => {
                let what = error.to_string();
                self.note(name, &what);
                None
            }
        }
    }

    /// Text the gateway only reports or checks for a warning: unreadable is noted and taken
    /// as absent, so it never fails a reply.
    pub fn informative_string(&mut self, name: &'static str) -> Option<String> {
        match self.optional_string(name) {
            Ok(value) => value,
            Err(error) => {
                let what = error.to_string();
                self.note(name, &what);
                None
            }
        }
    }

    /// An optional boolean (`true`/`false`, or the text of one: noted); anything else is
    /// noted and taken as absent.
    pub fn optional_bool(&mut self, name: &'static str) -> Option<bool> {
        let text = self.raw(name)?.get().trim().to_ascii_lowercase();
        match text.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            "\"true\"" => {
                self.note(name, "a boolean written as text");
                Some(true)
            }
            "\"false\"" => {
                self.note(name, "a boolean written as text");
                Some(false)
            }
            _ => {
                let what = format!("not a boolean: {}", excerpt(&text));
                self.note(name, &what);
                None
            }
        }
    }

    /// The raw JSON of an array field, each element separately; `None` when absent.
    pub fn array(&mut self, name: &'static str) -> Result<Option<Vec<Box<RawValue>>>, ReplyError> {
        let Some(raw) = self.raw(name) else {
            return Ok(None);
        };
        serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|e| ReplyError::Unreadable {
                field: name,
                why: e.to_string(),
            })
    }

    /// Every field with its raw JSON (for readers of maps such as the VAT rates).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.fields.iter().map(|(k, v)| (k.as_str(), &**v))
    }

    /// Notes an anomaly on `field`.
    pub fn note(&mut self, field: &str, what: &str) {
        self.anomalies.push(Anomaly {
            field: field.to_owned(),
            what: what.to_owned(),
        });
    }

    /// The anomalies noted so far.
    pub fn into_anomalies(self) -> Vec<Anomaly> {
        self.anomalies
    }
}

/// At most 40 characters of `text`, for messages.
pub(crate) fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn fields_are_found_in_any_case_and_the_case_is_noted() {
        let mut object = Object::parse(br#"{"UID":"x1","total":"5.00"}"#).unwrap();
        assert_eq!(object.string("uid").unwrap(), "x1");
        assert_eq!(object.amount("total").unwrap(), dec!(5.00));
        let anomalies = object.into_anomalies();
        assert_eq!(anomalies.len(), 2);
        assert_eq!(anomalies[0].field, "uid");
        assert_eq!(anomalies[1].what, "an amount written as text");
    }

    #[test]
    fn null_is_absent_and_a_used_field_that_is_absent_is_an_error() {
        let mut object = Object::parse(br#"{"uid":null}"#).unwrap();
        assert_eq!(object.string("uid"), Err(ReplyError::Missing("uid")));
        assert_eq!(object.optional_amount("total"), Ok(None));
    }

    #[test]
    fn a_used_amount_that_is_not_one_fails_the_reply() {
        let mut object = Object::parse(br#"{"total":[1]}"#).unwrap();
        assert!(matches!(
            object.amount("total"),
            Err(ReplyError::Unreadable { field: "total", .. })
        ));
    }

    #[test]
    fn anything_but_an_object_is_refused() {
        for body in [&b"[]"[..], b"", b"<html>", b"\"x\"", b"{"] {
            assert!(Object::parse(body).is_err(), "{body:?}");
        }
    }
}
