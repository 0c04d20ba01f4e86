//! How to reach the PostgreSQL server: the configuration's `[store]` table, resolved.

use std::fmt;
use std::path::PathBuf;

/// The connection to the PostgreSQL store, as configured (`docs/configuration.md`, `[store]`).
#[derive(Clone, PartialEq, Eq)]
pub struct PgSettings {
    /// A libpq-style URL without its password: `postgresql://user@host:port/db`, or a socket
    /// directory as `postgresql://user@/db?host=/run/postgresql`.
    pub url: String,
    /// The password, read from the configured `password_file` (never logged, never in
    /// `Debug`); `None` when the server needs none (peer or trust authentication).
    pub password: Option<String>,
    /// Whether and how the connection is encrypted.
    pub tls: PgTls,
    /// Connections kept open at most.
    pub pool_size: usize,
}

/// TLS of the connection (rustls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgTls {
    /// Plain TCP or a Unix socket.
    Disable,
    /// Encrypted; the server's certificate is not checked (`sslmode=require`).
    Require,
    /// Encrypted; the server's certificate must chain to `ca_file` and name the host
    /// (`sslmode=verify-full`).
    VerifyFull {
        /// PEM file of the certificate authorities trusted.
        ca_file: PathBuf,
    },
}

impl fmt::Debug for PgSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgSettings")
            .field("url", &self.url)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("tls", &self.tls)
            .field("pool_size", &self.pool_size)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_shows_in_debug() {
        let settings = PgSettings {
            url: "postgresql://emcf@db.example/emcf".into(),
            password: Some("s3cret-pg".into()),
            tls: PgTls::Require,
            pool_size: 8,
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret-pg"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
