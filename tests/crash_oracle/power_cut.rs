//! Power cuts (issue 27): the gateway's state directory on an ext4 file system of its own, in a
//! loop file mounted by the harness (root), and each death a power cut of that file system
//! instead of a plain `kill -9`: the gateway frozen (`SIGSTOP`, see
//! [`Harness::cut_then_kill`] for why), `EXT4_IOC_SHUTDOWN` with `EXT4_GOING_FLAGS_NOLOGFLUSH`
//! (the file system stops at once: what was fsynced, i.e. committed to ext4's own journal,
//! stays; the running transaction, dirty pages and unsynced metadata are dropped), `kill -9`,
//! then `umount` and `mount` again (ext4 replays its journal, as at a boot after a power
//! loss), and the next life. The simulator's fiscal memory (`sim.json`) and the gateway's log
//! live beside the image, outside the cut file system: the box keeps what it finalized, as a
//! real box would.
//!
//! A cut lands under load (a random 0..`load_kill_max` after the clients are let in) or, one
//! life in [`STARTUP_EVERY`], during the start-up (while the store opens, sled replays and the
//! open intents are settled from C1h). After each restart the oracle of `mod.rs` is checked
//! once the gateway is ready (its own reconciliation done), then `log verify`; after the last
//! cut the final checks. Before each cut an unsynced canary file is written beside the state:
//! after the remount its content must be gone for most cuts, which shows that the cut really
//! drops what was not fsynced (a cut that did not take would make the test pass vacuously).
//!
//! The harness must run as root with `mkfs.ext4`, `mount` and `umount` (Debian's e2fsprogs,
//! mount); [`missing_requirement`] says what is missing. The file system is unmounted (and its
//! loop device detached) by [`LoopFs`]'s `Drop`, even when the run fails.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::Rng;

use super::{kill9, Harness, Life};

/// `EXT4_IOC_SHUTDOWN`: `_IOR('X', 125, __u32)`.
const EXT4_IOC_SHUTDOWN: u64 = 0x8004_587D;
/// Shut down without flushing ext4's journal: the power cut.
const EXT4_GOING_FLAGS_NOLOGFLUSH: u32 = 2;
/// Size of the file system's image (sparse).
const IMAGE_MIB: u64 = 128;
/// The usual `load_kill_max` of a power-cut run: long enough for several invoices per life.
pub const LOAD_CUT_MAX: Duration = Duration::from_millis(1500);
/// One life in this many is cut during its start-up (never the first).
pub const STARTUP_EVERY: usize = 4;
/// The unsynced file written just before each cut.
const CANARY: &str = "unsynced-canary";

/// How life `life` of a power-cut run ends.
pub fn death_of(life: usize) -> &'static str {
    if cut_in_startup(life) {
        "power cut during the start-up"
    } else {
        "power cut under load"
    }
}

fn cut_in_startup(life: usize) -> bool {
    life % STARTUP_EVERY == STARTUP_EVERY - 2
}

/// What this machine lacks to cut power under a file system, if anything.
pub fn missing_requirement() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map_or(true, |meta| meta.uid() != 0) {
        return Some("not root (a loop mount and EXT4_IOC_SHUTDOWN need root)".to_string());
    }
    for (program, package) in [
        ("mkfs.ext4", "e2fsprogs"),
        ("mount", "mount"),
        ("umount", "mount"),
        ("losetup", "mount"),
    ] {
        let runs = command(program)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !runs {
            return Some(format!("no {program} (Debian's {package})"));
        }
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop devices)".to_string());
    }
    None
}

/// An ext4 file system in a loop file, mounted; unmounted (and its loop device detached) on
/// drop.
pub struct LoopFs {
    image: PathBuf,
    mountpoint: PathBuf,
    mounted: bool,
}

impl LoopFs {
    /// Makes an ext4 file system in `image` and mounts it on `mountpoint` (created).
    pub fn create(image: &Path, mountpoint: &Path) -> Result<LoopFs, String> {
        File::create(image)
            .and_then(|file| file.set_len(IMAGE_MIB << 20))
            .map_err(|e| format!("{}: {e}", image.display()))?;
        run("mkfs.ext4", &[&"-q", &"-F", &"-m", &"0", &image])?;
        std::fs::create_dir_all(mountpoint)
            .map_err(|e| format!("{}: {e}", mountpoint.display()))?;
        let mut fs = LoopFs {
            image: image.to_path_buf(),
            mountpoint: mountpoint.to_path_buf(),
            mounted: false,
        };
        fs.mount()?;
        // The state directory is private, as the gateway creates it.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(mountpoint, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", mountpoint.display()))?;
        Ok(fs)
    }

    fn mount(&mut self) -> Result<(), String> {
        run(
            "mount",
            &[
                &"-t",
                &"ext4",
                &"-o",
                &"loop",
                &self.image,
                &self.mountpoint,
            ],
        )?;
        self.mounted = true;
        Ok(())
    }

    /// Unmounts, retrying while the file system is busy (a killed process's last file
    /// handles).
    fn unmount(&mut self) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..50 {
            match run("umount", &[&self.mountpoint]) {
                Ok(()) => {
                    self.mounted = false;
                    return Ok(());
                }
                Err(error) => last = error,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(last)
    }

    /// Writes the canary (not fsynced), then cuts the power: `EXT4_IOC_SHUTDOWN` with
    /// `NOLOGFLUSH`. Checks that the file system refuses a new file afterwards.
    pub fn cut(&self) -> Result<(), String> {
        let canary = self.mountpoint.join(CANARY);
        File::create(&canary)
            .and_then(|mut file| file.write_all(b"written, never fsynced"))
            .map_err(|e| format!("canary: {e}"))?;
        let root = File::open(&self.mountpoint)
            .map_err(|e| format!("{}: {e}", self.mountpoint.display()))?;
        let flags: u32 = EXT4_GOING_FLAGS_NOLOGFLUSH;
        // SAFETY: the ioctl reads one u32 from `flags`, which lives across the call; `root` is
        // an open descriptor of the file system's root directory.
        let done = unsafe { libc::ioctl(root.as_raw_fd(), EXT4_IOC_SHUTDOWN as _, &flags) };
        if done != 0 {
            return Err(format!(
                "EXT4_IOC_SHUTDOWN: {}",
                std::io::Error::last_os_error()
            ));
        }
        if File::create(self.mountpoint.join("after-the-cut")).is_ok() {
            return Err("the file system still takes writes after EXT4_IOC_SHUTDOWN".to_string());
        }
        Ok(())
    }

    /// Unmounts the cut file system and mounts it again (ext4 replays its journal); whether
    /// the canary's unsynced content was lost, as a power cut loses it.
    pub fn remount(&mut self) -> Result<bool, String> {
        self.unmount()?;
        self.mount()?;
        let canary = self.mountpoint.join(CANARY);
        let survived = std::fs::read(&canary).is_ok_and(|bytes| !bytes.is_empty());
        let _ = std::fs::remove_file(&canary);
        Ok(!survived)
    }

    /// Files whose name starts with `prefix` in `folder` of the file system.
    fn count(&self, folder: &str, prefix: &str) -> usize {
        std::fs::read_dir(self.mountpoint.join(folder)).map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
                .count()
        })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted && self.unmount().is_err() {
            // Still busy: detach it from the tree now, the kernel finishes when it can.
            let _ = run("umount", &[&"-l", &self.mountpoint]);
        }
        // `mount -o loop` detaches its loop device at the unmount; one left behind (a lazy
        // unmount) is detached here.
        if let Ok(out) = command("losetup")
            .arg("-j")
            .arg(&self.image)
            .stderr(Stdio::null())
            .output()
        {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((device, _)) = line.split_once(':') {
                    let _ = run("losetup", &[&"-d", &device]);
                }
            }
        }
    }
}

/// `program`, looked for in the `PATH` and then in `/usr/sbin` and `/sbin` (where Debian
/// puts `mkfs.ext4` and `losetup`, not always in a user's `PATH`).
fn command(program: &str) -> Command {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut command = Command::new(program);
    command.env("PATH", format!("{path}:/usr/sbin:/sbin"));
    command
}

/// Runs `program args`; `Err` with its stderr when it fails.
fn run(program: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Result<(), String> {
    let out = command(program)
        .args(args.iter().map(|arg| arg.as_ref()))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`{program} {}` failed ({}): {}",
        args.iter()
            .map(|arg| arg.as_ref().to_string_lossy().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

impl Harness {
    /// The power-cut run: the state directory on its own ext4 file system, `kills` cuts.
    pub(super) async fn run_power_cuts(&mut self) -> Result<(), String> {
        // The guard: unmounted when it goes, whatever the outcome.
        let mut fs = LoopFs::create(&self.dir.join("state.img"), &self.dir.join("state"))?;
        let outcome = self.cuts(&mut fs).await;
        self.report.torn_tails = fs.count("journal", "torn-");
        self.report.index_set_aside = fs.count(".", "index.sled.");
        outcome
    }

    async fn cuts(&mut self, fs: &mut LoopFs) -> Result<(), String> {
        let started = Instant::now();
        self.close().await;
        for cut in 0..self.settings.kills {
            let mut life = self.spawn(None)?;
            if cut_in_startup(cut) {
                let outcome = self.startup_cut(&mut life, fs).await;
                self.close().await;
                outcome?;
            } else {
                let addr = self.checked_under_load(&mut life, cut, false).await?;
                if let Err(error) = self.cli(&["log", "verify"]).await {
                    self.report.violations.push(error);
                }
                self.open(addr);
                let outcome = self.load_cut(&mut life, fs).await;
                self.close().await;
                outcome?;
            }
            // A killed process whose exit the runtime has not reaped yet keeps the file system
            // busy: wait for it.
            let _ = life.child.wait().await;
            if fs.remount()? {
                self.report.unsynced_lost += 1;
            }
            self.report.kills += 1;
            let every = self.settings.progress_every;
            if every > 0 && (cut + 1) % every == 0 {
                self.progress(started);
            }
        }
        self.last_life().await
    }

    /// Cuts a random 0..`load_kill_max` after the clients were let in.
    async fn load_cut(&mut self, life: &mut Life, fs: &LoopFs) -> Result<(), String> {
        let max = self.settings.load_kill_max.as_millis() as u64;
        let delay = self.rng.gen_range(0..=max);
        tokio::time::sleep(Duration::from_millis(delay)).await;
        if let Ok(Some(status)) = life.child.try_wait() {
            return Err(format!(
                "gateway died by itself under load: {status}\n{}",
                self.log_tail()
            ));
        }
        self.cut_then_kill(life, fs).await
    }

    /// Cuts a random moment into the start-up (`startup_moment`); the clients come in as
    /// soon as it listens.
    async fn startup_cut(&mut self, life: &mut Life, fs: &LoopFs) -> Result<(), String> {
        let moment = self.startup_moment();
        if let Some(receiver) = life.listening.as_mut() {
            if let Ok(Ok(addr)) = tokio::time::timeout_at(moment, receiver).await {
                life.listening = None;
                life.addr = Some(addr);
                self.open(addr);
            }
        }
        tokio::time::sleep_until(moment).await;
        if let Ok(Some(status)) = life.child.try_wait() {
            return Err(format!(
                "gateway died by itself during its start-up: {status}\n{}",
                self.log_tail()
            ));
        }
        self.report.startup_cuts += 1;
        self.cut_then_kill(life, fs).await
    }

    /// The power cut as the gateway would live it: frozen (`SIGSTOP`), the file system cut,
    /// then `kill -9`. Frozen first because `EXT4_IOC_SHUTDOWN` can acknowledge an fsync in
    /// flight at its instant without making it durable (measured on Linux 6.18: a plain
    /// append-and-fdatasync loop saw 3 of 15 cuts acknowledge a write that the remount did not
    /// have): a process living on after the cut could act on an acknowledgement that no real
    /// power cut gives (answer 200, let the box finalize the next invoice). A thread inside a
    /// system call at the cut stops when it returns, before it can act on its result.
    async fn cut_then_kill(&mut self, life: &mut Life, fs: &LoopFs) -> Result<(), String> {
        let pid = life
            .child
            .id()
            .and_then(|pid| libc::pid_t::try_from(pid).ok())
            .ok_or("the gateway has no pid")?;
        // SAFETY: kill(2) only sends a signal, to the gateway this harness started and has not
        // reaped yet (so the pid is still its own).
        if unsafe { libc::kill(pid, libc::SIGSTOP) } != 0 {
            return Err(format!("SIGSTOP: {}", std::io::Error::last_os_error()));
        }
        let cut = fs.cut();
        if cut.is_ok() {
            self.report.power_cuts += 1;
        }
        kill9(life).await?;
        cut
    }
}
