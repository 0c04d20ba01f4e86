//! Register scale: a state directory with `entries` LogInvoices entries (1,000,000 by
//! default), then the rate of a first open without an index (`register_index.rs`), the
//! start-up time of `serve` (spawn to `status: true`, index already built) and its idle RSS,
//! `log verify` and CSV export rates, and bytes on disk per entry of the journal and the index.
//!
//! Appending through the store API costs two fsyncs per entry (sled flushes in the background); its rate is
//! measured on a sample and extrapolated. The large journal is generated instead in the
//! store's exact record format (see `dataset`), and the gateway builds its index from it at
//! the first open (`log verify`, timed). The data set is cached in `<data-dir>/register-N`
//! and reused by later runs (`--fresh-register` rebuilds it).

use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::{register_index, Ctx};
use crate::dataset::{self, Generated};
use crate::procfs;
use crate::report::{Better, Figure, Target};
use crate::rig::{self, Gateway, SimHost, SimSetup};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Prepared {
    generated: Generated,
    /// `log verify` on the fresh journal: builds the index (first open), then verifies.
    first_open_seconds: f64,
    built_at: String,
    /// A live key of the register's organization (issued by the CLI on first use).
    #[serde(default)]
    live_key: Option<String>,
}

pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let n = ctx.entries;
    println!("\n== register scale ({n} entries)");
    let root = ctx.data_dir.join(if ctx.kept_twice {
        format!("register-{n}-kept-twice")
    } else {
        format!("register-{n}")
    });
    let state = root.join("state");
    let marker = root.join("READY.json");
    let config = root.join("config.toml");
    let sim_link = root.join("ttySIM");

    // The honest rate of the store API (each entry: two fsynced appends).
    let sample = ctx.runs(100, 300) as u64;
    let api_dir = ctx.tempdir("store-api-")?;
    let started = Instant::now();
    dataset::through_store_api(api_dir.path(), sample)?;
    let api_rate = sample as f64 / started.elapsed().as_secs_f64();
    drop(api_dir);
    ctx.report.add(
        Figure::value("register.store_api_append_rate", "store API append rate (intent + certified)", "entries/s", Better::Higher, api_rate)
            .note(format!(
                "{sample} entries; {n} entries this way would take {:.0} min, so the data set is generated in the record format",
                n as f64 / api_rate / 60.0
            )),
    );

    let cached = if ctx.fresh {
        None
    } else {
        read_marker(&marker, &state)
    };
    let reused = cached.is_some();
    let mut prepared = match cached {
        Some(prepared) => {
            println!(
                "    (reusing the data set in {}; --fresh-register rebuilds it)",
                root.display()
            );
            std::fs::write(&config, rig::config_text(&root, &sim_link, "", ""))?;
            prepared
        }
        None => {
            if root.exists() {
                std::fs::remove_dir_all(&root)?;
            }
            std::fs::create_dir_all(&root)?;
            println!("    generating {n} entries...");
            let generated = dataset::generate_journal(&state, n, ctx.kept_twice)?;
            std::fs::write(&config, rig::config_text(&root, &sim_link, "", ""))?;
            println!(
                "    generated {} records, {:.0} MiB in {:.1} s; first open (index build) + verify...",
                generated.records,
                procfs::mib(generated.journal_bytes),
                generated.seconds
            );
            let started = Instant::now();
            let out = rig::cli_ok(&ctx.bin, &config, &["log", "verify"])?;
            let first_open_seconds = started.elapsed().as_secs_f64();
            let report: Value = serde_json::from_str(&out)?;
            if report["records"].as_u64() != Some(generated.records)
                || report["head_sha256"].as_str() != Some(generated.head_sha256.as_str())
            {
                bail!("log verify does not agree with the generated journal: {out}");
            }
            let prepared = Prepared {
                generated,
                first_open_seconds,
                built_at: chrono::Utc::now().to_rfc3339(),
                live_key: None,
            };
            std::fs::write(&marker, serde_json::to_vec_pretty(&prepared)?)?;
            prepared
        }
    };
    if prepared.live_key.is_none() {
        // One more record (key_issued): the key the first certification after a start uses.
        let key = rig::cli_ok(&ctx.bin, &config, &["key", "issue", "--org", dataset::ORG])?;
        prepared.live_key = Some(key.trim().to_string());
        save_marker(&marker, &state, &mut prepared)?;
    }
    let key = prepared.live_key.clone().unwrap_or_default();
    let records = prepared.generated.records;
    ctx.report.add(
        Figure::value(
            "register.generate_seconds",
            "  generating the journal in the record format",
            "s",
            Better::Lower,
            prepared.generated.seconds,
        )
        .note(format!(
            "{} records, {:.0} MiB{}",
            records,
            procfs::mib(prepared.generated.journal_bytes),
            if reused {
                " (cached data set, built earlier)"
            } else {
                ""
            }
        )),
    );
    ctx.report.add(Figure::value(
        "register.index_build_seconds",
        "  first open: index built from the journal + verify",
        "s",
        Better::Lower,
        prepared.first_open_seconds,
    ));
    let build_seconds = register_index::build_rate(ctx, &config, &state, n)?;

    // Start-up of serve with the index built.
    let sim = SimHost::start(
        &sim_link,
        SimSetup {
            pace: false,
            processing: Duration::ZERO,
        },
    )
    .await?;
    let runs = ctx.runs(3, 5);
    // One start first, not counted: it brings the state files back into the page cache,
    // which the sections before may have evicted (the cold start is measured below).
    let (warmup, _, _, _) = start_once(&ctx.bin, &root, &config, false).await?;
    let mut startup = Vec::new();
    let mut listening = Vec::new();
    let mut cpu = Vec::new();
    let mut idle_rss = 0;
    for run in 0..runs {
        let (ready, listen, rss, used) = start_once(&ctx.bin, &root, &config, run == 0).await?;
        startup.push(ready);
        listening.push(listen);
        cpu.push(used);
        if rss > 0 {
            idle_rss = rss;
        }
    }
    let mut first_certification = Vec::new();
    for run in 0..ctx.runs(1, 3) {
        first_certification.push(first_invoice(&ctx.bin, &root, &config, &key, run).await?);
    }
    evict(&state);
    let (cold, cold_listen, _, _) = start_once(&ctx.bin, &root, &config, false).await?;
    ctx.report.add(
        Figure::dist(
            "register.startup_seconds",
            "serve start-up, spawn to status true",
            "s",
            Better::Lower,
            &startup,
        )
        .target(Target::below(1.0, "p99"))
        .note(format!(
            "{n} entries, index built, page cache warm (one uncounted start before: {warmup:.2} s); listening after median {:.3} s; the gateway used median {:.2} s of CPU to get there (every thread)",
            median(&listening),
            median(&cpu)
        )),
    );
    ctx.report.add(
        Figure::value("register.startup_cold_seconds", "  start-up with the state files evicted from the page cache", "s", Better::Lower, cold)
            .note(format!("posix_fadvise(DONTNEED) on every file of the state directory first; listening after {cold_listen:.3} s")),
    );
    ctx.report.add(
        Figure::dist(
            "register.first_certification_seconds",
            "  spawn to the first invoice certified (200)",
            "s",
            Better::Lower,
            &first_certification,
        )
        .note("status true, then a 3-item invoice on the unpaced simulator"),
    );
    ctx.report.add(
        Figure::value(
            "register.idle_rss",
            "  idle RSS with the large register open",
            "MiB",
            Better::Lower,
            procfs::mib(idle_rss),
        )
        .target(Target::below(48.0, "value"))
        .note("VmRSS 2 s after status true, index_cache_mib at its default"),
    );

    // Small register, same device: the fixed part of the start-up.
    let small = ctx.tempdir("small-register-")?;
    let small_config = small.path().join("config.toml");
    std::fs::write(
        &small_config,
        rig::config_text(small.path(), &sim_link, "", ""),
    )?;
    rig::add_org(&ctx.bin, &small_config, "bench")?;
    let mut small_startup = Vec::new();
    for _ in 0..runs {
        small_startup.push(
            start_once(&ctx.bin, small.path(), &small_config, false)
                .await?
                .0,
        );
    }
    ctx.report.add(Figure::dist(
        "register.startup_small_seconds",
        "  start-up with a one-organization register",
        "s",
        Better::Lower,
        &small_startup,
    ));

    // CSV export while the service runs (through its admin socket, 1000 entries a page).
    let gateway = Gateway::spawn(&ctx.bin, &root, &config, "info")?;
    gateway
        .wait_ready(Duration::from_secs(120), Duration::from_millis(10))
        .await?;
    let (lines, bytes, seconds) = export(&ctx.bin, &config, None)?;
    gateway.terminate();
    let entries = lines.saturating_sub(1);
    if entries < n {
        bail!("export wrote {entries} entries, expected at least {n}");
    }
    ctx.report.add(
        Figure::value(
            "register.csv_export_rate",
            "CSV export (service running)",
            "entries/s",
            Better::Higher,
            entries as f64 / seconds,
        )
        .note(format!(
            "{entries} entries, {:.0} MiB of CSV in {seconds:.1} s",
            procfs::mib(bytes)
        )),
    );

    // log verify with the service stopped (opens the store, then re-reads the whole journal).
    let mut verify = Vec::new();
    let mut verified_records = records;
    for _ in 0..ctx.runs(1, 3) {
        let started = Instant::now();
        let out = rig::cli_ok(&ctx.bin, &config, &["log", "verify"])?;
        let seconds = started.elapsed().as_secs_f64();
        let report: Value = serde_json::from_str(&out)?;
        let verified = report["records"].as_u64().unwrap_or(0);
        if verified < records {
            bail!("log verify: {out}");
        }
        verify.push(verified as f64 / seconds);
        verified_records = verified;
    }
    ctx.report.add(
        Figure::dist(
            "register.verify_rate",
            "log verify (service stopped)",
            "records/s",
            Better::Higher,
            &verify,
        )
        .note(format!(
            "{verified_records} records = {:.1} s per run (the store opened, then every record re-read, CRC, parsed, chain checked)",
            verified_records as f64 / median(&verify)
        )),
    );

    // CSV export with the service stopped: the CLI opens the store once for the whole export.
    let limit = Duration::from_secs(if ctx.quick { 10 } else { 20 });
    let (lines, _, seconds) = export(&ctx.bin, &config, Some(limit))?;
    let stopped_rate = lines.saturating_sub(1) as f64 / seconds;
    ctx.report.add(
        Figure::value(
            "register.csv_export_rate_stopped",
            "  CSV export (service stopped)",
            "entries/s",
            Better::Higher,
            stopped_rate,
        )
        .note(format!(
            "{} entries in {seconds:.1} s{}; the CLI opens the store once and reads it page by page",
            lines.saturating_sub(1),
            if lines.saturating_sub(1) < n {
                " (stopped at the time limit)"
            } else {
                ""
            }
        )),
    );
    sim.stop().await;
    save_marker(&marker, &state, &mut prepared)?;

    let disk = register_index::disk(ctx, &state, n);
    register_index::journal_budget(ctx, &prepared.generated);
    register_index::goals(ctx);
    ctx.report.detail(
        "register",
        json!({"entries": n, "records": records, "reused_data_set": reused, "prepared": prepared,
               "startup_s": startup, "listening_s": listening, "cold_startup_s": cold,
               "small_startup_s": small_startup, "verify_records_per_s": verify,
               "store_api_entries_per_s": api_rate, "index_build_s": build_seconds,
               "disk": disk}),
    );
    Ok(())
}

fn median(values: &[f64]) -> f64 {
    crate::report::summarize(values, Better::Lower)
        .0
        .unwrap_or(f64::NAN)
}

/// Starts `serve`, waits for `status: true` (polled every 2 ms); returns the time to ready,
/// the time to the listening line, (if `measure_rss`) the RSS 2 s later, and the CPU time the
/// gateway had used when ready. Stops it.
async fn start_once(
    bin: &Path,
    dir: &Path,
    config: &Path,
    measure_rss: bool,
) -> anyhow::Result<(f64, f64, u64, f64)> {
    let gateway = Gateway::spawn(bin, dir, config, "info")?;
    let listen = gateway.spawned.elapsed().as_secs_f64();
    let ready = gateway
        .wait_ready(Duration::from_secs(300), Duration::from_millis(2))
        .await?
        .as_secs_f64();
    let used = procfs::cpu_seconds(gateway.pid()).unwrap_or(f64::NAN);
    let mut rss = 0;
    if measure_rss {
        tokio::time::sleep(Duration::from_secs(2)).await;
        rss = procfs::rss(gateway.pid()).unwrap_or(0);
    }
    gateway.terminate();
    Ok((ready, listen, rss, used))
}

/// Runs `log export --format csv`; counts lines and bytes of its output. With a limit, kills
/// it then.
fn export(bin: &Path, config: &Path, limit: Option<Duration>) -> anyhow::Result<(u64, u64, f64)> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .arg("--config")
        .arg(config)
        .args(["log", "export", "--format", "csv"])
        .env("EMCF_CONFIG", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("log export")?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let (mut lines, mut bytes) = (0u64, 0u64);
    let mut buf = Vec::new();
    loop {
        if let Some(limit) = limit {
            if started.elapsed() > limit {
                let _ = child.kill();
                break;
            }
        }
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        lines += 1;
        bytes += n as u64;
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    let status = child.wait()?;
    if limit.is_none() && !status.success() {
        bail!("log export failed: {status}");
    }
    Ok((lines, bytes, seconds))
}

/// Drops the state files from the page cache.
fn evict(dir: &Path) {
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        } else if let Ok(file) = std::fs::File::open(&p) {
            let _ = file.sync_all();
            // SAFETY: posix_fadvise on a file descriptor we hold.
            unsafe {
                libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// Starts `serve`, waits for `status: true`, certifies one invoice; returns the time from the
/// spawn to its 200.
async fn first_invoice(
    bin: &Path,
    dir: &Path,
    config: &Path,
    key: &str,
    run: usize,
) -> anyhow::Result<f64> {
    let gateway = Gateway::spawn(bin, dir, config, "info")?;
    gateway
        .wait_ready(Duration::from_secs(300), Duration::from_millis(2))
        .await?;
    let rn = format!("FIRST-{}-{run}", chrono::Utc::now().timestamp_millis());
    let body = serde_json::to_vec(&crate::invoices::invoice(&rn, 3))?;
    let response = crate::http::once(
        gateway.addr,
        &crate::http::post_invoice_request(gateway.addr, key, &body, false),
    )
    .await?;
    let seconds = gateway.spawned.elapsed().as_secs_f64();
    gateway.terminate();
    response.ensure_ok("first invoice")?;
    Ok(seconds)
}

/// Records the journal as it now is (the bench appended to it) in the marker.
fn save_marker(marker: &Path, state: &Path, prepared: &mut Prepared) -> anyhow::Result<()> {
    let path = state.join("journal").join("journal.log");
    prepared.generated.journal_bytes = std::fs::metadata(&path)?.len();
    std::fs::write(marker, serde_json::to_vec_pretty(prepared)?)?;
    Ok(())
}

fn read_marker(marker: &Path, state: &Path) -> Option<Prepared> {
    let prepared: Prepared = serde_json::from_slice(&std::fs::read(marker).ok()?).ok()?;
    let len = std::fs::metadata(state.join("journal").join("journal.log"))
        .ok()?
        .len();
    (len == prepared.generated.journal_bytes && state.join("index.sled").exists())
        .then_some(prepared)
}
