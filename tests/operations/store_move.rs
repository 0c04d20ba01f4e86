//! Moving a register between the stores through the real binary (`emcf-gateway store import`
//! and `store export`, issue 28): an embedded register with two organizations, keys (one
//! disabled), dashboard tokens (one revoked), sales and credit notes in both registers, an
//! abandoned intent whose rn was certified afterwards, an intent left open, and an
//! acknowledged fiscal anomaly, imported into a real PostgreSQL server. An auditor's export
//! (`log export`, CSV and JSON, each register) is then the same byte for byte from both
//! stores and `log verify` holds on PostgreSQL; an import into a database that holds
//! anything is refused changing nothing; the register exported back to a new state
//! directory (with what was written in PostgreSQL since) gives the same exports again and
//! its journal verifies. Beside it, `tests/operations/store_move/live.rs`: a register written
//! in PostgreSQL itself goes to a journal whose intents are numbered anew;
//! `tests/operations/store_move/releases.rs`, the register of every release imported.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::{DateTime, Duration, NaiveDate, Utc};
use emcf_gateway::model::{
    BoxCounters, FiscalAnomaly, FiscalAnomalyKind, Intent, KeyRecord, LostInvoice, SecurityElements,
};
use emcf_gateway::model::{Environment, Organization};
use emcf_gateway::store::{DashboardToken, EmbeddedStore};
use sha2::{Digest, Sha256};

use super::postgres_register::{intent, organization};
use crate::common::{binary, nbsp};
use crate::pg::PgServer;

mod live;
mod releases;

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;
const ROLE: &str = "emcf_move";

fn at(second: i64) -> DateTime<Utc> {
    "2026-11-27T08:00:00.123456789Z"
        .parse::<DateTime<Utc>>()
        .unwrap()
        + Duration::seconds(second)
}

fn key(id: &str, org: &str, environment: Environment) -> KeyRecord {
    KeyRecord {
        id: id.into(),
        org: org.into(),
        environment,
        secret_sha256: "cd".repeat(32),
        label: format!("till of {org}"),
        enabled: true,
        created_at: at(0),
    }
}

/// An intent of `org` in `env` for `rn`, keeping `form` (or its own sale) as its invoice.
fn asked(org: &str, env: Environment, rn: &str, form: Option<String>) -> Intent {
    let mut intent = intent(org, rn);
    intent.environment = env;
    intent.key_id = format!("{org}-{}", env.as_str());
    intent.received_at = at(1);
    if let Some(form) = form {
        intent.invoice_type = "FA".into();
        intent.request_digest = format!("{:x}", Sha256::digest(form.as_bytes()));
        intent.invoice = Some(form);
    }
    intent
}

/// A credit note's kept invoice naming `original` (a codeDEFDGI).
fn credit_form(rn: &str, original: &str) -> String {
    format!(
        "{{\"canon\":\"1\",\"curCode\":\"CDF\",\"items\":[{{\"name\":\"Retour\",\"price\":\"10\",\
         \"quantity\":\"1\",\"taxGroup\":\"B\",\"type\":\"BIE\"}}],\"mode\":\"ttc\",\
         \"reference\":\"{original}\",\"referenceType\":\"COR\",\"rn\":\"{rn}\",\"type\":\"FA\"}}"
    )
}

/// What box `NIM-1` answered for `rn`, its total counter at `tc`.
fn security(rn: &str, tc: u64) -> SecurityElements {
    SecurityElements {
        code_def: format!("DEF-{rn}-{tc}"),
        qr_code: format!("RDCDEF01;NIM-1;DEF-{rn}-{tc};A1234567B;20261127080000"),
        counters: format!("{tc}/{tc} FV"),
        nim: "NIM-1".into(),
        date_time: NaiveDate::from_ymd_opt(2026, 11, 27)
            .and_then(|d| d.and_hms_opt(8, 0, tc as u32 % 60))
            .unwrap(),
        date_time_as_sent: None,
    }
}

/// The embedded register of the scenario, in `dir`.
fn embedded_register(dir: &Path) {
    let store = EmbeddedStore::open(dir).unwrap();
    let mut acme: Organization = organization("acme");
    store.save_organization(organization("demo")).unwrap();
    store.save_organization(acme.clone()).unwrap();
    for (org, env) in [("demo", P), ("demo", S), ("acme", P)] {
        store
            .issue_key(key(&format!("{org}-{}", env.as_str()), org, env))
            .unwrap();
    }
    store.issue_key(key("acme-old", "acme", P)).unwrap();
    store.set_key_enabled("acme-old", false).unwrap();
    for (id, org) in [("tok-demo", "demo"), ("tok-acme", "acme")] {
        store
            .issue_dashboard_token(DashboardToken {
                id: id.into(),
                org: org.into(),
                token_sha256: "ef".repeat(32),
                label: format!("owner of {org}"),
                created_at: at(2),
                revoked: false,
            })
            .unwrap();
    }
    store.revoke_dashboard_token("tok-demo").unwrap();
    let mut tc = 0;
    let certify = |intent: Intent, tc: &mut u64| {
        let (env, rn) = (intent.environment, intent.rn.clone());
        let id = store.record_intent(intent).unwrap();
        *tc += 1;
        let counted = if env == P { *tc } else { 1 };
        store
            .record_certified(
                id,
                2026,
                at(10 + *tc as i64),
                security(&rn, counted),
                "finalize",
            )
            .unwrap()
    };
    let mut originals = Vec::new();
    for i in 1..=4 {
        let org = if i % 2 == 0 { "acme" } else { "demo" };
        originals.push(certify(asked(org, P, &format!("FV-{i}"), None), &mut tc));
    }
    certify(asked("demo", S, "T-1", None), &mut tc);
    certify(asked("demo", S, "T-2", None), &mut tc);
    // Credit notes: two of demo's FV-1, one of acme's FV-2.
    let code = |n: usize| originals[n].security.code_def.clone();
    for (org, rn, original) in [
        ("demo", "FA-1", code(0)),
        ("demo", "FA-2", code(0)),
        ("acme", "FA-3", code(1)),
    ] {
        certify(asked(org, P, rn, Some(credit_form(rn, &original))), &mut tc);
    }
    // An intent abandoned, its rn certified afterwards.
    let refused = store.record_intent(asked("acme", P, "FV-9", None)).unwrap();
    store.record_abandoned(refused, "the box refused").unwrap();
    certify(asked("acme", P, "FV-9", None), &mut tc);
    // acme's quota raised meanwhile.
    acme.quota_override = Some(5000);
    store.save_organization(acme).unwrap();
    // A register behind its box, acknowledged with the rn it lost.
    let known = BoxCounters {
        nim: "NIM-1".into(),
        nif: "A1234567B".into(),
        tc,
        sequence: 8,
        highest_tc: 0,
    };
    let (anomaly, _) = store
        .record_fiscal_anomaly(FiscalAnomaly {
            device: "web".into(),
            nim: "NIM-1".into(),
            kind: FiscalAnomalyKind::RegisterBehind,
            known: known.clone(),
            seen_nif: "A1234567B".into(),
            seen_tc: tc + 1,
            seen_in: "C1h".into(),
            missing: vec![tc + 1],
            last: None,
        })
        .unwrap();
    let lost = LostInvoice {
        number: tc + 1,
        rn: "FV-LOST".into(),
        code_def: String::new(),
        invoice_type: String::new(),
        at: None,
    };
    store
        .acknowledge_fiscal_anomaly(anomaly.id, "auditor", "lost in a crash", &[tc + 1], &[lost])
        .unwrap();
    certify(asked("demo", P, "FV-10", None), &mut tc);
    // An invoice in doubt: its intent still open.
    store
        .record_intent(asked("demo", P, "FV-11", None))
        .unwrap();
}

/// A configuration in `dir` named `name`: its state directory, and `[store]` if given.
fn config(dir: &Path, name: &str, state: &Path, store: Option<&str>) -> PathBuf {
    let path = dir.join(name);
    let mut text = format!("state_dir = {:?}\n", state.display().to_string());
    if let Some(url) = store {
        text.push_str(&format!("[store]\nurl = {url:?}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn run(config: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .arg("--config")
        .arg(config)
        .args(args)
        .env("EMCF_CONFIG", "")
        .env("EMCF_STATE_DIR", "")
        .env("EMCF_LANG", "")
        .env("EMCF_STORE_URL", "")
        .output()
        .expect("the CLI runs")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `args` and expects success; its stdout.
fn ok(config: &Path, args: &[&str]) -> String {
    let out = run(config, args);
    assert!(out.status.success(), "{args:?}: {}", said(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// Every export an auditor can ask of `config`'s register.
fn exports(config: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for format in ["csv", "json"] {
        for register in [&[][..], &["--sandbox"]] {
            for org in [&[][..], &["--org", "acme"]] {
                let mut args = vec!["log", "export", "--format", format];
                args.extend_from_slice(register);
                args.extend_from_slice(org);
                all.push(ok(config, &args));
            }
        }
    }
    all
}

/// Rows of the database's tables that an import writes.
fn rows(server: &PgServer) -> String {
    server.sql(
        ROLE,
        "SELECT (SELECT count(*) FROM organizations) || '/' || (SELECT count(*) FROM events) \
         || '/' || (SELECT count(*) FROM intents) || '/' || (SELECT count(*) FROM register_entries)",
    )
}

#[test]
fn a_register_moves_to_postgresql_and_back_with_the_same_exports() {
    let Some(server) = PgServer::init("store import and export") else {
        return;
    };
    server.create_role_and_database(ROLE, "move-secret-1");
    let dir = tempfile::tempdir().unwrap();
    let embedded_dir = dir.path().join("embedded");
    embedded_register(&embedded_dir);
    let url = server.socket_url(ROLE, ROLE);
    let embedded = config(dir.path(), "embedded.toml", &embedded_dir, None);
    let hosted = config(
        dir.path(),
        "hosted.toml",
        &dir.path().join("hosted"),
        Some(&url),
    );
    let before = exports(&embedded);
    assert!(before[0].contains("DEF-FA-1"), "{}", before[0]);

    let from = embedded_dir.display().to_string();
    // Refused before anything is written: a directory without a register, and a register
    // whose service runs (its lock held).
    let nowhere = dir.path().join("nowhere").display().to_string();
    let missing = run(&hosted, &["store", "import", "--from-state-dir", &nowhere]);
    assert_eq!(missing.status.code(), Some(1), "{}", said(&missing));
    assert!(
        said(&missing).contains(&nbsp(&format!(
            "{nowhere} ne contient pas de registre (pas de journal/journal.log)"
        ))),
        "{}",
        said(&missing)
    );
    let running = EmbeddedStore::open(&embedded_dir).unwrap();
    let locked = run(&hosted, &["store", "import", "--from-state-dir", &from]);
    drop(running);
    assert_eq!(locked.status.code(), Some(1), "{}", said(&locked));
    assert!(
        said(&locked).contains("un autre processus de la passerelle utilise ce répertoire"),
        "{}",
        said(&locked)
    );
    assert_eq!(rows(&server), "0/0/0/0", "nothing written");

    let imported = ok(&hosted, &["store", "import", "--from-state-dir", &from]);
    assert!(
        imported.starts_with(&nbsp(&format!(
            "Registre de {from} importé dans PostgreSQL (38 enregistrements du journal) :\n\
             organisations : 2, clés d'API : 4, jetons du tableau de bord : 2\n\
             intentions : 13 (abandonnées : 1), entrées du registre : 11, anomalies fiscales : 1"
        ))),
        "{imported}"
    );
    for line in [
        "acme, registre de production : 4 entrées",
        "demo, registre de production : 5 entrées",
        "demo, registre du bac à sable : 2 entrées",
        "Vérifié, identique dans les deux registres : chacune des 11 entrées",
    ] {
        assert!(imported.contains(&nbsp(line)), "{line}: {imported}");
    }
    assert_eq!(
        exports(&hosted),
        before,
        "the auditor's exports from PostgreSQL"
    );
    let verified = run(&hosted, &["log", "verify"]);
    assert!(verified.status.success(), "{}", said(&verified));

    // A second import, into a database that holds the first: refused, nothing written.
    let held = rows(&server);
    let again = run(&hosted, &["store", "import", "--from-state-dir", &from]);
    assert_eq!(again.status.code(), Some(1), "{}", said(&again));
    assert!(
        said(&again).contains(&nbsp("la base PostgreSQL n'est pas vide")),
        "{}",
        said(&again)
    );
    assert_eq!(rows(&server), held);

    // Written in PostgreSQL after the import: an organization, its key, a key disabled.
    ok(
        &hosted,
        &[
            "org",
            "add",
            "--id",
            "third",
            "--name",
            "Third",
            "--nif",
            "A1234567B",
            "--isf",
            "ISF-3",
            "--device",
            "embedded",
        ],
    );
    ok(
        &hosted,
        &["key", "issue", "--org", "third", "--label", "till"],
    );
    ok(&hosted, &["key", "disable", "demo-production"]);
    let listed = |config: &Path| {
        let mut all = vec![ok(config, &["org", "list", "--json"])];
        for org in ["demo", "acme", "third"] {
            all.push(ok(config, &["key", "list", "--org", org, "--json"]));
        }
        all
    };
    let hosted_lists = listed(&hosted);
    assert!(hosted_lists[0].contains("third"), "{}", hosted_lists[0]);

    // Back to a new state directory: the same exports, a journal that verifies.
    let back_dir = dir.path().join("back");
    let to = back_dir.display().to_string();
    let exported = ok(&hosted, &["store", "export", "--to-state-dir", &to]);
    assert!(
        exported.starts_with(&nbsp(&format!(
            "Registre de PostgreSQL exporté dans {to} : 41 enregistrements"
        ))),
        "{exported}"
    );
    assert!(!exported.contains("autre numéro"), "{exported}");
    let back = config(dir.path(), "back.toml", &back_dir, None);
    assert_eq!(
        exports(&back),
        before,
        "the auditor's exports after the way back"
    );
    let verified = run(&back, &["log", "verify"]);
    assert!(verified.status.success(), "{}", said(&verified));
    // An export never writes over a register.
    let over = run(&hosted, &["store", "export", "--to-state-dir", &to]);
    assert_eq!(over.status.code(), Some(1), "{}", said(&over));
    assert!(
        said(&over).contains(&nbsp(&format!("{to} n'est pas vide"))),
        "{}",
        said(&over)
    );

    // A register changed behind the triggers' back: the export says what differs, exit 1.
    server.sql(
        ROLE,
        "ALTER TABLE register_entries DISABLE TRIGGER register_entries_append_only; \
         UPDATE register_entries SET code_def = 'FORGED' \
         WHERE environment = 'production' AND sequence = 1; \
         ALTER TABLE register_entries ENABLE TRIGGER register_entries_append_only",
    );
    let forged_dir = dir.path().join("forged").display().to_string();
    let forged = run(&hosted, &["store", "export", "--to-state-dir", &forged_dir]);
    let text = said(&forged);
    assert_eq!(forged.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with(&nbsp(
            "erreur : les deux registres ne donnent pas les mêmes réponses après la copie :\n  \
             la vérification du registre dans PostgreSQL (log verify) : \"\" dans le registre \
             intégré, \"production entry 1: its columns are not the entry it hashes\" dans \
             PostgreSQL\n"
        )),
        "{text}"
    );
}

#[test]
fn a_record_the_schema_refuses_leaves_the_database_empty() {
    let Some(server) = PgServer::init("store import refused by a rule") else {
        return;
    };
    server.create_role_and_database(ROLE, "move-secret-1");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("embedded");
    {
        // The embedded store took an entry without a codeDEFDGI; PostgreSQL's schema never
        // does (`code_def <> ''`).
        let store = EmbeddedStore::open(&state).unwrap();
        store.save_organization(organization("demo")).unwrap();
        store.issue_key(key("demo-production", "demo", P)).unwrap();
        let id = store.record_intent(asked("demo", P, "FV-1", None)).unwrap();
        store
            .record_certified(id, 2026, at(3), security("FV-1", 1), "finalize")
            .unwrap();
        let id = store.record_intent(asked("demo", P, "FV-2", None)).unwrap();
        let mut blank = security("FV-2", 2);
        blank.code_def = String::new();
        store
            .record_certified(id, 2026, at(4), blank, "finalize")
            .unwrap();
    }
    let url = server.socket_url(ROLE, ROLE);
    let hosted = config(
        dir.path(),
        "hosted.toml",
        &dir.path().join("hosted"),
        Some(&url),
    );
    let from = state.display().to_string();
    let out = run(&hosted, &["store", "import", "--from-state-dir", &from]);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with(&nbsp(&format!(
            "erreur : rien n'a été importé de {from} : la transaction a été annulée, la base est \
             restée vide : le serveur PostgreSQL du registre a refusé une opération"
        ))),
        "{text}"
    );
    assert!(text.contains("journal record 6 (certified)"), "{text}");
    assert_eq!(rows(&server), "0/0/0/0", "nothing committed: {text}");
}

/// Review: a refused record early in a long journal must still be named.
#[test]
fn review_a_refused_record_in_a_long_journal_is_named() {
    let Some(server) = PgServer::init("store import refused by a rule, long journal") else {
        return;
    };
    server.create_role_and_database(ROLE, "move-secret-1");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("embedded");
    {
        let store = EmbeddedStore::open(&state).unwrap();
        store.save_organization(organization("demo")).unwrap();
        store.issue_key(key("demo-production", "demo", P)).unwrap();
        let id = store.record_intent(asked("demo", P, "FV-1", None)).unwrap();
        store
            .record_certified(id, 2026, at(3), security("FV-1", 1), "finalize")
            .unwrap();
        let id = store.record_intent(asked("demo", P, "FV-2", None)).unwrap();
        let mut blank = security("FV-2", 2);
        blank.code_def = String::new();
        store
            .record_certified(id, 2026, at(4), blank, "finalize")
            .unwrap();
        for i in 0..2000 {
            store
                .save_organization(organization(&format!("org{i}")))
                .unwrap();
        }
    }
    let url = server.socket_url(ROLE, ROLE);
    let hosted = config(
        dir.path(),
        "hosted.toml",
        &dir.path().join("hosted"),
        Some(&url),
    );
    let from = state.display().to_string();
    let out = run(&hosted, &["store", "import", "--from-state-dir", &from]);
    let text = said(&out);
    eprintln!("REVIEW OUTPUT: {text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("journal record 6 (certified)"), "{text}");
}

/// Review: an organization whose quota is beyond bigint ("unlimited") imports, as it certifies.
#[test]
fn review_an_unlimited_quota_imports() {
    let Some(server) = PgServer::init("store import, unlimited quota") else {
        return;
    };
    server.create_role_and_database(ROLE, "move-secret-1");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("embedded");
    {
        let store = EmbeddedStore::open(&state).unwrap();
        let mut org = organization("demo");
        org.quota_override = Some(u64::MAX);
        store.save_organization(org).unwrap();
        store.issue_key(key("demo-production", "demo", P)).unwrap();
        let id = store.record_intent(asked("demo", P, "FV-1", None)).unwrap();
        store
            .record_certified(id, 2026, at(3), security("FV-1", 1), "finalize")
            .unwrap();
    }
    let url = server.socket_url(ROLE, ROLE);
    let hosted = config(
        dir.path(),
        "hosted.toml",
        &dir.path().join("hosted"),
        Some(&url),
    );
    let from = state.display().to_string();
    let out = run(&hosted, &["store", "import", "--from-state-dir", &from]);
    let text = said(&out);
    eprintln!("REVIEW OUTPUT: {text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}
