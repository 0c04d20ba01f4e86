//! Starting a simulator: the engine, a port and the link task that ties them together.
//! Used by the `emcf-sim` binary and, in-process, by tests.

use std::io;
use std::path::{Path, PathBuf};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::DeviceConfig;
use crate::engine::Engine;
use crate::error::SimError;
use crate::faults::{FaultConfig, Faults};
use crate::firmware::Firmware;
use crate::link::{serve, LinkConfig, LinkEnd};
use crate::port::Pty;

/// Everything a simulator run is configured with.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// The simulated box.
    pub device: DeviceConfig,
    /// The line.
    pub link: LinkConfig,
    /// Injected faults.
    pub faults: FaultConfig,
    /// How the box talks (default: PROTOCOL.md as written). Its credit note, when it sets
    /// one, wins over `device.timing`'s.
    pub firmware: Firmware,
}

/// Why a simulator could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The engine (its fiscal memory file) could not be opened.
    #[error(transparent)]
    Engine(#[from] SimError),
    /// The port failed.
    #[error("port: {0}")]
    Io(#[from] io::Error),
    /// The link task panicked or was aborted.
    #[error("the simulator task ended abnormally: {0}")]
    Task(String),
}

/// A simulator serving a pseudo-terminal in this process.
#[derive(Debug)]
pub struct RunningSim {
    path: PathBuf,
    stop: CancellationToken,
    task: JoinHandle<Result<(LinkEnd, Engine), RunError>>,
}

/// Opens the engine and a new pty (and the symlink `link`, if given), and serves it on a
/// tokio task until stopped or a fault ends it. Must be called within a tokio runtime.
pub async fn start_on_pty(
    options: SimOptions,
    link: Option<&Path>,
) -> Result<RunningSim, RunError> {
    let firmware_name = options.firmware.name;
    let mut engine = Engine::open_with_firmware(options.device, options.firmware)?;
    let mut pty = Pty::open(link)?;
    let path = pty.path().to_path_buf();
    info!(firmware = firmware_name, path = %path.display(), "simulator started");
    let master = pty
        .take_master()
        .ok_or_else(|| io::Error::other("pty master already taken"))?;
    let stop = CancellationToken::new();
    let task_stop = stop.clone();
    let task = tokio::spawn(async move {
        let mut faults = Faults::new(options.faults);
        let end = serve(master, &mut engine, &mut faults, &options.link, &task_stop).await?;
        info!(?end, "simulator link ended");
        // The pty (and its symlink) go away with the task: the host sees the port vanish.
        drop(pty);
        Ok((end, engine))
    });
    Ok(RunningSim { path, stop, task })
}

impl RunningSim {
    /// The path a host opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the link has ended (power cut, vanish, error).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops serving and returns how the link ended and the engine (its fiscal memory).
    pub async fn stop(self) -> Result<(LinkEnd, Engine), RunError> {
        self.stop.cancel();
        self.finished().await
    }

    /// Waits for the link to end by itself (a fault, or the host closing).
    pub async fn finished(self) -> Result<(LinkEnd, Engine), RunError> {
        self.task.await.map_err(|e| RunError::Task(e.to_string()))?
    }
}
