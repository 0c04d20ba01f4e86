//! Organizations, API keys and dashboard tokens on PostgreSQL
//! (`src/store/postgres/access.rs`, issue 28) on a real server, against the embedded store:
//! the same writes made to both, every read compared (`assert_eq!`), every refusal with the
//! same meaning; lists in the same order also on a database whose collation is not the
//! bytes' order. Two writers at once: one id issued once, one change one event. The schema
//! keeps a key and a token as issued, whoever asks.

use chrono::{DateTime, Utc};
use emcf_gateway::model::{Environment, KeyRecord, Organization, Plan};
use emcf_gateway::store::postgres::{migrate, PgRegister, Refusal, Written, MIGRATIONS};
use emcf_gateway::store::{DashboardToken, Store, StoreError};
use rust_decimal::Decimal;

use super::postgres::{app_pool, server, settings};
use crate::pg::SUPERUSER;
use emcf_gateway::store::postgres::{PgPool, PgTls};

/// An instant with nanoseconds: what `Utc::now()` gives, which both stores must keep whole.
fn at(second: u32) -> DateTime<Utc> {
    format!("2026-03-01T10:00:{second:02}.123456789Z")
        .parse()
        .unwrap()
}

fn organization(id: &str) -> Organization {
    Organization {
        id: id.into(),
        name: format!("{id} SARL"),
        nif: format!("NIF-{id}"),
        isf: format!("ISF-{id}"),
        plan: Plan::Start,
        quota_override: Some(1200),
        device: "box1".into(),
        admin_emails: vec![format!("admin@{id}.example")],
        max_invoice_total: Some(Decimal::new(1_000_050, 2)),
    }
}

fn key(id: &str, org: &str, environment: Environment, second: u32) -> KeyRecord {
    KeyRecord {
        id: id.into(),
        org: org.into(),
        environment,
        secret_sha256: "ab".repeat(32),
        label: format!("till of {org}"),
        enabled: true,
        created_at: at(second),
    }
}

fn token(id: &str, org: &str, second: u32) -> DashboardToken {
    DashboardToken {
        id: id.into(),
        org: org.into(),
        token_sha256: "cd".repeat(32),
        label: "owner".into(),
        created_at: at(second),
        revoked: false,
    }
}

/// Whether the embedded store's refusal and PostgreSQL's say the same
/// (`src/store/postgres/access.rs` names each).
fn same_meaning(embedded: &StoreError, pg: &Refusal) -> bool {
    match (embedded, pg) {
        (StoreError::Conflict(_), Refusal::IdTaken) => true,
        (StoreError::UnknownOrganization(_), Refusal::UnknownOrganization) => true,
        (StoreError::UnknownKey(_), Refusal::UnknownKey) => true,
        (StoreError::Invalid(said), Refusal::UnknownDashboardToken) => {
            said.contains("unknown dashboard token")
        }
        (StoreError::Invalid(said), Refusal::Invalid) => !said.contains("unknown"),
        _ => false,
    }
}

/// The same write's outcome on both stores: both done with the same value, or both refused
/// with the same meaning. Returns PostgreSQL's.
#[track_caller]
fn agree<T: PartialEq + std::fmt::Debug>(
    what: &str,
    embedded: Result<T, StoreError>,
    pg: Written<T>,
) -> Result<T, Refusal> {
    let pg = pg.unwrap_or_else(|e| panic!("{what}: PostgreSQL failed: {e}"));
    match (embedded, &pg) {
        (Ok(one), Ok(other)) => assert_eq!(&one, other, "{what}"),
        (Err(one), Err(other)) => assert!(same_meaning(&one, other), "{what}: {one} / {other:?}"),
        (one, _) => panic!("{what}: embedded {one:?}, PostgreSQL {pg:?}"),
    }
    pg
}

/// A migrated register on `pool`.
async fn register(pool: PgPool) -> PgRegister {
    migrate(&pool, MIGRATIONS).await.unwrap();
    PgRegister::new(pool)
}

/// Every read of the embedded store and of PostgreSQL, compared.
async fn same_reads(store: &Store, pg: &PgRegister, orgs: &[&str], keys: &[&str], tokens: &[&str]) {
    assert_eq!(
        store.organizations().unwrap(),
        pg.organizations().await.unwrap()
    );
    for id in orgs {
        assert_eq!(
            store.organization(id).unwrap(),
            pg.organization(id).await.unwrap(),
            "organization {id}"
        );
        assert_eq!(
            store.keys_of(id).unwrap(),
            pg.keys_of(id).await.unwrap(),
            "keys of {id}"
        );
        assert_eq!(
            store.dashboard_tokens_of(id).unwrap(),
            pg.dashboard_tokens_of(id).await.unwrap(),
            "dashboard tokens of {id}"
        );
    }
    for id in keys {
        assert_eq!(
            store.key(id).unwrap(),
            pg.key(id).await.unwrap(),
            "key {id}"
        );
    }
    for id in tokens {
        assert_eq!(
            store.dashboard_token(id).unwrap(),
            pg.dashboard_token(id).await.unwrap(),
            "dashboard token {id}"
        );
    }
}

/// `pg`'s events, as (kind, body) in order.
async fn events(pg: &PgPool) -> Vec<(String, String)> {
    let client = pg.client().await.unwrap();
    client
        .query("SELECT kind, body::text FROM events ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organizations_keys_and_tokens_answer_as_on_the_embedded_store() {
    let Some(server) = server("PostgreSQL organizations, keys and tokens") else {
        return;
    };
    // A provider's database sorts text by its language, not by bytes ("Zeta" after "acme",
    // "a-b" and "a_b" by their letters): the lists must still come in the embedded order.
    server.sql(
        "postgres",
        "CREATE DATABASE emcf_icu LOCALE_PROVIDER icu ICU_LOCALE 'und' TEMPLATE template0",
    );
    let pool = PgPool::connect(&settings(
        server.socket_url(SUPERUSER, "emcf_icu"),
        None,
        PgTls::Disable,
    ))
    .await
    .expect("connects to the ICU database");
    let pg = register(pool.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();

    let orgs = [
        "demo", "acme", "Zeta", "a_b", "a-b", "été", "nobody", "de\0mo",
    ];
    for id in &orgs[..6] {
        store.save_organization(organization(id)).unwrap();
        pg.save_organization(&organization(id), at(0))
            .await
            .unwrap();
    }
    let mut renamed = organization("demo");
    renamed.name = "Demo, renamed".into();
    store.save_organization(renamed.clone()).unwrap();
    pg.save_organization(&renamed, at(1)).await.unwrap();

    let issued = [
        key("live-demo", "demo", Environment::Production, 2),
        key("test-demo", "demo", Environment::Sandbox, 3),
        key("Live-2", "demo", Environment::Production, 4),
        key("a-key", "demo", Environment::Sandbox, 5),
        key("live-Zeta", "Zeta", Environment::Production, 6),
        key("live-a_b", "a_b", Environment::Production, 7),
        KeyRecord {
            enabled: false,
            ..key("issued-disabled", "été", Environment::Sandbox, 8)
        },
    ];
    for k in &issued {
        let outcome = agree(
            &format!("issuing {}", k.id),
            store.issue_key(k.clone()),
            pg.issue_key(k.clone()).await,
        );
        assert_eq!(outcome, Ok(()), "{}", k.id);
    }
    let refused = [
        (
            key("live-demo", "acme", Environment::Production, 9),
            Refusal::IdTaken,
        ),
        (
            key("live-demo", "nobody", Environment::Production, 9),
            Refusal::IdTaken,
        ),
        (
            key("live-x", "nobody", Environment::Production, 9),
            Refusal::UnknownOrganization,
        ),
        (
            key("", "demo", Environment::Production, 9),
            Refusal::Invalid,
        ),
    ];
    for (k, why) in refused {
        let outcome = agree(
            &format!("issuing {:?} to {}", k.id, k.org),
            store.issue_key(k.clone()),
            pg.issue_key(k.clone()).await,
        );
        assert_eq!(outcome, Err(why), "{k:?}");
    }

    let changes = [
        ("live-demo", false, Ok(false)),
        ("live-demo", false, Ok(false)),
        ("live-demo", true, Ok(true)),
        ("live-Zeta", true, Ok(true)),
        ("issued-disabled", true, Ok(true)),
        ("test-demo", false, Ok(false)),
        ("no-such-key", false, Err(Refusal::UnknownKey)),
        ("live\0demo", false, Err(Refusal::UnknownKey)),
    ];
    for (id, enabled, now) in changes {
        let outcome = agree(
            &format!("setting {id} enabled {enabled}"),
            store.set_key_enabled(id, enabled),
            pg.set_key_enabled(id, enabled).await,
        );
        assert_eq!(outcome.map(|k| k.enabled), now, "{id} {enabled}");
    }

    let tokens = [
        token("t-demo", "demo", 10),
        token("T-demo", "demo", 11),
        token("t-acme", "acme", 12),
        token("t_été", "été", 13),
    ];
    for t in &tokens {
        let outcome = agree(
            &format!("issuing token {}", t.id),
            store.issue_dashboard_token(t.clone()),
            pg.issue_dashboard_token(t.clone()).await,
        );
        assert_eq!(outcome, Ok(()), "{}", t.id);
    }
    let revoked_at_birth = DashboardToken {
        revoked: true,
        ..token("t-born-revoked", "demo", 14)
    };
    let refused = [
        (token("t-demo", "acme", 14), Refusal::IdTaken),
        (token("t-x", "nobody", 14), Refusal::UnknownOrganization),
        (token("", "demo", 14), Refusal::Invalid),
        (revoked_at_birth, Refusal::Invalid),
    ];
    for (t, why) in refused {
        let outcome = agree(
            &format!("issuing token {:?} to {}", t.id, t.org),
            store.issue_dashboard_token(t.clone()),
            pg.issue_dashboard_token(t.clone()).await,
        );
        assert_eq!(outcome, Err(why), "{t:?}");
    }
    for (id, now) in [
        ("t-demo", Ok(true)),
        ("t-demo", Ok(true)),
        ("t-acme", Ok(true)),
        ("nope", Err(Refusal::UnknownDashboardToken)),
        ("t\0demo", Err(Refusal::UnknownDashboardToken)),
    ] {
        let outcome = agree(
            &format!("revoking {id}"),
            store.revoke_dashboard_token(id),
            pg.revoke_dashboard_token(id).await,
        );
        assert_eq!(outcome.map(|t| t.revoked), now, "{id}");
    }

    let key_ids: Vec<&str> = issued.iter().map(|k| k.id.as_str()).collect();
    let key_ids = [&key_ids[..], &["live-x", "", "no-such-key", "live\0demo"]].concat();
    let token_ids = [
        "t\0demo",
        "t-demo",
        "T-demo",
        "t-acme",
        "t_été",
        "t-x",
        "t-born-revoked",
        "nope",
    ];
    same_reads(&store, &pg, &orgs, &key_ids, &token_ids).await;
    let listed: Vec<String> = pg
        .organizations()
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .collect();
    assert_eq!(
        listed,
        ["Zeta", "a-b", "a_b", "acme", "demo", "été"],
        "the bytes' order"
    );
    assert_eq!(
        pg.dashboard_token("t-demo")
            .await
            .unwrap()
            .unwrap()
            .created_at,
        at(10),
        "to the nanosecond"
    );

    // PostgreSQL's text holds no NUL: such a key or token is refused, writing nothing (the
    // embedded store refuses it only in an organization's id).
    let nul = KeyRecord {
        label: "till\0 1".into(),
        ..key("live-nul", "demo", Environment::Production, 15)
    };
    assert_eq!(pg.issue_key(nul).await.unwrap(), Err(Refusal::Invalid));
    let nul = DashboardToken {
        label: "own\0er".into(),
        ..token("t-nul", "demo", 15)
    };
    assert_eq!(
        pg.issue_dashboard_token(nul).await.unwrap(),
        Err(Refusal::Invalid)
    );

    // One event per change that happened, in the journal's words; none for a refusal or a
    // state set again.
    let events = events(&pool).await;
    assert_eq!(events.len() as u64, store.verify().unwrap().records);
    let kinds: Vec<&str> = events.iter().map(|(kind, _)| kind.as_str()).collect();
    let mut expected = vec!["organization_saved"; 7];
    expected.extend(["key_issued"; 7]);
    expected.extend(["key_disabled", "key_enabled", "key_enabled", "key_disabled"]);
    expected.extend(["dashboard_token_issued"; 4]);
    expected.extend(["dashboard_token_revoked"; 2]);
    assert_eq!(kinds, expected);
    let body = |kind: &str| -> serde_json::Value {
        let (_, body) = events.iter().find(|(k, _)| k == kind).unwrap();
        serde_json::from_str(body).unwrap()
    };
    assert_eq!(body("key_disabled"), serde_json::json!({"id": "live-demo"}));
    assert_eq!(
        body("dashboard_token_revoked"),
        serde_json::json!({"token_id": "t-demo"})
    );
    assert_eq!(
        body("dashboard_token_issued")["created_at"],
        "2026-03-01T10:00:10.123456789Z"
    );
    assert_eq!(
        serde_json::from_value::<KeyRecord>(body("key_issued")).unwrap(),
        issued[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_at_once_and_hands_on_the_tables_change_nothing_twice() {
    let Some(server) = server("PostgreSQL keys and tokens at once") else {
        return;
    };
    let pool = app_pool(&server).await;
    let pg = register(pool.clone()).await;
    for id in ["demo", "acme"] {
        pg.save_organization(&organization(id), at(0))
            .await
            .unwrap();
    }

    // The same id issued by two replicas at once: once.
    let (one, other) = tokio::join!(
        pg.issue_key(key("live-demo", "demo", Environment::Production, 1)),
        pg.issue_key(key("live-demo", "acme", Environment::Production, 2)),
    );
    let mut outcomes = vec![one.unwrap(), other.unwrap()];
    outcomes.sort_by_key(|o| o.is_err());
    assert_eq!(outcomes, [Ok(()), Err(Refusal::IdTaken)]);
    let (one, other) = tokio::join!(
        pg.issue_dashboard_token(token("t-demo", "demo", 3)),
        pg.issue_dashboard_token(token("t-demo", "acme", 4)),
    );
    let mut outcomes = vec![one.unwrap(), other.unwrap()];
    outcomes.sort_by_key(|o| o.is_err());
    assert_eq!(outcomes, [Ok(()), Err(Refusal::IdTaken)]);

    // The same change twice at once: both answer the key as it now is, one event.
    let (one, other) = tokio::join!(
        pg.set_key_enabled("live-demo", false),
        pg.set_key_enabled("live-demo", false),
    );
    for outcome in [one, other] {
        assert!(!outcome.unwrap().unwrap().enabled);
    }
    let (one, other) = tokio::join!(
        pg.revoke_dashboard_token("t-demo"),
        pg.revoke_dashboard_token("t-demo"),
    );
    for outcome in [one, other] {
        assert!(outcome.unwrap().unwrap().revoked);
    }
    let kinds: Vec<String> = events(&pool).await.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [
            "organization_saved",
            "organization_saved",
            "key_issued",
            "dashboard_token_issued",
            "key_disabled",
            "dashboard_token_revoked"
        ]
    );

    // Whoever has the role's hands on the tables: a key or a token stays as issued, a token
    // revoked stays revoked, nothing is deleted.
    let key_before = pg.key("live-demo").await.unwrap();
    let token_before = pg.dashboard_token("t-demo").await.unwrap();
    let client = pool.client().await.unwrap();
    for sql in [
        // To the other organization (either may have won the id above).
        "UPDATE api_keys SET org = CASE org WHEN 'demo' THEN 'acme' ELSE 'demo' END",
        "UPDATE dashboard_tokens SET org = CASE org WHEN 'demo' THEN 'acme' ELSE 'demo' END",
        "UPDATE api_keys SET record = jsonb_set(record, '{secret_sha256}', '\"00\"')",
        "UPDATE dashboard_tokens SET revoked = false",
        "UPDATE dashboard_tokens SET record = jsonb_set(record, '{label}', '\"x\"')",
        "DELETE FROM api_keys",
        "DELETE FROM dashboard_tokens",
        "DELETE FROM organizations WHERE id = 'acme'",
        "TRUNCATE api_keys",
        "TRUNCATE dashboard_tokens",
        "TRUNCATE organizations CASCADE",
    ] {
        let refused = client.batch_execute(sql).await;
        assert!(refused.is_err(), "{sql} was not refused");
    }
    assert_eq!(pg.key("live-demo").await.unwrap(), key_before);
    assert_eq!(pg.dashboard_token("t-demo").await.unwrap(), token_before);
    assert_eq!(pg.organizations().await.unwrap().len(), 2);
    // What the gateway itself changes still changes.
    assert!(
        pg.set_key_enabled("live-demo", true)
            .await
            .unwrap()
            .unwrap()
            .enabled
    );
    drop(server);
}
