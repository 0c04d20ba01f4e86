//! `emcf-sim edef`: its arguments, the options they make, and the run until a signal.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use chrono::{TimeDelta, Utc};
use tracing::info;

use super::{start_edef, DateFormat, EdefError, EdefFaults, EdefOptions, LATENCY_MS};

/// `emcf-sim edef`: simulate the DGI's e-MCF web API (e-DEF) over HTTP(S).
#[derive(Debug, Clone, clap::Args)]
pub struct EdefArgs {
    /// Address to listen on (port 0: any free port). The base URL is the first line on
    /// stdout.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Taxpayer NIF the invoice requests must carry [default: A1234567B].
    #[arg(long)]
    pub nif: Option<String>,
    /// NIM of the simulated e-MCF [default: CD01000001-1].
    #[arg(long)]
    pub nim: Option<String>,
    /// Bearer token every call must carry [default: sim-token].
    #[arg(long, conflicts_with = "token_file")]
    pub token: Option<String>,
    /// Read the bearer token from this file (surrounding whitespace ignored).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Days from now until the token expires (0 or less: already expired, every call 401).
    #[arg(
        long,
        value_name = "DAYS",
        default_value_t = 30,
        allow_negative_numbers = true
    )]
    pub token_valid_days: i64,
    /// Most pending (requested, not yet confirmed or cancelled) requests: error 1 beyond.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub pending_limit: usize,
    /// Seconds a request stays pending before it expires.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub expiry_secs: u64,
    /// Delay every answer by this many milliseconds (the work is done at once): the
    /// `latency_ms` fault from the start.
    #[arg(long, value_name = "MS", default_value_t = 0,
          value_parser = LATENCY_MS.flag_parser::<u64>())]
    pub latency_ms: u64,
    /// Serve HTTPS with a self-signed certificate for localhost and 127.0.0.1.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the certificate (PEM) here, for the client to trust.
    #[arg(long, requires = "tls", value_name = "FILE")]
    pub tls_cert_out: Option<PathBuf>,
    /// How the confirmation's dateTime is written.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = DateFormat::Benin)]
    pub date_format: DateFormat,
    /// Do not serve the control endpoint (/_sim/faults, /_sim/state).
    #[arg(long)]
    pub no_control: bool,
}

impl EdefArgs {
    /// The simulator options these arguments ask for (reads --token-file).
    pub fn options(&self) -> Result<EdefOptions, EdefError> {
        let mut options = EdefOptions::default();
        if let Some(nif) = &self.nif {
            options.nif.clone_from(nif);
        }
        if let Some(nim) = &self.nim {
            options.nim.clone_from(nim);
        }
        if let Some(token) = &self.token {
            options.token = token.trim().to_owned();
        }
        if let Some(path) = &self.token_file {
            let text = std::fs::read_to_string(path).map_err(|source| EdefError::TokenFile {
                path: path.clone(),
                source,
            })?;
            options.token = text.trim().to_owned();
        }
        let validity = TimeDelta::try_days(self.token_valid_days)
            .and_then(|days| Utc::now().checked_add_signed(days))
            .ok_or_else(|| {
                EdefError::Config(format!(
                    "--token-valid-days {} is out of range",
                    self.token_valid_days
                ))
            })?;
        options.token_valid_until = validity;
        options.pending_limit = self.pending_limit;
        options.expiry = Duration::from_secs(self.expiry_secs);
        options.tls = self.tls;
        options.date_format = self.date_format;
        options.control = !self.no_control;
        options.faults = EdefFaults {
            latency_ms: self.latency_ms,
            ..EdefFaults::default()
        };
        options.validate()?;
        Ok(options)
    }
}

/// Serves the e-DEF API as `args` say: prints the base URL as the first line on stdout
/// (after writing `--tls-cert-out`), then runs until SIGINT or SIGTERM.
pub async fn run(args: &EdefArgs) -> anyhow::Result<()> {
    let options = args.options()?;
    // Registered before the URL is printed: a signal sent as soon as it is read is not lost.
    let stop = stop_signals()?;
    let running = start_edef(args.listen, options).await?;
    if let (Some(path), Some(pem)) = (&args.tls_cert_out, running.ca_pem()) {
        std::fs::write(path, pem)
            .with_context(|| format!("writing the certificate to {}", path.display()))?;
        info!(path = %path.display(), "certificate written");
    }
    println!("{}", running.url());
    stop.await;
    info!("signal received, stopping");
    running.shutdown().await;
    Ok(())
}

/// Handlers for SIGINT and SIGTERM, registered now; the future ends at the first signal.
#[cfg(unix)]
fn stop_signals() -> anyhow::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).context("handling SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("handling SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Ctrl-C, where there are no Unix signals.
#[cfg(not(unix))]
fn stop_signals() -> anyhow::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: EdefArgs,
    }

    fn parse(args: &[&str]) -> Result<EdefOptions, EdefError> {
        let args = std::iter::once("edef").chain(args.iter().copied());
        Wrapper::try_parse_from(args).unwrap().args.options()
    }

    #[test]
    fn defaults_match_the_library_defaults() {
        let options = parse(&[]).unwrap();
        assert_eq!(options.nif, "A1234567B");
        assert_eq!(options.nim, "CD01000001-1");
        assert_eq!(options.token, "sim-token");
        assert_eq!(options.pending_limit, 10);
        assert_eq!(options.expiry, Duration::from_secs(120));
        assert_eq!(options.date_format, DateFormat::Benin);
        assert!(options.control && !options.tls);
        assert!(options.token_valid_until > Utc::now() + TimeDelta::days(29));
    }

    #[test]
    fn flags_and_token_file_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "  eyJ.secret \n").unwrap();
        let file = file.to_str().unwrap();
        let options = parse(&[
            "--token-file",
            file,
            "--nif",
            "B7654321C",
            "--token-valid-days",
            "-1",
            "--latency-ms",
            "250",
            "--date-format",
            "iso",
            "--no-control",
            "--expiry-secs",
            "2",
        ])
        .unwrap();
        assert_eq!(options.token, "eyJ.secret");
        assert_eq!(options.nif, "B7654321C");
        assert!(options.token_valid_until < Utc::now());
        assert_eq!(options.faults.latency_ms, 250);
        assert_eq!(options.date_format, DateFormat::Iso);
        assert!(!options.control);
        assert_eq!(options.expiry, Duration::from_secs(2));
        assert!(matches!(
            parse(&["--token-file", "/nonexistent/token"]),
            Err(EdefError::TokenFile { .. })
        ));
        assert!(parse(&["--nif", ""]).is_err());
    }
}
