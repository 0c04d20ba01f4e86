//! The register in PostgreSQL (issue 28), against the embedded store in the same sitting, on
//! a PostgreSQL server the bench starts itself (`crate::pg`, same file system):
//! * **overhead** of each store: as the `overhead` section measures it (HTTP latency of an
//!   invoice minus the device's exchanges, unpaced box simulator, one client, sequential),
//!   once on the embedded store and once with `[store] url`;
//! * **transactions per certified invoice** on the success path: `xact_commit +
//!   xact_rollback` of the gateway's database (`pg_stat_database`) over N invoices, minus the
//!   background's (statements run less than once every two invoices, each its own
//!   transaction: the storage watch's probe, the status's and the register-behind reload's
//!   periodic reads, counted by `pg_stat_statements` over the same window), divided by N;
//!   with autovacuum paused meanwhile. The statements behind them (`pg_stat_statements`,
//!   calls per invoice) go to the JSON and the output;
//! * **invoices/s** through the web API simulator answering after 300 ms, for 1, 10 and 100
//!   organizations each with its own e-MCF, on both stores.

use std::time::Duration;

use serde_json::json;

use super::overhead::invoices;
use super::web_api::{post_for, WebStack, SLOW_DGI};
use super::{Ctx, Stack, StackSetup};
use crate::http::{self, Conn};
use crate::invoices::invoice;
use crate::pg::PgServer;
use crate::report::{Better, Figure, Target};

/// Clients of each organization in the web API runs: above the e-MCF's 10 pending requests.
const CLIENTS_PER_ORG: usize = 16;
/// Organizations (each with its own e-MCF) of the web API runs.
const ORGS: [usize; 3] = [1, 10, 100];
/// Transactions per certified invoice the PostgreSQL store should not exceed.
const MOST_TRANSACTIONS: f64 = 3.0;
/// Long enough for every backend of the pool to have reported its transactions
/// (PostgreSQL 15 flushes a backend's statistics at most once a second, when it is idle).
const STATS_SETTLE: Duration = Duration::from_millis(2500);

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!(
        "\n== PostgreSQL: the register in a server the bench starts, against the embedded store"
    );
    let server = PgServer::start(ctx.tempdir("pg-")?)?;
    println!("(PostgreSQL {})", server.version()?);
    overhead(ctx, &server).await?;
    throughput(ctx, &server).await
}

/// The two stores' names in figure ids and labels.
const STORES: [&str; 2] = ["embedded", "postgres"];

async fn overhead(ctx: &mut Ctx, server: &PgServer) -> anyhow::Result<()> {
    let runs = ctx.runs(40, 400);
    for store in STORES {
        let mut setup = StackSetup::fast();
        if store == "postgres" {
            setup.top_keys = server.database("overhead")?;
        }
        let stack = ctx.stack(&format!("pg-overhead-{store}-"), &setup).await?;
        let samples = invoices(&stack, "P", runs, || Ok(())).await?;
        let counted = match store {
            "postgres" => Some(transactions(server, "overhead", &stack, ctx.runs(40, 200)).await),
            _ => None,
        };
        stack.stop().await;
        let overhead: Vec<f64> = samples.iter().map(|(e, x, _)| (e - x) * 1e3).collect();
        ctx.report.add(
            Figure::dist(
                &format!("postgres.overhead.{store}"),
                &format!("gateway overhead, {store} store (HTTP latency - device exchanges)"),
                "ms",
                Better::Lower,
                &overhead,
            )
            .note("as the overhead section: 3-item invoice, unpaced box simulator, one keep-alive client, sequential"),
        );
        ctx.report.detail(
            &format!("postgres_overhead_{store}"),
            json!({"overhead_ms": overhead}),
        );
        if let Some(counted) = counted {
            report_transactions(ctx, "box", counted?);
        }
    }
    Ok(())
}

/// Transactions the gateway made in `db` for `n` invoices posted one after the other on
/// `stack` (its register in `db`), and the statements behind them.
async fn transactions(
    server: &PgServer,
    db: &str,
    stack: &Stack,
    n: usize,
) -> anyhow::Result<Counted> {
    let addr = stack.gateway().addr;
    let mut conn = Conn::connect(addr).await?;
    let counted = counting(server, db, async {
        for run in 0..n {
            let body = serde_json::to_vec(&invoice(&format!("T-{run}"), 3))?;
            let request = http::post_invoice_request(addr, &stack.key, &body, true);
            conn.exchange_ok(&request, "invoice").await?;
        }
        Ok(n as u64)
    })
    .await?;
    Ok(counted)
}

/// What one count found.
struct Counted {
    /// Invoices certified in the window.
    invoices: u64,
    /// Transactions of the gateway's database in the window, the background's taken out.
    transactions: u64,
    /// Transactions of the background in the window (taken out): statements run less than
    /// once every two invoices, whatever the invoices do (the probe, periodic reads).
    background: u64,
    /// `(calls, statement)` in the window, most called first, the background included.
    statements: Vec<(u64, String)>,
}

/// Runs `work` (which returns how many invoices it had certified) between two readings of
/// the database `db`'s transaction counters, autovacuum paused.
async fn counting(
    server: &PgServer,
    db: &str,
    work: impl std::future::Future<Output = anyhow::Result<u64>>,
) -> anyhow::Result<Counted> {
    server.sql("postgres", "ALTER SYSTEM SET autovacuum = off")?;
    server.sql("postgres", "SELECT pg_reload_conf()")?;
    tokio::time::sleep(STATS_SETTLE).await;
    server.sql("postgres", "SELECT pg_stat_statements_reset()")?;
    let before = xacts(server, db)?;
    let invoices = work.await?;
    tokio::time::sleep(STATS_SETTLE).await;
    let after = xacts(server, db)?;
    let statements = server.sql(
        "postgres",
        &format!(
            "SELECT s.calls, regexp_replace(left(s.query, 100), '\\s+', ' ', 'g') \
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
             WHERE d.datname = '{db}' ORDER BY s.calls DESC, s.query"
        ),
    )?;
    server.sql("postgres", "ALTER SYSTEM RESET autovacuum")?;
    server.sql("postgres", "SELECT pg_reload_conf()")?;
    let statements: Vec<(u64, String)> = statements
        .lines()
        .filter_map(|line| {
            let (calls, query) = line.split_once('|')?;
            Some((calls.parse().ok()?, query.to_owned()))
        })
        .collect();
    let background = statements
        .iter()
        .filter(|(calls, q)| calls * 2 < invoices && !TRANSACTION_CONTROL.contains(&q.as_str()))
        .map(|(calls, _)| calls)
        .sum::<u64>();
    Ok(Counted {
        invoices,
        transactions: (after - before).saturating_sub(background),
        background,
        statements,
    })
}

/// Statements that open or close a transaction: never one of their own.
const TRANSACTION_CONTROL: [&str; 4] = ["BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK"];

/// Committed and rolled back transactions of `db` so far.
fn xacts(server: &PgServer, db: &str) -> anyhow::Result<u64> {
    let text = server.sql(
        "postgres",
        &format!("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{db}'"),
    )?;
    Ok(text.parse()?)
}

fn report_transactions(ctx: &mut Ctx, channel: &str, counted: Counted) {
    let n = counted.invoices.max(1) as f64;
    let per_invoice = counted.transactions as f64 / n;
    ctx.report.add(
        Figure::value(
            &format!("postgres.transactions_per_invoice.{channel}"),
            &format!("PostgreSQL transactions per certified invoice ({channel})"),
            "xact",
            Better::Lower,
            per_invoice,
        )
        .target(Target::at_most(MOST_TRANSACTIONS, "median"))
        .note(format!(
            "{} transactions for {} invoices; {} of the background taken out (statements run less than once every two invoices)",
            counted.transactions, counted.invoices, counted.background
        )),
    );
    for (calls, query) in counted.statements.iter().take(12) {
        println!("    {:>6.2} per invoice  {query}", *calls as f64 / n);
    }
    ctx.report.detail(
        &format!("postgres_transactions_{channel}"),
        json!({
            "invoices": counted.invoices,
            "transactions": counted.transactions,
            "background": counted.background,
            "statements": counted.statements.iter()
                .map(|(calls, query)| json!({"calls": calls, "per_invoice": *calls as f64 / n, "query": query}))
                .collect::<Vec<_>>(),
        }),
    );
}

async fn throughput(ctx: &mut Ctx, server: &PgServer) -> anyhow::Result<()> {
    let window = Duration::from_secs(ctx.runs(10, 20) as u64);
    for orgs in ORGS {
        for store in STORES {
            let (table, db) = match store {
                "postgres" => {
                    let db = format!("rate{orgs}");
                    (server.database(&db)?, Some(db))
                }
                _ => (String::new(), None),
            };
            let prefix = format!("pg-rate-{store}-{orgs}-");
            let stack =
                WebStack::start(ctx, &prefix, SLOW_DGI, (orgs, CLIENTS_PER_ORG), &table).await?;
            let (rate, counted) = match &db {
                Some(db) => {
                    let mut rate = None;
                    let counted = counting(server, db, async {
                        let r = post_for(&stack, CLIENTS_PER_ORG, window).await?;
                        let certified = r.certified;
                        rate = Some(r);
                        Ok(certified)
                    })
                    .await?;
                    (rate, Some(counted))
                }
                None => (Some(post_for(&stack, CLIENTS_PER_ORG, window).await?), None),
            };
            let finalized = stack.finalized();
            stack.stop().await;
            let Some(rate) = rate else { continue };
            let per_second: Vec<f64> = rate.per_second.iter().map(|&n| n as f64).collect();
            let plural = if orgs == 1 { "" } else { "s" };
            ctx.report.add(
                Figure::dist(
                    &format!("postgres.web_api_rate.{store}.{orgs}"),
                    &format!("web API at 300 ms, {orgs} organization{plural} (own e-MCF each), {store}: invoices/s"),
                    "inv/s",
                    Better::Higher,
                    &per_second,
                )
                .note(format!(
                    "{CLIENTS_PER_ORG} keep-alive clients per organization, 3-item invoices, counted per second over {} s; {} answers other than 200; overall {:.1}/s ({} certified in {:.1} s, warm-up and the last answers included)",
                    window.as_secs(),
                    rate.errors.len(),
                    rate.certified as f64 / rate.seconds.max(0.001),
                    rate.certified,
                    rate.seconds
                )),
            );
            let mut detail = json!({
                "per_second": rate.per_second, "certified": rate.certified, "seconds": rate.seconds,
                "finalized_by_simulators": finalized, "non_200": rate.errors,
            });
            if let Some(counted) = &counted {
                detail["transactions"] = json!(counted.transactions);
                detail["transactions_per_invoice"] =
                    json!(counted.transactions as f64 / counted.invoices.max(1) as f64);
            }
            ctx.report
                .detail(&format!("postgres_web_api_{store}_{orgs}"), detail);
            if let (Some(counted), 1) = (counted, orgs) {
                report_transactions(ctx, "web_api", counted);
            }
        }
    }
    Ok(())
}
