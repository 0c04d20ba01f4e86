//! A start on a full disk (issue 27): sled cannot write its files, which are not damaged.
//! `serve` refuses to start saying the disk is full, leaves the index where it is (never
//! `index.sled.corrupt-*`), and starts as before once space is freed. Real binary, its state
//! on a small tmpfs the test mounts (root; skipped outside CI otherwise).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, needs, Gateway};

/// A tmpfs of `size` mounted on `dir`, unmounted (lazily) when dropped, even after a failure.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success(), "mount -t tmpfs failed");
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes `path` until its file system is full.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0x5au8; 64 << 10];
    while file.write(&block).is_ok_and(|n| n > 0) {}
    while file.write(&[0x5a]).is_ok_and(|n| n > 0) {}
}

fn moved_aside(state: &Path) -> Vec<String> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("index.sled."))
        .collect()
}

#[test]
fn a_start_on_a_full_disk_says_so_and_keeps_the_index() {
    if !needs::is_root() {
        needs::missing(
            "a start on a full disk",
            "root (the test mounts a tmpfs)",
            "run the tests as root, as .ci/run does",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(&dir.path().join("fs"), "16m");
    let state = fs.0.join("state");
    let config = format!("state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\nlanguage = \"en\"\n");
    let mut gateway = Gateway::start(dir.path(), &config);
    assert!(gateway.terminate(), "the first run stops cleanly");
    // The demo's first run journaled its organization: the index has a journal to be
    // rebuilt from (what made the old open move it aside rather than call it damage).
    let config_path = dir.path().join("config.toml");
    fill(&fs.0.join("filler"));

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

    std::fs::remove_file(fs.0.join("filler")).unwrap();
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
