//! `<state_dir>/last-backup.json`: the last good copy of this state directory (when, where,
//! the journal's head then) and how the `[backup] command` run after it went. Written by
//! `emcf-gateway backup` (atomically: `atomic_file`), read by the alerts and `/metrics`.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::io_error;
use super::manifest::Manifest;
use crate::admin::AdminError;
use crate::atomic_file::write_private;
use crate::msg;

/// The record's name in the state directory.
pub const LAST_BACKUP_FILE: &str = "last-backup.json";

/// How the `[backup] command` run after a copy went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupCommandRun {
    /// When it ended.
    pub at: DateTime<Utc>,
    /// It exited with status 0.
    pub ok: bool,
    /// Why not (its exit status, or why it could not start), in English.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The last good backup of a state directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastBackup {
    /// When the copy was taken (UTC).
    pub at: DateTime<Utc>,
    /// Its folder.
    pub path: PathBuf,
    /// The journal's head in it.
    pub head_sha256: String,
    /// Its journal's records.
    pub records: u64,
    /// Its register entries.
    pub entries: u64,
    /// The `[backup] command` after it, if one is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<BackupCommandRun>,
}

impl LastBackup {
    /// Reads the record of `state_dir`; `None` when no backup was ever recorded.
    pub fn read(state_dir: &Path) -> Result<Option<LastBackup>, AdminError> {
        let path = state_dir.join(LAST_BACKUP_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                AdminError::Invalid(msg!(
                    "backup-record-bad",
                    path = path.display().to_string(),
                    detail = e.to_string()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    /// Records the copy in `dir` as the last good backup of `state_dir`.
    pub(super) fn record(
        state_dir: &Path,
        dir: &Path,
        manifest: &Manifest,
    ) -> Result<(), AdminError> {
        LastBackup {
            at: manifest.created_at,
            path: dir.to_path_buf(),
            head_sha256: manifest.journal.head_sha256.clone(),
            records: manifest.journal.records,
            entries: manifest.journal.entries_total,
            command: None,
        }
        .write(state_dir)
    }

    /// Records how the command after the last copy went.
    pub fn record_command(state_dir: &Path, run: BackupCommandRun) -> Result<(), AdminError> {
        let Some(mut last) = LastBackup::read(state_dir)? else {
            return Ok(());
        };
        last.command = Some(run);
        last.write(state_dir)
    }

    fn write(&self, state_dir: &Path) -> Result<(), AdminError> {
        let path = state_dir.join(LAST_BACKUP_FILE);
        let mut bytes =
            serde_json::to_vec_pretty(self).map_err(|e| AdminError::Internal(e.to_string()))?;
        bytes.push(b'\n');
        write_private(&path, &bytes).map_err(|e| io_error(&path, &e))?;
        // Written by root (a backup run by hand): the service, which reads it, owns it.
        // SAFETY: geteuid takes no argument and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            use std::os::unix::fs::MetadataExt;
            let owner = std::fs::metadata(state_dir).map_err(|e| io_error(state_dir, &e))?;
            std::os::unix::fs::chown(&path, Some(owner.uid()), Some(owner.gid()))
                .map_err(|e| io_error(&path, &e))?;
        }
        Ok(())
    }
}
