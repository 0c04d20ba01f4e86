//! A start on a full disk (issue 27): sled cannot write its files, which are not damaged.
//! `serve` refuses to start saying the disk is full, leaves the index where it is (never
//! `index.sled.corrupt-*`), and starts as before once space is freed. Real binary, its state
//! on a small tmpfs the test mounts (root; skipped outside CI otherwise).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, Gateway};
use crate::tmpfs::Tmpfs;

fn moved_aside(state: &Path) -> Vec<String> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("index.sled."))
        .collect()
}

#[test]
fn a_start_on_a_full_disk_says_so_and_keeps_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&dir.path().join("fs"), "16m", "a start on a full disk") else {
        return;
    };
    let state = fs.path().join("state");
    let config = format!("state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\nlanguage = \"en\"\n");
    let mut gateway = Gateway::start(dir.path(), &config);
    assert!(gateway.terminate(), "the first run stops cleanly");
    // The demo's first run journaled its organization: the index has a journal to be
    // rebuilt from (what made the old open move it aside rather than call it damage).
    let config_path = dir.path().join("config.toml");
    let filler = fs.fill();

    let mut serve = Command::new(common::binary())
        .arg("--config")
        .arg(&config_path)
        .arg("serve")
        .env("EMCF_CONFIG", "")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = serve.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = serve.kill();
            panic!("serve started on a full disk");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = serve.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(!status.success(), "serve on a full disk: {said}");
    assert!(said.contains("the disk is full"), "{said}");
    assert_eq!(moved_aside(&state), Vec::<String>::new(), "{said}");

    std::fs::remove_file(filler).unwrap();
    let mut gateway = Gateway::start(dir.path(), &config);
    let listed = gateway.cli(&["org", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("demo"),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(gateway.terminate());
    assert_eq!(moved_aside(&state), Vec::<String>::new());
}
