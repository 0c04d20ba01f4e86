//! `emcf-sim`: a simulated e-MCF fiscal box on a pseudo-terminal or a real serial port.
//!
//! With `--pty`, the first line on stdout is the path to open (e.g. `/dev/pts/7`); logs go to
//! stderr. The fiscal memory (NIM, counters, every finalized invoice) lives in `--state` and
//! survives restarts.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use emcf_sim::config::{DeviceConfig, SlowReply, MAX_TIMING};
use emcf_sim::engine::Engine;
use emcf_sim::faults::{FaultConfig, Faults};
use emcf_sim::link::{serve, LinkConfig, LinkEnd};
use emcf_sim::port::{open_serial, Pty};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

#[derive(Parser, Debug)]
#[command(
    name = "emcf-sim",
    version,
    about = "Simulated DRC e-MCF fiscal device (MCF-SFE protocol)"
)]
struct Cli {
    /// Serve a new pseudo-terminal and print its path.
    #[arg(long, conflicts_with = "port")]
    pty: bool,
    /// With --pty: also make this symlink to the pseudo-terminal (e.g. /tmp/emcf0).
    #[arg(long, requires = "pty", value_name = "PATH")]
    link: Option<PathBuf>,
    /// Serve this serial port (e.g. /dev/ttyUSB1).
    #[arg(long, value_name = "DEVICE")]
    port: Option<PathBuf>,
    /// Line speed (8N1, no flow control).
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// Write bytes no faster than the baud rate.
    #[arg(long)]
    pace: bool,
    /// Fiscal memory file (created if absent).
    #[arg(long, value_name = "FILE", default_value = "emcf-sim.state.json")]
    state: PathBuf,
    /// Keep the fiscal memory in memory only (counters restart at 0).
    #[arg(long, conflicts_with = "state")]
    ephemeral: bool,
    /// Machine id (NIM) of a new fiscal memory.
    #[arg(long)]
    nim: Option<String>,
    /// Taxpayer NIF of a new fiscal memory.
    #[arg(long)]
    nif: Option<String>,
    /// Processing time of ordinary commands, in milliseconds.
    #[arg(long, value_name = "MS")]
    command_ms: Option<u64>,
    /// Processing time of 38h for FV/FT/EV/ET, in milliseconds.
    #[arg(long, value_name = "MS")]
    finalize_ms: Option<u64>,
    /// Processing time of 38h for FA/EA (credit notes), in milliseconds.
    #[arg(long, value_name = "MS")]
    credit_note_ms: Option<u64>,
    /// How the box behaves during a long FA/EA finalization.
    #[arg(long, value_enum, default_value_t = SlowMode::Syn)]
    credit_note_reply: SlowMode,
    /// Seed of the fault generator (same seed, same faults).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Probability (0..1) of corrupting one byte of a reply.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    corrupt_replies: f64,
    /// Probability (0..1) of dropping a reply.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    drop_replies: f64,
    /// Probability (0..1) of a garbage burst before a reply.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    garbage: f64,
    /// Probability (0..1) of a late reply.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    delay: f64,
    /// How late a late reply is, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 800)]
    delay_ms: u64,
    /// Refuse the first N commands with E: without executing them.
    #[arg(long, value_name = "N", default_value_t = 0)]
    refuse_next: u32,
    /// Cut the power at the Nth finalization, after committing it, before the reply (exit 3).
    #[arg(long, value_name = "N")]
    power_cut_after_finalize: Option<u32>,
    /// Close the port after answering N commands (exit 4).
    #[arg(long, value_name = "N")]
    vanish_after: Option<u64>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SlowMode {
    /// SYN every 60 ms until the reply.
    Syn,
    /// Nothing until the reply.
    Silent,
    /// Answer `P:` at once; the host asks again until `R:`.
    Pending,
}

impl Cli {
    fn device(&self) -> DeviceConfig {
        let mut device = DeviceConfig::default();
        if let Some(nim) = &self.nim {
            device.nim.clone_from(nim);
        }
        if let Some(nif) = &self.nif {
            device.nif.clone_from(nif);
        }
        device.state_file = (!self.ephemeral).then(|| self.state.clone());
        let ms = Duration::from_millis;
        if let Some(v) = self.command_ms {
            device.timing.command = ms(v);
        }
        if let Some(v) = self.finalize_ms {
            device.timing.finalize = ms(v);
        }
        if let Some(v) = self.credit_note_ms {
            device.timing.credit_note = ms(v);
        }
        device.timing.credit_note_reply = match self.credit_note_reply {
            SlowMode::Syn => SlowReply::Syn,
            SlowMode::Silent => SlowReply::Silent,
            SlowMode::Pending => SlowReply::Pending,
        };
        device
    }

    fn faults(&self) -> anyhow::Result<FaultConfig> {
        for (name, p) in [
            ("--corrupt-replies", self.corrupt_replies),
            ("--drop-replies", self.drop_replies),
            ("--garbage", self.garbage),
            ("--delay", self.delay),
        ] {
            if !(0.0..=1.0).contains(&p) {
                bail!("{name} is a probability between 0 and 1, not {p}");
            }
        }
        let delay_for = Duration::from_millis(self.delay_ms);
        if delay_for > MAX_TIMING {
            bail!("--delay-ms is at most {} ms", MAX_TIMING.as_millis());
        }
        Ok(FaultConfig {
            seed: self.seed,
            corrupt_reply: self.corrupt_replies,
            drop_reply: self.drop_replies,
            garbage_burst: self.garbage,
            delay: self.delay,
            delay_for,
            refuse_next: self.refuse_next,
            power_cut_at_finalize: self.power_cut_after_finalize,
            vanish_after: self.vanish_after,
        })
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match run(Cli::parse()).await {
        Ok(LinkEnd::PowerCut) => ExitCode::from(3),
        Ok(LinkEnd::Vanished) => ExitCode::from(4),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("emcf-sim: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<LinkEnd> {
    let faults = cli.faults()?;
    let device = cli.device();
    let state = device.state_file.clone();
    let mut engine = Engine::open(device).context("opening the fiscal memory")?;
    let link = LinkConfig {
        baud: cli.baud,
        pace: cli.pace,
        ..LinkConfig::default()
    };
    if faults.any() {
        warn!(?faults, "fault injection is on");
    }
    match &state {
        Some(path) => info!(state = %path.display(), "fiscal memory file"),
        None => warn!("fiscal memory is not persisted (--ephemeral)"),
    }
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        on_signal.cancel();
    });
    let mut faults = Faults::new(faults);
    let end = if let Some(port) = &cli.port {
        let serial =
            open_serial(port, cli.baud).with_context(|| format!("opening {}", port.display()))?;
        info!(port = %port.display(), baud = cli.baud, "serving serial port");
        serve(serial, &mut engine, &mut faults, &link, &stop).await?
    } else if cli.pty {
        let mut pty = Pty::open(cli.link.as_deref()).context("opening a pseudo-terminal")?;
        // The path is the first line on stdout, for scripts and tests.
        println!("{}", pty.path().display());
        if let Some(link) = pty.link() {
            info!(link = %link.display(), "symlink to the pseudo-terminal");
        }
        info!(path = %pty.path().display(), "serving pseudo-terminal");
        let master = pty
            .take_master()
            .context("pseudo-terminal master already taken")?;
        serve(master, &mut engine, &mut faults, &link, &stop).await?
    } else {
        bail!("choose a port: --pty, or --port /dev/ttyUSB1");
    };
    info!(?end, "link ended");
    Ok(end)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
