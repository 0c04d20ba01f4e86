//! Where the configuration comes from, in order: a TOML file ([`Config::load`]: which one),
//! the environment variables ([`Config::apply_env`]), the command-line flags
//! ([`Config::apply_overrides`]); [`Config::resolve`] runs them and `validate`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::text::parse_listen;
use super::*;

/// Values given on the command line; they win over the file and the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--lang`.
    pub language: Option<Lang>,
}

/// The process environment variables this module reads (`EMCF_*`, `STATE_DIRECTORY`), for
/// [`Config::apply_env`] and [`Config::resolve`].
///
/// Unlike `std::env::vars()` it does not panic on a variable that is not UTF-8: other variables
/// are skipped, and ours are converted lossily.
pub fn env_vars() -> impl Iterator<Item = (String, String)> {
    std::env::vars_os().filter_map(|(name, value)| {
        let name = name.into_string().ok()?;
        if name.starts_with("EMCF_") || name == ENV_SYSTEMD_STATE_DIRECTORY {
            Some((name, value.to_string_lossy().into_owned()))
        } else {
            None
        }
    })
}

impl Config {
    /// Reads the configuration file, without validating it (see [`Config::validate`]).
    ///
    /// Which file: `path` if given (the `--config` flag), else the file named by `EMCF_CONFIG`
    /// (if set and not empty), else [`DEFAULT_CONFIG_FILE`] if it exists, else no file: the
    /// defaults. A file that is named (by the flag or the variable) must exist.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let from_env = std::env::var_os(ENV_CONFIG)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from);
        Self::load_from(path, from_env.as_deref(), Path::new(DEFAULT_CONFIG_FILE))
    }

    /// Everything in order: [`Config::load`] (with `EMCF_CONFIG` taken from `vars`),
    /// [`Config::apply_env`], [`Config::apply_overrides`], [`Config::validate`].
    pub fn resolve(
        config_flag: Option<&Path>,
        vars: impl IntoIterator<Item = (String, String)>,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        let vars: Vec<(String, String)> = vars.into_iter().collect();
        let from_env = vars
            .iter()
            .rev()
            .find(|(name, value)| name == ENV_CONFIG && !value.is_empty())
            .map(|(_, value)| PathBuf::from(value));
        let mut config = Self::load_from(
            config_flag,
            from_env.as_deref(),
            Path::new(DEFAULT_CONFIG_FILE),
        )?;
        config.apply_env(vars.into_iter())?;
        config.apply_overrides(overrides);
        config.validate()?;
        Ok(config)
    }

    pub(super) fn load_from(
        path: Option<&Path>,
        from_env: Option<&Path>,
        default_file: &Path,
    ) -> Result<Config, ConfigError> {
        if let Some(path) = path.or(from_env) {
            return Self::from_file(path);
        }
        match default_file.try_exists() {
            Ok(true) => Self::from_file(default_file),
            Ok(false) => Ok(Config::default()),
            Err(source) => Err(ConfigError::Read {
                path: default_file.to_path_buf(),
                source,
            }),
        }
    }

    /// Reads and parses one file (not validated). [`Config::source`] is set to `path`.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut config = Self::from_toml_str(&text, path)?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses TOML text (not validated); `origin` only names it in errors. The keys whose
    /// text the gateway reads itself (`language`, `timezone_offset`, `listen`) are checked
    /// first, so that their refusal is said in the gateway's words, not the parser's.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Config, ConfigError> {
        let parse_error = |error: toml::de::Error| {
            let (line, column) = error
                .span()
                .map(|span| line_and_column(text, span.start))
                .unzip();
            let line_text = line
                .and_then(|line| text.lines().nth(line - 1))
                .map(|written| {
                    let written = super::store::without_password(written.trim());
                    written.chars().take(120).collect()
                });
            ConfigError::Parse {
                path: origin.to_path_buf(),
                line,
                column,
                line_text,
                message: error.message().trim_end().to_string(),
            }
        };
        let table: toml::Table = toml::from_str(text).map_err(parse_error)?;
        check_text_keys(&table).map_err(|(key, message)| ConfigError::Invalid {
            key: ConfigKey::from(key),
            message,
            file: Some(origin.to_path_buf()),
        })?;
        toml::from_str(text).map_err(parse_error)
    }

    /// The `language` of the configuration file the CLI would read (`path`, else
    /// `EMCF_CONFIG` from `vars`, else [`DEFAULT_CONFIG_FILE`] if it exists), read leniently:
    /// `None` when there is no file, it cannot be read or parsed, or says nothing usable. For
    /// what must work even with a broken file (`--help`, the language of its own error).
    pub fn file_language(
        path: Option<&Path>,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Option<Lang> {
        let from_env = vars
            .into_iter()
            .filter(|(name, value)| name == ENV_CONFIG && !value.is_empty())
            .last()
            .map(|(_, value)| PathBuf::from(value));
        let file = path
            .map(Path::to_path_buf)
            .or(from_env)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG_FILE));
        let text = std::fs::read_to_string(file).ok()?;
        let table: toml::Table = toml::from_str(&text).ok()?;
        table.get("language")?.as_str().and_then(Lang::parse)
    }

    /// The configuration as TOML (for `config show`-like commands).
    pub fn to_toml_string(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }

    /// Applies environment variables: `EMCF_STATE_DIR`, `EMCF_LISTEN`, `EMCF_LANG` and
    /// `EMCF_STORE_URL` replace the file's values; systemd's `STATE_DIRECTORY` (its first `:`-separated entry) is used as
    /// `state_dir` only when neither the file nor `EMCF_STATE_DIR` sets one. Empty values count
    /// as unset. `EMCF_CONFIG` is [`Config::load`]'s business and other variables are ignored.
    pub fn apply_env(
        &mut self,
        vars: impl Iterator<Item = (String, String)>,
    ) -> Result<(), ConfigError> {
        let vars: HashMap<String, String> = vars
            .filter(|(name, value)| {
                !value.is_empty()
                    && [
                        ENV_STATE_DIR,
                        ENV_LISTEN,
                        ENV_LANG,
                        ENV_STORE_URL,
                        ENV_STORE_PASSWORD_FILE,
                        ENV_SYSTEMD_STATE_DIRECTORY,
                    ]
                    .contains(&name.as_str())
            })
            .collect();
        if let Some(value) = vars.get(ENV_LISTEN) {
            self.listen = parse_listen(value).map_err(|message| ConfigError::Env {
                var: ENV_LISTEN.to_string(),
                value: value.clone(),
                message,
            })?;
        }
        if let Some(value) = vars.get(ENV_LANG) {
            self.language = Lang::parse(value).ok_or_else(|| ConfigError::Env {
                var: ENV_LANG.to_string(),
                value: value.clone(),
                message: msg!("config-languages"),
            })?;
        }
        if let Some(value) = vars.get(ENV_STORE_URL) {
            self.apply_store_url(value)?;
        }
        if let Some(value) = vars.get(ENV_STORE_PASSWORD_FILE) {
            self.apply_store_password_file(value);
        }
        if let Some(value) = vars.get(ENV_STATE_DIR) {
            self.state_dir = Some(PathBuf::from(value));
        } else if self.state_dir.is_none() {
            if let Some(first) = vars
                .get(ENV_SYSTEMD_STATE_DIRECTORY)
                .and_then(|value| value.split(':').find(|entry| !entry.is_empty()))
            {
                self.state_dir = Some(PathBuf::from(first));
            }
        }
        Ok(())
    }

    /// Applies command-line values (they win over everything else).
    pub fn apply_overrides(&mut self, overrides: &Overrides) {
        if let Some(state_dir) = &overrides.state_dir {
            self.state_dir = Some(state_dir.clone());
        }
        if let Some(listen) = overrides.listen {
            self.listen = listen;
        }
        if let Some(language) = overrides.language {
            self.language = language;
        }
    }
}

/// The line and column (from 1) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |start| start.chars().count())
        + 1;
    (line, column)
}

/// The keys whose text the gateway parses itself, refused in its own words:
/// `Err((key, what is wrong))`. Other types are left to the parser.
fn check_text_keys(table: &toml::Table) -> Result<(), (&'static str, Message)> {
    let text = |key: &str| table.get(key).and_then(toml::Value::as_str);
    if let Some(value) = text("language") {
        if Lang::parse(value).is_none() {
            return Err(("language", msg!("config-language-unknown", value = value)));
        }
    }
    if let Some(value) = text("timezone_offset") {
        if parse_offset(value).is_none() {
            return Err(("timezone_offset", msg!("config-offset-bad", value = value)));
        }
    }
    if let Some(value) = text("listen") {
        parse_listen(value).map_err(|problem| {
            (
                "listen",
                msg!("config-listen-bad", value = value, problem = problem),
            )
        })?;
    }
    Ok(())
}
