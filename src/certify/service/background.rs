//! The certification service's background work: settling, at start-up and after an unknown
//! outcome, the intents whose 38h outcome is not known (`reconcile.rs` decides each from C1h).
//! A device with an open intent takes no invoice until it is settled.

use std::sync::Arc;
use std::time::Duration;

use tracing::{error, info, warn, Instrument};

use super::Certifier;
use crate::certify::reconcile::{settle, SettleError};
use crate::certify::CertifyError;
use crate::device::DeviceHandle;
use crate::model::{Environment, Intent};

impl Certifier {
    /// Settles, in the background, every intent the journal left open (start-up). Devices
    /// with open intents take no invoice until theirs are settled.
    pub fn start_reconciliation(self: &Arc<Self>) -> Result<(), CertifyError> {
        let open = self.store.open_intents()?;
        let mut devices: Vec<String> = open.into_iter().map(|(_, i)| i.device).collect();
        devices.sort();
        devices.dedup();
        for device in devices {
            warn!(%device, "open intents in the journal: reconciling before new invoices");
            self.lock_in_doubt().insert(device.clone());
            self.spawn_reconciler(device);
        }
        Ok(())
    }

    /// Keeps trying to settle the open intents of `device` until none is left.
    pub(super) fn spawn_reconciler(self: &Arc<Self>, device: String) {
        let this = Arc::clone(self);
        let span = tracing::info_span!("reconcile", %device);
        tokio::spawn(
            async move {
                // Short first retries: right after start-up the link comes up within ~100 ms.
                let mut backoff = Duration::from_millis(25);
                // The same failure is logged once at `error`, then at `debug` while it lasts.
                let mut last_failure = None;
                loop {
                    match this.reconcile_device(&device).await {
                        Ok(true) => {
                            this.lock_in_doubt().remove(&device);
                            info!("all intents settled; the device takes invoices again");
                            return;
                        }
                        Ok(false) => {}
                        Err(error) => {
                            let text = error.to_string();
                            if last_failure.as_ref() != Some(&text) {
                                error!(%error, "reconciliation failed; will retry");
                            } else {
                                tracing::debug!(%error, "reconciliation failed again");
                            }
                            last_failure = Some(text);
                        }
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
            .instrument(span),
        );
    }

    /// The sandbox device an intent ran on, started again if needed (after a restart).
    async fn sandbox_owner(&self, intent: &Intent) -> Result<Option<DeviceHandle>, CertifyError> {
        if intent.environment != Environment::Sandbox {
            return Ok(None);
        }
        let Some(org) = self.store.organization(&intent.org)? else {
            return Ok(None);
        };
        Ok(Some(self.devices.sandbox_of(&org).await?))
    }

    /// One pass: true when no open intent is left for `device`.
    async fn reconcile_device(&self, device: &str) -> Result<bool, CertifyError> {
        let open: Vec<_> = self
            .store
            .open_intents()?
            .into_iter()
            .filter(|(_, intent)| intent.device == device)
            .collect();
        if open.is_empty() {
            return Ok(true);
        }
        let handle = match self.devices.by_name(device) {
            Some(handle) => handle,
            None => match self.sandbox_owner(&open[0].1).await? {
                Some(handle) => handle,
                None => {
                    error!("open intents name a device that is not configured; configure it to settle them");
                    return Ok(false);
                }
            },
        };
        let mut session = match handle.acquire().await {
            Ok(session) => session,
            Err(error) => {
                info!(%error, "device not available for reconciliation yet");
                return Ok(false);
            }
        };
        for (id, intent) in open {
            match settle(&mut session, &self.store, self.settings.offset, id, &intent).await {
                Ok(_) => {}
                Err(SettleError::Unreachable(reason)) => {
                    info!(%reason, "device did not answer C1h yet");
                    return Ok(false);
                }
                Err(SettleError::CannotTell(reason)) => {
                    return Err(CertifyError::Internal(format!(
                        "reconciliation cannot conclude ({reason}); C1h is asked again"
                    )));
                }
                Err(SettleError::Store(error)) => return Err(error),
            }
        }
        Ok(true)
    }
}
