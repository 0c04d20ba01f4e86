//! The `emcf-sim` binary as a technician runs it: `--pty` prints the path, a host drives it.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use mcf_sfe::{Command, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command as Process};

async fn spawn_sim(args: &[&str]) -> (Child, String) {
    let mut child = Process::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start emcf-sim");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let path = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("emcf-sim prints its path in time")
        .expect("read stdout")
        .expect("a first line");
    (child, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_a_pty_and_keeps_its_counters_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("fiscal.json");
    let link = dir.path().join("emcf0");
    let state_arg = state.to_string_lossy().into_owned();
    let link_arg = link.to_string_lossy().into_owned();
    let args = [
        "--pty",
        "--link",
        &link_arg,
        "--state",
        &state_arg,
        "--command-ms",
        "1",
        "--finalize-ms",
        "50",
    ];

    let (mut child, path) = spawn_sim(&args).await;
    assert!(path.starts_with("/dev/pts/"), "{path}");
    assert_eq!(std::fs::read_link(&link).unwrap().to_string_lossy(), path);
    let mut host = Host::open(&link);
    let (_, first) = host.certify(&fv_invoice("F-BIN-1")).await;
    assert_eq!(first.tc, 1);
    drop(host);
    child.kill().await.unwrap();
    child.wait().await.unwrap();

    let (mut child, _) = spawn_sim(&args).await;
    let mut host = Host::open(&link);
    let Reply::DeviceState(state) = host.call(&Command::DeviceState).await else {
        panic!("C1h")
    };
    assert_eq!(state.tc, 1);
    assert_eq!(
        state.last.invoice().map(|l| l.code_def.clone()),
        Some(first.code_def)
    );
    let (_, second) = host.certify(&fv_invoice("F-BIN-2")).await;
    assert_eq!((second.fc, second.tc), (2, 2));
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_flags_are_refused_with_a_message() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(["--pty", "--ephemeral", "--corrupt-replies", "1.5"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "'--corrupt-replies <P>': --corrupt-replies takes a probability: 0 to 1, \
             e.g. --corrupt-replies 0.05"
        ),
        "{stderr}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(["edef", "--latency-ms", "soon"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--latency-ms takes milliseconds: 0 to 600000, e.g. --latency-ms 250"),
        "{stderr}"
    );
}

/// What `emcf-sim ARGS` prints on stdout.
fn help(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_help_lists_every_fault_with_its_type_values_and_an_example() {
    use emcf_sim::edef::EDEF_FAULTS;
    use emcf_sim::faults::BOX_FAULTS;
    let top = help(&["--help"]);
    for fault in BOX_FAULTS.faults {
        // clap: the flag, then its help (what it does, type and values, example).
        let flag = format!("--{} <", fault.name);
        let at = top.find(&flag).unwrap_or_else(|| panic!("{flag}\n{top}"));
        assert!(
            top[at..].contains(&fault.flag_help()),
            "{}\n{top}",
            fault.name
        );
    }
    assert!(top.contains("Faults (all off by default"), "{top}");
    // The seed is an option, not a fault; a default is said once.
    let faults_at = top.find("Faults (all off by default").unwrap();
    let seed_at = top.find("--seed <N>").unwrap_or_else(|| panic!("{top}"));
    assert!(seed_at < faults_at, "--seed among the faults:\n{top}");
    assert!(!BOX_FAULTS.faults.iter().any(|f| f.name == "seed"));
    let seed_help = &top[seed_at..];
    let seed_help = &seed_help[..seed_help.find("\n  -").unwrap_or(seed_help.len())];
    assert!(seed_help.contains("(default 0)"), "{seed_help}");
    assert!(!seed_help.contains("[default"), "{seed_help}");
    assert_eq!(top.matches("default 800").count(), 1, "{top}");
    assert!(!top.contains("[default: 800]"), "{top}");
    let edef = help(&["edef", "--help"]);
    for text in [&top, &edef] {
        for line in EDEF_FAULTS.help_text().lines() {
            assert!(text.contains(line), "{line}\n{text}");
        }
        for fault in EDEF_FAULTS.faults {
            assert!(text.contains(&fault.json_example()), "{}", fault.name);
        }
    }
    assert!(
        edef.contains("drop_next_confirm_answer (count or on/off)"),
        "{edef}"
    );
    assert!(
        edef.contains("Values: true (the next one), false (off)"),
        "{edef}"
    );
    assert!(
        edef.contains(r#"e.g. {"drop_next_confirm_answer": true}"#),
        "{edef}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_a_serial_port_given_by_path() {
    use futures::{SinkExt, StreamExt};
    use mcf_sfe::{FromDevice, HostCodec};
    use tokio_serial::{SerialPort, SerialStream};
    use tokio_util::codec::Framed;

    // A pty pair stands in for a null-modem cable: the simulator opens the slave path as a
    // serial port (the --port code path), the test speaks on the master.
    let (master, slave) = SerialStream::pair().unwrap();
    let port = slave.name().unwrap();
    let mut child = Process::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(["--port", &port, "--baud", "115200", "--ephemeral"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = Framed::new(master, HostCodec);
    let frame = Command::DeviceState.to_frame(mcf_sfe::Seq::FIRST).unwrap();
    // The simulator may not have opened the port yet: resend until it answers.
    let mut reply = None;
    for _ in 0..40 {
        line.send(&frame).await.unwrap();
        if let Ok(Some(Ok(FromDevice::Reply(r)))) =
            tokio::time::timeout(Duration::from_millis(500), line.next()).await
        {
            reply = Some(r);
            break;
        }
    }
    let reply = reply.expect("the simulator answers on the serial port");
    assert!(reply.answers(&frame));
    assert!(matches!(
        Reply::parse(reply.cmd(), reply.data()).unwrap(),
        Reply::DeviceState(_)
    ));
    drop(slave);
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_lists_every_firmware_profile_and_a_profile_changes_the_wire() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for (name, description) in emcf_sim::firmware::PRESETS {
        assert!(help.contains(&format!("{name}:")), "{name} missing: {help}");
        assert!(help.contains(description), "{name}'s description missing");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_emcf-sim"))
        .args(["--pty", "--ephemeral", "--firmware", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());

    let args = ["--pty", "--ephemeral", "--firmware", "c1h-11"];
    let (mut child, path) = spawn_sim(&args).await;
    let mut host = Host::open(std::path::Path::new(&path));
    let frame = host.call_frame(&Command::DeviceState).await.unwrap();
    assert_eq!(frame.data().split(|&b| b == b',').count(), 11);
    child.kill().await.unwrap();
}
