//! The bundled simulator as a device of this gateway: started in this process on a pty, it
//! speaks the wire protocol through the same port code as a real box. Used as the default
//! device when none is configured (demo mode) and as the sandbox device; an organization bound
//! to the DGI web API gets the bundled web API simulator on a local socket instead.

use std::path::{Path, PathBuf};

use emcf_sim::config::DeviceConfig as SimDevice;
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use emcf_sim::{start_on_pty, RunningSim, SimOptions};

use super::errors::Say;
use crate::certify::{new_web_api_channel, SharedChannel, WebApiSettings};
use crate::msg;

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
    private_dir(&dir)?;
    let state_file: PathBuf = dir.join(format!("{name}.fiscal.json"));
    let mut options = SimOptions::default();
    options.device.state_file = Some(state_file.clone());
    if let Some(nif) = nif {
        options.device.nif = nif.to_string();
    }
    start_on_pty(options, None).await.say(|| {
        msg!(
            "cli-simulator-start",
            path = state_file.display().to_string()
        )
    })
}

/// Starts a web API simulator for the sandbox `name` of an organization of NIF `nif`, on a
/// local socket, and the web API channel on it; its token is written (mode 0600) to
/// `<state_dir>/simulator/<name>.token`, as an operator would for the DGI.
pub(super) async fn start_web_api(
    state_dir: &Path,
    name: &str,
    nif: &str,
) -> anyhow::Result<(SharedChannel, RunningEdef)> {
    let dir = state_dir.join("simulator");
    private_dir(&dir)?;
    let token: String = {
        use rand::Rng;
        let mut rng = rand::thread_rng();
        (0..32)
            .map(|_| char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.gen_range(0..36)]))
            .collect()
    };
    let token_file = dir.join(format!("{name}.token"));
    write_private(&token_file, &token)?;
    let options = EdefOptions {
        nif: nif.to_owned(),
        token,
        ..EdefOptions::default()
    };
    let sim = start_edef(([127, 0, 0, 1], 0).into(), options)
        .await
        .say(|| msg!("cli-web-api-simulator-start"))?;
    let settings = WebApiSettings::new(name, sim.url(), token_file);
    let channel = new_web_api_channel(settings)
        .map_err(anyhow::Error::msg)
        .say(|| msg!("cli-web-api-channel", device = name))?;
    Ok((channel, sim))
}

/// Creates `dir` (and its parents) for this user only.
fn private_dir(dir: &Path) -> anyhow::Result<()> {
    crate::atomic_file::private_dir(dir)
        .say(|| msg!("cli-create-dir", path = dir.display().to_string()))
}

/// Writes `text` to `path`, readable by this user only.
pub(super) fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::atomic_file::write_private(path, text.as_bytes())
        .say(|| msg!("cli-write-file", path = path.display().to_string()))
}
