//! The register's writes and reads on PostgreSQL (issue 28, docs/design.md §11): what the
//! store seam's PostgreSQL variant will do for an invoice, in two transactions.
//!
//! * [`PgRegister::record_intent`]: the intent, its quota unit and its Idempotency-Key, in
//!   one statement (one round trip), before the device finalizes.
//! * [`PgRegister::record_certified`]: the entry, in one transaction holding its
//!   environment's next number; the schema's trigger checks the number, the organization's
//!   chain and the intent, and settles the intent; a production entry moves its box's
//!   counters in the same transaction (`boxes.rs`).
//! * [`PgRegister::record_abandoned`]: the intent settled as not certified (the trigger
//!   gives back its quota unit and its key).
//!
//! Values go to the server as text cast there (`::timestamptz`, `::jsonb`): the client is
//! built without its chrono and serde features, and the text is the gateway's own (UTC,
//! RFC 3339; the records' JSON).

use std::sync::{Arc, OnceLock};

use super::cached::Cached;
use chrono::{DateTime, SecondsFormat, Utc};
use sha2::{Digest, Sha256};
use tokio_postgres::error::SqlState;

use super::device_view::{counters_of_nim, open_counters, open_of_device, view_in};
use super::{PgError, PgPool};
use crate::model::{DeviceView, Intent, IntentId, Organization, RegisterEntry, SecurityElements};
use tokio_postgres::types::ToSql;

/// Why the register refused a write: a rule of the schema, not a failure of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The organization's annual quota is used up.
    QuotaExhausted,
    /// No organization has the id named (the embedded store's `UnknownOrganization`).
    UnknownOrganization,
    /// No API key has the id named (the embedded store's `UnknownKey`).
    UnknownKey,
    /// No dashboard token has the id named (the embedded store's `Invalid`, "unknown
    /// dashboard token").
    UnknownDashboardToken,
    /// An API key or a dashboard token has this id already (the embedded store's
    /// `Conflict`).
    IdTaken,
    /// The record cannot be stored as given: an empty id, a new dashboard token already
    /// revoked (the embedded store's `Invalid`).
    Invalid,
    /// The rn has an intent open or certified already.
    RnTaken,
    /// The Idempotency-Key is bound to another request of the organization already.
    IdempotencyKeyTaken,
    /// The intent is not open (settled already, or unknown).
    IntentNotOpen,
    /// This replica's lease is fenced off, or the intent is another replica's now: nothing
    /// was written (`replicas.rs`).
    Fenced,
    /// Another writer moved the organization's chain or the register at the same moment:
    /// nothing was written; the caller may try again.
    Raced,
}

/// A production intent's claim on its organization's quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaClaim {
    /// The quota year.
    pub year: i32,
    /// The organization's quota that year.
    pub quota: u64,
}

/// The register on a PostgreSQL pool.
#[derive(Clone, Debug)]
pub struct PgRegister {
    pool: PgPool,
    /// This process's replica name, once `serve` gave it (`replicas.rs`): its intents name
    /// it, and its writes of them are fenced by its lease. `None` for the CLI's tools.
    replica: Arc<OnceLock<String>>,
}

/// The outcome of a write: done, refused by a rule, or an error of the server.
pub type Written<T> = Result<Result<T, Refusal>, PgError>;

/// An entry's link in its organization's chain: SHA-256 of the previous entry's hash (32
/// zero bytes for the first) followed by the entry's JSON as stored. The schema's trigger
/// computes the same (`register_entry_rules`); `log verify` recomputes it.
pub(super) fn chain_hash(prev: &[u8], entry: &str) -> Vec<u8> {
    Sha256::new()
        .chain_update(prev)
        .chain_update(entry.as_bytes())
        .finalize()
        .to_vec()
}

pub(super) fn utc(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn as_i64(value: u64, what: &str) -> Result<i64, PgError> {
    i64::try_from(value).map_err(|_| PgError::Query {
        doing: format!("sending {what}"),
        reason: format!("{value} is beyond what PostgreSQL's bigint holds"),
    })
}

impl PgRegister {
    /// The register of `pool` (migrated: `super::migrate`).
    pub fn new(pool: PgPool) -> PgRegister {
        PgRegister {
            pool,
            replica: Arc::default(),
        }
    }

    /// Names this process's replica (once; `serve`, after taking its lease).
    pub fn set_replica(&self, replica: &str) {
        let _ = self.replica.set(replica.to_owned());
    }

    /// This process's replica name, if it is one.
    pub fn replica(&self) -> Option<&str> {
        self.replica.get().map(String::as_str)
    }

    /// Its pool.
    pub(super) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Creates or replaces `org` (and says so in `events`).
    pub async fn save_organization(
        &self,
        org: &Organization,
        at: DateTime<Utc>,
    ) -> Result<(), PgError> {
        let record = serde_json::to_string(org).map_err(|e| PgError::Query {
            doing: format!("writing organization {}", org.id),
            reason: e.to_string(),
        })?;
        let sql = "WITH saved AS (INSERT INTO organizations (id, record, saved_at) \
                   VALUES ($1, $2::text::jsonb, $3::text::timestamptz) \
                   ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record, \
                   saved_at = EXCLUDED.saved_at RETURNING id) \
                   INSERT INTO events (at, org, kind, body) \
                   SELECT $3::text::timestamptz, id, 'organization_saved', $2::text::jsonb \
                   FROM saved";
        let client = self.pool.client().await?;
        client
            .cached_execute(sql, &[&org.id, &record, &utc(&at)])
            .await
            .map_err(|e| self.pool.query_error("saving an organization", &e))?;
        Ok(())
    }

    /// Records `intent` before its invoice is finalized, with its quota unit (production)
    /// and its Idempotency-Key: all or nothing, in one statement.
    pub async fn record_intent(
        &self,
        intent: &Intent,
        claim: Option<QuotaClaim>,
    ) -> Written<IntentId> {
        let written = self.intent_with(intent, claim, None).await?;
        Ok(written.map(|(id, _)| id))
    }

    /// [`PgRegister::record_intent`], and the view of the intent's device and of the machine
    /// `nim` read by the same statement: its snapshot, taken before the insert, does not hold
    /// the new intent.
    pub async fn record_intent_with_view(
        &self,
        intent: &Intent,
        claim: Option<QuotaClaim>,
        nim: &str,
    ) -> Written<(IntentId, DeviceView)> {
        let written = self.intent_with(intent, claim, Some(nim)).await?;
        Ok(written.map(|(id, view)| (id, view.unwrap_or_default())))
    }

    async fn intent_with(
        &self,
        intent: &Intent,
        claim: Option<QuotaClaim>,
        view_of: Option<&str>,
    ) -> Written<(IntentId, Option<DeviceView>)> {
        let body = serde_json::to_string(intent).map_err(|e| PgError::Query {
            doing: format!("writing the intent for {}", intent.rn),
            reason: e.to_string(),
        })?;
        let (year, quota) = match claim {
            // A quota beyond bigint (a plan set "unlimited") is as good as unlimited.
            Some(claim) => (
                Some(claim.year),
                Some(as_i64(claim.quota.min(i64::MAX as u64), "a quota")?),
            ),
            None => (None, None),
        };
        // The quota unit is claimed by the schema's trigger as the intent is inserted.
        // A replica's intent names it, and only while its lease is its own (`replicas.rs`).
        let insert = "WITH i AS (INSERT INTO intents (org, environment, rn, request_digest, body, \
                   created_at, quota_year, quota_limit, owner) SELECT $1::text, \
                   $2::text::environment, $3::text, $4::text, $5::text::jsonb, \
                   $6::text::timestamptz, $7::integer, $8::bigint, $10::text \
                   WHERE $10::text IS NULL OR EXISTS (SELECT 1 FROM leases \
                   WHERE name = 'replica:' || $10 AND holder = $10 FOR SHARE) RETURNING id, org), \
                   k AS (INSERT INTO idempotency_keys (org, environment, key, intent, rn, \
                   request_digest) SELECT org, $2::text::environment, $9, id, $3, $4 FROM i \
                   WHERE $9::text IS NOT NULL) \
                   SELECT id";
        let sql = match view_of {
            None => format!("{insert} FROM i"),
            Some(_) => format!(
                "{insert}, {}, {} FROM i",
                open_of_device("$11::text", "NULL::bigint"),
                counters_of_nim("$12::text")
            ),
        };
        let client = self.pool.client().await?;
        let owner = self.replica();
        let env = intent.environment.as_str();
        let received = utc(&intent.received_at);
        let key = intent.idempotency_key.as_deref();
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &intent.org,
            &env,
            &intent.rn,
            &intent.request_digest,
            &body,
            &received,
            &year,
            &quota,
            &key,
            &owner,
        ];
        if let Some(nim) = &view_of {
            params.push(&intent.device);
            params.push(nim);
        }
        let row = client.cached_query_opt(&sql, &params).await;
        match row {
            Ok(None) => Ok(Err(Refusal::Fenced)),
            Ok(Some(row)) => {
                let id: i64 = row
                    .try_get(0)
                    .map_err(|e| self.pool.query_error("reading an intent's id", &e))?;
                let view = match view_of {
                    Some(_) => Some(view_in(&row, 1, &self.pool)?),
                    None => None,
                };
                Ok(Ok((id as IntentId, view)))
            }
            Err(e) => match refusal(&e) {
                Some(refused) => Ok(Err(refused)),
                None => Err(self.pool.query_error("recording an intent", &e)),
            },
        }
    }

    /// Records the certification of intent `id`: its register entry, numbered and chained in
    /// one transaction. The entry is returned as recorded.
    pub async fn record_certified(
        &self,
        id: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Written<RegisterEntry> {
        let written = self
            .certified_with(id, quota_year, certified_at, security, source, false)
            .await?;
        Ok(written.map(|(entry, _)| entry))
    }

    /// [`PgRegister::record_certified`], and the view of the intent's device (its other open
    /// intents, read by the transaction's first statement) and of the entry's machine (its
    /// counters before this entry moved them, read by the same transaction: `None` for an
    /// entry that moves none).
    pub async fn record_certified_with_view(
        &self,
        id: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
    ) -> Written<(RegisterEntry, DeviceView)> {
        self.certified_with(id, quota_year, certified_at, security, source, true)
            .await
    }

    async fn certified_with(
        &self,
        id: IntentId,
        quota_year: i32,
        certified_at: DateTime<Utc>,
        security: SecurityElements,
        source: &str,
        with_view: bool,
    ) -> Written<(RegisterEntry, DeviceView)> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool.query_error(doing, &e);
        let mut client = self.pool.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting a certification", e))?;
        let intent_id = as_i64(id, "an intent id")?;
        // A replica writes only under its own lease, locked first (`replicas.rs`).
        if let Some(me) = self.replica() {
            let held = tx
                .cached_query_opt(super::replicas::HOLD_OWN, &[&me])
                .await
                .map_err(|e| fail("reading this replica's lease", e))?;
            if held.is_none() {
                return Ok(Err(Refusal::Fenced));
            }
        }
        // The intent locked too: a certification or an abandon of it committed while this
        // waited is seen (the row is read again after the wait). With the view, the device's
        // other open intents, read first (an intent settled after this read is then in the
        // counters read below: explained either way).
        let open = if with_view {
            open_of_device("i.body ->> 'device'", "i.id")
        } else {
            "NULL::bigint[]".to_owned()
        };
        let found = tx
            .cached_query_opt(
                &format!(
                    "SELECT i.body::text, h.next_sequence, {open}, i.owner FROM intents i \
                     JOIN register_heads h ON h.environment = i.environment \
                     WHERE i.id = $1 AND i.state = 'open' FOR UPDATE OF h, i"
                ),
                &[&intent_id],
            )
            .await
            .map_err(|e| fail("reading an open intent", e))?;
        let Some(found) = found else {
            return Ok(Err(Refusal::IntentNotOpen));
        };
        if let Some(me) = self.replica() {
            let owner: Option<String> =
                found.try_get(3).map_err(|e| fail("reading an intent", e))?;
            if owner.as_deref() != Some(me) {
                return Ok(Err(Refusal::Fenced));
            }
        }
        let body: String = found.try_get(0).map_err(|e| fail("reading an intent", e))?;
        let sequence: i64 = found
            .try_get(1)
            .map_err(|e| fail("reading a register head", e))?;
        let open: Option<Vec<Option<i64>>> = found
            .try_get(2)
            .map_err(|e| fail("reading a device's open intents", e))?;
        let mut request: Intent = serde_json::from_str(&body).map_err(|e| PgError::Query {
            doing: format!("reading intent {id}"),
            reason: e.to_string(),
        })?;
        // The invoice stays in its intent, as on the embedded store since 1.8.0; the entry
        // returned carries it, as the embedded store's does.
        let invoice = request.invoice.take();
        let head = tx
            .cached_query_opt(
                "SELECT entries, head FROM chain_heads WHERE org = $1 FOR UPDATE",
                &[&request.org],
            )
            .await
            .map_err(|e| fail("reading a chain head", e))?;
        let (chain_seq, prev) = match head {
            Some(row) => {
                let entries: i64 = row
                    .try_get(0)
                    .map_err(|e| fail("reading a chain head", e))?;
                let head: Vec<u8> = row
                    .try_get(1)
                    .map_err(|e| fail("reading a chain head", e))?;
                (entries + 1, head)
            }
            None => (1, vec![0u8; 32]),
        };
        let entry = RegisterEntry {
            sequence: sequence as u64,
            intent: id,
            request,
            certified_at,
            security,
            source: source.to_string(),
            quota_year,
        };
        let text = serde_json::to_string(&entry).map_err(|e| PgError::Query {
            doing: format!("writing entry {sequence}"),
            reason: e.to_string(),
        })?;
        let hash = chain_hash(&prev, &text);
        let env = entry.request.environment.as_str();
        let inserted = tx
            .cached_execute(
                "INSERT INTO register_entries (environment, sequence, org, rn, intent, \
                 code_def, certified_at, quota_year, chain_seq, prev_hash, hash, entry) \
                 VALUES ($1::text::environment, $2, $3, $4, $5, $6, $7::text::timestamptz, \
                 $8, $9, $10, $11, $12)",
                &[
                    &env,
                    &sequence,
                    &entry.request.org,
                    &entry.request.rn,
                    &intent_id,
                    &entry.security.code_def,
                    &utc(&certified_at),
                    &quota_year,
                    &chain_seq,
                    &prev,
                    &hash,
                    &text,
                ],
            )
            .await;
        if let Err(e) = inserted {
            return match refusal(&e) {
                Some(refused) => Ok(Err(refused)),
                None => Err(fail("recording an entry", e)),
            };
        }
        // Its box's counters, in the same transaction (`boxes.rs`); what they were before.
        let known = super::boxes::move_box(&tx, &self.pool, &entry).await?;
        // A COMMIT that fails with the connection gone may have happened: the caller settles
        // it from the database (docs/design.md §11), never guesses.
        tx.commit()
            .await
            .map_err(|e| match fail("committing a certification", e) {
                PgError::Unreachable { target, reason } => {
                    PgError::CommitUnknown { target, reason }
                }
                other => other,
            })?;
        let mut entry = entry;
        entry.request.invoice = invoice;
        let view = DeviceView {
            open: open_counters(open)?,
            known,
        };
        Ok(Ok((entry, view)))
    }

    /// Settles intent `id` as not certified: the trigger gives back its quota unit and its
    /// Idempotency-Key.
    pub async fn record_abandoned(
        &self,
        id: IntentId,
        reason: &str,
        at: DateTime<Utc>,
    ) -> Written<()> {
        let fail = |e: tokio_postgres::Error| self.pool.query_error("abandoning an intent", &e);
        let mut client = self.pool.client().await?;
        let tx = client.transaction().await.map_err(fail)?;
        let owner = self.replica();
        // A replica writes only under its own lease, locked first (`replicas.rs`).
        if let Some(me) = owner {
            let held = tx
                .cached_query_opt(super::replicas::HOLD_OWN, &[&me])
                .await
                .map_err(fail)?;
            if held.is_none() {
                return Ok(Err(Refusal::Fenced));
            }
        }
        let id = as_i64(id, "an intent id")?;
        let updated = tx
            .cached_query_opt(
                "WITH a AS (UPDATE intents SET state = 'abandoned', \
                 settled_at = $2::text::timestamptz, reason = $3 \
                 WHERE id = $1 AND state = 'open' AND ($4::text IS NULL OR owner = $4) \
                 RETURNING id) \
                 SELECT (SELECT count(*) FROM a), \
                 (SELECT state = 'open' FROM intents WHERE id = $1)",
                &[&id, &utc(&at), &reason, &owner],
            )
            .await
            .map_err(fail)?;
        let (abandoned, still_open) = match updated {
            Some(row) => (
                row.try_get::<_, i64>(0).map_err(fail)?,
                row.try_get::<_, Option<bool>>(1).map_err(fail)?,
            ),
            None => (0, None),
        };
        tx.commit().await.map_err(fail)?;
        Ok(match (abandoned, still_open) {
            (1, _) => Ok(()),
            // Open, but another replica's now.
            (_, Some(true)) => Err(Refusal::Fenced),
            _ => Err(Refusal::IntentNotOpen),
        })
    }

    /// Units of `org`'s quota of `year` used by certifications.
    pub async fn quota_used(&self, org: &str, year: i32) -> Result<u64, PgError> {
        // Certified units, as the embedded store counts them: the claims of open intents are
        // held in `quota_use` too (so that no replica passes the quota), and admission holds
        // its own in-flight units in memory.
        let client = self.pool.client().await?;
        let row = client
            .cached_query_one("SELECT COALESCE((SELECT used FROM quota_use WHERE org = $1 AND year = $2), 0)                  - (SELECT count(*) FROM intents                     WHERE state = 'open' AND org = $1 AND quota_year = $2)",
                &[&org, &year],
            )
            .await
            .map_err(|e| self.pool.query_error("reading a quota", &e))?;
        let used: i64 = row
            .try_get(0)
            .map_err(|e| self.pool.query_error("reading a quota", &e))?;
        Ok(used.max(0) as u64)
    }
}

/// The rule of the schema a statement broke, if that is why it failed (by the name of the
/// constraint, or of the rule a trigger raised: `migrations/0001_register.sql`).
fn refusal(error: &tokio_postgres::Error) -> Option<Refusal> {
    let db = error.as_db_error()?;
    let code = db.code();
    if *code != SqlState::CHECK_VIOLATION && *code != SqlState::UNIQUE_VIOLATION {
        return None;
    }
    match db.constraint()? {
        "quota_use_check" => Some(Refusal::QuotaExhausted),
        "intents_one_live_per_rn" | "register_entries_org_environment_rn_key" => {
            Some(Refusal::RnTaken)
        }
        "idempotency_keys_pkey" => Some(Refusal::IdempotencyKeyTaken),
        "register_intent_open" | "register_entries_intent_key" => Some(Refusal::IntentNotOpen),
        "register_chain_link" | "chain_heads_pkey" | "register_next_number" => Some(Refusal::Raced),
        _ => None,
    }
}
