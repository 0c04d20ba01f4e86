//! `key` (API keys of an organization) and `dashboard-token` (its admins' sign-in tokens):
//! issued secrets are printed alone on stdout (for scripts) and shown this once; listings are
//! tables for people (times in the organization's zone) or `--json` for scripts.

use serde_json::Value;

use super::admin_commands::{environment, print_json, print_table, run};
use super::{DashboardTokenCommand, KeyCommand};
use crate::admin::AdminRequest;
use crate::config::Config;
use crate::i18n::{default_lang, format, names, Lang};
use crate::model::KeyRecord;
use crate::msg;

/// `key ...`
pub(super) fn key(config: &Config, command: KeyCommand) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        KeyCommand::Issue {
            org,
            sandbox,
            label,
        } => {
            let answer = run(
                config,
                AdminRequest::KeyIssue {
                    org,
                    environment: environment(sandbox),
                    label,
                },
            )?;
            let (secret, id) = issued(&answer, "key");
            println!("{secret}");
            eprintln!("{}", msg!("cli-key-issued", id = id).render(lang));
            Ok(())
        }
        KeyCommand::List { org, json } => {
            let keys: Vec<KeyRecord> =
                serde_json::from_value(run(config, AdminRequest::KeyList { org })?)?;
            if json {
                return print_json(&serde_json::to_value(&keys)?);
            }
            let rows = keys
                .iter()
                .map(|key| {
                    let enabled = if key.enabled { msg!("yes") } else { msg!("no") };
                    [
                        key.id.clone(),
                        names::environment(key.environment).render(lang),
                        enabled.render(lang),
                        format::date_time(key.created_at, config.offset(), lang),
                        key.label.clone(),
                    ]
                })
                .collect();
            let header = msg!("cli-key-list-header").render(lang);
            print_table(&[16, 14, 8, 30], &header, rows);
            Ok(())
        }
        KeyCommand::Disable { id } => set_enabled(config, id, false, lang),
        KeyCommand::Enable { id } => set_enabled(config, id, true, lang),
    }
}

fn set_enabled(config: &Config, id: String, enabled: bool, lang: Lang) -> anyhow::Result<()> {
    run(
        config,
        AdminRequest::KeySetEnabled {
            id: id.clone(),
            enabled,
        },
    )?;
    let said = if enabled {
        msg!("cli-key-enabled", id = id)
    } else {
        msg!("cli-key-disabled", id = id)
    };
    println!("{}", said.render(lang));
    Ok(())
}

/// `dashboard-token ...`
pub(super) fn dashboard_token(
    config: &Config,
    command: DashboardTokenCommand,
) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        DashboardTokenCommand::Issue { org, label } => {
            let answer = run(config, AdminRequest::DashboardTokenIssue { org, label })?;
            let (secret, id) = issued(&answer, "token");
            println!("{secret}");
            eprintln!("{}", msg!("cli-token-issued", id = id).render(lang));
            Ok(())
        }
        DashboardTokenCommand::List { org, json } => {
            let tokens = run(config, AdminRequest::DashboardTokenList { org })?;
            if json {
                return print_json(&tokens);
            }
            let rows = listed(&tokens)
                .map(|token| {
                    [
                        text(token, "id"),
                        yes_no(token, "revoked", lang),
                        time(token, "created_at", config, lang),
                        text(token, "label"),
                    ]
                })
                .collect();
            let header = msg!("cli-token-list-header").render(lang);
            print_table(&[14, 8, 30], &header, rows);
            Ok(())
        }
        DashboardTokenCommand::Revoke { id } => {
            run(
                config,
                AdminRequest::DashboardTokenRevoke { id: id.clone() },
            )?;
            println!("{}", msg!("cli-token-revoked", id = id).render(lang));
            Ok(())
        }
    }
}

/// The secret just issued (`answer[field]`) and its record's id.
fn issued(answer: &Value, field: &str) -> (String, String) {
    let secret = answer
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let id = answer
        .pointer("/record/id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    (secret.to_string(), id.to_string())
}

/// The items of a JSON array answer.
fn listed(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

/// The text field `name` of a JSON answer, `""` if absent.
fn text(value: &Value, name: &str) -> String {
    value
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The boolean field `name` (absent: false) as yes or no in `lang`.
fn yes_no(value: &Value, name: &str, lang: Lang) -> String {
    let set = value.get(name).and_then(Value::as_bool).unwrap_or(false);
    if set { msg!("yes") } else { msg!("no") }.render(lang)
}

/// The RFC 3339 time field `name` in the organization's zone with its offset, as it is when
/// it is not one.
fn time(value: &Value, name: &str, config: &Config, lang: Lang) -> String {
    let raw = text(value, name);
    match chrono::DateTime::parse_from_rfc3339(&raw) {
        Ok(at) => format::date_time(at.with_timezone(&chrono::Utc), config.offset(), lang),
        Err(_) => raw,
    }
}
