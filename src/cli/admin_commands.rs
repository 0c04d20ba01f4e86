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
    Runner::new(config).run(request)
}

/// [`run`], for the other command modules.
pub(super) fn run_request(config: &Config, request: AdminRequest) -> anyhow::Result<Value> {
    run(config, request)
}

/// Runs requests on the service if it runs, else on the store, which is opened on the first
/// such request and kept for the next ones (a long export opens it once, not once a page).
struct Runner<'a> {
    config: &'a Config,
    local: Option<Admin>,
}

impl<'a> Runner<'a> {
    fn new(config: &'a Config) -> Runner<'a> {
        Runner {
            config,
            local: None,
        }
    }

    fn run(&mut self, request: AdminRequest) -> anyhow::Result<Value> {
        // While this process holds the store, no service can have started on it.
        if let Some(admin) = &self.local {
            return Ok(admin.handle(request)?);
        }
        let state_dir = self.config.resolved_state_dir();
        if let Some(answer) = socket::call(&socket::path_in(state_dir), &request)? {
            return Ok(answer);
        }
        let options = StoreOptions {
            index_cache_mib: self.config.index_cache_mib,
            ..StoreOptions::default()
        };
        let store = match Store::open_with(state_dir, &options) {
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
        let admin = self
            .local
            .insert(Admin::new(Arc::new(store), quota_settings(self.config)));
        Ok(admin.handle(request)?)
    }
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

/// Prints a header line and rows: every column but the last left-aligned and padded to its
/// width in `widths` (a longer value is not cut), one space apart; the last one as is.
fn print_table<const N: usize>(widths: &[usize], header: [&str; N], rows: Vec<[String; N]>) {
    debug_assert_eq!(widths.len() + 1, N);
    let line = |cells: &[&str]| {
        let mut line = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            line.push_str(&format!("{cell:<width$} "));
        }
        line.push_str(cells[N - 1]);
        println!("{line}");
    };
    line(&header);
    for row in &rows {
        line(&row.each_ref().map(String::as_str));
    }
}

/// The text field `name` of a JSON answer, `""` if absent.
fn text(value: &Value, name: &str) -> String {
    value
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The boolean field `name` of a JSON answer (absent: false) as `yes` or `no`.
fn yes_no(value: &Value, name: &str) -> String {
    let set = value.get(name).and_then(Value::as_bool).unwrap_or(false);
    if set { "yes" } else { "no" }.to_string()
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
            print_issued(
                &answer,
                "key",
                "key id",
                "store this key now, it is not shown again",
            );
            Ok(())
        }
        KeyCommand::List { org } => {
            let keys = run(config, AdminRequest::KeyList { org })?;
            let rows = keys
                .as_array()
                .into_iter()
                .flatten()
                .map(|key| {
                    [
                        text(key, "id"),
                        text(key, "environment"),
                        yes_no(key, "enabled"),
                        text(key, "created_at"),
                        text(key, "label"),
                    ]
                })
                .collect();
            print_table(
                &[16, 11, 8, 25],
                ["ID", "ENV", "ENABLED", "CREATED", "LABEL"],
                rows,
            );
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
        index_cache_mib: config.index_cache_mib,
        ..StoreOptions::default()
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
            let entries = page(
                &mut Runner::new(config),
                org,
                environment(sandbox),
                after,
                limit,
            )?;
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
    runner: &mut Runner<'_>,
    org: Option<String>,
    environment: Environment,
    after: u64,
    limit: usize,
) -> anyhow::Result<Vec<RegisterEntry>> {
    let value = runner.run(AdminRequest::LogList {
        org,
        environment,
        after,
        limit,
    })?;
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
    // Through the service, one request a page; without it, the store opened once.
    let mut runner = Runner::new(config);
    let mut after = 0;
    loop {
        let entries = page(&mut runner, org.clone(), environment, after, 1000)?;
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
/// Prints a secret just issued (`answer[secret]`) alone on stdout, for scripts, and its record's
/// id with `advice` on stderr: the secret is shown this once.
fn print_issued(answer: &Value, secret: &str, what: &str, advice: &str) {
    let secret = answer
        .get(secret)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let id = answer
        .pointer("/record/id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    println!("{secret}");
    eprintln!("{what} {id}: {advice}");
}

pub(super) fn dashboard_token(
    config: &Config,
    command: DashboardTokenCommand,
) -> anyhow::Result<()> {
    match command {
        DashboardTokenCommand::Issue { org, label } => {
            let answer = run(config, AdminRequest::DashboardTokenIssue { org, label })?;
            print_issued(
                &answer,
                "token",
                "dashboard token",
                "give it to the organization's admin now, it is not shown again",
            );
            Ok(())
        }
        DashboardTokenCommand::List { org } => {
            let tokens = run(config, AdminRequest::DashboardTokenList { org })?;
            let rows = tokens
                .as_array()
                .into_iter()
                .flatten()
                .map(|token| {
                    [
                        text(token, "id"),
                        yes_no(token, "revoked"),
                        text(token, "created_at"),
                        text(token, "label"),
                    ]
                })
                .collect();
            print_table(&[14, 8, 25], ["ID", "REVOKED", "CREATED", "LABEL"], rows);
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
