//! Intents whose outcome is not known: the set of channels in doubt, and the background task
//! that settles them (at start-up for every intent the journal left open, and after a run
//! that ended in doubt) until the channel tells. Each channel decides from what it says
//! ([`Channel::settle`](crate::certify::channel::Channel::settle): for a box, its C1h); a
//! channel in doubt takes no invoice until settled, and the rn answers 409 meanwhile.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tracing::{error, info, warn, Instrument};

use crate::certify::channel::SharedChannel;
use crate::certify::channels::Channels;
use crate::certify::register_writer::{blocking, RegisterWriter};
use crate::certify::CertifyError;
use crate::model::{Environment, Intent, IntentId};
use crate::msg;
use crate::store::Store;

/// The channels whose last outcome is not known yet. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct InDoubt(Arc<Mutex<HashSet<String>>>);

impl InDoubt {
    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        // Each operation is one insert or remove: a poisoned lock is still consistent.
        crate::sync::lock(&self.0)
    }

    /// Marks `channel` in doubt: it takes no invoice until settled.
    pub fn mark(&self, channel: &str) {
        self.lock().insert(channel.to_owned());
    }

    /// Whether `channel` is in doubt.
    pub fn contains(&self, channel: &str) -> bool {
        self.lock().contains(channel)
    }

    /// The channels in doubt, sorted.
    pub fn list(&self) -> Vec<String> {
        let mut all: Vec<String> = self.lock().iter().cloned().collect();
        all.sort();
        all
    }

    /// 503 while `channel` is in doubt.
    pub(crate) fn refuse(&self, channel: &str) -> Result<(), CertifyError> {
        if self.contains(channel) {
            return Err(CertifyError::DeviceUnavailable {
                reason: msg!("reason-settling-earlier"),
                retry_after: Duration::from_secs(5),
            });
        }
        Ok(())
    }

    fn clear(&self, channel: &str) {
        self.lock().remove(channel);
    }
}

/// Settles the intents left open, in the background.
pub(crate) struct Reconciler {
    store: Arc<Store>,
    channels: Arc<Channels>,
    journal: RegisterWriter,
    in_doubt: InDoubt,
    /// One pass at a time per channel: several loops may run for one channel (a run ended
    /// in doubt, intents taken over from a replica gone), never settling one intent twice
    /// at once.
    passes: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Reconciler {
    pub(crate) fn new(
        store: Arc<Store>,
        channels: Arc<Channels>,
        journal: RegisterWriter,
        in_doubt: InDoubt,
    ) -> Reconciler {
        Reconciler {
            store,
            channels,
            journal,
            in_doubt,
            passes: Mutex::default(),
        }
    }

    /// Marks every channel with an intent the journal left open, and settles them in the
    /// background (start-up).
    pub(crate) fn start(self: &Arc<Self>) -> Result<(), CertifyError> {
        let open = self.store.owned_open_intents()?;
        self.adopt(open);
        Ok(())
    }

    /// Marks the channels of `open` (intents this process owns: left open by its journal, or
    /// taken over from a replica gone) and settles them in the background.
    pub(crate) fn adopt(self: &Arc<Self>, open: Vec<(IntentId, Intent)>) {
        let mut channels: Vec<String> = open.into_iter().map(|(_, i)| i.device).collect();
        channels.sort();
        channels.dedup();
        for channel in channels {
            warn!(device = %channel, "open intents in the journal: reconciling before new invoices");
            self.in_doubt.mark(&channel);
            self.spawn(channel);
        }
    }

    /// Keeps trying to settle the open intents of `channel` (marked in doubt) until none is
    /// left, then lets it take invoices again.
    pub(crate) fn spawn(self: &Arc<Self>, channel: String) {
        let this = Arc::clone(self);
        let span = tracing::info_span!("reconcile", device = %channel);
        tokio::spawn(
            async move {
                // Short first retries: right after start-up the link comes up within ~100 ms.
                let mut backoff = Duration::from_millis(25);
                // The same failure is logged once at `error`, then at `debug` while it lasts.
                let mut last_failure = None;
                loop {
                    match this.pass(&channel).await {
                        Ok(true) => {
                            this.in_doubt.clear(&channel);
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

    /// One pass: true when no open intent is left for `channel`.
    async fn pass(&self, channel: &str) -> Result<bool, CertifyError> {
        let one = Arc::clone(
            crate::sync::lock(&self.passes)
                .entry(channel.to_owned())
                .or_default(),
        );
        let _one_at_a_time = one.lock().await;
        // While the register cannot be written nothing can be settled: the channel is not
        // asked (`storage_fault.rs` journals what was kept once it can).
        let open = blocking(&self.store, |store| match store.write_fault() {
            Some(_) => Ok(None),
            None => store.owned_open_intents().map(Some),
        })
        .await?;
        let Some(open) = open else {
            return Ok(false);
        };
        let open: Vec<_> = open
            .into_iter()
            .filter(|(_, intent)| intent.device == channel)
            .collect();
        if open.is_empty() {
            return Ok(true);
        }
        let Some(owner) = self.owner(channel, &open[0].1).await? else {
            error!(
                "open intents name a device that is not configured; configure it to settle them"
            );
            return Ok(false);
        };
        owner.settle(open, &self.journal).await
    }

    /// The channel an intent ran on; a sandbox is started again if needed (after a restart).
    async fn owner(
        &self,
        channel: &str,
        intent: &Intent,
    ) -> Result<Option<SharedChannel>, CertifyError> {
        if let Some(owner) = self.channels.by_name(channel) {
            return Ok(Some(owner));
        }
        if intent.environment != Environment::Sandbox {
            return Ok(None);
        }
        let Some(org) = self.store.organization(&intent.org)? else {
            return Ok(None);
        };
        Ok(Some(self.channels.sandbox_of(&org).await?))
    }
}
