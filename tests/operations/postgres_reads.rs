//! The register's reads on PostgreSQL (`src/store/postgres/reads.rs`, issue 28) give the
//! embedded store's answers: one scenario (two organizations, both registers, credit notes
//! and their originals, intents left open and abandoned, Idempotency-Keys) is written to an
//! embedded store and to a real PostgreSQL server, then every read is asked of both, over
//! every sequence, page, filter and code the scenario has, and the answers compared whole
//! (the entries with the invoices their intents keep, in the same order, the same `None`s).
//!
//! Intent ids are journal sequence numbers on the embedded store and an identity on
//! PostgreSQL: the test moves the identity to the embedded store's id before each intent, as
//! an import does (docs/design.md §11), so that the entries compare whole, ids included.
//!
//! Beside it: `tests/operations/postgres_reads/large.rs`, the reads of a large register from
//! the server's plans; `tests/operations/postgres_reads/older.rs`, entries that keep their own
//! invoice, as older journals did.

use emcf_gateway::model::{Environment, Intent, IntentId, KeyRecord, RegisterEntry};
use emcf_gateway::store::postgres::{PgPool, PgRegister};
use emcf_gateway::store::{AdmissionAsk, AdmissionView, EntryFilter, Store};
use sha2::{Digest, Sha256};

use super::postgres::app_pool;
use super::postgres_register::{at, claim, intent, organization, register_on, security};

mod large;
mod older;

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;
const ORGS: [&str; 3] = ["demo", "acme", "nobody"];

/// The same register on both stores.
struct Both {
    _dir: tempfile::TempDir,
    embedded: Store,
    pg: PgRegister,
    /// Another pool on the same database, to move the intents' identity.
    pool: PgPool,
}

/// `org`'s key for `env`, as `intent()` names it (`<org>-key`) and its Sandbox twin.
fn key_id(org: &str, env: Environment) -> String {
    match env {
        Environment::Production => format!("{org}-key"),
        Environment::Sandbox => format!("{org}-test"),
    }
}

fn key(org: &str, env: Environment) -> KeyRecord {
    KeyRecord {
        id: key_id(org, env),
        org: org.into(),
        environment: env,
        secret_sha256: "ab".repeat(32),
        label: "till 1".into(),
        enabled: true,
        created_at: at(),
    }
}

/// An intent of `org` in `env` for `rn` keeping `form` as its invoice.
fn keeping(org: &str, env: Environment, rn: &str, form: String) -> Intent {
    let mut intent = intent(org, rn);
    intent.environment = env;
    intent.key_id = key_id(org, env);
    if form.contains("\"FA\"") {
        intent.invoice_type = "FA".into();
    }
    intent.request_digest = format!("{:x}", Sha256::digest(form.as_bytes()));
    intent.invoice = Some(form);
    intent
}

/// An intent of `org` in `env` for the sale `rn`.
fn sale(org: &str, env: Environment, rn: &str) -> Intent {
    let mut intent = intent(org, rn);
    intent.environment = env;
    intent.key_id = key_id(org, env);
    intent
}

/// A credit note's kept invoice naming `reference` (a JSON value) as its original.
fn credit_form(rn: &str, reference: &str) -> String {
    format!(
        "{{\"canon\":\"1\",\"curCode\":\"CDF\",\"items\":[{{\"name\":\"Retour\",\"price\":\"10\",\
         \"quantity\":\"1\",\"taxGroup\":\"B\",\"type\":\"BIE\"}}],\"mode\":\"ttc\",\
         \"reference\":{reference},\"referenceType\":\"COR\",\"rn\":\"{rn}\",\"type\":\"FA\"}}"
    )
}

fn credit_note(org: &str, env: Environment, rn: &str, original: &str) -> Intent {
    keeping(org, env, rn, credit_form(rn, &format!("\"{original}\"")))
}

impl Both {
    async fn on(subject: &str) -> Option<(crate::pg::PgServer, Both)> {
        let (server, pg) = register_on(subject).await?;
        let pool = app_pool(&server).await;
        let dir = tempfile::tempdir().unwrap();
        let embedded = Store::open(dir.path()).unwrap();
        for org in ["demo", "acme"] {
            embedded.save_organization(organization(org)).unwrap();
            for env in [P, S] {
                embedded.issue_key(key(org, env)).unwrap();
                pg.issue_key(key(org, env)).await.unwrap().unwrap();
            }
        }
        let both = Both {
            _dir: dir,
            embedded,
            pg,
            pool,
        };
        Some((server, both))
    }

    /// `intent` recorded on both, under the same id.
    async fn open(&self, intent: Intent) -> IntentId {
        let id = self.embedded.record_intent(intent.clone(), None).unwrap();
        let client = self.pool.client().await.unwrap();
        client
            .execute(
                "SELECT setval(pg_get_serial_sequence('intents', 'id'), $1, false)",
                &[&(id as i64)],
            )
            .await
            .unwrap();
        let quota = (intent.environment == P).then_some(claim(1000)).flatten();
        let pg_id = self
            .pg
            .record_intent(&intent, quota)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(pg_id, id, "the same intent id on both");
        id
    }

    /// `intent` certified on both; the embedded store's entry.
    async fn certify(&self, intent: Intent) -> RegisterEntry {
        let signed = intent.rn.clone();
        self.certify_signed(intent, &signed).await
    }

    /// `intent` certified on both with the security elements of `signed`'s.
    async fn certify_signed(&self, intent: Intent, signed: &str) -> RegisterEntry {
        let rn = intent.rn.clone();
        let id = self.open(intent).await;
        let entry = self
            .embedded
            .record_certified(id, 2026, at(), security(signed), "finalize")
            .unwrap();
        let pg = self
            .pg
            .record_certified(id, 2026, at(), security(signed), "finalize")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(pg.sequence, entry.sequence, "{rn}");
        entry
    }

    async fn abandon(&self, id: IntentId) {
        self.embedded.record_abandoned(id, "refused").unwrap();
        self.pg
            .record_abandoned(id, "refused", at())
            .await
            .unwrap()
            .unwrap();
    }
}

/// Whether a future can go to another thread (the seam's futures are spawned).
fn sendable<F: std::future::Future + Send>(future: F) -> F {
    future
}

/// Two organizations and both registers; returns every entry certified, in order.
async fn scenario(both: &Both) -> Vec<RegisterEntry> {
    let mut certified = Vec::new();
    // Sales of both organizations, interleaved: an organization's sequences have gaps.
    for i in 1..=12 {
        let org = if i % 3 == 0 { "acme" } else { "demo" };
        certified.push(both.certify(sale(org, P, &format!("FV-{i}"))).await);
    }
    // acme has an FV-1 too, certified under the same code as demo's (codes are the box's).
    certified.push(both.certify(sale("acme", P, "FV-1")).await);
    let code = |i: usize| security(&format!("FV-{i}")).code_def;
    for (rn, original) in [("FA-1", code(1)), ("FA-2", code(1)), ("FA-3", code(2))] {
        certified.push(both.certify(credit_note("demo", P, rn, &original)).await);
    }
    // Another organization naming demo's code: its own FV-1's credit note, never demo's.
    certified.push(both.certify(credit_note("acme", P, "FA-X", &code(1))).await);
    // A credit note of an invoice the register does not hold.
    certified.push(
        both.certify(credit_note("demo", P, "FA-4", "NOT-HERE"))
            .await,
    );
    // Texts that name no original: a reference that is not a string, "reference" as a value.
    certified.push(
        both.certify(keeping("demo", P, "FA-5", credit_form("FA-5", "12")))
            .await,
    );
    let odd = "{\"canon\":\"1\",\"items\":[{\"name\":\"reference\"}],\"rn\":\"FV-13\"}";
    certified.push(both.certify(keeping("demo", P, "FV-13", odd.into())).await);
    // A code signed twice alike: the register finds its first entry by it.
    certified.push(both.certify_signed(sale("demo", P, "FV-14"), "FV-2").await);
    // The Sandbox register: the same rns and codes, its own numbers and links.
    certified.push(both.certify(sale("demo", S, "FV-1")).await);
    certified.push(both.certify(credit_note("demo", S, "FA-1", &code(1))).await);
    // An intent abandoned (its key freed), two left open.
    let mut dropped = sale("demo", P, "FV-20");
    dropped.idempotency_key = Some("idem-dropped".into());
    let id = both.open(dropped).await;
    both.abandon(id).await;
    both.open(sale("demo", P, "FV-21")).await;
    both.open(sale("acme", S, "FV-22")).await;
    certified
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_gives_the_embedded_stores_answer() {
    let Some((_server, both)) = Both::on("PostgreSQL register reads").await else {
        return;
    };
    let certified = scenario(&both).await;
    let (e, pg) = (&both.embedded, &both.pg);

    // Entries by sequence, each with the invoice its intent keeps.
    for env in [P, S] {
        let length = e.register_length(env).unwrap();
        assert_eq!(pg.register_length(env).await.unwrap(), length, "{env:?}");
        for sequence in (0..=length + 1).chain([u64::MAX]) {
            let expected = e.entry(env, sequence).unwrap();
            assert_eq!(
                pg.entry(env, sequence).await.unwrap(),
                expected,
                "{env:?} {sequence}"
            );
        }
    }
    assert_eq!(e.register_length(P).unwrap(), 21);
    assert_eq!(e.register_length(S).unwrap(), 2);
    let first = pg.entry(P, 1).await.unwrap().unwrap();
    assert!(
        first.request.invoice.is_some(),
        "the kept invoice comes with its entry"
    );
    assert_eq!(first, certified[0]);

    // Entries by rn.
    for env in [P, S] {
        for org in ORGS {
            for rn in [
                "FV-1", "FV-3", "FA-1", "FA-X", "FV-14", "FV-20", "FV-21", "FV-99",
            ] {
                assert_eq!(
                    pg.entry_by_rn(org, env, rn).await.unwrap(),
                    e.entry_by_rn(org, env, rn).unwrap(),
                    "{org} {env:?} {rn}"
                );
            }
        }
    }

    // Pages of the register, of all organizations or one.
    for env in [P, S] {
        for org in [None, Some("demo"), Some("acme"), Some("nobody")] {
            for after in [0, 1, 2, 7, 20, 21, 22, u64::MAX - 1, u64::MAX] {
                for limit in [0, 1, 2, 5, 100, usize::MAX] {
                    let filter = EntryFilter {
                        org: org.map(str::to_owned),
                        environment: env,
                        after_sequence: after,
                        limit,
                    };
                    assert_eq!(
                        pg.entries(&filter).await.unwrap(),
                        e.entries(&filter).unwrap(),
                        "{filter:?}"
                    );
                }
            }
        }
    }
    let demo = EntryFilter {
        org: Some("demo".into()),
        environment: P,
        after_sequence: 0,
        limit: 100,
    };
    assert_eq!(pg.entries(&demo).await.unwrap().len(), 15);

    // An organization's register backwards, filtered by the caller: pages thinned out by the
    // filter are read on until the limit is kept or the register's start is reached.
    type Keep = fn(&RegisterEntry) -> bool;
    let keeps: [(&str, Keep); 4] = [
        ("all", |_| true),
        ("credit notes", |entry| entry.request.invoice_type == "FA"),
        ("the first sales", |entry| {
            ["FV-1", "FV-2"].contains(&entry.request.rn.as_str())
        }),
        ("none", |_| false),
    ];
    for env in [P, S] {
        for org in ORGS {
            for before in [0, 1, 2, 5, 14, 21, 22, 1000, u64::MAX] {
                for limit in [0, 1, 2, 3, 100] {
                    for (name, keep) in keeps {
                        let expected = e.org_entries_back(org, env, before, limit, keep).unwrap();
                        let read = sendable(pg.org_entries_back(org, env, before, limit, keep));
                        assert_eq!(
                            read.await.unwrap(),
                            expected,
                            "{org} {env:?} before {before} limit {limit} {name}"
                        );
                    }
                }
            }
            assert_eq!(
                pg.org_entry_count(org, env).await.unwrap(),
                e.org_entry_count(org, env).unwrap(),
                "{org} {env:?}"
            );
        }
    }
    let firsts = pg
        .org_entries_back("demo", P, u64::MAX, 2, keeps[2].1)
        .await
        .unwrap();
    let rns: Vec<&str> = firsts.iter().map(|e| e.request.rn.as_str()).collect();
    assert_eq!(rns, ["FV-2", "FV-1"], "found past pages the filter emptied");
    assert_eq!(pg.org_entry_count("demo", P).await.unwrap(), 15);

    // Credit notes and their originals, both ways, by every code the registers hold.
    let mut codes: Vec<String> = certified
        .iter()
        .map(|e| e.security.code_def.clone())
        .collect();
    codes.extend(["NOT-HERE".to_string(), "12".to_string(), String::new()]);
    for entry in &certified {
        assert_eq!(
            pg.credit_links(entry).await.unwrap(),
            e.credit_links(entry).unwrap(),
            "{} {}",
            entry.request.org,
            entry.request.rn
        );
    }
    for env in [P, S] {
        for org in ORGS {
            for code in &codes {
                assert_eq!(
                    pg.holds_code(org, env, code).await.unwrap(),
                    e.holds_code(org, env, code).unwrap(),
                    "{org} {env:?} {code}"
                );
                assert_eq!(
                    pg.credited_original(org, env, code).await.unwrap(),
                    e.credited_original(org, env, code).unwrap(),
                    "{org} {env:?} {code}"
                );
            }
        }
    }
    let fv1 = &security("FV-1").code_def;
    let (original, notes) = pg.credited_original("demo", P, fv1).await.unwrap().unwrap();
    let rns: Vec<&str> = notes.iter().map(|e| e.request.rn.as_str()).collect();
    assert_eq!(
        (original.request.rn.as_str(), rns),
        ("FV-1", vec!["FA-1", "FA-2"])
    );
    let (_, acme) = pg.credited_original("acme", P, fv1).await.unwrap().unwrap();
    assert_eq!(acme.len(), 1, "acme's credit note, of acme's FV-1 only");
    let fa1 = pg.entry_by_rn("demo", P, "FA-1").await.unwrap().unwrap();
    assert_eq!(pg.credit_links(&fa1).await.unwrap().0, Some(original));
    assert_eq!(
        pg.credited_original("demo", P, "NOT-HERE").await.unwrap(),
        None
    );
    let fv2 = &security("FV-2").code_def;
    let (first, notes) = pg.credited_original("demo", P, fv2).await.unwrap().unwrap();
    assert_eq!((first.request.rn.as_str(), notes.len()), ("FV-2", 1));

    // Intents left open, and the Idempotency-Keys of the requests.
    let open = pg.open_intents().await.unwrap();
    assert_eq!(open, e.open_intents().unwrap());
    let open_rns: Vec<&str> = open.iter().map(|(_, i)| i.rn.as_str()).collect();
    assert_eq!(open_rns, ["FV-21", "FV-22"]);
    for env in [P, S] {
        for org in ORGS {
            for rn in ["FV-1", "FA-1", "FV-20", "FV-21", "FV-22", "FV-99"] {
                assert_eq!(
                    pg.open_intent_for(org, env, rn).await.unwrap(),
                    e.open_intent_for(org, env, rn).unwrap(),
                    "{org} {env:?} {rn}"
                );
                let key = format!("idem-{rn}");
                assert_eq!(
                    pg.idempotency_binding(org, env, &key).await.unwrap(),
                    e.idempotency_binding(org, env, &key).unwrap(),
                    "{org} {env:?} {key}"
                );
            }
            assert_eq!(
                pg.idempotency_binding(org, env, "idem-dropped")
                    .await
                    .unwrap(),
                None,
                "an abandoned request keeps no key"
            );
        }
    }
    // Admission's one read: each of its parts is the answer of the read of the same name.
    for env in [P, S] {
        for org in ORGS {
            for rn in ["FV-1", "FA-1", "FV-20", "FV-21", "FV-22", "FV-99"] {
                for (idempotency_key, year) in
                    [(None, None), (Some(format!("idem-{rn}")), Some(2026))]
                {
                    let ask = AdmissionAsk {
                        key_id: key_id(org, env),
                        org: org.into(),
                        environment: env,
                        rn: rn.into(),
                        idempotency_key,
                        device: Some("shop".into()),
                        quota_year: year,
                    };
                    let view = pg.admission_view(&ask).await.unwrap();
                    assert_eq!(view, e.admission_view(&ask).unwrap(), "{ask:?}");
                    assert_eq!(view.entry, e.entry_by_rn(org, env, rn).unwrap(), "{ask:?}");
                    assert_eq!(view.key, e.key(&ask.key_id).unwrap(), "{ask:?}");
                    assert_eq!(view.org.is_some(), org != "nobody", "{ask:?}");
                    if year.is_some() {
                        assert_eq!(view.quota_used, e.quota_used(org, 2026).unwrap(), "{ask:?}");
                    }
                }
            }
        }
    }
    let ask = |rn: &str, key: &str| AdmissionAsk {
        key_id: key_id("demo", P),
        org: "demo".into(),
        environment: P,
        rn: rn.into(),
        idempotency_key: Some(key.into()),
        device: None,
        quota_year: Some(2026),
    };
    let view = pg.admission_view(&ask("FV-21", "idem-FV-1")).await.unwrap();
    assert!(
        view.open_intent.is_some() && view.entry.is_none(),
        "{view:?}"
    );
    assert_eq!(view.binding.map(|b| b.rn), Some("FV-1".to_string()));
    let view = pg.admission_view(&ask("FV-2", "idem\0")).await.unwrap();
    assert_eq!(view, AdmissionView::default(), "a NUL is found nowhere");
    let view = pg.admission_view(&ask("FV-2", "none")).await.unwrap();
    assert!(
        view.key.is_some() && view.entry.is_some() && view.quota_used > 0,
        "{view:?}"
    );

    assert!(pg
        .open_intent_for("demo", P, "FV-21")
        .await
        .unwrap()
        .is_some());
    let bound = pg
        .idempotency_binding("demo", P, "idem-FV-1")
        .await
        .unwrap();
    assert_eq!(bound.map(|b| b.rn), Some("FV-1".to_string()));

    // The links and the counts are the register's own: no client writes them.
    let client = both.pool.client().await.unwrap();
    let fa3 = pg
        .entry_by_rn("demo", P, "FA-3")
        .await
        .unwrap()
        .unwrap()
        .sequence as i64;
    for sql in [
        "DELETE FROM credit_notes".to_string(),
        "UPDATE credit_notes SET reference = 'elsewhere'".to_string(),
        "TRUNCATE credit_notes".to_string(),
        format!("INSERT INTO credit_notes VALUES ('demo', 'production', '{fv1}', {fa3})"),
        "UPDATE register_counts SET entries = entries + 1".to_string(),
        "DELETE FROM register_counts".to_string(),
        "TRUNCATE register_counts".to_string(),
        "INSERT INTO register_counts VALUES ('demo', 'sandbox', 9) \
         ON CONFLICT (org, environment) DO UPDATE SET entries = 9"
            .to_string(),
    ] {
        let refused = client.execute(&sql, &[]).await.expect_err(&sql);
        let said = refused.as_db_error().map(|db| db.message().to_owned());
        assert!(
            said.is_some_and(|m| m.contains("refused")),
            "{sql}: {refused}"
        );
    }
    let (_, notes) = pg.credited_original("demo", P, fv1).await.unwrap().unwrap();
    assert_eq!(notes.len(), 2, "nothing changed");
    for env in [P, S] {
        assert_eq!(
            pg.org_entry_count("demo", env).await.unwrap(),
            e.org_entry_count("demo", env).unwrap()
        );
    }
}
