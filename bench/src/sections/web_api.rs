//! The DGI web API channel (`kind = "edef"`) against the bundled web API simulator on a real
//! socket, in this process on a runtime of its own:
//! * **throughput**: the simulator answers every call 300 ms after doing its work (a slow DGI
//!   seen from Kinshasa); 40 keep-alive clients post invoices without pause to one e-MCF. The
//!   figure is invoices certified per second, counted second by second over the window
//!   (target >= 25/s: two calls of 300 ms per invoice, so it needs the pending window of 10);
//! * **overhead**: the simulator answers at once; one client, sequential. The gateway's
//!   overhead is the HTTP latency of an invoice minus the time its web API calls took (the
//!   gateway's own `emcf_device_round_trip_seconds_sum`, read from `/metrics` around each
//!   invoice): parsing, checks, quota, the two journal appends with their fsync, the answer.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::json;

use super::Ctx;
use crate::http::{self, Conn};
use crate::invoices::invoice;
use crate::report::{Better, Figure, Target};
use crate::rig::{self, Gateway};

/// The simulator's answer time in the throughput run.
const SLOW_DGI: Duration = Duration::from_millis(300);
/// Clients posting at once in the throughput run.
const CLIENTS: usize = 40;

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== DGI web API channel (web API simulator on a socket)");
    throughput(ctx).await?;
    overhead(ctx).await
}

async fn throughput(ctx: &mut Ctx) -> anyhow::Result<()> {
    let stack = WebStack::start(ctx, "edef-rate-", SLOW_DGI).await?;
    let addr = stack.gateway.addr;
    let warmup = Duration::from_secs(3);
    let window = Duration::from_secs(ctx.runs(10, 30) as u64);
    let begin = Instant::now() + warmup;
    let end = begin + window;
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let key = stack.key.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::connect(addr).await?;
            let mut done = Vec::new();
            let mut errors = Vec::new();
            for number in 0u64.. {
                if Instant::now() >= end {
                    break;
                }
                let body = serde_json::to_vec(&invoice(&format!("R-{client}-{number}"), 3))?;
                let request = http::post_invoice_request(addr, &key, &body, true);
                let response = conn.exchange(&request).await?;
                let at = Instant::now();
                if response.status == 200 {
                    done.push(at);
                } else {
                    errors.push(response.status);
                    conn = Conn::connect(addr).await?;
                }
            }
            Ok::<_, anyhow::Error>((done, errors))
        }));
    }
    let mut per_second = vec![0u64; window.as_secs() as usize];
    let mut errors = Vec::new();
    for task in tasks {
        let (done, failed) = task.await??;
        for at in done {
            if at >= begin && at < end {
                let second = (at - begin).as_secs() as usize;
                if let Some(count) = per_second.get_mut(second) {
                    *count += 1;
                }
            }
        }
        errors.extend(failed);
    }
    let finalized = stack.api.finalized_count();
    stack.stop().await;
    let rates: Vec<f64> = per_second.iter().map(|&n| n as f64).collect();
    let total: u64 = per_second.iter().sum();
    ctx.report.add(
        Figure::dist(
            "web_api.invoices_per_second",
            "web API: invoices/s per e-MCF, DGI answering after 300 ms",
            "inv/s",
            Better::Higher,
            &rates,
        )
        .target(Target::at_least(25.0, "median"))
        .note(format!(
            "{CLIENTS} keep-alive clients, 3-item invoices, pending window 10, counted per second over {} s; {} answers other than 200",
            window.as_secs(),
            errors.len()
        )),
    );
    ctx.report.detail(
        "web_api_throughput",
        json!({"per_second": per_second, "certified_in_window": total,
               "finalized_by_simulator": finalized, "non_200": errors}),
    );
    Ok(())
}

async fn overhead(ctx: &mut Ctx) -> anyhow::Result<()> {
    let stack = WebStack::start(ctx, "edef-overhead-", Duration::ZERO).await?;
    let addr = stack.gateway.addr;
    let mut conn = Conn::connect(addr).await?;
    let mut metrics = Conn::connect(addr).await?;
    let runs = ctx.runs(40, 400);
    let (mut overhead, mut latency, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs + 5 {
        let body = serde_json::to_vec(&invoice(&format!("W-{run}"), 3))?;
        let request = http::post_invoice_request(addr, &stack.key, &body, true);
        let before = rig::device_seconds(&mut metrics, addr, "shop").await?;
        let (_, elapsed) = conn.exchange_ok(&request, "invoice").await?;
        let after = rig::device_seconds(&mut metrics, addr, "shop").await?;
        if run < 5 {
            continue; // warm-up
        }
        let api = after - before;
        latency.push(elapsed * 1e3);
        calls.push(api * 1e3);
        overhead.push((elapsed - api) * 1e3);
    }
    stack.stop().await;
    ctx.report.add(
        Figure::dist(
            "web_api.gateway_overhead",
            "web API: gateway overhead (HTTP latency - web API calls)",
            "ms",
            Better::Lower,
            &overhead,
        )
        .note("3-item invoice, one keep-alive client, sequential, simulator answering at once; includes the two journal appends with their fsync (journal.intent_plus_certified in the overhead section)"),
    );
    ctx.report.add(Figure::dist(
        "web_api.http_latency",
        "  HTTP latency of the invoice",
        "ms",
        Better::Lower,
        &latency,
    ));
    ctx.report.add(Figure::dist(
        "web_api.calls",
        "  web API calls (gateway's round-trip sum: request + confirm)",
        "ms",
        Better::Lower,
        &calls,
    ));
    ctx.report.detail(
        "web_api_overhead",
        json!({"overhead_ms": overhead, "latency_ms": latency, "calls_ms": calls}),
    );
    Ok(())
}

/// The web API simulator (on a runtime of its own), the gateway with one `kind = "edef"`
/// device `shop` pointing at it, and an organization with a live key.
struct WebStack {
    runtime: Option<tokio::runtime::Runtime>,
    api: RunningEdef,
    gateway: Gateway,
    key: String,
    _dir: tempfile::TempDir,
}

impl WebStack {
    async fn start(ctx: &Ctx, prefix: &str, latency: Duration) -> anyhow::Result<WebStack> {
        let dir = ctx.tempdir(prefix)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("edef-sim")
            .enable_all()
            .build()?;
        let mut options = EdefOptions::default();
        options.faults.latency_ms = latency.as_millis() as u64;
        options.control = false;
        let api = runtime
            .spawn(async move { start_edef(([127, 0, 0, 1], 0).into(), options).await })
            .await?
            .context("starting the web API simulator")?;
        let config = dir.path().join("config.toml");
        std::fs::write(&config, config_text(dir.path(), &api)?)?;
        let key = rig::add_org(&ctx.bin, &config, "bench")?;
        let gateway = Gateway::spawn(&ctx.bin, dir.path(), &config, "info")?;
        gateway
            .wait_ready(Duration::from_secs(30), Duration::from_millis(50))
            .await?;
        Ok(WebStack {
            runtime: Some(runtime),
            api,
            gateway,
            key,
            _dir: dir,
        })
    }

    async fn stop(self) {
        let WebStack {
            runtime,
            api,
            gateway,
            ..
        } = self;
        gateway.terminate();
        if let Some(runtime) = runtime {
            let _ = runtime.spawn(api.shutdown()).await;
            runtime.shutdown_background();
        }
    }
}

/// State in `dir/state`, one web API device `shop` (queue long enough for every client), the
/// token in a file readable by the service only.
fn config_text(dir: &Path, api: &RunningEdef) -> anyhow::Result<String> {
    let token = dir.join("dgi.token");
    std::fs::write(&token, "sim-token\n")?;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600))?;
    Ok(format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n{http}\n[[devices]]\nname = \"shop\"\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token:?}\nqueue_capacity = {queue}\n",
        state = dir.join("state"),
        url = api.url(),
        queue = CLIENTS * 2,
        http = crate::rig::HTTP_TABLE,
    ))
}
