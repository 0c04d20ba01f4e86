//! What the index keeps of a register entry: where its `certified` record is in the journal
//! and that record's hash, and where its intent's record is (`r` values of layout 6, 56
//! bytes), and the entry read back from the journal through them. The journal holds each
//! entry once; the index only finds it.
//!
//! A read checks the record's length and CRC, then that its payload hashes to what the index
//! recorded when it applied it (so a journal changed under the index is damage, never another
//! entry), then that it is the entry asked for. An entry journaled since 1.8.0 does not carry
//! the invoice it certified: its intent's record keeps it (`kept.rs`), and the read takes it
//! from there, the one place every reader (exports, receipts, `log show`, the dashboard) gets
//! an entry's kept invoice from.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::{io_at, DamageAt, StoreError};
use super::event::{hash, Event, Hash, Record};
use super::journal::{payload_at, Place};
use super::kept;
use crate::model::{Environment, RegisterEntry};

/// Length of an encoded [`Place`]: offset (u64 BE), payload length (u32 BE).
pub(super) const PLACE: usize = 8 + 4;

/// Length of an encoded [`EntryRef`]: the entry's place, its SHA-256, its intent's place.
pub(super) const ENCODED: usize = PLACE + 32 + PLACE;

/// A register entry's record: its place in the journal and its payload's hash, and where its
/// intent's record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryRef {
    /// Where the `certified` record is.
    pub place: Place,
    /// SHA-256 of its payload.
    pub hash: Hash,
    /// Where the `intent` record it resolves is (`len` 0: not known, for an entry that
    /// carries its invoice or kept none).
    pub intent: Place,
}

/// No place: a record's payload is never empty.
pub(super) const NO_PLACE: Place = Place { start: 0, len: 0 };

/// `place` as [`PLACE`] bytes.
pub(super) fn encode_place(place: &Place, into: &mut Vec<u8>) {
    into.extend_from_slice(&place.start.to_be_bytes());
    into.extend_from_slice(&place.len.to_be_bytes());
}

/// The place `bytes` ([`PLACE`] of them) encode.
pub(super) fn decode_place(bytes: &[u8]) -> Option<Place> {
    let start = <[u8; 8]>::try_from(bytes.get(..8)?).ok()?;
    let len = <[u8; 4]>::try_from(bytes.get(8..PLACE)?).ok()?;
    Some(Place {
        start: u64::from_be_bytes(start),
        len: u32::from_be_bytes(len),
    })
}

impl EntryRef {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(ENCODED);
        encode_place(&self.place, &mut v);
        v.extend_from_slice(&self.hash);
        encode_place(&self.intent, &mut v);
        v
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<EntryRef, StoreError> {
        let malformed =
            || StoreError::Invalid(format!("index holds a malformed entry place {bytes:?}"));
        if bytes.len() != ENCODED {
            return Err(malformed());
        }
        let place = decode_place(&bytes[..PLACE]).ok_or_else(malformed)?;
        let hash = <[u8; 32]>::try_from(&bytes[PLACE..PLACE + 32]).map_err(|_| malformed())?;
        let intent = decode_place(&bytes[PLACE + 32..]).ok_or_else(malformed)?;
        Ok(EntryRef {
            place,
            hash,
            intent,
        })
    }

    /// The same record (place and hash), whatever is known of its intent's.
    pub(super) fn same_record(&self, other: &EntryRef) -> bool {
        self.place == other.place && self.hash == other.hash
    }
}

/// The journal file, opened for reading on first use (the index may be opened before the
/// journal is created).
#[derive(Debug)]
pub(super) struct JournalReader {
    path: PathBuf,
    file: OnceLock<File>,
}

impl JournalReader {
    pub(super) fn new(path: &Path) -> JournalReader {
        JournalReader {
            path: path.to_path_buf(),
            file: OnceLock::new(),
        }
    }

    fn file(&self) -> Result<&File, StoreError> {
        if let Some(file) = self.file.get() {
            return Ok(file);
        }
        let file = File::open(&self.path).map_err(|e| io_at(&self.path, "opening", e))?;
        Ok(self.file.get_or_init(|| file))
    }

    /// Entry `seq` of the `env` register, from the record `at` points to.
    pub(super) fn entry(
        &self,
        at: &EntryRef,
        env: Environment,
        seq: u64,
    ) -> Result<RegisterEntry, StoreError> {
        let payload = payload_at(self.file()?, at.place, &self.path)?;
        let damaged =
            |reason: String| StoreError::damaged(DamageAt::Offset(at.place.start), reason);
        if hash(&payload) != at.hash {
            return Err(damaged(format!(
                "the record here is not the one the index applied as {} entry {seq} (its sha256 \
                 differs): rebuild the index from the journal (`index rebuild`) once the journal \
                 is known good",
                env.as_str()
            )));
        }
        let record: Record = serde_json::from_slice(&payload)
            .map_err(|e| damaged(format!("record with a valid CRC does not parse: {e}")))?;
        let mut entry = match record.event {
            Event::Certified(entry)
                if entry.sequence == seq && entry.request.environment == env =>
            {
                entry
            }
            other => {
                return Err(damaged(format!(
                    "the index places {} entry {seq} in a {} record",
                    env.as_str(),
                    other.kind()
                )))
            }
        };
        if entry.request.invoice.is_none() && at.intent.len > 0 {
            self.take_kept_invoice(&mut entry, at.intent)?;
        }
        Ok(entry)
    }

    /// Gives `entry` the invoice its intent's record (at `intent`) keeps (`kept.rs`).
    fn take_kept_invoice(
        &self,
        entry: &mut RegisterEntry,
        intent: Place,
    ) -> Result<(), StoreError> {
        let payload = payload_at(self.file()?, intent, &self.path)?;
        let damaged = |reason: String| StoreError::damaged(DamageAt::Offset(intent.start), reason);
        let record: Record = serde_json::from_slice(&payload)
            .map_err(|e| damaged(format!("record with a valid CRC does not parse: {e}")))?;
        kept::take_from_intent(entry, record).map_err(damaged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::event::GENESIS;
    use crate::store::embedded::journal::frame;
    use crate::store::embedded::tests::{certified_entry, intent};

    #[test]
    fn an_entry_ref_round_trips_in_56_bytes() {
        let at = EntryRef {
            place: Place {
                start: 1 << 40,
                len: 1234,
            },
            hash: [7; 32],
            intent: Place {
                start: (1 << 40) - 900,
                len: 890,
            },
        };
        assert_eq!(at.encode().len(), 56);
        assert_eq!(EntryRef::decode(&at.encode()).unwrap(), at);
        assert!(EntryRef::decode(&at.encode()[..55]).is_err());
    }

    #[test]
    fn an_entry_is_read_back_only_from_the_record_the_index_applied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.log");
        let reader = JournalReader::new(&path);
        let record = |seq: u64, event: Event| {
            serde_json::to_vec(&Record {
                seq,
                prev: hex::encode(GENESIS),
                at: crate::store::embedded::tests::time(3),
                event,
            })
            .unwrap()
        };
        let entry = certified_entry(1, 1, intent("demo", "FN-1"));
        let first = record(1, Event::Intent(intent("demo", "FN-1")));
        let second = record(2, Event::Certified(entry.clone()));
        let mut bytes = frame(&first);
        let at = EntryRef {
            place: Place {
                start: bytes.len() as u64,
                len: second.len() as u32,
            },
            hash: hash(&second),
            intent: NO_PLACE,
        };
        bytes.extend(frame(&second));
        // Not there yet: an I/O error naming the file.
        let missing = reader.entry(&at, Environment::Production, 1).unwrap_err();
        assert!(missing.to_string().contains("journal.log"), "{missing}");
        std::fs::write(&path, &bytes).unwrap();
        let reader = JournalReader::new(&path);
        assert_eq!(
            reader.entry(&at, Environment::Production, 1).unwrap(),
            entry
        );

        let damage = |at: &EntryRef, env, seq| match reader.entry(at, env, seq) {
            Err(StoreError::Damaged { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        // Another environment or sequence than the record's.
        assert!(damage(&at, Environment::Sandbox, 1).contains("certified record"));
        assert!(damage(&at, Environment::Production, 2).contains("certified record"));
        // The index points at the intent record.
        let intent_at = EntryRef {
            place: Place {
                start: 0,
                len: first.len() as u32,
            },
            hash: hash(&first),
            intent: NO_PLACE,
        };
        assert!(damage(&intent_at, Environment::Production, 1).contains("intent record"));
        // An entry without its invoice whose intent the index places at another record.
        let third = record(3, Event::certified(&entry));
        let at_third = EntryRef {
            place: Place {
                start: bytes.len() as u64,
                len: third.len() as u32,
            },
            hash: hash(&third),
            intent: at.place,
        };
        bytes.extend(frame(&third));
        std::fs::write(&path, &bytes).unwrap();
        let reader = JournalReader::new(&path);
        match reader.entry(&at_third, Environment::Production, 1) {
            Err(StoreError::Damaged { reason, .. }) => {
                assert!(reason.contains("certified record"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        let at_third = EntryRef {
            intent: intent_at.place,
            ..at_third
        };
        assert_eq!(
            reader.entry(&at_third, Environment::Production, 1).unwrap(),
            entry
        );
        // A record rewritten with a valid CRC: its hash is not the one applied.
        let changed = EntryRef {
            hash: [0; 32],
            ..at
        };
        assert!(damage(&changed, Environment::Production, 1).contains("sha256"));
    }
}
