//! Replicas over one PostgreSQL (issue 29): invoices per second for 100 organizations, each on
//! its own e-MCF (a web API simulator answering after 300 ms), with 1 and then 2 `serve`
//! replicas on this machine, and what a replica costs:
//! * **set-up** (`replicas/cluster.rs`): a PostgreSQL server the bench starts (`crate::pg`),
//!   the e-MCFs kept as data (`device add`, tokens sealed with `[store] secret_key_file`, no
//!   `[[devices]]` in any replica's file: a hosted service's onboarding), one organization on
//!   each with its own NIF;
//! * **load** (`replicas/load.rs`): 2 keep-alive clients per organization, each posting 3-item
//!   invoices one after the other, spread over the replicas round robin, a 3 s warm-up then a
//!   window (30 s, 10 s with `--quick` and 20 organizations); invoices certified per second,
//!   HTTP latency of each;
//! * **what a replica costs**: the RSS and CPU of an idle replica with every e-MCF in service,
//!   and PostgreSQL's transactions per second then;
//!   under load, the CPU per certified invoice of the replicas, of PostgreSQL (the postmaster
//!   and its backends) and of the bench itself (clients and simulators), the machine's busy
//!   share, PostgreSQL's transactions and connections; the database's and the WAL's bytes per
//!   certified invoice (`pg_database_size`, `pg_current_wal_lsn`).
//!
//! The one target is correctness: every answer 200. Throughput has none here: on a machine of
//! two cores the replicas, PostgreSQL, 100 simulators and the clients share them (the page
//! docs/performance.md, "Sizing a hosted deployment", reads the figures).

mod cluster;
mod load;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::json;

use super::Ctx;
use crate::pg::PgServer;
use crate::procfs;
use crate::report::{Better, Figure, Target};
use cluster::Cluster;
use load::{post_for, Load};

/// Organizations (each with its own e-MCF): `--quick`, full run.
const ORGS: (usize, usize) = (20, 100);
/// Clients of each organization, each sending its invoices one after the other.
const CLIENTS_PER_ORG: usize = 2;
/// The DGI's answer time.
const DGI_LATENCY: Duration = Duration::from_millis(300);
/// Before each window.
const WARMUP: Duration = Duration::from_secs(3);
/// An idle replica is watched this long once ready.
const IDLE: Duration = Duration::from_secs(8);
/// The most replicas measured.
const REPLICAS: usize = 2;
/// The database the replicas share.
const DB: &str = "replicas";

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let orgs = ctx.runs(ORGS.0, ORGS.1);
    let window = Duration::from_secs(ctx.runs(10, 30) as u64);
    println!(
        "\n== replicas: {orgs} organizations on {orgs} e-MCFs (DGI at {} ms), 1 then {REPLICAS} replicas over one PostgreSQL",
        DGI_LATENCY.as_millis()
    );
    let server = PgServer::start(ctx.tempdir("pg-")?)?;
    println!("(PostgreSQL {})", server.version()?);
    let postmaster = server.postmaster_pid()?;
    let clients = orgs * CLIENTS_PER_ORG;
    let set_up = Instant::now();
    let mut cluster = Cluster::prepare(ctx, &server, DB, (orgs, clients), DGI_LATENCY).await?;
    println!(
        "({orgs} e-MCFs kept in the store, {orgs} organizations and keys, in {:.1} s)",
        set_up.elapsed().as_secs_f64()
    );
    let mut details = Vec::new();
    for count in 1..=REPLICAS {
        cluster.start_replica(ctx).await?;
        idle(ctx, (&server, postmaster), &cluster, orgs).await?;
        let measured = measure(&server, &cluster, postmaster, count, window).await?;
        report_run(ctx, &measured, (orgs, count), window);
        details.push(measured.detail());
    }
    ctx.report.detail(
        "replicas",
        json!({"orgs": orgs, "clients_per_org": CLIENTS_PER_ORG,
        "dgi_latency_ms": DGI_LATENCY.as_millis() as u64, "window_s": window.as_secs(),
        "runs": details, "finalized_by_simulators": cluster.finalized()}),
    );
    cluster.stop().await;
    Ok(())
}

/// The newest replica's RSS, every replica's CPU, PostgreSQL's CPU and transactions over
/// [`IDLE`], no invoice sent.
async fn idle(
    ctx: &mut Ctx,
    (server, postmaster): (&PgServer, u32),
    cluster: &Cluster,
    orgs: usize,
) -> anyhow::Result<()> {
    let pids: Vec<u32> = cluster.replicas.iter().map(|g| g.pid()).collect();
    let before: Vec<f64> = pids
        .iter()
        .map(|&p| procfs::cpu_seconds(p).unwrap_or(0.0))
        .collect();
    server.sql("postgres", "SELECT pg_stat_statements_reset()")?;
    let (xacts, pg_cpu) = (
        transactions(server)?,
        procfs::tree_cpu_seconds(postmaster).unwrap_or(0.0),
    );
    tokio::time::sleep(IDLE).await;
    let pg_cpu =
        (procfs::tree_cpu_seconds(postmaster).unwrap_or(0.0) - pg_cpu) / IDLE.as_secs_f64();
    let xacts = transactions(server)?.saturating_sub(xacts) as f64 / IDLE.as_secs_f64();
    let statements = server.sql(
        "postgres",
        &format!(
            "SELECT s.calls, regexp_replace(left(s.query, 90), '\\s+', ' ', 'g') \
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
             WHERE d.datname = '{DB}' ORDER BY s.calls DESC LIMIT 6"
        ),
    )?;
    let cpu: Vec<f64> = pids
        .iter()
        .zip(&before)
        .map(|(&p, b)| (procfs::cpu_seconds(p).unwrap_or(0.0) - b) / IDLE.as_secs_f64() * 1e3)
        .collect();
    let n = pids.len();
    let newest = pids[n - 1];
    let rss = procfs::rss(newest).unwrap_or(0);
    let threads = std::fs::read_dir(format!("/proc/{newest}/task"))
        .map(|d| d.count())
        .unwrap_or(0);
    ctx.report.add(
        Figure::value(
            &format!("replicas.idle_rss.{n}"),
            &format!("replica {n}, idle, {orgs} web API e-MCFs: RSS"),
            "MiB",
            Better::Lower,
            procfs::mib(rss),
        )
        .note(format!("{threads} threads; {} replica(s) running", n)),
    );
    ctx.report.add(
        Figure::value(
            &format!("replicas.idle_cpu.{n}"),
            &format!("replica {n}, idle: CPU"),
            "ms/s",
            Better::Lower,
            cpu[n - 1],
        )
        .note(format!(
            "CPU ms per second over {} s idle, each replica (1 leads): {}",
            IDLE.as_secs(),
            cpu.iter()
                .map(|c| format!("{c:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    );
    let plural = if n == 1 { "" } else { "s" };
    ctx.report.add(
        Figure::value(
            &format!("replicas.idle_transactions.{n}"),
            &format!("{n} idle replica{plural}: PostgreSQL transactions"),
            "xact/s",
            Better::Lower,
            xacts,
        )
        .note(format!(
            "the background of {n} replica{plural} with {orgs} e-MCFs (leases, the devices kept in the store, probes, the leader's looks at the windows); PostgreSQL's CPU meanwhile {:.1} ms/s",
            pg_cpu * 1e3
        )),
    );
    for line in statements.lines() {
        if let Some((calls, query)) = line.split_once('|') {
            let per_second = calls.parse::<f64>().unwrap_or(0.0) / IDLE.as_secs_f64();
            println!("    {per_second:>7.1}/s  {query}");
        }
    }
    ctx.report.detail(
        &format!("replicas_idle_statements_{n}"),
        json!({"seconds": IDLE.as_secs(), "statements": statements}),
    );
    Ok(())
}

/// One window's load and what it cost.
struct Measured {
    replicas: usize,
    load: Load,
    /// CPU seconds in the load of each replica, PostgreSQL's, the bench's, and the machine's
    /// (busy, all).
    replica_cpu: Vec<f64>,
    pg_cpu: f64,
    bench_cpu: f64,
    machine: (f64, f64),
    peak_rss: Vec<u64>,
    transactions: u64,
    backends: u64,
    db_bytes: i64,
    wal_bytes: i64,
    refused_full: u64,
}

impl Measured {
    fn per_invoice_ms(&self, seconds: f64) -> f64 {
        seconds / self.load.certified.max(1) as f64 * 1e3
    }

    fn detail(&self) -> serde_json::Value {
        let latencies = &self.load.latencies_ms;
        json!({
            "replicas": self.replicas, "per_second": self.load.per_second,
            "certified": self.load.certified, "seconds": self.load.seconds,
            "non_200": self.load.errors, "latency_ms_count": latencies.len(),
            "replica_cpu_s": self.replica_cpu, "postgres_cpu_s": self.pg_cpu,
            "bench_cpu_s": self.bench_cpu, "machine_busy_s": self.machine.0,
            "machine_all_s": self.machine.1, "peak_rss_bytes": self.peak_rss,
            "transactions": self.transactions, "backends": self.backends,
            "db_bytes": self.db_bytes, "wal_bytes": self.wal_bytes,
            "refused_full_window": self.refused_full,
        })
    }
}

async fn measure(
    server: &PgServer,
    cluster: &Cluster,
    postmaster: u32,
    replicas: usize,
    window: Duration,
) -> anyhow::Result<Measured> {
    let pids: Vec<u32> = cluster.replicas.iter().map(|g| g.pid()).collect();
    let addrs: Vec<SocketAddr> = cluster.replicas.iter().map(|g| g.addr).collect();
    let me = std::process::id();
    let cpu = |pids: &[u32]| -> Vec<f64> {
        pids.iter()
            .map(|&p| procfs::cpu_seconds(p).unwrap_or(0.0))
            .collect()
    };
    let refused = cluster.refused_full();
    let (db, wal) = (db_size(server)?, wal_position(server)?);
    let xacts = transactions(server)?;
    let (replicas_0, pg_0, bench_0) = (
        cpu(&pids),
        procfs::tree_cpu_seconds(postmaster).unwrap_or(0.0),
        procfs::cpu_seconds(me).unwrap_or(0.0),
    );
    let machine_0 = procfs::machine_cpu_seconds().unwrap_or_default();
    let run = format!("R{replicas}");
    let load = post_for(
        &addrs,
        &cluster.keys,
        CLIENTS_PER_ORG,
        &run,
        (WARMUP, window),
    )
    .await?;
    let machine_1 = procfs::machine_cpu_seconds().unwrap_or_default();
    let replica_cpu = cpu(&pids)
        .iter()
        .zip(&replicas_0)
        .map(|(a, b)| a - b)
        .collect();
    let pg_cpu = procfs::tree_cpu_seconds(postmaster).unwrap_or(0.0) - pg_0;
    let bench_cpu = procfs::cpu_seconds(me).unwrap_or(0.0) - bench_0;
    let backends = server
        .sql(
            "postgres",
            &format!("SELECT count(*) FROM pg_stat_activity WHERE datname = '{DB}'"),
        )?
        .parse()?;
    // PostgreSQL 15 reports a backend's transactions at most once a second, when it is idle.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    Ok(Measured {
        replicas,
        replica_cpu,
        pg_cpu,
        bench_cpu,
        machine: (machine_1.0 - machine_0.0, machine_1.1 - machine_0.1),
        peak_rss: pids
            .iter()
            .map(|&p| procfs::peak_rss(p).unwrap_or(0))
            .collect(),
        transactions: transactions(server)?.saturating_sub(xacts),
        backends,
        db_bytes: db_size(server)? - db,
        wal_bytes: wal_position(server)? - wal,
        refused_full: cluster.refused_full() - refused,
        load,
    })
}

fn db_size(server: &PgServer) -> anyhow::Result<i64> {
    Ok(server
        .sql("postgres", &format!("SELECT pg_database_size('{DB}')"))?
        .parse()?)
}

/// Bytes of WAL written since the server's first.
fn wal_position(server: &PgServer) -> anyhow::Result<i64> {
    let sql = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint";
    Ok(server.sql("postgres", sql)?.parse()?)
}

/// Committed and rolled back transactions of the replicas' database so far.
fn transactions(server: &PgServer) -> anyhow::Result<u64> {
    let sql =
        format!("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{DB}'");
    Ok(server.sql("postgres", &sql)?.parse()?)
}

fn report_run(ctx: &mut Ctx, m: &Measured, (orgs, n): (usize, usize), window: Duration) {
    let clients = orgs * CLIENTS_PER_ORG;
    let plural = if n == 1 { "" } else { "s" };
    let rates: Vec<f64> = m.load.per_second.iter().map(|&c| c as f64).collect();
    // Each client waits for each answer: two calls of the DGI's latency per invoice.
    let client_bound = clients as f64 / (2.0 * DGI_LATENCY.as_secs_f64());
    let overall = m.load.certified as f64 / m.load.seconds.max(0.001);
    ctx.report.add(
        Figure::dist(
            &format!("replicas.rate.{n}"),
            &format!("{orgs} orgs on {orgs} e-MCFs at 300 ms, {n} replica{plural}: invoices/s"),
            "inv/s",
            Better::Higher,
            &rates,
        )
        .note(format!(
            "{clients} clients ({CLIENTS_PER_ORG} per organization, each waiting for its answers, round robin over the replicas), counted per second over {} s; overall {overall:.1}/s ({} certified in {:.1} s, warm-up included); the clients allow at most {client_bound:.0}/s, the e-MCFs' windows {:.0}/s",
            window.as_secs(),
            m.load.certified,
            m.load.seconds,
            orgs as f64 * 10.0 / DGI_LATENCY.as_secs_f64(),
        )),
    );
    ctx.report.add(Figure::dist(
        &format!("replicas.latency.{n}"),
        &format!("  HTTP latency of an invoice, {n} replica{plural}"),
        "ms",
        Better::Lower,
        &m.load.latencies_ms,
    ));
    ctx.report.add(
        Figure::value(
            &format!("replicas.non_200.{n}"),
            &format!("  answers other than 200, {n} replica{plural}"),
            "answers",
            Better::Lower,
            m.load.errors.len() as f64,
        )
        .target(Target::at_most(0.0, "value"))
        .note(format!(
            "the DGI refused {} requests for a full pending window (error 1; sent again by the gateway)",
            m.refused_full
        )),
    );
    let replicas_cpu: f64 = m.replica_cpu.iter().sum();
    let busy = m.machine.0 / m.machine.1.max(0.001);
    ctx.report.add(
        Figure::value(
            &format!("replicas.cpu_per_invoice.{n}"),
            &format!("  replicas' CPU per certified invoice, {n} replica{plural}"),
            "ms",
            Better::Lower,
            m.per_invoice_ms(replicas_cpu),
        )
        .note(format!(
            "each replica {}; PostgreSQL {:.2} ms; the bench (clients, {orgs} simulators) {:.2} ms; machine busy {:.0} % of its CPUs; peak RSS {}",
            m.replica_cpu.iter().map(|c| format!("{:.2} ms", m.per_invoice_ms(*c))).collect::<Vec<_>>().join(", "),
            m.per_invoice_ms(m.pg_cpu),
            m.per_invoice_ms(m.bench_cpu),
            busy * 100.0,
            m.peak_rss.iter().map(|b| format!("{:.1} MiB", procfs::mib(*b))).collect::<Vec<_>>().join(", "),
        )),
    );
    ctx.report.add(Figure::value(
        &format!("replicas.postgres_cpu_per_invoice.{n}"),
        &format!("  PostgreSQL's CPU per certified invoice, {n} replica{plural}"),
        "ms",
        Better::Lower,
        m.per_invoice_ms(m.pg_cpu),
    ));
    let invoices = m.load.certified.max(1) as f64;
    ctx.report.add(
        Figure::value(
            &format!("replicas.transactions_per_invoice.{n}"),
            &format!("  PostgreSQL transactions per certified invoice, {n} replica{plural}"),
            "xact",
            Better::Lower,
            m.transactions as f64 / invoices,
        )
        .note(format!(
            "{} transactions of the database, the background's included; {} connections open after the load",
            m.transactions, m.backends
        )),
    );
    ctx.report.add(
        Figure::value(
            &format!("replicas.db_bytes_per_invoice.{n}"),
            &format!("  database growth per certified invoice, {n} replica{plural}"),
            "B",
            Better::Lower,
            m.db_bytes as f64 / invoices,
        )
        .note(format!(
            "pg_database_size before and after: {} B; WAL written {:.0} B per invoice",
            m.db_bytes,
            m.wal_bytes as f64 / invoices
        )),
    );
}
