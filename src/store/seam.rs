//! [`Store`]: the one type certification, admission, admin, alerts and the dashboard use for
//! what the gateway keeps. Each method matches the variant and calls its implementation;
//! the answers are the same whichever store holds the data (the embedded store's doc comments
//! say what each one means).

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::embedded::{DashboardToken, EmbeddedStore, EntryFilter, StoreOptions, VerifyReport};
use super::postgres::{PgStore, Refusal};
use super::{QuotaClaim, StoreError, WriteFault};
use crate::model::{
    AnomalyRecord, BoxCounters, Environment, FiscalAnomaly, IdempotencyBinding, Intent, IntentId,
    KeyRecord, LostInvoice, Organization, RegisterEntry, SecurityElements,
};

/// What the gateway keeps: organizations, keys, dashboard tokens, intents and the register,
/// quota use, box counters and fiscal anomalies. Share it as `Arc<Store>`.
pub enum Store {
    /// The journal and its index in the state directory (the default).
    Embedded(Arc<EmbeddedStore>),
    /// A PostgreSQL database (`[store] url`), for hosted use.
    Postgres(PgStore),
}

impl From<EmbeddedStore> for Store {
    fn from(store: EmbeddedStore) -> Store {
        Store::Embedded(Arc::new(store))
    }
}

impl Store {
    /// Opens (or creates) the embedded store in `state_dir` ([`EmbeddedStore::open`]).
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        EmbeddedStore::open(state_dir).map(Store::from)
    }

    /// Opens (or creates) the embedded store in `state_dir` with `options`
    /// ([`EmbeddedStore::open_with`]).
    pub fn open_with(state_dir: &Path, options: &StoreOptions) -> Result<Store, StoreError> {
        EmbeddedStore::open_with(state_dir, options).map(Store::from)
    }

    /// The embedded store, when that is what this is: for what only it has (its journal's
    /// copy in a backup, the background check of its history).
    pub fn embedded(&self) -> Option<&Arc<EmbeddedStore>> {
        match self {
            Store::Embedded(store) => Some(store),
            Store::Postgres(_) => None,
        }
    }

    // Organizations, keys and dashboard tokens.

    pub fn organization(&self, id: &str) -> Result<Option<Organization>, StoreError> {
        match self {
            Store::Embedded(s) => s.organization(id),
            Store::Postgres(p) => p.run(p.register().organization(id)),
        }
    }

    pub fn organizations(&self) -> Result<Vec<Organization>, StoreError> {
        match self {
            Store::Embedded(s) => s.organizations(),
            Store::Postgres(p) => p.run(p.register().organizations()),
        }
    }

    pub fn save_organization(&self, org: Organization) -> Result<(), StoreError> {
        match self {
            Store::Embedded(s) => s.save_organization(org),
            Store::Postgres(p) => {
                if org.id.is_empty() || org.id.contains('\0') {
                    return Err(StoreError::Invalid(format!("organization id {:?}", org.id)));
                }
                p.run(p.register().save_organization(&org, Utc::now()))
            }
        }
    }

    pub fn key(&self, id: &str) -> Result<Option<KeyRecord>, StoreError> {
        match self {
            Store::Embedded(s) => s.key(id),
            Store::Postgres(p) => p.run(p.register().key(id)),
        }
    }

    pub fn keys_of(&self, org: &str) -> Result<Vec<KeyRecord>, StoreError> {
        match self {
            Store::Embedded(s) => s.keys_of(org),
            Store::Postgres(p) => p.run(p.register().keys_of(org)),
        }
    }

    pub fn issue_key(&self, key: KeyRecord) -> Result<(), StoreError> {
        match self {
            Store::Embedded(s) => s.issue_key(key),
            Store::Postgres(p) => {
                let id = key.id.clone();
                p.write(|| p.register().issue_key(key.clone()), |r| refused(r, &id))
            }
        }
    }

    pub fn set_key_enabled(&self, id: &str, enabled: bool) -> Result<KeyRecord, StoreError> {
        match self {
            Store::Embedded(s) => s.set_key_enabled(id, enabled),
            Store::Postgres(p) => p.write(
                || p.register().set_key_enabled(id, enabled),
                |r| refused(r, id),
            ),
        }
    }

    pub fn dashboard_token(&self, id: &str) -> Result<Option<DashboardToken>, StoreError> {
        match self {
            Store::Embedded(s) => s.dashboard_token(id),
            Store::Postgres(p) => p.run(p.register().dashboard_token(id)),
        }
    }

    pub fn dashboard_tokens_of(&self, org: &str) -> Result<Vec<DashboardToken>, StoreError> {
        match self {
            Store::Embedded(s) => s.dashboard_tokens_of(org),
            Store::Postgres(p) => p.run(p.register().dashboard_tokens_of(org)),
        }
    }

    pub fn issue_dashboard_token(&self, token: DashboardToken) -> Result<(), StoreError> {
        match self {
            Store::Embedded(s) => s.issue_dashboard_token(token),
            Store::Postgres(p) => {
                let id = token.id.clone();
                p.write(
                    || p.register().issue_dashboard_token(token.clone()),
                    |r| refused(r, &id),
                )
            }
        }
    }

    pub fn revoke_dashboard_token(&self, id: &str) -> Result<DashboardToken, StoreError> {
        match self {
            Store::Embedded(s) => s.revoke_dashboard_token(id),
            Store::Postgres(p) => p.write(
                || p.register().revoke_dashboard_token(id),
                |r| refused(r, id),
            ),
        }
    }

    // Intents and the register's writes.

    /// Records `intent` before its invoice is finalized. `quota` is the unit admission
    /// reserved for a production invoice: PostgreSQL claims it with the intent (refusing one
    /// past the quota: [`StoreError::QuotaExhausted`]); the embedded store, used by one
    /// process whose admission holds the unit meanwhile, counts it at certification.
    pub fn record_intent(
        &self,
        intent: Intent,
        quota: Option<QuotaClaim>,
    ) -> Result<IntentId, StoreError> {
        match self {
            Store::Embedded(s) => {
                let _held_by_admission = quota;
                s.record_intent(intent)
            }
            Store::Postgres(p) => {
                let what = intent.org.clone();
                p.write(
                    || p.register().record_intent(&intent, quota),
                    |r| refused(r, &what),
                )
            }
        }
    }

    pub fn record_certified(
        &self,
        intent: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Result<RegisterEntry, StoreError> {
        match self {
            Store::Embedded(s) => {
                s.record_certified(intent, quota_year, certified_at, security, source)
            }
            Store::Postgres(p) => {
                let what = intent.to_string();
                p.write(
                    || {
                        p.register().record_certified(
                            intent,
                            quota_year,
                            certified_at,
                            security.clone(),
                            source,
                        )
                    },
                    |r| refused(r, &what),
                )
            }
        }
    }

    pub fn record_abandoned(&self, intent: IntentId, reason: &str) -> Result<(), StoreError> {
        match self {
            Store::Embedded(s) => s.record_abandoned(intent, reason),
            Store::Postgres(p) => {
                let what = intent.to_string();
                p.write(
                    || p.register().record_abandoned(intent, reason, Utc::now()),
                    |r| refused(r, &what),
                )
            }
        }
    }

    pub fn open_intents(&self) -> Result<Vec<(IntentId, Intent)>, StoreError> {
        match self {
            Store::Embedded(s) => s.open_intents(),
            Store::Postgres(p) => p.run(p.register().open_intents()),
        }
    }

    pub fn open_intent_for(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<IntentId>, StoreError> {
        match self {
            Store::Embedded(s) => s.open_intent_for(org, env, rn),
            Store::Postgres(p) => p.run(p.register().open_intent_for(org, env, rn)),
        }
    }

    pub fn idempotency_binding(
        &self,
        org: &str,
        env: Environment,
        idempotency_key: &str,
    ) -> Result<Option<IdempotencyBinding>, StoreError> {
        match self {
            Store::Embedded(s) => s.idempotency_binding(org, env, idempotency_key),
            Store::Postgres(p) => {
                p.run(p.register().idempotency_binding(org, env, idempotency_key))
            }
        }
    }

    pub fn quota_used(&self, org: &str, year: i32) -> Result<u64, StoreError> {
        match self {
            Store::Embedded(s) => s.quota_used(org, year),
            Store::Postgres(p) => p.run(p.register().quota_used(org, year)),
        }
    }

    // The register's reads.

    pub fn entry(
        &self,
        env: Environment,
        sequence: u64,
    ) -> Result<Option<RegisterEntry>, StoreError> {
        match self {
            Store::Embedded(s) => s.entry(env, sequence),
            Store::Postgres(p) => p.run(p.register().entry(env, sequence)),
        }
    }

    pub fn entry_by_rn(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<RegisterEntry>, StoreError> {
        match self {
            Store::Embedded(s) => s.entry_by_rn(org, env, rn),
            Store::Postgres(p) => p.run(p.register().entry_by_rn(org, env, rn)),
        }
    }

    pub fn entries(&self, filter: &EntryFilter) -> Result<Vec<RegisterEntry>, StoreError> {
        match self {
            Store::Embedded(s) => s.entries(filter),
            Store::Postgres(p) => p.run(p.register().entries(filter)),
        }
    }

    pub fn org_entries_back(
        &self,
        org: &str,
        env: Environment,
        before: u64,
        limit: usize,
        keep: impl FnMut(&RegisterEntry) -> bool + Send,
    ) -> Result<Vec<RegisterEntry>, StoreError> {
        match self {
            Store::Embedded(s) => s.org_entries_back(org, env, before, limit, keep),
            Store::Postgres(p) => {
                p.run(p.register().org_entries_back(org, env, before, limit, keep))
            }
        }
    }

    pub fn org_entry_count(&self, org: &str, env: Environment) -> Result<u64, StoreError> {
        match self {
            Store::Embedded(s) => s.org_entry_count(org, env),
            Store::Postgres(p) => p.run(p.register().org_entry_count(org, env)),
        }
    }

    pub fn register_length(&self, env: Environment) -> Result<u64, StoreError> {
        match self {
            Store::Embedded(s) => s.register_length(env),
            Store::Postgres(p) => p.run(p.register().register_length(env)),
        }
    }

    #[allow(clippy::type_complexity)]
    pub fn credit_links(
        &self,
        entry: &RegisterEntry,
    ) -> Result<(Option<RegisterEntry>, Vec<RegisterEntry>), StoreError> {
        match self {
            Store::Embedded(s) => s.credit_links(entry),
            Store::Postgres(p) => p.run(p.register().credit_links(entry)),
        }
    }

    #[allow(clippy::type_complexity)]
    pub fn credited_original(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Option<(RegisterEntry, Vec<RegisterEntry>)>, StoreError> {
        match self {
            Store::Embedded(s) => s.credited_original(org, env, code_def),
            Store::Postgres(p) => p.run(p.register().credited_original(org, env, code_def)),
        }
    }

    pub fn holds_code(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(s) => s.holds_code(org, env, code_def),
            Store::Postgres(p) => p.run(p.register().holds_code(org, env, code_def)),
        }
    }

    // Boxes and fiscal anomalies.

    pub fn box_counters(&self, nim: &str) -> Result<Option<BoxCounters>, StoreError> {
        match self {
            Store::Embedded(s) => s.box_counters(nim),
            Store::Postgres(p) => p.run(p.register().box_counters(nim)),
        }
    }

    pub fn all_box_counters(&self) -> Result<Vec<BoxCounters>, StoreError> {
        match self {
            Store::Embedded(s) => s.all_box_counters(),
            Store::Postgres(p) => p.run(p.register().all_box_counters()),
        }
    }

    pub fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, StoreError> {
        match self {
            Store::Embedded(s) => s.fiscal_anomalies(),
            Store::Postgres(p) => p.run(p.register().fiscal_anomalies()),
        }
    }

    pub fn record_fiscal_anomaly(
        &self,
        anomaly: FiscalAnomaly,
    ) -> Result<(AnomalyRecord, bool), StoreError> {
        match self {
            Store::Embedded(s) => s.record_fiscal_anomaly(anomaly),
            Store::Postgres(p) => p.run(p.register().record_fiscal_anomaly(anomaly)),
        }
    }

    pub fn acknowledge_fiscal_anomaly(
        &self,
        id: u64,
        by: &str,
        note: &str,
        numbers: &[u64],
        rns: &[LostInvoice],
    ) -> Result<AnomalyRecord, StoreError> {
        match self {
            Store::Embedded(s) => s.acknowledge_fiscal_anomaly(id, by, note, numbers, rns),
            Store::Postgres(p) => p
                .run(
                    p.register()
                        .acknowledge_fiscal_anomaly(id, by, note, numbers, rns),
                )?
                .ok_or_else(|| StoreError::Invalid(format!("no fiscal anomaly {id}"))),
        }
    }

    pub fn lost_rn(&self, device: &str, rn: &str) -> Result<Option<u64>, StoreError> {
        match self {
            Store::Embedded(s) => s.lost_rn(device, rn),
            Store::Postgres(p) => p.run(p.register().lost_rn(device, rn)),
        }
    }

    // The register as a whole: its check and its ability to take writes.

    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        match self {
            Store::Embedded(s) => s.verify(),
            Store::Postgres(p) => {
                // A whole register read in one snapshot: minutes, not seconds, when it is large.
                let limit = std::time::Duration::from_secs(3600);
                let report = p.run_long(limit, p.register().verify())?;
                if !report.problems.is_empty() {
                    return Err(StoreError::Damaged {
                        seq_or_offset: super::DamageAt::Database,
                        reason: report.problems.join("; "),
                    });
                }
                Ok(VerifyReport {
                    records: report.entries,
                    certified: report.entries,
                    invoices_kept: report.invoices_kept,
                    head_sha256: String::new(),
                    chains: Some(report.chains),
                })
            }
        }
    }

    pub fn refuse_if_damaged(&self) -> Result<(), StoreError> {
        match self {
            Store::Embedded(s) => s.refuse_if_damaged(),
            Store::Postgres(_) => Ok(()),
        }
    }

    pub fn write_fault(&self) -> Option<WriteFault> {
        match self {
            Store::Embedded(s) => s.write_fault(),
            Store::Postgres(p) => p.write_fault(),
        }
    }

    /// Asks a database whether its server answers (a fault is kept when it does not:
    /// [`Store::write_fault`]); nothing to ask of the embedded store.
    pub fn probe(&self) {
        match self {
            Store::Embedded(_) => {}
            Store::Postgres(p) => p.probe(),
        }
    }

    /// Takes or renews the lease `name` for `holder` for `ttl` (by the database's clock):
    /// its epoch, the fencing token of what the holder writes under it, or `None` while
    /// another holder has it. The embedded store belongs to one process (`gateway.lock`):
    /// every lease is its own, under epoch 1.
    pub fn take_lease(
        &self,
        name: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<Option<u64>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(Some(1)),
            Store::Postgres(p) => p.run(p.register().take_lease(name, holder, ttl)),
        }
    }

    /// Gives the lease `name` back if `holder` holds it under `epoch`; whether it did.
    pub fn release_lease(&self, name: &str, holder: &str, epoch: u64) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().release_lease(name, holder, epoch)),
        }
    }

    pub fn resume_writes(&self) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(s) => s.resume_writes(),
            Store::Postgres(p) => p.resume_writes(),
        }
    }
}

/// A rule of PostgreSQL's schema broken by a write, as the embedded store says it.
pub(super) fn refused(refusal: Refusal, what: &str) -> StoreError {
    match refusal {
        Refusal::QuotaExhausted => StoreError::QuotaExhausted(what.to_owned()),
        Refusal::UnknownOrganization => StoreError::UnknownOrganization(what.to_owned()),
        Refusal::UnknownKey => StoreError::UnknownKey(what.to_owned()),
        Refusal::UnknownDashboardToken => {
            StoreError::Invalid(format!("unknown dashboard token {what:?}"))
        }
        Refusal::IdTaken => StoreError::Conflict(format!("id {what:?} already exists")),
        Refusal::Invalid => StoreError::Invalid(format!("{what:?} cannot be stored as given")),
        // Another replica's request took the rn or the key between admission's read and
        // this write: in flight there (409), whatever it comes to.
        Refusal::RnTaken => StoreError::InFlight(format!(
            "an invoice of {what:?} with this rn is open or certified already"
        )),
        Refusal::IdempotencyKeyTaken => StoreError::InFlight(format!(
            "an Idempotency-Key of {what:?} is bound to another request"
        )),
        Refusal::IntentNotOpen => match what.parse() {
            Ok(id) => StoreError::IntentNotOpen(id),
            Err(_) => StoreError::Conflict(format!("intent {what} is not open")),
        },
        Refusal::Fenced => StoreError::Fenced(what.to_owned()),
        Refusal::Raced => StoreError::Conflict(format!(
            "another writer changed the register at the same moment ({what}); try again"
        )),
    }
}
