//! A small tmpfs a test mounts (root), fills on demand and unmounts when dropped, even after a
//! failure: the full-disk tests of `tests/device/disk_full/`, `tests/operations/full_disk.rs`
//! and the store's unit tests (`src/store/embedded/tests/disk_full.rs`, which include this file too:
//! hence `needs` by its own path, not through a test binary's `common`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

// Its own copy of the module (not the binary's `common::needs`), so that the library's unit
// tests can include this file too.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../common/needs.rs"]
mod needs;

/// A tmpfs mounted on a directory.
pub struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` on `at` for `subject`; `None` when not root (skipped with a
    /// line saying so outside CI, a failure under `CI=true`).
    pub fn mount(at: &Path, size: &str, subject: &str) -> Option<Tmpfs> {
        if !needs::is_root() {
            needs::missing(
                subject,
                "root is needed to mount a small tmpfs",
                "run the tests as root; .ci/run does",
            );
            return None;
        }
        std::fs::create_dir_all(at).expect("mount point");
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .status()
            .expect("mount runs");
        assert!(status.success(), "mount -t tmpfs on {}", at.display());
        Some(Tmpfs {
            at: at.to_path_buf(),
        })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.at
    }

    /// Fills it with the file `filler` until the file system says it is full (any other
    /// error fails the test); returns the file (remove it to free the space).
    pub fn fill(&self) -> PathBuf {
        let path = self.at.join("filler");
        let mut file = std::fs::File::create(&path).expect("filler");
        let chunk = vec![0x5a_u8; 64 << 10];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        // The last bytes of the last page.
        while file.write(&[0x5a]).is_ok_and(|n| n > 0) {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}
