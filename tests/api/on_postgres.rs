//! Every test of this binary again, with the register in PostgreSQL (issue 28): one
//! parameter, not copies of the tests (`tests/common/store.rs`). The binary runs itself with
//! `EMCF_TEST_STORE=postgres`; that run starts one PostgreSQL server and gives each test's
//! gateway a database of its own. What an ERP sees must not depend on the store: the same
//! answers, codes, quotas, keys, retries and exports.

use std::process::{Command, Stdio};

use crate::common::store::{on_postgres, PARAMETER};

#[test]
fn every_api_test_passes_with_the_register_in_postgresql() {
    if on_postgres() {
        // This is the run with the parameter: it does not start itself again.
        return;
    }
    let subject = "every_api_test_passes_with_the_register_in_postgresql";
    if !crate::common::pg::PgServer::installed(subject) {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .env(PARAMETER, "postgres")
        // Not this test again, and not the ignored ones.
        .args(["--skip", "on_postgres::", "-q"])
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
        "the API tests with {PARAMETER}=postgres failed:\n{said}"
    );
    let summary = said
        .lines()
        .rfind(|line| line.starts_with("test result:"))
        .unwrap_or_default();
    eprintln!("with {PARAMETER}=postgres: {summary}");
    assert!(summary.contains(" passed"), "{said}");
}
