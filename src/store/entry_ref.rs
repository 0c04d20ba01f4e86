//! What the index keeps of a register entry: where its `certified` record is in the journal
//! and that record's hash (`r` values of layout 4, 44 bytes), and the entry read back from
//! the journal through them. The journal holds each entry once; the index only finds it.
//!
//! A read checks the record's length and CRC, then that its payload hashes to what the index
//! recorded when it applied it (so a journal changed under the index is damage, never another
//! entry), then that it is the entry asked for.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::{io_at, DamageAt, StoreError};
use super::event::{hash, Event, Hash, Record};
use super::journal::{payload_at, Place};
use crate::model::{Environment, RegisterEntry};

/// Length of an encoded [`EntryRef`]: offset (u64 BE), payload length (u32 BE), SHA-256.
pub(super) const ENCODED: usize = 8 + 4 + 32;

/// A register entry's record: its place in the journal and its payload's hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryRef {
    /// Where the `certified` record is.
    pub place: Place,
    /// SHA-256 of its payload.
    pub hash: Hash,
}

impl EntryRef {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(ENCODED);
        v.extend_from_slice(&self.place.start.to_be_bytes());
        v.extend_from_slice(&self.place.len.to_be_bytes());
        v.extend_from_slice(&self.hash);
        v
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<EntryRef, StoreError> {
        let malformed =
            || StoreError::Invalid(format!("index holds a malformed entry place {bytes:?}"));
        if bytes.len() != ENCODED {
            return Err(malformed());
        }
        let start = <[u8; 8]>::try_from(&bytes[..8]).map_err(|_| malformed())?;
        let len = <[u8; 4]>::try_from(&bytes[8..12]).map_err(|_| malformed())?;
        let hash = <[u8; 32]>::try_from(&bytes[12..]).map_err(|_| malformed())?;
        Ok(EntryRef {
            place: Place {
                start: u64::from_be_bytes(start),
                len: u32::from_be_bytes(len),
            },
            hash,
        })
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
        match record.event {
            Event::Certified(entry)
                if entry.sequence == seq && entry.request.environment == env =>
            {
                Ok(entry)
            }
            other => Err(damaged(format!(
                "the index places {} entry {seq} in a {} record",
                env.as_str(),
                other.kind()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::event::GENESIS;
    use crate::store::journal::frame;
    use crate::store::tests::{certified_entry, intent};

    #[test]
    fn an_entry_ref_round_trips_in_44_bytes() {
        let at = EntryRef {
            place: Place {
                start: 1 << 40,
                len: 1234,
            },
            hash: [7; 32],
        };
        assert_eq!(at.encode().len(), 44);
        assert_eq!(EntryRef::decode(&at.encode()).unwrap(), at);
        assert!(EntryRef::decode(&at.encode()[..43]).is_err());
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
                at: crate::store::tests::time(3),
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
        };
        assert!(damage(&intent_at, Environment::Production, 1).contains("intent record"));
        // A record rewritten with a valid CRC: its hash is not the one applied.
        let changed = EntryRef {
            hash: [0; 32],
            ..at
        };
        assert!(damage(&changed, Environment::Production, 1).contains("sha256"));
    }
}
