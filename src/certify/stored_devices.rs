//! Web API e-MCFs kept as data in the store (issue 29), picked up by a running service within
//! seconds, with no restart: every [`POLL`] the service reads one number that moves whenever
//! a kept device is added, changed or removed (`Store::stored_devices_version`), and on a
//! change reads the devices, opens each changed token with the keys of
//! `[store] secret_key_file` (read again then, so that a key added to the file is used with no
//! restart either) and puts a new web API channel in place of the old one
//! (`Channels::put_stored`). Invoices under way finish on the channel they hold; a removed
//! device takes no new invoice. Store reads and the key file's run off the runtime's workers.
//! The embedded store keeps no device: nothing is started for it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

use super::web_api_channel::{new_web_api_channel, GivenToken, WebApiSettings};
use super::Certifier;
use crate::store::sealed::Keyring;
use crate::store::StoredDevice;

/// Between two looks at the store.
pub const POLL: Duration = Duration::from_secs(1);

/// The keys of `[store] secret_key_file` as they are now (`None` when the key is not set),
/// or why they cannot be read. Never a key in the error.
pub type KeySource = Arc<dyn Fn() -> Result<Option<Keyring>, String> + Send + Sync>;

/// Why a device kept in the store cannot be put in service on this replica (for its log:
/// never the token, never a key).
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error("[store] secret_key_file is not set")]
    NoKey,
    #[error("[store] secret_key_file: {0}")]
    KeyFile(String),
    #[error(transparent)]
    Sealed(#[from] crate::store::sealed::SealError),
    #[error("the opened token is not text")]
    NotText,
    #[error(transparent)]
    Token(#[from] super::web_api_channel::TokenError),
    #[error("its channel cannot be made: {0}")]
    Channel(String),
    #[error("a [[devices]] block of this replica's configuration has this name")]
    InFile,
}

/// What the loop knows between two looks.
#[derive(Default)]
struct Seen {
    /// The store's number when the devices were last read.
    version: Option<i64>,
    /// The version of each kept device whose channel runs.
    running: BTreeMap<String, u64>,
    /// Why each device that could not be put in service could not (said once each).
    failing: BTreeMap<String, String>,
}

impl Certifier {
    /// Puts the devices kept in the store in service (a first look, before it returns), then
    /// starts the loop that keeps their channels in step with it, until `stop`; nothing on
    /// the embedded store.
    pub async fn spawn_stored_devices(self: &Arc<Self>, keys: KeySource, stop: CancellationToken) {
        if self.store.embedded().is_some() {
            return;
        }
        let mut seen = Seen::default();
        self.stored_devices_once(&keys, &mut seen).await;
        let this = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(POLL) => {}
                }
                this.stored_devices_once(&keys, &mut seen).await;
            }
        });
    }

    /// One look: the devices read again when the store's number moved, or while one of them
    /// could not be put in service (a key may have been added to the file since).
    async fn stored_devices_once(self: &Arc<Self>, keys: &KeySource, seen: &mut Seen) {
        let version = self
            .off_workers(|c| Ok(c.store.stored_devices_version()?))
            .await;
        let version = match version {
            Ok(version) => version,
            Err(error) => {
                // The database away: the channels stay as they are until it answers.
                warn!(%error, "the devices kept in the store cannot be read now");
                return;
            }
        };
        if seen.version == Some(version) && seen.failing.is_empty() {
            return;
        }
        let keys = Arc::clone(keys);
        let read = self
            .off_workers(move |c| Ok((c.store.stored_devices()?, keys())))
            .await;
        let (devices, keyring) = match read {
            Ok(read) => read,
            Err(error) => {
                warn!(%error, "the devices kept in the store cannot be read now");
                return;
            }
        };
        self.apply_stored_devices(&devices, &keyring, seen);
        seen.version = Some(version);
        self.organizations_changed();
    }

    fn apply_stored_devices(
        &self,
        devices: &[StoredDevice],
        keyring: &Result<Option<Keyring>, String>,
        seen: &mut Seen,
    ) {
        let kept: BTreeSet<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        for name in seen.running.keys().cloned().collect::<Vec<_>>() {
            if !kept.contains(name.as_str()) {
                self.channels.remove_stored(&name, false);
                seen.running.remove(&name);
                info!(device = %name, "a web API device was removed from the store: it takes no new invoice");
            }
        }
        seen.failing.retain(|name, _| kept.contains(name.as_str()));
        for device in devices {
            if seen.running.get(&device.name) == Some(&device.version) {
                continue;
            }
            match self.start_stored(device, keyring) {
                Ok(()) => {
                    seen.running.insert(device.name.clone(), device.version);
                    seen.failing.remove(&device.name);
                    info!(device = %device.name, url = %device.url, version = device.version, key = %device.key_id,
                        "certifying through the DGI web API (a device kept in the store)");
                }
                Err(why) => {
                    let why = why.to_string();
                    // A device whose token does not open takes no invoice on this replica
                    // (those under way on its old channel finish).
                    self.channels.remove_stored(&device.name, true);
                    seen.running.remove(&device.name);
                    if seen.failing.get(&device.name) != Some(&why) {
                        error!(device = %device.name, key = %device.key_id, reason = %why,
                            "a web API device kept in the store cannot be used by this replica");
                        seen.failing.insert(device.name.clone(), why);
                    }
                }
            }
        }
    }

    /// Opens `device`'s token and puts its new channel in service; why not, never the token.
    fn start_stored(
        &self,
        device: &StoredDevice,
        keyring: &Result<Option<Keyring>, String>,
    ) -> Result<(), Unusable> {
        let keyring = match keyring {
            Ok(Some(keyring)) => keyring,
            Ok(None) => return Err(Unusable::NoKey),
            Err(why) => return Err(Unusable::KeyFile(why.clone())),
        };
        let opened = keyring.open(&device.name, &device.token_sealed)?;
        let text = String::from_utf8(opened).map_err(|_| Unusable::NotText)?;
        let token = GivenToken::new(&text)?;
        let mut settings =
            WebApiSettings::new(device.name.as_str(), device.url.as_str(), PathBuf::new());
        settings.token = Some(token);
        let channel = new_web_api_channel(settings).map_err(Unusable::Channel)?;
        if !self.channels.put_stored(channel) {
            return Err(Unusable::InFile);
        }
        Ok(())
    }
}
