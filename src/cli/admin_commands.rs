//! `org`, `key` and `log`: through the running service's admin socket when there is one,
//! else on the store directly (which fails clearly if another process holds it).

use std::io::Write;
use std::sync::Arc;

use anyhow::{bail, Context};
use serde_json::Value;

use super::{DashboardTokenCommand, ExportFormat, KeyCommand, LogCommand, OrgCommand};
use crate::admin::{csv, socket, Admin, AdminRequest, QuotaSettings};
use crate::config::Config;
use crate::model::{Environment, Organization, Plan, RegisterEntry};
use crate::store::{Store, StoreError, StoreOptions};

/// Runs `request` on the service if it runs, else on the store.
fn run(config: &Config, request: AdminRequest) -> anyhow::Result<Value> {
    let state_dir = config.resolved_state_dir();
    if let Some(answer) = socket::call(&socket::path_in(state_dir), &request)? {
        return Ok(answer);
    }
    let store = match Store::open(state_dir) {
        Ok(store) => store,
        Err(StoreError::Locked) => bail!(
            "{} is held by a running gateway whose admin socket does not answer; check the service",
            state_dir.display()
        ),
        Err(error) => {
            return Err(error)
                .with_context(|| format!("opening the register in {}", state_dir.display()))
        }
    };
    let admin = Admin::new(Arc::new(store), quota_settings(config));
    Ok(admin.handle(request)?)
}

pub(super) fn quota_settings(config: &Config) -> QuotaSettings {
    QuotaSettings {
        offset: config.offset(),
        start: config.plans.start,
        grow: config.plans.grow,
    }
}

fn environment(sandbox: bool) -> Environment {
    if sandbox {
        Environment::Sandbox
    } else {
        Environment::Production
    }
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// `org ...`
pub(super) fn org(config: &Config, command: OrgCommand) -> anyhow::Result<()> {
    match command {
        OrgCommand::Add {
            id,
            name,
            nif,
            isf,
            plan,
            quota,
            device,
        } => {
            let Some(plan) = Plan::parse(&plan) else {
                bail!("--plan must be start or grow");
            };
            if config.has_devices() && config.device(&device).is_none() {
                eprintln!("warning: no device named {device:?} in the configuration yet");
            }
            let org = Organization {
                id,
                name,
                nif,
                isf,
                plan,
                quota_override: quota,
                device,
            };
            print_json(&run(config, AdminRequest::OrgSave { org })?)
        }
        OrgCommand::List => {
            let orgs: Vec<Organization> =
                serde_json::from_value(run(config, AdminRequest::OrgList)?)?;
            println!(
                "{:<16} {:<12} {:<12} {:<6} {:<12} NAME",
                "ID", "NIF", "ISF", "PLAN", "DEVICE"
            );
            for org in orgs {
                println!(
                    "{:<16} {:<12} {:<12} {:<6} {:<12} {}",
                    org.id,
                    org.nif,
                    org.isf,
                    org.plan.as_str(),
                    org.device,
                    org.name
                );
            }
            Ok(())
        }
        OrgCommand::Show { id } => print_json(&run(config, AdminRequest::OrgShow { id })?),
    }
}

/// `key ...`
pub(super) fn key(config: &Config, command: KeyCommand) -> anyhow::Result<()> {
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
            let key = answer
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let id = answer
                .pointer("/record/id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            println!("{key}");
            eprintln!("key id {id}: store this key now, it is not shown again");
            Ok(())
        }
        KeyCommand::List { org } => {
            let keys = run(config, AdminRequest::KeyList { org })?;
            println!(
                "{:<16} {:<11} {:<8} {:<25} LABEL",
                "ID", "ENV", "ENABLED", "CREATED"
            );
            for key in keys.as_array().into_iter().flatten() {
                let text = |name: &str| key.get(name).and_then(Value::as_str).unwrap_or("");
                let enabled = key.get("enabled").and_then(Value::as_bool).unwrap_or(false);
                println!(
                    "{:<16} {:<11} {:<8} {:<25} {}",
                    text("id"),
                    text("environment"),
                    if enabled { "yes" } else { "no" },
                    text("created_at"),
                    text("label")
                );
            }
            Ok(())
        }
        KeyCommand::Disable { id } => set_enabled(config, id, false),
        KeyCommand::Enable { id } => set_enabled(config, id, true),
    }
}

fn set_enabled(config: &Config, id: String, enabled: bool) -> anyhow::Result<()> {
    run(
        config,
        AdminRequest::KeySetEnabled {
            id: id.clone(),
            enabled,
        },
    )?;
    println!("key {id} {}", if enabled { "enabled" } else { "disabled" });
    Ok(())
}

/// `index rebuild`: opens the store (the service must be stopped) accepting the journal as
/// the truth.
pub(super) fn rebuild_index(config: &Config) -> anyhow::Result<()> {
    let state_dir = config.resolved_state_dir();
    let options = StoreOptions {
        rebuild_stale_index: true,
    };
    let store = match Store::open_with(state_dir, &options) {
        Ok(store) => store,
        Err(StoreError::Locked) => {
            bail!("stop the service first: it holds {}", state_dir.display())
        }
        Err(error) => return Err(error).context("rebuilding the index"),
    };
    print_json(&serde_json::to_value(store.verify()?)?)?;
    eprintln!("index rebuilt from the journal; the journal verifies");
    Ok(())
}

/// `log ...`
pub(super) fn log(config: &Config, command: LogCommand) -> anyhow::Result<()> {
    match command {
        LogCommand::List {
            org,
            sandbox,
            after,
            limit,
        } => {
            let entries = page(config, org, environment(sandbox), after, limit)?;
            println!(
                "{:>8} {:<12} {:<24} {:<4} {:>14} {:<24} CERTIFIED",
                "SEQ", "ORG", "RN", "TYPE", "TOTAL", "CODEDEFDGI"
            );
            for e in entries {
                println!(
                    "{:>8} {:<12} {:<24} {:<4} {:>14} {:<24} {}",
                    e.sequence,
                    e.request.org,
                    e.request.rn,
                    e.request.invoice_type,
                    e.request.totals.total,
                    e.security.code_def,
                    e.certified_at
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                );
            }
            Ok(())
        }
        LogCommand::Show { sequence, sandbox } => print_json(&run(
            config,
            AdminRequest::LogShow {
                environment: environment(sandbox),
                sequence,
            },
        )?),
        LogCommand::Export {
            format,
            org,
            sandbox,
        } => export(config, format, org, environment(sandbox)),
        LogCommand::Verify => {
            let report = run(config, AdminRequest::LogVerify)?;
            print_json(&report)?;
            eprintln!("journal verified: every CRC and the hash chain are intact");
            Ok(())
        }
    }
}

fn page(
    config: &Config,
    org: Option<String>,
    environment: Environment,
    after: u64,
    limit: usize,
) -> anyhow::Result<Vec<RegisterEntry>> {
    let value = run(
        config,
        AdminRequest::LogList {
            org,
            environment,
            after,
            limit,
        },
    )?;
    Ok(serde_json::from_value(value)?)
}

fn export(
    config: &Config,
    format: ExportFormat,
    org: Option<String>,
    environment: Environment,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let ExportFormat::Csv = format {
        writeln!(out, "{}", csv::HEADER)?;
    }
    let mut after = 0;
    loop {
        let entries = page(config, org.clone(), environment, after, 1000)?;
        let Some(last) = entries.last() else { break };
        after = last.sequence;
        for entry in &entries {
            match format {
                ExportFormat::Csv => writeln!(out, "{}", csv::row(entry))?,
                ExportFormat::Json => writeln!(out, "{}", serde_json::to_string(entry)?)?,
            }
        }
    }
    out.flush()?;
    Ok(())
}

// ---- dashboard-token ----

/// `dashboard-token ...`
pub(super) fn dashboard_token(
    config: &Config,
    command: DashboardTokenCommand,
) -> anyhow::Result<()> {
    match command {
        DashboardTokenCommand::Issue { org, label } => {
            let answer = run(config, AdminRequest::DashboardTokenIssue { org, label })?;
            let token = answer
                .get("token")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let id = answer
                .pointer("/record/id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            println!("{token}");
            eprintln!("dashboard token {id}: give it to the organization's admin now, it is not shown again");
            Ok(())
        }
        DashboardTokenCommand::List { org } => {
            let tokens = run(config, AdminRequest::DashboardTokenList { org })?;
            println!("{:<14} {:<8} {:<25} LABEL", "ID", "REVOKED", "CREATED");
            for token in tokens.as_array().into_iter().flatten() {
                let text = |name: &str| token.get(name).and_then(Value::as_str).unwrap_or("");
                let revoked = token
                    .get("revoked")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                println!(
                    "{:<14} {:<8} {:<25} {}",
                    text("id"),
                    if revoked { "yes" } else { "no" },
                    text("created_at"),
                    text("label")
                );
            }
            Ok(())
        }
        DashboardTokenCommand::Revoke { id } => {
            run(
                config,
                AdminRequest::DashboardTokenRevoke { id: id.clone() },
            )?;
            println!("dashboard token {id} revoked; its sessions have ended");
            Ok(())
        }
    }
}
