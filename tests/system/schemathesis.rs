//! The API against its own description: `scripts/schemathesis` starts this build's gateway in
//! demo mode (the bundled simulator) and runs schemathesis (pinned, from PyPI, in `.venv`) on
//! the document the gateway serves, with schemathesis's default checks (no server error,
//! status codes, content types, headers and bodies as described, invalid data refused, ...)
//! over a bounded number of generated requests. See `protocols/http-v1/README.md`.
//!
//! Needs the pinned schemathesis in `.venv`: `scripts/setup-schemathesis` installs it from
//! PyPI (`.ci/run` runs it); missing, or another version, the test is skipped with a note,
//! except under CI (`CI=true`), where it fails.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::common::needs;

/// The version `scripts/setup-schemathesis` pins (its `SCHEMATHESIS_VERSION="..."` line).
fn pinned_version(root: &Path) -> String {
    let script = root.join("scripts/setup-schemathesis");
    let text = std::fs::read_to_string(&script)
        .unwrap_or_else(|e| panic!("reading {}: {e}", script.display()));
    text.lines()
        .find_map(|line| line.trim().strip_prefix("SCHEMATHESIS_VERSION="))
        .map(|version| version.trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("no SCHEMATHESIS_VERSION= in {}", script.display()))
}

/// The schemathesis version `python` has, if any.
fn installed_version(python: &Path) -> Option<String> {
    let out = Command::new(python)
        .args([
            "-c",
            "from importlib.metadata import version; print(version('schemathesis'))",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn schemathesis_finds_no_violation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    let pinned = pinned_version(root);
    let installed = installed_version(&python);
    if installed.as_deref() != Some(pinned.as_str()) {
        let what = match installed {
            Some(other) => format!("schemathesis {other} in .venv, not the pinned {pinned}"),
            None => format!("no schemathesis in .venv (pinned: {pinned})"),
        };
        return needs::missing(
            "schemathesis on the OpenAPI document",
            &what,
            "run scripts/setup-schemathesis; .ci/run does",
        );
    }
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
