//! The writes of records not yet in sled ([`Staged`]): read back before sled's own values,
//! committed as one atomic sled batch. How a record becomes writes is `apply.rs`.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use serde::de::DeserializeOwned;
use sled::{Batch, IVec};

use super::blocks::{self, k_resolved, resolution_in};
use super::error::StoreError;
use super::event::Hash;
use super::grouped::{find_rn, k_rn_bucket};
use super::index::{
    be_u64, json, k_intent, k_intent_rn, open_intent_value, read_open_intent, Index, FORMAT,
    META_APPLIED, META_BUILDING, META_FORMAT,
};
use super::journal::Place;
use crate::model::{BoxCounters, Environment, Intent, IntentId};

/// Records per sled batch when the open replays or rebuilds the index: large enough that
/// the markers and counters rewritten by every record are written once per batch, small
/// enough that the staged writes stay a few MiB.
pub(super) const REPLAY_BATCH: usize = 4096;

/// A build's buckets kept in memory (bytes of their values) before they are written to sled
/// (`Staged::commit_build`); small in unit tests, so that their builds of a few batches
/// write them more than once.
const BUILD_BUCKETS_MAX: usize = if cfg!(test) { 16 << 10 } else { 64 << 20 };

/// One staged write.
pub(super) enum Write {
    Put(IVec),
    /// A key sled does not hold (it was looked up): removed again, it is just forgotten.
    PutNew(IVec),
    Delete,
    /// Not a write: sled's value, read for a record and kept for the next one (an rn's
    /// bucket is read by its intent, then written by its certification).
    Read(IVec),
}

/// Writes not yet in sled, read back before sled's own values.
pub(super) struct Staged<'a> {
    pub(super) index: &'a Index,
    /// Hashed, not ordered: a batch of a rebuild holds tens of thousands of keys, looked up
    /// several times per record, and sled takes a batch in any order.
    pub(super) writes: FxHashMap<Vec<u8>, Write>,
    /// Each box's counters as the staged records leave them (`boxes.rs`), by `b` key:
    /// encoded into `writes` once per commit instead of once per entry.
    pub(super) boxes: FxHashMap<Vec<u8>, BoxCounters>,
    /// Intents opened (`Some`, with their record's place) or closed (`None`) by the staged
    /// records: their `i` keys, kept apart so that an intent opened and certified in one
    /// batch is never encoded, and its key never written then removed.
    pub(super) intents: BTreeMap<IntentId, Option<(Intent, Place)>>,
    /// No `i` nor `j` key of sled is above this intent id (looked up once per batch): a
    /// newer intent is known to be neither open nor resolved there without a lookup.
    tree_intents_upto: Option<u64>,
    /// sled's `I` keys (the rns of open intents), when there are few (looked up once per
    /// batch): an intent's rn is then checked without a lookup.
    tree_open_rns: Option<Option<BTreeSet<IVec>>>,
    /// The last record staged or applied (its seq; 0 for none).
    pub(super) applied: u64,
    /// The hash of the last record staged since the last commit: the marker the commit
    /// writes with the records' effects.
    pub(super) last_hash: Option<Hash>,
    /// The next register sequence of (Production, Sandbox), once looked up.
    pub(super) next: [Option<u64>; 2],
    /// Records staged since the last commit.
    pub(super) records: usize,
    /// An index built from nothing (`commit_build`): bytes of the buckets kept in `writes`
    /// across its batches.
    pub(super) kept_buckets: usize,
}

impl Index {
    /// An empty set of writes over this index.
    pub(super) fn staged(&self) -> Result<Staged<'_>, StoreError> {
        Ok(Staged {
            index: self,
            writes: FxHashMap::default(),
            boxes: FxHashMap::default(),
            intents: BTreeMap::new(),
            tree_intents_upto: None,
            tree_open_rns: None,
            applied: self.applied_seq()?,
            last_hash: None,
            next: [None, None],
            records: 0,
            kept_buckets: 0,
        })
    }
}

pub(super) fn env_slot(env: Environment) -> usize {
    match env {
        Environment::Production => 0,
        Environment::Sandbox => 1,
    }
}

impl Staged<'_> {
    /// Records staged since the last commit.
    pub(super) fn len(&self) -> usize {
        self.records
    }

    /// Writes the staged records to sled in one atomic batch.
    pub(super) fn commit(&mut self) -> Result<(), StoreError> {
        self.stage_boxes()?;
        if let Some(hash) = self.last_hash.take() {
            let mut marker = self.applied.to_be_bytes().to_vec();
            marker.extend_from_slice(&hash);
            self.insert(META_APPLIED.to_vec(), marker);
            self.insert(META_FORMAT.to_vec(), &FORMAT.to_be_bytes()[..]);
        }
        if self.writes.is_empty() && self.intents.is_empty() {
            return Ok(());
        }
        self.write_batch(false)
    }

    /// The staged writes into one sled batch, but for the buckets when `keep_buckets` (they
    /// stay staged, their bytes counted in `kept_buckets`).
    fn write_batch(&mut self, keep_buckets: bool) -> Result<(), StoreError> {
        let mut batch = Batch::default();
        let upto = self.tree_intents_upto()?;
        self.batch_intents(&mut batch, upto)?;
        let mut kept = 0;
        self.writes.retain(|k, write| {
            if keep_buckets && super::grouped::is_bucket(k) {
                if let Write::Put(v) | Write::PutNew(v) | Write::Read(v) = write {
                    kept += v.len();
                }
                return true;
            }
            match std::mem::replace(write, Write::Delete) {
                Write::Put(v) | Write::PutNew(v) => batch.insert(k.as_slice(), v),
                Write::Delete => batch.remove(k.as_slice()),
                Write::Read(_) => {}
            }
            false
        });
        self.kept_buckets = kept;
        self.records = 0;
        self.tree_intents_upto = None;
        self.tree_open_rns = None;
        self.index.tree.apply_batch(batch)?;
        Ok(())
    }

    /// A batch of an index built from nothing (from its first record, the index empty).
    ///
    /// The buckets of rns and codeDEFDGIs (`grouped.rs`, `links.rs`) are keys at random
    /// places, each rewritten by about one entry in a batch: written to sled at every batch,
    /// they were most of a build's time. Here they stay in `writes` from batch to batch, and
    /// go to sled once they hold `BUILD_BUCKETS_MAX` bytes, and at the build's end
    /// (`commit_built`). So during a build sled's keys are not "records 1..=n applied" for
    /// any n: no batch before the last one writes the last-applied marker, and the first
    /// one writes `m:building` ([`META_BUILDING`]), which the last one removes with the
    /// marker. An index interrupted in between (a crash, a damaged record) is an unknown
    /// index at the next open, built again from the first record.
    pub(super) fn commit_build(&mut self) -> Result<(), StoreError> {
        self.insert(META_BUILDING.to_vec(), &[][..]);
        if self.kept_buckets >= BUILD_BUCKETS_MAX {
            self.write_buckets()?;
        }
        self.stage_boxes()?;
        self.write_batch(true)
    }

    /// The last batch of a build (`commit_build`): its buckets, then everything else with the
    /// last-applied marker, `m:building` removed in the same batch.
    pub(super) fn commit_built(&mut self) -> Result<(), StoreError> {
        self.write_buckets()?;
        self.remove(META_BUILDING.to_vec());
        self.commit()
    }

    /// The buckets staged, to sled in small batches (a large sled batch keeps a copy of every
    /// page it changes until it ends), in key order.
    fn write_buckets(&mut self) -> Result<(), StoreError> {
        let (buckets, rest): (FxHashMap<_, _>, FxHashMap<_, _>) = std::mem::take(&mut self.writes)
            .into_iter()
            .partition(|(k, _)| super::grouped::is_bucket(k));
        self.writes = rest;
        let mut buckets: Vec<(Vec<u8>, IVec)> = buckets
            .into_iter()
            .filter_map(|(k, write)| match write {
                Write::Put(v) | Write::PutNew(v) => Some((k, v)),
                Write::Delete | Write::Read(_) => None,
            })
            .collect();
        buckets.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for chunk in buckets.chunks(REPLAY_BATCH) {
            let mut batch = Batch::default();
            for (k, v) in chunk {
                batch.insert(k.as_slice(), v.clone());
            }
            self.index.tree.apply_batch(batch)?;
        }
        self.kept_buckets = 0;
        Ok(())
    }

    /// The `i` keys of the intents opened or closed by the staged records, into `batch`.
    fn batch_intents(&mut self, batch: &mut Batch, upto: u64) -> Result<(), StoreError> {
        for (id, intent) in std::mem::take(&mut self.intents) {
            match intent {
                Some((intent, place)) => {
                    batch.insert(k_intent(id), open_intent_value(&intent, place)?)
                }
                None if id <= upto => batch.remove(k_intent(id)),
                None => {} // opened and closed in this batch: never in sled
            }
        }
        Ok(())
    }

    /// The highest intent id of sled's `i` and `j` keys.
    pub(super) fn tree_intents_upto(&mut self) -> Result<u64, StoreError> {
        if let Some(upto) = self.tree_intents_upto {
            return Ok(upto);
        }
        let mut upto = 0;
        if let Some(kv) = self.index.tree.scan_prefix(b"i").next_back() {
            upto = be_u64(&kv?.0)?;
        }
        if let Some(kv) = self.index.tree.scan_prefix(b"j").next_back() {
            // The last id of the last block.
            let block = be_u64(&kv?.0)?;
            upto = upto.max(block.saturating_add(1).saturating_mul(blocks::BLOCK) - 1);
        }
        self.tree_intents_upto = Some(upto);
        Ok(upto)
    }

    pub(super) fn get(&self, k: &[u8]) -> Result<Option<IVec>, StoreError> {
        match self.writes.get(k) {
            Some(Write::Put(v) | Write::PutNew(v) | Write::Read(v)) => Ok(Some(v.clone())),
            Some(Write::Delete) => Ok(None),
            None => Ok(self.index.tree.get(k)?),
        }
    }

    pub(super) fn get_json<T: DeserializeOwned>(&self, k: &[u8]) -> Result<Option<T>, StoreError> {
        self.get(k)?.map(|v| json(&v)).transpose()
    }

    pub(super) fn insert(&mut self, k: Vec<u8>, v: impl Into<IVec>) {
        self.writes.insert(k, Write::Put(v.into()));
    }

    pub(super) fn remove(&mut self, k: Vec<u8>) {
        if let Some(Write::PutNew(_)) = self.writes.get(&k) {
            self.writes.remove(&k);
        } else {
            self.writes.insert(k, Write::Delete);
        }
    }

    pub(super) fn resolution(&mut self, id: IntentId) -> Result<Option<u8>, StoreError> {
        let k = k_resolved(id);
        if !self.writes.contains_key(&k) && id > self.tree_intents_upto()? {
            return Ok(None);
        }
        match self.get(&k)? {
            Some(block) => resolution_in(&block, id),
            None => Ok(None),
        }
    }

    /// The open intent `id` and its record's place, to be closed by the caller
    /// (`close_intent`): a staged one is taken out of the staged writes at once.
    pub(super) fn take_open_intent(
        &mut self,
        id: IntentId,
    ) -> Result<Option<(Intent, Place)>, StoreError> {
        if let Some(staged) = self.intents.get_mut(&id) {
            return Ok(staged.take());
        }
        if id > self.tree_intents_upto()? {
            return Ok(None);
        }
        self.index
            .tree
            .get(k_intent(id))?
            .map(|v| read_open_intent(&v))
            .transpose()
    }

    pub(super) fn open_intent_for(
        &mut self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<IntentId>, StoreError> {
        let k = k_intent_rn(org, env, rn);
        if !self.writes.contains_key(&k) {
            if let Some(open) = self.tree_open_rns()? {
                if !open.contains(k.as_slice()) {
                    return Ok(None);
                }
            }
        }
        self.get(&k)?.map(|v| be_u64(&v)).transpose()
    }

    /// sled's `I` keys if there are at most 1024.
    pub(super) fn tree_open_rns(&mut self) -> Result<Option<&BTreeSet<IVec>>, StoreError> {
        if self.tree_open_rns.is_none() {
            let mut keys = BTreeSet::new();
            let mut few = true;
            for k in self.index.tree.scan_prefix(b"I").keys() {
                if keys.len() == 1024 {
                    few = false;
                    break;
                }
                keys.insert(k?);
            }
            self.tree_open_rns = Some(few.then_some(keys));
        }
        Ok(self.tree_open_rns.as_ref().and_then(Option::as_ref))
    }

    pub(super) fn next_sequence(&mut self, env: Environment) -> Result<u64, StoreError> {
        let slot = env_slot(env);
        match self.next[slot] {
            Some(next) => Ok(next),
            None => {
                let next = self.index.next_sequence(env)?;
                self.next[slot] = Some(next);
                Ok(next)
            }
        }
    }

    /// The seq of the entry of `org` in `env` for invoice `rn`.
    pub(super) fn rn_seq(
        &mut self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<u64>, StoreError> {
        let k = k_rn_bucket(org, env, rn);
        let bucket = match self.writes.get(&k) {
            Some(_) => self.get(&k)?,
            None => {
                let read = self.index.tree.get(&k)?;
                if let Some(v) = &read {
                    self.writes.insert(k, Write::Read(v.clone()));
                }
                read
            }
        };
        match bucket {
            Some(bucket) => find_rn(&bucket, rn),
            None => Ok(None),
        }
    }
}
