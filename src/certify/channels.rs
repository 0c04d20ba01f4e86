//! Which channel an invoice goes to: the organization's configured channel (`device`) for
//! `mcf_live_` keys, and for `mcf_test_` keys the organization's own sandbox, a bundled
//! simulator personalized with the organization's NIF, started on first use by a factory the
//! binary provides (so its QR codes carry the organization's NIF, as the real box's will).
//! Nothing here starts a sandbox before the request is valid and admitted: [`Channels::running`]
//! never starts one, [`Channels::for_invoice`] does. The web API devices kept in the store
//! (issue 29) are production channels too, added, replaced and removed while the service runs
//! (`stored_devices.rs`): a replaced or removed one takes no new invoice, and those it has
//! under way finish on it (they hold it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::certify::channel::SharedChannel;
use crate::certify::register_writer::RegisterWriter;
use crate::certify::CertifyError;
use crate::model::{Environment, Organization};
use crate::msg;

/// Starts the sandbox channel of an organization (a simulator on a pty).
pub type SandboxFactory = std::sync::Arc<
    dyn Fn(Organization) -> BoxFuture<'static, Result<SharedChannel, String>> + Send + Sync,
>;

/// The name of `org`'s sandbox channel. It carries the organization's id: `/metrics` shows
/// it only with `metrics_per_organization` (`metrics::SANDBOXES` otherwise).
pub fn sandbox_device_name(org: &str) -> String {
    format!("sandbox-{org}")
}

/// The configured channels and the sandboxes started so far.
pub(crate) struct Channels {
    configured: HashMap<String, SharedChannel>,
    /// The devices kept in the store, by name (never one of `configured`'s names).
    stored: Mutex<HashMap<String, SharedChannel>>,
    /// Devices kept in the store whose token this replica cannot open (a key missing from
    /// `[store] secret_key_file`): their invoices are refused as such, not as unknown.
    unopened: Mutex<std::collections::HashSet<String>>,
    factory: Option<SandboxFactory>,
    sandboxes: Mutex<HashMap<String, SharedChannel>>,
    starting: tokio::sync::Mutex<()>,
    journal: RegisterWriter,
}

impl Channels {
    /// The configured channels (each given the register) and the sandbox factory.
    pub(crate) fn new(
        configured: Vec<SharedChannel>,
        factory: Option<SandboxFactory>,
        journal: RegisterWriter,
    ) -> Channels {
        for channel in &configured {
            channel.adopt(journal.clone());
        }
        Channels {
            configured: configured
                .into_iter()
                .map(|channel| (channel.name().to_string(), channel))
                .collect(),
            factory,
            stored: Mutex::new(HashMap::new()),
            unopened: Mutex::new(std::collections::HashSet::new()),
            sandboxes: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
            journal,
        }
    }

    fn sandboxes(&self) -> std::sync::MutexGuard<'_, HashMap<String, SharedChannel>> {
        crate::sync::lock(&self.sandboxes)
    }

    fn stored(&self) -> std::sync::MutexGuard<'_, HashMap<String, SharedChannel>> {
        crate::sync::lock(&self.stored)
    }

    /// Puts `channel` (a device kept in the store) in place of the one of its name, if any,
    /// for the invoices that come next; refused (`false`) for a name of the configuration.
    pub(crate) fn put_stored(&self, channel: SharedChannel) -> bool {
        let name = channel.name().to_string();
        if self.configured.contains_key(&name) {
            return false;
        }
        channel.adopt(self.journal.clone());
        crate::sync::lock(&self.unopened).remove(&name);
        self.stored().insert(name, channel);
        true
    }

    /// Takes the device kept in the store `name` out: no new invoice goes to it. `unopened`:
    /// because this replica cannot open its token (its invoices are refused saying so).
    pub(crate) fn remove_stored(&self, name: &str, unopened: bool) -> Option<SharedChannel> {
        let mut names = crate::sync::lock(&self.unopened);
        if unopened {
            names.insert(name.to_owned());
        } else {
            names.remove(name);
        }
        drop(names);
        self.stored().remove(name)
    }

    /// The channel of `org` in `env` if it runs now (nothing is started).
    pub(crate) fn running(&self, org: &Organization, env: Environment) -> Option<SharedChannel> {
        match env {
            Environment::Production => self.configured(&org.device),
            Environment::Sandbox => self.sandboxes().get(&sandbox_device_name(&org.id)).cloned(),
        }
    }

    /// The channel of `org` in `env`; a sandbox is started if needed.
    pub(crate) async fn for_invoice(
        &self,
        org: &Organization,
        env: Environment,
    ) -> Result<SharedChannel, CertifyError> {
        match env {
            Environment::Production => self.configured(&org.device).ok_or_else(|| {
                if crate::sync::lock(&self.unopened).contains(&org.device) {
                    return CertifyError::DeviceUnavailable {
                        reason: msg!("reason-stored-device-unopened"),
                        retry_after: Duration::from_secs(30),
                    };
                }
                CertifyError::DeviceNotConfigured {
                    device: org.device.clone(),
                }
            }),
            Environment::Sandbox => self.sandbox_of(org).await,
        }
    }

    /// The sandbox channel of `org`, started on first use.
    pub(crate) async fn sandbox_of(
        &self,
        org: &Organization,
    ) -> Result<SharedChannel, CertifyError> {
        let name = sandbox_device_name(&org.id);
        if let Some(channel) = self.sandboxes().get(&name) {
            return Ok(channel.clone());
        }
        let Some(factory) = &self.factory else {
            return Err(CertifyError::NoSandbox);
        };
        let _one_at_a_time = self.starting.lock().await;
        if let Some(channel) = self.sandboxes().get(&name) {
            return Ok(channel.clone());
        }
        let channel =
            factory(org.clone())
                .await
                .map_err(|reason| CertifyError::DeviceUnavailable {
                    reason: msg!("reason-sandbox-start-failed", detail = reason.to_string()),
                    retry_after: Duration::from_secs(30),
                })?;
        channel.adopt(self.journal.clone());
        self.sandboxes().insert(name, channel.clone());
        Ok(channel)
    }

    /// A channel by name, if it is configured or already started.
    pub(crate) fn by_name(&self, name: &str) -> Option<SharedChannel> {
        self.configured(name)
            .or_else(|| self.sandboxes().get(name).cloned())
    }

    /// A configured (production) channel by name: of the configuration or kept in the store.
    pub(crate) fn configured(&self, name: &str) -> Option<SharedChannel> {
        self.configured
            .get(name)
            .cloned()
            .or_else(|| self.stored().get(name).cloned())
    }

    /// The configured (production) channels' names, sorted.
    pub(crate) fn configured_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.configured.keys().cloned().collect();
        names.extend(self.stored().keys().cloned());
        names.sort();
        names
    }

    /// The production channels: the configuration's and those kept in the store.
    fn production(&self) -> Vec<SharedChannel> {
        let mut all: Vec<SharedChannel> = self.configured.values().cloned().collect();
        all.extend(self.stored().values().cloned());
        all
    }

    /// The boxes' names, sorted (each on this replica only).
    pub(crate) fn box_names(&self) -> Vec<String> {
        self.production_names(|channel| matches!(channel, crate::certify::Channel::Box(_)))
    }

    /// The production web API channels' names, sorted (those a leader settles for replicas
    /// gone: `replica.rs`).
    pub(crate) fn web_api_names(&self) -> Vec<String> {
        self.production_names(|channel| matches!(channel, crate::certify::Channel::WebApi(_)))
    }

    /// The names of the production channels `kind` picks, sorted.
    fn production_names(&self, kind: fn(&crate::certify::Channel) -> bool) -> Vec<String> {
        let mut names: Vec<String> = self
            .production()
            .iter()
            .filter(|channel| kind(channel))
            .map(|channel| channel.name().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The longest a call to the DGI may take on any production web API channel (none: zero).
    pub(crate) fn longest_dgi_call(&self) -> Duration {
        self.production()
            .iter()
            .filter_map(|channel| match &**channel {
                crate::certify::Channel::WebApi(web) => Some(web.longest_call()),
                crate::certify::Channel::Box(_) => None,
            })
            .max()
            .unwrap_or_default()
    }

    /// Every channel, and whether it is a configured (production) one, by name.
    pub(crate) fn all(&self) -> Vec<(SharedChannel, bool)> {
        let stored: Vec<SharedChannel> = self.stored().values().cloned().collect();
        let mut all: Vec<(SharedChannel, bool)> = self
            .configured
            .values()
            .chain(stored.iter())
            .map(|channel| (channel.clone(), true))
            .chain(
                self.sandboxes()
                    .values()
                    .map(|channel| (channel.clone(), false)),
            )
            .collect();
        all.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        all
    }

    /// Stops every channel after its current invoice.
    pub(crate) async fn shutdown(&self) {
        let sandboxes: Vec<SharedChannel> = self.sandboxes().values().cloned().collect();
        let stored: Vec<SharedChannel> = self.stored().values().cloned().collect();
        for channel in self
            .configured
            .values()
            .chain(stored.iter())
            .chain(sandboxes.iter())
        {
            channel.shutdown().await;
        }
    }
}
