//! The connection pool to the PostgreSQL server (deadpool-postgres over tokio-postgres, TLS by
//! rustls), made from [`PgSettings`] and checked at once: the first connection is opened
//! before [`PgPool::connect`] returns, and a server that would acknowledge a commit before it
//! is on disk, or is older than [`OLDEST_SERVER`], is refused (docs/postgresql.md).
//!
//! tokio-postgres is asynchronous: nothing here blocks a runtime worker (the CA file is read
//! with `tokio::fs`).

use std::error::Error as _;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Hook, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::error::{chain, has_io_error, has_tls_error, server_going_away, PgError};
use super::settings::{PgSettings, PgTls};

/// The oldest PostgreSQL major version accepted (the schema relies on nothing newer; 13 is the
/// oldest release its developers still supported when this was written).
pub const OLDEST_SERVER: u32 = 13;

/// The `synchronous_commit` values that answer a commit only once its WAL is flushed here and,
/// when the server has synchronous standbys, flushed (`on`) or applied (`remote_apply`) on
/// them. `remote_write` and `local` answer before a standby has the commit on disk, `off`
/// before anything is on disk: refused.
pub const DURABLE_COMMIT: &[&str] = &["on", "remote_apply"];

/// One connection attempt, when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Waiting for a free connection of the pool, or for a new one to be opened.
const POOL_TIMEOUT: Duration = Duration::from_secs(15);

/// What the server said of itself when the pool was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFacts {
    /// `server_version`, as the server writes it (`15.18 (Debian 15.18-0+deb12u1)`).
    pub version: String,
    /// `server_version_num` (`150018`).
    pub version_num: u32,
    /// The session's `synchronous_commit` (server, database and role settings applied).
    pub synchronous_commit: String,
}

/// A pool of connections to a checked server.
#[derive(Clone)]
pub struct PgPool {
    pool: Pool,
    target: Arc<str>,
    user: Arc<str>,
    server: ServerFacts,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool")
            .field("target", &self.target)
            .field("user", &self.user)
            .field("server", &self.server)
            .field("status", &self.pool.status())
            .finish()
    }
}

impl PgPool {
    /// Makes the pool and opens its first connection: an unreachable server, a refused role,
    /// a TLS failure, a server older than [`OLDEST_SERVER`], `fsync = off` or a
    /// `synchronous_commit` outside [`DURABLE_COMMIT`] is an error.
    pub async fn connect(settings: &PgSettings) -> Result<PgPool, PgError> {
        let resolved = resolve(settings)?;
        let tls = tls_connector(&settings.tls, &resolved.target).await?;
        let manager = Manager::from_config(
            resolved.config,
            tls,
            ManagerConfig {
                // A closed connection is seen without a round trip; a broken one fails its
                // statement, and the caller's retry takes another.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_TIMEOUT))
            .create_timeout(Some(POOL_TIMEOUT))
            .recycle_timeout(Some(POOL_TIMEOUT))
            .post_create(Hook::async_fn(|client, _| {
                Box::pin(async move {
                    set_session(client).await;
                    Ok(())
                })
            }))
            .build()
            .map_err(|e| PgError::Settings { reason: chain(&e) })?;
        let (target, user): (Arc<str>, Arc<str>) = (resolved.target.into(), resolved.user.into());
        let server = check_server(&pool, &target, &user).await?;
        let pool = PgPool {
            pool,
            target,
            user,
            server,
        };
        tracing::info!(
            target = %pool.target,
            version = %pool.server.version,
            synchronous_commit = %pool.server.synchronous_commit,
            pool_size = settings.pool_size,
            "PostgreSQL store connected"
        );
        Ok(pool)
    }

    /// A connection of the pool (opened if none is free and the pool is not full).
    pub async fn client(&self) -> Result<deadpool_postgres::Client, PgError> {
        self.pool
            .get()
            .await
            .map_err(|e| pool_error(e, &self.target, &self.user))
    }

    /// What the server said of itself at connect.
    pub fn server(&self) -> &ServerFacts {
        &self.server
    }

    /// The hosts and ports the pool connects to, for logs.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The role it connects as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// A statement's failure while `doing`, typed (`Unreachable` when the server went away).
    pub fn query_error(&self, doing: &str, error: &tokio_postgres::Error) -> PgError {
        PgError::query(doing, &self.target, error)
    }
}

/// The server's version, `synchronous_commit` and `fsync`, in one round trip on a connection
/// of `pool`; refused when they cannot keep a certified invoice.
async fn check_server(pool: &Pool, target: &str, user: &str) -> Result<ServerFacts, PgError> {
    let client = pool.get().await.map_err(|e| pool_error(e, target, user))?;
    let failed =
        |e: tokio_postgres::Error| PgError::query("reading the server's settings", target, &e);
    let row = client
        .query_one(
            "SELECT current_setting('server_version_num'), current_setting('server_version'), \
             current_setting('synchronous_commit'), current_setting('fsync')",
            &[],
        )
        .await
        .map_err(failed)?;
    let text = |i: usize| row.try_get::<_, String>(i).map_err(failed);
    judge_server(&text(0)?, text(1)?, text(2)?, &text(3)?)
}

/// The server's settings judged: its version, `fsync`, then `synchronous_commit`.
fn judge_server(
    num: &str,
    version: String,
    synchronous_commit: String,
    fsync: &str,
) -> Result<ServerFacts, PgError> {
    let version_num: u32 = num.trim().parse().map_err(|_| PgError::Query {
        doing: "reading the server's version".into(),
        reason: format!("server_version_num is {num:?}"),
    })?;
    if version_num / 10_000 < OLDEST_SERVER {
        return Err(PgError::ServerTooOld {
            found: version,
            needed: OLDEST_SERVER,
        });
    }
    if fsync != "on" {
        return Err(PgError::FsyncOff);
    }
    if !DURABLE_COMMIT.contains(&synchronous_commit.as_str()) {
        return Err(PgError::SynchronousCommitOff {
            value: synchronous_commit,
        });
    }
    Ok(ServerFacts {
        version,
        version_num,
        synchronous_commit,
    })
}

/// The settings as tokio-postgres's configuration, with what the logs call the server.
struct Resolved {
    config: tokio_postgres::Config,
    target: String,
    user: String,
}

/// Parses the URL and applies the password, TLS mode and defaults.
fn resolve(settings: &PgSettings) -> Result<Resolved, PgError> {
    let mut config: tokio_postgres::Config =
        settings.url.parse().map_err(|e| PgError::Settings {
            reason: format!("the URL does not parse: {}", chain(&e)),
        })?;
    if config.get_password().is_some() {
        return Err(PgError::Settings {
            reason: "the URL holds a password; give it in password_file".into(),
        });
    }
    if config.get_hosts().is_empty() {
        return Err(PgError::Settings {
            reason: "the URL names no host (a host name, or a socket directory as \
                     ?host=/run/postgresql)"
                .into(),
        });
    }
    if settings.pool_size == 0 {
        return Err(PgError::Settings {
            reason: "the pool size is 0".into(),
        });
    }
    let encrypted = !matches!(settings.tls, PgTls::Disable);
    if encrypted
        && config
            .get_hosts()
            .iter()
            .any(|host| !matches!(host, Host::Tcp(_)))
    {
        return Err(PgError::Settings {
            reason: "TLS (sslmode require or verify-full) needs a TCP host: PostgreSQL never \
                     encrypts a Unix socket"
                .into(),
        });
    }
    config.ssl_mode(if encrypted {
        SslMode::Require
    } else {
        SslMode::Disable
    });
    if let Some(password) = &settings.password {
        config.password(password.as_bytes());
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server gone without closing its connections (a cut network, a failed-over address)
    // is seen within seconds, not after the kernel's quarter of an hour.
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(10));
    config.keepalives_interval(Duration::from_secs(5));
    config.keepalives_retries(3);
    config.tcp_user_timeout(Duration::from_secs(20));
    if config.get_application_name().is_none() {
        config.application_name("emcf-gateway");
    }
    let target = describe_hosts(&config);
    let user = config.get_user().unwrap_or("(the system user)").to_owned();
    Ok(Resolved {
        config,
        target,
        user,
    })
}

/// The server's side of the keepalives above, set on each new session (each settable by any
/// user for its own sessions; sent as statements, not as the startup's `options`, which a
/// pooler such as PgBouncer refuses). A replica cut off in the middle of a transaction holds
/// a share lock on its lease row (`replicas.rs`) until the server ends its session, and every
/// fence of that replica waits for it: two hours of TCP keepalive with PostgreSQL's defaults,
/// about 25 s with these, 60 s for a session alive but silent in a transaction
/// (docs/design.md §12). A setting the server refuses is logged and left.
const SERVER_SESSION: [&str; 5] = [
    "SET idle_in_transaction_session_timeout = '60s'",
    "SET tcp_keepalives_idle = 10",
    "SET tcp_keepalives_interval = 5",
    "SET tcp_keepalives_count = 3",
    "SET tcp_user_timeout = 20000",
];

/// For a transaction that may rightly stay silent for long (the client works between two
/// statements: `log verify`, `store import`).
pub(super) const UNBOUNDED_SILENCE: &str = "SET LOCAL idle_in_transaction_session_timeout = 0";

/// Sets [`SERVER_SESSION`] on a new session.
async fn set_session(client: &tokio_postgres::Client) {
    for setting in SERVER_SESSION {
        if let Err(error) = client.batch_execute(setting).await {
            tracing::warn!(%error, setting, "a PostgreSQL session setting was refused; left at the server's value");
        }
    }
}

/// `host:port` for each host, a socket's path for a directory, comma-separated.
fn describe_hosts(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => dir.join(format!(".s.PGSQL.{port}")).display().to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The TLS connector: unused for `Disable` (tokio-postgres never asks for TLS then), any
/// certificate for `Require` (libpq's `sslmode=require`: encrypted, not authenticated), the CA
/// file's certificates and the host's name for `VerifyFull`.
async fn tls_connector(tls: &PgTls, target: &str) -> Result<MakeRustlsConnect, PgError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| PgError::Tls {
            target: target.to_owned(),
            reason: e.to_string(),
        })?;
    let config = match tls {
        PgTls::Disable => builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        PgTls::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate::new(&provider)))
            .with_no_client_auth(),
        PgTls::VerifyFull { ca_file } => {
            let roots = read_roots(ca_file).await?;
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

/// The certificates of a PEM file, as the only roots trusted.
async fn read_roots(ca_file: &std::path::Path) -> Result<rustls::RootCertStore, PgError> {
    let refused = |reason: String| PgError::Tls {
        target: format!("ca_file {}", ca_file.display()),
        reason,
    };
    let pem = tokio::fs::read(ca_file)
        .await
        .map_err(|e| refused(format!("cannot be read: {e}")))?;
    let mut roots = rustls::RootCertStore::empty();
    let mut reader = std::io::BufReader::new(pem.as_slice());
    for cert in rustls_pemfile::certs(&mut reader) {
        let cert = cert.map_err(|e| refused(format!("not PEM: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| refused(format!("a certificate is refused: {e}")))?;
    }
    if roots.is_empty() {
        return Err(refused("holds no PEM certificate".into()));
    }
    Ok(roots)
}

/// `sslmode=require`: the server's certificate is taken as it is, but the handshake's
/// signatures are still checked against it (the session is encrypted to whoever holds its key).
#[derive(Debug)]
struct AnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyCertificate {
    fn new(provider: &CryptoProvider) -> AnyCertificate {
        AnyCertificate {
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A failure to get a connection, typed.
fn pool_error(error: PoolError, target: &str, user: &str) -> PgError {
    match error {
        PoolError::Backend(e) => connect_error(&e, target, user),
        PoolError::Timeout(_) => PgError::Unreachable {
            target: target.to_owned(),
            reason: format!(
                "no connection within {} s (the server is slow, or every connection of the \
                 pool is busy)",
                POOL_TIMEOUT.as_secs()
            ),
        },
        other => PgError::Unreachable {
            target: target.to_owned(),
            reason: chain(&other),
        },
    }
}

/// A connection that could not be opened, typed. tokio-postgres keeps its error kinds private:
/// the server's SQLSTATE, a rustls error among the causes, and the client's fixed wording
/// ("error performing TLS handshake", "authentication error", "password missing") tell them
/// apart; the tests on a real server hold each case to it.
fn connect_error(error: &tokio_postgres::Error, target: &str, user: &str) -> PgError {
    let reason = chain(error);
    let said = error.to_string();
    if let Some(db) = error.as_db_error() {
        let code = db.code().code();
        if code.starts_with("28") {
            return PgError::AuthRefused {
                target: target.to_owned(),
                user: user.to_owned(),
                reason,
            };
        }
        if server_going_away(code) {
            return PgError::Unreachable {
                target: target.to_owned(),
                reason,
            };
        }
        return PgError::Query {
            doing: format!("connecting to {target}"),
            reason,
        };
    }
    if has_tls_error(error) || said == "error performing TLS handshake" {
        return PgError::Tls {
            target: target.to_owned(),
            reason,
        };
    }
    if said == "authentication error" {
        return PgError::AuthRefused {
            target: target.to_owned(),
            user: user.to_owned(),
            reason,
        };
    }
    // The server asked for a password and the settings have none.
    if error
        .source()
        .is_some_and(|cause| cause.to_string() == "password missing")
    {
        return PgError::AuthRefused {
            target: target.to_owned(),
            user: user.to_owned(),
            reason: "the server asks for a password and none is configured (password_file)".into(),
        };
    }
    if error.is_closed() || has_io_error(error) || said == "error connecting to server" {
        return PgError::Unreachable {
            target: target.to_owned(),
            reason,
        };
    }
    PgError::Query {
        doing: format!("connecting to {target}"),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str, tls: PgTls) -> PgSettings {
        PgSettings {
            url: url.into(),
            password: Some("s3cret".into()),
            tls,
            pool_size: 4,
        }
    }

    fn refused(settings: &PgSettings) -> String {
        match resolve(settings) {
            Err(PgError::Settings { reason }) => reason,
            Err(other) => panic!("not a settings error: {other}"),
            Ok(_) => panic!("accepted: {settings:?}"),
        }
    }

    #[test]
    fn a_url_resolves_to_its_hosts_with_the_password_and_tls_mode() {
        let tcp = resolve(&settings(
            "postgresql://emcf@db.example:5433/emcf",
            PgTls::Require,
        ))
        .expect("resolves");
        assert_eq!(tcp.target, "db.example:5433");
        assert_eq!(tcp.user, "emcf");
        assert_eq!(tcp.config.get_password(), Some(&b"s3cret"[..]));
        assert_eq!(tcp.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(tcp.config.get_connect_timeout(), Some(&CONNECT_TIMEOUT));

        let socket = resolve(&settings(
            "postgresql://emcf@/emcf?host=/run/postgresql",
            PgTls::Disable,
        ))
        .expect("resolves");
        assert_eq!(socket.target, "/run/postgresql/.s.PGSQL.5432");
        assert_eq!(socket.config.get_ssl_mode(), SslMode::Disable);
    }

    #[test]
    fn unusable_settings_are_refused_saying_why() {
        let with_password = refused(&settings(
            "postgresql://emcf:hunter2@db.example/emcf",
            PgTls::Disable,
        ));
        assert!(with_password.contains("password_file"), "{with_password}");
        assert!(!with_password.contains("hunter2"), "{with_password}");
        assert!(refused(&settings("postgresql:///emcf", PgTls::Disable)).contains("no host"));
        assert!(refused(&settings(
            "postgresql://emcf@/emcf?host=/run/postgresql",
            PgTls::Require
        ))
        .contains("Unix socket"));
        assert!(refused(&settings("mysql://nope", PgTls::Disable)).contains("does not parse"));
        let mut empty = settings("postgresql://emcf@db.example/emcf", PgTls::Disable);
        empty.pool_size = 0;
        assert!(refused(&empty).contains("pool size"));
    }

    #[test]
    fn a_server_that_does_not_keep_commits_or_is_too_old_is_refused() {
        let judge = |num: &str, sc: &str, fsync: &str| {
            judge_server(num, format!("v{num}"), sc.to_owned(), fsync)
        };
        assert!(judge("150018", "on", "on").is_ok());
        assert!(judge("130000", "remote_apply", "on").is_ok());
        for weak in ["off", "local", "remote_write"] {
            assert!(
                matches!(judge("150018", weak, "on"), Err(PgError::SynchronousCommitOff { value }) if value == weak),
                "{weak} accepted"
            );
        }
        assert!(matches!(
            judge("150018", "on", "off"),
            Err(PgError::FsyncOff)
        ));
        assert!(matches!(
            judge("120022", "on", "on"),
            Err(PgError::ServerTooOld { needed: 13, .. })
        ));
    }
}
