//! Concurrency: 1000 clients post to one device. Every request must be answered (200, or 503
//! with `Retry-After` when the queue is full; never a hang), the device must take the
//! invoices in the order they were sent (FIFO), and the gateway's peak RSS stays low.
//!
//! Each client connects, writes its invoice the moment it is connected (when the write
//! completes is its send time) and waits for the answer, at most 150 s (beyond the gateway's
//! 120 s request timeout: no answer by then is a hang). The device's order is its total
//! counter TC from `counters` (`FC/TC FV`) in each 200. Three runs:
//! * **at once, defaults**: 1000 clients released together; queue 32, 256 connections (the
//!   rest wait in the listen backlog or, when it overflows, in the kernel's SYN retries);
//! * **at once, queue 1000**: the same, every invoice is certified;
//! * **FIFO**: 1000 clients sent 5 ms apart, queue 1000 and `max_connections = 1100` (so no
//!   kernel SYN retry reorders arrivals): the device order must be exactly the send order.
//!   In the at-once runs, requests that arrive together race through parsing and validation
//!   on the gateway's worker threads before they queue, so their order is only reported.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Ctx, StackSetup};
use crate::http::{self, Conn};
use crate::invoices::invoice;
use crate::procfs;
use crate::report::{summarize, Better, Figure, Target};

const CLIENTS: usize = 1000;
/// Longer than the gateway's request timeout (120 s): no answer by then is a hang.
const HANG: Duration = Duration::from_secs(150);
/// Requests sent closer than this are simultaneous: they have no order to keep.
const SIMULTANEOUS_MS: f64 = 1.0;

/// One run.
struct Scenario {
    id: &'static str,
    name: &'static str,
    top_keys: &'static str,
    device_keys: &'static str,
    /// Clients released together (`None`) or one every this often.
    spacing: Option<Duration>,
    /// Whether the FIFO figure has a target (only when arrivals are ordered).
    strict_fifo: bool,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        id: "at_once",
        name: "at once, queue 32, 256 connections (defaults)",
        top_keys: "",
        device_keys: "",
        spacing: None,
        strict_fifo: false,
    },
    Scenario {
        id: "at_once_queue_1000",
        name: "at once, queue 1000",
        top_keys: "",
        device_keys: "queue_capacity = 1000\n",
        spacing: None,
        strict_fifo: false,
    },
    Scenario {
        id: "fifo",
        name: "5 ms apart, queue 1000, 1100 connections",
        top_keys: "max_connections = 1100\n",
        device_keys: "queue_capacity = 1000\n",
        spacing: Some(Duration::from_millis(5)),
        strict_fifo: true,
    },
];

#[derive(Debug, Clone, serde::Serialize)]
struct Outcome {
    index: usize,
    status: Option<u16>,
    retry_after: bool,
    tc: Option<u64>,
    /// Began connecting, connected, request written, answered: ms since the start.
    began_ms: f64,
    connected_ms: f64,
    sent_ms: f64,
    answered_ms: f64,
    error: Option<String>,
}

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== concurrency ({CLIENTS} clients at once, one device)");
    let nofile = procfs::raise_nofile();
    if nofile < CLIENTS as u64 + 64 {
        anyhow::bail!("the open-file limit is {nofile}: too low for {CLIENTS} clients");
    }
    for scenario in &SCENARIOS {
        let Scenario { id, name, .. } = *scenario;
        let setup = StackSetup {
            top_keys: scenario.top_keys.to_string(),
            device_keys: scenario.device_keys.to_string(),
            ..StackSetup::fast()
        };
        let stack = ctx.stack("concurrency-", &setup).await?;
        let addr = stack.gateway().addr;
        let pid = stack.gateway().pid();
        let tag = id;
        let requests: Vec<Vec<u8>> = (0..CLIENTS)
            .map(|i| {
                let body =
                    serde_json::to_vec(&invoice(&format!("C{tag}-{i:04}"), 3)).expect("json");
                http::post_invoice_request(addr, &stack.key, &body, false)
            })
            .collect();
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(CLIENTS + 1));
        let mut tasks = Vec::with_capacity(CLIENTS);
        let started = Instant::now();
        for (index, request) in requests.into_iter().enumerate() {
            let barrier = std::sync::Arc::clone(&barrier);
            let at = scenario.spacing.map(|gap| started + gap * index as u32);
            tasks.push(tokio::spawn(async move {
                match at {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => {
                        barrier.wait().await;
                    }
                }
                client(addr, index, &request, started).await
            }));
        }
        if scenario.spacing.is_none() {
            barrier.wait().await;
        }
        let mut outcomes = Vec::with_capacity(CLIENTS);
        for task in tasks {
            outcomes.push(task.await?);
        }
        let total = started.elapsed();
        let peak = procfs::peak_rss(pid).unwrap_or(0);
        stack.stop().await;

        let ok: Vec<&Outcome> = outcomes.iter().filter(|o| o.status == Some(200)).collect();
        let busy = outcomes
            .iter()
            .filter(|o| o.status == Some(503) && o.retry_after)
            .count();
        let bad: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| !(o.status == Some(200) || (o.status == Some(503) && o.retry_after)))
            .collect();
        let hangs = bad
            .iter()
            .filter(|o| o.error.as_deref() == Some("no answer (hang)"))
            .count();
        // FIFO: the 200s in send order must be in device order.
        let mut certified: Vec<(f64, u64)> =
            ok.iter().filter_map(|o| Some((o.sent_ms, o.tc?))).collect();
        certified.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut inversions, mut apart) = (0u64, 0u64);
        let mut widest = 0.0f64;
        for i in 0..certified.len() {
            for j in i + 1..certified.len() {
                if certified[i].1 > certified[j].1 {
                    inversions += 1;
                    let gap = certified[j].0 - certified[i].0;
                    widest = widest.max(gap);
                    if gap > SIMULTANEOUS_MS {
                        apart += 1;
                    }
                }
            }
        }
        let connect: Vec<f64> = outcomes
            .iter()
            .map(|o| o.connected_ms - o.began_ms)
            .collect();
        let late_connects = connect.iter().filter(|ms| **ms > 900.0).count();
        let slowest = outcomes.iter().map(|o| o.answered_ms).fold(0.0, f64::max);
        let spread = certified.last().map_or(0.0, |l| l.0) - certified.first().map_or(0.0, |f| f.0);
        ctx.report.add(
            Figure::value(
                &format!("concurrency.{id}.unanswered"),
                &format!("concurrency, {name}: not 200 nor 503+Retry-After"),
                "requests",
                Better::Lower,
                bad.len() as f64,
            )
            .target(Target::below(1.0, "value"))
            .note(format!(
                "{} x 200, {busy} x 503 with Retry-After, {} other ({hangs} hangs); last answer after {slowest:.0} ms; {late_connects} clients connected only after a SYN retry (listen backlog full), connect median {:.1} ms",
                ok.len(),
                bad.len(),
                summarize(&connect, Better::Lower).0.unwrap_or(0.0)
            )),
        );
        let fifo = Figure::value(
            &format!("concurrency.{id}.fifo_inversions"),
            &format!("  FIFO: 200s sent > {SIMULTANEOUS_MS} ms apart, certified out of order"),
            "pairs",
            Better::Lower,
            apart as f64,
        )
        .note(format!(
            "{} certified, sent over {spread:.0} ms; {inversions} out-of-order pairs in all, the widest sent {widest:.1} ms apart",
            certified.len()
        ));
        ctx.report.add(if scenario.strict_fifo {
            fifo.target(Target::below(1.0, "value"))
        } else {
            fifo
        });
        ctx.report.add(
            Figure::value(
                &format!("concurrency.{id}.peak_rss"),
                "  gateway peak RSS (VmHWM)",
                "MiB",
                Better::Lower,
                procfs::mib(peak),
            )
            .target(Target::below(64.0, "value")),
        );
        ctx.report.detail(
            &format!("concurrency.{id}"),
            json!({
                "ok": ok.len(), "busy_503": busy, "bad": bad, "hangs": hangs,
                "inversions": inversions, "inversions_apart": apart, "widest_inverted_pair_ms": widest,
                "late_connects": late_connects,
                "seconds": total.as_secs_f64(), "peak_rss_bytes": peak,
            }),
        );
    }
    Ok(())
}

/// One client: connect, post, read the answer (or time out).
async fn client(
    addr: std::net::SocketAddr,
    index: usize,
    request: &[u8],
    started: Instant,
) -> Outcome {
    let ms = |at: Instant| at.duration_since(started).as_secs_f64() * 1e3;
    let mut outcome = Outcome {
        index,
        status: None,
        retry_after: false,
        tc: None,
        began_ms: ms(Instant::now()),
        connected_ms: 0.0,
        sent_ms: 0.0,
        answered_ms: 0.0,
        error: None,
    };
    let attempt = async {
        let mut conn = Conn::connect(addr).await?;
        outcome.connected_ms = ms(Instant::now());
        conn.write(request).await?;
        outcome.sent_ms = ms(Instant::now());
        conn.read_response().await
    };
    match tokio::time::timeout(HANG, attempt).await {
        Ok(Ok(response)) => {
            outcome.status = Some(response.status);
            outcome.retry_after = response.header("retry-after").is_some();
            outcome.tc = response.json()["counters"]
                .as_str()
                .and_then(|c| c.split_whitespace().next()?.split('/').nth(1)?.parse().ok());
        }
        Ok(Err(e)) => outcome.error = Some(e.to_string()),
        Err(_) => outcome.error = Some("no answer (hang)".to_string()),
    }
    outcome.answered_ms = ms(Instant::now());
    outcome
}
