//! The roles of docs/postgresql.md on a real server: the database's owner migrates the schema,
//! the gateway runs as a service role granted `docs/postgresql-service-role.sql`. The service
//! role certifies through the store as the owner would, starts on a schema that is up to date
//! without changing it, is refused (saying to migrate as the owner) on one that is not, and
//! cannot change the register, the events or the schema behind the triggers' back: no
//! UPDATE, DELETE or TRUNCATE of them, no trigger disabled.

use emcf_gateway::model::{Environment, KeyRecord};
use emcf_gateway::store::postgres::{PgError, PgPool, PgStore, PgTls};
use emcf_gateway::store::Store;

use super::postgres::settings;
use super::postgres_register::{at, claim, intent, organization, security};
use crate::pg::PgServer;

const OWNER: &str = "emcf_owner";
const SERVICE: &str = "emcf";
const DB: &str = "emcf_owner";

/// The role's SQL error code for `sql`, or `None` when the server ran it.
async fn refusal(pool: &PgPool, sql: &str) -> Option<String> {
    let client = pool.client().await.expect("a connection");
    match client.batch_execute(sql).await {
        Ok(()) => None,
        Err(e) => Some(
            e.as_db_error()
                .map(|db| db.code().code().to_owned())
                .unwrap_or_else(|| e.to_string()),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_role_certifies_and_cannot_change_the_register() {
    let Some(server) = PgServer::init("the PostgreSQL roles") else {
        return;
    };
    // The owner's database (named after it), and the service's login role.
    server.create_role_and_database(OWNER, "owner-secret");
    server.sql("postgres", &format!("CREATE ROLE {SERVICE} LOGIN"));
    let owner = settings(server.socket_url(OWNER, DB), None, PgTls::Disable);
    let service = settings(server.socket_url(SERVICE, DB), None, PgTls::Disable);

    // Before the owner migrated: the service role may not create the schema, and says so.
    let early = PgStore::open(&service).await.expect_err("refused");
    assert!(
        matches!(&early, PgError::NotOwner { user, version: 1 } if user == SERVICE),
        "{early}"
    );
    assert!(
        early.to_string().contains("emcf-gateway store migrate"),
        "{early}"
    );
    assert_eq!(
        server.sql(
            DB,
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        "0",
        "nothing created"
    );

    // The owner migrates (the CLI, as docs/postgresql.md says), then grants the service role
    // what the documentation says. A second run changes nothing.
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let migrate = |url: &str| {
        let out = std::process::Command::new(crate::common::binary())
            .arg("--config")
            .arg(&config)
            .args(["store", "migrate"])
            .env("EMCF_CONFIG", "")
            .env("EMCF_LANG", "")
            .env("EMCF_STORE_URL", url)
            .output()
            .expect("the CLI runs");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };
    // `config check` as the service role says what is missing at each step.
    let check = |url: &str| {
        let out = std::process::Command::new(crate::common::binary())
            .arg("--config")
            .arg(&config)
            .args(["config", "check"])
            .env("EMCF_CONFIG", "")
            .env("EMCF_LANG", "")
            .env("EMCF_STATE_DIR", dir.path())
            .env("EMCF_STORE_URL", url)
            .output()
            .expect("the CLI runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = check(&server.socket_url(SERVICE, DB));
    assert!(
        said.contains("la base de données n'a pas encore de schéma"),
        "{said}"
    );
    let (code, said) = migrate(&server.socket_url(SERVICE, DB));
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("store migrate"), "{said}");
    let (code, said) = migrate(&server.socket_url(OWNER, DB));
    assert_eq!(code, Some(0), "{said}");
    assert!(said.starts_with("Schéma de la base mis à jour"), "{said}");
    let (code, said) = migrate(&server.socket_url(OWNER, DB));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.starts_with("Le schéma de la base est déjà à jour"),
        "{said}"
    );
    // Migrated, not granted yet: the service role cannot start, and both it and `config
    // check` name the grants to give.
    let refused = PgStore::open(&service).await.expect_err("no grants yet");
    assert!(
        matches!(&refused, PgError::NoGrants { user } if user == SERVICE),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("postgresql-service-role.sql"),
        "{refused}"
    );
    let said = check(&server.socket_url(SERVICE, DB));
    assert!(said.contains("postgresql-service-role.sql"), "{said}");
    let grants = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/postgresql-service-role.sql"),
    )
    .expect("the documented grants");
    server.sql(DB, &grants);
    server.sql(DB, &format!("GRANT emcf_service TO {SERVICE}"));
    let schema_before = server.sql(DB, "SELECT count(*) FROM schema_migrations");
    let said = check(&server.socket_url(SERVICE, DB));
    assert!(
        said.contains("le schéma est à la version 1, celle qu'attend ce programme"),
        "{said}"
    );

    // The service role starts on the migrated schema without changing it, and certifies.
    let (store, _) = PgStore::open(&service)
        .await
        .expect("the service role starts");
    let store = Store::Postgres(store);
    tokio::task::spawn_blocking(move || {
        store.save_organization(organization("demo")).expect("org");
        store
            .issue_key(KeyRecord {
                id: "demo-key".into(),
                org: "demo".into(),
                environment: Environment::Production,
                secret_sha256: "ab".repeat(32),
                label: "till".into(),
                enabled: true,
                created_at: at(),
            })
            .expect("key");
        store.set_key_enabled("demo-key", false).expect("disabled");
        store.set_key_enabled("demo-key", true).expect("enabled");
        let first = store
            .record_intent(intent("demo", "FV-1"), claim(5))
            .expect("intent");
        let entry = store
            .record_certified(first, 2026, at(), security("FV-1"), "finalize")
            .expect("certified");
        assert_eq!(entry.sequence, 1);
        let second = store
            .record_intent(intent("demo", "FV-2"), claim(5))
            .expect("intent");
        store
            .record_abandoned(second, "not finalized")
            .expect("abandoned");
        assert_eq!(store.quota_used("demo", 2026).expect("quota"), 1);
        let report = store.verify().expect("verified");
        assert_eq!((report.certified, report.chains), (1, Some(1)));
        // A replica's other writes: its lease, a place of the DGI's window taken, noted and
        // given back, a notice's e-mail recorded and forgotten again (the relay refused it).
        store.set_replica("S");
        let lease = emcf_gateway::store::postgres::lease_of("S");
        let ttl = std::time::Duration::from_secs(60);
        assert!(store.take_lease(&lease, "S", ttl).expect("lease").is_some());
        let place = store.take_window_slot("web", 10).expect("a place");
        let place = place.expect("free");
        assert!(store.note_window_uid(&place, "uid-1").expect("noted"));
        store.give_back_window_slot(&place).expect("given back");
        assert_eq!(store.give_back_window_slots().expect("given back"), 0);
        store
            .claim_mail("notice:role", "{}", None)
            .expect("recorded");
        assert!(store.release_mail("notice:role", None).expect("forgotten"));
    })
    .await
    .expect("the store's work");
    assert_eq!(
        server.sql(DB, "SELECT count(*) FROM schema_migrations"),
        schema_before
    );

    // Behind the triggers' back: refused by the privileges themselves (42501), or for want
    // of ownership (42501 too: "must be owner").
    let pool = PgPool::connect(&service)
        .await
        .expect("the service role's pool");
    for sql in [
        "UPDATE register_entries SET rn = 'FORGED'",
        "DELETE FROM register_entries",
        "TRUNCATE register_entries",
        "UPDATE events SET kind = 'forged'",
        "DELETE FROM events",
        "DELETE FROM credit_notes",
        // The heads and the quota, moved by the triggers only: no number skipped, no chain
        // started from a forged hash, no quota passed.
        "UPDATE register_heads SET next_sequence = next_sequence + 5",
        "INSERT INTO chain_heads VALUES ('forged', 41, sha256('forged'))",
        "UPDATE quota_use SET used = 0",
        "ALTER TABLE register_entries DISABLE TRIGGER ALL",
        "ALTER TABLE events DISABLE TRIGGER USER",
        "DROP TABLE register_entries",
        "CREATE TABLE forged (id int)",
    ] {
        assert_eq!(
            refusal(&pool, sql).await.as_deref(),
            Some("42501"),
            "{sql} must be refused to the service role"
        );
    }
    assert_eq!(
        server.sql(DB, "SELECT rn FROM register_entries"),
        "FV-1",
        "the register as certified"
    );
    // What the owner could do is not the service's: the same statement works for it (so
    // that the refusals above are the role's, not the statement's).
    let owner_pool = PgPool::connect(&owner).await.expect("the owner's pool");
    assert_eq!(
        refusal(&owner_pool, "CREATE TABLE owners_may (id int)").await,
        None
    );
}
