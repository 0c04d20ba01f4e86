//! `manifest.json`: what a copy holds, and the check of a copy against it ([`verify`]).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::io_error;
use crate::admin::AdminError;
use crate::msg;
use crate::store::{summarize, EntryTally, JournalSummary};

/// The manifest's name in a copy.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest format this version writes and reads.
pub const FORMAT: u32 = 1;
/// Where the journal is in a copy.
pub const JOURNAL_IN_COPY: &str = "state/journal/journal.log";

/// What a file of a copy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The journal.
    Journal,
    /// Another file of the state directory.
    State,
    /// The configuration file.
    Config,
    /// A file the configuration names (token, password, CA).
    Secret,
}

/// One file of a copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Its place in the copy, `/`-separated, relative.
    pub path: String,
    /// What it is.
    pub role: Role,
    /// Where it was copied from.
    pub original: PathBuf,
    /// Its length.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of its bytes.
    pub sha256: String,
    /// Its permission bits (e.g. 0o600), kept when it is put back.
    pub mode: u32,
}

/// The journal as the manifest says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFacts {
    /// Records.
    pub records: u64,
    /// Byte length.
    pub bytes: u64,
    /// The journal's head: SHA-256 of its last record.
    pub head_sha256: String,
    /// Register entries, all organizations and both environments.
    pub entries_total: u64,
    /// Register entries per organization.
    pub entries: BTreeMap<String, EntryTally>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The gateway version that took the copy.
    pub gateway_version: String,
    /// When (UTC).
    pub created_at: DateTime<Utc>,
    /// The state directory copied.
    pub state_dir: PathBuf,
    /// The journal.
    pub journal: JournalFacts,
    /// Every file, the journal first.
    pub files: Vec<ManifestFile>,
}

impl Manifest {
    pub(super) fn new(
        now: DateTime<Utc>,
        state_dir: &Path,
        summary: JournalSummary,
        files: Vec<ManifestFile>,
    ) -> Manifest {
        Manifest {
            format: FORMAT,
            gateway_version: env!("CARGO_PKG_VERSION").to_owned(),
            created_at: now,
            state_dir: state_dir.to_path_buf(),
            journal: facts(&summary),
            files,
        }
    }

    pub(super) fn write(&self, dir: &Path) -> Result<(), AdminError> {
        let path = dir.join(MANIFEST_FILE);
        let mut text =
            serde_json::to_vec_pretty(self).map_err(|e| AdminError::Internal(e.to_string()))?;
        text.push(b'\n');
        super::files::write_new(&path, &text, 0o600)
    }

    /// The copy's journal.
    pub fn journal_in(dir: &Path) -> PathBuf {
        dir.join(JOURNAL_IN_COPY)
    }
}

fn facts(summary: &JournalSummary) -> JournalFacts {
    JournalFacts {
        records: summary.records,
        bytes: summary.bytes,
        head_sha256: summary.head_sha256.clone(),
        entries_total: summary.total_entries(),
        entries: summary.entries.clone(),
    }
}

/// SHA-256 and length of the file at `path`.
pub(super) fn hash_file(path: &Path) -> Result<(String, u64), AdminError> {
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut digest = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(|e| io_error(path, &e))?;
        if n == 0 {
            break;
        }
        digest.update(&buffer[..n]);
        len += n as u64;
    }
    Ok((hex::encode(digest.finalize()), len))
}

/// A manifest path that stays inside the copy: relative, no `..`.
pub(super) fn inside(dir: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    (plain && !path.is_empty()).then(|| dir.join(relative))
}

/// Checks the copy in `dir` against its manifest: every file listed there with its length
/// and SHA-256, and the journal re-read from its own bytes (every CRC, the chain, the kept
/// invoices) to the manifest's head and counts. The manifest on success.
pub fn verify(dir: &Path) -> Result<Manifest, AdminError> {
    let shown = || dir.display().to_string();
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read(&path).map_err(|e| io_error(&path, &e))?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| {
        AdminError::Invalid(msg!(
            "backup-copy-bad",
            dir = shown(),
            detail = e.to_string()
        ))
    })?;
    if manifest.format != FORMAT {
        return Err(AdminError::Invalid(msg!(
            "backup-copy-format",
            dir = shown(),
            format = manifest.format,
            read = FORMAT
        )));
    }
    if !manifest
        .files
        .iter()
        .any(|f| f.role == Role::Journal && f.path == JOURNAL_IN_COPY)
    {
        return Err(AdminError::Invalid(msg!(
            "backup-copy-no-journal",
            dir = shown()
        )));
    }
    for file in &manifest.files {
        let at = inside(dir, &file.path).ok_or_else(|| {
            AdminError::Invalid(msg!(
                "backup-copy-path",
                dir = shown(),
                path = file.path.as_str()
            ))
        })?;
        let (sha256, bytes) = hash_file(&at)?;
        if (sha256.as_str(), bytes) != (file.sha256.as_str(), file.bytes) {
            return Err(AdminError::Invalid(msg!(
                "backup-copy-file-differs",
                dir = shown(),
                file = file.path.as_str()
            )));
        }
    }
    let summary = summarize(&Manifest::journal_in(dir))?;
    if facts(&summary) != manifest.journal {
        return Err(AdminError::Invalid(msg!(
            "backup-copy-journal-differs",
            dir = shown(),
            records = summary.records,
            head = summary.head_sha256.as_str(),
            expected_records = manifest.journal.records,
            expected_head = manifest.journal.head_sha256.as_str()
        )));
    }
    Ok(manifest)
}
