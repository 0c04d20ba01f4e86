//! `log export`: the register of a period and an organization as CSV (`admin::csv`) or JSON
//! lines, with a progress bar on a terminal; and the bar an open's index rebuild shows.

use std::io::Write;
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use indicatif::{ProgressBar, ProgressStyle};

use super::admin_commands::Runner;
use super::ExportFormat;
use crate::admin::audit::{ExportedEntry, Period};
use crate::admin::{csv, AdminRequest};
use crate::config::Config;
use crate::i18n::{default_lang, Lang};
use crate::model::Environment;
use crate::msg;
use crate::store::Progress;
use crate::sync;

/// What `log export` takes.
pub(super) struct ExportRequest {
    pub format: ExportFormat,
    pub dialect: csv::Dialect,
    pub org: Option<String>,
    pub environment: Environment,
    /// First and last day of certification, in `zone`.
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

/// Entries fetched per admin request.
const PAGE: usize = 1000;

/// Writes the export to stdout.
pub(super) fn export(config: &Config, request: ExportRequest) -> anyhow::Result<()> {
    let period = Period::new(request.from, request.to).ok_or_else(|| {
        anyhow::anyhow!(
            "{}",
            msg!("cli-export-dates-reversed").render(default_lang())
        )
    })?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let ExportFormat::Csv = request.format {
        writeln!(out, "{}", csv::header_in(request.dialect))?;
    }
    let zone = config.offset();
    // Through the service, one request a page; without it, the store opened once.
    let mut runner = Runner::new(config);
    let length: u64 = serde_json::from_value(runner.run(AdminRequest::LogLength {
        environment: request.environment,
    })?)?;
    let bar = entries_bar(length, default_lang());
    let mut after = 0;
    let mut written = 0u64;
    loop {
        let entries = runner.page(request.org.clone(), request.environment, after, PAGE)?;
        let Some(last) = entries.last() else { break };
        bar.set_position(last.sequence);
        after = last.sequence;
        for entry in entries.iter().filter(|e| period.holds(e, zone)) {
            written += 1;
            match request.format {
                ExportFormat::Csv => writeln!(out, "{}", csv::row_in(entry, request.dialect))?,
                ExportFormat::Json => writeln!(out, "{}", ExportedEntry::of(entry).line()?)?,
            }
        }
    }
    out.flush()?;
    bar.finish_and_clear();
    eprintln!(
        "{}",
        msg!("cli-export-done", count = written).render(default_lang())
    );
    Ok(())
}

/// A bar over the register's `length` entries, drawn on stderr when it is a terminal.
fn entries_bar(length: u64, lang: Lang) -> ProgressBar {
    let bar = ProgressBar::new(length);
    let template = format!(
        "{{bar:40}} {{pos}}/{{len}} {} ({{eta}})",
        msg!("cli-progress-entries").render(lang)
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

/// A [`Progress`] hook that draws a bar (on stderr, when it is a terminal) once an open
/// replays or rebuilds the index from the journal, and the bar to clear afterwards.
pub(super) fn rebuild_progress(lang: Lang) -> (Progress, Arc<Mutex<Option<ProgressBar>>>) {
    let slot: Arc<Mutex<Option<ProgressBar>>> = Arc::new(Mutex::new(None));
    let shared = Arc::clone(&slot);
    let label = msg!("cli-progress-rebuild").render(lang);
    let progress = Progress::new(move |done, total| {
        let mut bar = sync::lock(&shared);
        let bar = bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(total);
            let template = format!("{{bar:40}} {{bytes}}/{{total_bytes}} {label} ({{eta}})");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(done);
    });
    (progress, slot)
}

/// Clears the bar `rebuild_progress` may have drawn.
pub(super) fn clear(slot: &Mutex<Option<ProgressBar>>) {
    if let Some(bar) = sync::lock(slot).take() {
        bar.finish_and_clear();
    }
}
