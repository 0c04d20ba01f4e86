//! What the measurements run on: the simulator on a pty (in this process, on a runtime of
//! its own so the load generators cannot slow it down), the real `emcf-gateway` binary as a
//! child process, and the CLI for set-up.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use emcf_sim::{start_on_pty, RunningSim, SimOptions};

use crate::http;

/// The NIF the simulator is personalized for (its default).
pub const SIM_NIF: &str = "A1234567B";

/// A simulator serving a pty at `link`.
pub struct SimHost {
    runtime: Option<tokio::runtime::Runtime>,
    running: Option<RunningSim>,
    pub link: PathBuf,
}

/// How the simulator runs.
#[derive(Debug, Clone, Copy)]
pub struct SimSetup {
    /// Write its bytes no faster than 115200 baud (`LinkConfig::pace`).
    pub pace: bool,
    /// Processing time of every command and of 38h.
    pub processing: Duration,
}

impl SimHost {
    /// Starts an ephemeral simulator (fiscal memory in memory) at `link`.
    pub async fn start(link: &Path, setup: SimSetup) -> anyhow::Result<SimHost> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("sim")
            .enable_all()
            .build()?;
        let mut options = SimOptions::default();
        options.device.state_file = None;
        options.device.timing.command = setup.processing;
        options.device.timing.finalize = setup.processing;
        options.device.timing.credit_note = setup.processing;
        options.link.pace = setup.pace;
        options.link.baud = 115_200;
        let _ = std::fs::remove_file(link);
        let at = link.to_path_buf();
        let running = runtime
            .spawn(async move { start_on_pty(options, Some(&at)).await })
            .await??;
        Ok(SimHost {
            runtime: Some(runtime),
            running: Some(running),
            link: link.to_path_buf(),
        })
    }

    /// Stops it (the pty and its link go away).
    pub async fn stop(mut self) {
        if let (Some(runtime), Some(running)) = (self.runtime.as_ref(), self.running.take()) {
            let _ = runtime.spawn(running.stop()).await;
        }
    }
}

impl Drop for SimHost {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `[http]` of every bench configuration: all the bench's clients come from 127.0.0.1, so
/// the per-address connection cap (32 by default) is lifted to measure the rest.
pub const HTTP_TABLE: &str = "[http]\nmax_connections_per_peer = 65536\n";

/// A configuration: state in `dir/state`, one device `shop` at `device`; `top_keys` and
/// `device_keys` are extra lines of the top level and of the `[[devices]]` block.
pub fn config_text(dir: &Path, device: &Path, top_keys: &str, device_keys: &str) -> String {
    format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n{top_keys}\n{HTTP_TABLE}\n[[devices]]\nname = \"shop\"\npath = {device:?}\n{device_keys}",
        state = dir.join("state"),
    )
}

/// Runs the CLI with `config`.
pub fn cli(bin: &Path, config: &Path, args: &[&str]) -> anyhow::Result<Output> {
    Command::new(bin)
        .arg("--config")
        .arg(config)
        .args(args)
        .env("EMCF_CONFIG", "")
        .env_remove("EMCF_STATE_DIR")
        .env_remove("EMCF_LISTEN")
        .output()
        .with_context(|| format!("running {}", bin.display()))
}

/// Runs the CLI and returns its stdout, failing on a non-zero exit.
pub fn cli_ok(bin: &Path, config: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = cli(bin, config, args)?;
    if !out.status.success() {
        bail!(
            "emcf-gateway {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

/// `org add` (device `shop`, the simulator's NIF, a quota far above what the bench
/// certifies) then `key issue`; returns the live key.
pub fn add_org(bin: &Path, config: &Path, org: &str) -> anyhow::Result<String> {
    add_org_on(bin, config, org, "shop")
}

/// [`add_org`] on the device `device`.
pub fn add_org_on(bin: &Path, config: &Path, org: &str, device: &str) -> anyhow::Result<String> {
    add_org_with_nif(bin, config, org, device, SIM_NIF)
}

/// [`add_org_on`] for a device personalized for `nif`.
pub fn add_org_with_nif(
    bin: &Path,
    config: &Path,
    org: &str,
    device: &str,
    nif: &str,
) -> anyhow::Result<String> {
    cli_ok(
        bin,
        config,
        &[
            "org",
            "add",
            "--id",
            org,
            "--name",
            "Bench shop",
            "--nif",
            nif,
            "--isf",
            "ISF-1",
            "--device",
            device,
            "--quota",
            "100000000",
        ],
    )?;
    Ok(cli_ok(bin, config, &["key", "issue", "--org", org])?
        .trim()
        .to_string())
}

/// The gateway binary running `serve`.
pub struct Gateway {
    child: Child,
    pub addr: SocketAddr,
    /// When the process was spawned.
    pub spawned: Instant,
}

impl Gateway {
    /// Starts `serve` with an existing configuration file.
    pub fn spawn(bin: &Path, dir: &Path, config: &Path, log: &str) -> anyhow::Result<Gateway> {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("gateway.log"))?;
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .arg("--config")
            .arg(config)
            .arg("serve")
            .env("EMCF_CONFIG", "")
            .env("RUST_LOG", log)
            .env_remove("EMCF_STATE_DIR")
            .env_remove("EMCF_LISTEN")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    // Keep draining so the gateway never blocks on a full pipe.
                    continue;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(600);
        let addr = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("emcf-gateway listening on http://") {
                        break rest.parse()?;
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default();
                    let tail: String = log
                        .lines()
                        .rev()
                        .take(20)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n");
                    bail!("the gateway did not start; log tail:\n{tail}");
                }
            }
        };
        Ok(Gateway {
            child,
            addr,
            spawned,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls `GET /api/v1/status` (a new connection each time, every `every`) until it says
    /// `status: true`; returns the time since the process was spawned.
    pub async fn wait_ready(&self, within: Duration, every: Duration) -> anyhow::Result<Duration> {
        let request = http::get_request(self.addr, "/api/v1/status");
        let deadline = Instant::now() + within;
        loop {
            if let Ok(response) = http::once(self.addr, &request).await {
                if response.json()["status"] == serde_json::Value::Bool(true) {
                    return Ok(self.spawned.elapsed());
                }
            }
            if Instant::now() > deadline {
                bail!("the gateway was not ready within {within:?}");
            }
            tokio::time::sleep(every).await;
        }
    }

    /// SIGTERM, then waits (kills after 30 s).
    pub fn terminate(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// The sum of `emcf_device_round_trip_seconds_sum` over every command of `device`, from
/// `GET /metrics`: the time the gateway spent in exchanges with the device (µs resolution).
pub async fn device_seconds(
    conn: &mut http::Conn,
    addr: SocketAddr,
    device: &str,
) -> anyhow::Result<f64> {
    let response = conn.exchange(&http::get_request(addr, "/metrics")).await?;
    let text = String::from_utf8_lossy(&response.body);
    let label = format!("device=\"{device}\"");
    Ok(text
        .lines()
        .filter(|l| l.starts_with("emcf_device_round_trip_seconds_sum{") && l.contains(&label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}
