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
pub(super) const SLOW_DGI: Duration = Duration::from_millis(300);
/// Clients posting at once in the throughput run.
const CLIENTS: usize = 40;

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== DGI web API channel (web API simulator on a socket)");
    throughput(ctx).await?;
    overhead(ctx).await
}

async fn throughput(ctx: &mut Ctx) -> anyhow::Result<()> {
    let stack = WebStack::start(ctx, "edef-rate-", SLOW_DGI, (1, CLIENTS), "").await?;
    let window = Duration::from_secs(ctx.runs(10, 30) as u64);
    let rate = post_for(&stack, CLIENTS, window).await?;
    let finalized = stack.finalized();
    stack.stop().await;
    let rates: Vec<f64> = rate.per_second.iter().map(|&n| n as f64).collect();
    let total: u64 = rate.per_second.iter().sum();
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
            rate.errors.len()
        )),
    );
    ctx.report.detail(
        "web_api_throughput",
        json!({"per_second": rate.per_second, "certified_in_window": total,
               "finalized_by_simulator": finalized, "non_200": rate.errors}),
    );
    Ok(())
}

/// What [`post_for`] saw.
pub(super) struct Rate {
    /// Invoices certified (200) in each second of the window.
    pub per_second: Vec<u64>,
    /// The statuses of the answers other than 200.
    pub errors: Vec<u16>,
    /// Every 200, warm-up and the window's last requests included.
    pub certified: u64,
    /// Seconds from the clients' start to the last answer.
    pub seconds: f64,
}

/// `clients_per_org` keep-alive clients for each organization of `stack` post 3-item invoices
/// without pause for a 3 s warm-up and then `window`; each finishes the request it has under
/// way when the window ends.
pub(super) async fn post_for(
    stack: &WebStack,
    clients_per_org: usize,
    window: Duration,
) -> anyhow::Result<Rate> {
    let addr = stack.gateway.addr;
    let started = Instant::now();
    let begin = started + Duration::from_secs(3);
    let end = begin + window;
    let mut tasks = Vec::new();
    for (org, key) in stack.keys.iter().enumerate() {
        for client in 0..clients_per_org {
            let key = key.clone();
            tasks.push(tokio::spawn(async move {
                let mut conn = Conn::connect(addr).await?;
                let mut done = Vec::new();
                let mut errors = Vec::new();
                for number in 0u64.. {
                    if Instant::now() >= end {
                        break;
                    }
                    let number = format!("R-{org}-{client}-{number}");
                    let body = serde_json::to_vec(&invoice(&number, 3))?;
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
    }
    let mut rate = Rate {
        per_second: vec![0u64; window.as_secs() as usize],
        errors: Vec::new(),
        certified: 0,
        seconds: 0.0,
    };
    for task in tasks {
        let (done, failed) = task.await??;
        rate.certified += done.len() as u64;
        for at in done {
            if at >= begin && at < end {
                let second = (at - begin).as_secs() as usize;
                if let Some(count) = rate.per_second.get_mut(second) {
                    *count += 1;
                }
            }
        }
        rate.errors.extend(failed);
    }
    rate.seconds = started.elapsed().as_secs_f64();
    Ok(rate)
}

async fn overhead(ctx: &mut Ctx) -> anyhow::Result<()> {
    let stack = WebStack::start(ctx, "edef-overhead-", Duration::ZERO, (1, CLIENTS), "").await?;
    let addr = stack.gateway.addr;
    let mut conn = Conn::connect(addr).await?;
    let mut metrics = Conn::connect(addr).await?;
    let runs = ctx.runs(40, 400);
    let (mut overhead, mut latency, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs + 5 {
        let body = serde_json::to_vec(&invoice(&format!("W-{run}"), 3))?;
        let request = http::post_invoice_request(addr, &stack.keys[0], &body, true);
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

/// The web API simulators (on a runtime of their own), one e-MCF per organization (NIM
/// `CD01000001-1`, `CD01000002-1`...); the gateway with one `kind = "edef"` device for each
/// (`shop`, `shop-2`...) and an organization bound to it with a live key (`bench`,
/// `bench-2`...).
pub(super) struct WebStack {
    runtime: Option<tokio::runtime::Runtime>,
    apis: Vec<RunningEdef>,
    pub gateway: Gateway,
    /// The live key of each organization.
    pub keys: Vec<String>,
    _dir: tempfile::TempDir,
}

impl WebStack {
    /// `orgs` organizations, the simulators answering after `latency`, room for
    /// `clients_per_org` clients of each at once; `store` is appended to the configuration (a
    /// `[store]` table, or nothing for the embedded store).
    pub(super) async fn start(
        ctx: &Ctx,
        prefix: &str,
        latency: Duration,
        (orgs, clients_per_org): (usize, usize),
        store: &str,
    ) -> anyhow::Result<WebStack> {
        let dir = ctx.tempdir(prefix)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("edef-sim")
            .enable_all()
            .build()?;
        let mut apis = Vec::new();
        for org in 0..orgs {
            let mut options = EdefOptions {
                nim: format!("CD01{:06}-1", org + 1),
                ..EdefOptions::default()
            };
            options.faults.latency_ms = latency.as_millis() as u64;
            options.control = false;
            let api = runtime
                .spawn(async move { start_edef(([127, 0, 0, 1], 0).into(), options).await })
                .await?
                .context("starting the web API simulator")?;
            apis.push(api);
        }
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            config_text(dir.path(), &apis, clients_per_org, store)?,
        )?;
        let mut keys = Vec::new();
        for org in 0..orgs {
            let (id, device) = names(org);
            keys.push(rig::add_org_on(&ctx.bin, &config, &id, &device)?);
        }
        let gateway = Gateway::spawn(&ctx.bin, dir.path(), &config, "info")?;
        gateway
            .wait_ready(Duration::from_secs(60), Duration::from_millis(50))
            .await?;
        Ok(WebStack {
            runtime: Some(runtime),
            apis,
            gateway,
            keys,
            _dir: dir,
        })
    }

    /// Invoices the simulators finalized (confirmed), all of them.
    pub(super) fn finalized(&self) -> usize {
        self.apis.iter().map(RunningEdef::finalized_count).sum()
    }

    pub(super) async fn stop(self) {
        let WebStack {
            runtime,
            apis,
            gateway,
            ..
        } = self;
        gateway.terminate();
        if let Some(runtime) = runtime {
            for api in apis {
                let _ = runtime.spawn(api.shutdown()).await;
            }
            runtime.shutdown_background();
        }
    }
}

/// The organization and the device of the `org`-th e-MCF: `bench` on `shop`, then `bench-2`
/// on `shop-2`...
fn names(org: usize) -> (String, String) {
    match org {
        0 => ("bench".to_owned(), "shop".to_owned()),
        _ => (format!("bench-{}", org + 1), format!("shop-{}", org + 1)),
    }
}

/// State in `dir/state`, one web API device per simulator (queue long enough for every
/// client, and connections for all of them), the token in a file readable by the service
/// only, then `store`.
fn config_text(
    dir: &Path,
    apis: &[RunningEdef],
    clients_per_org: usize,
    store: &str,
) -> anyhow::Result<String> {
    let token = dir.join("dgi.token");
    std::fs::write(&token, "sim-token\n")?;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600))?;
    let mut text = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\nmax_connections = {connections}\n\n{http}",
        state = dir.join("state"),
        connections = (apis.len() * clients_per_org + 64).max(256),
        http = crate::rig::HTTP_TABLE,
    );
    for (org, api) in apis.iter().enumerate() {
        text.push_str(&format!(
            "\n[[devices]]\nname = {name:?}\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token:?}\nqueue_capacity = {queue}\n",
            name = names(org).1,
            url = api.url(),
            queue = clients_per_org * 2,
        ));
    }
    text.push_str(store);
    Ok(text)
}
