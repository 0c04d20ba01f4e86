//! The register's reads on PostgreSQL (issue 28, docs/design.md §11): what the store seam's
//! PostgreSQL variant answers where the embedded store reads its index (`queries.rs`,
//! `links.rs`, `index.rs`, `index_org.rs` beside the journal), with the same answers: the
//! same entries, each with the invoice its intent keeps (as the embedded store's
//! `entry_ref.rs` gives it), in the same order, the same `None`s.
//!
//! Each is one indexed query (or, for a page that a filter of the caller's thins out, a few
//! of them, each bounded): a large register is never read whole. The indexes are those of
//! `migrations/0001_register.sql`; credit notes are found through its `credit_notes`, and an
//! organization's count of entries read from its `register_counts`, both kept by the
//! register's trigger as each entry is inserted.

use super::cached::Cached;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::{PgError, PgRegister};
use crate::model::{
    reference_of, Environment, IdempotencyBinding, Intent, IntentId, RegisterEntry,
};
use crate::store::EntryFilter;

/// What every read of entries selects: the entry as hashed, then the invoice its intent keeps
/// and that intent's request digest (`e` the entry, `i` its intent).
const ENTRIES: &str = "SELECT e.entry, i.body ->> 'invoice', i.request_digest \
                       FROM register_entries e JOIN intents i ON i.id = e.intent";

/// The most entries one query of [`PgRegister::org_entries_back`] asks for.
const BACK_BATCH: usize = 500;

/// The entry `text` (as hashed) with the invoice `kept` by its intent, whose request digest
/// is `digest` (an entry that carries an invoice itself, as 1.5.0 to 1.7.0 wrote them, keeps
/// its own).
pub(super) fn entry_from(
    text: &str,
    kept: Option<String>,
    digest: &str,
) -> Result<RegisterEntry, PgError> {
    let mut entry: RegisterEntry =
        serde_json::from_str(text).map_err(|e| unreadable("an entry", e))?;
    if entry.request.invoice.is_none() {
        // As on the embedded store (`kept.rs`): the copy is its intent's, the same request.
        if digest != entry.request.request_digest {
            return Err(unreadable(
                &format!("entry {}", entry.sequence),
                format!(
                    "its intent {} is another request (digest {digest})",
                    entry.intent
                ),
            ));
        }
        entry.request.invoice = kept;
    }
    Ok(entry)
}

/// `value` as a bigint, if PostgreSQL's bigint holds it.
fn bigint(value: u64) -> Option<i64> {
    i64::try_from(value).ok()
}

/// A bigint read back as a `u64` (`what` names it in the error).
pub(super) fn unsigned(value: i64, what: &str) -> Result<u64, PgError> {
    u64::try_from(value).map_err(|_| PgError::Query {
        doing: format!("reading {what}"),
        reason: format!("{value} is not a count or an id"),
    })
}

/// A stored record that does not read back as the gateway's own.
pub(super) fn unreadable(what: &str, error: impl std::fmt::Display) -> PgError {
    PgError::Query {
        doing: format!("reading {what}"),
        reason: error.to_string(),
    }
}

impl PgRegister {
    /// Runs `sql` on a connection of the pool.
    async fn rows(
        &self,
        doing: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, PgError> {
        let client = self.pool().client().await?;
        client
            .cached_query(sql, params)
            .await
            .map_err(|e| self.pool().query_error(doing, &e))
    }

    /// The entry a row of [`ENTRIES`] holds, with the invoice its intent keeps.
    fn entry_of(&self, row: &Row) -> Result<RegisterEntry, PgError> {
        let failed = |e: tokio_postgres::Error| self.pool().query_error("reading an entry", &e);
        let text: String = row.try_get(0).map_err(failed)?;
        let kept: Option<String> = row.try_get(1).map_err(failed)?;
        let digest: String = row.try_get(2).map_err(failed)?;
        entry_from(&text, kept, &digest)
    }

    /// The entries of `sql` (a query of [`ENTRIES`]), in its order.
    async fn entries_of(
        &self,
        doing: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<RegisterEntry>, PgError> {
        let rows = self.rows(doing, sql, params).await?;
        rows.iter().map(|row| self.entry_of(row)).collect()
    }

    /// The entry at `sequence` of the `env` register.
    pub async fn entry(
        &self,
        env: Environment,
        sequence: u64,
    ) -> Result<Option<RegisterEntry>, PgError> {
        let Some(sequence) = bigint(sequence) else {
            return Ok(None);
        };
        let sql =
            format!("{ENTRIES} WHERE e.environment = $1::text::environment AND e.sequence = $2");
        let found = self
            .entries_of("reading an entry", &sql, &[&env.as_str(), &sequence])
            .await?;
        Ok(found.into_iter().next())
    }

    /// `org`'s entry of `env` for invoice `rn`, if certified.
    pub async fn entry_by_rn(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<RegisterEntry>, PgError> {
        let sql = format!(
            "{ENTRIES} WHERE e.org = $1 AND e.environment = $2::text::environment AND e.rn = $3"
        );
        let found = self
            .entries_of("reading an entry", &sql, &[&org, &env.as_str(), &rn])
            .await?;
        Ok(found.into_iter().next())
    }

    /// Entries of one register after a sequence, in sequence order, at most `limit` (of one
    /// organization, or all).
    pub async fn entries(&self, filter: &EntryFilter) -> Result<Vec<RegisterEntry>, PgError> {
        let Some(after) = bigint(filter.after_sequence) else {
            return Ok(Vec::new());
        };
        if filter.limit == 0 {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        let env = filter.environment.as_str();
        match filter.org.as_deref() {
            None => {
                let sql = format!(
                    "{ENTRIES} WHERE e.environment = $1::text::environment AND e.sequence > $2 \
                     ORDER BY e.sequence LIMIT $3"
                );
                self.entries_of("reading the register", &sql, &[&env, &after, &limit])
                    .await
            }
            Some(org) => {
                let sql = format!(
                    "{ENTRIES} WHERE e.org = $1 AND e.environment = $2::text::environment \
                     AND e.sequence > $3 ORDER BY e.sequence LIMIT $4"
                );
                self.entries_of(
                    "reading an organization's register",
                    &sql,
                    &[&org, &env, &after, &limit],
                )
                .await
            }
        }
    }

    /// Entries of `org` in `env` with a sequence below `before`, newest first, that `keep`
    /// accepts; at most `limit`. Read back in bounded pages until `limit` are kept or the
    /// organization's register is read to its start.
    pub async fn org_entries_back(
        &self,
        org: &str,
        env: Environment,
        before: u64,
        limit: usize,
        mut keep: impl FnMut(&RegisterEntry) -> bool + Send,
    ) -> Result<Vec<RegisterEntry>, PgError> {
        let mut out = Vec::new();
        if limit == 0 || before == 0 {
            return Ok(out);
        }
        // Sequences go up to i64::MAX: below a larger `before` is below that.
        let mut below = bigint(before).unwrap_or(i64::MAX);
        let sql = format!(
            "{ENTRIES} WHERE e.org = $1 AND e.environment = $2::text::environment \
             AND e.sequence < $3 ORDER BY e.sequence DESC LIMIT $4"
        );
        let mut batch = limit.min(BACK_BATCH);
        loop {
            let page = batch as i64;
            let entries = self
                .entries_of(
                    "reading an organization's register back",
                    &sql,
                    &[&org, &env.as_str(), &below, &page],
                )
                .await?;
            let read = entries.len();
            for entry in entries {
                below = bigint(entry.sequence).unwrap_or(i64::MAX);
                if keep(&entry) {
                    out.push(entry);
                    if out.len() >= limit {
                        return Ok(out);
                    }
                }
            }
            if read < batch {
                return Ok(out);
            }
            // The filter thins the pages out: ask for more at once, within bounds.
            batch = (batch * 2).min(BACK_BATCH);
        }
    }

    /// How many entries `org` has in the `env` register (all years).
    pub async fn org_entry_count(&self, org: &str, env: Environment) -> Result<u64, PgError> {
        // Counted by the register's trigger as each entry is inserted.
        let rows = self
            .rows(
                "counting an organization's entries",
                "SELECT entries FROM register_counts \
                 WHERE org = $1 AND environment = $2::text::environment",
                &[&org, &env.as_str()],
            )
            .await?;
        if rows.is_empty() {
            return Ok(0);
        }
        self.one_count(&rows, "an organization's entries")
    }

    /// How many entries the `env` register holds (its last sequence: no gaps).
    pub async fn register_length(&self, env: Environment) -> Result<u64, PgError> {
        let rows = self
            .rows(
                "reading a register's length",
                "SELECT next_sequence - 1 FROM register_heads \
                 WHERE environment = $1::text::environment",
                &[&env.as_str()],
            )
            .await?;
        if rows.is_empty() {
            return Ok(0);
        }
        self.one_count(&rows, "a register's length")
    }

    /// The count the first row's first column holds.
    fn one_count(&self, rows: &[Row], what: &str) -> Result<u64, PgError> {
        let Some(row) = rows.first() else {
            return Err(unreadable(what, "no row"));
        };
        let count: i64 = row
            .try_get(0)
            .map_err(|e| self.pool().query_error(what, &e))?;
        unsigned(count, what)
    }

    /// The first entry of `org`'s `env` register certified as `code_def` (a codeDEFDGI taken
    /// twice keeps its first entry, as on the embedded store).
    async fn entry_by_code(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Option<RegisterEntry>, PgError> {
        let sql = format!(
            "{ENTRIES} WHERE e.org = $1 AND e.environment = $2::text::environment \
             AND e.code_def = $3 ORDER BY e.sequence LIMIT 1"
        );
        let found = self
            .entries_of(
                "reading an entry by its codeDEFDGI",
                &sql,
                &[&org, &env.as_str(), &code_def],
            )
            .await?;
        Ok(found.into_iter().next())
    }

    /// The entries of `org`'s `env` register that name `code_def` as their original, in
    /// register order.
    async fn credit_notes_of(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Vec<RegisterEntry>, PgError> {
        let sql = format!(
            "{ENTRIES} JOIN credit_notes c \
             ON c.environment = e.environment AND c.sequence = e.sequence \
             WHERE c.org = $1 AND c.environment = $2::text::environment AND c.reference = $3 \
             ORDER BY c.sequence"
        );
        self.entries_of(
            "reading credit notes",
            &sql,
            &[&org, &env.as_str(), &code_def],
        )
        .await
    }

    /// A credit note's original and an invoice's credit notes, in the entry's organization
    /// and register: the entry `entry`'s kept invoice names as its original (if the register
    /// holds it), and the entries that name `entry` as theirs, in order.
    pub async fn credit_links(
        &self,
        entry: &RegisterEntry,
    ) -> Result<(Option<RegisterEntry>, Vec<RegisterEntry>), PgError> {
        let (org, env) = (entry.request.org.as_str(), entry.request.environment);
        let original = match entry.request.invoice.as_deref().and_then(reference_of) {
            Some(code) => self.entry_by_code(org, env, &code).await?,
            None => None,
        };
        let credit_notes = self
            .credit_notes_of(org, env, &entry.security.code_def)
            .await?;
        Ok((original, credit_notes))
    }

    /// The invoice `org`'s `env` register certified as `code_def`, with the credit notes that
    /// name it as their original, in register order; `None` when the register has no entry
    /// certified as `code_def` (a credit note of it may still be there).
    pub async fn credited_original(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Option<(RegisterEntry, Vec<RegisterEntry>)>, PgError> {
        let Some(original) = self.entry_by_code(org, env, code_def).await? else {
            return Ok(None);
        };
        let credit_notes = self.credit_notes_of(org, env, code_def).await?;
        Ok(Some((original, credit_notes)))
    }

    /// Whether `org`'s `env` register holds an entry certified as `code_def`.
    pub async fn holds_code(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<bool, PgError> {
        let rows = self
            .rows(
                "looking for a codeDEFDGI",
                "SELECT 1 FROM register_entries \
                 WHERE org = $1 AND environment = $2::text::environment AND code_def = $3 \
                 LIMIT 1",
                &[&org, &env.as_str(), &code_def],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    /// Intents neither certified nor abandoned, by id (to reconcile at start-up).
    pub async fn open_intents(&self) -> Result<Vec<(IntentId, Intent)>, PgError> {
        self.open_intents_owned_by(None).await
    }

    /// The open intents this replica owns (`replicas.rs`), by id; every open intent for a
    /// process that is no replica (the CLI's tools).
    pub async fn owned_open_intents(&self) -> Result<Vec<(IntentId, Intent)>, PgError> {
        self.open_intents_owned_by(self.replica()).await
    }

    async fn open_intents_owned_by(
        &self,
        owner: Option<&str>,
    ) -> Result<Vec<(IntentId, Intent)>, PgError> {
        let rows = self
            .rows(
                "reading the open intents",
                "SELECT id, body::text FROM intents WHERE state = 'open' \
                 AND ($1::text IS NULL OR owner = $1) ORDER BY id",
                &[&owner],
            )
            .await?;
        rows.iter()
            .map(|row| {
                let failed = |e| self.pool().query_error("reading an open intent", &e);
                let id: i64 = row.try_get(0).map_err(failed)?;
                let body: String = row.try_get(1).map_err(failed)?;
                let intent: Intent =
                    serde_json::from_str(&body).map_err(|e| unreadable("an open intent", e))?;
                Ok((unsigned(id, "an intent's id")?, intent))
            })
            .collect()
    }

    /// The open intent for invoice `rn` of `org` in `env`, if any.
    pub async fn open_intent_for(
        &self,
        org: &str,
        env: Environment,
        rn: &str,
    ) -> Result<Option<IntentId>, PgError> {
        // `state <> 'abandoned'` too: the predicate of the index of live intents by rn.
        let rows = self
            .rows(
                "reading an rn's open intent",
                "SELECT id FROM intents \
                 WHERE org = $1 AND environment = $2::text::environment AND rn = $3 \
                 AND state <> 'abandoned' AND state = 'open'",
                &[&org, &env.as_str(), &rn],
            )
            .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let id: i64 = row
            .try_get(0)
            .map_err(|e| self.pool().query_error("reading an rn's open intent", &e))?;
        unsigned(id, "an intent's id").map(Some)
    }

    /// The request an `Idempotency-Key` of `org` in `env` is bound to, if any (kept while
    /// its intent is open or certified: the schema removes it when the intent is abandoned).
    pub async fn idempotency_binding(
        &self,
        org: &str,
        env: Environment,
        idempotency_key: &str,
    ) -> Result<Option<IdempotencyBinding>, PgError> {
        let rows = self
            .rows(
                "reading an Idempotency-Key",
                "SELECT intent, rn, request_digest FROM idempotency_keys \
                 WHERE org = $1 AND environment = $2::text::environment AND key = $3",
                &[&org, &env.as_str(), &idempotency_key],
            )
            .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let failed = |e| self.pool().query_error("reading an Idempotency-Key", &e);
        let intent: i64 = row.try_get(0).map_err(failed)?;
        Ok(Some(IdempotencyBinding {
            intent: unsigned(intent, "an intent's id")?,
            rn: row.try_get(1).map_err(failed)?,
            request_digest: row.try_get(2).map_err(failed)?,
        }))
    }
}
