//! The sled index: a projection of the journal, in one sled tree with prefixed keys (so that
//! the effects of records and the "last applied" marker go in one atomic `apply_batch`: one
//! record per append, a batch of them when the open replays, `apply.rs`). Register entries are
//! not copied here: the index finds them in the journal.
//!
//! | key | value |
//! |---|---|
//! | `m:applied` | last applied seq (u64 BE) ++ its payload's SHA-256 (32 bytes) |
//! | `m:format` | index layout version (u32 BE) |
//! | `o` org | `Organization` (JSON) |
//! | `k` key id | `KeyRecord` (JSON) |
//! | `K` org `\0` key id | empty: the keys of an organization |
//! | `q` org `\0` year | Production entries counted in that quota year (u64 BE) |
//! | `r` env block | where the entries' `certified` records are in the journal: for each seq, offset (u64 BE), payload length (u32 BE), payload SHA-256 (32 bytes), and its intent record's offset and length (where its invoice is kept, `kept.rs`); 64 seqs a key (`grouped.rs`): the register in sequence order (the entries themselves are read from the journal, `entry_ref.rs`) |
//! | `R` org `\0` env block | the register entries of an organization: 64 seqs a key, as bits (`blocks.rs`) |
//! | `n` org `\0` env bucket | (rn, seq of its entry) of the rns that hash to the bucket (`grouped.rs`) |
//! | `i` intent id | its record's place in the journal (offset u64 BE, length u32 BE) ++ the open `Intent` (JSON) |
//! | `I` org `\0` env rn | id of its open intent (u64 BE) |
//! | `j` block | how resolved intents ended, certified or abandoned: 64 intent ids a key, as bits (`blocks.rs`) |
//! | `d` org `\0` env key | `IdempotencyBinding` (JSON) of an `Idempotency-Key`: kept while its intent is open or certified, removed when abandoned |
//! | `t` token id | `DashboardToken` (JSON): a dashboard sign-in token (hash only), revoked or not |
//! | `T` org `\0` token id | empty: the dashboard tokens of an organization |
//! | `c`, `a` | entries by codeDEFDGI (hashed buckets), credit notes by their original (`links.rs`) |
//!
//! env is one byte, `P` or `S`. Organization ids never contain `\0` (checked when saved).

use std::path::Path;

use serde::de::DeserializeOwned;
use sled::{IVec, Tree};

use super::blocks::{k_resolved, resolution_in};
use super::entry_ref::{decode_place, encode_place, EntryRef, JournalReader, PLACE};
use super::event::Hash;
use super::grouped::{find_rn, first_seq, k_entry_block, k_rn_bucket, last_seq, slot, slots};
use super::journal::{Checkpoint, Place};
use super::{EntryFilter, StoreError};
use crate::model::{
    Environment, IdempotencyBinding, Intent, IntentId, KeyRecord, Organization, RegisterEntry,
};

/// Layout version; an index of another version is rebuilt from the journal.
/// 3: dashboard tokens (`t`, `T`). 4: `r` holds the place and hash of the entry's record, no
/// longer the entry (whose JSON took most of the index's size); `r`, `R` and `j` hold 64 ids a
/// key, `n` hashed buckets of rns. 5: `c` and `a`, entries by codeDEFDGI and credit notes by
/// their original (`links.rs`). 6: `r` holds the place of the entry's intent record too (where
/// its invoice is kept, `kept.rs`), `i` the place of the open intent's record, and `c` is
/// grouped in hashed buckets like `n` (a key per entry had made the index of 1,000,000
/// entries slow to build and heavy to keep open).
pub(super) const FORMAT: u32 = 6;
pub(super) const META_APPLIED: &[u8] = b"m:applied";
pub(super) const META_FORMAT: &[u8] = b"m:format";
/// Present while an index is built from nothing (`Staged::commit_build`), removed by the
/// build's last batch with its marker: an index that has it is an interrupted build, whose
/// keys may be ahead of each other, and is built again from the first record.
pub(super) const META_BUILDING: &[u8] = b"m:building";
/// A [`Checkpoint`]: seq (8, BE), hash (32), start (8, BE), end (8, BE). Only a hint for the
/// open (checked against the journal before use), so an index without one is still valid.
pub(super) const META_CHECKPOINT: &[u8] = b"m:checkpoint";

/// Where the index stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Nothing in it.
    Empty,
    /// Journal records 1..=seq are applied; record seq's payload hashes to `hash`.
    At {
        /// Last applied seq.
        seq: u64,
        /// Its payload's hash.
        hash: Hash,
    },
    /// Not empty but without a readable marker of this layout: to be rebuilt.
    Unknown(String),
}

/// The projection.
pub struct Index {
    db: sled::Db,
    pub(super) tree: Tree,
    /// Where register entries are read from.
    journal: JournalReader,
}

pub(super) fn env_byte(env: Environment) -> u8 {
    match env {
        Environment::Production => b'P',
        Environment::Sandbox => b'S',
    }
}

pub(super) fn key(prefix: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = vec![prefix];
    for p in parts {
        k.extend_from_slice(p);
    }
    k
}

pub(super) fn k_org(id: &str) -> Vec<u8> {
    key(b'o', &[id.as_bytes()])
}
pub(super) fn k_key(id: &str) -> Vec<u8> {
    key(b'k', &[id.as_bytes()])
}
pub(super) fn k_key_by_org(org: &str, id: &str) -> Vec<u8> {
    key(b'K', &[org.as_bytes(), b"\0", id.as_bytes()])
}
pub(super) fn k_quota(org: &str, year: i32) -> Vec<u8> {
    let ordered = (year as u32) ^ 0x8000_0000;
    key(b'q', &[org.as_bytes(), b"\0", &ordered.to_be_bytes()])
}
pub(super) fn k_idempotency(org: &str, env: Environment, idempotency_key: &str) -> Vec<u8> {
    key(
        b'd',
        &[
            org.as_bytes(),
            b"\0",
            &[env_byte(env)],
            idempotency_key.as_bytes(),
        ],
    )
}
pub(super) fn k_intent(id: IntentId) -> Vec<u8> {
    key(b'i', &[&id.to_be_bytes()])
}
pub(super) fn k_intent_rn(org: &str, env: Environment, rn: &str) -> Vec<u8> {
    key(
        b'I',
        &[org.as_bytes(), b"\0", &[env_byte(env)], rn.as_bytes()],
    )
}
pub(super) fn k_token(id: &str) -> Vec<u8> {
    key(b't', &[id.as_bytes()])
}
pub(super) fn k_token_by_org(org: &str, id: &str) -> Vec<u8> {
    key(b'T', &[org.as_bytes(), b"\0", id.as_bytes()])
}

/// A big-endian u64 value (or the last 8 bytes of a key).
pub(super) fn be_u64(bytes: &[u8]) -> Result<u64, StoreError> {
    let tail = bytes
        .len()
        .checked_sub(8)
        .and_then(|start| <[u8; 8]>::try_from(&bytes[start..]).ok())
        .ok_or_else(|| StoreError::Invalid(format!("index holds a malformed number {bytes:?}")))?;
    Ok(u64::from_be_bytes(tail))
}

pub(super) fn json<T: DeserializeOwned>(bytes: &IVec) -> Result<T, StoreError> {
    Ok(serde_json::from_slice(bytes)?)
}

/// An `i` value: the intent record's place, then the intent (JSON).
pub(super) fn open_intent_value(intent: &Intent, place: Place) -> Result<Vec<u8>, StoreError> {
    let mut v = Vec::with_capacity(PLACE + 512);
    encode_place(&place, &mut v);
    serde_json::to_writer(&mut v, intent)?;
    Ok(v)
}

/// The intent and its record's place an `i` value holds.
pub(super) fn read_open_intent(bytes: &[u8]) -> Result<(Intent, Place), StoreError> {
    let place = decode_place(bytes).ok_or_else(|| {
        StoreError::Invalid(format!("index holds a malformed open intent {bytes:?}"))
    })?;
    Ok((serde_json::from_slice(&bytes[PLACE..])?, place))
}

impl Index {
    /// Opens (or creates) the sled database at `dir`, with a page cache of `cache_mib` MiB
    /// (sled's default is 1 GiB; see [`super::DEFAULT_INDEX_CACHE_MIB`]), reading register
    /// entries from the journal at `journal` (opened when first needed).
    ///
    /// sled's own file lock can outlive a dropped `Db` for a moment (its background threads
    /// hold the file), so a store closed and reopened in one process may find it still held.
    /// The caller holds `gateway.lock`, so no other gateway can hold it: retry for a while.
    pub fn open(dir: &Path, journal: &Path, cache_mib: u64) -> Result<Index, StoreError> {
        let mut tries = 0;
        let db = loop {
            match sled::Config::new()
                .path(dir)
                .cache_capacity(cache_mib.max(1) << 20)
                .open()
            {
                Err(sled::Error::Io(e))
                    if tries < 100 && e.to_string().contains("could not acquire lock") =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => break other?,
            }
        };
        let tree = db.open_tree("projection")?;
        Ok(Index {
            db,
            tree,
            journal: JournalReader::new(journal),
        })
    }

    /// Whether it holds nothing at all.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Where it stands.
    pub fn applied(&self) -> Result<Applied, StoreError> {
        if self.tree.is_empty() {
            return Ok(Applied::Empty);
        }
        if self.tree.contains_key(META_BUILDING)? {
            return Ok(Applied::Unknown(
                "a build from the journal was interrupted".to_string(),
            ));
        }
        let format = self.tree.get(META_FORMAT)?;
        if format.as_deref() != Some(&FORMAT.to_be_bytes()[..]) {
            return Ok(Applied::Unknown(format!(
                "index layout {format:?}, this gateway uses {FORMAT}"
            )));
        }
        match self.tree.get(META_APPLIED)? {
            Some(v) if v.len() == 40 => {
                let seq = be_u64(&v[..8])?;
                let mut hash = [0u8; 32];
                hash.copy_from_slice(&v[8..]);
                Ok(Applied::At { seq, hash })
            }
            other => Ok(Applied::Unknown(format!(
                "no valid last-applied marker ({:?} bytes)",
                other.map(|v| v.len())
            ))),
        }
    }

    /// The journal position kept by [`Index::set_checkpoint`], if any and well-formed.
    pub fn checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let Some(v) = self.tree.get(META_CHECKPOINT)? else {
            return Ok(None);
        };
        if v.len() != 56 {
            return Ok(None);
        }
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&v[8..40]);
        Ok(Some(Checkpoint {
            seq: be_u64(&v[..8])?,
            hash,
            start: be_u64(&v[40..48])?,
            end: be_u64(&v[48..])?,
        }))
    }

    /// Keeps `checkpoint` (a record the journal holds and this index has applied) for the
    /// next open to start from.
    pub fn set_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), StoreError> {
        let mut v = Vec::with_capacity(56);
        v.extend_from_slice(&checkpoint.seq.to_be_bytes());
        v.extend_from_slice(&checkpoint.hash);
        v.extend_from_slice(&checkpoint.start.to_be_bytes());
        v.extend_from_slice(&checkpoint.end.to_be_bytes());
        self.tree.insert(META_CHECKPOINT, v)?;
        Ok(())
    }

    /// The last applied seq (0 if none).
    pub fn applied_seq(&self) -> Result<u64, StoreError> {
        match self.applied()? {
            Applied::At { seq, .. } => Ok(seq),
            _ => Ok(0),
        }
    }

    /// Empties it (before a rebuild).
    pub fn clear(&self) -> Result<(), StoreError> {
        self.tree.clear()?;
        self.flush()
    }

    /// Blocking flush (never `flush_async`: sled #1308).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush()?;
        Ok(())
    }

    pub(super) fn get_json<T: DeserializeOwned>(&self, k: &[u8]) -> Result<Option<T>, StoreError> {
        self.tree.get(k)?.map(|v| json(&v)).transpose()
    }

    pub fn organization(&self, id: &str) -> Result<Option<Organization>, StoreError> {
        self.get_json(&k_org(id))
    }

    pub fn organizations(&self) -> Result<Vec<Organization>, StoreError> {
        self.tree.scan_prefix(b"o").map(|kv| json(&kv?.1)).collect()
    }

    pub fn key(&self, id: &str) -> Result<Option<KeyRecord>, StoreError> {
        self.get_json(&k_key(id))
    }

    pub fn keys_of(&self, org: &str) -> Result<Vec<KeyRecord>, StoreError> {
        let prefix = k_key_by_org(org, "");
        let mut keys = Vec::new();
        for kv in self.tree.scan_prefix(&prefix) {
            let (k, _) = kv?;
            let id = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            match self.key(&id)? {
                Some(record) => keys.push(record),
                None => {
                    return Err(StoreError::Invalid(format!(
                        "index lists key {id:?} for {org:?} but has no record of it"
                    )))
                }
            }
        }
        Ok(keys)
    }

    pub fn quota_used(&self, org: &str, year: i32) -> Result<u64, StoreError> {
        match self.tree.get(k_quota(org, year))? {
            Some(v) => be_u64(&v),
            None => Ok(0),
        }
    }

    pub fn entry(&self, env: Environment, seq: u64) -> Result<Option<RegisterEntry>, StoreError> {
        let Some(block) = self.tree.get(k_entry_block(env, seq))? else {
            return Ok(None);
        };
        match slot(&block, seq)? {
            Some(at) => self.read_entry(&at, env, seq).map(Some),
            None => Ok(None),
        }
    }

    /// The entry `at` places, read from the journal.
    pub(super) fn read_entry(
        &self,
        at: &EntryRef,
        env: Environment,
        seq: u64,
    ) -> Result<RegisterEntry, StoreError> {
        self.journal.entry(at, env, seq)
    }

    /// The seq of the entry of `org` in `env` for invoice `rn`.
    pub fn rn_seq(&self, org: &str, env: Environment, rn: &str) -> Result<Option<u64>, StoreError> {
        match self.tree.get(k_rn_bucket(org, env, rn))? {
            Some(bucket) => find_rn(&bucket, rn),
            None => Ok(None),
        }
    }

    pub fn entry_by_rn(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<RegisterEntry>, StoreError> {
        match self.rn_seq(org, env, rn)? {
            Some(seq) => self.entry(env, seq),
            None => Ok(None),
        }
    }

    pub fn entries(&self, filter: &EntryFilter) -> Result<Vec<RegisterEntry>, StoreError> {
        if filter.limit == 0 || filter.after_sequence == u64::MAX {
            return Ok(Vec::new());
        }
        let (env, first) = (filter.environment, filter.after_sequence + 1);
        let Some(org) = filter.org.as_deref() else {
            let mut out = Vec::new();
            let range = k_entry_block(env, first)..=k_entry_block(env, u64::MAX);
            for kv in self.tree.range(range) {
                let (k, block) = kv?;
                for held in slots(first_seq(&k)?, &block) {
                    let (seq, at) = held?;
                    if seq >= first {
                        out.push(self.read_entry(&at, env, seq)?);
                        if out.len() >= filter.limit {
                            return Ok(out);
                        }
                    }
                }
            }
            return Ok(out);
        };
        let mut out = Vec::new();
        self.org_seqs(org, env, (first, u64::MAX), false, &mut |seq| {
            out.push(self.listed_entry(org, env, seq)?);
            Ok(out.len() < filter.limit)
        })?;
        Ok(out)
    }

    /// The sequence the next entry of `env` takes: 1 + the last one, 1 when empty.
    pub fn next_sequence(&self, env: Environment) -> Result<u64, StoreError> {
        match self.tree.scan_prefix([b'r', env_byte(env)]).next_back() {
            Some(kv) => {
                let (k, block) = kv?;
                Ok(last_seq(first_seq(&k)?, &block)? + 1)
            }
            None => Ok(1),
        }
    }

    pub fn open_intent(&self, id: IntentId) -> Result<Option<Intent>, StoreError> {
        self.tree
            .get(k_intent(id))?
            .map(|v| Ok(read_open_intent(&v)?.0))
            .transpose()
    }

    pub fn open_intents(&self) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        self.tree
            .scan_prefix(b"i")
            .map(|kv| {
                let (k, v) = kv?;
                Ok((be_u64(&k)?, read_open_intent(&v)?.0))
            })
            .collect()
    }

    pub fn open_intent_for(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<IntentId>, StoreError> {
        self.tree
            .get(k_intent_rn(org, env, rn))?
            .map(|v| be_u64(&v))
            .transpose()
    }

    pub fn idempotency_binding(
        &self,
        org: &str,
        env: Environment,
        idempotency_key: &str,
    ) -> Result<Option<IdempotencyBinding>, StoreError> {
        self.get_json(&k_idempotency(org, env, idempotency_key))
    }

    /// How a resolved intent ended: `Some(b'c')` certified, `Some(b'a')` abandoned.
    pub fn resolution(&self, id: IntentId) -> Result<Option<u8>, StoreError> {
        match self.tree.get(k_resolved(id))? {
            Some(block) => resolution_in(&block, id),
            None => Ok(None),
        }
    }

    /// Entry `seq` of `env`, which the index lists among `org`'s.
    pub(super) fn listed_entry(
        &self,
        org: &str,
        env: Environment,
        seq: u64,
    ) -> Result<RegisterEntry, StoreError> {
        self.entry(env, seq)?.ok_or_else(|| {
            StoreError::Invalid(format!(
                "index lists {} entry {seq} for {org:?} but does not hold it",
                env.as_str()
            ))
        })
    }
}
