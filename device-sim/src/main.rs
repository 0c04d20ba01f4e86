//! `emcf-sim`: a simulated e-MCF fiscal box on a pseudo-terminal or a real serial port.
//!
//! With `--pty`, the first line on stdout is the path to open (e.g. `/dev/pts/7`); logs go to
//! stderr. The fiscal memory (NIM, counters, every finalized invoice) lives in `--state` and
//! survives restarts.
//!
//! `emcf-sim edef ...` instead simulates the DGI's e-MCF web API (e-DEF) over HTTP(S): the
//! first line on stdout is its base URL (see the `emcf_sim::edef` module).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Parser, Subcommand, ValueEnum};
use emcf_sim::config::{DeviceConfig, SlowReply, Timing};
use emcf_sim::edef::cli::EdefArgs;
use emcf_sim::edef::EDEF_FAULTS;
use emcf_sim::engine::Engine;
use emcf_sim::faults::{
    FaultConfig, Faults, CORRUPT_REPLIES, DELAY, DELAY_MS, DROP_REPLIES, GARBAGE,
    POWER_CUT_AFTER_FINALIZE, REFUSE_CMD, REFUSE_NEXT, SEED, VANISH_AFTER,
};
use emcf_sim::firmware::{CreditNote, Firmware, PRESETS};
use emcf_sim::link::{serve, LinkConfig, LinkEnd};
use emcf_sim::port::{open_serial, Pty};
use emcf_sim::replay::{self, Script};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

#[derive(Parser, Debug)]
#[command(
    name = "emcf-sim",
    version,
    about = "Simulated DRC e-MCF fiscal device (MCF-SFE protocol); `emcf-sim edef`: the DGI's e-MCF web API",
    args_conflicts_with_subcommands = true,
    after_help = EDEF_FAULTS.help_text()
)]
struct Cli {
    /// Instead of a fiscal box on a port (the options below), simulate something else.
    #[command(subcommand)]
    command: Option<SimCommand>,
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
    /// Instead of simulating: answer the host with the bytes a box sent in this wire capture
    /// (`serve --capture`, `device probe --capture` of the gateway), as long as the host sends
    /// the recorded frames (SEQ aside). Exit code 1, with what it asked, when the host asks
    /// something else.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
    /// With --replay: the capture's device to replay (default: its first one).
    #[arg(long, requires = "replay", value_name = "NAME")]
    replay_device: Option<String>,
    /// With --replay: the recorded silences and delays, in percent (100: as recorded).
    #[arg(
        long,
        requires = "replay",
        value_name = "PERCENT",
        default_value_t = 100
    )]
    replay_speed: u32,
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
    /// Processing time of 38h for FA/EA (credit notes), in milliseconds [default: 2000, or
    /// the firmware profile's].
    #[arg(long, value_name = "MS")]
    credit_note_ms: Option<u64>,
    /// How the box behaves during a long FA/EA finalization [default: syn, or the firmware
    /// profile's].
    #[arg(long, value_enum)]
    credit_note_reply: Option<SlowMode>,
    /// Firmware profile: how the box talks (reply layouts, timing, SYN, SEQ replay, status
    /// bytes, refusals, CR/LF escapes), never what it certifies.
    ///
    /// `reference` is PROTOCOL.md as written; the others behave like real boxes (see
    /// docs/firmware.md). --credit-note-reply and --credit-note-ms, when given, win over
    /// the profile's credit-note mode and duration; --command-ms and --finalize-ms apply to
    /// every profile (a profile's slow commands take at least its own duration).
    #[arg(long, value_name = "NAME", default_value = "reference", value_parser = firmware_names())]
    firmware: String,
    // The faults: help, values and refusals from `emcf_sim::faults::BOX_FAULTS` (one
    // definition with the README's technician section).
    // Not a fault: the seed of their generator, among the options (its default in its help).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true,
          help = SEED.flag_help(), value_parser = SEED.flag_parser::<u64>())]
    seed: u64,
    #[arg(long, value_name = "P", default_value_t = 0.0, help_heading = FAULTS,
          help = CORRUPT_REPLIES.flag_help(), value_parser = CORRUPT_REPLIES.flag_parser::<f64>())]
    corrupt_replies: f64,
    #[arg(long, value_name = "P", default_value_t = 0.0, help_heading = FAULTS,
          help = DROP_REPLIES.flag_help(), value_parser = DROP_REPLIES.flag_parser::<f64>())]
    drop_replies: f64,
    #[arg(long, value_name = "P", default_value_t = 0.0, help_heading = FAULTS,
          help = GARBAGE.flag_help(), value_parser = GARBAGE.flag_parser::<f64>())]
    garbage: f64,
    #[arg(long, value_name = "P", default_value_t = 0.0, help_heading = FAULTS,
          help = DELAY.flag_help(), value_parser = DELAY.flag_parser::<f64>())]
    delay: f64,
    // Its default is in its help (and the README's table), said once.
    #[arg(long, value_name = "MS", default_value_t = 800, hide_default_value = true,
          help_heading = FAULTS, help = DELAY_MS.flag_help(), value_parser = DELAY_MS.flag_parser::<u64>())]
    delay_ms: u64,
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = FAULTS,
          help = REFUSE_NEXT.flag_help(), value_parser = REFUSE_NEXT.flag_parser::<u32>())]
    refuse_next: u32,
    #[arg(long, value_name = "HEX", help_heading = FAULTS,
          help = REFUSE_CMD.flag_help(), value_parser = REFUSE_CMD.flag_parser::<u8>())]
    refuse_cmd: Option<u8>,
    #[arg(long, value_name = "N", help_heading = FAULTS,
          help = POWER_CUT_AFTER_FINALIZE.flag_help(),
          value_parser = POWER_CUT_AFTER_FINALIZE.flag_parser::<u32>())]
    power_cut_after_finalize: Option<u32>,
    #[arg(long, value_name = "N", help_heading = FAULTS,
          help = VANISH_AFTER.flag_help(), value_parser = VANISH_AFTER.flag_parser::<u64>())]
    vanish_after: Option<u64>,
}

/// The heading of the box's faults in `--help`.
const FAULTS: &str = "Faults (all off by default; the random ones seeded with --seed)";

/// What `emcf-sim` simulates instead of a fiscal box.
#[derive(Subcommand, Debug)]
enum SimCommand {
    /// Simulate the DGI's e-MCF web API (e-DEF) over HTTP(S): prints its base URL, runs
    /// until SIGINT/SIGTERM.
    #[command(after_help = EDEF_FAULTS.help_text())]
    Edef(EdefArgs),
}

/// The presets, with their descriptions, for `--help` and for checking the value.
fn firmware_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        PRESETS
            .iter()
            .map(|(name, help)| PossibleValue::new(*name).help(*help)),
    )
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

impl From<SlowMode> for SlowReply {
    fn from(mode: SlowMode) -> SlowReply {
        match mode {
            SlowMode::Syn => SlowReply::Syn,
            SlowMode::Silent => SlowReply::Silent,
            SlowMode::Pending => SlowReply::Pending,
        }
    }
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
        if let Some(mode) = self.credit_note_reply {
            device.timing.credit_note_reply = mode.into();
        }
        device
    }

    /// The firmware profile, with the credit-note flags given on the command line winning
    /// over its own credit-note values.
    fn firmware(&self) -> anyhow::Result<Firmware> {
        let Some(mut firmware) = Firmware::named(&self.firmware) else {
            bail!("unknown firmware profile {:?}", self.firmware);
        };
        if self.credit_note_ms.is_some() || self.credit_note_reply.is_some() {
            let base = firmware.timing(Timing::default());
            firmware.credit_note = Some(CreditNote {
                reply: self
                    .credit_note_reply
                    .map_or(base.credit_note_reply, SlowReply::from),
                duration: self
                    .credit_note_ms
                    .map_or(base.credit_note, Duration::from_millis),
            });
        }
        Ok(firmware)
    }

    /// The faults the flags ask for (their values were checked as they were read).
    fn faults(&self) -> FaultConfig {
        FaultConfig {
            seed: self.seed,
            corrupt_reply: self.corrupt_replies,
            drop_reply: self.drop_replies,
            garbage_burst: self.garbage,
            delay: self.delay,
            delay_for: Duration::from_millis(self.delay_ms),
            refuse_next: self.refuse_next,
            refuse_only: self.refuse_cmd,
            power_cut_at_finalize: self.power_cut_after_finalize,
            vanish_after: self.vanish_after,
        }
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
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let mut cli = Cli::parse();
    if let Some(SimCommand::Edef(args)) = cli.command.take() {
        return match emcf_sim::edef::cli::run(&args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("emcf-sim edef: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    match run(cli).await {
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
    if let Some(file) = &cli.replay {
        return replay_capture(&cli, file).await;
    }
    let faults = cli.faults();
    let firmware = cli.firmware()?;
    let device = cli.device();
    let state = device.state_file.clone();
    let name = firmware.name;
    let mut engine =
        Engine::open_with_firmware(device, firmware).context("opening the fiscal memory")?;
    let timing = engine.config().timing;
    info!(
        firmware = name,
        credit_note = %timing.credit_note_reply,
        credit_note_ms = timing.credit_note.as_millis(),
        "firmware profile"
    );
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

/// `--replay FILE`: serves a capture on the chosen port.
async fn replay_capture(cli: &Cli, file: &std::path::Path) -> anyhow::Result<LinkEnd> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("reading the capture {}", file.display()))?;
    let capture = mcf_sfe::capture::parse(&text)
        .with_context(|| format!("reading the capture {}", file.display()))?;
    let device = match &cli.replay_device {
        Some(name) => name.clone(),
        None => capture
            .devices()
            .into_iter()
            .next()
            .context("the capture has no device line")?,
    };
    let script = Script::from_capture(&capture, &device)?;
    info!(%device, steps = script.steps.len(), "replaying a capture");
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        on_signal.cancel();
    });
    let end = if let Some(port) = &cli.port {
        let serial =
            open_serial(port, cli.baud).with_context(|| format!("opening {}", port.display()))?;
        replay::serve(serial, &script, cli.replay_speed, &stop).await
    } else if cli.pty {
        let mut pty = Pty::open(cli.link.as_deref()).context("opening a pseudo-terminal")?;
        println!("{}", pty.path().display());
        let master = pty
            .take_master()
            .context("pseudo-terminal master already taken")?;
        replay::serve(master, &script, cli.replay_speed, &stop).await
    } else {
        bail!("choose a port: --pty, or --port /dev/ttyUSB1");
    };
    match end {
        Ok(end) => {
            info!(?end, "replay ended");
            Ok(LinkEnd::Stopped)
        }
        Err(error) => Err(error).context("the host no longer talks as recorded"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn firmware(args: &[&str]) -> Firmware {
        let args = std::iter::once("emcf-sim").chain(args.iter().copied());
        Cli::try_parse_from(args).unwrap().firmware().unwrap()
    }

    fn credit_note(args: &[&str]) -> Option<(SlowReply, u128)> {
        firmware(args)
            .credit_note
            .map(|c| (c.reply, c.duration.as_millis()))
    }

    #[test]
    fn the_edef_subcommand_leaves_the_flat_flags_alone() {
        let flat =
            Cli::try_parse_from(["emcf-sim", "--pty", "--ephemeral", "--nim", "S1"]).unwrap();
        assert!(flat.command.is_none() && flat.pty && flat.ephemeral);
        assert_eq!(flat.nim.as_deref(), Some("S1"));
        let args = [
            "emcf-sim",
            "edef",
            "--listen",
            "127.0.0.1:0",
            "--nim",
            "CD1",
        ];
        match Cli::try_parse_from(args).unwrap().command {
            Some(SimCommand::Edef(edef)) => assert_eq!(edef.nim.as_deref(), Some("CD1")),
            None => panic!("no subcommand"),
        }
        assert!(Cli::try_parse_from(["emcf-sim", "--pty", "edef"]).is_err());
        assert!(Cli::try_parse_from(["emcf-sim", "edef", "--pty"]).is_err());
    }

    #[test]
    fn the_fault_flags_are_the_listed_faults_with_their_help_and_values() {
        use clap::CommandFactory;
        use emcf_sim::faults::BOX_FAULTS;
        let command = Cli::command();
        let flags: Vec<(String, String)> = command
            .get_arguments()
            .filter(|arg| arg.get_help_heading() == Some(FAULTS))
            .map(|arg| {
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                (arg.get_long().unwrap_or_default().to_owned(), help)
            })
            .collect();
        let listed: Vec<(String, String)> = BOX_FAULTS
            .faults
            .iter()
            .map(|fault| (fault.name.to_owned(), fault.flag_help()))
            .collect();
        assert_eq!(flags, listed);
        for fault in BOX_FAULTS.faults {
            let flag = format!("--{}", fault.name);
            let args = ["emcf-sim", "--pty", &flag, fault.example];
            assert!(
                Cli::try_parse_from(args).is_ok(),
                "{flag} {}",
                fault.example
            );
            let wrong = format!("{flag}=nope");
            let args = ["emcf-sim", "--pty", &wrong];
            let refusal = Cli::try_parse_from(args).unwrap_err().to_string();
            assert!(refusal.contains(&fault.flag_refusal()), "{refusal}");
        }
        let cli = Cli::try_parse_from(["emcf-sim", "--pty", "--refuse-cmd", "0xC0"]).unwrap();
        assert_eq!(cli.faults().refuse_only, Some(0xC0));
    }

    #[test]
    fn the_profile_is_chosen_by_name_and_reference_by_default() {
        assert_eq!(firmware(&[]), Firmware::reference());
        assert_eq!(firmware(&["--firmware", "silent"]).name, "silent");
        let args = ["emcf-sim", "--firmware", "nope"];
        assert!(Cli::try_parse_from(args).is_err());
    }

    #[test]
    fn explicit_credit_note_flags_win_over_the_profile() {
        let pending = SlowReply::Pending;
        assert_eq!(
            credit_note(&["--firmware", "usd-currency"]),
            Some((pending, 2_000))
        );
        assert_eq!(
            credit_note(&["--firmware", "usd-currency", "--credit-note-ms", "300"]),
            Some((pending, 300))
        );
        assert_eq!(
            credit_note(&["--firmware", "usd-currency", "--credit-note-reply", "syn"]),
            Some((SlowReply::Syn, 2_000))
        );
        assert_eq!(credit_note(&[]), None);
        assert_eq!(
            credit_note(&["--credit-note-ms", "300"]),
            Some((SlowReply::Syn, 300))
        );
    }
}
