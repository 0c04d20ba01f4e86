//! Line efficiency: invoices per second through the whole HTTP path over a 115200 baud line
//! with a device that takes no processing time, divided by the wire limit of the frames the
//! invoice actually exchanged (bytes both ways x 10 bits / 115200).
//!
//! Two line models, both measured:
//! * `line`: the bench's line paces both directions (requests and replies) at 115200 baud,
//!   byte by byte, the simulator writes at once. This is the physical line.
//! * `sim-paced`: the simulator paces its own replies (`LinkConfig::pace`, the issue's
//!   setting); the bench's line paces only the requests (the simulator does not pace what it
//!   reads, so without it requests would cross for free and the ratio would exceed 1).

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::json;

use super::{Ctx, StackSetup};
use crate::http::{self, Conn};
use crate::invoices::invoice;
use crate::line::LineConfig;
use crate::report::{summarize, Better, Figure, Target};
use crate::rig::{SimHost, SimSetup};
use crate::wire;

const BAUD: u32 = 115_200;
const BYTES_PER_SECOND: f64 = BAUD as f64 / 10.0;

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    println!("\n== line efficiency (115200 baud, zero processing time)");
    calibrate_simulator(ctx).await?;
    for (model, sim_paces) in [("line", false), ("sim-paced", true)] {
        let setup = StackSetup {
            sim: SimSetup {
                pace: sim_paces,
                processing: Duration::ZERO,
            },
            line: Some(LineConfig {
                baud: BAUD,
                pace_to_device: true,
                pace_to_host: !sim_paces,
            }),
            ..StackSetup::fast()
        };
        let stack = ctx.stack(&format!("line-{model}-"), &setup).await?;
        let addr = stack.gateway().addr;
        let line = stack.line.as_ref().expect("a line");
        let mut conn = Conn::connect(addr).await?;
        for items in [3usize, 40] {
            let runs = ctx.runs(8, if items == 3 { 60 } else { 30 });
            let post = |rn: String| {
                let body = serde_json::to_vec(&invoice(&rn, items)).expect("json");
                http::post_invoice_request(addr, &stack.key, &body, true)
            };
            for w in 0..2 {
                conn.exchange_ok(&post(format!("W{model}-{items}-{w}")), "warm-up invoice")
                    .await?;
            }
            line.take();
            line.take_lateness();
            let mut efficiency = Vec::new();
            let mut rates = Vec::new();
            let mut bytes = Vec::new();
            let mut frames = None;
            let mut device_turn = Vec::new();
            let mut host_turn = Vec::new();
            let mut without_device = Vec::new();
            let mut device_gaps = Vec::new();
            let mut host_gaps = Vec::new();
            for run in 0..runs {
                let request = post(format!("S{model}-{items}-{run}"));
                let (_, elapsed) = conn.exchange_ok(&request, "invoice").await?;
                let captured = line.take();
                let wire_time = captured.bytes() as f64 / BYTES_PER_SECOND;
                efficiency.push(wire_time / elapsed);
                let device: f64 = captured.device_gaps.iter().map(Duration::as_secs_f64).sum();
                let host: f64 = captured.host_gaps.iter().map(Duration::as_secs_f64).sum();
                device_turn.push(device * 1e3);
                host_turn.push(host * 1e3);
                without_device.push(wire_time / (elapsed - device));
                device_gaps.extend(captured.device_gaps.iter().map(|d| d.as_secs_f64() * 1e3));
                host_gaps.extend(captured.host_gaps.iter().map(|d| d.as_secs_f64() * 1e3));
                rates.push(1.0 / elapsed);
                bytes.push(captured.bytes() as f64);
                if frames.is_none() {
                    frames = Some(wire::frames(&captured));
                }
            }
            let late = line.take_lateness();
            // Back to back: 3 clients keep the device's queue from emptying.
            let batch = ctx.runs(4, if items == 3 { 30 } else { 12 });
            line.take();
            let started = Instant::now();
            let mut tasks = Vec::new();
            for client in 0..3 {
                let key = stack.key.clone();
                let model = model.to_string();
                tasks.push(tokio::spawn(async move {
                    let mut conn = Conn::connect(addr).await?;
                    for n in (client..batch).step_by(3) {
                        let body =
                            serde_json::to_vec(&invoice(&format!("P{model}-{items}-{n}"), items))?;
                        conn.exchange_ok(
                            &http::post_invoice_request(addr, &key, &body, true),
                            "pipelined invoice",
                        )
                        .await?;
                    }
                    Ok::<_, anyhow::Error>(())
                }));
            }
            for task in tasks {
                task.await.context("client task")??;
            }
            let window = started.elapsed().as_secs_f64();
            let piped = line.take();
            let piped_efficiency = piped.bytes() as f64 / BYTES_PER_SECOND / window;
            let frames = frames.unwrap_or_default();
            let (late_median, late_p99) = summarize(&late, Better::Lower);
            let median_bytes = summarize(&bytes, Better::Lower).0.unwrap_or(0.0);
            let limit = BYTES_PER_SECOND / median_bytes;
            let prefix = format!("line_efficiency.{model}.{items}_items");
            let what = if sim_paces {
                "simulator paces replies"
            } else {
                "line paces both ways"
            };
            ctx.report.add(
                Figure::dist(
                    &prefix,
                    &format!("line efficiency, {items}-item invoice ({model})"),
                    "ratio",
                    Better::Higher,
                    &efficiency,
                )
                .target(Target::at_least(0.95, "median"))
                .note(format!(
                    "{what}; {median_bytes:.0} bytes/invoice on the wire ({} request frames {} B, {} reply frames {} B, other {} B): wire limit {limit:.2} invoices/s; one client, sequential",
                    frames.request_frames, frames.request_bytes, frames.reply_frames, frames.reply_bytes, frames.other_bytes
                )),
            );
            let (dm, _) = summarize(&device_gaps, Better::Lower);
            let (hm, hp) = summarize(&host_gaps, Better::Lower);
            ctx.report.add(
                Figure::dist(
                    &format!("{prefix}.without_device_turnaround"),
                    &format!("  same, minus the simulator's turnaround ({model})"),
                    "ratio",
                    Better::Higher,
                    &without_device,
                )
                .note(format!(
                    "per invoice: simulator turnaround median {:.2} ms (per command {:.3} ms), gateway turnaround median {:.2} ms (per command median {:.3} ms, p99 {:.3} ms)",
                    summarize(&device_turn, Better::Lower).0.unwrap_or(0.0),
                    dm.unwrap_or(0.0),
                    summarize(&host_turn, Better::Lower).0.unwrap_or(0.0),
                    hm.unwrap_or(0.0),
                    hp.unwrap_or(0.0)
                )),
            );
            ctx.report.add(Figure::dist(
                &format!("{prefix}.invoices_per_second"),
                &format!("  invoices/s, {items}-item, sequential ({model})"),
                "1/s",
                Better::Higher,
                &rates,
            ));
            ctx.report.add(
                Figure::value(
                    &format!("{prefix}.back_to_back"),
                    &format!("  line efficiency, {items}-item, 3 clients ({model})"),
                    "ratio",
                    Better::Higher,
                    piped_efficiency,
                )
                .target(Target::at_least(0.95, "value"))
                .note(format!(
                    "{batch} invoices in {window:.2} s = {:.2} invoices/s; line model lateness median {:.0} µs p99 {:.0} µs per delivery",
                    batch as f64 / window,
                    late_median.unwrap_or(0.0),
                    late_p99.unwrap_or(0.0)
                )),
            );
            ctx.report.detail(
                &prefix,
                json!({
                    "frames": frames,
                    "bytes": bytes,
                    "efficiency": efficiency,
                    "device_turnaround_ms": device_turn,
                    "gateway_turnaround_ms": host_turn,
                    "gateway_gaps_ms": host_gaps,
                    "back_to_back": {"invoices": batch, "seconds": window, "bytes": piped.bytes(), "efficiency": piped_efficiency},
                    "line_lateness_us": {"median": late_median, "p99": late_p99, "deliveries": late.len()},
                }),
            );
        }
        drop(conn);
        stack.stop().await;
    }
    Ok(())
}

/// How fast the simulator's own pacing (`LinkConfig::pace`) really delivers: C1h replies read
/// straight from its pty, bytes after the first write over the time they took.
async fn calibrate_simulator(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.tempdir("calibrate-")?;
    let sim = SimHost::start(
        &dir.path().join("ttySIM"),
        SimSetup {
            pace: true,
            processing: Duration::ZERO,
        },
    )
    .await?;
    let link = sim.link.clone();
    let runs = ctx.runs(5, 20);
    let measured = tokio::task::spawn_blocking(move || pacing_of(&link, runs)).await??;
    sim.stop().await;
    let rates: Vec<f64> = measured
        .iter()
        .map(|(bytes, span)| *bytes as f64 / span)
        .collect();
    let (median, _) = summarize(&rates, Better::Higher);
    let reply = measured.first().map_or(0, |(b, _)| *b + PACE_CHUNK);
    ctx.report.add(
        Figure::dist(
            "simulator_pacing_rate",
            "simulator pacing (--pace at 115200), delivered rate",
            "B/s",
            Better::Higher,
            &rates,
        )
        .note(format!(
            "nominal {BYTES_PER_SECOND:.0} B/s; measured {:.0} % of it on {reply}-byte C1h replies (bytes after the first write / time; the simulator writes each chunk when its last byte would have left the line, so the first chunk's own time is not counted)",
            100.0 * median.unwrap_or(0.0) / BYTES_PER_SECOND
        )),
    );
    Ok(())
}

/// Bytes the simulator writes before its first pacing sleep (`baud / 10_000`).
const PACE_CHUNK: usize = (BAUD / 10_000) as usize;

/// Sends `runs` C1h to the simulator at `link`; for each reply, the bytes after the first
/// chunk and the seconds between the first and the last byte.
fn pacing_of(link: &std::path::Path, runs: usize) -> anyhow::Result<Vec<(usize, f64)>> {
    use std::io::{Read, Write};
    use tokio_util::codec::Decoder;
    let mut port = std::fs::File::from(crate::line::open_tty(link)?);
    let mut seq = mcf_sfe::Seq::FIRST;
    let mut out = Vec::new();
    for _ in 0..runs {
        let frame = mcf_sfe::Command::DeviceState.to_frame(seq)?;
        seq = seq.next();
        port.write_all(&frame.to_bytes())?;
        let mut buf = bytes::BytesMut::new();
        let mut chunk = [0u8; 512];
        let mut first: Option<Instant> = None;
        let mut last: Instant;
        let mut total = 0usize;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if Instant::now() > deadline {
                bail!("no C1h reply from the simulator");
            }
            let n = port.read(&mut chunk)?;
            let now = Instant::now();
            if n == 0 {
                continue;
            }
            first.get_or_insert(now);
            last = now;
            total += n;
            buf.extend_from_slice(&chunk[..n]);
            if let Ok(Some(mcf_sfe::FromDevice::Reply(_))) = mcf_sfe::HostCodec.decode(&mut buf) {
                break;
            }
        }
        let span = first.map_or(0.0, |first| last.duration_since(first).as_secs_f64());
        if total > PACE_CHUNK && span > 0.0 {
            out.push((total - PACE_CHUNK, span));
        }
    }
    Ok(out)
}
