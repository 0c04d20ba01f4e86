//! Versioned migrations applied at start: in one transaction holding an advisory lock (two
//! replicas starting at once: the second waits, then finds the work done), each recorded in
//! `schema_migrations(version, name, checksum, applied_at)`. A database migrated by a newer
//! binary, a history with a hole, or an applied migration whose SQL changed since, is refused
//! before anything is changed.

use sha2::{Digest, Sha256};

use super::connect::PgPool;
use super::error::PgError;

/// One migration: its version (1, 2, ...), its name (the file's, without the number) and its
/// SQL (one or more statements, run inside the migrating transaction: no `CONCURRENTLY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Its place in the order, from 1.
    pub version: i64,
    /// What it does, in a word or two (`initial_schema`).
    pub name: &'static str,
    /// Its statements.
    pub sql: &'static str,
}

impl Migration {
    /// The SHA-256 of its SQL, in hex: what `schema_migrations` records.
    pub fn checksum(&self) -> String {
        hex::encode(Sha256::digest(self.sql.as_bytes()))
    }
}

/// The advisory lock the migrating transaction holds: any fixed 64-bit number the gateway
/// owns in the database ("emcf-mig" in ASCII).
pub const MIGRATION_LOCK: i64 = 0x656d_6366_2d6d_6967;

/// What `migrate` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The versions applied now, in order (empty when the database was up to date).
    pub applied: Vec<i64>,
    /// The database's version afterwards (0 when there is no migration at all).
    pub version: i64,
}

/// Brings the database to the newest of `migrations` (the binary's `MIGRATIONS`, or a list of
/// a test), or refuses it (`NewerSchema`, `BrokenHistory`, `ChangedMigration`) changing
/// nothing.
pub async fn migrate(pool: &PgPool, migrations: &[Migration]) -> Result<Migrated, PgError> {
    check_list(migrations)?;
    let mut client = pool.client().await?;
    let fail = |doing: &str, e: tokio_postgres::Error| pool.query_error(doing, &e);
    let tx = client
        .transaction()
        .await
        .map_err(|e| fail("starting the migration", e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| fail("taking the migration lock", e))?;
    // Created only when missing: a service role that may not create tables (the register's
    // owner migrates, docs/postgresql.md) starts on a schema that is up to date.
    let exists: bool = tx
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| fail("looking for schema_migrations", e))?;
    if !exists {
        tx.batch_execute(
            "CREATE TABLE schema_migrations (
                 version    bigint PRIMARY KEY,
                 name       text NOT NULL,
                 checksum   text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
             )",
        )
        .await
        .map_err(|e| {
            not_owner(pool, &e, 1).unwrap_or_else(|| fail("creating schema_migrations", e))
        })?;
    }
    let applied = read_applied(&*tx, pool).await?;
    let pending = pending(migrations, &applied)?;
    let mut done = Vec::with_capacity(pending.len());
    for migration in pending {
        tx.batch_execute(migration.sql).await.map_err(|e| {
            not_owner(pool, &e, migration.version).unwrap_or_else(|| {
                fail(
                    &format!(
                        "applying migration {} ({})",
                        migration.version, migration.name
                    ),
                    e,
                )
            })
        })?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
            &[&migration.version, &migration.name, &migration.checksum()],
        )
        .await
        .map_err(|e| fail("recording a migration", e))?;
        done.push(migration.version);
    }
    tx.commit()
        .await
        .map_err(|e| fail("committing the migration", e))?;
    let version = newest(migrations).max(applied.last().map_or(0, |a| a.version));
    if !done.is_empty() {
        tracing::info!(applied = ?done, version, "PostgreSQL schema migrated");
    }
    Ok(Migrated {
        applied: done,
        version,
    })
}

/// A migration refused for want of privileges (SQLSTATE 42501): the role is not the
/// schema's owner, which alone migrates.
fn not_owner(pool: &PgPool, error: &tokio_postgres::Error, version: i64) -> Option<PgError> {
    let code = error.as_db_error()?.code();
    (*code == tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE).then(|| PgError::NotOwner {
        user: pool.user().to_owned(),
        version,
    })
}

/// A read refused for want of privileges (SQLSTATE 42501): the role was not given the
/// service role's grants.
fn no_grants(pool: &PgPool, error: &tokio_postgres::Error) -> Option<PgError> {
    let code = error.as_db_error()?.code();
    (*code == tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE).then(|| PgError::NoGrants {
        user: pool.user().to_owned(),
    })
}

/// The schema as `config check` reports it, changing nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaState {
    /// No schema yet: `store migrate` as the owner creates it.
    Missing,
    /// At version `applied`, older than the binary's `binary`: `store migrate` as the owner.
    Behind { applied: i64, binary: i64 },
    /// Newer than the binary (a newer release migrated it): this binary refuses it.
    Newer { applied: i64, binary: i64 },
    /// The binary's version; `writable`: the role may write what certification writes.
    UpToDate { version: i64, writable: bool },
}

/// The schema of the database `pool` reaches, against `migrations` (read only).
pub async fn schema_state(pool: &PgPool, migrations: &[Migration]) -> Result<SchemaState, PgError> {
    let client = pool.client().await?;
    let fail = |doing: &str, e: tokio_postgres::Error| pool.query_error(doing, &e);
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| fail("looking for schema_migrations", e))?;
    if !exists {
        return Ok(SchemaState::Missing);
    }
    let applied = read_applied(&**client, pool).await?;
    let binary = newest(migrations);
    // What `serve` refuses (a changed or gapped history) is said as it would say it.
    let still = match pending(migrations, &applied) {
        Ok(still) => still,
        Err(PgError::NewerSchema { database, binary }) => {
            return Ok(SchemaState::Newer {
                applied: database,
                binary,
            })
        }
        Err(refused) => return Err(refused),
    };
    let applied = applied.last().map_or(0, |a| a.version);
    if !still.is_empty() {
        return Ok(SchemaState::Behind { applied, binary });
    }
    let writable: bool = client
        .query_one(
            "SELECT has_table_privilege('register_entries', 'INSERT') \
                AND has_table_privilege('intents', 'INSERT') \
                AND has_table_privilege('intents', 'UPDATE') \
                AND has_table_privilege('events', 'INSERT') \
                AND has_table_privilege('leases', 'UPDATE')",
            &[],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| fail("reading the role's privileges", e))?;
    Ok(SchemaState::UpToDate {
        version: applied,
        writable,
    })
}

/// The rows of `schema_migrations`, in order; a role without the grants to read them is told
/// which grants to give.
async fn read_applied(
    client: &impl tokio_postgres::GenericClient,
    pool: &PgPool,
) -> Result<Vec<Applied>, PgError> {
    let fail = |e: tokio_postgres::Error| pool.query_error("reading schema_migrations", &e);
    let rows = client
        .query(
            "SELECT version, name, checksum FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .map_err(|e| no_grants(pool, &e).unwrap_or_else(|| fail(e)))?;
    rows.iter()
        .map(|row| {
            Ok(Applied {
                version: row.try_get(0)?,
                name: row.try_get(1)?,
                checksum: row.try_get(2)?,
            })
        })
        .collect::<Result<Vec<Applied>, tokio_postgres::Error>>()
        .map_err(fail)
}

/// A row of `schema_migrations`.
#[derive(Debug)]
struct Applied {
    version: i64,
    name: String,
    checksum: String,
}

/// The binary's list: versions 1, 2, 3... in order.
fn check_list(migrations: &[Migration]) -> Result<(), PgError> {
    for (i, migration) in migrations.iter().enumerate() {
        let expected = i as i64 + 1;
        if migration.version != expected {
            return Err(PgError::MigrationList {
                reason: format!(
                    "migration {} ({}) is at place {expected}",
                    migration.version, migration.name
                ),
            });
        }
    }
    Ok(())
}

/// The newest version of the binary's list (0 for none).
fn newest(migrations: &[Migration]) -> i64 {
    migrations.last().map_or(0, |m| m.version)
}

/// The migrations still to apply, once every applied one is found unchanged in the binary.
fn pending<'a>(
    migrations: &'a [Migration],
    applied: &[Applied],
) -> Result<&'a [Migration], PgError> {
    let binary = newest(migrations);
    if let Some(latest) = applied.iter().map(|a| a.version).max() {
        if latest > binary {
            return Err(PgError::NewerSchema {
                database: latest,
                binary,
            });
        }
    }
    for (i, row) in applied.iter().enumerate() {
        let expected = i as i64 + 1;
        if row.version != expected {
            return Err(PgError::BrokenHistory {
                reason: format!(
                    "version {} ({}) is applied where {expected} should be",
                    row.version, row.name
                ),
            });
        }
        let Some(carried) = migrations.get(i) else {
            return Err(PgError::NewerSchema {
                database: row.version,
                binary,
            });
        };
        let checksum = carried.checksum();
        if checksum != row.checksum {
            return Err(PgError::ChangedMigration {
                version: row.version,
                name: row.name.clone(),
                applied: row.checksum.clone(),
                carried: checksum,
            });
        }
    }
    Ok(migrations.get(applied.len()..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: Migration = Migration {
        version: 1,
        name: "first",
        sql: "CREATE TABLE a (x int)",
    };
    const TWO: Migration = Migration {
        version: 2,
        name: "second",
        sql: "CREATE TABLE b (x int)",
    };

    fn applied(migration: &Migration) -> Applied {
        Applied {
            version: migration.version,
            name: migration.name.into(),
            checksum: migration.checksum(),
        }
    }

    #[test]
    fn the_binary_list_must_count_from_one() {
        assert!(check_list(&[]).is_ok());
        assert!(check_list(&[ONE, TWO]).is_ok());
        assert!(matches!(
            check_list(&[TWO]),
            Err(PgError::MigrationList { .. })
        ));
        assert!(matches!(
            check_list(&[ONE, ONE]),
            Err(PgError::MigrationList { .. })
        ));
    }

    #[test]
    fn what_is_pending_follows_what_is_applied() {
        assert_eq!(pending(&[ONE, TWO], &[]).expect("fresh"), &[ONE, TWO]);
        assert_eq!(pending(&[ONE, TWO], &[applied(&ONE)]).expect("one"), &[TWO]);
        assert!(pending(&[ONE, TWO], &[applied(&ONE), applied(&TWO)])
            .expect("all")
            .is_empty());
    }

    #[test]
    fn a_newer_database_an_unknown_or_changed_migration_is_refused() {
        assert!(matches!(
            pending(&[ONE], &[applied(&ONE), applied(&TWO)]),
            Err(PgError::NewerSchema {
                database: 2,
                binary: 1
            })
        ));
        assert!(matches!(
            pending(&[], &[applied(&ONE)]),
            Err(PgError::NewerSchema {
                database: 1,
                binary: 0
            })
        ));
        let edited = Migration {
            sql: "CREATE TABLE a (x bigint)",
            ..ONE
        };
        assert!(matches!(
            pending(&[edited, TWO], &[applied(&ONE)]),
            Err(PgError::ChangedMigration { version: 1, .. })
        ));
        // Row 1 deleted by hand: 2 would otherwise look like the first.
        assert!(matches!(
            pending(&[ONE, TWO], &[applied(&TWO)]),
            Err(PgError::BrokenHistory { .. })
        ));
    }

    #[test]
    fn a_checksum_is_the_sha256_of_the_sql() {
        assert_eq!(ONE.checksum().len(), 64);
        assert_ne!(ONE.checksum(), TWO.checksum());
    }
}
