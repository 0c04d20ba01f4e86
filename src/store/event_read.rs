//! Reading a record's [`Event`] without serde's intermediate copy.
//!
//! `Event` is tagged by a `"type"` field. serde's derived reader for such an enum cannot know
//! the variant before it has seen the tag, so it first copies the whole event into a tree of
//! its own, then reads the variant from that copy. The journal's writer always puts `"type"`
//! first (serde writes the tag before the fields), so this reader takes the tag from the first
//! field and reads the two events of every invoice (`intent`, `certified`) straight from the
//! bytes that follow. Any other event, or an event whose first field is not `"type"`, is read
//! by the derived reader, as before: what is accepted does not change, only how fast.

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
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
                        return Intent::deserialize(MapAccessDeserializer::new(map))
                            .map(Event::Intent)
                    }
                    "certified" => {
                        return RegisterEntry::deserialize(MapAccessDeserializer::new(map))
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
            rest.insert(key, value);
        }
        Event::deserialize(Value::Object(rest)).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{Record, GENESIS};
    use super::*;
    use crate::store::tests::{certified_entry, intent};

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
