//! What an export (`emcf-gateway store export`, `src/store/transfer/export.rs`) reads of
//! PostgreSQL besides the register's entries: every event and every intent, oldest first,
//! as stored.

use chrono::{DateTime, Utc};
use tokio_postgres::Row;

use super::{PgError, PgRegister};
use crate::model::{Intent, IntentId};
use crate::store::Event;

/// A timestamptz column as RFC 3339 UTC, microseconds (what the server keeps).
fn utc_text(column: &str) -> String {
    format!("to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")
}

fn unreadable(what: &str, error: impl std::fmt::Display) -> PgError {
    PgError::Query {
        doing: format!("reading {what}"),
        reason: error.to_string(),
    }
}

fn time(text: &str, what: &str) -> Result<DateTime<Utc>, PgError> {
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|e| unreadable(what, e))
}

/// One row of `events`.
#[derive(Debug, Clone)]
pub struct EventRow {
    /// Its id (the journal seq of its record, for an imported one).
    pub id: u64,
    /// When it was written.
    pub at: DateTime<Utc>,
    /// Its kind: a journal event's `"type"`, or [`super::IMPORTED`].
    pub kind: String,
    /// Its body (JSON).
    pub body: String,
}

impl EventRow {
    /// The journal's event it stands for; `None` for an event that is not one (the
    /// import's own).
    pub fn event(&self) -> Result<Option<Event>, PgError> {
        if self.kind == super::IMPORTED {
            return Ok(None);
        }
        let what = format!("event {}", self.id);
        let mut body: serde_json::Value =
            serde_json::from_str(&self.body).map_err(|e| unreadable(&what, e))?;
        let Some(fields) = body.as_object_mut() else {
            return Err(unreadable(&what, "its body is not a JSON object"));
        };
        fields.insert("type".to_owned(), self.kind.clone().into());
        serde_json::from_value(body)
            .map(Some)
            .map_err(|e| unreadable(&what, e))
    }
}

/// How an intent stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntentState {
    /// Not settled.
    Open,
    /// Settled by its register entry.
    Certified,
    /// Abandoned, at this time, for this reason.
    Abandoned(DateTime<Utc>, String),
}

/// One row of `intents`.
#[derive(Debug, Clone)]
pub struct IntentRow {
    /// Its id.
    pub id: IntentId,
    /// The intent, without the invoice it keeps.
    pub intent: Intent,
    /// The quota year its unit was claimed in (production).
    pub quota_year: Option<i32>,
    /// How it stands.
    pub state: IntentState,
}

impl PgRegister {
    async fn all(&self, doing: &str, sql: &str) -> Result<Vec<Row>, PgError> {
        let client = self.pool().client().await?;
        client
            .query(sql, &[])
            .await
            .map_err(|e| self.pool().query_error(doing, &e))
    }

    /// Every event, by id.
    pub async fn all_events(&self) -> Result<Vec<EventRow>, PgError> {
        let doing = "reading the events";
        let sql = format!(
            "SELECT id, {}, kind, body::text FROM events ORDER BY id",
            utc_text("at")
        );
        let rows = self.all(doing, &sql).await?;
        rows.iter()
            .map(|row| {
                let fail = |e| self.pool().query_error(doing, &e);
                let id: i64 = row.try_get(0).map_err(fail)?;
                let at: String = row.try_get(1).map_err(fail)?;
                Ok(EventRow {
                    id: id.max(0) as u64,
                    at: time(&at, "an event's time")?,
                    kind: row.try_get(2).map_err(fail)?,
                    body: row.try_get(3).map_err(fail)?,
                })
            })
            .collect()
    }

    /// Every intent, by id, without the invoice it keeps ([`PgRegister::intent_invoice`]
    /// reads it): the list stays small however large the invoices.
    pub async fn all_intents(&self) -> Result<Vec<IntentRow>, PgError> {
        let doing = "reading the intents";
        let sql = format!(
            "SELECT id, (body - 'invoice')::text, quota_year, state, {}, reason FROM intents \
             ORDER BY id",
            utc_text("settled_at")
        );
        let rows = self.all(doing, &sql).await?;
        rows.iter()
            .map(|row| {
                let fail = |e| self.pool().query_error(doing, &e);
                let id: i64 = row.try_get(0).map_err(fail)?;
                let body: String = row.try_get(1).map_err(fail)?;
                let state: String = row.try_get(3).map_err(fail)?;
                let settled: Option<String> = row.try_get(4).map_err(fail)?;
                let reason: Option<String> = row.try_get(5).map_err(fail)?;
                let state = match (state.as_str(), settled, reason) {
                    ("open", _, _) => IntentState::Open,
                    ("certified", _, _) => IntentState::Certified,
                    (_, Some(at), Some(reason)) => {
                        IntentState::Abandoned(time(&at, "an abandon's time")?, reason)
                    }
                    (other, _, _) => {
                        return Err(unreadable(
                            &format!("intent {id}"),
                            format!("state {other}"),
                        ))
                    }
                };
                Ok(IntentRow {
                    id: id.max(0) as u64,
                    intent: serde_json::from_str(&body)
                        .map_err(|e| unreadable(&format!("intent {id}"), e))?,
                    quota_year: row.try_get(2).map_err(fail)?,
                    state,
                })
            })
            .collect()
    }

    /// The invoice intent `id` keeps, if any.
    pub async fn intent_invoice(&self, id: IntentId) -> Result<Option<String>, PgError> {
        let doing = "reading an intent's invoice";
        let key = i64::try_from(id).map_err(|e| unreadable(doing, e))?;
        let client = self.pool().client().await?;
        let row = client
            .query_opt(
                "SELECT body ->> 'invoice' FROM intents WHERE id = $1",
                &[&key],
            )
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        match row {
            Some(row) => row
                .try_get(0)
                .map_err(|e| self.pool().query_error(doing, &e)),
            None => Ok(None),
        }
    }
}
