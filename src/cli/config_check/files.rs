//! `config check`'s checks of files and folders: the configuration file's mode, the state
//! directory (what `serve` would do with it), and every secret file the configuration names
//! (a web API token, the SMTP password): there, readable, the service's user's only.

use std::fs::Metadata;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::super::state_dir::{self, Access};
use super::{Finding, Level};
use crate::config::Config;
use crate::i18n::Localized;
use crate::msg;

/// The configuration file: read and valid (it was, to get here), and who may change or read
/// it.
pub(super) fn config_file(config: &Config) -> Finding {
    let Some(path) = &config.source else {
        return Finding::new("file", "", Level::Warning, msg!("cli-check-file-none"));
    };
    let subject = path.display().to_string();
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) => {
            let message = msg!(
                "cli-check-file-unreadable",
                path = subject.as_str(),
                reason = error.message()
            );
            return Finding::new("file", &subject, Level::Error, message);
        }
    };
    let mode = mode_text(&meta);
    let owner = user_name(meta.uid());
    if meta.mode() & 0o022 != 0 {
        let message = msg!(
            "cli-check-file-writable",
            path = subject.as_str(),
            mode = mode
        );
        return Finding::new("file", &subject, Level::Error, message);
    }
    if meta.mode() & 0o004 != 0 && !secret_files(config).is_empty() {
        let message = msg!(
            "cli-check-file-world-readable",
            path = subject.as_str(),
            mode = mode
        );
        return Finding::new("file", &subject, Level::Warning, message);
    }
    let message = msg!(
        "cli-check-file-ok",
        path = subject.as_str(),
        mode = mode,
        owner = owner
    );
    Finding::new("file", &subject, Level::Ok, message)
}

/// Every secret file the configuration names: (the key, the file).
pub(super) fn secret_files(config: &Config) -> Vec<(String, &Path)> {
    let mut files = Vec::new();
    for device in &config.devices {
        for (key, file) in [
            ("token_file", &device.token_file),
            ("sandbox_token_file", &device.sandbox_token_file),
        ] {
            if let Some(file) = file.as_deref().filter(|f| !f.as_os_str().is_empty()) {
                files.push((format!("{key} ({})", device.name), file));
            }
        }
    }
    if let Some(file) = config
        .smtp
        .as_ref()
        .and_then(|s| s.password_file.as_deref())
    {
        files.push(("smtp.password_file".to_owned(), file));
    }
    files
}

/// The state directory: what `serve` would refuse (others may write to it), warn about
/// (others may read it) or create (it does not exist yet), and whether this account can
/// write to it.
pub(super) fn state_dir(config: &Config) -> Finding {
    let dir = config.resolved_state_dir();
    let subject = dir.display().to_string();
    let finding = |level, message| Finding::new("state_dir", &subject, level, message);
    let path = subject.as_str();
    let meta = match std::fs::metadata(dir) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let parent = dir
                .ancestors()
                .skip(1)
                .find(|p| p.as_os_str().is_empty() || p.exists())
                .map(|p| {
                    if p.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        p
                    }
                })
                .unwrap_or(Path::new("/"));
            return if writable(parent) {
                finding(
                    Level::Warning,
                    msg!("cli-check-state-dir-missing", dir = path),
                )
            } else {
                let parent = parent.display().to_string();
                finding(
                    Level::Error,
                    msg!(
                        "cli-check-state-dir-cannot-create",
                        dir = path,
                        parent = parent,
                        user = current_user()
                    ),
                )
            };
        }
        Err(error) => {
            return finding(
                Level::Error,
                msg!("cli-state-dir-read", dir = path, reason = error.message()),
            )
        }
    };
    if !meta.is_dir() {
        return finding(
            Level::Error,
            msg!("cli-check-state-dir-not-dir", dir = path),
        );
    }
    let owner = user_name(meta.uid());
    // The rules `serve` applies (`state_dir.rs`): refused if others may write, warned if
    // they may read.
    let access = match state_dir::access(dir, &meta) {
        Ok(access) => access,
        Err(refused) => return finding(Level::Error, refused.message()),
    };
    if !writable(dir) {
        return finding(
            Level::Error,
            msg!(
                "cli-check-state-dir-not-writable",
                dir = path,
                user = current_user(),
                owner = owner
            ),
        );
    }
    if let Access::ReadableByOthers(mode) = access {
        return finding(
            Level::Warning,
            msg!(
                "cli-check-state-dir-readable",
                dir = path,
                mode = format!("{mode:04o}")
            ),
        );
    }
    finding(
        Level::Ok,
        msg!("cli-check-state-dir-ok", dir = path, owner = owner),
    )
}

/// A secret file named by `key`: there, a file, readable by this account, not empty, its
/// owner's only (no group or other bits: `chmod 600`), and owned by the service's user
/// (the owner of the state directory, when it exists).
pub(super) fn secret(config: &Config, key: &str, path: &Path) -> Finding {
    let subject = path.display().to_string();
    let file = subject.as_str();
    let finding = |level, message| Finding::new("secret_file", &subject, level, message);
    let unreadable = |error: &std::io::Error| {
        let reason = error.message();
        finding(
            Level::Error,
            msg!(
                "cli-check-secret-unreadable",
                key = key,
                file = file,
                reason = reason,
                user = current_user()
            ),
        )
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => {
            return finding(
                Level::Error,
                msg!("cli-check-secret-not-file", key = key, file = file),
            )
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return finding(
                Level::Error,
                msg!("cli-check-secret-missing", key = key, file = file),
            )
        }
        Err(error) => return unreadable(&error),
    };
    let mut first = [0u8; 256];
    let read = std::fs::File::open(path).and_then(|mut f| f.read(&mut first));
    let text = match read {
        Ok(n) => String::from_utf8_lossy(&first[..n]).trim().to_owned(),
        Err(error) => return unreadable(&error),
    };
    if text.is_empty() {
        return finding(
            Level::Error,
            msg!("cli-check-secret-empty", key = key, file = file),
        );
    }
    let mode = mode_text(&meta);
    if meta.mode() & 0o077 != 0 {
        return finding(
            Level::Error,
            msg!("cli-check-secret-mode", key = key, file = file, mode = mode),
        );
    }
    let owner = user_name(meta.uid());
    let service = std::fs::metadata(config.resolved_state_dir())
        .ok()
        .map(|m| m.uid());
    if let Some(service) = service.filter(|uid| *uid != meta.uid()) {
        let service = user_name(service);
        return finding(
            Level::Warning,
            msg!(
                "cli-check-secret-owner",
                key = key,
                file = file,
                owner = owner,
                service = service
            ),
        );
    }
    finding(
        Level::Ok,
        msg!(
            "cli-check-secret-ok",
            key = key,
            file = file,
            mode = mode,
            owner = owner
        ),
    )
}

/// A file that need not be secret (`ca_file`): there and readable.
pub(super) fn readable(key: &str, path: &Path) -> Finding {
    let subject = path.display().to_string();
    let file = subject.as_str();
    let level_message = match std::fs::File::open(path) {
        Ok(_) => (
            Level::Ok,
            msg!("cli-check-readable-ok", key = key, file = file),
        ),
        Err(error) => (
            Level::Error,
            msg!(
                "cli-check-readable-not",
                key = key,
                file = file,
                reason = error.message(),
                user = current_user()
            ),
        ),
    };
    Finding::new("file", &subject, level_message.0, level_message.1)
}

fn mode_text(meta: &Metadata) -> String {
    format!("{:04o}", meta.permissions().mode() & 0o7777)
}

/// Whether this process may create files in `dir` (write and search rights; root may).
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads the NUL-terminated path, which lives until the call returns.
    unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

/// This process's user, by name.
pub(super) fn current_user() -> String {
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    user_name(unsafe { libc::geteuid() })
}

/// The name of user `uid` from /etc/passwd, else its number.
fn user_name(uid: u32) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let id = fields.nth(1)?.parse::<u32>().ok()?;
            (id == uid).then(|| name.to_owned())
        })
        .next()
        .unwrap_or_else(|| uid.to_string())
}
