//! What can go wrong between the gateway and its PostgreSQL server, typed for the callers that
//! will act on it (503 and a retry for an unreachable server, a refusal to start for a server
//! that does not keep commits, or a schema newer than the binary). `Display` is an English log
//! line; the words a person reads come later from the catalogue. No variant carries the
//! password: the URL it may name never holds one (`connect.rs` refuses it).

use std::error::Error as StdError;

/// An error of the PostgreSQL store.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The settings cannot make a connection: a URL that does not parse, no host, a pool of
    /// no connection, a password in the URL.
    #[error("the PostgreSQL settings are not usable: {reason}")]
    Settings {
        /// What is wrong, without the password.
        reason: String,
    },
    /// No answer from the server: refused, timed out, the socket missing, a connection
    /// closed while it was being opened.
    #[error("the PostgreSQL server {target} cannot be reached: {reason}")]
    Unreachable {
        /// The hosts and ports tried (`127.0.0.1:5432`, `/run/postgresql:5432`).
        target: String,
        /// The client's error and its causes.
        reason: String,
    },
    /// The server refused the role: a wrong or missing password, no `pg_hba.conf` entry, a
    /// role that does not exist or may not log in.
    #[error("the PostgreSQL server {target} refused the role {user}: {reason}")]
    AuthRefused {
        /// The hosts and ports tried.
        target: String,
        /// The role the URL names.
        user: String,
        /// The server's or the client's words.
        reason: String,
    },
    /// TLS could not be set up: the CA file unreadable or empty, a server without TLS, a
    /// certificate that does not chain to the CA or does not name the host.
    #[error("TLS with the PostgreSQL server {target} failed: {reason}")]
    Tls {
        /// The hosts and ports tried, or the CA file.
        target: String,
        /// What failed.
        reason: String,
    },
    /// The server is older than the oldest release the schema is written for.
    #[error(
        "the PostgreSQL server is version {found}; the gateway needs PostgreSQL {needed} or newer"
    )]
    ServerTooOld {
        /// `server_version` as the server says it.
        found: String,
        /// The oldest major version accepted.
        needed: u32,
    },
    /// The server acknowledges a commit before it is on disk (here and on its synchronous
    /// standbys): a certified invoice could be lost after its 200.
    #[error(
        "the PostgreSQL server has synchronous_commit = {value} for this role and database; \
         the register needs on or remote_apply (a commit on disk before its answer)"
    )]
    SynchronousCommitOff {
        /// The session's `synchronous_commit`.
        value: String,
    },
    /// The server does not flush its WAL at all: no commit survives a power cut.
    #[error("the PostgreSQL server runs with fsync = off; the register needs fsync = on")]
    FsyncOff,
    /// The database was migrated by a newer release: this binary does not know its schema.
    #[error(
        "the database's schema is at version {database}, newer than this binary's {binary}: \
         run a release that knows version {database}"
    )]
    NewerSchema {
        /// The newest version applied to the database.
        database: i64,
        /// The newest version this binary carries (0 for none).
        binary: i64,
    },
    /// The schema needs a migration this role may not apply (it may not create or change
    /// tables): the database's owner migrates (`emcf-gateway store migrate`).
    #[error(
        "the database's schema needs migration {version}, which the role {user} may not apply: \
         run `emcf-gateway store migrate` as the database's owner, then start the gateway again"
    )]
    NotOwner {
        /// The role the gateway connected as.
        user: String,
        /// The first migration it could not apply.
        version: i64,
    },
    /// The role may not read the gateway's tables: it was not given the service role's
    /// grants.
    #[error(
        "the role {user} may not read the gateway's tables: give it the service role's grants \
         (docs/postgresql-service-role.sql, run as a superuser, then GRANT emcf_service TO \
         {user})"
    )]
    NoGrants {
        /// The role the gateway connected as.
        user: String,
    },
    /// An applied migration's SQL is not what this binary carries for that version.
    #[error(
        "migration {version} ({name}) applied to the database has checksum {applied}, but this \
         binary carries {carried}: an applied migration is never edited, a change is a new one"
    )]
    ChangedMigration {
        /// Its version.
        version: i64,
        /// Its name, as recorded in the database.
        name: String,
        /// The checksum recorded when it was applied.
        applied: String,
        /// The checksum of this binary's SQL.
        carried: String,
    },
    /// `schema_migrations` is not a run of versions from 1 (a row deleted or written by hand):
    /// the database's schema is not one any binary made.
    #[error("the database's schema_migrations is not versions 1 to n in order: {reason}")]
    BrokenHistory {
        /// The version missing or unknown.
        reason: String,
    },
    /// The binary's own list of migrations is malformed (a programming error caught at start:
    /// versions not increasing from 1).
    #[error("the binary's migrations are malformed: {reason}")]
    MigrationList {
        /// What is wrong.
        reason: String,
    },
    /// The connection was lost while a COMMIT was under way: it may have happened or not.
    /// Never guessed: what was committed is read from the database once it answers again.
    #[error("the connection to PostgreSQL ({target}) was lost during a COMMIT, whose outcome is unknown: {reason}")]
    CommitUnknown {
        /// The hosts and ports of the server.
        target: String,
        /// The client's error and its causes.
        reason: String,
    },
    /// A statement failed on a reachable server.
    #[error("PostgreSQL failed while {doing}: {reason}")]
    Query {
        /// What the gateway was doing.
        doing: String,
        /// The client's error and its causes (the server's message, SQLSTATE).
        reason: String,
    },
}

impl PgError {
    /// A statement's failure while `doing`: the server gone in the middle (the connection
    /// lost, or the server saying it is shutting down) is `Unreachable`, anything else `Query`.
    pub(crate) fn query(doing: &str, target: &str, error: &tokio_postgres::Error) -> PgError {
        let gone = match error.as_db_error() {
            Some(db) => server_going_away(db.code().code()),
            None => error.is_closed() || has_io_error(error),
        };
        if gone {
            return PgError::Unreachable {
                target: target.to_owned(),
                reason: chain(error),
            };
        }
        PgError::Query {
            doing: doing.to_owned(),
            reason: chain(error),
        }
    }

    /// Whether the server could not be reached (the caller answers 503 and tries again later).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            PgError::Unreachable { .. } | PgError::CommitUnknown { .. }
        )
    }
}

/// Whether a SQLSTATE says the server is going away or not there yet: a connection exception
/// (class 08), a shutdown (57P01 administrator, 57P02 crash), or a server starting (57P03).
/// It will be back: the caller answers 503 and tries again.
pub(crate) fn server_going_away(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
}

/// The error and its causes in one line (tokio-postgres's own message is terse: "db error",
/// "error connecting to server").
pub(crate) fn chain(error: &dyn StdError) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// Whether an I/O error is among the causes (`io::Error` hides its inner error from
/// `source()`, so it is looked at whole).
pub(crate) fn has_io_error(error: &(dyn StdError + 'static)) -> bool {
    causes(error).any(|cause| cause.is::<std::io::Error>())
}

/// Whether a rustls error is among the causes, also inside an `io::Error` (tokio-rustls
/// reports a failed handshake as an I/O error wrapping it).
pub(crate) fn has_tls_error(error: &(dyn StdError + 'static)) -> bool {
    causes(error).any(|cause| {
        cause.is::<rustls::Error>()
            || cause
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<rustls::Error>())
    })
}

/// The error itself and each of its causes.
fn causes<'a>(
    error: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(error), |&e| e.source())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_names_every_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let outer = PgError::Settings {
            reason: "no host".into(),
        };
        assert_eq!(chain(&io), "refused");
        assert_eq!(
            chain(&outer),
            "the PostgreSQL settings are not usable: no host"
        );
        assert!(has_io_error(&io));
        assert!(!has_tls_error(&io));
    }

    #[test]
    fn a_tls_error_inside_an_io_error_is_seen() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert!(has_tls_error(&io));
    }

    #[test]
    fn a_server_shutting_down_or_starting_will_be_back() {
        for code in ["08006", "08001", "57P01", "57P02", "57P03"] {
            assert!(server_going_away(code), "{code}");
        }
        for code in ["42P01", "23505", "28P01", "57014"] {
            assert!(!server_going_away(code), "{code}");
        }
    }

    #[test]
    fn the_newer_schema_names_both_versions() {
        let said = PgError::NewerSchema {
            database: 7,
            binary: 5,
        }
        .to_string();
        assert!(said.contains('7') && said.contains('5'), "{said}");
    }
}
