//! The state directory is its owner's only (issue 14, point 3): started from a shell with umask
//! 022, `serve` and the CLI still create the state directory and its folders 0700 and every
//! file 0600 (the register, the index, the lock); `serve` refuses a state directory other
//! users can write, and starts with a warning on one they can read (as older releases left
//! it: an upgrade never strands a register).
//!
//! Real binary, in demo mode (the bundled simulator): no device needed.

#![cfg(unix)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use common::Gateway;

/// A shell's umask for this test process and so for the gateway it starts: without its own
/// umask the gateway would create files 0644 and folders 0755.
fn shell_umask() {
    // SAFETY: umask(2) only sets the process's file mode creation mask; every test here wants
    // the same one.
    unsafe {
        libc::umask(0o022);
    }
}

/// A configuration in demo mode (no device: the bundled simulator) with its state in
/// `dir/state`.
fn demo_config(dir: &Path) -> String {
    format!(
        "state_dir = {:?}\nlisten = \"127.0.0.1:0\"\n",
        dir.join("state")
    )
}

fn mode_of(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Every folder under `root` (itself included) is 0700 and every other entry gives nothing
/// to group or others; returns the paths seen, relative to `root`.
fn assert_private_tree(root: &Path) -> Vec<String> {
    let mut seen = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        let mode = meta.permissions().mode() & 0o7777;
        let name = path
            .strip_prefix(root)
            .expect("under root")
            .display()
            .to_string();
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "folder {} is {mode:04o}", path.display());
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                pending.push(entry.expect("entry").path());
            }
        } else if !meta.file_type().is_symlink() {
            assert_eq!(mode & 0o077, 0, "{} is {mode:04o}", path.display());
        }
        seen.push(name);
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_and_the_cli_keep_the_state_private_under_a_shell_s_umask() {
    shell_umask();
    let dir = tempfile::tempdir().expect("tempdir");

    // `org add` on a new state directory, service stopped: it creates the store.
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, demo_config(dir.path())).expect("config");
    common::cli_success(
        dir.path(),
        &config_path,
        &[
            "org",
            "add",
            "--id",
            "shop",
            "--name",
            "Shop",
            "--nif",
            common::SIM_NIF,
            "--isf",
            "ISF-1",
            "--device",
            "embedded",
        ],
    );
    let state = dir.path().join("state");
    let seen = assert_private_tree(&state);
    assert!(seen.iter().any(|p| p == "journal/journal.log"), "{seen:?}");
    std::fs::remove_dir_all(&state).expect("state removed");

    // `serve` on a new state directory; then an invoice, and a clean stop (sled writes on close).
    let mut gateway = Gateway::start(dir.path(), &demo_config(dir.path()));
    gateway.wait_ready().await;
    let key = gateway
        .banner_value("live key:")
        .unwrap_or_else(|| panic!("no live key in the banner: {:?}", gateway.banner));
    let response = common::post_invoice(gateway.addr, &key, &common::invoice("MODE-1")).await;
    assert_eq!(response.status, 200, "{}", response.json);
    let seen = assert_private_tree(&state);
    for expected in [
        "journal/journal.log",
        "index.sled/db",
        "gateway.lock",
        "admin.sock",
    ] {
        assert!(seen.iter().any(|p| p == expected), "{expected} in {seen:?}");
    }
    assert_eq!(mode_of(&state.join("journal/journal.log")), 0o600);
    assert!(gateway.terminate(), "clean exit");
    let seen = assert_private_tree(&state);
    assert!(
        seen.iter().any(|p| p.starts_with("index.sled/")),
        "{seen:?}"
    );
    assert!(!gateway.log().contains("can be read by other users"));
}

#[test]
fn serve_refuses_a_state_directory_others_can_write() {
    shell_umask();
    for mode in [0o777, 0o770] {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = dir.path().join("state");
        std::fs::create_dir(&state).expect("state");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, demo_config(dir.path())).expect("config");
        let (status, text) =
            common::serve_expecting_exit(dir.path(), &config_path, Duration::from_secs(30));
        assert!(!status.success(), "{text}");
        // Said in the installation's language (French by default).
        assert!(
            text.contains("peut être modifié par d'autres utilisateurs")
                && text.contains(&format!("chmod 700 {}", state.display())),
            "{text}"
        );
        // Nothing was created in it, and its mode is left to the operator.
        assert_eq!(std::fs::read_dir(&state).expect("read_dir").count(), 0);
        assert_eq!(mode_of(&state), mode);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_older_release_s_readable_state_directory_starts_with_a_warning() {
    shell_umask();
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let gateway = Gateway::start(dir.path(), &demo_config(dir.path()));
    gateway.wait_ready().await;
    let log = gateway.log();
    let warning = log
        .lines()
        .find(|line| line.contains("can be read by other users"))
        .unwrap_or_else(|| panic!("no warning in the log:\n{log}"));
    assert!(warning.contains("WARN"), "{warning}");
    assert!(
        warning.contains(&format!("chmod 700 {}", state.display())),
        "{warning}"
    );
    // Not tightened behind the operator's back; what is created in it is private.
    assert_eq!(mode_of(&state), 0o755);
    assert_eq!(mode_of(&state.join("journal")), 0o700);
    assert_eq!(mode_of(&state.join("journal/journal.log")), 0o600);
}

#[test]
fn the_store_creates_its_own_files_for_the_owner_only_whatever_the_umask() {
    // A library caller (the bench, a test) keeps its own umask: the store's folders, journal
    // and lock have explicit modes.
    shell_umask();
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("new").join("state");
    let store = emcf_gateway::store::Store::open(&state).expect("store opens");
    drop(store);
    for folder in [&state, &state.join("journal"), &state.join("index.sled")] {
        let mode = mode_of(folder);
        assert_eq!(mode, 0o700, "{} is {mode:04o}", folder.display());
    }
    for file in [
        state.join("journal/journal.log"),
        state.join("gateway.lock"),
    ] {
        let mode = mode_of(&file);
        assert_eq!(mode, 0o600, "{} is {mode:04o}", file.display());
    }
}
