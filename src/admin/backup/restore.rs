//! Putting a copy back into a state directory, the service stopped: the copy is verified,
//! the register in place is compared with it record by record, and what is there is moved
//! aside (`before-restore-<time>/`, never deleted) before the copy's files are written.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::files::{private_dir, sync_dir, write_new};
use super::manifest::{hash_file, inside, Manifest, Role};
use super::{io_error, verify};
use crate::admin::AdminError;
use crate::i18n::{Localized, Message};
use crate::msg;
use crate::store::{compare, journal_path, Comparison};

/// What to put back, where.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    /// The copy's folder.
    pub src: PathBuf,
    /// The state directory.
    pub state_dir: PathBuf,
    /// Put the configuration and its files back where they were (else beside the state).
    pub config_in_place: bool,
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

/// A restore under way: the state directory's lock is held, so no service starts on it.
pub struct Restore {
    state_dir: PathBuf,
    _lock: File,
}

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    /// Where what was there went.
    pub aside: Option<PathBuf>,
    /// Each configuration file: where it was, where it is now.
    pub config: Vec<(PathBuf, PathBuf)>,
}

impl Restore {
    /// Takes the lock of `state_dir` (created for its owner if missing); refused while a
    /// service holds it.
    pub fn begin(state_dir: &Path) -> Result<Restore, AdminError> {
        private_dir(state_dir)?;
        let path = state_dir.join("gateway.lock");
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let lock = options.open(&path).map_err(|e| io_error(&path, &e))?;
        match lock.try_lock() {
            Ok(()) => Ok(Restore {
                state_dir: state_dir.to_path_buf(),
                _lock: lock,
            }),
            Err(std::fs::TryLockError::WouldBlock) => Err(AdminError::Invalid(msg!(
                "restore-service-running",
                dir = state_dir.display().to_string()
            ))),
            Err(std::fs::TryLockError::Error(e)) => Err(io_error(&path, &e)),
        }
    }

    /// Verifies the copy in `src` and compares the register in place with it.
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
        let current = journal_path(&self.state_dir);
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

    /// Moves what is in the state directory aside and writes the copy's files.
    pub fn apply(&self, plan: &RestorePlan, manifest: &Manifest) -> Result<Restored, AdminError> {
        let stamp = plan.now.format("%Y%m%dT%H%M%SZ").to_string();
        let aside = self.move_aside(&stamp)?;
        let owner = owner_of(&self.state_dir);
        let mut config = Vec::new();
        for file in &manifest.files {
            let from = inside(&plan.src, &file.path).ok_or_else(|| bad_path(&file.path))?;
            let target = match file.role {
                Role::Journal | Role::State => {
                    let rest = file
                        .path
                        .strip_prefix("state/")
                        .ok_or_else(|| bad_path(&file.path))?;
                    inside(&self.state_dir, rest).ok_or_else(|| bad_path(&file.path))?
                }
                Role::Config | Role::Secret if plan.config_in_place => file.original.clone(),
                Role::Config | Role::Secret => {
                    let dir = self.state_dir.join(format!("restored-config-{stamp}"));
                    let rest = file.path.strip_prefix("config/").unwrap_or(&file.path);
                    inside(&dir, rest).ok_or_else(|| bad_path(&file.path))?
                }
            };
            // Files in the state directory belong to its owner; one put back in place keeps
            // the owner of the file it replaces.
            let in_state = target.starts_with(&self.state_dir);
            put(
                &from,
                &target,
                file.mode,
                &file.sha256,
                &stamp,
                owner.filter(|_| in_state),
            )?;
            if matches!(file.role, Role::Config | Role::Secret) {
                config.push((file.original.clone(), target));
            }
        }
        sync_dir(&self.state_dir)?;
        Ok(Restored { aside, config })
    }

    /// Moves every entry of the state directory but its lock, its admin socket and earlier
    /// restores' folders into `before-restore-<stamp>/`; `None` when there was nothing.
    fn move_aside(&self, stamp: &str) -> Result<Option<PathBuf>, AdminError> {
        let dir = &self.state_dir;
        let mut moving = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))? {
            let entry = entry.map_err(|e| io_error(dir, &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kept = matches!(name.as_str(), "gateway.lock" | "admin.sock")
                || name.starts_with("before-restore-")
                || name.starts_with("restored-config-");
            if !kept {
                moving.push(entry.file_name());
            }
        }
        if moving.is_empty() {
            return Ok(None);
        }
        let aside = dir.join(format!("before-restore-{stamp}"));
        private_dir(&aside)?;
        for name in moving {
            let to = aside.join(&name);
            std::fs::rename(dir.join(&name), &to).map_err(|e| io_error(&to, &e))?;
        }
        sync_dir(&aside)?;
        sync_dir(dir)?;
        Ok(Some(aside))
    }
}

fn bad_path(path: &str) -> AdminError {
    AdminError::Invalid(msg!(
        "backup-copy-bad",
        dir = "",
        detail = format!("path {path:?}")
    ))
}

/// The owner of `dir` when this process runs as root (files written by root are handed to
/// the service's user), else `None`.
fn owner_of(dir: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid takes no argument and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let meta = std::fs::metadata(dir).ok()?;
    root.then(|| (meta.uid(), meta.gid()))
}

/// Writes the copy's file `from` to `target` (folders created 0700), with `mode`, checked
/// against `sha256` once written; an existing file is kept as `<target>.before-restore-<stamp>`.
fn put(
    from: &Path,
    target: &Path,
    mode: u32,
    sha256: &str,
    stamp: &str,
    owner: Option<(u32, u32)>,
) -> Result<(), AdminError> {
    if let Some(parent) = target.parent() {
        if !parent.exists() {
            private_dir(parent)?;
            chown(parent, owner)?;
        }
    }
    let mut owner = owner;
    if target.exists() {
        if let (Some(_), Ok(meta)) = (owner_of(Path::new("/")), std::fs::metadata(target)) {
            use std::os::unix::fs::MetadataExt;
            owner = Some((meta.uid(), meta.gid()));
        }
        let mut kept = target.as_os_str().to_owned();
        kept.push(format!(".before-restore-{stamp}"));
        std::fs::rename(target, &kept).map_err(|e| io_error(target, &e))?;
    }
    let bytes = std::fs::read(from).map_err(|e| io_error(from, &e))?;
    write_new(target, &bytes, mode)?;
    chown(target, owner)?;
    if hash_file(target)?.0 != sha256 {
        return Err(AdminError::Invalid(msg!(
            "restore-written-differs",
            path = target.display().to_string()
        )));
    }
    if let Some(parent) = target.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

fn chown(path: &Path, owner: Option<(u32, u32)>) -> Result<(), AdminError> {
    match owner {
        Some((uid, gid)) => {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| io_error(path, &e))
        }
        None => Ok(()),
    }
}
