//! The state directory's access rights, checked by `serve` before it opens anything in it.
//!
//! The directory holds the register (organization names, NIFs, rns) and the SHA-256 of every
//! API key and dashboard token. It is created for the owner only (0700; the binary's umask of
//! 077 makes every file in it 0600). An existing directory is never changed: one that other
//! users can write to (group or other `w`) is refused, since they could replace the journal or
//! the admin socket; one they can read (as older releases created it, 0755) is used with a
//! warning, so that an upgrade never strands a register.

use std::path::{Path, PathBuf};

use crate::i18n::{Localized, Message};
use crate::msg;

/// Why the state directory cannot be used (a person reads its [`Localized::message`]).
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// Group or other users may write to it.
    #[error(
        "the state directory {} can be written by other users (mode {mode:04o}): they could \
         replace the register; refusing to start. Fix: chmod 700 {}",
        dir.display(),
        dir.display()
    )]
    WritableByOthers { dir: PathBuf, mode: u32 },
    /// It does not exist, and this command does not start a register (only `serve` and
    /// `org add` do): the command was probably run from another folder.
    #[error("no register in {}: this command creates nothing", dir.display())]
    Missing { dir: PathBuf },
    /// Creating it failed.
    #[error("creating the state directory {}: {source}", dir.display())]
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// Reading it (whether it exists, its mode) failed.
    #[error("reading the state directory {}: {source}", dir.display())]
    Read {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl Localized for StateDirError {
    fn message(&self) -> Message {
        match self {
            StateDirError::WritableByOthers { dir, mode } => msg!(
                "cli-state-dir-writable",
                dir = dir.display().to_string(),
                mode = format!("{mode:04o}")
            ),
            StateDirError::Missing { dir } => {
                msg!("cli-no-state-dir", dir = dir.display().to_string())
            }
            StateDirError::Create { dir, source } => msg!(
                "cli-state-dir-create",
                dir = dir.display().to_string(),
                reason = source.message()
            ),
            StateDirError::Read { dir, source } => msg!(
                "cli-state-dir-read",
                dir = dir.display().to_string(),
                reason = source.message()
            ),
        }
    }
}

/// Who else may read the state directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Its owner only (or no Unix modes on this system).
    Private,
    /// Group or other users may read it (its mode).
    ReadableByOthers(u32),
}

impl Access {
    /// Logs a warning if others may read the state directory `dir`.
    pub fn warn_if_readable(self, dir: &Path) {
        if let Access::ReadableByOthers(mode) = self {
            tracing::warn!(
                dir = %dir.display(),
                mode = %format!("{mode:04o}"),
                "the state directory can be read by other users (the register, the digests of \
                 keys and tokens): run `chmod 700 {}`",
                dir.display()
            );
        }
    }
}

/// Creates `dir` (0700, its missing parents too) if it does not exist, then checks its mode:
/// refused if others may write to it, [`Access::ReadableByOthers`] if they may read it.
pub fn prepare(dir: &Path) -> Result<Access, StateDirError> {
    crate::atomic_file::private_dir(dir).map_err(|source| StateDirError::Create {
        dir: dir.to_path_buf(),
        source,
    })?;
    let meta = std::fs::metadata(dir).map_err(|source| StateDirError::Read {
        dir: dir.to_path_buf(),
        source,
    })?;
    access(dir, &meta)
}

/// Fails with [`StateDirError::Missing`] unless `dir` exists (commands that only read or
/// change an existing register).
pub fn require_existing(dir: &Path) -> Result<(), StateDirError> {
    match dir.try_exists() {
        Ok(true) => Ok(()),
        Ok(false) => Err(StateDirError::Missing {
            dir: dir.to_path_buf(),
        }),
        Err(source) => Err(StateDirError::Read {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

/// Who else may use `dir`, from its metadata: refused if others may write to it.
#[cfg(unix)]
pub(super) fn access(dir: &Path, meta: &std::fs::Metadata) -> Result<Access, StateDirError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(StateDirError::WritableByOthers {
            dir: dir.to_path_buf(),
            mode,
        });
    }
    if mode & 0o044 != 0 {
        return Ok(Access::ReadableByOthers(mode));
    }
    Ok(Access::Private)
}

#[cfg(not(unix))]
pub(super) fn access(_dir: &Path, _meta: &std::fs::Metadata) -> Result<Access, StateDirError> {
    Ok(Access::Private)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn with_mode(mode: u32) -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        (root, dir)
    }

    #[test]
    fn a_new_directory_is_created_for_the_owner_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a").join("state");
        assert_eq!(prepare(&dir).unwrap(), Access::Private);
        for made in [&dir, &root.path().join("a")] {
            let mode = std::fs::metadata(made).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", made.display());
        }
    }

    #[test]
    fn writable_by_others_is_refused_and_readable_is_reported() {
        for mode in [0o777, 0o775, 0o757, 0o1777, 0o720] {
            let (_root, dir) = with_mode(mode);
            let error = prepare(&dir).unwrap_err();
            let text = error.to_string();
            assert!(
                text.contains(&format!("chmod 700 {}", dir.display())),
                "{text}"
            );
            assert!(matches!(error, StateDirError::WritableByOthers { .. }));
        }
        for mode in [0o755, 0o750, 0o705] {
            let (_root, dir) = with_mode(mode);
            assert_eq!(prepare(&dir).unwrap(), Access::ReadableByOthers(mode));
            // Nothing is changed behind the operator's back.
            let now = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(now, mode);
        }
        let (_root, dir) = with_mode(0o700);
        assert_eq!(prepare(&dir).unwrap(), Access::Private);
    }
}
