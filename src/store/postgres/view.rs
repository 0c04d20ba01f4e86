//! What admission reads for one invoice ([`AdmissionView`]), in one statement: one round
//! trip and one snapshot, prepared once per connection (`cached.rs`). Each part is the query
//! of the store's method of the same concept (`access.rs`, `reads.rs`, `boxes.rs`,
//! `register.rs`), as a lateral join of one row, so that the answers are theirs.

use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::access::KEY_NOW;
use super::cached::Cached;
use super::reads::{entry_from, unreadable, unsigned};
use super::{PgError, PgRegister};
use crate::model::{IdempotencyBinding, LostInvoice};
use crate::store::{AdmissionAsk, AdmissionView};

/// `$1` the key's id, `$2` its organization, `$3` its environment, `$4` the
/// `Idempotency-Key` (or null), `$5` the rn, `$6` the device whose lost numbers count (or
/// null), `$7` the quota year (or null).
fn statement() -> String {
    format!(
        "SELECT k.key, o.org, b.intent, b.rn, b.request_digest, oi.id, \
                e.entry, e.kept, e.digest, l.lost, q.used \
         FROM (SELECT 1) AS one \
         LEFT JOIN LATERAL (SELECT {KEY_NOW} AS key FROM api_keys WHERE id = $1) k ON true \
         LEFT JOIN LATERAL (SELECT record::text AS org FROM organizations WHERE id = $2) o \
           ON true \
         LEFT JOIN LATERAL (SELECT intent, rn, request_digest FROM idempotency_keys \
           WHERE org = $2 AND environment = $3::text::environment AND key = $4) b ON true \
         LEFT JOIN LATERAL (SELECT id FROM intents \
           WHERE org = $2 AND environment = $3::text::environment AND rn = $5 \
           AND state <> 'abandoned' AND state = 'open' LIMIT 1) oi ON true \
         LEFT JOIN LATERAL (SELECT e.entry, i.body ->> 'invoice' AS kept, \
           i.request_digest AS digest \
           FROM register_entries e JOIN intents i ON i.id = e.intent \
           WHERE e.org = $2 AND e.environment = $3::text::environment AND e.rn = $5) e \
           ON true \
         LEFT JOIN LATERAL (SELECT json_agg(acknowledged->'rns' ORDER BY id)::text AS lost \
           FROM fiscal_anomalies \
           WHERE anomaly->>'device' = $6 AND acknowledged IS NOT NULL \
           AND acknowledged->'rns' @> jsonb_build_array(jsonb_build_object('rn', $5::text))) l \
           ON true \
         LEFT JOIN LATERAL (SELECT \
           COALESCE((SELECT used FROM quota_use WHERE org = $2 AND year = $7), 0) \
           - (SELECT count(*) FROM intents \
              WHERE state = 'open' AND org = $2 AND quota_year = $7) AS used) q ON true"
    )
}

impl PgRegister {
    /// What admission reads for `ask`, in one statement.
    pub async fn admission_view(&self, ask: &AdmissionAsk) -> Result<AdmissionView, PgError> {
        let doing = "reading what admission needs";
        let texts = [
            Some(ask.key_id.as_str()),
            Some(ask.org.as_str()),
            Some(ask.rn.as_str()),
        ];
        let optional = [ask.idempotency_key.as_deref(), ask.device.as_deref()];
        if texts
            .iter()
            .chain(&optional)
            .flatten()
            .any(|text| text.contains('\0'))
        {
            // PostgreSQL's text holds no NUL: nothing stored has one.
            return Ok(AdmissionView::default());
        }
        let env = ask.environment.as_str();
        let params: [&(dyn ToSql + Sync); 7] = [
            &ask.key_id,
            &ask.org,
            &env,
            &ask.idempotency_key,
            &ask.rn,
            &ask.device,
            &ask.quota_year,
        ];
        let client = self.pool().client().await?;
        let row = client
            .cached_query_one(&statement(), &params)
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        self.view_of(&row, &ask.rn)
    }

    /// The view a row of [`statement`] holds, for the invoice `rn`.
    fn view_of(&self, row: &Row, rn: &str) -> Result<AdmissionView, PgError> {
        let doing = "reading what admission needs";
        let failed = |e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let json = |at: usize, what: &str| -> Result<Option<String>, PgError> {
            row.try_get::<_, Option<String>>(at)
                .map_err(|e| self.pool().query_error(what, &e))
        };
        let key = json(0, "reading an API key")?
            .map(|text| serde_json::from_str(&text).map_err(|e| unreadable("an API key", e)))
            .transpose()?;
        let org = json(1, "reading an organization")?
            .map(|text| serde_json::from_str(&text).map_err(|e| unreadable("an organization", e)))
            .transpose()?;
        let binding = match row.try_get::<_, Option<i64>>(2).map_err(failed)? {
            Some(intent) => Some(IdempotencyBinding {
                intent: unsigned(intent, "an intent's id")?,
                rn: row.try_get(3).map_err(failed)?,
                request_digest: row.try_get(4).map_err(failed)?,
            }),
            None => None,
        };
        let open_intent = row
            .try_get::<_, Option<i64>>(5)
            .map_err(failed)?
            .map(|id| unsigned(id, "an intent's id"))
            .transpose()?;
        let entry = match json(6, "reading an entry")? {
            Some(text) => {
                let kept: Option<String> = row.try_get(7).map_err(failed)?;
                let digest: String = row.try_get(8).map_err(failed)?;
                Some(entry_from(&text, kept, &digest)?)
            }
            None => None,
        };
        let lost = match json(9, "reading the rns lost by a register")? {
            Some(text) => {
                let lists: Vec<Vec<LostInvoice>> = serde_json::from_str(&text)
                    .map_err(|e| unreadable("the rns lost by a register", e))?;
                lists
                    .into_iter()
                    .flatten()
                    .find(|lost| lost.rn == rn)
                    .map(|lost| lost.number)
            }
            None => None,
        };
        let used: i64 = row.try_get(10).map_err(failed)?;
        Ok(AdmissionView {
            key,
            org,
            binding,
            open_intent,
            entry,
            lost,
            quota_used: used.max(0) as u64,
        })
    }
}
