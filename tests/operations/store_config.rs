//! `[store]` through the real binary, as an operator preparing the hosted mode meets it: a
//! mistake in it is said with its key and the exit status 1, and a right one whose server
//! does not answer stops `serve` and the CLI without falling back on the embedded store
//! (no journal anywhere); the embedded store's own commands (`backup`) refuse it; `config
//! check` shows where it leads and that the server does not answer, never the password. The keys themselves are `src/config/tests/store.rs`'s.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{binary, nbsp};

const PASSWORD: &str = "pg-s3cret-never-shown";

/// Runs the CLI in `dir` with `config` and `args`; `store_url` is `EMCF_STORE_URL`. A command
/// still running after 30 s (a `serve` that was not refused) is killed and fails the test.
fn run(dir: &Path, config: &Path, store_url: &str, args: &[&str]) -> Output {
    let mut child = Command::new(binary())
        .arg("--config")
        .arg(config)
        .args(args)
        .env("EMCF_CONFIG", "")
        .env("EMCF_STATE_DIR", "")
        .env("EMCF_LANG", "")
        .env("EMCF_STORE_URL", store_url)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the CLI runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("killed");
            panic!("{args:?} did not stop by itself: {}", said(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the CLI's output")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A configuration file `name` in `dir` with `store` after a state directory of `dir` and a
/// web API channel; returns its path.
fn config(dir: &Path, name: &str, store: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let state = dir.join("state");
    let text = format!(
        "state_dir = {:?}\n{store}\n[[devices]]\nname = \"dgi\"\nkind = \"web_api\"\nurl = \"https://edef.example.cd\"\ntoken_file = \"/etc/emcf-gateway/dgi.token\"\n",
        state.display().to_string()
    );
    std::fs::write(&path, text).expect("config");
    path
}

#[test]
fn a_bad_store_table_is_said_with_its_key_and_exit_status_1() {
    let dir = tempfile::tempdir().expect("dir");
    let bad = config(
        dir.path(),
        "bad.toml",
        &format!("[store]\nurl = \"postgresql://emcf:{PASSWORD}@db.example.cd/emcf\"\n"),
    );
    for args in [&["org", "list"][..], &["serve"], &["config", "check"]] {
        let out = run(dir.path(), &bad, "", args);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains(&nbsp(
                "store.url contient un mot de passe : retirez-le de l'URL et écrivez-le seul dans un fichier"
            )) && text.contains("password_file"),
            "{args:?}: {text}"
        );
        assert!(!text.contains(PASSWORD), "{args:?}: {text}");
    }
    // The variable is named as the culprit, in English when asked.
    let empty = config(dir.path(), "empty.toml", "");
    let out = run(
        dir.path(),
        &empty,
        "mysql://emcf@db/emcf",
        &["--lang", "en", "org", "list"],
    );
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("error: the environment variable EMCF_STORE_URL=\"mysql://emcf@db/emcf\" is not valid: must start with \"postgresql://\""),
        "{text}"
    );
    // A password file others can read is refused by name, before anything starts.
    let file = dir.path().join("pg.password");
    std::fs::write(&file, format!("{PASSWORD}\n")).expect("password");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let open = config(
        dir.path(),
        "open.toml",
        &format!(
            "[store]\nurl = \"postgresql://emcf@db.example.cd/emcf\"\npassword_file = {:?}\n",
            file.display().to_string()
        ),
    );
    let out = run(dir.path(), &open, "", &["serve"]);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&nbsp("a les droits 0644 : le mot de passe doit être lisible par son propriétaire seul (chmod 600")),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "{text}");
    assert!(!dir.path().join("state").exists(), "nothing was created");
}

#[test]
fn a_store_whose_server_does_not_answer_stops_serve_and_the_cli_without_a_journal() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("pg.password");
    std::fs::write(&file, format!("{PASSWORD}\n")).expect("password");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    // Port 1 of the loopback: refused at once, no name to resolve.
    let url = "postgresql://emcf@127.0.0.1:1/emcf";
    let right = config(
        dir.path(),
        "right.toml",
        &format!(
            "[store]\nurl = \"{url}\"\npassword_file = {:?}\n",
            file.display().to_string()
        ),
    );
    let only_env = config(dir.path(), "only-env.toml", "");
    let unreachable = nbsp(&format!(
        "erreur : impossible d'ouvrir le registre dans la base PostgreSQL {url}"
    ));
    for (config, store_url, args) in [
        (&right, "", &["serve"][..]),
        (&right, "", &["org", "list"]),
        (&only_env, url, &["serve"]),
        (&only_env, url, &["log", "verify"]),
    ] {
        let out = run(dir.path(), config, store_url, args);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.starts_with(&unreachable), "{args:?}: {text}");
        assert!(text.contains("127.0.0.1:1"), "{args:?}: {text}");
        assert!(!text.contains(PASSWORD), "{args:?}: {text}");
        // Never the embedded store in its place: no journal, no index.
        assert!(!dir.path().join("state/journal").exists(), "{args:?}");
        assert!(!dir.path().join("state/index.sled").exists(), "{args:?}");
    }
    let out = run(dir.path(), &right, "", &["--lang", "en", "org", "list"]);
    assert!(
        said(&out).starts_with(&format!(
            "error: cannot open the register in the PostgreSQL database {url}"
        )),
        "{}",
        said(&out)
    );
    // The embedded store's files are not the register: its commands refuse.
    for args in [&["backup"][..], &["index", "rebuild"]] {
        let out = run(dir.path(), &right, "", args);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.starts_with(&nbsp(&format!(
                "erreur : « emcf-gateway {} » agit sur les fichiers du registre intégré",
                args.join(" ")
            ))),
            "{args:?}: {text}"
        );
    }
    // `config check` says where the register is, and that its server does not answer.
    let out = run(dir.path(), &right, "", &["config", "check", "--json"]);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let store: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["check"] == "store")
        .collect();
    assert_eq!(store.len(), 2, "{report}");
    assert_eq!(store[0]["level"], "ok", "{report}");
    assert_eq!(store[0]["subject"], url);
    assert_eq!(
        store[0]["text"],
        nbsp(&format!(
            "registre sur PostgreSQL : {url}, mot de passe lu dans {}",
            file.display()
        ))
    );
    assert_eq!(store[1]["level"], "error", "{report}");
    assert!(
        store[1]["text"].as_str().is_some_and(
            |t| t.contains("ne peut pas garder le registre") && t.contains("127.0.0.1:1")
        ),
        "{report}"
    );
}
