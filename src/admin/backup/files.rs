//! The files of a copy: which files of the state directory and of the configuration are
//! copied, each written new with its mode and fsynced, and the folders fsynced.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::io_error;
use super::manifest::{hash_file, ManifestFile, Role};
use crate::admin::AdminError;
use crate::atomic_file;
use crate::msg;

/// The entries of a state directory a copy leaves out: the index (rebuilt from the journal),
/// indexes kept aside, the lock, the admin socket, this record of the last backup, the
/// journal's folder (copied on its own, without the torn tails kept for forensics), what a
/// restore kept aside, and the temporary files of atomic writes.
pub(super) fn left_out(name: &str) -> bool {
    name.starts_with("index.sled")
        || name.starts_with("before-restore-")
        || name.starts_with("restored-config-")
        || name.starts_with(".restore-")
        || name == crate::store::RESTORE_MARKER
        || name.ends_with(".tmp")
        || matches!(
            name,
            "journal" | "gateway.lock" | "admin.sock" | super::LAST_BACKUP_FILE
        )
}

/// Whether `path` (which may not exist yet) is `dir` or inside it, links resolved.
pub(super) fn within(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = fs::canonicalize(dir) else {
        return false;
    };
    let path = absolute(path);
    // The deepest part of `path` that exists, resolved, and the rest as written.
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(found) = fs::canonicalize(existing) {
            break found;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return false,
        }
    };
    let full = rest.iter().rev().fold(resolved, |at, name| at.join(name));
    full.starts_with(dir)
}

/// Creates `dir` and its parents for the owner only (0700).
pub(super) fn private_dir(dir: &Path) -> Result<(), AdminError> {
    atomic_file::private_dir(dir).map_err(|e| io_error(dir, &e))
}

/// fsyncs the folder `dir`.
pub(super) fn sync_dir(dir: &Path) -> Result<(), AdminError> {
    atomic_file::sync_dir(dir).map_err(|e| io_error(dir, &e))
}

/// The owner of `dir` when this process runs as root (files written by root are handed to
/// the owner of the folder they are in: the service's user), else `None`.
pub(super) fn owner_of(dir: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid takes no argument and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let meta = fs::metadata(dir).ok()?;
    root.then(|| (meta.uid(), meta.gid()))
}

/// Gives `path` to `owner` (nothing when `None`).
pub(super) fn chown(path: &Path, owner: Option<(u32, u32)>) -> Result<(), AdminError> {
    match owner {
        Some((uid, gid)) => {
            std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| io_error(path, &e))
        }
        None => Ok(()),
    }
}

/// Gives `dir` and everything in it to `owner` (nothing when `None`).
pub(super) fn give_tree(dir: &Path, owner: Option<(u32, u32)>) -> Result<(), AdminError> {
    if owner.is_none() {
        return Ok(());
    }
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, &e))? {
        let entry = entry.map_err(|e| io_error(dir, &e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            give_tree(&entry.path(), owner)?;
        } else {
            chown(&entry.path(), owner)?;
        }
    }
    chown(dir, owner)
}

/// Takes `<dest>/.emcf-backup.lock` (given to `owner`): one backup at a time into a
/// destination.
pub(super) fn lock_dest(dest: &Path, owner: Option<(u32, u32)>) -> Result<File, AdminError> {
    let path = dest.join(".emcf-backup.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| io_error(&path, &e))?;
    chown(&path, owner)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(AdminError::Invalid(msg!(
            "backup-busy",
            dir = dest.display().to_string()
        ))),
        Err(fs::TryLockError::Error(e)) => Err(io_error(&path, &e)),
    }
}

/// Takes the state directory's `gateway.lock` (for a copy or a restore made while no service
/// runs: none starts meanwhile); `None` while a process holds it (a service, a command).
pub(super) fn try_lock_state(state_dir: &Path) -> Result<Option<File>, AdminError> {
    let path = state_dir.join("gateway.lock");
    let file = atomic_file::private_file()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| io_error(&path, &e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) => Err(io_error(&path, &e)),
    }
}

/// Removes the temporary folders (`.emcf-backup-tmp-*`) a backup that died left in `dest`.
pub(super) fn remove_dead_temps(dest: &Path) -> Result<(), AdminError> {
    for entry in fs::read_dir(dest).map_err(|e| io_error(dest, &e))? {
        let entry = entry.map_err(|e| io_error(dest, &e))?;
        let ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with(super::TEMP_PREFIX);
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let path = entry.path();
            fs::remove_dir_all(&path).map_err(|e| io_error(&path, &e))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to the new file `path` with `mode`, fsynced.
pub(super) fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), AdminError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode & 0o777);
    let mut out = options.open(path).map_err(|e| io_error(path, &e))?;
    // Whatever the umask: the original's mode.
    out.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode & 0o777))
        .and_then(|()| out.write_all(bytes))
        .and_then(|()| out.sync_all())
        .map_err(|e| io_error(path, &e))
}

/// Copies the file `from` to the new file `to` with its mode, fsynced.
pub(super) fn copy_file(from: &Path, to: &Path) -> Result<u32, AdminError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = fs::metadata(from).map_err(|e| io_error(from, &e))?;
    let mode = meta.permissions().mode() & 0o777;
    let bytes = fs::read(from).map_err(|e| io_error(from, &e))?;
    write_new(to, &bytes, mode)?;
    Ok(mode)
}

/// The manifest line of the copied file `at` (inside the copy `root`).
pub(super) fn listed(
    root: &Path,
    at: &Path,
    original: &Path,
    role: Role,
) -> Result<ManifestFile, AdminError> {
    use std::os::unix::fs::PermissionsExt;
    let (sha256, bytes) = hash_file(at)?;
    let mode = fs::metadata(at)
        .map_err(|e| io_error(at, &e))?
        .permissions()
        .mode()
        & 0o777;
    let relative = at.strip_prefix(root).unwrap_or(at);
    let path = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(ManifestFile {
        path,
        role,
        original: original.to_path_buf(),
        bytes,
        sha256,
        mode,
    })
}

/// Copies every file of the state directory `from` but those [`left_out`] into `to`,
/// folders included (regular files only: no socket, no link).
pub(super) fn copy_state(
    from: &Path,
    to: &Path,
    root: &Path,
) -> Result<Vec<ManifestFile>, AdminError> {
    let mut listed_files = Vec::new();
    copy_tree(from, to, root, true, &mut listed_files)?;
    Ok(listed_files)
}

fn copy_tree(
    from: &Path,
    to: &Path,
    root: &Path,
    top: bool,
    out: &mut Vec<ManifestFile>,
) -> Result<(), AdminError> {
    private_dir(to)?;
    let entries = fs::read_dir(from).map_err(|e| io_error(from, &e))?;
    let mut names: Vec<(PathBuf, String)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(from, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if top && left_out(&name) || name.ends_with(".tmp") {
            continue;
        }
        names.push((entry.path(), name));
    }
    names.sort();
    for (path, name) in names {
        let kind = fs::symlink_metadata(&path).map_err(|e| io_error(&path, &e))?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_tree(&path, &target, root, false, out)?;
        } else if kind.is_file() {
            copy_file(&path, &target)?;
            out.push(listed(root, &target, &path, Role::State)?);
        }
    }
    Ok(())
}

/// Copies the configuration file to `config/config.toml` and each file it names to
/// `config/secrets/<n>-<name>`, modes kept.
pub(super) fn copy_config(
    config: Option<&Path>,
    named: &[PathBuf],
    root: &Path,
) -> Result<Vec<ManifestFile>, AdminError> {
    let mut out = Vec::new();
    if config.is_none() && named.is_empty() {
        return Ok(out);
    }
    let dir = root.join("config");
    private_dir(&dir)?;
    if let Some(config) = config {
        let original = absolute(config);
        let target = dir.join("config.toml");
        copy_file(&original, &target)?;
        out.push(listed(root, &target, &original, Role::Config)?);
    }
    if !named.is_empty() {
        let secrets = dir.join("secrets");
        private_dir(&secrets)?;
        for (n, file) in named.iter().enumerate() {
            let original = absolute(file);
            let name = original
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "file".to_owned());
            let target = secrets.join(format!("{}-{name}", n + 1));
            copy_file(&original, &target)?;
            out.push(listed(root, &target, &original, Role::Secret)?);
        }
    }
    Ok(out)
}

/// `path` made absolute from the working folder (as the configuration was read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// fsyncs every folder under `dir` and `dir` itself (the files were fsynced when written).
pub(super) fn sync_tree(dir: &Path) -> Result<(), AdminError> {
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, &e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            sync_tree(&entry.path())?;
        }
    }
    sync_dir(dir)
}
