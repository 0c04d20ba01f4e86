//! Keeping the last N good copies of a state directory in a destination. Only folders named
//! `emcf-backup-<time>` holding a `manifest.json` this version reads, whose manifest names
//! this state directory, are counted (another state directory's copies in the same
//! destination are its own); anything else in the folder is never touched, and the copy
//! just taken is never removed.

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

/// Whether two state directory paths name the same folder (links resolved when they exist).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
    }
}

/// What pruning found and did.
#[derive(Debug, Default)]
pub struct Pruned {
    /// Older copies removed.
    pub removed: Vec<PathBuf>,
    /// Folders named as copies whose manifest could not be read (rights, damage): neither
    /// counted nor touched, said to the operator.
    pub unreadable: Vec<PathBuf>,
}

/// The good copies of `state_dir` in `dest`, newest first (by their manifest's time, then
/// their name), and the copy folders whose manifest could not be read.
fn good_copies(dest: &Path, state_dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), AdminError> {
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    for entry in std::fs::read_dir(dest).map_err(|e| io_error(dest, &e))? {
        let entry = entry.map_err(|e| io_error(dest, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || !is_copy_name(&name) {
            continue;
        }
        let manifest = match std::fs::read(entry.path().join(MANIFEST_FILE)) {
            Ok(bytes) => serde_json::from_slice::<Manifest>(&bytes).ok(),
            // A folder of our name that never had a manifest is not a copy.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => None,
        };
        match manifest {
            Some(manifest) if same_dir(&manifest.state_dir, state_dir) => {
                found.push((manifest.created_at, name, entry.path()));
            }
            Some(_) => {}
            None => unreadable.push(entry.path()),
        }
    }
    found.sort();
    found.reverse();
    unreadable.sort();
    Ok((
        found.into_iter().map(|(_, _, path)| path).collect(),
        unreadable,
    ))
}

/// Removes the good copies of `state_dir` in `dest` beyond the `keep` newest, never `newest`
/// (the copy just taken).
pub fn prune(
    dest: &Path,
    keep: u32,
    newest: &Path,
    state_dir: &Path,
) -> Result<Pruned, AdminError> {
    let keep = keep.max(1) as usize;
    let (good, unreadable) = good_copies(dest, state_dir)?;
    let mut pruned = Pruned {
        removed: Vec::new(),
        unreadable,
    };
    for old in good.into_iter().skip(keep) {
        if old == newest {
            continue;
        }
        std::fs::remove_dir_all(&old).map_err(|e| io_error(&old, &e))?;
        pruned.removed.push(old);
    }
    if !pruned.removed.is_empty() {
        super::files::sync_dir(dest)?;
    }
    Ok(pruned)
}
