//! Gateway overhead: HTTP latency of an invoice minus the time its device exchanges took
//! (the gateway's own `emcf_device_round_trip_seconds_sum`, read from `/metrics` before and
//! after each invoice), with an unpaced simulator that takes no processing time. The journal's
//! part (`record_intent` + `record_certified`: two appends, each fsynced, and the index) is
//! measured with the store API on a store of the bench, one pair right after each invoice,
//! so both see the same disk at the same moment; the overhead without the journal is the
//! difference, invoice by invoice.

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;

use super::{Ctx, Stack, StackSetup};
use crate::dataset;
use crate::http::{self, Conn};
use crate::invoices::invoice;
use crate::report::{summarize, Better, Figure, Target};
use crate::rig;

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== gateway overhead (unpaced simulator, zero processing time)");
    let journal_dir = ctx.tempdir("journal-")?;
    let mut journal = Journal::open(journal_dir.path())?;
    let stack = ctx.stack("overhead-", &StackSetup::fast()).await?;
    let runs = ctx.runs(40, 400);
    let samples = invoices(&stack, "O", runs, || {
        tokio::task::block_in_place(|| journal.pair())
    })
    .await?;
    let mut overhead = Vec::new();
    let mut latency = Vec::new();
    let mut device = Vec::new();
    let mut minus_store = Vec::new();
    for (elapsed, exchange, pair) in samples {
        latency.push(elapsed * 1e3);
        device.push(exchange * 1e3);
        overhead.push((elapsed - exchange) * 1e3);
        minus_store.push((elapsed - exchange) * 1e3 - pair);
    }
    stack.stop().await;
    let store = tokio::task::block_in_place(|| journal.finish(runs))?;

    let (_, store_p99) = summarize(&store.pair_ms, Better::Lower);
    let limit = 2.0 + store_p99.unwrap_or(0.0);
    ctx.report.add(
        Figure::dist(
            "gateway_overhead",
            "gateway overhead (HTTP latency - device exchanges)",
            "ms",
            Better::Lower,
            &overhead,
        )
        .target(Target::below(limit, "p99"))
        .note(format!(
            "target = 2 ms + the journal's p99 ({:.3} ms, below); 3-item invoice, one keep-alive client, sequential",
            store_p99.unwrap_or(0.0)
        )),
    );
    ctx.report.add(
        Figure::dist(
            "gateway_overhead.minus_journal",
            "  overhead minus the journal pair measured next to it",
            "ms",
            Better::Lower,
            &minus_store,
        )
        .target(Target::below(2.0, "p99")),
    );
    ctx.report.add(Figure::dist(
        "gateway_overhead.http_latency",
        "  HTTP latency of the invoice",
        "ms",
        Better::Lower,
        &latency,
    ));
    ctx.report.add(Figure::dist(
        "gateway_overhead.device_exchanges",
        "  device exchanges (gateway's round-trip sum)",
        "ms",
        Better::Lower,
        &device,
    ));
    ctx.report.add(
        Figure::dist(
            "journal.intent_plus_certified",
            "journal: record_intent + record_certified",
            "ms",
            Better::Lower,
            &store.pair_ms,
        )
        .note("two appends, each write + fsync (sync_data) + sled apply (sled flushes in the background); store API in the bench on the same file system, one pair after each invoice"),
    );
    ctx.report.add(Figure::dist(
        "journal.fsync_1k",
        "  raw write 1 KiB + fdatasync, same file system",
        "ms",
        Better::Lower,
        &store.fsync_ms,
    ));
    ctx.report.detail(
        "gateway_overhead",
        json!({"overhead_ms": overhead, "latency_ms": latency, "device_ms": device,
               "intent_ms": store.intent_ms, "certified_ms": store.certified_ms}),
    );
    Ok(())
}

/// `runs` 3-item invoices one after the other on one keep-alive connection to `stack`, after 5
/// of warm-up: for each, its HTTP latency and the time its device exchanges took (the
/// gateway's own round-trip sum, read from `/metrics` before and after), in seconds, with what
/// `after` measured right after it (it runs after the warm-up's too). Invoice numbers
/// `{tag}-0`, `{tag}-1`...
pub(super) async fn invoices<T>(
    stack: &Stack,
    tag: &str,
    runs: usize,
    mut after: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<Vec<(f64, f64, T)>> {
    let addr = stack.gateway().addr;
    let mut conn = Conn::connect(addr).await?;
    let mut metrics = Conn::connect(addr).await?;
    let mut samples = Vec::new();
    for run in 0..runs + 5 {
        let body = serde_json::to_vec(&invoice(&format!("{tag}-{run}"), 3))?;
        let request = http::post_invoice_request(addr, &stack.key, &body, true);
        let before = rig::device_seconds(&mut metrics, addr, "shop").await?;
        let (_, elapsed) = conn.exchange_ok(&request, "invoice").await?;
        let after_device = rig::device_seconds(&mut metrics, addr, "shop").await?;
        let measured = after()?;
        if run >= 5 {
            samples.push((elapsed, after_device - before, measured));
        }
    }
    Ok(samples)
}

struct StoreCosts {
    pair_ms: Vec<f64>,
    intent_ms: Vec<f64>,
    certified_ms: Vec<f64>,
    fsync_ms: Vec<f64>,
}

/// A store of the bench's own, with an organization and a key, for timing the journal.
struct Journal {
    store: emcf_gateway::store::Store,
    key_id: String,
    dir: std::path::PathBuf,
    next: u64,
    costs: StoreCosts,
}

impl Journal {
    fn open(dir: &std::path::Path) -> anyhow::Result<Journal> {
        let store = emcf_gateway::store::Store::open(dir)?;
        store.save_organization(dataset::organization())?;
        let key = dataset::key(Utc::now());
        let key_id = key.id.clone();
        store.issue_key(key)?;
        Ok(Journal {
            store,
            key_id,
            dir: dir.to_path_buf(),
            next: 0,
            costs: StoreCosts {
                pair_ms: Vec::new(),
                intent_ms: Vec::new(),
                certified_ms: Vec::new(),
                fsync_ms: Vec::new(),
            },
        })
    }

    /// One `record_intent` + `record_certified`; returns its time in ms.
    fn pair(&mut self) -> anyhow::Result<f64> {
        let now = Utc::now();
        let i = self.next;
        self.next += 1;
        let started = Instant::now();
        let id = self
            .store
            .record_intent(dataset::intent(i, &self.key_id, now), None)?;
        let intent = started.elapsed();
        self.store
            .record_certified(id, 2026, now, dataset::security(i, now), "finalize")?;
        let pair = started.elapsed();
        self.costs.intent_ms.push(ms(intent));
        self.costs.certified_ms.push(ms(pair - intent));
        self.costs.pair_ms.push(ms(pair));
        Ok(ms(pair))
    }

    /// The pairs after the warm-up, and `runs` raw 1 KiB write + fdatasync for comparison.
    fn finish(mut self, runs: usize) -> anyhow::Result<StoreCosts> {
        let skip = self.costs.pair_ms.len().saturating_sub(runs);
        self.costs.pair_ms.drain(..skip);
        self.costs.intent_ms.drain(..skip);
        self.costs.certified_ms.drain(..skip);
        let mut file = std::fs::File::create(self.dir.join("fsync.bin"))?;
        let block = vec![b'x'; 1024];
        for _ in 0..runs {
            let started = Instant::now();
            file.write_all(&block)?;
            file.sync_data()?;
            self.costs.fsync_ms.push(ms(started.elapsed()));
        }
        Ok(self.costs)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
