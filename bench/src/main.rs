//! `emcf-bench`: measures the gateway against the physical limit of the serial line and
//! prints one line per figure with its target, and the same as JSON.
//!
//! ```sh
//! scripts/bench            # release build, then the full run (about 10 minutes)
//! scripts/bench --quick    # a short run
//! ```
//!
//! Sections (`--only a,b`): `footprint` (idle RSS, binary size), `overhead` (gateway
//! overhead, journal fsync), `line` (line efficiency at 115200 baud), `status` (status
//! throughput vs a minimal hyper server), `concurrency` (1000 clients at once), `register`
//! (1,000,000 entries: start-up, verify, export, bytes per entry), `web_api` (the DGI web API
//! channel against its simulator: invoices/s with a DGI answering after 300 ms, overhead),
//! `postgres` (the register in a PostgreSQL server the bench starts: overhead of each store,
//! transactions per invoice, web API invoices/s for 1, 10 and 100 organizations on both),
//! `replicas` (100 organizations on 100 web API e-MCFs with 1 and 2 `serve` replicas over one
//! PostgreSQL: invoices/s, latency, what a replica costs).
//! Every figure is a median and a p99 over runs, the p99 taken on the bad side (the 1st
//! percentile for "higher is better"). docs/performance.md has the figures and what they mean.

mod dataset;
mod http;
mod invoices;
mod line;
mod pg;
mod procfs;
mod report;
mod rig;
mod sections;
mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use serde_json::json;

use report::Report;
use sections::Ctx;

#[derive(Parser, Debug)]
#[command(name = "emcf-bench", about = "Benchmarks of emcf-gateway (not a test)")]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    /// Fewer runs and a 100,000-entry register: a short run.
    #[arg(long)]
    quick: bool,
    /// Where to write the JSON (default: target/bench.json, target/bench-quick.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Only these sections (comma separated): footprint, overhead, line, status,
    /// concurrency, register, web_api, postgres, replicas.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Entries of the register-scale data set (default 1000000, 100000 with --quick).
    #[arg(long)]
    entries: Option<u64>,
    /// Rebuild the register data set even if a cached one exists.
    #[arg(long)]
    fresh_register: bool,
    /// Directory for state directories and the cached register (default target/bench-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// The gateway binary (default: emcf-gateway beside this binary).
    #[arg(long)]
    gateway: Option<PathBuf>,
    /// Generate the register data set as 1.5.0 to 1.7.0 wrote it, each certified invoice
    /// twice (in its intent and in its entry): to measure an older gateway, or the open of an
    /// older journal (a data set of its own, `register-N-kept-twice`).
    #[arg(long)]
    kept_twice: bool,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Internal: the minimal hyper server the status endpoint is compared with.
    #[command(hide = true)]
    MinimalServer {
        #[arg(long)]
        listen: SocketAddr,
    },
    /// Diagnostic: times `Store::open` of a state directory (the service must be stopped).
    #[command(hide = true)]
    TimeOpen { state_dir: PathBuf },
}

const SECTIONS: [&str; 9] = [
    "footprint",
    "overhead",
    "line",
    "status",
    "concurrency",
    "register",
    "web_api",
    "postgres",
    "replicas",
];

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Sub::MinimalServer { listen }) => return http::minimal_server(listen),
        Some(Sub::TimeOpen { state_dir }) => {
            for _ in 0..3 {
                let started = Instant::now();
                let store = emcf_gateway::store::Store::open(&state_dir)?;
                let opened = started.elapsed();
                drop(store);
                println!("Store::open {:.3} s", opened.as_secs_f64());
            }
            return Ok(());
        }
        None => {}
    }
    for name in &cli.only {
        if !SECTIONS.contains(&name.as_str()) {
            bail!("unknown section {name:?}: one of {}", SECTIONS.join(", "));
        }
    }
    let me = std::env::current_exe()?;
    let target_dir = me
        .parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    let bin = cli
        .gateway
        .clone()
        .unwrap_or_else(|| me.with_file_name("emcf-gateway"));
    if !bin.exists() {
        bail!(
            "{} not found: build it first (cargo build --release --workspace --bins)",
            bin.display()
        );
    }
    let data_dir = cli
        .data_dir
        .clone()
        .unwrap_or_else(|| target_dir.join("bench-data"));
    std::fs::create_dir_all(&data_dir)?;
    let data_dir = data_dir.canonicalize()?;
    let json_path = cli.json.clone().unwrap_or_else(|| {
        target_dir.join(if cli.quick {
            "bench-quick.json"
        } else {
            "bench.json"
        })
    });
    let entries = cli
        .entries
        .unwrap_or(if cli.quick { 100_000 } else { 1_000_000 });
    procfs::raise_nofile();
    let mut ctx = Ctx {
        bin: bin.canonicalize()?,
        me,
        data_dir,
        quick: cli.quick,
        entries,
        fresh: cli.fresh_register,
        kept_twice: cli.kept_twice,
        report: Report::default(),
    };
    let selected: Vec<&str> = SECTIONS
        .iter()
        .copied()
        .filter(|s| cli.only.is_empty() || cli.only.iter().any(|o| o == s))
        .collect();
    let command: Vec<String> = std::env::args().collect();
    println!(
        "emcf-bench{}: {} (gateway {})",
        if cli.quick { " --quick" } else { "" },
        selected.join(", "),
        ctx.bin.display()
    );
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut failures = Vec::new();
    runtime.block_on(async {
        for section in &selected {
            let load = machine_load();
            println!(
                "\n(machine before {section}: load average {}, cpu pressure {}%, io pressure {}%)",
                load["loadavg"].as_str().unwrap_or("?"),
                load["cpu_some_avg10"],
                load["io_some_avg10"]
            );
            ctx.report
                .detail(&format!("machine_before_{section}"), load);
            let result = match *section {
                "footprint" => sections::footprint::run(&mut ctx).await,
                "overhead" => sections::overhead::run(&mut ctx).await,
                "line" => sections::line::run(&mut ctx).await,
                "status" => sections::status::run(&mut ctx).await,
                "concurrency" => sections::concurrency::run(&mut ctx).await,
                "register" => sections::register::run(&mut ctx).await,
                "web_api" => sections::web_api::run(&mut ctx).await,
                "postgres" => sections::postgres::run(&mut ctx).await,
                "replicas" => sections::replicas::run(&mut ctx).await,
                _ => Ok(()),
            };
            if let Err(error) = result {
                println!("!! section {section} failed: {error:#}");
                failures.push(format!("{section}: {error:#}"));
            }
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let elapsed = started.elapsed().as_secs_f64();
    let meta = json!({
        "command": command.join(" "),
        "quick": cli.quick,
        "sections": selected,
        "finished_at": chrono::Utc::now().to_rfc3339(),
        "seconds": elapsed,
        "host": host(),
        "commit": commit(),
        "gateway": ctx.bin,
        "section_failures": failures,
        "p99": "99th percentile on the bad side: the 99th for lower-is-better figures, the 1st for higher-is-better ones",
    });
    ctx.report
        .write(&json_path, meta)
        .with_context(|| format!("writing {}", json_path.display()))?;
    let not_met: Vec<&str> = ctx
        .report
        .figures
        .iter()
        .filter(|f| f.met == Some(false))
        .map(|f| f.id.as_str())
        .collect();
    println!(
        "\n{} figures in {elapsed:.0} s; targets not met: {}; JSON: {}",
        ctx.report.figures.len(),
        if not_met.is_empty() {
            "none".to_string()
        } else {
            not_met.join(", ")
        },
        json_path.display()
    );
    if !failures.is_empty() {
        bail!("sections failed: {}", failures.join("; "));
    }
    Ok(())
}

/// Load average and pressure (PSI) now: other work on the machine shows in the figures.
fn machine_load() -> serde_json::Value {
    let loadavg = std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let some_avg10 = |what: &str| {
        std::fs::read_to_string(format!("/proc/pressure/{what}"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("some"))?
                    .split_whitespace()
                    .find_map(|f| f.strip_prefix("avg10=")?.parse::<f64>().ok())
            })
    };
    json!({
        "loadavg": loadavg,
        "cpu_some_avg10": some_avg10("cpu"),
        "io_some_avg10": some_avg10("io"),
    })
}

fn host() -> serde_json::Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    json!({
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "kernel": kernel,
    })
}

fn commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
