//! The DGI's window of pending requests per web API e-MCF, shared by the replicas (issue 29;
//! `migrations/0001_register.sql`, `window_slots`). Each operation is one short statement:
//! nothing is locked across a call to the DGI.
//!
//! A place is taken, noted and given back only while the holder's own lease is its own (the
//! share lock of [`super::replicas::HOLD_OWN`], in the same statement): a fenced replica
//! writes nothing of the window. Its writes of a place (the uid, the giving back) carry the
//! epoch it was taken under and change nothing once the place was given to another. A place whose holder's lease is
//! gone is marked in doubt, and given back by the leader only when the DGI's pending list,
//! read more than the longest call after the mark, shows its request gone
//! (`certify/web_api_channel/window.rs`).

use std::time::Duration;

use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;
use crate::store::window::{DoubtedSlot, WindowSlot};

/// Whether replica `<col>` holds its lease now (by the database's clock).
macro_rules! live {
    ($col:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM leases l WHERE l.name = 'replica:' || ",
            $col,
            " AND l.holder = ",
            $col,
            " AND l.held_until > now())"
        )
    };
}

/// The lowest free place of device `$1` below `$2`, taken by replica `$3` while its own
/// lease is its own.
const TAKE: &str =
    "WITH own AS (SELECT 1 FROM leases WHERE name = 'replica:' || $3 AND holder = $3 FOR SHARE), \
     free AS (SELECT slot FROM window_slots WHERE device = $1 AND slot < $2 \
              AND holder IS NULL AND EXISTS (SELECT 1 FROM own) \
              ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) \
     UPDATE window_slots w SET holder = $3, epoch = w.epoch + 1, taken_at = now(), \
         uid = NULL, doubted_at = NULL \
     FROM free WHERE w.device = $1 AND w.slot = free.slot \
     RETURNING w.slot, w.epoch";

/// Device `$1`'s places below `$2`, made once (rows are never deleted).
const MAKE: &str = "INSERT INTO window_slots (device, slot) \
     SELECT $1, s FROM generate_series(0, $2 - 1) s ON CONFLICT DO NOTHING";

/// The share lock of replica `$N`'s own lease, as `TAKE` holds it: its later writes of a
/// place are refused once it is fenced (the leader's to recover then).
macro_rules! own {
    ($n:literal) => {
        concat!(
            "WITH own AS (SELECT 1 FROM leases WHERE name = 'replica:' || $",
            $n,
            " AND holder = $",
            $n,
            " FOR SHARE) "
        )
    };
}

/// The uid of the request sent under a place, while it is still the sender's.
const NOTE: &str = concat!(
    own!("5"),
    "UPDATE window_slots SET uid = $4 \
     WHERE device = $1 AND slot = $2 AND epoch = $3 AND holder = $5 AND EXISTS (SELECT 1 FROM own)"
);

/// A place given back by its holder, under the epoch it took it.
const GIVE_BACK: &str = concat!(
    own!("4"),
    "UPDATE window_slots \
     SET holder = NULL, taken_at = NULL, uid = NULL, doubted_at = NULL \
     WHERE device = $1 AND slot = $2 AND epoch = $3 AND holder = $4 AND EXISTS (SELECT 1 FROM own)"
);

/// Every place replica `$1` still holds (it stops, with no request of its own under way).
const GIVE_BACK_ALL: &str = concat!(
    own!("1"),
    "UPDATE window_slots \
     SET holder = NULL, taken_at = NULL, uid = NULL, doubted_at = NULL \
     WHERE holder = $1 AND EXISTS (SELECT 1 FROM own)"
);

/// Every place of replica `$1`, known dead (its successor on its state directory fenced it),
/// in doubt since ever.
pub(super) const DEAD: &str = "UPDATE window_slots SET doubted_at = '-infinity' WHERE holder = $1";

/// Device `$1`'s places held by a replica whose lease is gone marked in doubt (now), those
/// whose holder holds it again no longer.
const MARK_DOUBTS: &str = concat!(
    "UPDATE window_slots w SET doubted_at = CASE WHEN ",
    live!("w.holder"),
    " THEN NULL ELSE now() END \
     WHERE w.device = $1 AND w.holder IS NOT NULL AND (",
    live!("w.holder"),
    ") = (w.doubted_at IS NOT NULL)"
);

/// Device `$1`'s places in doubt, and whether marked more than `$2` seconds ago.
const DOUBTS: &str = "SELECT slot, epoch, uid, doubted_at <= now() - make_interval(secs => $2) \
     FROM window_slots WHERE device = $1 AND holder IS NOT NULL AND doubted_at IS NOT NULL";

/// Replica `$2`'s places of device `$1` that none of its lanes holds (`$3`), taken more than
/// `$4` seconds ago (a lane notes its place in memory as soon as it has it).
const GIVE_BACK_LOST: &str = concat!(
    own!("2"),
    "UPDATE window_slots \
     SET holder = NULL, taken_at = NULL, uid = NULL, doubted_at = NULL \
     WHERE device = $1 AND holder = $2 AND NOT (slot = ANY($3)) \
     AND taken_at < now() - make_interval(secs => $4) AND EXISTS (SELECT 1 FROM own)"
);

/// A place in doubt given back, unchanged since it was read (its epoch and its uid), its
/// holder still gone and its lease not renewed since the mark (a holder back for a while may
/// have sent a request the pending list read before did not show).
const FREE: &str = concat!(
    "UPDATE window_slots w SET holder = NULL, taken_at = NULL, uid = NULL, doubted_at = NULL \
     WHERE w.device = $1 AND w.slot = $2 AND w.epoch = $3 AND w.uid IS NOT DISTINCT FROM $5 \
     AND w.doubted_at <= now() - make_interval(secs => $4) AND NOT ",
    live!("w.holder"),
    " AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.name = 'replica:' || w.holder \
     AND l.holder = w.holder AND l.held_until > w.doubted_at)"
);

/// Which of the uids `$2` the service knows on device `$1`: noted under a place now, or held
/// by an intent whatever its state (a uid is noted before its intent is written, so a request
/// a replica died before noting has neither).
const KNOWN: &str = "SELECT uid FROM window_slots WHERE device = $1 AND uid = ANY($2) \
     UNION SELECT body ->> 'channel_ref' FROM intents \
     WHERE body ->> 'device' = $1 AND body ->> 'channel_ref' = ANY($2)";

impl PgRegister {
    /// A free place of `device`'s window of `limit` for this replica, or `None` while every
    /// place is taken (or this replica's lease is not its own).
    pub async fn take_window_slot(
        &self,
        device: &str,
        limit: u32,
    ) -> Result<Option<WindowSlot>, PgError> {
        let me = self.replica().unwrap_or_default();
        let limit = i32::try_from(limit).unwrap_or(i32::MAX);
        let fail = |e: tokio_postgres::Error| self.pool().query_error("taking a window place", &e);
        let client = self.pool().client().await?;
        for attempt in 0..2 {
            let row = client
                .cached_query_opt(TAKE, &[&device, &limit, &me])
                .await
                .map_err(fail)?;
            if let Some(row) = row {
                let slot: i32 = row.try_get(0).map_err(fail)?;
                let epoch: i64 = row.try_get(1).map_err(fail)?;
                return Ok(Some(WindowSlot {
                    device: device.to_owned(),
                    slot,
                    epoch,
                }));
            }
            // None free: perhaps no places made yet for this device (or for this limit).
            if attempt == 0
                && client
                    .cached_execute(MAKE, &[&device, &limit])
                    .await
                    .map_err(fail)?
                    == 0
            {
                break;
            }
        }
        Ok(None)
    }

    /// Notes `uid` under `slot`; whether the place is still this replica's.
    pub async fn note_window_uid(&self, slot: &WindowSlot, uid: &str) -> Result<bool, PgError> {
        let me = self.replica().unwrap_or_default();
        let client = self.pool().client().await?;
        let noted = client
            .cached_execute(NOTE, &[&slot.device, &slot.slot, &slot.epoch, &uid, &me])
            .await
            .map_err(|e| self.pool().query_error("noting a window place's uid", &e))?;
        Ok(noted == 1)
    }

    /// Gives `slot` back (nothing if it is no longer this replica's).
    pub async fn give_back_window_slot(&self, slot: &WindowSlot) -> Result<(), PgError> {
        let me = self.replica().unwrap_or_default();
        let client = self.pool().client().await?;
        client
            .cached_execute(GIVE_BACK, &[&slot.device, &slot.slot, &slot.epoch, &me])
            .await
            .map_err(|e| self.pool().query_error("giving a window place back", &e))?;
        Ok(())
    }

    /// Gives back every place this replica still holds.
    pub async fn give_back_window_slots(&self) -> Result<u64, PgError> {
        let Some(me) = self.replica() else {
            return Ok(0);
        };
        let client = self.pool().client().await?;
        client
            .cached_execute(GIVE_BACK_ALL, &[&me])
            .await
            .map_err(|e| self.pool().query_error("giving window places back", &e))
    }

    /// Marks `device`'s places whose holder is gone, and reads those in doubt (ready when
    /// marked more than `after` ago).
    pub async fn window_doubts(
        &self,
        device: &str,
        after: Duration,
    ) -> Result<Vec<DoubtedSlot>, PgError> {
        let fail =
            |e: tokio_postgres::Error| self.pool().query_error("reading the window's places", &e);
        let client = self.pool().client().await?;
        client
            .cached_execute(MARK_DOUBTS, &[&device])
            .await
            .map_err(fail)?;
        let rows = client
            .cached_query(DOUBTS, &[&device, &after.as_secs_f64()])
            .await
            .map_err(fail)?;
        rows.iter()
            .map(|row| {
                Ok(DoubtedSlot {
                    slot: WindowSlot {
                        device: device.to_owned(),
                        slot: row.try_get(0).map_err(fail)?,
                        epoch: row.try_get(1).map_err(fail)?,
                    },
                    uid: row.try_get(2).map_err(fail)?,
                    ready: row.try_get(3).map_err(fail)?,
                })
            })
            .collect()
    }

    /// Gives back this replica's places of `device` that no lane of it holds (`held`: their
    /// giving back failed), taken more than `older` ago; how many.
    pub async fn give_back_lost_window_slots(
        &self,
        device: &str,
        held: &[i32],
        older: Duration,
    ) -> Result<u64, PgError> {
        let Some(me) = self.replica() else {
            return Ok(0);
        };
        let client = self.pool().client().await?;
        client
            .cached_execute(GIVE_BACK_LOST, &[&device, &me, &held, &older.as_secs_f64()])
            .await
            .map_err(|e| self.pool().query_error("giving window places back", &e))
    }

    /// Gives back `slot`, in doubt for more than `after` and unchanged since it was read (its
    /// epoch, its uid), whose holder is still gone; whether it did.
    pub async fn free_window_slot(
        &self,
        slot: &DoubtedSlot,
        after: Duration,
    ) -> Result<bool, PgError> {
        let client = self.pool().client().await?;
        let freed = client
            .cached_execute(
                FREE,
                &[
                    &slot.slot.device,
                    &slot.slot.slot,
                    &slot.slot.epoch,
                    &after.as_secs_f64(),
                    &slot.uid,
                ],
            )
            .await
            .map_err(|e| self.pool().query_error("recovering a window place", &e))?;
        Ok(freed == 1)
    }

    /// Which of `uids` (pending on `device`'s DGI) the service knows: noted under a place
    /// now, or held by an intent, whatever its state.
    pub async fn known_window_uids(
        &self,
        device: &str,
        uids: &[String],
    ) -> Result<Vec<String>, PgError> {
        let client = self.pool().client().await?;
        let rows = client
            .cached_query(KNOWN, &[&device, &uids])
            .await
            .map_err(|e| {
                self.pool()
                    .query_error("reading the window's known uids", &e)
            })?;
        rows.iter()
            .map(|row| {
                row.try_get::<_, Option<String>>(0).map_err(|e| {
                    self.pool()
                        .query_error("reading the window's known uids", &e)
                })
            })
            .filter_map(Result::transpose)
            .collect()
    }
}
