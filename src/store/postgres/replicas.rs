//! Replicas (issue 29): which `serve` process may write what. Each process has a name of its
//! own (`certify::leader::Leadership::replica_name`) and holds the lease `replica:<name>`
//! (`leases.rs`), renewed every second. Every intent it records names it as `owner`, and
//! its writes of that intent (the intent, its certification, its abandon) take a share lock
//! on that lease row and are refused unless the row is still its own (fencing).
//!
//! A lease that ran out is not taken back by its holder once it is **fenced**: its row is
//! given to no one, for ever (`holder = '(fenced)'`, `held_until = 'infinity'`), and a
//! replica that sees its own lease fenced stops (a new process is a new replica). Only a
//! fenced replica's open intents are taken over by another ([`PgRegister::take_over`]),
//! in the transaction that fences it: the writes of the replica presumed dead and those of
//! its successor can never both be accepted, whatever the timing (the share lock orders
//! them: a write in progress finishes before the fence, a later one sees it).

use std::time::Duration;

use tokio_postgres::types::ToSql;

use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;
use crate::model::{Intent, IntentId};

/// The lease a replica holds while it may write.
pub fn lease_of(replica: &str) -> String {
    format!("replica:{replica}")
}

/// The share lock of a replica's own lease, taken first by each of its fenced writes (the
/// same order as [`TAKE_OVER`]'s: leases, then intents). No row: the lease is fenced.
pub(super) const HOLD_OWN: &str =
    "SELECT 1 FROM leases WHERE name = 'replica:' || $1 AND holder = $1 FOR SHARE";

/// Fences every replica lease given back, or run out more than `$1` seconds ago, whose
/// holder left open intents on devices `$2` (or on sandboxes, when it is `$3`): a replica with
/// nothing to take over is left alone (after a long outage of the database it renews its
/// lease and goes on).
const FENCE_EXPIRED: &str = "UPDATE leases l SET holder = '(fenced)', held_until = 'infinity', \
     epoch = l.epoch + 1 \
     WHERE l.name LIKE 'replica:%' AND (l.holder IS NULL OR (l.holder <> '(fenced)' \
     AND l.held_until <= now() - make_interval(secs => $1))) \
     AND EXISTS (SELECT 1 FROM intents i WHERE i.state = 'open' \
          AND 'replica:' || i.owner = l.name \
          AND ((i.body ->> 'device') = ANY($2) \
          OR (i.environment = 'sandbox' AND i.owner = $3)))";

/// A fence waits at most this long for a lease row a writer holds (a writer whose connection
/// was cut mid-transaction keeps its locks until the server notices): it fails, and is tried
/// again at the next round, rather than stalling the leader.
const LOCK_TIMEOUT: &str = "SET LOCAL lock_timeout = '2s'";

/// Fences one replica's lease, held or not (its predecessor in a state directory).
const FENCE_ONE: &str = "INSERT INTO leases AS l (name, holder, epoch, held_until) \
     VALUES ('replica:' || $1, '(fenced)', 1, 'infinity') \
     ON CONFLICT (name) DO UPDATE SET holder = '(fenced)', held_until = 'infinity', \
     epoch = l.epoch + 1";

/// The open intents of devices `$2` (and of the sandboxes of replica `$3`) whose owner holds no
/// lease any more (fenced, or none ever: written without an owner), made `$1`'s.
const TAKE_OVER: &str = "UPDATE intents i SET owner = $1 \
     WHERE i.state = 'open' \
     AND ((i.body ->> 'device') = ANY($2) OR (i.environment = 'sandbox' AND i.owner = $3)) \
     AND i.owner IS DISTINCT FROM $1 \
     AND (i.owner IS NULL OR NOT EXISTS (SELECT 1 FROM leases l \
          WHERE l.name = 'replica:' || i.owner AND l.holder = i.owner)) \
     RETURNING i.id, i.body::text";

impl PgRegister {
    /// Fences the lease of `replica` (a predecessor known to be dead: nothing it sends
    /// afterwards is written). Its places of the DGI's windows are in doubt from then on, and
    /// ready at once (its process is gone, as for its intents, taken over without a grace):
    /// the leader gives each back once the DGI's pending list shows its request gone
    /// (`window.rs`).
    pub async fn fence_replica(&self, replica: &str) -> Result<(), PgError> {
        let fail = |e: tokio_postgres::Error| self.pool().query_error("fencing a replica", &e);
        let mut client = self.pool().client().await?;
        let tx = client.transaction().await.map_err(fail)?;
        tx.batch_execute(LOCK_TIMEOUT).await.map_err(fail)?;
        tx.cached_execute(FENCE_ONE, &[&replica])
            .await
            .map_err(fail)?;
        tx.cached_execute(super::window::DEAD, &[&replica])
            .await
            .map_err(fail)?;
        tx.commit().await.map_err(fail)
    }

    /// Fences the replicas whose lease was given back or ran out more than `grace` ago (none
    /// without a grace: only those fenced already are gone), and
    /// makes this replica the owner of their open intents on `devices` (and on the sandboxes
    /// of `sandboxes_of`, whose fiscal memory was in this process's state directory; and of
    /// those written without an owner): these intents, to settle.
    /// Nothing when this replica is fenced.
    pub async fn take_over(
        &self,
        devices: &[String],
        sandboxes_of: Option<&str>,
        grace: Option<Duration>,
    ) -> Result<Vec<(IntentId, Intent)>, PgError> {
        let Some(me) = self.replica() else {
            return Ok(Vec::new());
        };
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("taking intents over", e))?;
        tx.batch_execute(LOCK_TIMEOUT)
            .await
            .map_err(|e| fail("taking intents over", e))?;
        if tx
            .cached_query_opt(HOLD_OWN, &[&me])
            .await
            .map_err(|e| fail("reading this replica's lease", e))?
            .is_none()
        {
            return Ok(Vec::new());
        }
        if let Some(grace) = grace {
            let fence: [&(dyn ToSql + Sync); 3] = [&grace.as_secs_f64(), &devices, &sandboxes_of];
            tx.cached_execute(FENCE_EXPIRED, &fence)
                .await
                .map_err(|e| fail("fencing replicas gone", e))?;
        }
        let params: [&(dyn ToSql + Sync); 3] = [&me, &devices, &sandboxes_of];
        let rows = tx
            .cached_query(TAKE_OVER, &params)
            .await
            .map_err(|e| fail("taking intents over", e))?;
        let mut taken = Vec::with_capacity(rows.len());
        for row in rows {
            let id: i64 = row.try_get(0).map_err(|e| fail("reading an intent", e))?;
            let body: String = row.try_get(1).map_err(|e| fail("reading an intent", e))?;
            let intent: Intent = serde_json::from_str(&body).map_err(|e| PgError::Query {
                doing: format!("reading intent {id}"),
                reason: e.to_string(),
            })?;
            taken.push((id.unsigned_abs(), intent));
        }
        tx.commit()
            .await
            .map_err(|e| fail("taking intents over", e))?;
        Ok(taken)
    }

    /// Whether this replica still holds its own lease (`true` without a replica name).
    pub async fn holds_own_lease(&self) -> Result<bool, PgError> {
        let Some(me) = self.replica() else {
            return Ok(true);
        };
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(
                "SELECT 1 FROM leases WHERE name = 'replica:' || $1 AND holder = $1",
                &[&me],
            )
            .await
            .map_err(|e| self.pool().query_error("reading this replica's lease", &e))?;
        Ok(row.is_some())
    }

    /// Says why only an administrator can settle intent `id`, for every replica to show; by
    /// its owner only (or anyone without a replica name). Whether the mark was written.
    pub async fn mark_awaiting(&self, id: IntentId, why: &str) -> Result<bool, PgError> {
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        let owner = self.replica();
        let client = self.pool().client().await?;
        let marked = client
            .cached_execute(
                "UPDATE intents SET awaiting = $2 WHERE id = $1 AND state = 'open' \
                 AND ($3::text IS NULL OR owner = $3)",
                &[&id, &why, &owner],
            )
            .await
            .map_err(|e| {
                self.pool()
                    .query_error("marking an intent for an administrator", &e)
            })?;
        Ok(marked == 1)
    }

    /// The open intents waiting for an administrator, whichever replica found them so.
    pub async fn awaiting_administrator(&self) -> Result<Vec<(IntentId, String)>, PgError> {
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(
                "SELECT id, awaiting FROM intents WHERE state = 'open' \
                 AND awaiting IS NOT NULL ORDER BY id",
                &[],
            )
            .await
            .map_err(|e| self.pool().query_error("reading the intents in doubt", &e))?;
        rows.iter()
            .map(|row| {
                let fail = |e| self.pool().query_error("reading an intent in doubt", &e);
                let id: i64 = row.try_get(0).map_err(fail)?;
                let why: String = row.try_get(1).map_err(fail)?;
                Ok((id.unsigned_abs(), why))
            })
            .collect()
    }

    /// Makes this replica the owner of intent `id`, waiting for an administrator (the one
    /// settling it here): its owner found it so and writes nothing more of it. Whether it is
    /// this replica's now (it may be already: its mark is written in the background).
    pub async fn adopt_awaiting(&self, id: IntentId) -> Result<bool, PgError> {
        let Some(me) = self.replica() else {
            return Ok(true);
        };
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        let fail = |e: tokio_postgres::Error| self.pool().query_error("adopting an intent", &e);
        let mut client = self.pool().client().await?;
        let tx = client.transaction().await.map_err(fail)?;
        if tx
            .cached_query_opt(HOLD_OWN, &[&me])
            .await
            .map_err(fail)?
            .is_none()
        {
            return Ok(false);
        }
        let adopted = tx
            .cached_execute(
                "UPDATE intents SET owner = $2 WHERE id = $1 AND state = 'open' \
                 AND (awaiting IS NOT NULL OR owner = $2)",
                &[&id, &me],
            )
            .await
            .map_err(fail)?;
        tx.commit().await.map_err(fail)?;
        Ok(adopted == 1)
    }

    /// Whether a replica other than this one holds its lease now (by the database's clock).
    pub async fn other_replicas_live(&self) -> Result<bool, PgError> {
        let me = self.replica().unwrap_or_default();
        let client = self.pool().client().await?;
        let row = client
            .cached_query_one(
                "SELECT EXISTS (SELECT 1 FROM leases WHERE name LIKE 'replica:%' \
                 AND name <> 'replica:' || $1 AND holder IS NOT NULL \
                 AND holder <> '(fenced)' AND held_until > now())",
                &[&me],
            )
            .await
            .map_err(|e| self.pool().query_error("reading the replicas' leases", &e))?;
        row.try_get(0)
            .map_err(|e| self.pool().query_error("reading the replicas' leases", &e))
    }
}
