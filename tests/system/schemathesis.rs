//! The API against its own description: `scripts/schemathesis` starts this build's gateway in
//! demo mode (the bundled simulator) and runs schemathesis (pinned, from PyPI, in `.venv`) on
//! the document the gateway serves, with schemathesis's default checks (no server error,
//! status codes, content types, headers and bodies as described, invalid data refused, ...)
//! over a bounded number of generated requests. See `protocols/http-v1/README.md`.
//!
//! `.venv` is created by `scripts/setup-schemathesis`, which this test runs first (a no-op when
//! the pinned version is installed; it needs PyPI otherwise).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[test]
fn schemathesis_finds_no_violation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = Command::new(root.join("scripts/setup-schemathesis"))
        .current_dir(root)
        .output()
        .expect("scripts/setup-schemathesis runs");
    assert!(
        setup.status.success(),
        "scripts/setup-schemathesis failed:\n{}{}",
        String::from_utf8_lossy(&setup.stdout),
        String::from_utf8_lossy(&setup.stderr)
    );
    let python = root.join(".venv/bin/python");
    let started = Instant::now();
    let run = Command::new(&python)
        .arg(root.join("scripts/schemathesis"))
        .current_dir(root)
        .env("EMCF_GATEWAY_BIN", env!("CARGO_BIN_EXE_emcf-gateway"))
        .output()
        .expect("scripts/schemathesis runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    // The summary, outside the test harness's capture so that it shows in CI logs.
    let summary: Vec<&str> = stdout
        .lines()
        .filter(|line| {
            let line = line.trim();
            line.contains(" generated, ")
                || line.starts_with("Seed:")
                || line.contains("issues found")
                || line.contains(" failure")
                || line.starts_with("schemathesis exited")
                || line.starts_with("THE GATEWAY")
        })
        .collect();
    let _ = writeln!(
        std::io::stderr(),
        "schemathesis ({:.0} s): {}",
        started.elapsed().as_secs_f64(),
        summary
            .iter()
            .map(|l| l.trim().trim_matches('='))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" | ")
    );
    assert!(
        run.status.success(),
        "scripts/schemathesis failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
}
