//! The `[store]` table (issue 28): where the gateway keeps what it keeps. Without `url` (and
//! without `EMCF_STORE_URL`) nothing changes: the embedded store in `state_dir`. With it, a
//! PostgreSQL server, which [`Config::store_settings`] turns into the store's own
//! [`PgSettings`] (the password read then, once, from `password_file`). docs/configuration.md,
//! "`[store]`", is the operator's side of this file.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::validate::{in_range, Unit};
use super::{Config, ConfigError};
use crate::i18n::Message;
use crate::msg;
use crate::store::postgres::{PgSettings, PgTls};
use crate::store::sealed::{KeyFileError, Keyring};

/// Environment variable overriding `store.url`.
pub const ENV_STORE_URL: &str = "EMCF_STORE_URL";
/// Environment variable overriding `store.password_file` (with `EMCF_STORE_URL`, one command
/// as another role: `store migrate` as the database's owner).
pub const ENV_STORE_PASSWORD_FILE: &str = "EMCF_STORE_PASSWORD_FILE";
/// `store.pool_size` default: connections kept open at most.
pub const DEFAULT_STORE_POOL_SIZE: usize = 8;
/// `store.pool_size` at most: PostgreSQL's own default `max_connections`.
const MAX_STORE_POOL_SIZE: usize = 100;
/// A password file longer than this is not a password.
const MAX_PASSWORD_BYTES: u64 = 4096;

/// `[store]`. Every key optional, so older files read unchanged.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    /// `postgresql://user@host:port/db` (a socket directory as `?host=/run/postgresql`),
    /// without a password. None: the embedded store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The file holding the role's password (`0600` or `0400`, owned by the service's user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    /// `disable`, `require` or `verify-full`; unset: `disable` on a Unix socket, `require`
    /// over TCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sslmode: Option<SslMode>,
    /// PEM certificate authorities that `verify-full` checks the server against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// Connections kept open at most.
    pub pool_size: usize,
    /// The keys that seal the tokens of the devices kept in the store (`device add`), one
    /// per line, 64 hexadecimal characters each; the first seals, any opens (`0600` or
    /// `0400`, owned by the service's user, as `password_file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_file: Option<PathBuf>,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            url: None,
            password_file: None,
            sslmode: None,
            ca_file: None,
            pool_size: DEFAULT_STORE_POOL_SIZE,
            secret_key_file: None,
        }
    }
}

impl StoreSettings {
    /// Whether every key has its default (the table is then left out when written).
    pub fn is_default(&self) -> bool {
        *self == StoreSettings::default()
    }
}

/// A password written in the URL despite the rules never shows in `Debug`.
impl fmt::Debug for StoreSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreSettings")
            .field("url", &self.url.as_deref().map(without_password))
            .field("password_file", &self.password_file)
            .field("sslmode", &self.sslmode)
            .field("ca_file", &self.ca_file)
            .field("pool_size", &self.pool_size)
            .field("secret_key_file", &self.secret_key_file)
            .finish()
    }
}

/// `store.sslmode`, as libpq spells its modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    /// No TLS (a Unix socket, or a private network).
    Disable,
    /// TLS, the server's certificate not checked.
    Require,
    /// TLS, the certificate checked against `ca_file` and the host name.
    VerifyFull,
}

impl SslMode {
    fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Require => "require",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl Config {
    /// The PostgreSQL store's settings when `store.url` (or `EMCF_STORE_URL`) is set, else
    /// `None` (the embedded store). Reads `password_file` now (once), which must belong to the
    /// user running this process.
    pub fn store_settings(&self) -> Result<Option<PgSettings>, ConfigError> {
        // SAFETY: geteuid(2) takes nothing and cannot fail.
        self.store_settings_owned_by(unsafe { libc::geteuid() })
    }

    /// [`Config::store_settings`], the password file required to belong to user `owner` (for
    /// `config check` run by another account than the service's).
    pub fn store_settings_owned_by(&self, owner: u32) -> Result<Option<PgSettings>, ConfigError> {
        let Some((url, tls)) = self.checked_store()? else {
            return Ok(None);
        };
        let password = match &self.store.password_file {
            Some(path) => Some(
                read_password(path, owner).map_err(|m| self.invalid("store.password_file", m))?,
            ),
            None => None,
        };
        Ok(Some(PgSettings {
            url: url.to_owned(),
            password,
            tls,
            pool_size: self.store.pool_size,
        }))
    }

    /// The keys of `store.secret_key_file`, read now (the file must belong to the user running
    /// this process, readable by it only); `None` when the key is not set.
    pub fn store_keyring(&self) -> Result<Option<Keyring>, ConfigError> {
        // SAFETY: geteuid(2) takes nothing and cannot fail.
        self.store_keyring_owned_by(unsafe { libc::geteuid() })
    }

    /// [`Config::store_keyring`], the file required to belong to user `owner`.
    pub fn store_keyring_owned_by(&self, owner: u32) -> Result<Option<Keyring>, ConfigError> {
        let Some(path) = &self.store.secret_key_file else {
            return Ok(None);
        };
        let invalid = |m| self.invalid("store.secret_key_file", m);
        let text = read_private(path, owner, Private::Key).map_err(invalid)?;
        let file = path.display().to_string();
        Keyring::from_text(&text)
            .map(Some)
            .map_err(|error| invalid(key_file_message(&error, &file)))
    }

    /// The `[store]` keys (`Config::validate`).
    pub(super) fn validate_store(&self) -> Result<(), ConfigError> {
        self.checked_store().map(|_| ())
    }

    /// The URL and TLS of `[store]` once every key is checked; `None` without `url`.
    fn checked_store(&self) -> Result<Option<(&str, PgTls)>, ConfigError> {
        let store = &self.store;
        let Some(url) = store.url.as_deref() else {
            if store.is_default() {
                return Ok(None);
            }
            return Err(self.invalid("store.url", msg!("config-store-url-missing")));
        };
        let socket = read_url(url).map_err(|m| self.invalid("store.url", m))?;
        in_range(store.pool_size, 1, MAX_STORE_POOL_SIZE, Unit::None)
            .map_err(|m| self.invalid("store.pool_size", m))?;
        for (key, path) in [
            ("store.password_file", &store.password_file),
            ("store.ca_file", &store.ca_file),
            ("store.secret_key_file", &store.secret_key_file),
        ] {
            if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                return Err(self.invalid(key, msg!("config-store-path-empty")));
            }
        }
        let mode = store.sslmode.unwrap_or(if socket {
            SslMode::Disable
        } else {
            SslMode::Require
        });
        if socket && mode != SslMode::Disable {
            let problem = msg!("config-store-tls-socket", mode = mode.as_str());
            return Err(self.invalid("store.sslmode", problem));
        }
        let tls = match (mode, &store.ca_file) {
            (SslMode::Disable, None) => PgTls::Disable,
            (SslMode::Require, None) => PgTls::Require,
            (SslMode::VerifyFull, Some(ca_file)) => PgTls::VerifyFull {
                ca_file: ca_file.clone(),
            },
            (SslMode::VerifyFull, None) => {
                return Err(self.invalid("store.ca_file", msg!("config-store-ca-missing")))
            }
            (mode, Some(_)) => {
                let problem = msg!("config-store-ca-unused", mode = mode.as_str());
                return Err(self.invalid("store.ca_file", problem));
            }
        };
        Ok(Some((url, tls)))
    }

    /// `EMCF_STORE_URL`: checked at once, so that a refusal names the variable (its value
    /// shown without a password).
    pub(super) fn apply_store_url(&mut self, value: &str) -> Result<(), ConfigError> {
        read_url(value).map_err(|message| ConfigError::Env {
            var: ENV_STORE_URL.to_owned(),
            value: without_password(value).into_owned(),
            message,
        })?;
        self.store.url = Some(value.to_owned());
        Ok(())
    }

    /// `EMCF_STORE_PASSWORD_FILE`: the password file of the role the URL names.
    pub(super) fn apply_store_password_file(&mut self, value: &str) {
        self.store.password_file = Some(PathBuf::from(value));
    }
}

/// Checks what the gateway needs of a `store.url` (the scheme, no password, a user, a host
/// or socket directory, a database; no TLS parameter, since `[store]` has keys for them) and
/// says whether it names a Unix socket directory. The rest is the driver's.
fn read_url(url: &str) -> Result<bool, Message> {
    let rest = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme))
        .ok_or_else(|| msg!("config-store-url-scheme"))?;
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let query = query.split('#').next().unwrap_or_default();
    let (authority, path) = before_query.split_once('/').unwrap_or((before_query, ""));
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    };
    if userinfo.is_some_and(|u| u.contains(':')) {
        return Err(msg!("config-store-url-password"));
    }
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect();
    for (name, _) in &params {
        let key = match name.as_str() {
            "password" => return Err(msg!("config-store-url-password")),
            "sslmode" => "sslmode",
            "sslrootcert" => "ca_file",
            _ => continue,
        };
        return Err(msg!(
            "config-store-url-param",
            param = name.as_str(),
            key = key
        ));
    }
    let param = |name: &str| {
        params
            .iter()
            .rev()
            .find(|(key, value)| key == name && !value.is_empty())
            .map(|(_, value)| value.clone())
    };
    let user = userinfo.map(decode).filter(|u| !u.is_empty());
    if user.or_else(|| param("user")).is_none() {
        return Err(msg!("config-store-url-user"));
    }
    let first_host = hosts.split(',').next().map(host_of).unwrap_or_default();
    let host = param("host").or_else(|| Some(decode(first_host)).filter(|h| !h.is_empty()));
    let Some(host) = host else {
        return Err(msg!("config-store-url-host"));
    };
    let database = Some(decode(path)).filter(|d| !d.is_empty());
    if database.or_else(|| param("dbname")).is_none() {
        return Err(msg!("config-store-url-database"));
    }
    Ok(host.starts_with('/'))
}

/// The host of `host:port`, `[v6]:port` or `host`.
fn host_of(host_port: &str) -> &str {
    if let Some(v6) = host_port.strip_prefix('[') {
        return v6.split(']').next().unwrap_or_default();
    }
    host_port.split(':').next().unwrap_or_default()
}

/// `%XX` decoded (a malformed escape kept as written).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(decoded) => {
                out.push(decoded);
                at += 3;
            }
            None => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with the password of every URL in it (`scheme://user:password@...`,
/// `password=...`) replaced by `***`, for what is shown or logged.
pub(super) fn without_password(original: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(original.len());
    let mut rest = original;
    let mut changed = false;
    while let Some(start) = rest.find("://") {
        let (head, tail) = rest.split_at(start + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(tail.len());
        let (authority, after) = tail.split_at(end);
        match authority
            .rsplit_once('@')
            .and_then(|(userinfo, hosts)| Some((userinfo.split_once(':')?.0, hosts)))
        {
            Some((user, hosts)) => {
                out.push_str(&format!("{user}:***@{hosts}"));
                changed = true;
            }
            None => out.push_str(authority),
        }
        rest = after;
    }
    out.push_str(rest);
    let mut text = out;
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|t| t.find("password=")) {
        let start = from + found + "password=".len();
        let end = text[start..]
            .find(|c: char| matches!(c, '&' | '#' | '"' | '\'') || c.is_whitespace())
            .map_or(text.len(), |e| start + e);
        if &text[start..end] == "***" {
            from = end;
        } else {
            text.replace_range(start..end, "***");
            changed = true;
            from = start + 3;
        }
    }
    if changed {
        Cow::Owned(text)
    } else {
        Cow::Borrowed(original)
    }
}

/// The password in `path`: a regular file, `0600` or `0400`, owned by `owner`, UTF-8, at
/// most 4 KiB, one trailing newline (`\n` or `\r\n`) dropped, not empty.
fn read_password(path: &Path, owner: u32) -> Result<String, Message> {
    let text = read_private(path, owner, Private::Password)?;
    let password = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    if password.is_empty() {
        let file = path.display().to_string();
        return Err(msg!("config-store-password-empty", file = file));
    }
    Ok(password.to_owned())
}

/// What a private file of `[store]` holds (its messages say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Private {
    /// `password_file`.
    Password,
    /// `secret_key_file`.
    Key,
}

/// The text of `path`: a regular file, `0600` or `0400`, owned by `owner`, UTF-8, at most
/// 4 KiB.
fn read_private(path: &Path, owner: u32, what: Private) -> Result<String, Message> {
    let file = path.display().to_string();
    let file = file.as_str();
    let unreadable = |error: std::io::Error| {
        msg!(
            "config-store-password-unreadable",
            file = file,
            reason = crate::i18n::Localized::message(&error)
        )
    };
    let not_text = || match what {
        Private::Password => msg!("config-store-password-not-text", file = file),
        Private::Key => msg!("config-store-key-not-text", file = file),
    };
    let mut opened = std::fs::File::open(path).map_err(unreadable)?;
    let meta = opened.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(msg!("config-store-password-not-file", file = file));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode != 0o600 && mode != 0o400 {
        let mode = format!("{mode:04o}");
        return Err(match what {
            Private::Password => msg!("config-store-password-mode", file = file, mode = mode),
            Private::Key => msg!("config-store-key-mode", file = file, mode = mode),
        });
    }
    if meta.uid() != owner {
        return Err(msg!(
            "config-store-password-owner",
            file = file,
            owner = meta.uid().to_string(),
            user = owner.to_string()
        ));
    }
    let mut bytes = Vec::new();
    (&mut opened)
        .take(MAX_PASSWORD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_PASSWORD_BYTES {
        return Err(not_text());
    }
    String::from_utf8(bytes).map_err(|_| not_text())
}

/// What is wrong with the keys of `file` (never a key's text).
fn key_file_message(error: &KeyFileError, file: &str) -> Message {
    match error {
        KeyFileError::BadLine(line) => msg!("config-store-key-line", file = file, line = *line),
        KeyFileError::Repeated(line) => {
            msg!("config-store-key-repeated", file = file, line = *line)
        }
        KeyFileError::Empty => msg!("config-store-key-empty", file = file),
    }
}
