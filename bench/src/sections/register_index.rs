//! Register scale, the index's part: how fast a first open builds `index.sled` from the
//! journal (the index moved aside, the CLI opens the store), and the bytes on disk per entry
//! of the journal and of the index.

use std::path::Path;
use std::time::Instant;

use anyhow::bail;
use serde_json::{json, Value};

use super::Ctx;
use crate::dataset;
use crate::procfs;
use crate::report::{Better, Figure, Target};
use crate::rig;

/// Moves `index.sled` aside, opens the store with the CLI (which builds the index from the
/// journal before it answers), checks the answer, then drops the old index. Returns the
/// seconds the open took.
pub fn build_rate(ctx: &mut Ctx, config: &Path, state: &Path, entries: u64) -> anyhow::Result<f64> {
    let index = state.join("index.sled");
    let aside = state.join("index.sled.bench-aside");
    if aside.exists() {
        // An earlier run was stopped between the move and the end: the aside copy is the
        // data set's index, what is at `index.sled` (if anything) a partial build.
        if index.exists() {
            std::fs::remove_dir_all(&index)?;
        }
        std::fs::rename(&aside, &index)?;
    }
    std::fs::rename(&index, &aside)?;
    let started = Instant::now();
    let out = rig::cli(&ctx.bin, config, &["org", "list"]);
    let seconds = started.elapsed().as_secs_f64();
    let out = match out {
        Ok(out) if out.status.success() => out,
        other => {
            // Leave the data set as it was for the next run.
            let _ = std::fs::remove_dir_all(&index);
            std::fs::rename(&aside, &index)?;
            bail!("the first open failed: {other:?}");
        }
    };
    let listed = String::from_utf8_lossy(&out.stdout);
    if !listed.lines().any(|line| line.starts_with(dataset::ORG)) {
        bail!("the rebuilt index does not list the organization: {listed}");
    }
    std::fs::remove_dir_all(&aside)?;
    ctx.report.add(
        Figure::value(
            "register.index_build_rate",
            "first open without an index: index built from the journal",
            "entries/s",
            Better::Higher,
            entries as f64 / seconds,
        )
        .target(Target::at_least(50_000.0, "value"))
        .note(format!(
            "{entries} entries in {seconds:.1} s (`org list` with index.sled moved aside: the \
             journal read, checked and parsed, the index built in batches, then reopened with \
             the configured cache); what an upgrade to a new index layout costs once"
        )),
    );
    Ok(seconds)
}

/// The allocated bytes of `journal/` and `index.sled/` per entry.
pub fn disk(ctx: &mut Ctx, state: &Path, entries: u64) -> Value {
    let (journal, journal_alloc) = dataset::disk_usage(&state.join("journal"));
    let (index, index_alloc) = dataset::disk_usage(&state.join("index.sled"));
    let per = |bytes: u64| bytes as f64 / entries as f64;
    ctx.report.add(
        Figure::value(
            "register.bytes_per_entry",
            "bytes on disk per entry (journal + index.sled)",
            "B",
            Better::Lower,
            per(journal_alloc + index_alloc),
        )
        .note(format!(
            "allocated; apparent sizes {:.0} + {:.0} MiB",
            procfs::mib(journal),
            procfs::mib(index)
        )),
    );
    ctx.report.add(
        Figure::value(
            "register.index_bytes_per_entry",
            "  index.sled per entry",
            "B",
            Better::Lower,
            per(index_alloc),
        )
        .target(Target::below(1000.0, "value"))
        .note(format!("{:.0} MiB allocated", procfs::mib(index_alloc))),
    );
    ctx.report.add(
        Figure::value(
            "register.journal_bytes_per_entry",
            "  journal per entry (an intent and a certified record)",
            "B",
            Better::Lower,
            per(journal_alloc),
        )
        .note(format!("{:.0} MiB allocated", procfs::mib(journal_alloc))),
    );
    json!({"journal_bytes": journal, "index_bytes": index,
           "journal_allocated": journal_alloc, "index_allocated": index_alloc})
}

/// The journal's bytes per entry as generated (in the store's own record format:
/// `Event::certified`, what its writer journals) against what 1.5.0 wrote minus the second
/// copy of each invoice.
pub fn journal_budget(ctx: &mut Ctx, generated: &dataset::Generated) {
    let entries = generated.entries.max(1) as f64;
    // The records generated (the runs append a key and a few invoices after them).
    let per_entry = generated.generated_bytes as f64 / entries;
    let mut figure = Figure::value(
        "register.journal_entry_bytes",
        "  journal bytes per entry (intent + certified records)",
        "B",
        Better::Lower,
        per_entry,
    );
    if generated.budget_bytes > 0 && generated.generated_bytes > 0 {
        figure = figure
            .target(Target::at_most(
                generated.budget_bytes as f64 / entries,
                "value",
            ))
            .note(format!(
                "target: 1.5.0's intent + certified records minus the invoice's second copy{}",
                if generated.kept_twice {
                    " (this data set keeps it twice, as 1.5.0 to 1.7.0 did: --kept-twice)"
                } else {
                    ""
                }
            ));
    } else {
        figure =
            figure.note("a data set generated before the budget was counted: --fresh-register");
    }
    ctx.report.add(figure);
}

/// The register's three goals of issue 27 (idle RSS, index build rate, journal bytes per
/// entry), one line: PASS when each was measured and met.
pub fn goals(ctx: &mut Ctx) {
    let ids = [
        "register.idle_rss",
        "register.index_build_rate",
        "register.journal_entry_bytes",
    ];
    let verdicts: Vec<(&str, Option<bool>)> = ids
        .iter()
        .map(|id| {
            let met = ctx
                .report
                .figures
                .iter()
                .rev()
                .find(|f| f.id == *id)
                .and_then(|f| f.met);
            (*id, met)
        })
        .collect();
    let failed: Vec<String> = verdicts
        .iter()
        .filter(|(_, met)| *met != Some(true))
        .map(|(id, met)| {
            format!(
                "{id} {}",
                if met.is_none() {
                    "not measured"
                } else {
                    "not met"
                }
            )
        })
        .collect();
    if failed.is_empty() {
        println!("register scale goals (idle RSS, index build rate, journal per entry): PASS");
    } else {
        println!(
            "register scale goals (idle RSS, index build rate, journal per entry): FAIL ({})",
            failed.join(", ")
        );
    }
}
