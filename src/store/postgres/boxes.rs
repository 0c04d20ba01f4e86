//! Box counters and fiscal anomalies on PostgreSQL (issue 28, docs/design.md §11): what the
//! embedded store keeps under its index's `b` and `x` keys (the `Store` methods of the same
//! names), here in `box_counters` and `fiscal_anomalies`, with the same answers.
//!
//! * A production entry moves its box's counters in its own certifying transaction
//!   ([`move_box`], called by `PgRegister::record_certified` after the entry's INSERT), as
//!   the embedded store applies them with the `certified` record: never an entry without
//!   its counters, nor counters without their entry. The counters are computed here
//!   ([`BoxCounters::of_entry`], [`BoxCounters::after`]), not by a trigger, so that the
//!   reading of the security elements has one definition.
//! * Every write of `box_counters` happens under the production `register_heads` row's lock
//!   (a certification holds it from its first statement; an acknowledgement takes it), so
//!   the counters follow the register's order, as the journal's single writer does.
//! * An anomaly's id is the id of its `fiscal_anomaly` event in `events`, as the embedded
//!   store's is the journal seq of its record: its place among the facts, oldest first.
//! * An acknowledgement that sets a box's counters does so in its own transaction.
//!
//! Times are written by the gateway (UTC, microseconds: what `timestamptz` keeps), read back
//! formatted by the server in UTC whatever the session's time zone.

use super::cached::Cached;
use chrono::{DateTime, SubsecRound, Utc};
use deadpool_postgres::Transaction;
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

use super::register::utc;
use super::{PgError, PgPool, PgRegister};
use crate::model::{
    AnomalyAck, AnomalyRecord, BoxCounters, Environment, FiscalAnomaly, FiscalAnomalyKind,
    LostInvoice, RegisterEntry,
};

/// The columns of an [`AnomalyRecord`], in the order [`anomaly_record`] reads them.
const ANOMALY_COLUMNS: &str = "id, \
    to_char(detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), \
    anomaly::text, acknowledged::text";

/// The partial unique index that records an anomaly not acknowledged once.
const OPEN_ONCE: &str = "fiscal_anomalies_open_once";

/// Taken by every writer of `box_counters` (a certification holds it already).
const BOXES_LOCK: &str = "SELECT 1 FROM register_heads WHERE environment = 'production' FOR UPDATE";

fn decode_error(doing: &str, e: impl std::fmt::Display) -> PgError {
    PgError::Query {
        doing: doing.to_owned(),
        reason: e.to_string(),
    }
}

fn json<T: serde::Serialize>(value: &T, doing: &str) -> Result<String, PgError> {
    serde_json::to_string(value).map_err(|e| decode_error(doing, e))
}

fn parse<T: serde::de::DeserializeOwned>(text: &str, doing: &str) -> Result<T, PgError> {
    serde_json::from_str(text).map_err(|e| decode_error(doing, e))
}

/// The counters a production entry gives its box (a sandbox box is one of the gateway's own
/// simulators; an entry whose counters carry no TC moves nothing).
fn production_counters(entry: &RegisterEntry) -> Option<BoxCounters> {
    (entry.request.environment == Environment::Production)
        .then(|| BoxCounters::of_entry(entry))
        .flatten()
}

/// A register behind its box, acknowledged: the box's counter as it said it becomes the
/// register's baseline for that NIM (its NIF and last entry unchanged). Never lowers one.
/// `None`: nothing changes.
fn acknowledged_baseline(
    current: Option<BoxCounters>,
    anomaly: &FiscalAnomaly,
) -> Option<BoxCounters> {
    let current = current.unwrap_or_else(|| anomaly.known.clone());
    if current.highest() >= anomaly.seen_tc {
        return None;
    }
    Some(BoxCounters {
        tc: anomaly.seen_tc,
        highest_tc: 0,
        ..current
    })
}

/// A box whose counter went back, understood: its counters start again; the highest number
/// of its old memory is no longer a baseline. `None`: nothing changes.
fn without_highest(current: Option<BoxCounters>) -> Option<BoxCounters> {
    current
        .filter(|c| c.highest_tc != 0)
        .map(|c| BoxCounters { highest_tc: 0, ..c })
}

async fn read_box<C: Cached + Sync>(
    client: &C,
    pool: &PgPool,
    nim: &str,
) -> Result<Option<BoxCounters>, PgError> {
    let row = client
        .cached_query_opt(
            "SELECT counters::text FROM box_counters WHERE nim = $1",
            &[&nim],
        )
        .await
        .map_err(|e| pool.query_error("reading a box's counters", &e))?;
    match row {
        Some(row) => {
            let text: String = row
                .try_get(0)
                .map_err(|e| pool.query_error("reading a box's counters", &e))?;
            parse(&text, &format!("reading the counters of box {nim}")).map(Some)
        }
        None => Ok(None),
    }
}

async fn write_box(
    tx: &Transaction<'_>,
    pool: &PgPool,
    nim: &str,
    counters: &BoxCounters,
) -> Result<(), PgError> {
    let text = json(counters, "writing a box's counters")?;
    tx.cached_execute(
        "INSERT INTO box_counters (nim, counters) VALUES ($1, $2::text::jsonb) \
         ON CONFLICT (nim) DO UPDATE SET counters = EXCLUDED.counters",
        &[&nim, &text],
    )
    .await
    .map_err(|e| pool.query_error("writing a box's counters", &e))?;
    Ok(())
}

/// In a certifying transaction (holding its environment's head): the counters of `entry`'s
/// box, after it; returns what they were before. Nothing for a sandbox entry or one without
/// a TC (`None`).
pub(super) async fn move_box(
    tx: &Transaction<'_>,
    pool: &PgPool,
    entry: &RegisterEntry,
) -> Result<Option<BoxCounters>, PgError> {
    let Some(counters) = production_counters(entry) else {
        return Ok(None);
    };
    let known = read_box(tx, pool, &counters.nim).await?;
    let counters = match &known {
        Some(known) => known.after(counters),
        None => counters,
    };
    write_box(tx, pool, &counters.nim.clone(), &counters).await?;
    Ok(known)
}

/// In an acknowledgement's transaction: the box's counters that acknowledging `anomaly`
/// sets (a register behind: the box's counter as the baseline; a counter that went back: its
/// highest forgotten), under the boxes' lock.
async fn set_acknowledged_counters(
    tx: &Transaction<'_>,
    pool: &PgPool,
    anomaly: &FiscalAnomaly,
) -> Result<(), PgError> {
    let moves_box = match anomaly.kind {
        FiscalAnomalyKind::RegisterBehind | FiscalAnomalyKind::CounterWentBack => true,
        FiscalAnomalyKind::NifChanged => false,
    };
    if !moves_box {
        return Ok(());
    }
    tx.cached_execute(BOXES_LOCK, &[])
        .await
        .map_err(|e| pool.query_error("locking the boxes' counters", &e))?;
    let known = read_box(tx, pool, &anomaly.nim).await?;
    let changed = match anomaly.kind {
        FiscalAnomalyKind::RegisterBehind => acknowledged_baseline(known, anomaly),
        _ => without_highest(known),
    };
    if let Some(counters) = changed {
        write_box(tx, pool, &anomaly.nim, &counters).await?;
    }
    Ok(())
}

/// For an import (`import.rs`), in its transaction: the counters that acknowledging anomaly
/// `id` sets, as [`PgRegister::acknowledge_fiscal_anomaly`] sets them. `false`: there is no
/// anomaly `id` not yet acknowledged.
pub(super) async fn acknowledged_counters(
    tx: &Transaction<'_>,
    pool: &PgPool,
    id: i64,
) -> Result<bool, PgError> {
    let row = tx
        .cached_query_opt(
            &format!(
                "SELECT {ANOMALY_COLUMNS} FROM fiscal_anomalies \
                 WHERE id = $1 AND acknowledged IS NULL"
            ),
            &[&id],
        )
        .await
        .map_err(|e| pool.query_error("reading a fiscal anomaly", &e))?;
    let Some(row) = row else {
        return Ok(false);
    };
    let current = anomaly_record(&row, pool)?;
    set_acknowledged_counters(tx, pool, &current.anomaly).await?;
    Ok(true)
}

/// An anomaly's row, as [`ANOMALY_COLUMNS`] selects it.
fn anomaly_record(row: &Row, pool: &PgPool) -> Result<AnomalyRecord, PgError> {
    let doing = "reading a fiscal anomaly";
    let fail = |e: tokio_postgres::Error| pool.query_error(doing, &e);
    let id: i64 = row.try_get(0).map_err(fail)?;
    let detected_at: String = row.try_get(1).map_err(fail)?;
    let anomaly: String = row.try_get(2).map_err(fail)?;
    let acknowledged: Option<String> = row.try_get(3).map_err(fail)?;
    let doing = format!("reading fiscal anomaly {id}");
    Ok(AnomalyRecord {
        id: u64::try_from(id).map_err(|e| decode_error(&doing, e))?,
        detected_at: DateTime::parse_from_rfc3339(&detected_at)
            .map_err(|e| decode_error(&doing, e))?
            .with_timezone(&Utc),
        anomaly: parse(&anomaly, &doing)?,
        acknowledged: acknowledged
            .map(|text| parse::<AnomalyAck>(&text, &doing))
            .transpose()?,
    })
}

/// The time of a fact recorded now, as `timestamptz` keeps it.
fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

impl PgRegister {
    /// What the register knows of the box `nim` (its last production entry, or the counter
    /// an acknowledgement set).
    pub async fn box_counters(&self, nim: &str) -> Result<Option<BoxCounters>, PgError> {
        let client = self.pool().client().await?;
        read_box(&client, self.pool(), nim).await
    }

    /// What the register knows of every box, by NIM (in byte order, as the embedded index
    /// holds them).
    pub async fn all_box_counters(&self) -> Result<Vec<BoxCounters>, PgError> {
        let doing = "reading the boxes' counters";
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(
                "SELECT counters::text FROM box_counters ORDER BY nim COLLATE \"C\"",
                &[],
            )
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        rows.iter()
            .map(|row| {
                let text: String = row
                    .try_get(0)
                    .map_err(|e| self.pool().query_error(doing, &e))?;
                parse(&text, doing)
            })
            .collect()
    }

    /// Every fiscal anomaly, oldest first.
    pub async fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, PgError> {
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(
                &format!("SELECT {ANOMALY_COLUMNS} FROM fiscal_anomalies ORDER BY id"),
                &[],
            )
            .await
            .map_err(|e| self.pool().query_error("reading the fiscal anomalies", &e))?;
        rows.iter()
            .map(|row| anomaly_record(row, self.pool()))
            .collect()
    }

    /// The anomaly not acknowledged that is the same as `anomaly` (same box and kind, against
    /// the same register entry), if any.
    async fn same_open_anomaly(
        &self,
        anomaly: &FiscalAnomaly,
    ) -> Result<Option<AnomalyRecord>, PgError> {
        let kind = serde_json::to_value(anomaly.kind).map_err(|e| decode_error("kind", e))?;
        let kind = kind.as_str().unwrap_or_default().to_owned();
        let sequence = anomaly.known.sequence.to_string();
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(
                &format!(
                    "SELECT {ANOMALY_COLUMNS} FROM fiscal_anomalies WHERE acknowledged IS NULL \
                     AND anomaly->>'nim' = $1 AND anomaly->>'kind' = $2 \
                     AND anomaly->'known'->>'sequence' = $3 ORDER BY id LIMIT 1"
                ),
                &[&anomaly.nim, &kind, &sequence],
            )
            .await
            .map_err(|e| self.pool().query_error("reading a fiscal anomaly", &e))?;
        row.map(|row| anomaly_record(&row, self.pool())).transpose()
    }

    /// Records `anomaly` (and its `fiscal_anomaly` event) unless the same one (same box and
    /// kind, against the same register entry) is recorded and not acknowledged; returns its
    /// record and whether it is new. Two replicas finding it at once record it once (the
    /// schema's `fiscal_anomalies_open_once`).
    pub async fn record_fiscal_anomaly(
        &self,
        anomaly: FiscalAnomaly,
    ) -> Result<(AnomalyRecord, bool), PgError> {
        let body = json(&anomaly, "writing a fiscal anomaly")?;
        let sql = format!(
            "WITH e AS (INSERT INTO events (at, kind, body) \
             VALUES ($1::text::timestamptz, 'fiscal_anomaly', $2::text::jsonb) RETURNING id, at) \
             INSERT INTO fiscal_anomalies (id, detected_at, anomaly) \
             SELECT id, at, $2::text::jsonb FROM e RETURNING {ANOMALY_COLUMNS}"
        );
        // Found, or recorded; a conflict is the same anomaly recorded meanwhile: read again.
        // (Acknowledged in between, it is recorded anew at the next turn.)
        for _ in 0..3 {
            if let Some(known) = self.same_open_anomaly(&anomaly).await? {
                return Ok((known, false));
            }
            let client = self.pool().client().await?;
            match client.cached_query_one(&sql, &[&utc(&now()), &body]).await {
                Ok(row) => return Ok((anomaly_record(&row, self.pool())?, true)),
                Err(e) if is_open_once(&e) => continue,
                Err(e) => return Err(self.pool().query_error("recording a fiscal anomaly", &e)),
            }
        }
        Err(decode_error(
            "recording a fiscal anomaly",
            "it was recorded and acknowledged by others three times meanwhile",
        ))
    }

    /// Records that an administrator acknowledged anomaly `id` (for a register behind its
    /// box, with the missing certifications' `numbers`, which the caller checked), with its
    /// event and, in the same transaction, the box's counters it sets. Acknowledging it
    /// again records nothing and returns it as it is. `None`: there is no anomaly `id` (the
    /// embedded store's `StoreError::Invalid("no fiscal anomaly {id}")`).
    pub async fn acknowledge_fiscal_anomaly(
        &self,
        id: u64,
        by: &str,
        note: &str,
        numbers: &[u64],
        rns: &[LostInvoice],
    ) -> Result<Option<AnomalyRecord>, PgError> {
        let pool = self.pool();
        let fail = |doing: &str, e: tokio_postgres::Error| pool.query_error(doing, &e);
        let Ok(key) = i64::try_from(id) else {
            return Ok(None);
        };
        let mut client = pool.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting an acknowledgement", e))?;
        let row = tx
            .cached_query_opt(
                &format!("SELECT {ANOMALY_COLUMNS} FROM fiscal_anomalies WHERE id = $1 FOR UPDATE"),
                &[&key],
            )
            .await
            .map_err(|e| fail("reading a fiscal anomaly", e))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let current = anomaly_record(&row, pool)?;
        if current.acknowledged.is_some() {
            return Ok(Some(current));
        }
        set_acknowledged_counters(&tx, pool, &current.anomaly).await?;
        let at = now();
        let ack = AnomalyAck {
            by: by.to_owned(),
            note: note.to_owned(),
            at,
            numbers: numbers.to_vec(),
            rns: rns.to_vec(),
        };
        // The journal's `fiscal_anomaly_acknowledged` event, without its tag (empty lists
        // left out, as there).
        let mut event = serde_json::json!({ "anomaly": id, "by": by, "note": note });
        if !numbers.is_empty() {
            event["numbers"] = serde_json::json!(numbers);
        }
        if !rns.is_empty() {
            event["rns"] = serde_json::json!(rns);
        }
        let doing = format!("acknowledging fiscal anomaly {id}");
        let row = tx
            .cached_query_one(
                &format!(
                    "WITH e AS (INSERT INTO events (at, kind, body) VALUES \
                     ($2::text::timestamptz, 'fiscal_anomaly_acknowledged', $3::text::jsonb)) \
                     UPDATE fiscal_anomalies SET acknowledged = $4::text::jsonb \
                     WHERE id = $1 RETURNING {ANOMALY_COLUMNS}"
                ),
                &[
                    &key,
                    &utc(&at),
                    &json(&event, &doing)?,
                    &json(&ack, &doing)?,
                ],
            )
            .await
            .map_err(|e| fail(&doing, e))?;
        let acknowledged = anomaly_record(&row, pool)?;
        // Lost during the COMMIT: acknowledging again is safe (done, it returns it as it is).
        tx.commit()
            .await
            .map_err(|e| fail("committing an acknowledgement", e))?;
        Ok(Some(acknowledged))
    }

    /// The counter number under which `device` certified `rn` before its register lost it:
    /// an acknowledged register behind that box named it (its C1h, or the administrator).
    /// The first such acknowledgement, oldest first, as on the embedded store.
    pub async fn lost_rn(&self, device: &str, rn: &str) -> Result<Option<u64>, PgError> {
        let doing = "reading the rns lost by a register";
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(
                "SELECT (acknowledged->'rns')::text FROM fiscal_anomalies \
                 WHERE anomaly->>'device' = $1 AND acknowledged IS NOT NULL \
                 AND acknowledged->'rns' @> jsonb_build_array(jsonb_build_object('rn', $2::text)) \
                 ORDER BY id",
                &[&device, &rn],
            )
            .await
            .map_err(|e| self.pool().query_error(doing, &e))?;
        for row in rows {
            let text: String = row
                .try_get(0)
                .map_err(|e| self.pool().query_error(doing, &e))?;
            let lost: Vec<LostInvoice> = parse(&text, doing)?;
            if let Some(found) = lost.iter().find(|lost| lost.rn == rn) {
                return Ok(Some(found.number));
            }
        }
        Ok(None)
    }
}

/// Whether `error` is the same anomaly recorded, not acknowledged, already.
fn is_open_once(error: &tokio_postgres::Error) -> bool {
    error.as_db_error().is_some_and(|db| {
        *db.code() == SqlState::UNIQUE_VIOLATION && db.constraint() == Some(OPEN_ONCE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(tc: u64, highest_tc: u64) -> BoxCounters {
        BoxCounters {
            nim: "NIM1".into(),
            nif: "NIF".into(),
            tc,
            sequence: 4,
            highest_tc,
        }
    }

    fn behind(known: BoxCounters, seen_tc: u64) -> FiscalAnomaly {
        FiscalAnomaly {
            device: "box1".into(),
            nim: "NIM1".into(),
            kind: FiscalAnomalyKind::RegisterBehind,
            known,
            seen_nif: "NIF".into(),
            seen_tc,
            seen_in: "C1h".into(),
            missing: vec![seen_tc],
            last: None,
        }
    }

    #[test]
    fn an_acknowledged_baseline_never_lowers_the_counters() {
        let anomaly = behind(counters(5, 0), 9);
        assert_eq!(
            acknowledged_baseline(None, &anomaly),
            Some(counters(9, 0)),
            "from what the anomaly knew"
        );
        assert_eq!(
            acknowledged_baseline(Some(counters(7, 8)), &anomaly),
            Some(counters(9, 0))
        );
        assert_eq!(acknowledged_baseline(Some(counters(5, 9)), &anomaly), None);
        assert_eq!(acknowledged_baseline(Some(counters(10, 0)), &anomaly), None);
        assert_eq!(without_highest(Some(counters(3, 8))), Some(counters(3, 0)));
        assert_eq!(without_highest(Some(counters(3, 0))), None);
        assert_eq!(without_highest(None), None);
    }
}
