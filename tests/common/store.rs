//! The store the end-to-end tests run the gateway on (issue 28): one parameter, not copies of
//! the tests. By default the embedded store (journal + sled in the state directory);
//! `EMCF_TEST_STORE=postgres` runs the same tests with the register in PostgreSQL: one server
//! for the test binary (started at its first gateway, stopped when the binary exits), one new
//! database for each test's directory, named in the `[store]` table the configuration gets.
//! A test about the embedded store's own files (its journal, backups, a full disk, power
//! cuts) does not run under that parameter: it asks [`embedded_only`] first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use super::pg::{PgServer, SUPERUSER};

/// The environment variable that picks the store.
pub const PARAMETER: &str = "EMCF_TEST_STORE";

/// Whether this run puts the register in PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var(PARAMETER).is_ok_and(|v| v.trim() == "postgres")
}

/// `true` (and a line saying so) when a test of the embedded store's own files must not run:
/// under `EMCF_TEST_STORE=postgres`.
pub fn embedded_only(subject: &str) -> bool {
    if on_postgres() {
        eprintln!("{subject}: about the embedded store's files; not run with {PARAMETER}=postgres");
        return true;
    }
    false
}

/// The server of this test binary, and the database made for each test directory.
struct Shared {
    server: PgServer,
    databases: BTreeMap<PathBuf, String>,
}

fn shared() -> &'static Mutex<Option<Shared>> {
    static SHARED: OnceLock<Mutex<Option<Shared>>> = OnceLock::new();
    SHARED.get_or_init(|| Mutex::new(None))
}

/// Stops the server as the test binary exits (statics are never dropped).
extern "C" fn stop_server() {
    if let Ok(mut shared) = shared().lock() {
        drop(shared.take());
    }
}

/// The `[store]` table that puts the register of the gateway in `dir` in PostgreSQL (the same
/// database for every gateway and CLI call in `dir`), or `None` on the embedded store.
pub fn store_table(dir: &Path) -> Option<String> {
    if !on_postgres() {
        return None;
    }
    let mut shared = shared().lock().unwrap_or_else(|e| e.into_inner());
    let shared = shared.get_or_insert_with(|| {
        let server = PgServer::init("the tests with EMCF_TEST_STORE=postgres")
            .expect("PostgreSQL is installed (EMCF_TEST_STORE=postgres)");
        // SAFETY: registers a plain `extern "C"` function with no arguments, once.
        unsafe {
            libc::atexit(stop_server);
        }
        Shared {
            server,
            databases: BTreeMap::new(),
        }
    });
    let key = dir.to_path_buf();
    let name = match shared.databases.get(&key) {
        Some(name) => name.clone(),
        None => {
            let name = format!("gw{}", shared.databases.len() + 1);
            shared
                .server
                .sql("postgres", &format!("CREATE DATABASE {name}"));
            shared.databases.insert(key, name.clone());
            name
        }
    };
    Some(format!(
        "\n[store]\nurl = \"{}\"\n",
        shared.server.socket_url(SUPERUSER, &name)
    ))
}

/// Every row of the database of `dir` as text (`pg_dump`), for a search of what the
/// register holds; `None` on the embedded store (its files are searched instead).
pub fn dump(dir: &Path) -> Option<Vec<u8>> {
    if !on_postgres() {
        return None;
    }
    let shared = shared().lock().unwrap_or_else(|e| e.into_inner());
    let shared = shared.as_ref()?;
    let name = shared.databases.get(dir)?;
    Some(shared.server.dump(name))
}

/// `config` with the `[store]` table of [`store_table`] appended (unchanged on the embedded
/// store, or when it names a store already).
pub fn with_store(dir: &Path, config: &str) -> String {
    if config.contains("[store]") {
        return config.to_owned();
    }
    match store_table(dir) {
        Some(table) => format!("{config}{table}"),
        None => config.to_owned(),
    }
}

/// Runs every test of this test binary again with `EMCF_TEST_STORE=postgres`, but those whose
/// names contain one of `skip` (the embedded store's own files, tests that start PostgreSQL
/// themselves), and asserts they pass. Nothing (a line saying so) without PostgreSQL outside
/// CI; a failure under CI. Called by one test of each binary that runs on both stores.
pub fn run_again_on_postgres(subject: &str, skip: &[&str]) {
    if on_postgres() {
        // This is the run with the parameter: it does not start itself again.
        return;
    }
    if !PgServer::installed(subject) {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command.env(PARAMETER, "postgres").arg("-q");
    for name in skip.iter().chain(&["on_postgres::"]) {
        command.args(["--skip", name]);
    }
    let output = command
        .stdin(Stdio::null())
        .output()
        .expect("the test binary runs again");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{subject}: the tests with {PARAMETER}=postgres failed:\n{said}"
    );
    let summary = said
        .lines()
        .rfind(|line| line.starts_with("test result:"))
        .unwrap_or_default();
    eprintln!("{subject} with {PARAMETER}=postgres: {summary}");
    assert!(summary.contains(" passed"), "{said}");
}
