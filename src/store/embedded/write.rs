//! The store's writes: each validates against the index under the write mutex, journals one
//! event (fsynced), then applies it to sled.

use chrono::{DateTime, Utc};
use tracing::error;

use super::boxes::production_counters;
use super::event::{DashboardToken, Event, Record};
use super::index::Index;
use super::{EmbeddedStore, StoreError};
use crate::model::{
    DeviceView, Intent, IntentId, KeyRecord, Organization, RegisterEntry, SecurityElements,
};

impl EmbeddedStore {
    /// Journals `build`'s event if it returns one, then applies it to sled. `build` runs under
    /// the write mutex, on an index that holds every journaled record.
    pub(super) fn append<T>(
        &self,
        build: impl FnOnce(&Index) -> Result<(Event, T), StoreError>,
    ) -> Result<(Record, T), StoreError> {
        let mut inner = self.lock()?;
        self.history.refuse_if_damaged()?;
        self.apply_pending(&mut inner)?;
        let (event, out) = match build(&*self.index()?) {
            Ok(built) => built,
            Err(e) => {
                // sled refuses every read once one of its own writes failed (its background
                // flush on a full disk): the journal halts with that fault, as when applying
                // a record fails, so that the fault is seen and lifted (`resume_writes`
                // reopens the index) rather than every write failing unexplained.
                if let Some(fault) = super::index_fault(&e) {
                    inner.journal.halt(fault);
                }
                return Err(e);
            }
        };
        let (record, hash, place) = inner.journal.append(event)?;
        inner.pending.push_back((record.clone(), hash, place));
        if let Err(e) = self.apply_pending(&mut inner) {
            // The record is durable: the write happened. It is applied again before the next
            // read or write (which fail meanwhile if sled keeps failing).
            error!(seq = record.seq, error = %e, "journaled record not yet applied to the index");
        }
        Ok((record, out))
    }

    /// Creates or replaces an organization.
    pub fn save_organization(&self, org: Organization) -> Result<(), StoreError> {
        if org.id.is_empty() || org.id.contains('\0') {
            return Err(StoreError::Invalid(format!("organization id {:?}", org.id)));
        }
        self.append(|_| Ok((Event::OrganizationSaved(org), ())))?;
        Ok(())
    }

    /// Records a new API key. Refused if its id exists or its organization does not.
    pub fn issue_key(&self, key: KeyRecord) -> Result<(), StoreError> {
        if key.id.is_empty() {
            return Err(StoreError::Invalid("empty API key id".to_string()));
        }
        self.append(|index| {
            if index.key(&key.id)?.is_some() {
                return Err(StoreError::Conflict(format!(
                    "API key id {:?} already exists",
                    key.id
                )));
            }
            if index.organization(&key.org)?.is_none() {
                return Err(StoreError::UnknownOrganization(key.org.clone()));
            }
            Ok((Event::KeyIssued(key), ()))
        })?;
        Ok(())
    }

    /// Enables or disables a key; returns it as it now is. Setting the state it already has
    /// journals nothing.
    pub fn set_key_enabled(&self, id: &str, enabled: bool) -> Result<KeyRecord, StoreError> {
        let lookup = |index: &Index| {
            index
                .key(id)?
                .ok_or_else(|| StoreError::UnknownKey(id.to_string()))
        };
        if let Ok(key) = self.read(lookup) {
            if key.enabled == enabled {
                return Ok(key);
            }
        }
        let (_, key) = self.append(|index| {
            let mut key = lookup(index)?;
            key.enabled = enabled;
            let id = key.id.clone();
            let event = if enabled {
                Event::KeyEnabled { id }
            } else {
                Event::KeyDisabled { id }
            };
            Ok((event, key))
        })?;
        Ok(key)
    }

    /// Records a new dashboard token (its hash). Refused if its id exists or its organization
    /// does not; `revoked` must be false.
    pub fn issue_dashboard_token(&self, token: DashboardToken) -> Result<(), StoreError> {
        if token.id.is_empty() || token.revoked {
            return Err(StoreError::Invalid(
                "a new dashboard token needs an id and must not be revoked".to_string(),
            ));
        }
        self.append(|index| {
            if index.dashboard_token(&token.id)?.is_some() {
                return Err(StoreError::Conflict(format!(
                    "dashboard token id {:?} already exists",
                    token.id
                )));
            }
            if index.organization(&token.org)?.is_none() {
                return Err(StoreError::UnknownOrganization(token.org.clone()));
            }
            let event = Event::DashboardTokenIssued {
                token_id: token.id,
                org: token.org,
                token_sha256: token.token_sha256,
                created_at: token.created_at,
                label: token.label,
            };
            Ok((event, ()))
        })?;
        Ok(())
    }

    /// Revokes a dashboard token; returns it as it now is. Revoking a revoked token journals
    /// nothing.
    pub fn revoke_dashboard_token(&self, id: &str) -> Result<DashboardToken, StoreError> {
        let lookup = |index: &Index| {
            index
                .dashboard_token(id)?
                .ok_or_else(|| StoreError::Invalid(format!("unknown dashboard token {id:?}")))
        };
        if let Ok(token) = self.read(lookup) {
            if token.revoked {
                return Ok(token);
            }
        }
        let (_, token) = self.append(|index| {
            let mut token = lookup(index)?;
            token.revoked = true;
            let event = Event::DashboardTokenRevoked {
                token_id: token.id.clone(),
            };
            Ok((event, token))
        })?;
        Ok(token)
    }

    /// Journals an intent (just before 38h is sent); its id is its journal seq. Refused with
    /// [`StoreError::Conflict`] if an intent is open, or an entry exists, for the same
    /// (organization, environment, rn); the organization and the key must exist and agree.
    pub fn record_intent(&self, intent: Intent) -> Result<IntentId, StoreError> {
        self.record_intent_with(intent, None).map(|(id, _)| id)
    }

    /// [`EmbeddedStore::record_intent`], and the view of the intent's device and of the
    /// machine `nim` before it (so without it): the device's open intents read first, outside
    /// the write lock (a scan of every open intent), then the machine's counters under it,
    /// with the intent (an intent settled in between is in the counters). Read before the
    /// intent is journaled: a read that fails writes nothing.
    pub fn record_intent_with_view(
        &self,
        intent: Intent,
        nim: &str,
    ) -> Result<(IntentId, DeviceView), StoreError> {
        let (id, view) = self.record_intent_with(intent, Some(nim))?;
        Ok((id, view.unwrap_or_default()))
    }

    fn record_intent_with(
        &self,
        intent: Intent,
        view_of: Option<&str>,
    ) -> Result<(IntentId, Option<DeviceView>), StoreError> {
        if intent.rn.is_empty() {
            return Err(StoreError::Invalid("empty rn".to_string()));
        }
        let open = match view_of {
            Some(_) => Some(self.read(|index| index.open_counters_of(&intent.device, None))?),
            None => None,
        };
        let (record, view) = self.append(|index| {
            let (org, env, rn) = (&intent.org, intent.environment, &intent.rn);
            if index.organization(org)?.is_none() {
                return Err(StoreError::UnknownOrganization(org.clone()));
            }
            let key = index
                .key(&intent.key_id)?
                .ok_or_else(|| StoreError::UnknownKey(intent.key_id.clone()))?;
            if &key.org != org || key.environment != env {
                return Err(StoreError::Invalid(format!(
                    "key {:?} is a {} key of {:?}, the intent is {} for {org:?}",
                    key.id,
                    key.environment.as_str(),
                    key.org,
                    env.as_str()
                )));
            }
            if let Some(open) = index.open_intent_for(org, env, rn)? {
                return Err(StoreError::Conflict(format!(
                    "invoice {rn:?} of {org:?} ({}) is in flight (intent {open})",
                    env.as_str()
                )));
            }
            if let Some(sequence) = index.rn_seq(org, env, rn)? {
                return Err(StoreError::Conflict(format!(
                    "invoice {rn:?} of {org:?} is already certified ({} sequence {sequence})",
                    env.as_str()
                )));
            }
            if let Some(idempotency_key) = &intent.idempotency_key {
                if let Some(bound) = index.idempotency_binding(org, env, idempotency_key)? {
                    return Err(StoreError::Conflict(format!(
                        "the Idempotency-Key is already bound to invoice {:?}",
                        bound.rn
                    )));
                }
            }
            let view = match (open, view_of) {
                (Some(open), Some(nim)) => Some(DeviceView {
                    open,
                    known: index.box_counters(nim)?,
                }),
                _ => None,
            };
            Ok((Event::Intent(intent), view))
        })?;
        Ok((record.seq, view))
    }

    /// Journals the certification of an open intent (fsynced before returning) and returns
    /// the register entry: the intent's data, the next sequence of its environment.
    pub fn record_certified(
        &self,
        intent: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Result<RegisterEntry, StoreError> {
        self.record_certified_with(intent, quota_year, certified_at, security, source, false)
            .map(|(entry, _)| entry)
    }

    /// [`EmbeddedStore::record_certified`], and the view of the intent's device (its other
    /// open intents, read first, outside the write lock) and of the entry's machine (its
    /// counters before this entry moves them, read under the write lock with it). Read before
    /// the certification is journaled: a read that fails writes nothing.
    pub fn record_certified_with_view(
        &self,
        intent: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Result<(RegisterEntry, DeviceView), StoreError> {
        let (entry, view) =
            self.record_certified_with(intent, quota_year, certified_at, security, source, true)?;
        Ok((entry, view.unwrap_or_default()))
    }

    fn record_certified_with(
        &self,
        intent: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
        with_view: bool,
    ) -> Result<(RegisterEntry, Option<DeviceView>), StoreError> {
        let open = if with_view {
            let others = |index: &Index| {
                let device = open_intent(index, intent)?.device;
                index.open_counters_of(&device, Some(intent))
            };
            Some(self.read(others)?)
        } else {
            None
        };
        let (_, out) = self.append(|index| {
            let request = open_intent(index, intent)?;
            let entry = RegisterEntry {
                sequence: index.next_sequence(request.environment)?,
                intent,
                request,
                certified_at,
                security,
                source: source.to_string(),
                quota_year,
            };
            let view = match open {
                Some(open) => {
                    let known = match production_counters(&entry) {
                        Some(counters) => index.box_counters(&counters.nim)?,
                        None => None,
                    };
                    Some(DeviceView { open, known })
                }
                None => None,
            };
            Ok((Event::certified(&entry), (entry, view)))
        })?;
        Ok(out)
    }

    /// Journals that an open intent was not certified.
    pub fn record_abandoned(&self, intent: IntentId, reason: &str) -> Result<(), StoreError> {
        self.append(|index| {
            open_intent(index, intent)?;
            let reason = reason.to_string();
            Ok((Event::Abandoned { intent, reason }, ()))
        })?;
        Ok(())
    }
}

/// The open intent `id`, or why it is not open.
fn open_intent(index: &Index, id: IntentId) -> Result<Intent, StoreError> {
    match index.open_intent(id)? {
        Some(intent) => Ok(intent),
        None if index.resolution(id)?.is_some() => Err(StoreError::IntentNotOpen(id)),
        None => Err(StoreError::UnknownIntent(id)),
    }
}
