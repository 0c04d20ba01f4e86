//! Applying journal records to the index, idempotently and atomically.
//!
//! Records are applied through a [`Staged`] set of writes (`staged.rs`): each record's effects
//! are checked against the index *and* the writes staged before it (so an intent and its
//! certification in the same set see each other), then [`Staged::commit`] turns the set into
//! one sled `Batch` holding the effects and the new last-applied marker (seq and hash of the
//! last record staged). So the index is always "records 1..=n applied" for some n, whether a
//! batch holds one record (an append) or thousands (the replay or rebuild at open:
//! [`REPLAY_BATCH`](super::staged::REPLAY_BATCH); a build from nothing writes its marker with
//! its last batch only, and is built again if interrupted: `Staged::commit_build`). Effects
//! are states, not deltas (the one delta, quota, is counted only when the entry is inserted),
//! so re-applying records that are already in the index (a marker older than the data)
//! changes nothing. A record that
//! contradicts the index (a certified intent that was never open, a register position taken,
//! an rn already another entry's) is damage: the journal's writer checks all of this before
//! appending.

use sled::IVec;

use super::blocks::{
    bit_of, block_of, k_org_block, k_resolved, org_bits, resolved_bits, resolved_value,
};
use super::entry_ref::{EntryRef, NO_PLACE};
use super::error::{DamageAt, StoreError};
use super::event::{DashboardToken, Event, Hash, Record};
use super::grouped::{k_entry_block, k_rn_bucket, slot, with_rn, with_slot};
use super::index::{
    be_u64, k_idempotency, k_intent_rn, k_key, k_key_by_org, k_org, k_quota, k_token,
    k_token_by_org, Index,
};
use super::journal::Place;
use super::staged::{env_slot, Staged, Write};
use crate::model::{Environment, IdempotencyBinding, Intent, IntentId, KeyRecord, RegisterEntry};

const CERTIFIED: &[u8] = b"c";
const ABANDONED: &[u8] = b"a";

impl Index {
    /// Applies `record` (whose payload hashes to `hash`, at `place` in the journal) in a
    /// batch of its own, if it is the next one; records at or below the last applied seq are
    /// skipped.
    pub fn apply(&self, record: &Record, hash: &Hash, place: Place) -> Result<(), StoreError> {
        let mut staged = self.staged()?;
        staged.apply(record, hash, place)?;
        staged.commit()
    }
}

impl Staged<'_> {
    /// Stages `record` (whose payload hashes to `hash`, at `place` in the journal) if it is
    /// the next one; records at or below the last applied seq are skipped.
    pub(super) fn apply(
        &mut self,
        record: &Record,
        hash: &Hash,
        place: Place,
    ) -> Result<(), StoreError> {
        let applied = self.applied;
        if record.seq <= applied {
            return Ok(());
        }
        let damaged = |reason: String| StoreError::damaged(DamageAt::Seq(record.seq), reason);
        if record.seq != applied + 1 {
            return Err(damaged(format!(
                "the index is at seq {applied} and cannot apply seq {} before the records between",
                record.seq
            )));
        }
        match &record.event {
            Event::OrganizationSaved(org) => {
                self.insert(k_org(&org.id), serde_json::to_vec(org)?);
            }
            Event::KeyIssued(key) => {
                self.insert(k_key(&key.id), serde_json::to_vec(key)?);
                self.insert(k_key_by_org(&key.org, &key.id), &[][..]);
            }
            Event::KeyEnabled { id } | Event::KeyDisabled { id } => {
                let enabled = matches!(record.event, Event::KeyEnabled { .. });
                let mut key: KeyRecord = self.get_json(&k_key(id))?.ok_or_else(|| {
                    damaged(format!("{} of unknown key {id:?}", record.event.kind()))
                })?;
                key.enabled = enabled;
                self.insert(k_key(id), serde_json::to_vec(&key)?);
            }
            Event::DashboardTokenIssued {
                token_id,
                org,
                token_sha256,
                created_at,
                label,
            } => {
                let token = DashboardToken {
                    id: token_id.clone(),
                    org: org.clone(),
                    token_sha256: token_sha256.clone(),
                    label: label.clone(),
                    created_at: *created_at,
                    revoked: false,
                };
                self.insert(k_token(token_id), serde_json::to_vec(&token)?);
                self.insert(k_token_by_org(org, token_id), &[][..]);
            }
            Event::DashboardTokenRevoked { token_id } => {
                let mut token: DashboardToken =
                    self.get_json(&k_token(token_id))?.ok_or_else(|| {
                        damaged(format!(
                            "revocation of unknown dashboard token {token_id:?}"
                        ))
                    })?;
                token.revoked = true;
                self.insert(k_token(token_id), serde_json::to_vec(&token)?);
            }
            Event::Intent(intent) => self.apply_intent(record.seq, intent, place, damaged)?,
            Event::Certified(entry) => {
                let at = EntryRef {
                    place,
                    hash: *hash,
                    intent: NO_PLACE,
                };
                self.apply_certified(entry, at, damaged)?
            }
            // Their effects are all in `boxes.rs`.
            Event::FiscalAnomaly(_) | Event::FiscalAnomalyAcknowledged { .. } => {}
            Event::Abandoned { intent, .. } => match self.resolution(*intent)? {
                Some(b'a') => {}
                Some(_) => {
                    return Err(damaged(format!(
                        "intent {intent} abandoned after certified"
                    )))
                }
                None => {
                    let (open, _) = self.take_open_intent(*intent)?.ok_or_else(|| {
                        damaged(format!("abandoned intent {intent} was never open"))
                    })?;
                    self.close_intent(*intent, &open, ABANDONED)?;
                }
            },
        }
        self.apply_boxes(record)?;
        // The last-applied marker goes in with the batch (`Staged::commit`).
        self.last_hash = Some(*hash);
        self.applied = record.seq;
        self.records += 1;
        Ok(())
    }

    fn apply_intent(
        &mut self,
        id: IntentId,
        intent: &Intent,
        place: Place,
        damaged: impl Fn(String) -> StoreError,
    ) -> Result<(), StoreError> {
        if self.resolution(id)?.is_some() {
            return Ok(()); // already applied and resolved: do not reopen it
        }
        let (org, env, rn) = (&intent.org, intent.environment, &intent.rn);
        let by_rn = k_intent_rn(org, env, rn);
        let staged_before = self.writes.contains_key(&by_rn);
        let open = self.open_intent_for(org, env, rn)?;
        if let Some(other) = open {
            if other != id {
                return Err(damaged(format!(
                    "intent for rn {rn:?} while intent {other} is open"
                )));
            }
        }
        if let Some(seq) = self.rn_seq(org, env, rn)? {
            return Err(damaged(format!(
                "intent for rn {rn:?} already certified as {seq}"
            )));
        }
        self.intents.insert(id, Some((intent.clone(), place)));
        let value = IVec::from(&id.to_be_bytes()[..]);
        let write = if open.is_none() && !staged_before {
            Write::PutNew(value)
        } else {
            Write::Put(value)
        };
        self.writes.insert(by_rn, write);
        if let Some(idempotency_key) = &intent.idempotency_key {
            let binding = IdempotencyBinding {
                intent: id,
                rn: rn.clone(),
                request_digest: intent.request_digest.clone(),
            };
            self.insert(
                k_idempotency(org, env, idempotency_key),
                serde_json::to_vec(&binding)?,
            );
        }
        Ok(())
    }

    fn apply_certified(
        &mut self,
        entry: &RegisterEntry,
        mut at: EntryRef,
        damaged: impl Fn(String) -> StoreError,
    ) -> Result<(), StoreError> {
        let req = &entry.request;
        let env = req.environment;
        let (seq, id) = (entry.sequence, entry.intent);
        let next = self.next_sequence(env)?;
        // Sequences below the next one are in the index (1, 2, 3... with no gap).
        let existing = if seq < next {
            match self.get(&k_entry_block(env, seq))? {
                Some(block) => slot(&block, seq)?,
                None => None,
            }
        } else {
            None
        };
        if let Some(existing) = existing {
            // Already applied (the marker was behind): only make sure the intent is closed.
            if !existing.same_record(&at) {
                return Err(damaged(format!(
                    "{} register position {seq} holds another entry",
                    env.as_str()
                )));
            }
            self.add_rn(&req.org, env, &req.rn, seq)?;
            self.add_org_entry(&req.org, env, seq)?;
            let open = self.take_open_intent(id)?;
            let kept = req
                .invoice
                .as_deref()
                .or_else(|| open.as_ref().and_then(|(o, _)| o.invoice.as_deref()));
            self.add_links(entry, kept)?;
            if let Some((open, _)) = open {
                self.close_intent(id, &open, CERTIFIED)?;
            }
            return Ok(());
        }
        if seq != next {
            return Err(damaged(format!(
                "{} register sequence {seq}, expected {next}",
                env.as_str()
            )));
        }
        // No entry can hold the rn of an open intent: `apply_intent` refused the intent if
        // one did, and no other intent for the rn could open or certify while it is open.
        let (mut open, intent_at) = match self.take_open_intent(id)? {
            Some(open) => open,
            None if self.resolution(id)?.is_some() => {
                return Err(damaged(format!(
                    "intent {id} certified after being resolved"
                )))
            }
            None => return Err(damaged(format!("certified intent {id} was never open"))),
        };
        // The entry is its intent's request; since 1.8.0 without the invoice the intent
        // keeps (`kept.rs`), which is then read from the intent's record.
        let in_intent = if req.invoice.is_none() {
            open.invoice.take()
        } else {
            None
        };
        if open != *req {
            return Err(damaged(format!("entry {seq} differs from its intent {id}")));
        }
        if in_intent.is_some() {
            at.intent = intent_at;
        }
        // Checked anyway (its bucket is read for `add_rn` in any case): the rn lookup would
        // otherwise move the rn from its entry to this one without a word.
        if let Some(other) = self.rn_seq(&req.org, env, &req.rn)?.filter(|s| *s != seq) {
            return Err(damaged(format!(
                "rn {:?} is already entry {other}; entry {seq} cannot take it",
                req.rn
            )));
        }
        let k = k_entry_block(env, seq);
        let block = with_slot(self.get(&k)?.as_deref(), seq, &at);
        self.insert(k, block);
        self.next[env_slot(env)] = Some(seq + 1);
        self.add_rn(&req.org, env, &req.rn, seq)?;
        self.add_org_entry(&req.org, env, seq)?;
        self.add_links(entry, req.invoice.as_deref().or(in_intent.as_deref()))?;
        self.close_intent(id, &open, CERTIFIED)?;
        if env == Environment::Production {
            let quota = k_quota(&req.org, entry.quota_year);
            let used = match self.get(&quota)? {
                Some(v) => be_u64(&v)?,
                None => 0,
            };
            self.insert(quota, &(used + 1).to_be_bytes()[..]);
        }
        Ok(())
    }

    fn close_intent(&mut self, id: IntentId, open: &Intent, how: &[u8]) -> Result<(), StoreError> {
        self.intents.insert(id, None);
        if self.open_intent_for(&open.org, open.environment, &open.rn)? == Some(id) {
            self.remove(k_intent_rn(&open.org, open.environment, &open.rn));
        }
        if how == ABANDONED {
            // A request that certified nothing does not keep its Idempotency-Key.
            if let Some(idempotency_key) = &open.idempotency_key {
                let by_key = k_idempotency(&open.org, open.environment, idempotency_key);
                if self
                    .get_json::<IdempotencyBinding>(&by_key)?
                    .is_some_and(|binding| binding.intent == id)
                {
                    self.remove(by_key);
                }
            }
        }
        let k = k_resolved(id);
        let mut bits = match self.get(&k)? {
            Some(block) => resolved_bits(&block)?,
            None => [0, 0],
        };
        let (set, clear) = if how == CERTIFIED { (0, 1) } else { (1, 0) };
        bits[set] |= bit_of(id);
        bits[clear] &= !bit_of(id);
        self.insert(k, resolved_value(bits));
        Ok(())
    }

    /// Entry `seq` of `env` is `org`'s invoice `rn` (in the rn's bucket).
    fn add_rn(
        &mut self,
        org: &str,
        env: Environment,
        rn: &str,
        seq: u64,
    ) -> Result<(), StoreError> {
        let k = k_rn_bucket(org, env, rn);
        let bucket = with_rn(self.get(&k)?.as_deref(), rn, seq)?;
        self.insert(k, bucket);
        Ok(())
    }

    /// Lists entry `seq` of `env` among `org`'s (its bit in the organization's block).
    fn add_org_entry(&mut self, org: &str, env: Environment, seq: u64) -> Result<(), StoreError> {
        let k = k_org_block(org, env, block_of(seq));
        let bits = match self.get(&k)? {
            Some(block) => org_bits(&block)?,
            None => 0,
        };
        self.insert(k, &(bits | bit_of(seq)).to_be_bytes()[..]);
        Ok(())
    }
}
