//! The PostgreSQL store's foundations on a real server (issue 28): the pool connects over the
//! socket and over TCP with a password, with TLS `require` and `verify-full` against a CA the
//! test makes with `openssl`; it tells an unreachable server, a refused role and a TLS failure
//! apart, resumes when the server is back, and refuses a server that would acknowledge a
//! commit before it is on disk. Migrations are applied once, in one transaction (a failing one
//! leaves nothing), once only when two replicas start at once, and a newer database, an
//! edited migration or another tool's `schema_migrations` is refused changing nothing.
//!
//! Each test starts its own server (`tests/support/pg.rs`, about 1.5 s); without PostgreSQL
//! they are skipped outside CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emcf_gateway::store::postgres::{migrate, Migration, PgError, PgPool, PgSettings, PgTls};

use crate::common::needs;
use crate::pg::PgServer;

/// The application's role and database on each test server.
pub(super) const APP: &str = "emcf_app";
const APP_PASSWORD: &str = "app-secret-7";

pub(super) fn settings(url: String, password: Option<&str>, tls: PgTls) -> PgSettings {
    PgSettings {
        url,
        password: password.map(str::to_owned),
        tls,
        pool_size: 4,
    }
}

/// A server with the application's role and database.
pub(super) fn server(subject: &str) -> Option<PgServer> {
    let server = PgServer::init(subject)?;
    server.create_role_and_database(APP, APP_PASSWORD);
    Some(server)
}

/// The pool over the socket as the application's role.
pub(super) async fn app_pool(server: &PgServer) -> PgPool {
    PgPool::connect(&settings(server.socket_url(APP, APP), None, PgTls::Disable))
        .await
        .expect("connects over the socket")
}

/// The first column of the first row of `sql`, as text.
async fn scalar(pool: &PgPool, sql: &str) -> Result<String, PgError> {
    let client = pool.client().await?;
    let row = client
        .query_one(sql, &[])
        .await
        .map_err(|e| pool.query_error(sql, &e))?;
    Ok(row.get(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_over_the_socket_and_over_tcp_with_a_password() {
    let Some(server) = server("PostgreSQL connections") else {
        return;
    };
    let socket = app_pool(&server).await;
    assert_eq!(
        scalar(&socket, "SELECT current_user::text").await.unwrap(),
        APP
    );
    assert!(
        socket.server().version_num >= 130_000,
        "{:?}",
        socket.server()
    );
    assert_eq!(socket.server().synchronous_commit, "on");
    assert!(
        socket
            .target()
            .ends_with(&format!(".s.PGSQL.{}", server.port())),
        "{}",
        socket.target()
    );

    for host in ["127.0.0.1", "localhost"] {
        let tcp = PgPool::connect(&settings(
            server.tcp_url(APP, host, APP),
            Some(APP_PASSWORD),
            PgTls::Disable,
        ))
        .await
        .unwrap_or_else(|e| panic!("TCP to {host}: {e}"));
        let via = scalar(&tcp, "SELECT coalesce(inet_client_addr()::text, 'socket')")
            .await
            .unwrap();
        assert_eq!(via, "127.0.0.1/32", "{host}");
    }

    let wrong = PgPool::connect(&settings(
        server.tcp_url(APP, "127.0.0.1", APP),
        Some("not-the-password"),
        PgTls::Disable,
    ))
    .await
    .expect_err("a wrong password");
    assert!(matches!(wrong, PgError::AuthRefused { .. }), "{wrong}");
    let said = wrong.to_string();
    assert!(
        said.contains(APP) && !said.contains("not-the-password"),
        "{said}"
    );

    let none = PgPool::connect(&settings(
        server.tcp_url(APP, "127.0.0.1", APP),
        None,
        PgTls::Disable,
    ))
    .await
    .expect_err("no password");
    assert!(matches!(none, PgError::AuthRefused { .. }), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_told_apart_and_the_pool_resumes_when_it_is_back() {
    let Some(mut server) = server("PostgreSQL down and back") else {
        return;
    };
    let nobody = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refused = PgPool::connect(&settings(
        format!("postgresql://{APP}@127.0.0.1:{nobody}/{APP}"),
        Some(APP_PASSWORD),
        PgTls::Disable,
    ))
    .await
    .expect_err("nothing listens there");
    assert!(refused.is_unreachable(), "{refused}");
    assert!(
        refused.to_string().contains(&nobody.to_string()),
        "{refused}"
    );

    let pool = app_pool(&server).await;
    scalar(&pool, "SELECT 'up'").await.unwrap();
    server.stop_immediate();
    let down = scalar(&pool, "SELECT 'down'")
        .await
        .expect_err("the server is down");
    assert!(down.is_unreachable(), "{down}");
    let again = scalar(&pool, "SELECT 'still down'")
        .await
        .expect_err("the server is still down");
    assert!(again.is_unreachable(), "{again}");

    server.start();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match scalar(&pool, "SELECT 'back'").await {
            Ok(back) => {
                assert_eq!(back, "back");
                break;
            }
            Err(e) => {
                assert!(
                    e.is_unreachable(),
                    "only unreachable while it restarts: {e}"
                );
                assert!(Instant::now() < deadline, "the pool never came back: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }

    // A connection the server ends (as an administrator or a restart does) is unreachable too,
    // and the next one is new.
    let held = pool.client().await.unwrap();
    server.sql(
        "postgres",
        &format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '{APP}'"
        ),
    );
    let ended = held
        .query_one("SELECT 1", &[])
        .await
        .map_err(|e| pool.query_error("after the end", &e))
        .expect_err("its connection was ended");
    assert!(ended.is_unreachable(), "{ended}");
    drop(held);
    // The pool's other idle connections were ended too: each is dropped when it fails (or
    // when the pool sees it closed), and a caller's retry gets a new one.
    let mut tries = 0;
    let new = loop {
        match scalar(&pool, "SELECT 'new'").await {
            Ok(new) => break new,
            Err(e) => {
                assert!(e.is_unreachable(), "{e}");
                tries += 1;
                assert!(tries <= 4, "no new connection after {tries} tries: {e}");
            }
        }
    };
    assert_eq!(new, "new");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_acknowledges_before_the_disk_is_refused() {
    let Some(mut server) = server("PostgreSQL durability settings") else {
        return;
    };
    let url = server.socket_url(APP, APP);
    let connect = || async { PgPool::connect(&settings(url.clone(), None, PgTls::Disable)).await };
    // For the database, then for the role: what the session gets is what is judged.
    for weak in ["off", "local", "remote_write"] {
        server.sql(
            "postgres",
            &format!("ALTER DATABASE {APP} SET synchronous_commit = {weak}"),
        );
        let refused = connect().await.expect_err(weak);
        assert!(
            matches!(&refused, PgError::SynchronousCommitOff { value } if value == weak),
            "{weak}: {refused}"
        );
        assert!(
            refused.to_string().contains("synchronous_commit"),
            "{refused}"
        );
    }
    server.sql(
        "postgres",
        &format!("ALTER DATABASE {APP} RESET synchronous_commit"),
    );
    server.sql(
        "postgres",
        &format!("ALTER ROLE {APP} SET synchronous_commit = off"),
    );
    assert!(matches!(
        connect().await,
        Err(PgError::SynchronousCommitOff { .. })
    ));
    server.sql(
        "postgres",
        &format!("ALTER ROLE {APP} SET synchronous_commit = remote_apply"),
    );
    let stronger = connect().await.expect("remote_apply keeps commits");
    assert_eq!(stronger.server().synchronous_commit, "remote_apply");
    server.sql(
        "postgres",
        &format!("ALTER ROLE {APP} RESET synchronous_commit"),
    );

    // The whole server, as a provider would have set it.
    server.configure("synchronous_commit = off");
    server.restart();
    let refused = connect().await.expect_err("server-wide off");
    assert!(
        matches!(&refused, PgError::SynchronousCommitOff { value } if value == "off"),
        "{refused}"
    );
    server.configure("synchronous_commit = on\nfsync = off");
    server.restart();
    assert!(matches!(connect().await, Err(PgError::FsyncOff)));
}

/// A CA, a server certificate it signs for localhost and 127.0.0.1, and another CA.
struct TestCa {
    ca: PathBuf,
    other_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

/// Runs openssl with `args` in `dir`; whether it succeeded.
fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes the CAs and the server's certificate (EC P-256) in `dir`; `None` without openssl.
fn test_ca(dir: &Path, subject: &str) -> Option<TestCa> {
    if !needs::runs("openssl", &["version"]) {
        needs::missing(
            subject,
            "openssl is not installed",
            "apt-get install openssl; .ci/run does",
        );
        return None;
    }
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for (name, cn) in [("ca", "emcf test CA"), ("other-ca", "someone else's CA")] {
        let subj = format!("/CN={cn}");
        let (key, crt) = (format!("{name}.key"), format!("{name}.crt"));
        let mut args = vec!["req", "-x509", "-days", "2", "-subj", &subj];
        args.extend(ec);
        args.extend([
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            &key,
            "-out",
            &crt,
        ]);
        assert!(openssl(dir, &args), "openssl made no CA");
    }
    let mut request = vec!["req", "-subj", "/CN=localhost", "-keyout", "server.key"];
    request.extend(ec);
    request.extend(["-out", "server.csr"]);
    assert!(openssl(dir, &request), "openssl made no request");
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n\
         basicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    assert!(
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-set_serial",
                "2",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        ),
        "openssl signed nothing"
    );
    Some(TestCa {
        ca: dir.join("ca.crt"),
        other_ca: dir.join("other-ca.crt"),
        cert: dir.join("server.crt"),
        key: dir.join("server.key"),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_require_encrypts_and_verify_full_checks_the_ca_and_the_host() {
    let subject = "PostgreSQL over TLS";
    let Some(mut server) = server(subject) else {
        return;
    };
    let files = tempfile::tempdir().unwrap();
    let Some(ca) = test_ca(files.path(), subject) else {
        return;
    };
    let port = server.port();
    let tcp = |host: &str, tls: PgTls| {
        settings(
            format!("postgresql://{APP}@{host}:{port}/{APP}"),
            Some(APP_PASSWORD),
            tls,
        )
    };

    // Before TLS is on: require is refused as a TLS failure, never sent in clear.
    let clear = PgPool::connect(&tcp("127.0.0.1", PgTls::Require))
        .await
        .expect_err("the server has no TLS yet");
    assert!(matches!(clear, PgError::Tls { .. }), "{clear}");

    let cert = server.give_file(&ca.cert, "server.crt");
    let key = server.give_file(&ca.key, "server.key");
    server.configure(&format!(
        "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n\
         listen_addresses = '127.0.0.1,127.0.0.2'",
        cert.display(),
        key.display()
    ));
    server.restart();
    let encrypted = "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

    let require = PgPool::connect(&tcp("127.0.0.1", PgTls::Require))
        .await
        .expect("require: any certificate");
    assert_eq!(scalar(&require, encrypted).await.unwrap(), "true");
    let plain = PgPool::connect(&tcp("127.0.0.1", PgTls::Disable))
        .await
        .expect("disable");
    assert_eq!(scalar(&plain, encrypted).await.unwrap(), "false");

    let verified = |ca_file: &Path| PgTls::VerifyFull {
        ca_file: ca_file.to_path_buf(),
    };
    for host in ["127.0.0.1", "localhost"] {
        let full = PgPool::connect(&tcp(host, verified(&ca.ca)))
            .await
            .unwrap_or_else(|e| panic!("verify-full to {host}: {e}"));
        assert_eq!(scalar(&full, encrypted).await.unwrap(), "true", "{host}");
    }
    // Require takes a certificate of any CA; verify-full does not.
    let stranger = PgPool::connect(&tcp("127.0.0.1", verified(&ca.other_ca)))
        .await
        .expect_err("a certificate of another CA");
    assert!(matches!(stranger, PgError::Tls { .. }), "{stranger}");
    // The certificate names localhost and 127.0.0.1, not 127.0.0.2.
    let other_name = PgPool::connect(&tcp("127.0.0.2", verified(&ca.ca)))
        .await
        .expect_err("a host the certificate does not name");
    assert!(matches!(other_name, PgError::Tls { .. }), "{other_name}");
    let require_any_name = PgPool::connect(&tcp("127.0.0.2", PgTls::Require)).await;
    assert!(require_any_name.is_ok(), "require checks no name");

    let missing = files.path().join("no-such-ca.crt");
    let no_file = PgPool::connect(&tcp("127.0.0.1", verified(&missing)))
        .await
        .expect_err("a CA file that does not exist");
    assert!(
        matches!(&no_file, PgError::Tls { target, .. } if target.contains("no-such-ca.crt")),
        "{no_file}"
    );
    std::fs::write(files.path().join("empty.crt"), "not a certificate\n").unwrap();
    let empty = PgPool::connect(&tcp("127.0.0.1", verified(&files.path().join("empty.crt"))))
        .await
        .expect_err("a CA file without a certificate");
    assert!(matches!(empty, PgError::Tls { .. }), "{empty}");
}

/// Migrations of the tests: each one fails if it runs twice.
const FIRST: Migration = Migration {
    version: 1,
    name: "ledger",
    sql: "CREATE TABLE ledger (n bigint PRIMARY KEY, what text NOT NULL);
          INSERT INTO ledger VALUES (1, 'first');",
};
const SECOND: Migration = Migration {
    version: 2,
    name: "ledger_second",
    sql: "INSERT INTO ledger VALUES (2, 'second');",
};
const THIRD: Migration = Migration {
    version: 3,
    name: "ledger_note",
    sql: "ALTER TABLE ledger ADD COLUMN note text;",
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_applied_once_in_order_and_recorded() {
    let Some(server) = server("PostgreSQL migrations") else {
        return;
    };
    let pool = app_pool(&server).await;

    let first = migrate(&pool, &[FIRST, SECOND]).await.unwrap();
    assert_eq!(first.applied, [1, 2]);
    assert_eq!(first.version, 2);
    let recorded = server.sql(
        APP,
        "SELECT string_agg(version || ':' || name || ':' || checksum, ',' ORDER BY version) \
         FROM schema_migrations WHERE applied_at IS NOT NULL",
    );
    assert_eq!(
        recorded,
        format!(
            "1:ledger:{},2:ledger_second:{}",
            FIRST.checksum(),
            SECOND.checksum()
        )
    );

    // A second start changes nothing.
    let second = migrate(&pool, &[FIRST, SECOND]).await.unwrap();
    assert!(second.applied.is_empty(), "{second:?}");
    assert_eq!(second.version, 2);
    assert_eq!(server.sql(APP, "SELECT count(*) FROM ledger"), "2");

    // A newer binary applies only what is new.
    let third = migrate(&pool, &[FIRST, SECOND, THIRD]).await.unwrap();
    assert_eq!(third.applied, [3]);
    assert_eq!(
        server.sql(APP, "SELECT count(*) FROM schema_migrations"),
        "3"
    );
    assert_eq!(server.sql(APP, "SELECT count(*) FROM ledger"), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_migration_leaves_the_database_as_it_was() {
    let Some(server) = server("PostgreSQL migration rollback") else {
        return;
    };
    let pool = app_pool(&server).await;
    let broken = Migration {
        version: 2,
        name: "broken",
        sql: "INSERT INTO ledger VALUES (2, 'second'); INSERT INTO no_such_table VALUES (1);",
    };
    let failed = migrate(&pool, &[FIRST, broken])
        .await
        .expect_err("migration 2 fails");
    assert!(
        matches!(&failed, PgError::Query { doing, .. } if doing.contains("migration 2 (broken)")),
        "{failed}"
    );
    assert!(failed.to_string().contains("no_such_table"), "{failed}");
    // Migration 1 and the bookkeeping went with it: one transaction.
    assert_eq!(
        server.sql(
            APP,
            "SELECT count(*) FROM pg_tables WHERE tablename IN ('ledger', 'schema_migrations')"
        ),
        "0"
    );
    let fixed = migrate(&pool, &[FIRST, SECOND]).await.unwrap();
    assert_eq!(fixed.applied, [1, 2]);

    // A schema_migrations of another tool (golang-migrate's columns): a clear error, no panic,
    // nothing applied.
    server.sql(
        "postgres",
        &format!("CREATE DATABASE foreign_tool OWNER {APP}"),
    );
    server.sql(
        "foreign_tool",
        &format!(
            "CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL);
             INSERT INTO schema_migrations VALUES (7, false);
             ALTER TABLE schema_migrations OWNER TO {APP};"
        ),
    );
    let foreign = PgPool::connect(&settings(
        server.socket_url(APP, "foreign_tool"),
        None,
        PgTls::Disable,
    ))
    .await
    .unwrap();
    let refused = migrate(&foreign, &[FIRST])
        .await
        .expect_err("another tool's table");
    assert!(
        matches!(&refused, PgError::Query { doing, .. } if doing.contains("schema_migrations")),
        "{refused}"
    );
    assert_eq!(
        server.sql(
            "foreign_tool",
            "SELECT count(*) FROM pg_tables WHERE tablename = 'ledger'"
        ),
        "0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_starting_at_once_migrate_once() {
    let Some(server) = server("PostgreSQL concurrent migrations") else {
        return;
    };
    // Each replica has its own pool; the first migration takes a while, so that both are
    // inside it together unless the lock holds the second back.
    let slow = Migration {
        version: 1,
        name: "slow_ledger",
        sql: "CREATE TABLE ledger (n bigint PRIMARY KEY, what text NOT NULL);
              SELECT pg_sleep(0.5);
              INSERT INTO ledger VALUES (1, 'first');",
    };
    let (a, b) = (app_pool(&server).await, app_pool(&server).await);
    let list = [slow, SECOND];
    let (one, other) = tokio::join!(migrate(&a, &list), migrate(&b, &list));
    let (one, other) = (one.expect("replica a"), other.expect("replica b"));
    let mut applied = [one.applied.clone(), other.applied.clone()];
    applied.sort();
    assert_eq!(applied, [vec![], vec![1, 2]], "{one:?} {other:?}");
    assert_eq!(one.version, 2);
    assert_eq!(other.version, 2);
    assert_eq!(
        server.sql(APP, "SELECT count(*) FROM schema_migrations"),
        "2"
    );
    assert_eq!(server.sql(APP, "SELECT count(*) FROM ledger"), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_database_or_an_edited_migration_is_refused_changing_nothing() {
    let Some(server) = server("PostgreSQL schema versions") else {
        return;
    };
    let pool = app_pool(&server).await;
    migrate(&pool, &[FIRST, SECOND]).await.unwrap();
    let before = server.sql(
        APP,
        "SELECT string_agg(version::text, ',') FROM schema_migrations",
    );

    let older = migrate(&pool, &[FIRST]).await.expect_err("an older binary");
    assert!(
        matches!(
            older,
            PgError::NewerSchema {
                database: 2,
                binary: 1
            }
        ),
        "{older}"
    );
    let said = older.to_string();
    assert!(
        said.contains("version 2") && said.contains("binary's 1"),
        "{said}"
    );
    let oldest = migrate(&pool, &[]).await.expect_err("a binary of none");
    assert!(
        matches!(
            oldest,
            PgError::NewerSchema {
                database: 2,
                binary: 0
            }
        ),
        "{oldest}"
    );

    let edited = Migration {
        sql: "INSERT INTO ledger VALUES (2, 'second, edited');",
        ..SECOND
    };
    let changed = migrate(&pool, &[FIRST, edited, THIRD])
        .await
        .expect_err("an applied migration edited");
    assert!(
        matches!(&changed, PgError::ChangedMigration { version: 2, name, .. } if name == "ledger_second"),
        "{changed}"
    );
    // Refused before migration 3 ran.
    assert_eq!(
        server.sql(
            APP,
            "SELECT string_agg(version::text, ',') FROM schema_migrations"
        ),
        before
    );
    assert_eq!(
        server.sql(
            APP,
            "SELECT count(*) FROM information_schema.columns \
             WHERE table_name = 'ledger' AND column_name = 'note'"
        ),
        "0"
    );
}
