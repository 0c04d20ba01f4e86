//! Status throughput: `GET /api/v1/status` with 64 keep-alive connections, against a minimal
//! hyper server giving the same JSON, measured in turn in the same run (both in their own
//! process on the same machine as the load generator).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, Context};
use serde_json::json;

use super::{Ctx, StackSetup};
use crate::http::{self, Load};
use crate::procfs;
use crate::report::{summarize, Better, Figure, Target};

const CONNECTIONS: usize = 64;

struct Minimal {
    child: Child,
    addr: SocketAddr,
}

impl Minimal {
    fn start(me: &std::path::Path) -> anyhow::Result<Minimal> {
        let mut child = Command::new(me)
            .args(["minimal-server", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the minimal server")?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| anyhow!("minimal server said {line:?}"))?
            .parse()?;
        Ok(Minimal { child, addr })
    }
}

impl Drop for Minimal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== status throughput ({CONNECTIONS} keep-alive connections)");
    let stack = ctx.stack("status-", &StackSetup::fast()).await?;
    let gateway = stack.gateway().addr;
    let pid = stack.gateway().pid();
    let minimal = Minimal::start(&ctx.me)?;
    let rounds = ctx.runs(2, 3);
    let window = Duration::from_secs(if ctx.quick { 2 } else { 4 });
    let warmup = Duration::from_millis(500);
    let mut gateway_rates = Vec::new();
    let mut minimal_rates = Vec::new();
    let mut ratios = Vec::new();
    let mut gateway_latency = Vec::new();
    let mut minimal_latency = Vec::new();
    let mut errors = 0;
    for _ in 0..rounds {
        let m: Load =
            http::load(minimal.addr, "/api/v1/status", CONNECTIONS, warmup, window).await?;
        let g: Load = http::load(gateway, "/api/v1/status", CONNECTIONS, warmup, window).await?;
        errors += g.errors + m.errors;
        minimal_rates.push(m.rate());
        gateway_rates.push(g.rate());
        ratios.push(g.rate() / m.rate());
        gateway_latency.extend(g.latencies_us.iter().map(|us| us / 1e3));
        minimal_latency.extend(m.latencies_us.iter().map(|us| us / 1e3));
    }
    let peak = procfs::peak_rss(pid).unwrap_or(0);
    // The same gateway with request logging off, to show what the log line per request costs.
    stack.stop().await;
    let quiet_setup = StackSetup {
        log: "warn".to_string(),
        ..StackSetup::fast()
    };
    let quiet = ctx.stack("status-quiet-", &quiet_setup).await?;
    let q = http::load(
        quiet.gateway().addr,
        "/api/v1/status",
        CONNECTIONS,
        warmup,
        window,
    )
    .await?;
    let m = http::load(minimal.addr, "/api/v1/status", CONNECTIONS, warmup, window).await?;
    quiet.stop().await;
    drop(minimal);

    ctx.report.add(
        Figure::dist(
            "status_throughput.ratio",
            "status throughput, gateway / minimal hyper",
            "ratio",
            Better::Higher,
            &ratios,
        )
        .target(Target::at_least(0.9, "median"))
        .note(format!(
            "{rounds} rounds of {window:?} each way, {CONNECTIONS} connections, load generator in the bench process (2 threads); gateway at RUST_LOG=info as the unit runs it; {errors} errors"
        )),
    );
    ctx.report.add(Figure::dist(
        "status_throughput.gateway",
        "  gateway GET /api/v1/status",
        "req/s",
        Better::Higher,
        &gateway_rates,
    ));
    ctx.report.add(Figure::dist(
        "status_throughput.minimal",
        "  minimal hyper server, same JSON",
        "req/s",
        Better::Higher,
        &minimal_rates,
    ));
    ctx.report.add(Figure::dist(
        "status_throughput.gateway_latency",
        "  gateway latency per request",
        "ms",
        Better::Lower,
        &gateway_latency,
    ));
    ctx.report.add(Figure::dist(
        "status_throughput.minimal_latency",
        "  minimal server latency per request",
        "ms",
        Better::Lower,
        &minimal_latency,
    ));
    ctx.report.add(
        Figure::value(
            "status_throughput.ratio_log_warn",
            "  ratio with RUST_LOG=warn (no line per request)",
            "ratio",
            Better::Higher,
            q.rate() / m.rate(),
        )
        .note(format!(
            "diagnostic: {:.0} req/s vs minimal {:.0} req/s in one more round",
            q.rate(),
            m.rate()
        )),
    );
    ctx.report.add(Figure::value(
        "status_throughput.gateway_peak_rss",
        "  gateway peak RSS after the status load",
        "MiB",
        Better::Lower,
        procfs::mib(peak),
    ));
    let (gm, gp) = summarize(&gateway_latency, Better::Lower);
    ctx.report.detail(
        "status_throughput",
        json!({"gateway": gateway_rates, "minimal": minimal_rates, "ratios": ratios,
               "gateway_latency_ms": {"median": gm, "p99": gp},
               "log_warn": {"gateway": q.rate(), "minimal": m.rate()}}),
    );
    Ok(())
}
