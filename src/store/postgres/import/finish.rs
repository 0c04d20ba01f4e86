//! The end of an import (`super`): both identities moved past the journal's ids, the
//! import's own event, the register's counts read, and the COMMIT.

use chrono::Utc;

use super::{bigint, Import, ImportCounts, IMPORTED};
use crate::model::Environment;
use crate::store::postgres::register::utc;
use crate::store::postgres::PgError;

impl Import<'_, '_> {
    /// Moves both identities past the journal's last seq, reads the register's counts, and
    /// commits.
    pub(super) async fn finish(mut self) -> Result<ImportCounts, PgError> {
        if self.counts.records != self.rules.records {
            return Err(PgError::Query {
                doing: "importing the journal".to_owned(),
                reason: format!(
                    "{} of its {} records were read: nothing was committed",
                    self.counts.records, self.rules.records
                ),
            });
        }
        let last = bigint(self.counts.records.max(1), "the last seq")?;
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool.query_error(doing, &e);
        for table in ["intents", "events"] {
            self.tx
                .execute(
                    "SELECT setval(pg_get_serial_sequence($1, 'id'), \
                     greatest($2, (SELECT coalesce(max(id), 1) FROM intents), \
                     (SELECT coalesce(max(id), 1) FROM events)))",
                    &[&table, &last],
                )
                .await
                .map_err(|e| fail("moving an identity past the journal's ids", e))?;
        }
        let said = serde_json::json!({
            "records": self.rules.records,
            "head_sha256": self.rules.head_sha256,
        })
        .to_string();
        self.tx
            .execute(
                "INSERT INTO events (at, kind, body) \
                 VALUES ($1::text::timestamptz, $2, $3::text::jsonb)",
                &[&utc(&Utc::now()), &IMPORTED, &said],
            )
            .await
            .map_err(|e| fail("recording the import", e))?;
        let rows = self
            .tx
            .query(
                "SELECT org, environment::text, entries FROM register_counts \
                 ORDER BY org COLLATE \"C\", environment",
                &[],
            )
            .await
            .map_err(|e| fail("reading the register's counts", e))?;
        for row in rows {
            let org: String = row.try_get(0).map_err(|e| fail("reading a count", e))?;
            let env: String = row.try_get(1).map_err(|e| fail("reading a count", e))?;
            let entries: i64 = row.try_get(2).map_err(|e| fail("reading a count", e))?;
            let env = match env.as_str() {
                "production" => Environment::Production,
                _ => Environment::Sandbox,
            };
            self.counts
                .per_register
                .push((org, env, entries.max(0) as u64));
        }
        self.tx
            .commit()
            .await
            .map_err(|e| fail("committing the import", e))?;
        Ok(self.counts)
    }
}
