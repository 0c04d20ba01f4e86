//! `config check`: the configuration read exactly as `serve` reads it (the same
//! [`Config::resolve`], so the same refusals), then what it names, checked without changing
//! anything: the file's mode, the state directory, `[store]`, the running service, each device
//! (a box through the service that owns its port, or on its port with read-only commands; a
//! web API entry by its status call), every token and password file, and with `--smtp` the
//! relay (a login and NOOP, no message). One line per check in the CLI's language, each
//! problem with its fix; warnings are said, errors make the exit status 1. The package's
//! postinst and docs/install.md run it.

mod channels;
mod files;

use std::os::unix::fs::MetadataExt;

use anyhow::bail;
use serde_json::{json, Value};

use super::admin_commands::print_json;
use super::errors::Say;
use crate::config::{Config, ConfigError, DeviceKind};
use crate::i18n::{default_lang, Lang, Localized, Message};
use crate::msg;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    /// Right.
    Ok,
    /// Said for information (what was not tried, how a device was reached).
    Note,
    /// Works, but should be changed; not an error.
    Warning,
    /// `serve` would refuse it, or it would fail.
    Error,
}

impl Level {
    fn code(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Note => "note",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    fn label(self) -> Message {
        match self {
            Level::Ok => msg!("cli-check-level-ok"),
            Level::Note => msg!("cli-check-level-note"),
            Level::Warning => msg!("cli-check-level-warning"),
            Level::Error => msg!("cli-check-level-error"),
        }
    }
}

/// One check's outcome: what was checked (`file`, `state_dir`, `store`, `service`,
/// `devices`, `device`, `secret_file`, `smtp`), which one (a path, a device's name), and what a person
/// reads (with the fix when something is wrong).
#[derive(Debug, Clone)]
pub(super) struct Finding {
    check: &'static str,
    subject: String,
    level: Level,
    message: Message,
}

impl Finding {
    pub(super) fn new(check: &'static str, subject: &str, level: Level, message: Message) -> Self {
        Finding {
            check,
            subject: subject.to_owned(),
            level,
            message,
        }
    }
}

/// Runs every check on `config` (or says why it cannot be read), prints them, and fails
/// (exit 1) when one is an error.
pub(super) fn run(
    config: Result<Config, ConfigError>,
    smtp: bool,
    json: bool,
) -> anyhow::Result<()> {
    let lang = default_lang();
    let findings = match config {
        Err(error) => {
            let subject = match &error {
                ConfigError::Read { path, .. } | ConfigError::Parse { path, .. } => {
                    path.display().to_string()
                }
                ConfigError::Invalid { file, .. } => file
                    .as_ref()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                ConfigError::Env { var, .. } => var.clone(),
            };
            vec![
                Finding::new("file", &subject, Level::Error, error.message()),
                Finding::new(
                    "file",
                    &subject,
                    Level::Note,
                    msg!("cli-check-rest-not-done"),
                ),
            ]
        }
        Ok(config) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .say(|| msg!("cli-runtime-failed"))?;
            runtime.block_on(check_all(&config, smtp, lang))
        }
    };
    let errors = count(&findings, Level::Error);
    let warnings = count(&findings, Level::Warning);
    if json {
        print_json(&as_json(&findings, errors, warnings, lang))?;
    } else {
        print!("{}", as_text(&findings, errors, warnings, lang));
    }
    if errors > 0 {
        bail!(msg!(
            "cli-check-failed",
            errors = errors,
            warnings = warnings
        ));
    }
    Ok(())
}

/// Every check, in the order a person fixes things.
async fn check_all(config: &Config, smtp: bool, lang: Lang) -> Vec<Finding> {
    let mut findings = vec![files::config_file(config)];
    if let Some(refusal) = super::serve::reserved_device_name(config) {
        findings.push(Finding::new("file", "", Level::Error, refusal));
    }
    findings.push(files::state_dir(config));
    findings.extend(store(config).await);
    let (service, said) = channels::service(config, lang);
    findings.push(said);
    let kept = kept_devices(config).await;
    findings.extend(channels::device_mode(config, &kept));
    for entry in &config.devices {
        match entry.kind {
            DeviceKind::Box => {
                findings.push(channels::serial(config, entry, &service, lang).await);
            }
            DeviceKind::WebApi => {
                if let Some(ca) = &entry.ca_file {
                    findings.push(files::readable("ca_file", ca));
                }
                findings.push(channels::web_api(entry, lang).await);
            }
        }
    }
    for (key, path) in files::secret_files(config) {
        findings.push(files::secret(config, &key, path));
    }
    findings.push(channels::smtp(config, smtp).await);
    findings
}

/// The web API e-MCFs kept in the PostgreSQL store (`device add`), by name; none when the
/// store is embedded or cannot be read (the store's own finding says why).
async fn kept_devices(config: &Config) -> Vec<String> {
    if config.store.url.is_none() {
        return Vec::new();
    }
    let config = config.clone();
    tokio::task::spawn_blocking(move || super::stored_devices::kept_names(&config))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// `[store]` with `url`: where it leads (never the password), what is wrong with its
/// password file, its CA file, whether the server answers and keeps commits (what `serve`
/// checks at start), and its schema (read, never changed).
async fn store(config: &Config) -> Vec<Finding> {
    let Some(url) = config.store.url.as_deref() else {
        return Vec::new();
    };
    // The file must be the service's: the state directory's owner when it exists.
    let owner = std::fs::metadata(config.resolved_state_dir()).map(|m| m.uid());
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    let owner = owner.unwrap_or_else(|_| unsafe { libc::geteuid() });
    let settings = config.store_settings_owned_by(owner);
    let mut findings = vec![match &settings {
        Ok(_) => {
            let message = match &config.store.password_file {
                Some(file) => msg!(
                    "config-store-check-password",
                    url = url,
                    file = file.display().to_string()
                ),
                None => msg!("config-store-check-no-password", url = url),
            };
            Finding::new("store", url, Level::Ok, message)
        }
        Err(error) => Finding::new("store", url, Level::Error, error.message()),
    }];
    if let Some(ca) = &config.store.ca_file {
        findings.push(files::readable("store.ca_file", ca));
    }
    if let Some(file) = &config.store.secret_key_file {
        let file_text = file.display().to_string();
        findings.push(match config.store_keyring_owned_by(owner) {
            Ok(keyring) => {
                let ids = keyring.map(|k| k.ids().join(", ")).unwrap_or_default();
                let message = msg!(
                    "config-store-check-keys",
                    file = file_text.as_str(),
                    keys = ids
                );
                Finding::new("store.secret_key_file", &file_text, Level::Ok, message)
            }
            Err(error) => Finding::new(
                "store.secret_key_file",
                &file_text,
                Level::Error,
                error.message(),
            ),
        });
    }
    if let Ok(Some(settings)) = settings {
        match crate::store::postgres::PgPool::connect(&settings).await {
            Ok(pool) => {
                findings.push(Finding::new(
                    "store",
                    url,
                    Level::Ok,
                    msg!(
                        "config-store-check-server",
                        version = pool.server().version.clone(),
                        synchronous_commit = pool.server().synchronous_commit.clone()
                    ),
                ));
                findings.push(schema(&pool, url).await);
            }
            Err(error) => findings.push(Finding::new(
                "store",
                url,
                Level::Error,
                msg!("config-store-check-unusable", detail = error.to_string()),
            )),
        }
    }
    findings
}

/// The database's schema against this binary's migrations, and whether the role may write
/// the register (read only: what `serve` would find).
async fn schema(pool: &crate::store::postgres::PgPool, url: &str) -> Finding {
    use crate::store::postgres::{schema_state, SchemaState, MIGRATIONS};
    let (level, message) = match schema_state(pool, MIGRATIONS).await {
        Ok(SchemaState::UpToDate {
            version,
            writable: true,
        }) => (
            Level::Ok,
            msg!("config-store-schema-up-to-date", version = version),
        ),
        Ok(SchemaState::UpToDate {
            version,
            writable: false,
        }) => (
            Level::Error,
            msg!(
                "config-store-schema-read-only",
                version = version,
                user = pool.user()
            ),
        ),
        Ok(SchemaState::Missing) => (Level::Warning, msg!("config-store-schema-missing")),
        Ok(SchemaState::Behind { applied, binary }) => (
            Level::Warning,
            msg!(
                "config-store-schema-behind",
                applied = applied,
                binary = binary
            ),
        ),
        Ok(SchemaState::Newer { applied, binary }) => (
            Level::Error,
            msg!(
                "config-store-schema-newer",
                applied = applied,
                binary = binary
            ),
        ),
        Err(error) => (
            Level::Error,
            msg!("config-store-schema-unreadable", detail = error.to_string()),
        ),
    };
    Finding::new("store", url, level, message)
}

fn count(findings: &[Finding], level: Level) -> usize {
    findings.iter().filter(|f| f.level == level).count()
}

/// One line per check (its level, then what it says), then the outcome.
fn as_text(findings: &[Finding], errors: usize, warnings: usize, lang: Lang) -> String {
    let labels: Vec<String> = findings
        .iter()
        .map(|f| f.level.label().render(lang))
        .collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (finding, label) in findings.iter().zip(&labels) {
        let pad = width - label.chars().count();
        out.push_str(&format!(
            "{label}{:pad$}  {}\n",
            "",
            finding.message.render(lang)
        ));
    }
    let outcome = if errors == 0 && warnings == 0 {
        msg!("cli-check-all-right")
    } else {
        msg!("cli-check-outcome", errors = errors, warnings = warnings)
    };
    out.push_str(&format!("{}\n", outcome.render(lang)));
    out
}

/// `{ok, errors, warnings, checks: [{check, subject, level, text}]}`; `level` is one of
/// `ok`, `note`, `warning`, `error` whatever the language.
fn as_json(findings: &[Finding], errors: usize, warnings: usize, lang: Lang) -> Value {
    let checks: Vec<Value> = findings
        .iter()
        .map(|f| {
            json!({
                "check": f.check,
                "subject": f.subject,
                "level": f.level.code(),
                "text": f.message.render(lang),
            })
        })
        .collect();
    json!({
        "ok": errors == 0,
        "errors": errors,
        "warnings": warnings,
        "checks": checks,
    })
}
