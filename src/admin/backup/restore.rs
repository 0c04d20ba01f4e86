//! Putting a copy back into a state directory, the service stopped: the copy is verified,
//! the register in place is compared with it record by record, the copy's files are staged
//! in `<state>/.restore-<time>/` (written, fsynced, checked), then a marker
//! ([`RESTORE_MARKER`]) is written, what is there is moved aside (`before-restore-<time>/`,
//! never deleted), the staged files are renamed into place, and the marker removed last.
//! While the marker is there no store opens the state directory, and a new `restore`
//! redoes the whole thing (what a dead run left in place is moved aside again).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::files::{chown, owner_of, private_dir, sync_dir, sync_tree, try_lock_state, write_new};
use super::manifest::{inside, Manifest, Role};
use super::{io_error, verify};
use crate::admin::AdminError;
use crate::atomic_file::write_private;
use crate::i18n::{Localized, Message};
use crate::msg;
use crate::store::{compare, journal_path, summarize, Comparison, RESTORE_MARKER};

/// The prefix of a restore's staging folder in the state directory.
const STAGING_PREFIX: &str = ".restore-";

/// What to put back, where.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    /// The copy's folder.
    pub src: PathBuf,
    /// The state directory.
    pub state_dir: PathBuf,
    /// Put the configuration and its files back where they were (else beside the state).
    pub config_in_place: bool,
    /// The paths the current configuration names (its own file and the files it names):
    /// with `config_in_place`, the only paths written outside the state directory.
    pub config_paths: Vec<PathBuf>,
    /// Now (names what is moved aside).
    pub now: DateTime<Utc>,
}

/// How the register in place stands against the copy.
#[derive(Debug, Clone)]
pub enum Standing {
    /// No register, or an empty one.
    Empty,
    /// The copy holds every record of it: nothing is lost.
    Held(Comparison),
    /// It has records the copy lacks.
    Loses(Comparison),
    /// It cannot be read (why): what it holds is unknown.
    Unreadable(Message),
}

/// What the marker of a restore under way says (in the state directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unfinished {
    /// The copy being restored.
    pub copy: PathBuf,
    /// When that restore began.
    pub started_at: DateTime<Utc>,
    /// Where it moved what was there (`before-restore-<time>`, in the state directory).
    pub aside: String,
}

/// A restore under way: the state directory's lock is held, so no service starts on it.
pub struct Restore {
    state_dir: PathBuf,
    unfinished: Option<Unfinished>,
    _lock: File,
}

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    /// Where what was there went.
    pub aside: Option<PathBuf>,
    /// Each configuration file: where it was, where it is now.
    pub config: Vec<(PathBuf, PathBuf)>,
    /// Configuration files not put back in place: the current configuration does not name
    /// their path (they are beside the state, in `config`).
    pub not_in_place: Vec<PathBuf>,
}

impl Restore {
    /// Takes the lock of `state_dir` (created for its owner if missing); refused while a
    /// service holds it.
    pub fn begin(state_dir: &Path) -> Result<Restore, AdminError> {
        private_dir(state_dir)?;
        let Some(lock) = try_lock_state(state_dir)? else {
            return Err(AdminError::Invalid(msg!(
                "restore-service-running",
                dir = state_dir.display().to_string()
            )));
        };
        Ok(Restore {
            state_dir: state_dir.to_path_buf(),
            unfinished: read_marker(state_dir)?,
            _lock: lock,
        })
    }

    /// The restore that began here and did not finish, if one did not.
    pub fn unfinished(&self) -> Option<&Unfinished> {
        self.unfinished.as_ref()
    }

    /// Verifies the copy in `src` and compares the register in place with it (after a
    /// restore that did not finish: the register it moved aside, if it had moved it).
    pub fn assess(&self, src: &Path) -> Result<(Manifest, Standing), AdminError> {
        // What is in the state directory is moved aside before the copy is read.
        if super::files::within(src, &self.state_dir) {
            return Err(AdminError::Invalid(msg!(
                "restore-src-in-state",
                src = src.display().to_string(),
                dir = self.state_dir.display().to_string()
            )));
        }
        let manifest = verify(src)?;
        let mut current = journal_path(&self.state_dir);
        if let Some(unfinished) = &self.unfinished {
            let before = journal_path(&self.state_dir.join(&unfinished.aside));
            if before.is_file() {
                current = before;
            }
        }
        let len = match std::fs::metadata(&current) {
            Ok(meta) => meta.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io_error(&current, &e)),
        };
        if len == 0 {
            return Ok((manifest, Standing::Empty));
        }
        let standing = match compare(&current, &Manifest::journal_in(src)) {
            Ok(c) if c.copy_holds_current() => Standing::Held(c),
            Ok(c) => Standing::Loses(c),
            Err(error) => Standing::Unreadable(error.message()),
        };
        Ok((manifest, standing))
    }

    /// Stages the copy's files, then (marker written) moves what is in the state directory
    /// aside, renames the staged files into place, and removes the marker; then, with
    /// `config_in_place`, puts back the configuration files the current one names.
    pub fn apply(&self, plan: &RestorePlan, manifest: &Manifest) -> Result<Restored, AdminError> {
        let dir = &self.state_dir;
        let stamp = free_stamp(dir, plan);
        let owner = owner_of(dir);
        if plan.config_in_place {
            // Refused before anything is written: not after the state is in place.
            for file in &manifest.files {
                let config = matches!(file.role, Role::Config | Role::Secret);
                if config && plan.config_paths.contains(&file.original) {
                    writable_folder_of(&file.original)?;
                }
            }
        }
        remove_dead_staging(dir)?;
        let staging = dir.join(format!("{STAGING_PREFIX}{stamp}"));
        let staged = self.stage(plan, manifest, &staging, &stamp, owner);
        let mut config = match staged {
            Ok(config) => config,
            Err(error) => {
                // Nothing in place was touched: only the staging folder goes.
                let _ = std::fs::remove_dir_all(&staging);
                return Err(error);
            }
        };
        // The folder what is in place goes to, named before the marker names it: a second
        // attempt after a dead one never writes into the first one's folder (`free_stamp`).
        let aside_name = format!("before-restore-{stamp}");
        // After a dead restore the register that was there is in its folder: the marker keeps
        // naming that one, and so does the answer.
        let first_aside = self.unfinished.as_ref().map(|u| u.aside.clone());
        let marker = Unfinished {
            copy: plan.src.clone(),
            started_at: plan.now,
            aside: first_aside.clone().unwrap_or_else(|| aside_name.clone()),
        };
        write_marker(dir, &marker, owner)?;
        let moved = self.move_aside(&aside_name)?;
        let aside = match first_aside.map(|name| dir.join(name)) {
            Some(first) if first.is_dir() => Some(first),
            _ => moved,
        };
        crate::failpoint::hit("restore_after_aside");
        for entry in std::fs::read_dir(&staging).map_err(|e| io_error(&staging, &e))? {
            let entry = entry.map_err(|e| io_error(&staging, &e))?;
            let to = dir.join(entry.file_name());
            if to.exists() {
                return Err(io_error(
                    &to,
                    &std::io::Error::from(std::io::ErrorKind::AlreadyExists),
                ));
            }
            std::fs::rename(entry.path(), &to).map_err(|e| io_error(&to, &e))?;
        }
        std::fs::remove_dir(&staging).map_err(|e| io_error(&staging, &e))?;
        sync_dir(dir)?;
        let path = dir.join(RESTORE_MARKER);
        std::fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
        sync_dir(dir)?;
        // The configuration beside the state is now in `restored-config-<stamp>/`.
        for (_, at) in &mut config {
            if let Ok(rest) = at.strip_prefix(&staging) {
                *at = dir.join(rest);
            }
        }
        let mut not_in_place = Vec::new();
        if plan.config_in_place {
            for (original, at) in &mut config {
                if !plan.config_paths.contains(original) {
                    not_in_place.push(original.clone());
                    continue;
                }
                put_in_place(at, original, &stamp)?;
                *at = original.clone();
            }
        }
        Ok(Restored {
            aside,
            config,
            not_in_place,
        })
    }

    /// Writes every file of the copy into `staging` as it will stand in the state directory
    /// (the configuration in `restored-config-<stamp>/`), each checked against the manifest
    /// while it is copied, the journal read again to the manifest's head, everything fsynced.
    /// Each configuration file: where it was, where it is staged.
    fn stage(
        &self,
        plan: &RestorePlan,
        manifest: &Manifest,
        staging: &Path,
        stamp: &str,
        owner: Option<(u32, u32)>,
    ) -> Result<Vec<(PathBuf, PathBuf)>, AdminError> {
        private_dir(staging)?;
        chown(staging, owner)?;
        let mut config = Vec::new();
        for file in &manifest.files {
            let from = inside(&plan.src, &file.path).ok_or_else(|| bad_path(&file.path))?;
            let rest = match file.role {
                Role::Journal | Role::State => file.path.strip_prefix("state/"),
                Role::Config | Role::Secret => file.path.strip_prefix("config/"),
            }
            .ok_or_else(|| bad_path(&file.path))?;
            let rest = match file.role {
                Role::Journal | Role::State => rest.to_owned(),
                Role::Config | Role::Secret => format!("restored-config-{stamp}/{rest}"),
            };
            let target = inside(staging, &rest).ok_or_else(|| bad_path(&file.path))?;
            make_parents(staging, &target, owner)?;
            let sha256 = copy_hashed(&from, &target, file.mode)?;
            chown(&target, owner)?;
            if sha256 != file.sha256 {
                return Err(AdminError::Invalid(msg!(
                    "restore-written-differs",
                    path = target.display().to_string()
                )));
            }
            if matches!(file.role, Role::Config | Role::Secret) {
                config.push((file.original.clone(), target));
            }
        }
        let staged_journal = journal_path(staging);
        let summary = summarize(&staged_journal)?;
        if summary.head_sha256 != manifest.journal.head_sha256 {
            return Err(AdminError::Invalid(msg!(
                "restore-written-differs",
                path = staged_journal.display().to_string()
            )));
        }
        sync_tree(staging)?;
        Ok(config)
    }

    /// Moves every entry of the state directory but its lock, its admin socket, the
    /// restore's marker and staging, and earlier restores' folders into `<name>/`; `None`
    /// when there was nothing.
    fn move_aside(&self, name: &str) -> Result<Option<PathBuf>, AdminError> {
        let dir = &self.state_dir;
        let mut moving = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))? {
            let entry = entry.map_err(|e| io_error(dir, &e))?;
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let kept = matches!(file_name.as_str(), "gateway.lock" | "admin.sock")
                || file_name == RESTORE_MARKER
                || file_name.starts_with(STAGING_PREFIX)
                || file_name.starts_with("before-restore-")
                || file_name.starts_with("restored-config-");
            if !kept {
                moving.push(entry.file_name());
            }
        }
        if moving.is_empty() {
            return Ok(None);
        }
        let aside = dir.join(name);
        if aside.exists() {
            return Err(io_error(
                &aside,
                &std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            ));
        }
        private_dir(&aside)?;
        chown(&aside, owner_of(dir))?;
        for entry in moving {
            let to = aside.join(&entry);
            std::fs::rename(dir.join(&entry), &to).map_err(|e| io_error(&to, &e))?;
        }
        sync_dir(&aside)?;
        sync_dir(dir)?;
        Ok(Some(aside))
    }
}

/// The name of this restore's folders and kept files: its time to the second
/// (`20261126T120000Z`), or that with `-2`, `-3`... when an earlier restore in the same
/// second left a name with it, so that nothing this one sets aside or writes
/// (`before-restore-<stamp>/`, `restored-config-<stamp>/`, `.restore-<stamp>/`, and with
/// `config_in_place` each `<file>.before-restore-<stamp>`) lands on what an earlier one kept.
fn free_stamp(dir: &Path, plan: &RestorePlan) -> String {
    let second = plan.now.format("%Y%m%dT%H%M%SZ").to_string();
    let taken = |path: &Path| path.symlink_metadata().is_ok();
    let free = |stamp: &String| {
        let in_state = ["before-restore-", "restored-config-", STAGING_PREFIX]
            .iter()
            .any(|prefix| taken(&dir.join(format!("{prefix}{stamp}"))));
        let in_place = plan.config_in_place
            && plan.config_paths.iter().any(|file| {
                let mut kept = file.as_os_str().to_owned();
                kept.push(format!(".before-restore-{stamp}"));
                taken(Path::new(&kept))
            });
        !in_state && !in_place
    };
    std::iter::once(second.clone())
        .chain((2..).map(|n| format!("{second}-{n}")))
        .find(free)
        .unwrap_or(second)
}

/// The marker of a restore that did not finish in `state_dir`, if there is one.
fn read_marker(state_dir: &Path) -> Result<Option<Unfinished>, AdminError> {
    let path = state_dir.join(RESTORE_MARKER);
    match std::fs::read(&path) {
        // Written atomically, so a marker that does not read is damage: where the register
        // that was there went is not known, and nothing is decided without it.
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|error| {
            AdminError::Invalid(msg!(
                "restore-marker-bad",
                path = path.display().to_string(),
                dir = state_dir.display().to_string(),
                detail = error.to_string()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(&path, &e)),
    }
}

/// Writes the marker (atomically, fsynced with its folder) before anything in place moves.
fn write_marker(
    state_dir: &Path,
    marker: &Unfinished,
    owner: Option<(u32, u32)>,
) -> Result<(), AdminError> {
    let path = state_dir.join(RESTORE_MARKER);
    let mut bytes =
        serde_json::to_vec_pretty(marker).map_err(|e| AdminError::Internal(e.to_string()))?;
    bytes.push(b'\n');
    write_private(&path, &bytes).map_err(|e| io_error(&path, &e))?;
    chown(&path, owner)
}

/// Removes the staging folders of restores that died (copies of a copy, still in the copy).
fn remove_dead_staging(state_dir: &Path) -> Result<(), AdminError> {
    for entry in std::fs::read_dir(state_dir).map_err(|e| io_error(state_dir, &e))? {
        let entry = entry.map_err(|e| io_error(state_dir, &e))?;
        let ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX);
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let path = entry.path();
            std::fs::remove_dir_all(&path).map_err(|e| io_error(&path, &e))?;
        }
    }
    Ok(())
}

fn bad_path(path: &str) -> AdminError {
    AdminError::Invalid(msg!(
        "backup-copy-bad",
        dir = "",
        detail = format!("path {path:?}")
    ))
}

/// Checks that this process may write in the folder of `path` (a configuration file put
/// back in place).
fn writable_folder_of(path: &Path) -> Result<(), AdminError> {
    use std::os::unix::ffi::OsStrExt;
    let folder = path.parent().unwrap_or(Path::new("/"));
    let refused = || {
        AdminError::Invalid(msg!(
            "restore-config-not-writable",
            path = path.display().to_string()
        ))
    };
    let c_path = std::ffi::CString::new(folder.as_os_str().as_bytes()).map_err(|_| refused())?;
    // SAFETY: access reads the NUL-terminated path and writes nothing.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(refused())
    }
}

/// Creates the folders between `root` and `target` (0700, given to `owner`).
fn make_parents(root: &Path, target: &Path, owner: Option<(u32, u32)>) -> Result<(), AdminError> {
    let Some(parent) = target.parent() else {
        return Ok(());
    };
    if parent == root || parent.exists() {
        return Ok(());
    }
    make_parents(root, parent, owner)?;
    private_dir(parent)?;
    chown(parent, owner)
}

/// Copies `from` to the new file `to` with `mode`, fsynced; the SHA-256 of what was copied.
fn copy_hashed(from: &Path, to: &Path, mode: u32) -> Result<String, AdminError> {
    struct Hashing<W> {
        out: W,
        digest: Sha256,
    }
    impl<W: Write> Write for Hashing<W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.out.write(buf)?;
            self.digest.update(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.out.flush()
        }
    }
    let mut input = File::open(from).map_err(|e| io_error(from, &e))?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode & 0o777);
    let out = options.open(to).map_err(|e| io_error(to, &e))?;
    // Whatever the umask: the original's mode.
    out.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode & 0o777))
        .map_err(|e| io_error(to, &e))?;
    let mut hashing = Hashing {
        out,
        digest: Sha256::new(),
    };
    std::io::copy(&mut input, &mut hashing).map_err(|e| io_error(to, &e))?;
    hashing.out.sync_all().map_err(|e| io_error(to, &e))?;
    Ok(hex::encode(hashing.digest.finalize()))
}

/// Puts the restored configuration file `from` back at `target`, a path the current
/// configuration names: a file there is kept as `<target>.before-restore-<stamp>` and the new
/// one gets its owner; the folder is fsynced.
fn put_in_place(from: &Path, target: &Path, stamp: &str) -> Result<(), AdminError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(from).map_err(|e| io_error(from, &e))?;
    let mode = meta.permissions().mode() & 0o777;
    let mut owner = None;
    if let Ok(there) = std::fs::metadata(target) {
        if owner_of(Path::new("/")).is_some() {
            owner = Some((there.uid(), there.gid()));
        }
        let mut kept = target.as_os_str().to_owned();
        kept.push(format!(".before-restore-{stamp}"));
        std::fs::rename(target, &kept).map_err(|e| io_error(target, &e))?;
    }
    let bytes = std::fs::read(from).map_err(|e| io_error(from, &e))?;
    write_new(target, &bytes, mode)?;
    chown(target, owner)?;
    if let Some(parent) = target.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}
