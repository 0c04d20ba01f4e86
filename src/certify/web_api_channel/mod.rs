//! The DGI's e-MCF web API ("e-DEF") as a certification channel (docs/web-api.md):
//! each invoice is a request (the DGI computes it and returns a `uid`), checked against the
//! gateway's own computation, journaled as an intent with its uid, then confirmed (the DGI
//! returns the security elements). Up to `pending_limit` invoices are pending on the DGI at
//! once, entering that window in arrival order.
//!
//! `settings.rs` the entry's keys; `token.rs` the token file; `client.rs` HTTP(S) with typed
//! failures; `calls.rs` the API's calls; `invoice.rs` the request body and the check of the
//! calculation; `run.rs` one invoice; `settle_from_pending.rs` a confirm whose answer was lost;
//! `health.rs` what the channel last saw (status, token, rates) and the background watch;
//! `window.rs` the window shared by the replicas over PostgreSQL.

mod calls;
mod client;
mod health;
mod invoice;
mod run;
mod settings;
mod settle_from_pending;
mod token;
mod window;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{RwLock, Semaphore};

pub use run::{WebApiLane, WebApiWaiting};
pub use settings::{CdfCurrency, WebApiSettings};
pub use token::{GivenToken, TokenError};

use self::calls::{Api, Oddities};
use self::client::DgiClient;
use self::health::Health;
use crate::arrivals::Arrivals;
use crate::certify::channel::{Channel, SharedChannel};
use crate::certify::register_writer::RegisterWriter;
use crate::certify::status::{ChannelView, Problem};
use crate::certify::CertifyError;
use crate::i18n::Lang;
use crate::model::{Intent, IntentId, Organization, ProbeReport};
use crate::sync::lock;

/// The web API channel of `settings`; its background watch (status, rates, pending requests
/// left by an earlier run) starts at once. Fails when the CA file cannot be read.
pub fn new_web_api_channel(settings: WebApiSettings) -> Result<SharedChannel, String> {
    let client = DgiClient::new(&settings)?;
    if client.token_file().readable_by_others() {
        tracing::warn!(
            device = %settings.name,
            file = %settings.token_file.display(),
            "the token file can be read by other users: make it readable by the service only (chmod 600)"
        );
    }
    let shared = Arc::new(Shared {
        api: Api {
            client,
            device: settings.name.clone(),
            action_case: settings.action_case,
            oddities: Oddities::default(),
        },
        window: Arc::new(Semaphore::new(settings.pending_limit)),
        running: Arc::new(RwLock::new(())),
        arrivals: Arc::new(Arrivals::new()),
        waiting: AtomicUsize::new(0),
        live: Mutex::new(HashSet::new()),
        awaiting: Mutex::new(BTreeMap::new()),
        confirmed: Mutex::new(BTreeMap::new()),
        unconfirmed: Mutex::new(BTreeSet::new()),
        health: Health::new(),
        places: Arc::new(window::HeldPlaces::default()),
        settings,
    });
    health::spawn_watch(&shared);
    window::spawn_recovery(&shared);
    Ok(Arc::new(Channel::WebApi(WebApiChannel { shared })))
}

/// What the lanes, the settling and the watch of one channel share.
pub(crate) struct Shared {
    settings: WebApiSettings,
    api: Api,
    /// One permit per request that may be pending on the DGI (given back once its confirm
    /// is sent).
    window: Arc<Semaphore>,
    /// Held (read) by every invoice from its place in the window to its end, confirm
    /// included; the stop takes it (write) to wait for the last.
    running: Arc<RwLock<()>>,
    arrivals: Arc<Arrivals>,
    /// Invoices waiting for a permit.
    waiting: AtomicUsize,
    /// The uids a lane of this process holds (requested, not yet confirmed or cancelled):
    /// never cancelled as strays, never settled behind the lane's back.
    live: Mutex<HashSet<String>>,
    /// Intents whose outcome only an administrator can settle, and why.
    awaiting: Mutex<BTreeMap<IntentId, String>>,
    /// Confirmations the register could not take yet (journaled by the next settling).
    confirmed: Mutex<BTreeMap<IntentId, edef::Confirmation>>,
    /// The uids of requests never confirmed because their intent could not be journaled, or
    /// was journaled while the register halted, or may have been (a database whose COMMIT's
    /// answer was lost): their intent, if the register has it, is journaled as abandoned by
    /// the next settling (the request was cancelled; this process never confirms it).
    unconfirmed: Mutex<BTreeSet<String>>,
    health: Health,
    /// The places of the window shared by the replicas this process's lanes hold.
    places: Arc<window::HeldPlaces>,
}

/// A uid held by a lane; released when dropped.
struct HeldUid<'a> {
    shared: &'a Shared,
    uid: String,
}

impl Drop for HeldUid<'_> {
    fn drop(&mut self) {
        lock(&self.shared.live).remove(&self.uid);
    }
}

impl Shared {
    fn hold_uid(&self, uid: &str) -> HeldUid<'_> {
        lock(&self.live).insert(uid.to_owned());
        HeldUid {
            shared: self,
            uid: uid.to_owned(),
        }
    }

    fn is_live(&self, uid: &str) -> bool {
        lock(&self.live).contains(uid)
    }

    /// Keeps `intent` for an administrator, and says so in the register for every replica
    /// to show (`RegisterWriter::mark_awaiting`).
    fn await_administrator(&self, intent: IntentId, why: String) {
        lock(&self.awaiting).insert(intent, why.clone());
        if let Some(journal) = self.health.journal() {
            let journal = journal.clone();
            tokio::spawn(async move { journal.mark_awaiting(intent, why).await });
        }
    }

    fn keep_confirmed(&self, intent: IntentId, confirmation: edef::Confirmation) {
        lock(&self.confirmed).insert(intent, confirmation);
    }

    fn kept_confirmation(&self, intent: IntentId) -> Option<edef::Confirmation> {
        lock(&self.confirmed).get(&intent).cloned()
    }

    fn forget_confirmation(&self, intent: IntentId) {
        lock(&self.confirmed).remove(&intent);
    }

    fn never_confirmed(&self, uid: &str) {
        lock(&self.unconfirmed).insert(uid.to_owned());
    }

    fn was_never_confirmed(&self, uid: &str) -> bool {
        lock(&self.unconfirmed).contains(uid)
    }

    fn forget_unconfirmed(&self, uid: &str) {
        lock(&self.unconfirmed).remove(uid);
    }
}

/// The DGI's e-MCF web API as a certification channel.
pub struct WebApiChannel {
    shared: Arc<Shared>,
}

impl WebApiChannel {
    pub(crate) fn name(&self) -> &str {
        &self.shared.settings.name
    }

    /// A place in the channel's arrival order.
    pub(crate) fn arrive(&self) -> WebApiWaiting {
        WebApiWaiting::new(&self.shared)
    }

    /// The open intents of the channel, settled from the DGI's pending list.
    pub(crate) async fn settle(
        &self,
        open: Vec<(IntentId, Intent)>,
        journal: &RegisterWriter,
    ) -> Result<bool, CertifyError> {
        settle_from_pending::settle_all(&self.shared, open, journal).await
    }

    pub(crate) fn view(&self) -> ChannelView {
        let queued = self.shared.waiting.load(Ordering::Relaxed);
        let pending = self
            .shared
            .settings
            .pending_limit
            .saturating_sub(self.shared.window.available_permits());
        self.shared.health.view(self.name(), queued, pending)
    }

    pub(crate) fn problem(
        &self,
        organizations: &[Organization],
        settling: bool,
    ) -> Option<Problem> {
        self.shared
            .health
            .problem(self.name(), organizations, settling)
    }

    pub(crate) fn known_nif(&self) -> Option<String> {
        self.shared.health.known_nif()
    }

    pub(crate) async fn probe(&self, lang: Lang) -> Result<ProbeReport, CertifyError> {
        health::probe(&self.shared, lang).await
    }

    /// The register, kept to tell this channel's requests from others.
    /// The longest a call to the DGI sent now may take: its connection and its answer.
    pub(crate) fn longest_call(&self) -> std::time::Duration {
        self.shared.settings.connect_timeout + self.shared.settings.request_timeout
    }

    pub(crate) fn adopt(&self, journal: RegisterWriter) {
        self.shared.health.adopt(journal);
    }

    pub(crate) fn awaiting_administrator(&self) -> Vec<(IntentId, String)> {
        lock(&self.shared.awaiting)
            .iter()
            .map(|(id, why)| (*id, why.clone()))
            .collect()
    }

    pub(crate) fn settled_by_administrator(&self, intent: IntentId) {
        lock(&self.shared.awaiting).remove(&intent);
    }

    /// No new request enters the window; those under way finish (confirm or cancel), their
    /// confirm's answer included.
    pub(crate) async fn shutdown(&self) {
        let limit = u32::try_from(self.shared.settings.pending_limit).unwrap_or(u32::MAX);
        let _all = self.shared.window.acquire_many(limit).await;
        let _last = self.shared.running.write().await;
    }
}
