//! Organizations, API keys and dashboard tokens on PostgreSQL (issue 28, docs/design.md §11):
//! the embedded [`Store`](crate::store::Store)'s methods of the same names, with the same
//! arguments and the same answers, for the store seam's PostgreSQL variant.
//!
//! * Reads give the records the embedded index gives: a key or a token is its record as
//!   issued with its state now (`enabled`, `revoked`: the column); lists are in the order of
//!   the ids' bytes (`COLLATE "C"`), as sled orders its keys.
//! * Each write appends its event to `events` (kind and body as the journal's event, without
//!   its `"type"`) in the same statement or transaction. A rule broken is a [`Refusal`]
//!   where the embedded store says a [`StoreError`](crate::store::StoreError): an id taken
//!   (`Conflict`) is [`Refusal::IdTaken`], an unknown organization or key
//!   [`Refusal::UnknownOrganization`] / [`Refusal::UnknownKey`], an unknown dashboard token
//!   (`Invalid` there) [`Refusal::UnknownDashboardToken`], an empty id or a new token already
//!   revoked (`Invalid`) [`Refusal::Invalid`]. The schema holds them (primary and foreign
//!   keys, `migrations/0001_register.sql`), so that two writers at once cannot both succeed.
//! * Setting the state a key or a token has already writes nothing, as on the embedded
//!   store.
//! * PostgreSQL's text holds no NUL character: a key or a token with one anywhere is
//!   [`Refusal::Invalid`] (the embedded store refuses it only in an organization's id), and
//!   an id with one is found nowhere, as on the embedded store.

use super::cached::Cached;
use chrono::Utc;
use serde::de::DeserializeOwned;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::register::utc;
use super::{PgError, PgRegister, Refusal, Written};
use crate::model::{KeyRecord, Organization};
use crate::store::{DashboardToken, Event};

/// A key as it is now: its record with the state of its column.
pub(super) const KEY_NOW: &str = "jsonb_set(record, '{enabled}', to_jsonb(enabled))::text";
/// A dashboard token as it is now: its record with the state of its column.
const TOKEN_NOW: &str = "jsonb_set(record, '{revoked}', to_jsonb(revoked))::text";
/// Appends an event for the rows of the CTE `w` (its `org`): `$1` its time, `$2` its kind,
/// `$3` its body.
const EVENT_OF_W: &str = "INSERT INTO events (at, org, kind, body) \
                          SELECT $1::text::timestamptz, org, $2, $3::text::jsonb FROM w";

impl PgRegister {
    /// The organization `id`.
    pub async fn organization(&self, id: &str) -> Result<Option<Organization>, PgError> {
        if !storable(&[id]) {
            return Ok(None);
        }
        let sql = "SELECT record::text FROM organizations WHERE id = $1";
        let found = self.records("reading an organization", sql, &[&id]).await?;
        Ok(found.into_iter().next())
    }

    /// All organizations, by id.
    pub async fn organizations(&self) -> Result<Vec<Organization>, PgError> {
        let sql = "SELECT record::text FROM organizations ORDER BY id COLLATE \"C\"";
        self.records("reading the organizations", sql, &[]).await
    }

    /// The API key `id`.
    pub async fn key(&self, id: &str) -> Result<Option<KeyRecord>, PgError> {
        if !storable(&[id]) {
            return Ok(None);
        }
        let sql = format!("SELECT {KEY_NOW} FROM api_keys WHERE id = $1");
        let found = self.records("reading an API key", &sql, &[&id]).await?;
        Ok(found.into_iter().next())
    }

    /// The keys of organization `org`, by id.
    pub async fn keys_of(&self, org: &str) -> Result<Vec<KeyRecord>, PgError> {
        if !storable(&[org]) {
            return Ok(Vec::new());
        }
        let sql =
            format!("SELECT {KEY_NOW} FROM api_keys WHERE org = $1 ORDER BY id COLLATE \"C\"");
        self.records("reading an organization's API keys", &sql, &[&org])
            .await
    }

    /// The dashboard token `id` (revoked or not).
    pub async fn dashboard_token(&self, id: &str) -> Result<Option<DashboardToken>, PgError> {
        if !storable(&[id]) {
            return Ok(None);
        }
        let sql = format!("SELECT {TOKEN_NOW} FROM dashboard_tokens WHERE id = $1");
        let found = self
            .records("reading a dashboard token", &sql, &[&id])
            .await?;
        Ok(found.into_iter().next())
    }

    /// The dashboard tokens of `org`, by id.
    pub async fn dashboard_tokens_of(&self, org: &str) -> Result<Vec<DashboardToken>, PgError> {
        if !storable(&[org]) {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {TOKEN_NOW} FROM dashboard_tokens WHERE org = $1 ORDER BY id COLLATE \"C\""
        );
        self.records("reading an organization's dashboard tokens", &sql, &[&org])
            .await
    }

    /// Records a new API key, and its `key_issued` event. Refused if its id is empty or
    /// taken, or its organization unknown.
    pub async fn issue_key(&self, key: KeyRecord) -> Written<()> {
        let record = to_json(&key, "an API key")?;
        if key.id.is_empty() || !storable(&[&key.id, &key.org, &key.secret_sha256, &key.label]) {
            return Ok(Err(Refusal::Invalid));
        }
        let sql = format!(
            "WITH w AS (INSERT INTO api_keys (id, org, environment, record, enabled) \
             VALUES ($4, $5, $6::text::environment, $7::text::jsonb, $8) RETURNING org) \
             {EVENT_OF_W}"
        );
        let (kind, body) = event(Event::KeyIssued(key.clone()))?;
        let now = utc(&Utc::now());
        let env = key.environment.as_str();
        let params: [&(dyn ToSql + Sync); 8] = [
            &now,
            &kind,
            &body,
            &key.id,
            &key.org,
            &env,
            &record,
            &key.enabled,
        ];
        self.write("issuing an API key", &sql, &params).await
    }

    /// Enables or disables key `id`; returns it as it now is. Setting the state it has
    /// already writes nothing.
    pub async fn set_key_enabled(&self, id: &str, enabled: bool) -> Written<KeyRecord> {
        if !storable(&[id]) {
            return Ok(Err(Refusal::UnknownKey));
        }
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to change an API key", e))?;
        let sql = format!("SELECT {KEY_NOW} FROM api_keys WHERE id = $1 FOR UPDATE");
        let row = tx
            .cached_query_opt(&sql, &[&id])
            .await
            .map_err(|e| fail("reading an API key", e))?;
        let Some(row) = row else {
            return Ok(Err(Refusal::UnknownKey));
        };
        let mut key: KeyRecord = decode(&row, "an API key")?;
        if key.enabled == enabled {
            return Ok(Ok(key));
        }
        key.enabled = enabled;
        let id = key.id.clone();
        let (kind, body) = event(if enabled {
            Event::KeyEnabled { id }
        } else {
            Event::KeyDisabled { id }
        })?;
        let sql = format!(
            "WITH w AS (UPDATE api_keys SET enabled = $5 WHERE id = $4 RETURNING org) \
             {EVENT_OF_W}"
        );
        tx.cached_execute(&sql, &[&utc(&Utc::now()), &kind, &body, &key.id, &enabled])
            .await
            .map_err(|e| fail("changing an API key", e))?;
        commit(self, tx, "committing an API key's change").await?;
        Ok(Ok(key))
    }

    /// Records a new dashboard token (its hash), and its `dashboard_token_issued` event.
    /// Refused if its id is empty or taken, its organization unknown, or it is revoked.
    pub async fn issue_dashboard_token(&self, token: DashboardToken) -> Written<()> {
        let record = to_json(&token, "a dashboard token")?;
        if token.id.is_empty()
            || token.revoked
            || !storable(&[&token.id, &token.org, &token.token_sha256, &token.label])
        {
            return Ok(Err(Refusal::Invalid));
        }
        let sql = format!(
            "WITH w AS (INSERT INTO dashboard_tokens (id, org, record, revoked) \
             VALUES ($4, $5, $6::text::jsonb, false) RETURNING org) {EVENT_OF_W}"
        );
        let (kind, body) = event(Event::DashboardTokenIssued {
            token_id: token.id.clone(),
            org: token.org.clone(),
            token_sha256: token.token_sha256.clone(),
            created_at: token.created_at,
            label: token.label.clone(),
        })?;
        let now = utc(&Utc::now());
        let params: [&(dyn ToSql + Sync); 6] = [&now, &kind, &body, &token.id, &token.org, &record];
        self.write("issuing a dashboard token", &sql, &params).await
    }

    /// Revokes dashboard token `id`; returns it as it now is. Revoking a revoked token writes
    /// nothing.
    pub async fn revoke_dashboard_token(&self, id: &str) -> Written<DashboardToken> {
        if !storable(&[id]) {
            return Ok(Err(Refusal::UnknownDashboardToken));
        }
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to revoke a dashboard token", e))?;
        let sql = format!("SELECT {TOKEN_NOW} FROM dashboard_tokens WHERE id = $1 FOR UPDATE");
        let row = tx
            .cached_query_opt(&sql, &[&id])
            .await
            .map_err(|e| fail("reading a dashboard token", e))?;
        let Some(row) = row else {
            return Ok(Err(Refusal::UnknownDashboardToken));
        };
        let mut token: DashboardToken = decode(&row, "a dashboard token")?;
        if token.revoked {
            return Ok(Ok(token));
        }
        token.revoked = true;
        let (kind, body) = event(Event::DashboardTokenRevoked {
            token_id: token.id.clone(),
        })?;
        let sql = format!(
            "WITH w AS (UPDATE dashboard_tokens SET revoked = true WHERE id = $4 \
             RETURNING org) {EVENT_OF_W}"
        );
        tx.cached_execute(&sql, &[&utc(&Utc::now()), &kind, &body, &token.id])
            .await
            .map_err(|e| fail("revoking a dashboard token", e))?;
        commit(self, tx, "committing a dashboard token's revocation").await?;
        Ok(Ok(token))
    }

    /// The records `sql` gives (one JSON text column), in its order.
    async fn records<T: DeserializeOwned>(
        &self,
        doing: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<T>, PgError> {
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(sql, params)
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        rows.iter().map(|row| decode(row, doing)).collect()
    }

    /// Runs one writing statement: done, refused by a rule of the schema, or failed.
    async fn write(&self, doing: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Written<()> {
        let client = self.pool().client().await?;
        match client.cached_execute(sql, params).await {
            Ok(_) => Ok(Ok(())),
            Err(e) => match refusal(&e) {
                Some(refused) => Ok(Err(refused)),
                None => Err(self.pool().query_error(doing, &e)),
            },
        }
    }
}

/// Commits `tx`: a COMMIT whose connection is lost may have happened
/// ([`PgError::CommitUnknown`]); the caller reads the state again rather than guess.
pub(super) async fn commit(
    register: &PgRegister,
    tx: deadpool_postgres::Transaction<'_>,
    doing: &str,
) -> Result<(), PgError> {
    tx.commit()
        .await
        .map_err(|e| match register.pool().query_error(doing, &e) {
            PgError::Unreachable { target, reason } => PgError::CommitUnknown { target, reason },
            other => other,
        })
}

/// Whether PostgreSQL's text (and `jsonb`) can hold each of `texts`: no NUL character.
fn storable(texts: &[&str]) -> bool {
    texts.iter().all(|text| !text.contains('\0'))
}

/// The record of the first column of `row`, JSON text.
fn decode<T: DeserializeOwned>(row: &tokio_postgres::Row, what: &str) -> Result<T, PgError> {
    let text: String = row.try_get(0).map_err(|e| PgError::Query {
        doing: format!("reading {what}"),
        reason: super::error::chain(&e),
    })?;
    serde_json::from_str(&text).map_err(|e| PgError::Query {
        doing: format!("reading {what}"),
        reason: e.to_string(),
    })
}

fn to_json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, PgError> {
    serde_json::to_string(value).map_err(|e| PgError::Query {
        doing: format!("writing {what}"),
        reason: e.to_string(),
    })
}

/// An event's kind and body as `events` keeps them: the journal's JSON of it without its
/// `"type"`, which is the kind.
pub(super) fn event(event: Event) -> Result<(&'static str, String), PgError> {
    let kind = event.kind();
    let mut value = serde_json::to_value(&event).map_err(|e| PgError::Query {
        doing: format!("writing a {kind} event"),
        reason: e.to_string(),
    })?;
    if let Some(fields) = value.as_object_mut() {
        fields.remove("type");
    }
    Ok((kind, value.to_string()))
}

/// The rule of the schema an access write broke, if that is why it failed (by the name of
/// the constraint: `migrations/0001_register.sql`).
fn refusal(error: &tokio_postgres::Error) -> Option<Refusal> {
    let db = error.as_db_error()?;
    let code = db.code();
    let refused = match db.constraint()? {
        "api_keys_pkey" | "dashboard_tokens_pkey" if *code == SqlState::UNIQUE_VIOLATION => {
            Refusal::IdTaken
        }
        "api_keys_org_fkey" | "dashboard_tokens_org_fkey" | "events_org_fkey"
            if *code == SqlState::FOREIGN_KEY_VIOLATION =>
        {
            Refusal::UnknownOrganization
        }
        "api_keys_id_check" | "dashboard_tokens_id_check" if *code == SqlState::CHECK_VIOLATION => {
            Refusal::Invalid
        }
        _ => return None,
    };
    Some(refused)
}
