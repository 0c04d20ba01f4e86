//! The alerts' state shared by replicas (issue 29; docs/design.md §12): rows of `alert_state`
//! (`migrations/0001_register.sql`), each written by one replica at a time and **fenced**:
//! every write first takes a share lock on this replica's own lease row
//! (`replicas.rs` `HOLD_OWN`) and, for the service-wide row, on the `leader` lease under the
//! epoch this replica leads by, and is refused unless they are still its own. The writer
//! records an e-mail as sent here *before* sending it: of two replicas that both believe they
//! may send, only one record is accepted, and an e-mail is never sent twice.

use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;

/// The leader lease, under the epoch the writer leads by, share-locked (as `HOLD_OWN` locks
/// its own): another replica takes it over only after this write, or the write sees it gone.
const HOLD_LEADER: &str = "SELECT 1 FROM leases WHERE name = 'leader' AND holder = $1 \
     AND epoch = $2 AND held_until > now() FOR SHARE";

/// A row written whole.
const SAVE: &str = "INSERT INTO alert_state (key, state) VALUES ($1, $2::text::jsonb) \
     ON CONFLICT (key) DO UPDATE SET state = EXCLUDED.state";

/// A row written only if there is none (an e-mail claimed once).
const CLAIM: &str = "INSERT INTO alert_state (key, state) VALUES ($1, $2::text::jsonb) \
     ON CONFLICT (key) DO NOTHING";

/// What a fenced claim of an e-mail found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailClaim {
    /// Recorded now: this replica sends it.
    Claimed,
    /// Recorded before (by this replica's predecessor or another): never sent again.
    Recorded,
    /// This replica's lease (or leadership) is no longer its own: nothing written.
    Fenced,
}

/// One fenced write.
enum Write<'a> {
    Save(&'a str, &'a str),
    Claim(&'a str, &'a str),
    Release(&'a str),
}

impl PgRegister {
    /// The row `key`, as JSON text, if written.
    pub async fn alert_state(&self, key: &str) -> Result<Option<String>, PgError> {
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(
                "SELECT state::text FROM alert_state WHERE key = $1",
                &[&key],
            )
            .await
            .map_err(|e| self.pool().query_error("reading the alerts' state", &e))?;
        row.map(|row| row.try_get(0))
            .transpose()
            .map_err(|e| self.pool().query_error("reading the alerts' state", &e))
    }

    /// Writes the row `key` whole, fenced by this replica's lease and, with `leader`, by the
    /// leader lease under that epoch. Whether it was written.
    pub async fn save_alert_state(
        &self,
        key: &str,
        state: &str,
        leader: Option<u64>,
    ) -> Result<bool, PgError> {
        let written = self.fenced(leader, Write::Save(key, state)).await?;
        Ok(written.is_some())
    }

    /// Records the e-mail `key` as sent, fenced as [`PgRegister::save_alert_state`], unless it
    /// was recorded before.
    pub async fn claim_mail(
        &self,
        key: &str,
        state: &str,
        leader: Option<u64>,
    ) -> Result<MailClaim, PgError> {
        Ok(match self.fenced(leader, Write::Claim(key, state)).await? {
            None => MailClaim::Fenced,
            Some(1) => MailClaim::Claimed,
            Some(_) => MailClaim::Recorded,
        })
    }

    /// Forgets the record of the e-mail `key` (the relay did not take it: it is tried
    /// again), fenced likewise. Whether this replica could write.
    pub async fn release_mail(&self, key: &str, leader: Option<u64>) -> Result<bool, PgError> {
        let done = self.fenced(leader, Write::Release(key)).await?;
        Ok(done.is_some())
    }

    /// Runs `write` in a transaction that first holds this replica's lease (and the leader
    /// lease under `leader`): the rows it changed, or `None` and nothing written when one of
    /// them is not its own.
    async fn fenced(&self, leader: Option<u64>, write: Write<'_>) -> Result<Option<u64>, PgError> {
        let fail =
            |e: tokio_postgres::Error| self.pool().query_error("writing the alerts' state", &e);
        let mut client = self.pool().client().await?;
        let tx = client.transaction().await.map_err(fail)?;
        let me = self.replica().unwrap_or_default().to_owned();
        if self.replica().is_some()
            && tx
                .cached_query_opt(super::replicas::HOLD_OWN, &[&me])
                .await
                .map_err(fail)?
                .is_none()
        {
            return Ok(None);
        }
        if let Some(epoch) = leader {
            let epoch = i64::try_from(epoch).unwrap_or(i64::MAX);
            if tx
                .cached_query_opt(HOLD_LEADER, &[&me, &epoch])
                .await
                .map_err(fail)?
                .is_none()
            {
                return Ok(None);
            }
        }
        let changed = match write {
            Write::Save(key, state) => tx.cached_execute(SAVE, &[&key, &state]).await,
            Write::Claim(key, state) => tx.cached_execute(CLAIM, &[&key, &state]).await,
            Write::Release(key) => {
                tx.cached_execute("DELETE FROM alert_state WHERE key = $1", &[&key])
                    .await
            }
        }
        .map_err(fail)?;
        tx.commit().await.map_err(fail)?;
        Ok(Some(changed))
    }
}
