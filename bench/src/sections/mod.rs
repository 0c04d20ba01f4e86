//! The measurements, one module each, and what they share.

pub mod concurrency;
pub mod footprint;
pub mod line;
pub mod overhead;
pub mod postgres;
pub mod register;
pub mod register_index;
pub mod replicas;
pub mod status;
pub mod web_api;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use tempfile::TempDir;

use crate::line::{Line, LineConfig};
use crate::report::Report;
use crate::rig::{self, Gateway, SimHost, SimSetup};

/// Settings and the report of one bench run.
pub struct Ctx {
    /// The `emcf-gateway` binary under test.
    pub bin: PathBuf,
    /// This binary (it also serves the minimal hyper server).
    pub me: PathBuf,
    /// Where state directories and the cached register go.
    pub data_dir: PathBuf,
    pub quick: bool,
    /// Entries of the register-scale data set.
    pub entries: u64,
    /// Regenerate the register data set even if a cached one exists.
    pub fresh: bool,
    /// Generate the register as 1.5.0 to 1.7.0 wrote it (`--kept-twice`).
    pub kept_twice: bool,
    pub report: Report,
}

/// What a stack is made of.
#[derive(Debug, Clone)]
pub struct StackSetup {
    pub sim: SimSetup,
    /// A modelled line between the gateway and the simulator, or the simulator's pty directly.
    pub line: Option<LineConfig>,
    /// Extra top-level keys of the configuration.
    pub top_keys: String,
    /// Extra keys of the `[[devices]]` block.
    pub device_keys: String,
    /// The gateway's `RUST_LOG`.
    pub log: String,
}

impl StackSetup {
    /// An unpaced simulator with no processing time on its own pty, the gateway at `info`
    /// (as the systemd unit runs it).
    pub fn fast() -> StackSetup {
        StackSetup {
            sim: SimSetup {
                pace: false,
                processing: Duration::ZERO,
            },
            line: None,
            top_keys: String::new(),
            device_keys: String::new(),
            log: "info".to_string(),
        }
    }
}

/// A simulator, optionally a line, the gateway, and an organization with a live key.
pub struct Stack {
    pub gateway: Option<Gateway>,
    pub line: Option<Line>,
    pub sim: Option<SimHost>,
    pub key: String,
    /// Kept for the stack's life (removed when dropped).
    pub _dir: TempDir,
}

impl Stack {
    pub fn gateway(&self) -> &Gateway {
        self.gateway.as_ref().expect("the gateway runs")
    }

    pub async fn stop(mut self) {
        if let Some(gateway) = self.gateway.take() {
            gateway.terminate();
        }
        drop(self.line.take());
        if let Some(sim) = self.sim.take() {
            sim.stop().await;
        }
    }
}

impl Ctx {
    /// A new temporary directory under the data directory (same file system as the cached
    /// register, so fsync costs are comparable).
    pub fn tempdir(&self, prefix: &str) -> anyhow::Result<TempDir> {
        let parent = self.data_dir.join("tmp");
        std::fs::create_dir_all(&parent)?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(prefix);
        // EMCF_BENCH_KEEP=1 keeps the state directories and logs for a look afterwards.
        if std::env::var_os("EMCF_BENCH_KEEP").is_some_and(|v| v == "1") {
            builder.disable_cleanup(true);
        }
        builder
            .tempdir_in(&parent)
            .context("creating a temporary directory")
    }

    /// Starts a stack and waits until the gateway says `status: true`.
    pub async fn stack(&self, name: &str, setup: &StackSetup) -> anyhow::Result<Stack> {
        let dir = self.tempdir(name)?;
        let sim = SimHost::start(&dir.path().join("ttySIM"), setup.sim).await?;
        let (line, device) = match setup.line {
            Some(config) => {
                let link = dir.path().join("ttyLINE");
                (Some(Line::start(&link, &sim.link, config)?), link)
            }
            None => (None, sim.link.clone()),
        };
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            rig::config_text(dir.path(), &device, &setup.top_keys, &setup.device_keys),
        )?;
        let key = rig::add_org(&self.bin, &config, "bench")?;
        let gateway = Gateway::spawn(&self.bin, dir.path(), &config, &setup.log)?;
        gateway
            .wait_ready(Duration::from_secs(30), Duration::from_millis(20))
            .await?;
        Ok(Stack {
            gateway: Some(gateway),
            line,
            sim: Some(sim),
            key,
            _dir: dir,
        })
    }

    /// `quick` or `full` count.
    pub fn runs(&self, quick: usize, full: usize) -> usize {
        if self.quick {
            quick
        } else {
            full
        }
    }
}
