//! The crash harness, long runs: the real gateway binary against the in-process simulator,
//! `--kills N` deaths (`kill -9` under load and during start-up, failpoint aborts at every
//! certification step), the oracle checked after every restart (see
//! `tests/crash_oracle/mod.rs`). One progress line per 50 kills, then:
//!
//! `kills=1000 lost=0 duplicated=0 unexpected=0 recovered=37 certified=5123 restart_to_ready_ms median=.. p99=.. max=..`
//!
//! Exits 1 if an oracle failed (lost, duplicated, unexpected, unrecorded, quota, violations),
//! 2 if the harness could not go on. Needs the gateway binary built beside this example:
//! `cargo build --release --bins --examples` (what `scripts/crash-test` does), then
//! `cargo run --release --example crash -- --kills 1000`.
//!
//! `--power-cuts` (root, `scripts/crash-test power-cut`): each death is a power cut of the ext4
//! file system holding the state directory instead (`tests/crash_oracle/power_cut.rs`).
//!
//! `--postgres`: the register in a PostgreSQL server the harness starts
//! (`tests/crash_oracle/postgres.rs`); `--kill-database` (with it): each death is the
//! database's (`pg_ctl stop -m immediate` under load), the gateway never restarted.
//!
//! `--replicas R` (`scripts/crash-test replicas`): R replicas over one PostgreSQL through the
//! web API, each death one replica's while the others serve
//! (`tests/crash_oracle/replicas.rs`).

#[path = "../tests/crash_oracle/mod.rs"]
mod crash_oracle;
#[allow(dead_code)]
#[path = "../tests/common/needs.rs"]
pub mod needs;
/// Where `tests/support/pg.rs` finds what the harness needs from the machine.
mod common {
    pub use super::needs;
}

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// Kills the gateway N times under load and checks that nothing is lost or certified twice.
#[derive(Debug, Parser)]
#[command(name = "crash")]
struct Args {
    /// Number of gateway deaths.
    #[arg(long, default_value_t = 100)]
    kills: usize,
    /// Seed of the kill moments and the clients (default: from the clock, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// Longest delay of a load kill after the clients are let in, ms (default 400, 1500 for
    /// power cuts, 1000 for --kill-database).
    #[arg(long)]
    load_kill_max_ms: Option<u64>,
    /// The simulator's 38h processing time, ms (the web API simulator's answer latency
    /// with --web-api).
    #[arg(long, default_value_t = 30)]
    finalize_ms: u64,
    /// Certify through the DGI web API (its simulator on a socket) instead of the box.
    #[arg(long)]
    web_api: bool,
    /// Each death is a power cut of the state directory's ext4 file system (in a loop file;
    /// root), under load a random 0..--load-kill-max-ms after the clients are let in, or
    /// during a start-up.
    #[arg(long)]
    power_cuts: bool,
    /// The register in PostgreSQL: a server the harness starts (initdb, pg_ctl) in a temporary
    /// directory, its `[store]` table in the gateway's configuration.
    #[arg(long)]
    postgres: bool,
    /// Each death is PostgreSQL's (`pg_ctl stop -m immediate` a random 0..--load-kill-max-ms
    /// under load, down 0.2..1.2 s), the gateway never restarted. Implies --postgres.
    #[arg(long)]
    kill_database: bool,
    /// Replicas mode: this many replicas (2 or more) over one PostgreSQL, certifying through
    /// the web API (implied, with --postgres); each death one replica's while the others
    /// serve, the clients' requests spread over them (`tests/crash_oracle/replicas.rs`).
    #[arg(long, default_value_t = 0)]
    replicas: usize,
    /// RUST_LOG of the gateway (its log is in the run directory, kept on failure).
    #[arg(long, default_value = "info")]
    gateway_log: String,
    /// The gateway binary (default: `emcf-gateway` in the target directory of this example).
    #[arg(long)]
    gateway: Option<PathBuf>,
}

fn gateway_beside_this_example() -> Option<PathBuf> {
    // target/<profile>/examples/crash -> target/<profile>/emcf-gateway
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join("emcf-gateway"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(binary) = args.gateway.clone().or_else(gateway_beside_this_example) else {
        eprintln!("cannot locate the emcf-gateway binary: pass --gateway");
        return ExitCode::from(2);
    };
    // The gateway runs in the run's directory: its path must not be relative.
    let binary = binary.canonicalize().unwrap_or(binary);
    if !binary.is_file() {
        eprintln!(
            "no gateway binary at {}: build it first with `cargo build --release --bins --examples` \
             (or run scripts/crash-test)",
            binary.display()
        );
        return ExitCode::from(2);
    }
    if args.power_cuts {
        if let Some(what) = crash_oracle::power_cut::missing_requirement() {
            eprintln!("power cuts cannot run here: {what}");
            return ExitCode::from(2);
        }
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let mut settings = crash_oracle::Settings::new(binary.clone());
    settings.kills = args.kills;
    settings.seed = seed;
    settings.clients = args.clients.max(1);
    settings.load_kill_max = match args.load_kill_max_ms {
        Some(ms) => Duration::from_millis(ms),
        None if args.power_cuts => crash_oracle::power_cut::LOAD_CUT_MAX,
        None if args.kill_database => Duration::from_millis(1000),
        None => Duration::from_millis(400),
    };
    settings.finalize = Duration::from_millis(args.finalize_ms);
    settings.gateway_log = args.gateway_log;
    if args.web_api {
        settings.channel = crash_oracle::Channel::WebApi;
    }
    settings.power_cuts = args.power_cuts;
    if args.postgres || args.kill_database {
        if args.power_cuts {
            eprintln!("--power-cuts cuts the state directory's file system: not with PostgreSQL");
            return ExitCode::from(2);
        }
        settings.store = crash_oracle::Store::Postgres;
    }
    settings.database_kills = args.kill_database;
    if args.replicas == 1 {
        eprintln!("--replicas: 2 or more (0, the default, runs one gateway)");
        return ExitCode::from(2);
    }
    if args.replicas > 1 {
        settings.replicas = args.replicas;
        settings.channel = crash_oracle::Channel::WebApi;
        settings.store = crash_oracle::Store::Postgres;
    }
    settings.progress_every = if args.kill_database || args.replicas > 1 {
        10
    } else {
        50
    };
    println!(
        "crash harness: gateway {} channel={:?} store={:?} power_cuts={} database_kills={} \
         replicas={} kills={} clients={} seed={seed}",
        binary.display(),
        settings.channel,
        settings.store,
        settings.power_cuts,
        settings.database_kills,
        settings.replicas,
        settings.kills,
        settings.clients
    );
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tokio runtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(crash_oracle::run(settings)) {
        Ok(report) => {
            println!("{}", report.details());
            println!("{}", report.summary_line());
            if report.ok() {
                ExitCode::SUCCESS
            } else {
                eprintln!("ORACLE FAILED (seed {seed})");
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("crash harness stopped (seed {seed}): {error}");
            ExitCode::from(2)
        }
    }
}
