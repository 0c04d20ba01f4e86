//! Which device an invoice runs on: the organization's configured box for `mcf_live_` keys,
//! and for `mcf_test_` keys the organization's own sandbox device, a bundled simulator
//! personalized with the organization's NIF, started on first use by a factory the binary
//! provides (so its QR codes carry the organization's NIF, as the real box's will).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::certify::CertifyError;
use crate::device::{DeviceHandle, LinkStatus};
use crate::model::{Environment, Organization};

/// Starts the sandbox device of an organization (a simulator on a pty) and returns its handle.
pub type SandboxFactory = Arc<
    dyn Fn(Organization) -> Pin<Box<dyn Future<Output = Result<DeviceHandle, String>> + Send>>
        + Send
        + Sync,
>;

/// The name of `org`'s sandbox device.
pub fn sandbox_device_name(org: &str) -> String {
    format!("sandbox-{org}")
}

/// The configured devices and the sandbox devices started so far.
pub(crate) struct Devices {
    configured: HashMap<String, DeviceHandle>,
    factory: Option<SandboxFactory>,
    sandboxes: Mutex<HashMap<String, DeviceHandle>>,
    starting: tokio::sync::Mutex<()>,
}

impl Devices {
    pub(crate) fn new(configured: Vec<DeviceHandle>, factory: Option<SandboxFactory>) -> Devices {
        Devices {
            configured: configured
                .into_iter()
                .map(|device| (device.name().to_string(), device))
                .collect(),
            factory,
            sandboxes: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    fn sandboxes(&self) -> std::sync::MutexGuard<'_, HashMap<String, DeviceHandle>> {
        self.sandboxes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device of `org` in `env`, with its name; a sandbox device is started if needed.
    pub(crate) async fn for_invoice(
        &self,
        org: &Organization,
        env: Environment,
    ) -> Result<(String, DeviceHandle), CertifyError> {
        match env {
            Environment::Production => {
                let device = self.configured.get(&org.device).ok_or_else(|| {
                    CertifyError::DeviceUnavailable {
                        reason: format!("device {} is not configured", org.device),
                        retry_after: Duration::from_secs(30),
                    }
                })?;
                Ok((org.device.clone(), device.clone()))
            }
            Environment::Sandbox => {
                let name = sandbox_device_name(&org.id);
                Ok((name, self.sandbox_of(org).await?))
            }
        }
    }

    /// The sandbox device of `org`, started on first use.
    pub(crate) async fn sandbox_of(
        &self,
        org: &Organization,
    ) -> Result<DeviceHandle, CertifyError> {
        let name = sandbox_device_name(&org.id);
        if let Some(device) = self.sandboxes().get(&name) {
            return Ok(device.clone());
        }
        let Some(factory) = &self.factory else {
            return Err(CertifyError::DeviceUnavailable {
                reason: "this gateway has no sandbox".to_string(),
                retry_after: Duration::from_secs(60),
            });
        };
        let _one_at_a_time = self.starting.lock().await;
        if let Some(device) = self.sandboxes().get(&name) {
            return Ok(device.clone());
        }
        let device =
            factory(org.clone())
                .await
                .map_err(|reason| CertifyError::DeviceUnavailable {
                    reason: format!("the sandbox device could not start: {reason}"),
                    retry_after: Duration::from_secs(30),
                })?;
        self.sandboxes().insert(name, device.clone());
        Ok(device)
    }

    /// A device by name, if it is configured or already started.
    pub(crate) fn by_name(&self, name: &str) -> Option<DeviceHandle> {
        self.configured
            .get(name)
            .cloned()
            .or_else(|| self.sandboxes().get(name).cloned())
    }

    /// The configured (production) devices' names, sorted.
    pub(crate) fn configured_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.configured.keys().cloned().collect();
        names.sort();
        names
    }

    /// Every device's link state, and whether it is a configured (production) device.
    pub(crate) fn statuses(&self) -> Vec<(String, LinkStatus, bool)> {
        let mut all: Vec<(String, LinkStatus, bool)> = self
            .configured
            .iter()
            .map(|(name, device)| (name.clone(), device.status(), true))
            .chain(
                self.sandboxes()
                    .iter()
                    .map(|(name, device)| (name.clone(), device.status(), false)),
            )
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Stops every device after its current session.
    pub(crate) async fn shutdown(&self) {
        let sandboxes: Vec<DeviceHandle> = self.sandboxes().values().cloned().collect();
        for device in self.configured.values().chain(sandboxes.iter()) {
            device.shutdown().await;
        }
    }
}
