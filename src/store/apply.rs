//! Applying one journal record to the index, idempotently and atomically.
//!
//! Each record becomes one sled `Batch` holding its effects and the new last-applied marker,
//! so the index is always "records 1..=n applied" for some n. Effects are states, not deltas
//! (the one delta, quota, is counted only when the entry is inserted), so re-applying records
//! that are already in the index (a marker older than the data) changes nothing. A record that
//! contradicts the index (a certified intent that was never open, a register position taken)
//! is damage: the journal's writer checks all of this before appending.

use sled::Batch;

use super::error::{DamageAt, StoreError};
use super::event::{DashboardToken, Event, Hash, Record};
use super::index::{
    be_u64, json, k_entry, k_idempotency, k_intent, k_intent_rn, k_key, k_key_by_org, k_org,
    k_org_entry, k_quota, k_resolved, k_rn, k_token, k_token_by_org, Index, FORMAT, META_APPLIED,
    META_FORMAT,
};
use crate::model::{Environment, IdempotencyBinding, Intent, IntentId, KeyRecord, RegisterEntry};

const CERTIFIED: &[u8] = b"c";
const ABANDONED: &[u8] = b"a";

impl Index {
    /// Applies `record` (whose payload hashes to `hash`) if it is the next one; records at or
    /// below the last applied seq are skipped.
    pub fn apply(&self, record: &Record, hash: &Hash) -> Result<(), StoreError> {
        let applied = self.applied_seq()?;
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
        let mut batch = Batch::default();
        match &record.event {
            Event::OrganizationSaved(org) => {
                batch.insert(k_org(&org.id), serde_json::to_vec(org)?);
            }
            Event::KeyIssued(key) => {
                batch.insert(k_key(&key.id), serde_json::to_vec(key)?);
                batch.insert(k_key_by_org(&key.org, &key.id), &[][..]);
            }
            Event::KeyEnabled { id } | Event::KeyDisabled { id } => {
                let enabled = matches!(record.event, Event::KeyEnabled { .. });
                let mut key: KeyRecord = self.key(id)?.ok_or_else(|| {
                    damaged(format!("{} of unknown key {id:?}", record.event.kind()))
                })?;
                key.enabled = enabled;
                batch.insert(k_key(id), serde_json::to_vec(&key)?);
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
                batch.insert(k_token(token_id), serde_json::to_vec(&token)?);
                batch.insert(k_token_by_org(org, token_id), &[][..]);
            }
            Event::DashboardTokenRevoked { token_id } => {
                let mut token = self.dashboard_token(token_id)?.ok_or_else(|| {
                    damaged(format!(
                        "revocation of unknown dashboard token {token_id:?}"
                    ))
                })?;
                token.revoked = true;
                batch.insert(k_token(token_id), serde_json::to_vec(&token)?);
            }
            Event::Intent(intent) => self.apply_intent(&mut batch, record.seq, intent, damaged)?,
            Event::Certified(entry) => self.apply_certified(&mut batch, entry, damaged)?,
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
                    let open = self.open_intent(*intent)?.ok_or_else(|| {
                        damaged(format!("abandoned intent {intent} was never open"))
                    })?;
                    self.close_intent(&mut batch, *intent, &open, ABANDONED)?;
                }
            },
        }
        self.apply_boxes(&mut batch, record)?;
        let mut marker = record.seq.to_be_bytes().to_vec();
        marker.extend_from_slice(hash);
        batch.insert(META_APPLIED, marker);
        batch.insert(META_FORMAT, &FORMAT.to_be_bytes()[..]);
        self.tree.apply_batch(batch)?;
        Ok(())
    }

    fn apply_intent(
        &self,
        batch: &mut Batch,
        id: IntentId,
        intent: &Intent,
        damaged: impl Fn(String) -> StoreError,
    ) -> Result<(), StoreError> {
        if self.resolution(id)?.is_some() {
            return Ok(()); // already applied and resolved: do not reopen it
        }
        let (org, env, rn) = (&intent.org, intent.environment, &intent.rn);
        if let Some(other) = self.open_intent_for(org, env, rn)? {
            if other != id {
                return Err(damaged(format!(
                    "intent for rn {rn:?} while intent {other} is open"
                )));
            }
        }
        if let Some(seq) = self.tree.get(k_rn(org, env, rn))? {
            let seq = be_u64(&seq)?;
            return Err(damaged(format!(
                "intent for rn {rn:?} already certified as {seq}"
            )));
        }
        batch.insert(k_intent(id), serde_json::to_vec(intent)?);
        batch.insert(k_intent_rn(org, env, rn), &id.to_be_bytes()[..]);
        if let Some(idempotency_key) = &intent.idempotency_key {
            let binding = IdempotencyBinding {
                intent: id,
                rn: rn.clone(),
                request_digest: intent.request_digest.clone(),
            };
            batch.insert(
                k_idempotency(org, env, idempotency_key),
                serde_json::to_vec(&binding)?,
            );
        }
        Ok(())
    }

    fn apply_certified(
        &self,
        batch: &mut Batch,
        entry: &RegisterEntry,
        damaged: impl Fn(String) -> StoreError,
    ) -> Result<(), StoreError> {
        let req = &entry.request;
        let env = req.environment;
        let (seq, id) = (entry.sequence, entry.intent);
        if let Some(existing) = self.tree.get(k_entry(env, seq))? {
            // Already applied (the marker was behind): only make sure the intent is closed.
            let existing: RegisterEntry = json(&existing)?;
            if &existing != entry {
                return Err(damaged(format!(
                    "{} register position {seq} holds another entry",
                    env.as_str()
                )));
            }
            batch.insert(k_rn(&req.org, env, &req.rn), &seq.to_be_bytes()[..]);
            batch.insert(k_org_entry(&req.org, env, seq), &[][..]);
            if let Some(open) = self.open_intent(id)? {
                self.close_intent(batch, id, &open, CERTIFIED)?;
            }
            return Ok(());
        }
        let next = self.next_sequence(env)?;
        if seq != next {
            return Err(damaged(format!(
                "{} register sequence {seq}, expected {next}",
                env.as_str()
            )));
        }
        if let Some(other) = self.tree.get(k_rn(&req.org, env, &req.rn))? {
            let other = be_u64(&other)?;
            return Err(damaged(format!(
                "rn {:?} already certified as {other}",
                req.rn
            )));
        }
        let open = match self.open_intent(id)? {
            Some(open) => open,
            None if self.resolution(id)?.is_some() => {
                return Err(damaged(format!(
                    "intent {id} certified after being resolved"
                )))
            }
            None => return Err(damaged(format!("certified intent {id} was never open"))),
        };
        if &open != req {
            return Err(damaged(format!("entry {seq} differs from its intent {id}")));
        }
        batch.insert(k_entry(env, seq), serde_json::to_vec(entry)?);
        batch.insert(k_rn(&req.org, env, &req.rn), &seq.to_be_bytes()[..]);
        batch.insert(k_org_entry(&req.org, env, seq), &[][..]);
        self.close_intent(batch, id, &open, CERTIFIED)?;
        if env == Environment::Production {
            let used = self.quota_used(&req.org, entry.quota_year)?;
            let quota = k_quota(&req.org, entry.quota_year);
            batch.insert(quota, &(used + 1).to_be_bytes()[..]);
        }
        Ok(())
    }

    fn close_intent(
        &self,
        batch: &mut Batch,
        id: IntentId,
        open: &Intent,
        how: &[u8],
    ) -> Result<(), StoreError> {
        batch.remove(k_intent(id));
        let by_rn = k_intent_rn(&open.org, open.environment, &open.rn);
        if self.open_intent_for(&open.org, open.environment, &open.rn)? == Some(id) {
            batch.remove(by_rn);
        }
        if how == ABANDONED {
            // A request that certified nothing does not keep its Idempotency-Key.
            if let Some(idempotency_key) = &open.idempotency_key {
                let by_key = k_idempotency(&open.org, open.environment, idempotency_key);
                if self
                    .idempotency_binding(&open.org, open.environment, idempotency_key)?
                    .is_some_and(|binding| binding.intent == id)
                {
                    batch.remove(by_key);
                }
            }
        }
        batch.insert(k_resolved(id), how);
        Ok(())
    }
}
