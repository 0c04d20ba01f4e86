//! What the store answers: the organizations, keys, dashboard tokens, register entries,
//! open intents and idempotency bindings, read from the index (after re-applying any record
//! that failed to reach it), and where the check of the journal's history stands.

use std::time::Duration;

use super::{DashboardToken, EmbeddedStore, EntryFilter, HistoryCheck, StoreError};
use crate::model::{
    reference_of, DeviceView, Environment, IdempotencyBinding, Intent, IntentId, KeyRecord,
    Organization, RegisterEntry,
};

impl EmbeddedStore {
    /// The organization `id`.
    pub fn organization(&self, id: &str) -> Result<Option<Organization>, StoreError> {
        self.read(|index| index.organization(id))
    }

    /// All organizations, by id.
    pub fn organizations(&self) -> Result<Vec<Organization>, StoreError> {
        self.read(|index| index.organizations())
    }

    /// The API key `id`.
    pub fn key(&self, id: &str) -> Result<Option<KeyRecord>, StoreError> {
        self.read(|index| index.key(id))
    }

    /// The keys of organization `org`, by id.
    pub fn keys_of(&self, org: &str) -> Result<Vec<KeyRecord>, StoreError> {
        self.read(|index| index.keys_of(org))
    }

    /// Production entries of `org` counted in quota year `year` (Sandbox never counts).
    pub fn quota_used(&self, org: &str, year: i32) -> Result<u64, StoreError> {
        self.read(|index| index.quota_used(org, year))
    }

    /// The entry certifying invoice `rn` of `org` in `env`.
    pub fn entry_by_rn(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<RegisterEntry>, StoreError> {
        self.read(|index| index.entry_by_rn(org, env, rn))
    }

    /// The entry at `sequence` of the `env` register.
    pub fn entry(
        &self,
        env: Environment,
        sequence: u64,
    ) -> Result<Option<RegisterEntry>, StoreError> {
        self.read(|index| index.entry(env, sequence))
    }

    /// A credit note's original and an invoice's credit notes, in the entry's organization
    /// and register (`links.rs`): the entry `entry`'s kept invoice names as its original (if
    /// the register holds it), and the entries that name `entry` as theirs, in order.
    pub fn credit_links(
        &self,
        entry: &RegisterEntry,
    ) -> Result<(Option<RegisterEntry>, Vec<RegisterEntry>), StoreError> {
        let (org, env) = (entry.request.org.as_str(), entry.request.environment);
        self.read(|index| {
            let original = match entry.request.invoice.as_deref().and_then(reference_of) {
                Some(code) => match index.entry_seq_by_code(org, env, &code)? {
                    Some(seq) => index.entry(env, seq)?,
                    None => None,
                },
                None => None,
            };
            let mut credit_notes = Vec::new();
            for seq in index.credit_note_seqs(org, env, &entry.security.code_def)? {
                credit_notes.extend(index.entry(env, seq)?);
            }
            Ok((original, credit_notes))
        })
    }

    /// How many entries the `env` register holds (its last sequence: no gaps).
    pub fn register_length(&self, env: Environment) -> Result<u64, StoreError> {
        self.read(|index| Ok(index.next_sequence(env)?.saturating_sub(1)))
    }

    /// Entries of one register after a sequence, in sequence order, at most `limit`.
    pub fn entries(&self, filter: &EntryFilter) -> Result<Vec<RegisterEntry>, StoreError> {
        self.read(|index| index.entries(filter))
    }

    /// Entries of `org` in `env` with a sequence below `before`, newest first, that `keep`
    /// accepts; at most `limit`.
    pub fn org_entries_back(
        &self,
        org: &str,
        env: Environment,
        before: u64,
        limit: usize,
        mut keep: impl FnMut(&RegisterEntry) -> bool,
    ) -> Result<Vec<RegisterEntry>, StoreError> {
        self.read(|index| index.org_entries_back(org, env, before, limit, &mut keep))
    }

    /// How many entries `org` has in the `env` register (all years).
    pub fn org_entry_count(&self, org: &str, env: Environment) -> Result<u64, StoreError> {
        self.read(|index| index.org_entry_count(org, env))
    }

    /// The dashboard token `id` (revoked or not).
    pub fn dashboard_token(&self, id: &str) -> Result<Option<DashboardToken>, StoreError> {
        self.read(|index| index.dashboard_token(id))
    }

    /// The dashboard tokens of `org`, by id.
    pub fn dashboard_tokens_of(&self, org: &str) -> Result<Vec<DashboardToken>, StoreError> {
        self.read(|index| index.dashboard_tokens_of(org))
    }

    /// Intents neither certified nor abandoned, by id (to reconcile at start-up).
    pub fn open_intents(&self) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        self.read(|index| index.open_intents())
    }

    /// The open intents of `device`, by id.
    pub fn open_intents_of(&self, device: &str) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        let mut open = self.open_intents()?;
        open.retain(|(_, intent)| intent.device == device);
        Ok(open)
    }

    /// The view of `device` and of the machine `nim` now, in one read of the index.
    pub fn device_view(
        &self,
        device: &str,
        nim: &str,
        except: Option<IntentId>,
    ) -> Result<DeviceView, StoreError> {
        self.read(|index| index.device_view(device, nim, except))
    }

    /// The request an `Idempotency-Key` of `org` in `env` is bound to, if any.
    pub fn idempotency_binding(
        &self,
        org: &str,
        env: Environment,
        idempotency_key: &str,
    ) -> Result<Option<IdempotencyBinding>, StoreError> {
        self.read(|index| index.idempotency_binding(org, env, idempotency_key))
    }

    /// The open intent for invoice `rn` of `org` in `env`, if any.
    pub fn open_intent_for(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<IntentId>, StoreError> {
        self.read(|index| index.open_intent_for(org, env, rn))
    }

    /// Where the check of the journal's history stands (see `history.rs`): `Intact` unless
    /// the store was opened with [`StoreOptions::background_check_above`] from a checkpoint.
    /// `Damaged`: writes are refused, as if the open had failed.
    pub fn history_check(&self) -> HistoryCheck {
        self.history.now()
    }

    /// `Err(Damaged)` once the background check of the history found damage.
    pub fn refuse_if_damaged(&self) -> Result<(), StoreError> {
        self.history.refuse_if_damaged()
    }

    /// Waits up to `timeout` for the background check of the history to end.
    pub fn wait_for_history_check(&self, timeout: Duration) -> HistoryCheck {
        self.history.wait(timeout)
    }
}
