//! The acceptance check of PROTOCOL.md: `tools/mcf_host.py`, a host written in Python from
//! the document alone (standard library only), drives the `emcf-sim` binary on a pty through
//! whole invoices, NAK on a corrupted frame and a repeated SEQ, and checks what it gets.

use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command as Process;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_written_from_protocol_md_passes_its_selftest() {
    let mut sim = Process::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args([
            "--pty",
            "--ephemeral",
            "--command-ms",
            "2",
            "--finalize-ms",
            "50",
        ])
        .args(["--credit-note-ms", "300"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start emcf-sim");
    let stdout = sim.stdout.take().expect("stdout");
    let path = tokio::time::timeout(
        Duration::from_secs(20),
        BufReader::new(stdout).lines().next_line(),
    )
    .await
    .expect("emcf-sim prints its path in time")
    .expect("read stdout")
    .expect("a first line");

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/mcf_host.py");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .args([script, "selftest", &path])
            .output()
            .expect("python3 is installed (.ci/run installs it)")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "selftest failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // One PASS line per check, and the tally.
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("PASS")).count(),
        7,
        "{stdout}"
    );
    assert!(stdout.contains("7/7 checks passed"), "{stdout}");
    sim.kill().await.unwrap();
}
