//! Backups of a state directory (`emcf-gateway backup` / `restore`, docs/backup.md): a
//! consistent copy taken while the service runs, verified before it counts, the last good
//! ones kept; and putting one back into a stopped service's state directory.
//!
//! A copy is a folder `emcf-backup-<UTC time>` in the destination:
//!
//! ```text
//! manifest.json                 what is in it (manifest.rs): head hash, counts, SHA-256 of each file
//! state/journal/journal.log     the journal up to its last whole record (store::copy_journal)
//! state/...                     every other file of the state directory (alerts, dashboard
//!                               sessions, the bundled simulator's memory...), not the index
//!                               (rebuilt from the journal at the first open), the lock or
//!                               the admin socket
//! config/config.toml            the configuration file the command read
//! config/secrets/<n>-<name>     the files it names: token, password and CA files, modes kept
//! ```
//!
//! It is written in a temporary folder `.emcf-backup-tmp-*` of the destination, every file
//! and folder fsynced, checked from its own bytes ([`manifest::verify`]), then renamed: a
//! folder named `emcf-backup-*` is always whole and verified. Only folders of that form are
//! ever removed (`prune.rs`), and never the newest. The last good copy is recorded in
//! `<state_dir>/last-backup.json` ([`LastBackup`]), which the alerts and `/metrics` read.

mod files;
mod last;
mod manifest;
mod prune;
mod restore;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

pub use last::{BackupCommandRun, LastBackup, LAST_BACKUP_FILE};
pub use manifest::{verify, Manifest, ManifestFile, MANIFEST_FILE};
pub use prune::{is_copy_name, prune, Pruned};
pub use restore::{Restore, RestorePlan, Restored, Standing, Unfinished};

use super::AdminError;
use crate::i18n::Localized;
use crate::msg;
use crate::store::{copy_journal, JournalSummary};

/// The prefix of a finished copy's folder.
pub const COPY_PREFIX: &str = "emcf-backup-";
/// The prefix of a copy being written.
pub const TEMP_PREFIX: &str = ".emcf-backup-tmp-";

/// What to copy and where.
#[derive(Debug, Clone)]
pub struct BackupPlan {
    /// The state directory.
    pub state_dir: PathBuf,
    /// The configuration file read, if any.
    pub config_file: Option<PathBuf>,
    /// The files the configuration names (tokens, passwords, CA).
    pub named_files: Vec<PathBuf>,
    /// The destination folder (created 0700 if missing).
    pub dest: PathBuf,
    /// How many good copies to keep.
    pub keep: u32,
    /// The journal's durable length as the running service said it (the copy stops there);
    /// `None` when no service runs: the state directory's lock is then held for the copy, so
    /// that none starts meanwhile.
    pub durable: Option<u64>,
}

/// A copy written and verified.
#[derive(Debug)]
pub struct Taken {
    /// Its folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Older copies removed (keep-N).
    pub removed: Vec<PathBuf>,
    /// Copy folders of the destination whose manifest could not be read (not counted).
    pub unreadable: Vec<PathBuf>,
    /// Why older copies could not all be removed (the copy is good all the same).
    pub prune_failed: Option<AdminError>,
}

/// A file-system failure at `path`, in words: a full disk is named as such (the disk that
/// holds `path`, not the register).
pub(crate) fn io_error(path: &Path, error: &std::io::Error) -> AdminError {
    use std::io::ErrorKind;
    let (path, reason) = (path.display().to_string(), error.message());
    AdminError::Invalid(match error.kind() {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            msg!("backup-disk-full", path = path, reason = reason)
        }
        _ => msg!("backup-io", path = path, reason = reason),
    })
}

/// A failure of the journal's copy into `to`: a full disk is the destination's (the live
/// journal is only read), anything else the register's.
fn journal_copy_error(to: &Path, error: crate::store::StoreError) -> AdminError {
    use std::io::ErrorKind;
    match error {
        crate::store::StoreError::Io(io)
            if matches!(io.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded) =>
        {
            io_error(to, &io)
        }
        other => other.into(),
    }
}

/// Takes a copy as [`BackupPlan`] says, verifies it, renames it into place, removes the
/// copies beyond `keep`, and records it as the last good backup of the state directory.
pub fn take(plan: &BackupPlan, now: DateTime<Utc>) -> Result<Taken, AdminError> {
    let journal = crate::store::journal_path(&plan.state_dir);
    if !journal.is_file() {
        return Err(AdminError::Invalid(msg!(
            "backup-no-journal",
            dir = plan.state_dir.display().to_string()
        )));
    }
    if plan.state_dir.join(crate::store::RESTORE_MARKER).exists() {
        return Err(AdminError::Store(
            crate::store::StoreError::RestoreUnfinished(plan.state_dir.clone()),
        ));
    }
    if files::within(&plan.dest, &plan.state_dir) {
        return Err(AdminError::Invalid(msg!(
            "backup-dest-in-state",
            dest = plan.dest.display().to_string(),
            dir = plan.state_dir.display().to_string()
        )));
    }
    let _state_lock = match plan.durable {
        Some(_) => None,
        None => Some(files::try_lock_state(&plan.state_dir)?.ok_or_else(|| {
            AdminError::Invalid(msg!(
                "backup-state-busy",
                dir = plan.state_dir.display().to_string()
            ))
        })?),
    };
    let created = !plan.dest.exists();
    files::private_dir(&plan.dest)?;
    if created {
        // The new destination's own entry, in its parent, is durable too.
        if let Some(parent) = plan.dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            files::sync_dir(parent)?;
        }
    }
    // Run as root: what it writes in the destination goes to the destination's owner (the
    // service's user), so that later backups run as that user can lock, prune and read.
    let owner = files::owner_of(&plan.dest);
    let _lock = files::lock_dest(&plan.dest, owner)?;
    // Under the lock no other backup writes here: a temporary folder is a dead run's.
    files::remove_dead_temps(&plan.dest)?;
    let stamp = now.format("%Y%m%dT%H%M%SZ").to_string();
    let temp = plan
        .dest
        .join(format!("{TEMP_PREFIX}{stamp}-{}", std::process::id()));
    let written = write_copy(plan, &temp, now).and_then(|()| files::give_tree(&temp, owner));
    let manifest = match written.and_then(|_| verify(&temp)) {
        Ok(manifest) => manifest,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(error);
        }
    };
    let dir = free_name(&plan.dest, &stamp);
    std::fs::rename(&temp, &dir).map_err(|e| io_error(&dir, &e))?;
    files::sync_dir(&plan.dest)?;
    LastBackup::record(&plan.state_dir, &dir, &manifest)?;
    let (pruned, prune_failed) = match prune(&plan.dest, plan.keep, &dir, &plan.state_dir) {
        Ok(pruned) => (pruned, None),
        Err(error) => (Pruned::default(), Some(error)),
    };
    Ok(Taken {
        dir,
        manifest,
        removed: pruned.removed,
        unreadable: pruned.unreadable,
        prune_failed,
    })
}

/// `emcf-backup-<stamp>`, or with `-2`, `-3`... if two copies are taken within a second.
fn free_name(dest: &Path, stamp: &str) -> PathBuf {
    let first = dest.join(format!("{COPY_PREFIX}{stamp}"));
    std::iter::once(first.clone())
        .chain((2..=101).map(|n| dest.join(format!("{COPY_PREFIX}{stamp}-{n}"))))
        .find(|candidate| !candidate.exists())
        .unwrap_or(first)
}

/// Writes every file of the copy into `temp` and its manifest.
fn write_copy(plan: &BackupPlan, temp: &Path, now: DateTime<Utc>) -> Result<(), AdminError> {
    files::private_dir(temp)?;
    let journal_dir = temp.join("state").join("journal");
    files::private_dir(&journal_dir)?;
    let journal_copy = journal_dir.join("journal.log");
    let summary: JournalSummary = copy_journal(&plan.state_dir, &journal_copy, plan.durable)
        .map_err(|e| journal_copy_error(&journal_copy, e))?;
    let original = crate::store::journal_path(&plan.state_dir);
    let mut listed = vec![files::listed(
        temp,
        &journal_copy,
        &original,
        manifest::Role::Journal,
    )?];
    listed.extend(files::copy_state(
        &plan.state_dir,
        &temp.join("state"),
        temp,
    )?);
    listed.extend(files::copy_config(
        plan.config_file.as_deref(),
        &plan.named_files,
        temp,
    )?);
    let state_dir = std::path::absolute(&plan.state_dir).unwrap_or(plan.state_dir.clone());
    let manifest = Manifest::new(now, &state_dir, summary, listed);
    manifest.write(temp)?;
    files::sync_tree(temp)
}

#[cfg(test)]
mod tests;
