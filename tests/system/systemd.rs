//! The systemd installation in `systemd/` (docs/design.md §8, issue 5): the unit's
//! `systemd-analyze security` exposure is 2.0 or less with the serial port still usable
//! (scripts/check-systemd, offline, no running systemd needed), and the example configuration
//! is one the gateway accepts and that the unit's stop timeout can wait for.
//!
//! `cargo test --test system systemd:: -- --nocapture` prints the exposure figure. Needs
//! `systemd-analyze` (Debian's systemd): missing, the exposure test is skipped with a note,
//! except under CI (`CI=true`), where it fails.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use emcf_gateway::config::Config;

use crate::common::needs;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn unit_text() -> String {
    let path = repo().join("systemd/emcf-gateway.service");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The last value of `key=` in the unit, comments ignored.
fn directive(unit: &str, key: &str) -> Option<String> {
    unit.lines()
        .rev()
        .map(str::trim)
        .filter(|line| !line.starts_with('#') && !line.starts_with(';'))
        .filter_map(|line| line.split_once('='))
        .find(|(name, _)| name.trim() == key)
        .map(|(_, value)| value.trim().to_string())
}

/// A systemd time span as the unit writes it here: `240s`, `4min`, `2min 30s`.
fn seconds(span: &str) -> u64 {
    span.split_whitespace()
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            let unit = &part[digits.len()..];
            let n: u64 = digits
                .parse()
                .unwrap_or_else(|_| panic!("time span {span:?}"));
            match unit {
                "" | "s" | "sec" => n,
                "min" | "m" => n * 60,
                "h" => n * 3600,
                other => panic!("time span {span:?}: unit {other:?} not handled by this test"),
            }
        })
        .sum()
}

#[test]
fn the_unit_is_hardened_to_an_exposure_of_2_0_or_less_with_the_serial_port_usable() {
    // Checked here so that the script never installs it (it would, as root).
    if !needs::runs("systemd-analyze", &["--version"]) {
        return needs::missing(
            "the systemd unit's exposure",
            "no systemd-analyze",
            "install Debian's systemd; .ci/run does",
        );
    }
    let script = repo().join("scripts/check-systemd");
    let output = Command::new("bash")
        .arg(&script)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let figure = stdout
        .lines()
        .find_map(|line| line.strip_prefix("exposure: "))
        .map(str::to_string);
    match &figure {
        Some(figure) => println!("systemd-analyze security exposure: {figure}"),
        None => println!("no exposure figure printed"),
    }
    assert!(
        output.status.success(),
        "scripts/check-systemd failed ({}); status 2 means its tools are missing \
         (Debian's systemd)\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    let figure = figure.expect("scripts/check-systemd prints `exposure: N.N`");
    let value: f64 = figure
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("exposure figure {figure:?}"));
    assert!(value <= 2.0, "exposure {value} is above 2.0");
}

#[test]
fn the_example_configuration_is_accepted_and_fits_the_units_timeouts() {
    let example = repo().join("systemd/config.toml.example");
    let text = std::fs::read_to_string(&example)
        .unwrap_or_else(|e| panic!("reading {}: {e}", example.display()));
    let packaged = Config::from_toml_str(&text, &example)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", example.display()));
    packaged
        .validate()
        .unwrap_or_else(|e| panic!("{} is not valid: {e}", example.display()));
    // As packaged: no device until the administrator names the box, and never the demo
    // simulator (not fiscal) meanwhile.
    assert!(
        packaged.awaits_device(),
        "the packaged file names no box and says demo = false"
    );
    // Named as its comment says (the three lines uncommented): a real box.
    let commented = "\n# [[devices]]\n# name = \"shop\"\n# path = \"/dev/emcf0\"\n";
    assert!(
        text.contains(commented),
        "the device block is there, commented"
    );
    let named = text.replace(
        commented,
        "\n[[devices]]\nname = \"shop\"\npath = \"/dev/emcf0\"\n",
    );
    let config = Config::from_toml_str(&named, &example).unwrap_or_else(|e| {
        panic!(
            "{} with its box named does not parse: {e}",
            example.display()
        )
    });
    config
        .validate()
        .unwrap_or_else(|e| panic!("{} with its box named is not valid: {e}", example.display()));

    // Production: a real box (no demo simulator), the LAN, the StateDirectory= of the unit.
    assert!(
        config.has_devices(),
        "the example configures a box once uncommented"
    );
    assert!(
        config.listen.ip().is_unspecified(),
        "the example serves the LAN"
    );
    let unit = unit_text();
    let state_directory = directive(&unit, "StateDirectory").expect("StateDirectory=");
    assert_eq!(
        config.resolved_state_dir(),
        Path::new("/var/lib").join(state_directory),
        "state_dir must be the unit's StateDirectory (the CLI finds the admin socket there)"
    );
    let exec_start = directive(&unit, "ExecStart").expect("ExecStart=");
    assert!(
        exec_start.contains("--config /etc/emcf-gateway/config.toml"),
        "ExecStart= names the configuration file: {exec_start}"
    );

    // On SIGTERM the requests in progress get up to request_timeout_secs, and a box that
    // started a credit note then may need its whole budget: systemd must wait for both.
    let stop = Duration::from_secs(seconds(
        &directive(&unit, "TimeoutStopSec").expect("TimeoutStopSec="),
    ));
    let longest_device = config
        .devices
        .iter()
        .map(|device| {
            let timing = device.timing();
            timing.credit_note_budget.max(timing.finalize_budget)
        })
        .max()
        .unwrap_or_default();
    let needed = config.request_timeout() + longest_device;
    assert!(
        stop > needed,
        "TimeoutStopSec ({stop:?}) must exceed request_timeout_secs plus the longest device budget ({needed:?})"
    );
    let watchdog = seconds(&directive(&unit, "WatchdogSec").expect("WatchdogSec="));
    assert!(watchdog >= 10, "WatchdogSec too short for a loaded machine");
}
