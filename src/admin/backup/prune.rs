//! Keeping the last N good copies of a destination. Only folders named
//! `emcf-backup-<time>` holding a `manifest.json` this version reads are ours and counted;
//! anything else in the folder is never touched, and the copy just taken is never removed.

use std::path::{Path, PathBuf};

use super::manifest::{Manifest, MANIFEST_FILE};
use super::{io_error, COPY_PREFIX};
use crate::admin::AdminError;

/// Whether `name` is a copy's folder name: `emcf-backup-YYYYMMDDTHHMMSSZ`, maybe `-<n>`.
pub fn is_copy_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(COPY_PREFIX) else {
        return false;
    };
    // Never sliced at a byte index that may fall inside a character (a folder named by hand).
    let (Some(stamp), Some(extra)) = (rest.get(..16), rest.get(16..)) else {
        return false;
    };
    let stamp_ok = stamp.bytes().enumerate().all(|(i, b)| match i {
        8 => b == b'T',
        15 => b == b'Z',
        _ => b.is_ascii_digit(),
    });
    let extra_ok = extra.is_empty()
        || extra
            .strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    stamp_ok && extra_ok
}

/// The good copies in `dest`, newest first (by their manifest's time, then their name).
fn good_copies(dest: &Path) -> Result<Vec<PathBuf>, AdminError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dest).map_err(|e| io_error(dest, &e))? {
        let entry = entry.map_err(|e| io_error(dest, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || !is_copy_name(&name) {
            continue;
        }
        let manifest = std::fs::read(entry.path().join(MANIFEST_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok());
        if let Some(manifest) = manifest {
            found.push((manifest.created_at, name, entry.path()));
        }
    }
    found.sort();
    found.reverse();
    Ok(found.into_iter().map(|(_, _, path)| path).collect())
}

/// Removes the good copies of `dest` beyond the `keep` newest, never `newest` (the copy just
/// taken); the removed folders.
pub fn prune(dest: &Path, keep: u32, newest: &Path) -> Result<Vec<PathBuf>, AdminError> {
    let keep = keep.max(1) as usize;
    let mut removed = Vec::new();
    for old in good_copies(dest)?.into_iter().skip(keep) {
        if old == newest {
            continue;
        }
        std::fs::remove_dir_all(&old).map_err(|e| io_error(&old, &e))?;
        removed.push(old);
    }
    if !removed.is_empty() {
        super::files::sync_dir(dest)?;
    }
    Ok(removed)
}
