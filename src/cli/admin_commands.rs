//! `org`, `key` and `log`: through the running service's admin socket when there is one,
//! else on the store directly (which fails clearly if another process holds it).

use std::io::Write;
use std::sync::Arc;

use anyhow::{bail, Context};
use serde_json::Value;

use super::{ExportFormat, KeyCommand, LogCommand, OrgCommand};
use crate::admin::{socket, Admin, AdminRequest, QuotaSettings};
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

const CSV_HEADER: &str = "sequence,environment,org,nif,isf,rn,type,total,vat,codeDEFDGI,counters,nim,qrCode,deviceDateTime,receivedAt,certifiedAt,keyId,requestDigest,source";

fn export(
    config: &Config,
    format: ExportFormat,
    org: Option<String>,
    environment: Environment,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let ExportFormat::Csv = format {
        writeln!(out, "{CSV_HEADER}")?;
    }
    let mut after = 0;
    loop {
        let entries = page(config, org.clone(), environment, after, 1000)?;
        let Some(last) = entries.last() else { break };
        after = last.sequence;
        for entry in &entries {
            match format {
                ExportFormat::Csv => writeln!(out, "{}", csv_row(entry))?,
                ExportFormat::Json => writeln!(out, "{}", serde_json::to_string(entry)?)?,
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// One CSV row (RFC 4180 quoting where needed).
fn csv_row(e: &RegisterEntry) -> String {
    let fields = [
        e.sequence.to_string(),
        e.request.environment.as_str().to_string(),
        e.request.org.clone(),
        e.request.nif.clone(),
        e.request.isf.clone(),
        e.request.rn.clone(),
        e.request.invoice_type.clone(),
        e.request.totals.total.to_string(),
        e.request.totals.vat.to_string(),
        e.security.code_def.clone(),
        e.security.counters.clone(),
        e.security.nim.clone(),
        e.security.qr_code.clone(),
        e.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string(),
        e.request
            .received_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        e.certified_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        e.request.key_id.clone(),
        e.request.request_digest.clone(),
        e.source.clone(),
    ];
    fields
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",")
}

fn csv_field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("F-1"), "F-1");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
