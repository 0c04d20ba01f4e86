//! Devices as data (issue 29): web API e-MCFs kept in the `devices` table
//! (`migrations/0001_register.sql`), their tokens sealed by the caller (`store/sealed.rs`)
//! before they reach this file: nothing here sees a token in clear. Replicas poll
//! [`PgRegister::devices_version`] (one short statement) and read the devices again when it
//! moves. None of these statements is on the certification path.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::access::commit;
use super::cached::Cached;
use super::register::PgRegister;
use super::PgError;

/// A web API e-MCF kept in the store. Its token is sealed; `Debug` and the JSON an
/// administrator reads leave the sealed text out too.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredDevice {
    /// Its name, which organizations' `device` names.
    pub name: String,
    /// Its kind (`web_api`).
    pub kind: String,
    /// The API base.
    pub url: String,
    /// The token, sealed (`v1:<key id>:...`); never serialized.
    #[serde(skip)]
    pub token_sealed: String,
    /// The id of the key that sealed the token.
    pub key_id: String,
    /// Rises on each change.
    pub version: u64,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl std::fmt::Debug for StoredDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredDevice")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("url", &self.url)
            .field("key_id", &self.key_id)
            .field("version", &self.version)
            .field("updated_at", &self.updated_at)
            .finish_non_exhaustive()
    }
}

/// Why a device's change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceRefusal {
    /// A device of this name is kept already.
    Exists,
    /// No device of this name is kept.
    Unknown,
    /// Organizations certify on it, or intents on it are open.
    InUse {
        /// The organizations whose `device` it is.
        organizations: Vec<String>,
        /// The open intents on it.
        open_intents: Vec<u64>,
    },
    /// The schema refused the values (a name or a URL it does not take).
    Invalid,
}

/// What a device's write came to.
pub type DeviceWritten<T> = Result<Result<T, DeviceRefusal>, PgError>;

/// The columns of a [`StoredDevice`]; the time as microseconds since 1970 (UTC).
const COLUMNS: &str = "name, kind, url, token_sealed, key_id, version, \
     (extract(epoch FROM updated_at) * 1000000)::bigint";

/// The sum of every row's version: it rises whenever a device is added, changed or removed.
const VERSION: &str = "SELECT COALESCE(sum(version), 0)::bigint FROM devices";

impl PgRegister {
    /// The devices kept (removed ones left out), by name.
    pub async fn devices(&self) -> Result<Vec<StoredDevice>, PgError> {
        let client = self.pool().client().await?;
        let sql = format!("SELECT {COLUMNS} FROM devices WHERE removed_at IS NULL ORDER BY name");
        let rows = client
            .cached_query(&sql, &[])
            .await
            .map_err(|e| self.pool().query_error("reading the devices", &e))?;
        rows.iter().map(|row| self.device_of(row)).collect()
    }

    /// What moves whenever a device is added, changed or removed.
    pub async fn devices_version(&self) -> Result<i64, PgError> {
        let client = self.pool().client().await?;
        let row = client
            .cached_query_one(VERSION, &[])
            .await
            .map_err(|e| self.pool().query_error("reading the devices' version", &e))?;
        row.try_get(0)
            .map_err(|e| self.pool().query_error("reading the devices' version", &e))
    }

    /// Adds a device (a removed one of that name comes back with these values).
    pub async fn add_device(
        &self,
        name: &str,
        kind: &str,
        url: &str,
        token_sealed: &str,
        key_id: &str,
    ) -> DeviceWritten<StoredDevice> {
        let client = self.pool().client().await?;
        let sql = format!(
            "INSERT INTO devices AS d (name, kind, url, token_sealed, key_id) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, url = EXCLUDED.url, \
                 token_sealed = EXCLUDED.token_sealed, key_id = EXCLUDED.key_id, \
                 version = nextval('device_versions'), updated_at = now(), removed_at = NULL \
             WHERE d.removed_at IS NOT NULL \
             RETURNING {COLUMNS}"
        );
        let row = client
            .cached_query_opt(&sql, &[&name, &kind, &url, &token_sealed, &key_id])
            .await;
        match row {
            Ok(Some(row)) => Ok(Ok(self.device_of(&row)?)),
            Ok(None) => Ok(Err(DeviceRefusal::Exists)),
            Err(e) if is_check_violation(&e) => Ok(Err(DeviceRefusal::Invalid)),
            Err(e) => Err(self.pool().query_error("adding a device", &e)),
        }
    }

    /// Changes a device's URL and/or token (each `None` kept).
    pub async fn update_device(
        &self,
        name: &str,
        url: Option<&str>,
        sealed: Option<(&str, &str)>,
    ) -> DeviceWritten<StoredDevice> {
        let (token_sealed, key_id) = sealed.unzip();
        let client = self.pool().client().await?;
        let sql = format!(
            "UPDATE devices SET url = COALESCE($2, url), \
                 token_sealed = COALESCE($3, token_sealed), key_id = COALESCE($4, key_id), \
                 version = nextval('device_versions'), updated_at = now() \
             WHERE name = $1 AND removed_at IS NULL RETURNING {COLUMNS}"
        );
        let row = client
            .cached_query_opt(&sql, &[&name, &url, &token_sealed, &key_id])
            .await;
        match row {
            Ok(Some(row)) => Ok(Ok(self.device_of(&row)?)),
            Ok(None) => Ok(Err(DeviceRefusal::Unknown)),
            Err(e) if is_check_violation(&e) => Ok(Err(DeviceRefusal::Invalid)),
            Err(e) => Err(self.pool().query_error("changing a device", &e)),
        }
    }

    /// Removes a device no organization names and no open intent runs on, in one
    /// transaction (the row stays, `removed_at` set, so that each replica sees it go).
    pub async fn remove_device(&self, name: &str) -> DeviceWritten<()> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to remove a device", e))?;
        let kept = tx
            .cached_query_opt(
                "SELECT 1 FROM devices WHERE name = $1 AND removed_at IS NULL FOR UPDATE",
                &[&name],
            )
            .await
            .map_err(|e| fail("reading a device", e))?;
        if kept.is_none() {
            return Ok(Err(DeviceRefusal::Unknown));
        }
        let organizations: Vec<String> = tx
            .cached_query(
                "SELECT id FROM organizations WHERE record->>'device' = $1 ORDER BY id",
                &[&name],
            )
            .await
            .map_err(|e| fail("reading a device's organizations", e))?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| fail("reading a device's organizations", e))?;
        let open_intents: Vec<i64> = tx
            .cached_query(
                "SELECT id FROM intents WHERE state = 'open' AND body->>'device' = $1 ORDER BY id",
                &[&name],
            )
            .await
            .map_err(|e| fail("reading a device's open intents", e))?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| fail("reading a device's open intents", e))?;
        if !organizations.is_empty() || !open_intents.is_empty() {
            return Ok(Err(DeviceRefusal::InUse {
                organizations,
                open_intents: open_intents.into_iter().map(i64::unsigned_abs).collect(),
            }));
        }
        tx.cached_execute(
            "UPDATE devices SET removed_at = now(), updated_at = now(), \
                 version = nextval('device_versions') WHERE name = $1",
            &[&name],
        )
        .await
        .map_err(|e| fail("removing a device", e))?;
        commit(self, tx, "committing a device's removal").await?;
        Ok(Ok(()))
    }

    /// Every kept token (removed devices' included) sealed again by `reseal` (the name and
    /// the sealed text; `Ok(None)` when it is sealed as wanted already), in one transaction:
    /// how many changed, or the first refusal of `reseal` with its device's name (nothing
    /// changed then).
    pub async fn reseal_devices<E>(
        &self,
        reseal: impl Fn(&str, &str) -> Result<Option<(String, String)>, E>,
    ) -> Result<Result<usize, (String, E)>, PgError> {
        let fail = |doing: &str, e: tokio_postgres::Error| self.pool().query_error(doing, &e);
        let mut client = self.pool().client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| fail("starting to seal the tokens again", e))?;
        let rows = tx
            .cached_query(
                "SELECT name, token_sealed FROM devices ORDER BY name FOR UPDATE",
                &[],
            )
            .await
            .map_err(|e| fail("reading the sealed tokens", e))?;
        let mut changed = 0;
        for row in rows {
            let name: String = row.try_get(0).map_err(|e| fail("reading a device", e))?;
            let sealed: String = row.try_get(1).map_err(|e| fail("reading a device", e))?;
            let (new_sealed, key_id) = match reseal(&name, &sealed) {
                Ok(Some(new)) => new,
                Ok(None) => continue,
                Err(refusal) => return Ok(Err((name, refusal))),
            };
            tx.cached_execute(
                "UPDATE devices SET token_sealed = $2, key_id = $3 WHERE name = $1",
                &[&name, &new_sealed, &key_id],
            )
            .await
            .map_err(|e| fail("sealing a token again", e))?;
            changed += 1;
        }
        commit(self, tx, "committing the tokens sealed again").await?;
        Ok(Ok(changed))
    }

    fn device_of(&self, row: &tokio_postgres::Row) -> Result<StoredDevice, PgError> {
        let fail = |e: tokio_postgres::Error| self.pool().query_error("reading a device", &e);
        let version: i64 = row.try_get(5).map_err(fail)?;
        Ok(StoredDevice {
            name: row.try_get(0).map_err(fail)?,
            kind: row.try_get(1).map_err(fail)?,
            url: row.try_get(2).map_err(fail)?,
            token_sealed: row.try_get(3).map_err(fail)?,
            key_id: row.try_get(4).map_err(fail)?,
            version: version.unsigned_abs(),
            updated_at: DateTime::from_timestamp_micros(row.try_get(6).map_err(fail)?)
                .unwrap_or_default(),
        })
    }
}

/// Whether the schema's rules refused the values.
fn is_check_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&tokio_postgres::error::SqlState::CHECK_VIOLATION)
}
