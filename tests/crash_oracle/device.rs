//! The device the crash harness certifies on, in this process, alive across gateway kills:
//! the box simulator on a pty (its fiscal memory file is the truth) or the DGI web API
//! simulator on a socket (the invoices it finalized are the truth).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use emcf_sim::{start_on_pty, RunningSim, SimOptions};
use serde_json::Value;

/// Which channel the gateway certifies through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// The e-MCF box on a pty (`kind = "serial"`).
    Box,
    /// The DGI's e-MCF web API (`kind = "edef"`).
    WebApi,
}

/// One invoice the device certified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInvoice {
    pub rn: String,
    pub code_def: String,
    /// `FC/TC TYPE`.
    pub counters: String,
    /// The web API's uid of its request (`None` on a box).
    pub uid: Option<String>,
}

/// A running device.
pub enum Device {
    Box {
        sim: Option<RunningSim>,
        memory: PathBuf,
        link: PathBuf,
    },
    WebApi {
        api: Option<RunningEdef>,
        token: PathBuf,
    },
}

impl Device {
    /// Starts the device of `channel` in `dir`; `processing` is the box's time to finalize,
    /// or the web API's latency on every answer (so kills land while it works).
    pub async fn start(
        channel: Channel,
        dir: &Path,
        processing: Duration,
    ) -> Result<Device, String> {
        match channel {
            Channel::Box => {
                let memory = dir.join("sim.json");
                let link = dir.join("ttyEMCF");
                let mut options = SimOptions::default();
                options.device.state_file = Some(memory.clone());
                options.device.timing.command = Duration::from_millis(1);
                options.device.timing.finalize = processing;
                options.device.timing.credit_note = processing;
                let sim = start_on_pty(options, Some(&link))
                    .await
                    .map_err(|e| format!("simulator: {e}"))?;
                Ok(Device::Box {
                    sim: Some(sim),
                    memory,
                    link,
                })
            }
            Channel::WebApi => {
                let mut options = EdefOptions::default();
                options.faults.latency_ms = processing.as_millis() as u64;
                options.control = false;
                let api = start_edef(([127, 0, 0, 1], 0).into(), options)
                    .await
                    .map_err(|e| format!("web API simulator: {e}"))?;
                let token = dir.join("dgi.token");
                std::fs::write(&token, "sim-token\n").map_err(|e| format!("token: {e}"))?;
                std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| format!("token: {e}"))?;
                Ok(Device::WebApi {
                    api: Some(api),
                    token,
                })
            }
        }
    }

    /// The `[[devices]]` entry `shop` of the gateway's configuration.
    pub fn config_entry(&self) -> String {
        match self {
            Device::Box { link, .. } => {
                format!("[[devices]]\nname = \"shop\"\npath = {link:?}\n")
            }
            Device::WebApi { api, token } => format!(
                "[[devices]]\nname = \"shop\"\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token:?}\nstatus_interval_secs = 1\n",
                url = api.as_ref().map(RunningEdef::url).unwrap_or_default(),
            ),
        }
    }

    /// Whether the device stopped by itself.
    pub fn is_finished(&self) -> bool {
        match self {
            Device::Box { sim, .. } => sim.as_ref().is_none_or(RunningSim::is_finished),
            Device::WebApi { api, .. } => api.is_none(),
        }
    }

    /// Every invoice the device certified, in its order.
    pub fn invoices(&self) -> Result<Vec<DeviceInvoice>, String> {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
        match self {
            Device::Box { memory, .. } => {
                let bytes = std::fs::read(memory).map_err(|e| format!("fiscal memory: {e}"))?;
                let memory: Value =
                    serde_json::from_slice(&bytes).map_err(|e| format!("fiscal memory: {e}"))?;
                Ok(memory["invoices"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|invoice| DeviceInvoice {
                        rn: text(&invoice["rn"]),
                        code_def: text(&invoice["code_def"]),
                        counters: format!(
                            "{}/{} {}",
                            invoice["fc"],
                            invoice["tc"],
                            text(&invoice["type"])
                        ),
                        uid: None,
                    })
                    .collect())
            }
            Device::WebApi { api, .. } => Ok(api
                .as_ref()
                .map(RunningEdef::finalized)
                .unwrap_or_default()
                .into_iter()
                .map(|invoice| DeviceInvoice {
                    rn: invoice.rn,
                    code_def: invoice.code_def,
                    counters: invoice.counters,
                    uid: Some(invoice.uid),
                })
                .collect()),
        }
    }

    pub async fn stop(&mut self) {
        match self {
            Device::Box { sim, .. } => {
                if let Some(sim) = sim.take() {
                    let _ = sim.stop().await;
                }
            }
            Device::WebApi { api, .. } => {
                if let Some(api) = api.take() {
                    api.shutdown().await;
                }
            }
        }
    }
}
