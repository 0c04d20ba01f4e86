//! The seam between the use case and a certification channel (docs/design.md §3): what each
//! of the two channels (the e-MCF box on its serial line, `box_channel/`; the DGI's web API, `web_api_channel/`)
//! does for one valid, admitted invoice. [`Channel`] is a closed enum: each method `match`es
//! and calls into that channel's code, so the use case reads the same for both.
//!
//! A request takes a [`Waiting`] place in its channel's arrival order as it arrives
//! ([`Channel::arrive`]), is validated and admitted (nothing of the channel is used), then
//! [`Waiting::acquire`]s a [`Lane`]: exclusive use of the channel for this invoice. The lane
//! [`Lane::certify`]s to the end in a task of its own: it prepares the invoice and computes
//! what the channel answers, journals the intent through the [`RegisterWriter`] it is given,
//! finalizes, journals the certification, or leaves the intent open and says so
//! ([`RunFailure::InDoubt`]) when the outcome is not known. [`Channel::settle`] later decides
//! such intents from what the channel says, never by guessing.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::certify::admission::Ceiling;
use crate::certify::box_channel::{BoxChannel, BoxLane, BoxWaiting};
use crate::certify::in_doubt::InDoubt;
use crate::certify::invoice::ValidInvoice;
use crate::certify::register_writer::RegisterWriter;
use crate::certify::status::{ChannelView, Problem};
use crate::certify::web_api_channel::{WebApiChannel, WebApiLane, WebApiWaiting};
use crate::certify::CertifyError;
use crate::i18n::Lang;
use crate::model::{
    DeviceTotals, Environment, Intent, IntentId, Organization, ProbeReport, RegisterEntry,
};

/// One valid, admitted invoice, as a channel gets it.
pub struct Job {
    /// The key's organization (its NIF and ISF are the seller's).
    pub org: Organization,
    /// Production or Sandbox.
    pub environment: Environment,
    /// The key's public id.
    pub key_id: String,
    /// The invoice.
    pub invoice: ValidInvoice,
    /// The most its total may be (a credit note's share of its original, the organization's
    /// largest invoice total): checked with the exact total once the channel's VAT rates are
    /// known, before the invoice is opened on it (180, 181).
    pub ceiling: Ceiling,
    /// When the request arrived.
    pub received_at: DateTime<Utc>,
    /// The quota unit admission reserved (production): the store claims it with the intent,
    /// under the year the request arrived.
    pub quota: Option<crate::store::QuotaClaim>,
    /// The client's `Idempotency-Key`, checked.
    pub idempotency_key: Option<String>,
    /// The request body as JSON text, for a wire capture (it holds no secret).
    pub body: Arc<[u8]>,
    /// The channels whose outcome is in doubt: a lane marks its own before it releases the
    /// channel, so that nothing else runs on it first.
    pub in_doubt: InDoubt,
}

/// Where a channel is with its request when it journals the intent.
pub(crate) enum OnChannel {
    /// The box, whose C1h read before the invoice counted `tc` invoices.
    Box {
        /// The box's total counter before this invoice.
        tc: u64,
    },
    /// The web API, whose calculation named the request `uid`.
    WebApi {
        /// The DGI's id of the request.
        uid: String,
    },
}

impl Job {
    /// The intent the channel journals before it finalizes: this invoice on `device`, with the
    /// totals the channel computed and where the channel is with it. The one place an
    /// [`Intent`] is built for both channels.
    pub(crate) fn intent(&self, device: &str, totals: DeviceTotals, on: OnChannel) -> Intent {
        let (device_tc, channel_ref) = match on {
            OnChannel::Box { tc } => (Some(tc), None),
            OnChannel::WebApi { uid } => (None, Some(uid)),
        };
        Intent {
            org: self.org.id.clone(),
            environment: self.environment,
            rn: self.invoice.rn.clone(),
            invoice_type: self.invoice.invoice_type.to_string(),
            key_id: self.key_id.clone(),
            device: device.to_owned(),
            request_digest: self.invoice.digest.clone(),
            received_at: self.received_at,
            totals,
            nif: self.org.nif.clone(),
            isf: self.org.isf.clone(),
            idempotency_key: self.idempotency_key.clone(),
            device_tc,
            channel_ref,
            invoice: Some(self.invoice.canonical.clone()),
        }
    }
}

/// How a certification ended when it did not certify.
#[derive(Debug)]
pub enum RunFailure {
    /// Nothing is open on the channel and nothing is pending: a plain error.
    Failed(CertifyError),
    /// The outcome is not known: the intent stays open, the channel is marked in doubt and
    /// must be settled before it takes another invoice.
    InDoubt(IntentId),
    /// The run panicked (a bug): the channel is marked in doubt and settled like one.
    Panicked,
}

impl From<CertifyError> for RunFailure {
    fn from(error: CertifyError) -> Self {
        RunFailure::Failed(error)
    }
}

/// One certification channel, by its configured name (the `device` of an organization): an
/// e-MCF box on a serial line, or the DGI's e-MCF web API. Each method says what the use case
/// needs and goes straight to that channel's code.
pub enum Channel {
    /// An e-MCF box on its serial line (`box_channel/`).
    Box(BoxChannel),
    /// The DGI's e-MCF web API (`web_api_channel/`).
    WebApi(WebApiChannel),
}

/// A shared channel.
pub type SharedChannel = Arc<Channel>;

impl Channel {
    /// Its name (the intents' `device`).
    pub fn name(&self) -> &str {
        match self {
            Channel::Box(channel) => channel.name(),
            Channel::WebApi(channel) => channel.name(),
        }
    }

    /// What it is, for monitoring: `"box"` (an e-MCF on a serial line) or `"web_api"` (the
    /// DGI's e-MCF web API).
    pub fn kind(&self) -> &'static str {
        match self {
            Channel::Box(_) => "box",
            Channel::WebApi(_) => "web_api",
        }
    }

    /// A place in this channel's arrival order, taken when a request arrives: invoices reach
    /// the channel in that order. Dropping it gives the place up.
    pub(crate) fn arrive(&self) -> Waiting {
        match self {
            Channel::Box(channel) => Waiting::Box(channel.arrive()),
            Channel::WebApi(channel) => Waiting::WebApi(channel.arrive()),
        }
    }

    /// Settles `open`, this channel's intents whose outcome is not known, from what the channel
    /// says: `Ok(true)` when none is left, `Ok(false)` when the channel cannot tell yet.
    pub(crate) async fn settle(
        &self,
        open: Vec<(IntentId, Intent)>,
        journal: &RegisterWriter,
    ) -> Result<bool, CertifyError> {
        match self {
            Channel::Box(channel) => channel.settle(open, journal).await,
            Channel::WebApi(channel) => channel.settle(open, journal).await,
        }
    }

    /// What the channel is doing now, for `/status`, the dashboard and `/metrics`.
    pub fn view(&self) -> ChannelView {
        match self {
            Channel::Box(channel) => channel.view(),
            Channel::WebApi(channel) => channel.view(),
        }
    }

    /// Why this channel could not certify now for `organizations` (those bound to it are
    /// checked), `None` when it could; `settling` when an intent of it is in doubt.
    pub fn problem(&self, organizations: &[Organization], settling: bool) -> Option<Problem> {
        match self {
            Channel::Box(channel) => channel.problem(organizations, settling),
            Channel::WebApi(channel) => channel.problem(organizations, settling),
        }
    }

    /// The NIF the device is personalized for, as it last said (no traffic to the device);
    /// `None` until it has said.
    pub fn known_nif(&self) -> Option<String> {
        match self {
            Channel::Box(channel) => channel.known_nif(),
            Channel::WebApi(channel) => channel.known_nif(),
        }
    }

    /// A box's state (NIM, NIF, total counter, last invoice) as its actor last read it (C1h,
    /// no traffic to the box); `None` until read, and always for the web API (whose counters come only in
    /// a confirmation): the start-up check of a register behind its box
    /// (`register_behind.rs`).
    pub(crate) fn last_counters(&self) -> Option<crate::certify::register_behind::BoxState> {
        match self {
            Channel::Box(channel) => channel.last_counters(),
            Channel::WebApi(_) => None,
        }
    }

    /// What a technician needs on first contact (`device probe`), its words in `lang`.
    pub async fn probe(&self, lang: Lang) -> Result<ProbeReport, CertifyError> {
        match self {
            Channel::Box(channel) => channel.probe(lang).await,
            Channel::WebApi(channel) => channel.probe(lang).await,
        }
    }

    /// The register, given once when the service starts (the web API keeps it to tell its
    /// own requests from others).
    pub(crate) fn adopt(&self, journal: RegisterWriter) {
        match self {
            Channel::Box(_) => {}
            Channel::WebApi(channel) => channel.adopt(journal),
        }
    }

    /// The intents of this channel whose outcome only an administrator can settle (the
    /// channel will never tell), and why: `intent list`, the dashboard, `/metrics`.
    pub fn awaiting_administrator(&self) -> Vec<(IntentId, String)> {
        match self {
            Channel::Box(_) => Vec::new(),
            Channel::WebApi(channel) => channel.awaiting_administrator(),
        }
    }

    /// An administrator settled `intent` (journaled by the caller): stop listing it.
    pub fn settled_by_administrator(&self, intent: IntentId) {
        match self {
            Channel::Box(_) => {}
            Channel::WebApi(channel) => channel.settled_by_administrator(intent),
        }
    }

    /// Stops the channel after its current invoice.
    pub async fn shutdown(&self) {
        match self {
            Channel::Box(channel) => channel.shutdown().await,
            Channel::WebApi(channel) => channel.shutdown().await,
        }
    }
}

/// A place in a channel's arrival order.
pub(crate) enum Waiting {
    /// In the box's queue.
    Box(BoxWaiting),
    /// Before the web API's pending window.
    WebApi(WebApiWaiting),
}

impl Waiting {
    /// Waits for exclusive use of the channel, after every earlier place. Fails at once when
    /// the channel cannot take an invoice now (503). Dropping the future costs nothing.
    pub(crate) async fn acquire(self) -> Result<Lane, CertifyError> {
        match self {
            Waiting::Box(waiting) => Ok(Lane::Box(waiting.acquire().await?)),
            Waiting::WebApi(waiting) => Ok(Lane::WebApi(waiting.acquire().await?)),
        }
    }
}

/// Exclusive use of a channel for one invoice.
pub(crate) enum Lane {
    /// The box's port, leased.
    Box(BoxLane),
    /// A place in the web API's pending window.
    WebApi(WebApiLane),
}

impl Lane {
    /// Certifies `job` to the end, journaling through `journal`. Not to be cancelled: the
    /// caller runs it in a task of its own, and takes a panic out of it for
    /// [`RunFailure::Panicked`], the channel marked in doubt. Each channel marks itself in
    /// doubt before it gives the channel up (the box: before its port is released).
    pub(crate) async fn certify(
        self,
        job: Job,
        journal: RegisterWriter,
    ) -> Result<RegisterEntry, RunFailure> {
        match self {
            Lane::Box(lane) => lane.certify(job, journal).await,
            Lane::WebApi(lane) => lane.certify(job, journal).await,
        }
    }
}
