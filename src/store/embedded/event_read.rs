//! Reading a record's [`Event`] without serde's intermediate copy.
//!
//! `Event` is tagged by a `"type"` field. serde's derived reader for such an enum cannot know
//! the variant before it has seen the tag, so it first copies the whole event into a tree of
//! its own, then reads the variant from that copy. The journal's writer always puts `"type"`
//! first (serde writes the tag before the fields), so this reader takes the tag from the first
//! field and reads the two events of every invoice (`intent`, `certified`) straight from the
//! bytes that follow. Any other event, or an event whose first field is not `"type"`, is read
//! by the derived reader, as before: what is accepted does not change, only how fast (a
//! field twice, `"type"` included, is refused as the derived reader refuses it).

use std::borrow::Cow;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::event::Event;
use crate::model::{Intent, RegisterEntry};

/// Reads an [`Event`] (`#[serde(deserialize_with)]` of `Record::event`).
pub(super) fn event<'de, D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
    d.deserialize_map(EventVisitor)
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an event: a map tagged by \"type\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut rest = Map::new();
        match map.next_key::<String>()? {
            None => {}
            Some(key) if key == "type" => {
                let tag: String = map.next_value()?;
                match tag.as_str() {
                    "intent" => {
                        return Intent::deserialize(MapAccessDeserializer::new(AfterTag(map)))
                            .map(Event::Intent)
                    }
                    "certified" => {
                        return RegisterEntry::deserialize(MapAccessDeserializer::new(AfterTag(
                            map,
                        )))
                        .map(Event::Certified)
                    }
                    _ => {
                        rest.insert(key, Value::String(tag));
                    }
                }
            }
            Some(key) => {
                let value: Value = map.next_value()?;
                rest.insert(key, value);
            }
        }
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            match rest.entry(key) {
                Entry::Occupied(taken) => {
                    return Err(de::Error::custom(format!(
                        "duplicate field `{}`",
                        taken.key()
                    )))
                }
                Entry::Vacant(free) => {
                    free.insert(value);
                }
            }
        }
        Event::deserialize(Value::Object(rest)).map_err(de::Error::custom)
    }
}

/// The fields after an event's `"type"`: a second `"type"` is refused (the struct read from
/// them would otherwise ignore it as an unknown field).
struct AfterTag<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for AfterTag<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(Key(key)) = self.0.next_key::<Key<'de>>()? else {
            return Ok(None);
        };
        if key == "type" {
            return Err(de::Error::duplicate_field("type"));
        }
        match key {
            Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
            Cow::Owned(key) => seed.deserialize(key.into_deserializer()),
        }
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }
}

/// A field's name, borrowed from the record's bytes when it has no escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{Record, GENESIS};
    use super::*;
    use crate::store::embedded::tests::{certified_entry, intent};

    fn record(event: Event) -> Record {
        Record {
            seq: 3,
            prev: hex::encode(GENESIS),
            at: chrono::Utc::now(),
            event,
        }
    }

    #[test]
    fn every_event_reads_back_what_was_written() {
        let events = [
            Event::Intent(intent("demo", "FN-1")),
            Event::Certified(certified_entry(7, 3, intent("demo", "FN-1"))),
            Event::KeyDisabled { id: "k1".into() },
            Event::Abandoned {
                intent: 4,
                reason: "device refused".into(),
            },
        ];
        for event in events {
            let record = record(event);
            let json = serde_json::to_vec(&record).unwrap();
            let back: Record = serde_json::from_slice(&json).unwrap();
            assert_eq!(back, record);
        }
    }

    #[test]
    fn a_tag_that_is_not_first_reads_as_the_derived_reader_reads_it() {
        let Event::Intent(fields) = Event::Intent(intent("demo", "FN-2")) else {
            unreachable!()
        };
        let mut event = serde_json::to_value(&fields).unwrap();
        event["type"] = "intent".into();
        let json = serde_json::json!({"seq": 3, "prev": hex::encode(GENESIS),
            "at": "2026-11-27T06:00:00Z", "event": event});
        let back: Record = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.event, Event::Intent(fields));
        let text = serde_json::to_string(&json).unwrap();
        assert!(!text.contains("\"event\":{\"type\""), "{text}");
        let from_bytes: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(from_bytes, back);
    }

    #[test]
    fn a_field_twice_is_refused_as_the_derived_reader_refuses_it() {
        let fields = serde_json::to_string(&intent("demo", "FN-1")).unwrap();
        let fields = &fields[1..fields.len() - 1];
        for event in [
            r#"{"type":"key_enabled","id":"k1","type":"key_disabled"}"#.to_string(),
            r#"{"id":"k1","type":"key_disabled","id":"k2"}"#.to_string(),
            format!(r#"{{"type":"intent",{fields},"type":"abandoned"}}"#),
            format!(r#"{{"type":"intent",{fields},"rn":"FN-2"}}"#),
        ] {
            assert!(serde_json::from_str::<Event>(&event).is_err(), "{event}");
            let json = format!(
                r#"{{"seq":3,"prev":"{}","at":"2026-11-27T06:00:00Z","event":{event}}}"#,
                hex::encode(GENESIS)
            );
            let read = serde_json::from_str::<Record>(&json);
            assert!(read.is_err(), "{event}: {:?}", read.map(|r| r.event.kind()));
        }
    }

    #[test]
    fn an_unknown_type_or_a_missing_field_is_refused_as_before() {
        for event in [
            r#"{"type":"teleported","id":"k1"}"#,
            r#"{"type":"intent","org":"demo"}"#,
            r#"{"type":"certified","sequence":1}"#,
            r#"{"id":"k1"}"#,
            r#"{}"#,
        ] {
            let json = format!(
                r#"{{"seq":3,"prev":"{}","at":"2026-11-27T06:00:00Z","event":{event}}}"#,
                hex::encode(GENESIS)
            );
            assert!(serde_json::from_str::<Record>(&json).is_err(), "{event}");
        }
    }
}
