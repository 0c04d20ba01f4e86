//! Idle RSS of a started gateway (one device connected, the sandbox simulator running, a
//! small register) and the size of the release binary.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::{Ctx, StackSetup};
use crate::procfs;
use crate::report::{Better, Figure, Target};

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== footprint");
    let stack = ctx.stack("idle-", &StackSetup::fast()).await?;
    let pid = stack.gateway().pid();
    tokio::time::sleep(Duration::from_secs(if ctx.quick { 1 } else { 3 })).await;
    let rss = procfs::rss(pid).unwrap_or(0);
    let peak = procfs::peak_rss(pid).unwrap_or(0);
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0);
    stack.stop().await;
    ctx.report.add(
        Figure::value(
            "idle_rss",
            "idle RSS (VmRSS), ready, device connected",
            "MiB",
            Better::Lower,
            procfs::mib(rss),
        )
        .target(Target::below(20.0, "value"))
        .note(format!(
            "peak so far {:.1} MiB, {threads} threads",
            procfs::mib(peak)
        )),
    );

    let size = std::fs::metadata(&ctx.bin)?.len();
    let stripped = stripped_size(ctx)?;
    ctx.report.add(
        Figure::value(
            "binary_size",
            "release binary size (emcf-gateway)",
            "MiB",
            Better::Lower,
            procfs::mib(size),
        )
        .note(match stripped {
            Some(s) => format!(
                "{:.1} MiB after `strip` (the release profile keeps symbols)",
                procfs::mib(s)
            ),
            None => "strip not available".to_string(),
        }),
    );
    ctx.report.detail(
        "footprint",
        json!({"idle_rss_bytes": rss, "idle_peak_bytes": peak, "threads": threads,
               "binary_bytes": size, "stripped_bytes": stripped}),
    );
    Ok(())
}

fn stripped_size(ctx: &Ctx) -> anyhow::Result<Option<u64>> {
    let dir = ctx.tempdir("strip-")?;
    let copy = dir.path().join("emcf-gateway");
    std::fs::copy(&ctx.bin, &copy)?;
    let ok = Command::new("strip")
        .arg(&copy)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    Ok(ok.then(|| std::fs::metadata(&copy).map(|m| m.len()).unwrap_or(0)))
}
