//! A device's view on PostgreSQL ([`DeviceView`]): the C1h counters of its open intents and
//! its machine's counters, read inside the statement or transaction of the write it goes
//! with (`register.rs`), or alone in one statement ([`PgRegister::device_view`]). A device's
//! open intents are found by `intents_open_by_device` (`migrations/0001_register.sql`), an
//! index of the open intents by the `device` their body names: never every open intent of
//! every device.

use tokio_postgres::Row;

use super::cached::Cached;
use super::{PgError, PgPool, PgRegister};
use crate::model::{BoxCounters, DeviceView, Intent, IntentId};

/// The C1h counters of the open intents of the device `device` (an SQL expression), but the
/// intent `except` (`NULL`: none), by id: an array, `NULL` when there are none. The predicate
/// is the index's.
pub(super) fn open_of_device(device: &str, except: &str) -> String {
    format!(
        "(SELECT array_agg((o.body ->> 'device_tc')::bigint ORDER BY o.id) FROM intents o \
         WHERE o.state = 'open' AND o.body ->> 'device' = {device} \
         AND o.id IS DISTINCT FROM {except})"
    )
}

/// The counters of the machine `nim` (an SQL expression) as JSON text, `NULL` when unknown.
pub(super) fn counters_of_nim(nim: &str) -> String {
    format!("(SELECT b.counters::text FROM box_counters b WHERE b.nim = {nim})")
}

/// The view in columns `at` (the open intents' counters, [`open_of_device`]) and `at + 1`
/// (the machine's counters, [`counters_of_nim`]) of `row`.
pub(super) fn view_in(row: &Row, at: usize, pool: &PgPool) -> Result<DeviceView, PgError> {
    let doing = "reading a device's open intents and counters";
    let open: Option<Vec<Option<i64>>> =
        row.try_get(at).map_err(|e| pool.query_error(doing, &e))?;
    let counters: Option<String> = row
        .try_get(at + 1)
        .map_err(|e| pool.query_error(doing, &e))?;
    let open = open_counters(open)?;
    let known = counters
        .map(|text| serde_json::from_str::<BoxCounters>(&text).map_err(|e| unreadable(doing, e)))
        .transpose()?;
    Ok(DeviceView { open, known })
}

/// The open intents' counters as [`open_of_device`] reads them.
pub(super) fn open_counters(open: Option<Vec<Option<i64>>>) -> Result<Vec<Option<u64>>, PgError> {
    let doing = "reading a device's open intents";
    open.unwrap_or_default()
        .into_iter()
        .map(|tc| {
            tc.map(|tc| u64::try_from(tc).map_err(|e| unreadable(doing, e)))
                .transpose()
        })
        .collect()
}

fn unreadable(doing: &str, error: impl std::fmt::Display) -> PgError {
    PgError::Query {
        doing: doing.to_owned(),
        reason: error.to_string(),
    }
}

impl PgRegister {
    /// The view of `device` and of the machine `nim` now, in one statement (one snapshot).
    pub async fn device_view(
        &self,
        device: &str,
        nim: &str,
        except: Option<IntentId>,
    ) -> Result<DeviceView, PgError> {
        let sql = format!(
            "SELECT {}, {}",
            open_of_device("$1::text", "$3::bigint"),
            counters_of_nim("$2::text")
        );
        let except = except.and_then(|id| i64::try_from(id).ok());
        let client = self.pool().client().await?;
        let row = client
            .cached_query_one(&sql, &[&device, &nim, &except])
            .await
            .map_err(|e| self.pool().query_error("reading a device's view", &e))?;
        view_in(&row, 0, self.pool())
    }

    /// The open intents of `device`, by id.
    pub async fn open_intents_of(&self, device: &str) -> Result<Vec<(IntentId, Intent)>, PgError> {
        let doing = "reading a device's open intents";
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(
                "SELECT id, body::text FROM intents \
                 WHERE state = 'open' AND body ->> 'device' = $1 ORDER BY id",
                &[&device],
            )
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        rows.iter()
            .map(|row| {
                let failed = |e| self.pool().query_error(doing, &e);
                let id: i64 = row.try_get(0).map_err(failed)?;
                let body: String = row.try_get(1).map_err(failed)?;
                let intent: Intent =
                    serde_json::from_str(&body).map_err(|e| unreadable(doing, e))?;
                let id = IntentId::try_from(id).map_err(|e| unreadable(doing, e))?;
                Ok((id, intent))
            })
            .collect()
    }
}
