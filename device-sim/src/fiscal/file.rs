//! The fiscal memory file: durable atomic writes, and the checks of a file being loaded.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{signature, FiscalState, FORMAT};
use crate::config::check_identity;
use crate::error::SimError;

/// Takes the exclusive lock `<path>.lock` (created if absent), or fails with
/// [`SimError::InUse`] when another simulator holds it. Released when the file is dropped
/// (or the process dies: the lock is the kernel's, not a marker file).
pub(super) fn lock(path: &Path) -> Result<File, SimError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| SimError::StateFile {
            path: lock_path.clone(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(SimError::InUse {
            path: path.to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(SimError::StateFile {
            path: lock_path,
            source,
        }),
    }
}

/// Writes `<path>.tmp`, fsyncs it and renames it over `path`. Once this returns `Ok`, the
/// file holds `bytes`; [`sync_dir`] then makes the rename itself durable.
pub(super) fn replace(path: &Path, bytes: &[u8]) -> Result<(), SimError> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let at = |p: &Path| {
        let p = p.to_owned();
        move |source| SimError::StateFile { path: p, source }
    };
    let mut file = File::create(&tmp).map_err(at(&tmp))?;
    file.write_all(bytes).map_err(at(&tmp))?;
    file.sync_all().map_err(at(&tmp))?;
    drop(file);
    fs::rename(&tmp, path).map_err(at(path))
}

/// Makes the rename durable: fsync the directory holding `path`.
#[cfg(unix)]
pub(super) fn sync_dir(path: &Path) -> Result<(), SimError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| SimError::StateFile {
            path: dir.to_owned(),
            source,
        })
}

/// Directories cannot be opened for fsync on this platform; the rename is all we can do.
#[cfg(not(unix))]
pub(super) fn sync_dir(_path: &Path) -> Result<(), SimError> {
    Ok(())
}

/// Parses and checks a fiscal memory file.
pub(super) fn load(bytes: &[u8]) -> Result<FiscalState, String> {
    let state: FiscalState = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if state.format != FORMAT {
        return Err(format!(
            "format {} (this simulator reads {FORMAT})",
            state.format
        ));
    }
    check_identity("nim", &state.nim)?;
    check_identity("nif", &state.nif)?;
    if state.invoices.len() as u64 != state.tc || state.fvc.checked_add(state.frc) != Some(state.tc)
    {
        return Err(format!(
            "counters TC {} FVC {} FRC {} do not match the {} invoices",
            state.tc,
            state.fvc,
            state.frc,
            state.invoices.len()
        ));
    }
    let (mut fvc, mut frc) = (0u64, 0u64);
    let mut codes = HashMap::new();
    for (i, record) in state.invoices.iter().enumerate() {
        let counter = if record.invoice_type.is_credit_note() {
            &mut frc
        } else {
            &mut fvc
        };
        *counter += 1;
        let bad = |what: &str| format!("invoice {}: {what}", i + 1);
        if record.tc != i as u64 + 1 || record.fc != *counter {
            return Err(bad("counters out of sequence"));
        }
        if !signature::is_code_def(&record.code_def) {
            return Err(bad("malformed codeDEFDGI"));
        }
        if codes.insert(record.code_def.as_str(), i).is_some() {
            return Err(bad("duplicate codeDEFDGI"));
        }
        if record.reference.is_some() != record.invoice_type.is_credit_note() {
            return Err(bad("a reference is required for FA/EA and only for them"));
        }
        if [record.total, record.vat]
            .iter()
            .any(|v| v.round_dp(2) != *v)
        {
            return Err(bad("amount with more than 2 decimals"));
        }
    }
    Ok(state)
}
