//! `org`, `key` and `log`: through the running service's admin socket when there is one,
//! else on the store directly (which fails clearly if another process holds it).

use std::sync::Arc;

use anyhow::bail;
use serde_json::Value;

use super::errors::Say;
use super::{CsvSeparator, LogCommand};
use crate::admin::audit::InvoiceRecord;
use crate::admin::{csv, socket, Admin, AdminRequest, QuotaSettings};
use crate::config::Config;
use crate::i18n::{default_lang, format};
use crate::model::{Environment, RegisterEntry};
use crate::msg;
use crate::store::{Store, StoreError, StoreOptions, VerifyReport};

/// Runs `request` on the service if it runs, else on the store.
pub(super) fn run(config: &Config, request: AdminRequest) -> anyhow::Result<Value> {
    Runner::new(config).run(request)
}

/// [`run`], for the other command modules.
pub(super) fn run_request(config: &Config, request: AdminRequest) -> anyhow::Result<Value> {
    run(config, request)
}

/// Runs requests on the service if it runs, else on the store, which is opened on the first
/// such request and kept for the next ones (a long export opens it once, not once a page).
pub(super) struct Runner<'a> {
    config: &'a Config,
    local: Option<Admin>,
}

impl<'a> Runner<'a> {
    pub(super) fn new(config: &'a Config) -> Runner<'a> {
        Runner {
            config,
            local: None,
        }
    }

    /// Whether this process opened the store (and holds its lock: no service runs on it).
    pub(super) fn holds_store(&self) -> bool {
        self.local.is_some()
    }

    pub(super) fn run(&mut self, request: AdminRequest) -> anyhow::Result<Value> {
        // While this process holds the store, no service can have started on it.
        if let Some(admin) = &self.local {
            return Ok(admin.handle(request)?);
        }
        // A register in PostgreSQL is used directly, whether a service runs or not.
        if let Some(settings) = super::database::settings(self.config)? {
            let store = super::database::open_blocking(&settings)?;
            let admin = self
                .local
                .insert(Admin::new(Arc::new(store), quota_settings(self.config)));
            return Ok(admin.handle(request)?);
        }
        let state_dir = self.config.resolved_state_dir();
        if let Some(answer) = socket::call(&socket::path_in(state_dir), &request, default_lang())? {
            return Ok(answer);
        }
        // Only `org add` starts a register; any other command run from the wrong folder
        // must not look like an empty system.
        if matches!(request, AdminRequest::OrgSave { .. }) {
            super::state_dir::prepare(state_dir)?.warn_if_readable(state_dir);
        } else {
            super::state_dir::require_existing(state_dir)?;
        }
        let (progress, bar) = super::export::rebuild_progress(default_lang());
        let options = StoreOptions {
            index_cache_mib: self.config.index_cache_mib,
            progress,
            ..StoreOptions::default()
        };
        let opened = Store::open_with(state_dir, &options);
        super::export::clear(&bar);
        let dir = || state_dir.display().to_string();
        let store = match opened {
            Ok(store) => store,
            Err(StoreError::Locked) => bail!(msg!("cli-register-held", dir = dir())),
            Err(error) => return Err(error).say(|| msg!("cli-register-open", dir = dir())),
        };
        let admin = self
            .local
            .insert(Admin::new(Arc::new(store), quota_settings(self.config)));
        Ok(admin.handle(request)?)
    }
}

impl Runner<'_> {
    /// A page of `org`'s entries (or everyone's) after `after`, in sequence order.
    pub(super) fn page(
        &mut self,
        org: Option<String>,
        environment: Environment,
        after: u64,
        limit: usize,
    ) -> anyhow::Result<Vec<RegisterEntry>> {
        let value = self.run(AdminRequest::LogList {
            org,
            environment,
            after,
            limit,
        })?;
        Ok(serde_json::from_value(value)?)
    }
}

pub(super) fn quota_settings(config: &Config) -> QuotaSettings {
    QuotaSettings {
        offset: config.offset(),
        start: config.plans.start,
        grow: config.plans.grow,
    }
}

pub(super) fn environment(sandbox: bool) -> Environment {
    if sandbox {
        Environment::Sandbox
    } else {
        Environment::Production
    }
}

/// Prints `value` as the CLI's `--json` does: pretty, and every `environment` of an object
/// (or of the objects of an array) written `production`/`sandbox` as the API writes it.
pub(super) fn print_json(value: &Value) -> anyhow::Result<()> {
    let mut value = value.clone();
    crate::admin::audit::api_environment(&mut value);
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// Prints a header line and rows (see [`format_table`]).
pub(super) fn print_table<const N: usize>(widths: &[usize], header: &str, rows: Vec<[String; N]>) {
    print!("{}", format_table(widths, header, rows));
}

/// A header line and rows, each ending with a line end: every column but the last
/// left-aligned and padded to its width in `widths` (a longer value is not cut), one space
/// apart; the last one as is. `header` is the catalogue's line of column names, `|` between
/// them (`ID | NIF | ...`).
pub(super) fn format_table<const N: usize>(
    widths: &[usize],
    header: &str,
    rows: Vec<[String; N]>,
) -> String {
    debug_assert_eq!(widths.len() + 1, N);
    let mut names = [""; N];
    for (slot, name) in names.iter_mut().zip(header.split('|')) {
        *slot = name.trim();
    }
    let line = |cells: &[&str]| {
        let mut line = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            line.push_str(&format!("{cell:<width$} "));
        }
        line.push_str(cells[N - 1]);
        line.push('\n');
        line
    };
    let mut out = line(&names);
    for row in &rows {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    out
}

/// `index rebuild`: opens the store (the service must be stopped) accepting the journal as
/// the truth. An index that disagrees with the journal is moved aside and rebuilt; one that
/// agrees is left alone and said so, unless `force`: then it is moved aside and rebuilt too.
pub(super) fn rebuild_index(config: &Config, force: bool) -> anyhow::Result<()> {
    let lang = default_lang();
    let state_dir = config.resolved_state_dir();
    super::state_dir::require_existing(state_dir)?;
    let (progress, bar) = super::export::rebuild_progress(lang);
    let options = StoreOptions {
        rebuild_stale_index: true,
        index_cache_mib: config.index_cache_mib,
        progress,
        ..StoreOptions::default()
    };
    let open = || match Store::open_with(state_dir, &options) {
        Ok(store) => {
            super::export::clear(&bar);
            Ok(store)
        }
        Err(StoreError::Locked) => Err(anyhow::Error::new(msg!(
            "cli-index-service-running",
            dir = state_dir.display().to_string()
        ))),
        Err(error) => Err(error).say(|| msg!("cli-index-rebuild-failed")),
    };
    let before = set_aside(state_dir);
    let mut store = open()?;
    let mut aside: Vec<_> = set_aside(state_dir).difference(&before).cloned().collect();
    if aside.is_empty() && force {
        drop(store);
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let to = state_dir.join(format!("index.sled.stale-{stamp}"));
        std::fs::rename(state_dir.join("index.sled"), &to)
            .say(|| msg!("cli-index-move-aside", to = to.display().to_string()))?;
        aside.push(
            to.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        store = open()?;
    }
    let report = store.verify()?;
    print_json(&serde_json::to_value(&report)?)?;
    eprintln!("{}", verified(&report).render(lang));
    if aside.is_empty() {
        eprintln!("{}", msg!("cli-index-agrees").render(lang));
    } else {
        let aside = aside.join(", ");
        eprintln!("{}", msg!("cli-index-rebuilt", aside = aside).render(lang));
    }
    Ok(())
}

/// The names of the indexes kept aside in `state_dir` (`index.sled.stale-*`, `.corrupt-*`).
fn set_aside(state_dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("index.sled."))
        .collect()
}

/// `log ...`
pub(super) fn log(config: &Config, command: LogCommand) -> anyhow::Result<()> {
    match command {
        LogCommand::List {
            org,
            sandbox,
            after,
            limit,
            json,
        } => {
            if let Some(org) = &org {
                // An organization that does not exist is an error, not an empty page.
                run(config, AdminRequest::OrgShow { id: org.clone() })?;
            }
            let entries = Runner::new(config).page(org, environment(sandbox), after, limit)?;
            if json {
                return print_json(&serde_json::to_value(&entries)?);
            }
            let lang = default_lang();
            let header = msg!("cli-log-list-header").render(lang);
            let rows = entries
                .into_iter()
                .map(|e| {
                    [
                        e.sequence.to_string(),
                        e.request.org,
                        e.request.rn,
                        e.request.invoice_type.to_string(),
                        format::number(e.request.totals.total, lang),
                        e.security.code_def,
                        format::date_time(e.certified_at, config.offset(), lang),
                    ]
                })
                .collect();
            print_table(&[8, 12, 24, 4, 16, 24], &header, rows);
            Ok(())
        }
        LogCommand::Show {
            sequence,
            org,
            rn,
            sandbox,
            json,
        } => {
            let value = run(
                config,
                AdminRequest::LogInvoice {
                    environment: environment(sandbox),
                    sequence,
                    org,
                    rn,
                },
            )?;
            if json {
                return print_json(&value);
            }
            let record: InvoiceRecord = serde_json::from_value(value)?;
            print!(
                "{}",
                super::invoice_view::render(&record, config.offset(), default_lang())
            );
            Ok(())
        }
        LogCommand::Export {
            format,
            separator,
            bom,
            org,
            sandbox,
            from,
            to,
        } => {
            if let Some(org) = &org {
                run(config, AdminRequest::OrgShow { id: org.clone() })?;
            }
            let request = super::export::ExportRequest {
                format,
                dialect: csv::Dialect {
                    semicolon: matches!(separator, CsvSeparator::Semicolon),
                    bom,
                },
                org,
                environment: environment(sandbox),
                from,
                to,
            };
            super::export::export(config, request)
        }
        LogCommand::Verify => {
            let value = run(config, AdminRequest::LogVerify)?;
            print_json(&value)?;
            let report: VerifyReport = serde_json::from_value(value)?;
            eprintln!("{}", verified(&report).render(default_lang()));
            Ok(())
        }
    }
}

/// What `log verify` found, in words (the JSON on stdout is for scripts).
fn verified(report: &VerifyReport) -> crate::i18n::Message {
    if let Some(chains) = report.chains {
        return msg!(
            "cli-log-verified-database",
            entries = report.certified,
            chains = chains,
            kept = report.invoices_kept
        );
    }
    msg!(
        "cli-log-verified",
        records = report.records,
        certified = report.certified,
        kept = report.invoices_kept,
        head = report.head_sha256.as_str()
    )
}
