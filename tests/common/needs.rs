//! What a test needs from the machine beyond Rust (a browser, a runtime, a Debian tool, root):
//! `cargo test` as a normal user on a machine with only Rust passes, the tests that need more
//! skipping with a note that says how to get it; under CI (`CI=true`), where `.ci/run`
//! installs everything, a missing one fails. No test installs anything itself.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// Whether this runs under CI: `CI` set to anything but empty, `0` or `false` (CI services
/// set `CI=true`; `.ci/run` is run with it).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
}

/// `subject` cannot run because `what` is missing; `how` says how to get it (the Debian
/// package, the set-up script, and that `.ci/run` does it). Under CI that fails; elsewhere it
/// is said on stderr and the caller skips.
pub fn missing(subject: &str, what: &str, how: &str) {
    if under_ci() {
        panic!("{subject} cannot run under CI: {what} ({how})");
    }
    eprintln!("SKIPPED: {subject}: {what} ({how}); under CI=true this fails");
}

/// Whether `program args` runs and exits 0 (its output discarded).
pub fn runs(program: impl AsRef<OsStr>, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}
