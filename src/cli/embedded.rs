//! The bundled simulator as a device of this gateway: started in this process on a pty, it
//! speaks the wire protocol through the same port code as a real box. Used as the default
//! device when none is configured (demo mode) and always as the sandbox device.

use std::path::{Path, PathBuf};

use anyhow::Context;
use emcf_sim::config::DeviceConfig as SimDevice;
use emcf_sim::{start_on_pty, RunningSim, SimOptions};

/// The NIF the bundled simulator is personalized for (its default).
pub(super) fn simulator_nif() -> String {
    SimDevice::default().nif
}

/// Starts a simulator whose fiscal memory is `<state_dir>/simulator/<name>.fiscal.json`,
/// personalized with `nif` when its fiscal memory is new (else the simulator's default NIF).
pub(super) async fn start(
    state_dir: &Path,
    name: &str,
    nif: Option<&str>,
) -> anyhow::Result<RunningSim> {
    let dir = state_dir.join("simulator");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let state_file: PathBuf = dir.join(format!("{name}.fiscal.json"));
    let mut options = SimOptions::default();
    options.device.state_file = Some(state_file.clone());
    if let Some(nif) = nif {
        options.device.nif = nif.to_string();
    }
    start_on_pty(options, None).await.with_context(|| {
        format!(
            "starting the simulator with fiscal memory {}",
            state_file.display()
        )
    })
}
