//! An embedded register copied into an empty PostgreSQL store (`emcf-gateway store import`,
//! issue 28, docs/postgresql.md "Moving a register"): the journal's records, in the
//! journal's order, written in **one transaction** with the ids they have there, so that a
//! refused import leaves the database as empty as it found it.
//!
//! * An intent keeps its journal id (`OVERRIDING SYSTEM VALUE`), and so does every event
//!   (an anomaly's id is its event's: the embedded store's is the journal seq of its record);
//!   both identities are moved past the journal's last seq at the end.
//! * A certification keeps its sequence number, `certified_at`, `source` and quota year; its
//!   entry is stored without the invoice its intent keeps (as 1.8.0 and later journal it),
//!   chained per organization, the schema's triggers checking every rule as for a live write
//!   (none is disabled).
//! * An intent claims its quota unit as a live one does: in the quota year of its entry if it
//!   was certified, else the year it was received in. The limit of each claim is the
//!   organization's quota as the configuration gives it for the organization as saved at
//!   that point of the journal, or the units its register already holds that year plus this
//!   one when that is more (a quota lowered since): the import records what happened, it
//!   does not decide it again. The next live claim carries the quota of the day.
//! * Times go to `timestamptz`, which keeps microseconds; the records (`jsonb`, the entry's
//!   text) keep the journal's own to the nanosecond.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use deadpool_postgres::Transaction;
use tokio::sync::mpsc::Receiver;

mod finish;

use super::register::utc;
use super::{PgError, PgPool, PgRegister};
use crate::model::{AnomalyAck, Environment, IntentId, OrgId, Organization, RegisterEntry};
use crate::store::{Event, Record};

/// How an intent of the journal ends (read by a first pass over the journal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Certified, in this quota year.
    Certified(i32),
    /// Abandoned.
    Abandoned,
}

/// What the import needs to know beyond the records: how each intent ends, and the
/// configuration's rules for a quota claim.
pub struct ImportRules<'a> {
    /// Each settled intent's end, by id; an intent not here is still open.
    pub settled: &'a HashMap<IntentId, Settled>,
    /// The organization's annual quota as the configuration gives it.
    pub quota_of: &'a (dyn Fn(&Organization) -> u64 + Sync),
    /// The quota year of an instant (the configuration's time zone).
    pub year_of: &'a (dyn Fn(DateTime<Utc>) -> i32 + Sync),
    /// The journal's last seq: an import that received fewer records (the reader stopped)
    /// commits nothing.
    pub records: u64,
    /// The SHA-256 of the journal's last record, said in the import's own event.
    pub head_sha256: &'a str,
}

/// The kind of the event an import appends after the journal's records (`events`): the
/// journal's last seq and head. The ids up to `records` are the journal's (an export keeps
/// them: `src/store/transfer/export.rs`).
pub const IMPORTED: &str = "register_imported";

/// Why an import did not happen.
#[derive(Debug)]
pub enum ImportRefusal {
    /// The database holds organizations or events already: nothing was written.
    NotEmpty,
}

/// What the import wrote, counted as it went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportCounts {
    /// Journal records read.
    pub records: u64,
    /// Organizations (distinct).
    pub organizations: u64,
    /// API keys issued.
    pub keys: u64,
    /// Dashboard tokens issued.
    pub tokens: u64,
    /// Intents (open, certified or abandoned).
    pub intents: u64,
    /// Register entries, both environments.
    pub entries: u64,
    /// Intents abandoned.
    pub abandoned: u64,
    /// Fiscal anomalies.
    pub anomalies: u64,
    /// Entries per (organization, environment), as the register counts them.
    pub per_register: Vec<(OrgId, Environment, u64)>,
}

/// The import's transaction and what it remembers as it goes.
struct Import<'t, 'r> {
    tx: Transaction<'t>,
    pool: &'r PgPool,
    rules: &'r ImportRules<'r>,
    /// Each organization as last saved so far.
    orgs: HashMap<OrgId, Organization>,
    /// Each key's organization.
    key_orgs: HashMap<String, OrgId>,
    /// Each dashboard token's organization.
    token_orgs: HashMap<String, OrgId>,
    /// Each organization's chain: entries so far and the last one's hash.
    chains: HashMap<OrgId, (i64, Vec<u8>)>,
    /// Units held per (organization, year), as the claims go.
    held: HashMap<(OrgId, i32), u64>,
    /// The claim of each intent still open in the import (to release it if abandoned).
    claims: HashMap<IntentId, (OrgId, i32)>,
    counts: ImportCounts,
}

fn bigint(value: u64, what: &str) -> Result<i64, PgError> {
    i64::try_from(value).map_err(|_| PgError::Query {
        doing: format!("importing {what}"),
        reason: format!("{value} is beyond what PostgreSQL's bigint holds"),
    })
}

fn json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, PgError> {
    serde_json::to_string(value).map_err(|e| PgError::Query {
        doing: format!("importing {what}"),
        reason: e.to_string(),
    })
}

/// A record the import cannot take as it is (its kind and seq said).
fn unusable(record: &Record, reason: impl std::fmt::Display) -> PgError {
    PgError::Query {
        doing: format!(
            "importing journal record {} ({})",
            record.seq,
            record.event.kind()
        ),
        reason: reason.to_string(),
    }
}

impl PgRegister {
    /// Imports the journal's `records` (in order, from its first) into this database, in
    /// one transaction; refused, writing nothing, when the database holds an organization
    /// or an event. A record a rule of the schema refuses fails the import whole (the
    /// error names its seq): nothing is committed.
    pub async fn import(
        &self,
        mut records: Receiver<Record>,
        rules: &ImportRules<'_>,
    ) -> Result<Result<ImportCounts, ImportRefusal>, PgError> {
        let pool = self.pool();
        let mut client = pool.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| pool.query_error("starting the import", &e))?;
        // Records are read from the file between statements: never cut for a silence.
        tx.batch_execute(super::connect::UNBOUNDED_SILENCE)
            .await
            .map_err(|e| pool.query_error("starting the import", &e))?;
        let holds: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM organizations) OR EXISTS (SELECT 1 FROM events) \
                 OR EXISTS (SELECT 1 FROM intents)",
                &[],
            )
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| pool.query_error("reading whether the database is empty", &e))?;
        if holds {
            return Ok(Err(ImportRefusal::NotEmpty));
        }
        let mut import = Import {
            tx,
            pool,
            rules,
            orgs: HashMap::new(),
            key_orgs: HashMap::new(),
            token_orgs: HashMap::new(),
            chains: HashMap::new(),
            held: HashMap::new(),
            claims: HashMap::new(),
            counts: ImportCounts::default(),
        };
        while let Some(record) = records.recv().await {
            import.record(&record).await?;
            import.counts.records = record.seq;
        }
        import.finish().await.map(Ok)
    }
}

impl Import<'_, '_> {
    async fn exec(
        &self,
        record: &Record,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, PgError> {
        let doing = format!(
            "importing journal record {} ({})",
            record.seq,
            record.event.kind()
        );
        // Prepared once per connection: each record is then one round trip.
        let statement = self
            .tx
            .prepare_cached(sql)
            .await
            .map_err(|e| self.pool.query_error(&doing, &e))?;
        self.tx
            .execute(&statement, params)
            .await
            .map_err(|e| self.pool.query_error(&doing, &e))
    }

    /// Appends `record`'s event to `events` with its journal seq as its id.
    async fn event(&self, record: &Record, org: Option<&str>) -> Result<(), PgError> {
        let (kind, body) = super::access::event(record.event.clone())?;
        let id = bigint(record.seq, "a record's seq")?;
        self.exec(
            record,
            "INSERT INTO events (id, at, org, kind, body) OVERRIDING SYSTEM VALUE \
             VALUES ($1, $2::text::timestamptz, $3, $4, $5::text::jsonb)",
            &[&id, &utc(&record.at), &org, &kind, &body],
        )
        .await?;
        Ok(())
    }

    /// The organization of a key or token named by `record`.
    fn org_of<'m>(
        map: &'m HashMap<String, OrgId>,
        id: &str,
        record: &Record,
    ) -> Result<&'m str, PgError> {
        map.get(id)
            .map(String::as_str)
            .ok_or_else(|| unusable(record, format!("{id:?} was never issued before it")))
    }

    async fn record(&mut self, record: &Record) -> Result<(), PgError> {
        match &record.event {
            Event::OrganizationSaved(org) => {
                let text = json(org, "an organization")?;
                self.exec(
                    record,
                    "INSERT INTO organizations (id, record, saved_at) \
                     VALUES ($1, $2::text::jsonb, $3::text::timestamptz) ON CONFLICT (id) \
                     DO UPDATE SET record = EXCLUDED.record, saved_at = EXCLUDED.saved_at",
                    &[&org.id, &text, &utc(&record.at)],
                )
                .await?;
                self.event(record, Some(&org.id)).await?;
                if self.orgs.insert(org.id.clone(), org.clone()).is_none() {
                    self.counts.organizations += 1;
                }
            }
            Event::KeyIssued(key) => {
                let text = json(key, "an API key")?;
                let env = key.environment.as_str();
                self.exec(
                    record,
                    "INSERT INTO api_keys (id, org, environment, record, enabled) \
                     VALUES ($1, $2, $3::text::environment, $4::text::jsonb, $5)",
                    &[&key.id, &key.org, &env, &text, &key.enabled],
                )
                .await?;
                self.event(record, Some(&key.org)).await?;
                self.key_orgs.insert(key.id.clone(), key.org.clone());
                self.counts.keys += 1;
            }
            Event::KeyEnabled { id } | Event::KeyDisabled { id } => {
                let enabled = matches!(record.event, Event::KeyEnabled { .. });
                let org = Self::org_of(&self.key_orgs, id, record)?.to_owned();
                self.exec(
                    record,
                    "UPDATE api_keys SET enabled = $2 WHERE id = $1",
                    &[id, &enabled],
                )
                .await?;
                self.event(record, Some(&org)).await?;
            }
            Event::DashboardTokenIssued {
                token_id,
                org,
                token_sha256,
                created_at,
                label,
            } => {
                let token = crate::store::DashboardToken {
                    id: token_id.clone(),
                    org: org.clone(),
                    token_sha256: token_sha256.clone(),
                    label: label.clone(),
                    created_at: *created_at,
                    revoked: false,
                };
                let text = json(&token, "a dashboard token")?;
                self.exec(
                    record,
                    "INSERT INTO dashboard_tokens (id, org, record, revoked) \
                     VALUES ($1, $2, $3::text::jsonb, false)",
                    &[token_id, org, &text],
                )
                .await?;
                self.event(record, Some(org)).await?;
                self.token_orgs.insert(token_id.clone(), org.clone());
                self.counts.tokens += 1;
            }
            Event::DashboardTokenRevoked { token_id } => {
                let org = Self::org_of(&self.token_orgs, token_id, record)?.to_owned();
                self.exec(
                    record,
                    "UPDATE dashboard_tokens SET revoked = true WHERE id = $1",
                    &[token_id],
                )
                .await?;
                self.event(record, Some(&org)).await?;
            }
            Event::Intent(intent) => self.intent(record, intent).await?,
            Event::Certified(entry) => self.certified(record, entry).await?,
            Event::Abandoned { intent, reason } => {
                let id = bigint(*intent, "an intent id")?;
                let done = self
                    .exec(
                        record,
                        "UPDATE intents SET state = 'abandoned', \
                         settled_at = $2::text::timestamptz, reason = $3 \
                         WHERE id = $1 AND state = 'open'",
                        &[&id, &utc(&record.at), reason],
                    )
                    .await?;
                if done != 1 {
                    return Err(unusable(record, format!("intent {intent} is not open")));
                }
                if let Some(claim) = self.claims.remove(intent) {
                    if let Some(held) = self.held.get_mut(&claim) {
                        *held = held.saturating_sub(1);
                    }
                }
                self.counts.abandoned += 1;
            }
            Event::FiscalAnomaly(anomaly) => {
                let id = bigint(record.seq, "a record's seq")?;
                let text = json(anomaly, "a fiscal anomaly")?;
                self.event(record, None).await?;
                self.exec(
                    record,
                    "INSERT INTO fiscal_anomalies (id, detected_at, anomaly) \
                     VALUES ($1, $2::text::timestamptz, $3::text::jsonb)",
                    &[&id, &utc(&record.at), &text],
                )
                .await?;
                self.counts.anomalies += 1;
            }
            Event::FiscalAnomalyAcknowledged {
                anomaly,
                by,
                note,
                numbers,
                rns,
            } => {
                let id = bigint(*anomaly, "an anomaly id")?;
                self.event(record, None).await?;
                let found = super::boxes::acknowledged_counters(&self.tx, self.pool, id).await?;
                if !found {
                    return Err(unusable(record, format!("no fiscal anomaly {anomaly}")));
                }
                let ack = AnomalyAck {
                    by: by.clone(),
                    note: note.clone(),
                    at: record.at,
                    numbers: numbers.clone(),
                    rns: rns.clone(),
                };
                let text = json(&ack, "an acknowledgement")?;
                self.exec(
                    record,
                    "UPDATE fiscal_anomalies SET acknowledged = $2::text::jsonb WHERE id = $1",
                    &[&id, &text],
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn intent(
        &mut self,
        record: &Record,
        intent: &crate::model::Intent,
    ) -> Result<(), PgError> {
        let id = record.seq;
        let claim = match intent.environment {
            Environment::Sandbox => None,
            Environment::Production => {
                let year = match self.rules.settled.get(&id) {
                    Some(Settled::Certified(year)) => *year,
                    _ => (self.rules.year_of)(intent.received_at),
                };
                let org = self.orgs.get(&intent.org).ok_or_else(|| {
                    unusable(
                        record,
                        format!("organization {:?} was never saved", intent.org),
                    )
                })?;
                let quota = (self.rules.quota_of)(org);
                let held = self.held.entry((intent.org.clone(), year)).or_default();
                *held += 1;
                self.claims.insert(id, (intent.org.clone(), year));
                Some((
                    year,
                    bigint(quota.min(i64::MAX as u64).max(*held), "a quota")?,
                ))
            }
        };
        let (year, limit) = (claim.map(|c| c.0), claim.map(|c| c.1));
        let body = json(intent, "an intent")?;
        let env = intent.environment.as_str();
        let key = intent.idempotency_key.as_deref();
        self.exec(
            record,
            "WITH i AS (INSERT INTO intents (id, org, environment, rn, request_digest, body, \
             created_at, quota_year, quota_limit) OVERRIDING SYSTEM VALUE VALUES ($1, $2, \
             $3::text::environment, $4, $5, $6::text::jsonb, $7::text::timestamptz, $8, $9) \
             RETURNING id, org) \
             INSERT INTO idempotency_keys (org, environment, key, intent, rn, request_digest) \
             SELECT org, $3::text::environment, $10, id, $4, $5 FROM i WHERE $10::text IS NOT NULL",
            &[
                &bigint(id, "an intent id")?,
                &intent.org,
                &env,
                &intent.rn,
                &intent.request_digest,
                &body,
                &utc(&intent.received_at),
                &year,
                &limit,
                &key,
            ],
        )
        .await?;
        self.counts.intents += 1;
        Ok(())
    }

    async fn certified(&mut self, record: &Record, entry: &RegisterEntry) -> Result<(), PgError> {
        // Stored as 1.8.0 and later journal it: the invoice stays in its intent (the
        // verification compares every entry read back, invoice included).
        let mut stored = entry.clone();
        stored.request.invoice = None;
        let text = json(&stored, "an entry")?;
        let org = &entry.request.org;
        let (count, prev) = self.chains.get(org).cloned().unwrap_or((0, vec![0u8; 32]));
        let hash = super::register::chain_hash(&prev, &text);
        let env = entry.request.environment.as_str();
        self.exec(
            record,
            "INSERT INTO register_entries (environment, sequence, org, rn, intent, code_def, \
             certified_at, quota_year, chain_seq, prev_hash, hash, entry) \
             VALUES ($1::text::environment, $2, $3, $4, $5, $6, $7::text::timestamptz, $8, $9, \
             $10, $11, $12)",
            &[
                &env,
                &bigint(entry.sequence, "a sequence number")?,
                org,
                &entry.request.rn,
                &bigint(entry.intent, "an intent id")?,
                &entry.security.code_def,
                &utc(&entry.certified_at),
                &entry.quota_year,
                &(count + 1),
                &prev,
                &hash,
                &text,
            ],
        )
        .await?;
        super::boxes::move_box(&self.tx, self.pool, entry).await?;
        self.chains.insert(org.clone(), (count + 1, hash));
        self.claims.remove(&entry.intent);
        self.counts.entries += 1;
        Ok(())
    }
}
