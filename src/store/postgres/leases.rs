//! Leases (issue 29): work that one replica at a time does, taken for a while and renewed by
//! its holder, by the database's clock. Each taking raises the lease's epoch, the fencing
//! token its holder's writes carry (`migrations/0001_register.sql`, `leases`). Never held
//! across a call to anything but the database: each operation is one short statement.

use std::time::Duration;

use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;

/// Taken when free, expired or already this holder's; renewed otherwise. A holder whose lease
/// ran out gets a new epoch even when nobody took it meanwhile (what it did under the old
/// one is fenced off as if another had).
const TAKE: &str = "INSERT INTO leases AS l (name, holder, epoch, held_until) \
     VALUES ($1, $2, 1, now() + make_interval(secs => $3)) \
     ON CONFLICT (name) DO UPDATE SET \
         epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.held_until > now() \
                      THEN l.epoch ELSE l.epoch + 1 END, \
         holder = EXCLUDED.holder, \
         held_until = EXCLUDED.held_until \
     WHERE l.holder IS NULL OR l.holder = EXCLUDED.holder OR l.held_until <= now() \
     RETURNING epoch";

/// Given back by its holder under the epoch it holds; the next taker raises the epoch.
const RELEASE: &str = "UPDATE leases SET holder = NULL, held_until = NULL \
     WHERE name = $1 AND holder = $2 AND epoch = $3";

/// Whether the lease is held by this holder under this epoch now.
const HOLDS: &str = "SELECT EXISTS (SELECT 1 FROM leases \
     WHERE name = $1 AND holder = $2 AND epoch = $3 AND held_until > now())";

impl PgRegister {
    /// Takes or renews the lease `name` for `holder` for `ttl`: its epoch, or `None` while
    /// another holder has it.
    pub async fn take_lease(
        &self,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, PgError> {
        let client = self.pool().client().await?;
        let row = client
            .cached_query_opt(TAKE, &[&name, &holder, &ttl.as_secs_f64()])
            .await
            .map_err(|e| self.pool().query_error("taking a lease", &e))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let epoch: i64 = row
            .try_get(0)
            .map_err(|e| self.pool().query_error("taking a lease", &e))?;
        Ok(Some(epoch.unsigned_abs()))
    }

    /// Gives the lease back if `holder` holds it under `epoch`; whether it did.
    pub async fn release_lease(
        &self,
        name: &str,
        holder: &str,
        epoch: u64,
    ) -> Result<bool, PgError> {
        let epoch = i64::try_from(epoch).unwrap_or(i64::MAX);
        let client = self.pool().client().await?;
        let released = client
            .cached_execute(RELEASE, &[&name, &holder, &epoch])
            .await
            .map_err(|e| self.pool().query_error("releasing a lease", &e))?;
        Ok(released == 1)
    }

    /// Whether `holder` holds the lease `name` under `epoch` now (by the database's clock).
    pub async fn holds_lease(&self, name: &str, holder: &str, epoch: u64) -> Result<bool, PgError> {
        let epoch = i64::try_from(epoch).unwrap_or(i64::MAX);
        let client = self.pool().client().await?;
        let row = client
            .cached_query_one(HOLDS, &[&name, &holder, &epoch])
            .await
            .map_err(|e| self.pool().query_error("reading a lease", &e))?;
        row.try_get(0)
            .map_err(|e| self.pool().query_error("reading a lease", &e))
    }
}
