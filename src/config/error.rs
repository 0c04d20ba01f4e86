//! What is wrong with a configuration, for the person editing it ([`ConfigError`], its
//! message in the reader's language), and the key at fault ([`ConfigKey`]).

use std::fmt;
use std::io;
use std::path::PathBuf;

use thiserror::Error;

use super::unknown::Unknown;
use crate::i18n::{Lang, Localized, Message};
use crate::msg;

/// What is wrong with the configuration, phrased for the person editing it: its
/// [`Localized::message`] in the reader's language names the file and the key; `Display` is
/// the English one, for logs.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read (missing, permissions...).
    #[error("cannot read the configuration file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is not valid TOML or has a wrong, missing or unknown key: where, and the TOML
    /// parser's own text (it names the key).
    #[error(
        "configuration file {} is not valid{}: {message}",
        path.display(),
        at_line(*line, *column, line_text.as_deref())
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line of the problem (from 1), when the parser says.
        line: Option<usize>,
        /// Its column (from 1), when the parser says.
        column: Option<usize>,
        /// That line as written (it names the key; no key of the file holds a secret).
        line_text: Option<String>,
        /// The TOML parser's message (in English: the parser's words, shown as such).
        message: String,
    },
    /// An environment variable has a value that cannot be used.
    #[error("environment variable {var}={value:?} is not valid: {message}")]
    Env {
        /// Its name.
        var: String,
        /// Its value (no variable read here holds a secret).
        value: String,
        /// What is expected.
        message: Message,
    },
    /// A value parsed but is not acceptable (out of range, duplicate, inconsistent).
    #[error("invalid configuration{}: {key} {message}", in_file(.file))]
    Invalid {
        /// The key at fault, e.g. `request_timeout_secs` or `baud` of `[[devices]]` entry 1
        /// (entries counted from 1, in file order).
        key: ConfigKey,
        /// What is wrong and what to do, said after the key ("is 0: ...").
        message: Message,
        /// The file the configuration came from, if any.
        file: Option<PathBuf>,
    },
}

fn in_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(path) => format!(" (file {})", path.display()),
        None => String::new(),
    }
}

fn at_line(line: Option<usize>, column: Option<usize>, text: Option<&str>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => {
            format!(
                " at line {line}, column {column} ({:?})",
                text.unwrap_or("")
            )
        }
        _ => String::new(),
    }
}

impl Localized for ConfigError {
    fn message(&self) -> Message {
        match self {
            ConfigError::Read { path, source } => msg!(
                "config-read",
                path = path.display().to_string(),
                reason = source.message()
            ),
            ConfigError::Parse {
                path,
                line,
                column,
                line_text,
                message,
            } => {
                let path = path.display().to_string();
                if let Some(unknown) = Unknown::read(message) {
                    return unknown.message(path, *line);
                }
                match (line, column) {
                    (Some(line), Some(column)) => msg!(
                        "config-parse-at",
                        path = path,
                        line = *line,
                        column = *column,
                        text = line_text.as_deref().unwrap_or_default(),
                        parser = message.as_str()
                    ),
                    _ => msg!("config-parse", path = path, parser = message.as_str()),
                }
            }
            ConfigError::Env {
                var,
                value,
                message,
            } => msg!(
                "config-env",
                var = var.as_str(),
                value = value.as_str(),
                problem = message.clone()
            ),
            ConfigError::Invalid {
                key,
                message,
                file: Some(file),
            } => msg!(
                "config-invalid-in-file",
                file = file.display().to_string(),
                key = key.message(),
                problem = message.clone()
            ),
            ConfigError::Invalid { key, message, .. } => msg!(
                "config-invalid",
                key = key.message(),
                problem = message.clone()
            ),
        }
    }
}

/// A key of the configuration, as an error names it: `request_timeout_secs`, `smtp.host`,
/// or a key of one `[[devices]]` entry (its number from 1, and its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigKey {
    /// The key, e.g. `baud`.
    pub name: String,
    /// The `[[devices]]` entry it is in: its number (from 1) and its name.
    pub device: Option<(usize, String)>,
}

impl ConfigKey {
    /// Key `name` of the `index`th `[[devices]]` entry (from 0), named `device`.
    pub fn in_device(name: &str, index: usize, device: &str) -> ConfigKey {
        ConfigKey {
            name: name.to_owned(),
            device: Some((index + 1, device.to_owned())),
        }
    }

    /// How a person reads it.
    pub fn message(&self) -> Message {
        match &self.device {
            None => msg!("config-key", key = self.name.as_str()),
            Some((number, device)) => msg!(
                "config-key-in-device",
                key = self.name.as_str(),
                number = *number,
                name = device.as_str()
            ),
        }
    }
}

/// English, for logs and tests: `baud in [[devices]] entry 1 ("shop")`.
impl fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message().render(Lang::En))
    }
}

impl From<&str> for ConfigKey {
    fn from(name: &str) -> ConfigKey {
        ConfigKey {
            name: name.to_owned(),
            device: None,
        }
    }
}

impl From<String> for ConfigKey {
    fn from(name: String) -> ConfigKey {
        ConfigKey { name, device: None }
    }
}

impl From<&String> for ConfigKey {
    fn from(name: &String) -> ConfigKey {
        ConfigKey::from(name.as_str())
    }
}
