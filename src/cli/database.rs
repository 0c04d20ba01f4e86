//! The register in PostgreSQL (`[store] url`): opened by `serve` and by every command that
//! reads or writes what the gateway keeps, directly, whether a service runs or not (there
//! is no lock to share: the database serializes the writers). The commands that only make
//! sense for the embedded store's files (`index rebuild`, `backup`, `restore`) refuse rather
//! than act on a state directory the configuration does not use for the register.

use tracing::info;

use super::errors::Say;
use crate::config::Config;
use crate::msg;
use crate::store::postgres::{PgSettings, PgStore};
use crate::store::Store;

/// The PostgreSQL settings of `config`, when its register is in a database.
pub(super) fn settings(config: &Config) -> anyhow::Result<Option<PgSettings>> {
    Ok(config.store_settings()?)
}

/// Opens the database of `settings` and migrates its schema, on the service's runtime.
pub(super) async fn open(settings: &PgSettings) -> anyhow::Result<Store> {
    let (store, migrated) = PgStore::open(settings)
        .await
        .say(|| msg!("cli-database-open", url = settings.url.clone()))?;
    info!(schema = migrated.version, "register open in PostgreSQL");
    Ok(Store::Postgres(store))
}

/// [`open`], for a command (no runtime of its own).
pub(super) fn open_blocking(settings: &PgSettings) -> anyhow::Result<Store> {
    let (store, _) = PgStore::open_blocking(settings)
        .say(|| msg!("cli-database-open", url = settings.url.clone()))?;
    Ok(Store::Postgres(store))
}

/// Refuses a command of the embedded store's files (`what`: its name) when the register is in
/// PostgreSQL.
pub(super) fn refuse_for_embedded_only(config: &Config, what: &str) -> anyhow::Result<()> {
    if settings(config)?.is_some() {
        anyhow::bail!(msg!("cli-embedded-only", command = what));
    }
    Ok(())
}
