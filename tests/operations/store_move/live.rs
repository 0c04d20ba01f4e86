//! A register written in PostgreSQL itself (never imported) exported to a journal: its
//! facts are written in the order of their times, its intents get the journal's numbers (the
//! export says how many changed), and everything else an auditor reads is the same.

use std::path::Path;

use chrono::Utc;
use emcf_gateway::model::{Environment, Intent};
use emcf_gateway::store::postgres::{migrate, PgPool, PgRegister, PgSettings, PgTls, MIGRATIONS};
use emcf_gateway::store::QuotaClaim;

use super::organization;
use super::{asked, config, key, ok, run, said, security, P, ROLE, S};
use crate::common::nbsp;
use crate::pg::PgServer;

/// An intent of `org` in `env` for `rn`, received now (a live register's facts follow the
/// clock).
fn live(org: &str, env: Environment, rn: &str) -> Intent {
    let mut intent = asked(org, env, rn, None);
    intent.received_at = Utc::now();
    intent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_register_written_in_postgresql_goes_to_a_journal_with_new_intent_ids() {
    let Some(server) = PgServer::init("store export of a live register") else {
        return;
    };
    server.create_role_and_database(ROLE, "move-secret-1");
    let url = server.socket_url(ROLE, ROLE);
    let settings = PgSettings {
        url: url.clone(),
        password: None,
        tls: PgTls::Disable,
        pool_size: 2,
    };
    let pool = PgPool::connect(&settings).await.unwrap();
    migrate(&pool, MIGRATIONS).await.unwrap();
    let pg = PgRegister::new(pool);
    pg.save_organization(&organization("demo"), Utc::now())
        .await
        .unwrap();
    for env in [P, S] {
        let id = format!("demo-{}", env.as_str());
        pg.issue_key(key(&id, "demo", env)).await.unwrap().unwrap();
    }
    let claim = Some(QuotaClaim {
        year: 2026,
        quota: 100,
    });
    let mut tc = 0;
    for (env, rn, abandon) in [(P, "FV-1", false), (P, "FV-2", true), (S, "T-1", false)] {
        let quota = (env == P).then_some(claim).flatten();
        let id = pg
            .record_intent(&live("demo", env, rn), quota)
            .await
            .unwrap()
            .unwrap();
        if abandon {
            pg.record_abandoned(id, "the box refused", Utc::now())
                .await
                .unwrap()
                .unwrap();
            continue;
        }
        tc += 1;
        pg.record_certified(id, 2026, Utc::now(), security(rn, tc), "finalize")
            .await
            .unwrap()
            .unwrap();
    }
    // FV-2 again, certified this time; then a key disabled, an invoice left in doubt.
    let id = pg
        .record_intent(&live("demo", P, "FV-2"), claim)
        .await
        .unwrap()
        .unwrap();
    pg.record_certified(id, 2026, Utc::now(), security("FV-2", 3), "finalize")
        .await
        .unwrap()
        .unwrap();
    pg.set_key_enabled("demo-sandbox", false)
        .await
        .unwrap()
        .unwrap();
    pg.record_intent(&live("demo", P, "FV-3"), claim)
        .await
        .unwrap()
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let hosted = config(
        dir.path(),
        "hosted.toml",
        &dir.path().join("hosted"),
        Some(&url),
    );
    let back_dir = dir.path().join("back");
    let to = back_dir.display().to_string();
    let exported = ok(&hosted, &["store", "export", "--to-state-dir", &to]);
    // Journal: the organization, two keys, four intents and their three entries and one
    // abandon, one more intent, the key disabled: 13 records; the intents' ids change.
    assert!(
        exported.starts_with(&nbsp(&format!(
            "Registre de PostgreSQL exporté dans {to} : 13 enregistrements dans le nouveau journal, vérifié, dont 3 entrées du registre."
        ))),
        "{exported}"
    );
    assert!(
        exported.contains(&nbsp("5 intention(s) écrite(s) directement dans PostgreSQL (pas par un import) ont reçu un autre numéro")),
        "{exported}"
    );
    let back = config(dir.path(), "back.toml", &back_dir, None);
    let verified = run(&back, &["log", "verify"]);
    assert!(verified.status.success(), "{}", said(&verified));
    for register in [&[][..], &["--sandbox"]] {
        let csv = |config: &Path| {
            let mut args = vec!["log", "export"];
            args.extend_from_slice(register);
            ok(config, &args)
        };
        assert_eq!(csv(&back), csv(&hosted), "{register:?}");
    }
    let keys = |config: &Path| ok(config, &["key", "list", "--org", "demo", "--json"]);
    assert_eq!(keys(&back), keys(&hosted));
}
