//! The seam between the use case and a certification channel (docs/design.md §3): what any
//! channel (the e-MCF box on its serial line, `mcf/`; the DGI's web API next) must do for one
//! valid, admitted invoice. The use case never learns which channel it talks to.
//!
//! A request takes a [`Waiting`] place in its channel's arrival order as it arrives
//! ([`Channel::arrive`]), is validated and admitted (nothing of the channel is used), then
//! [`Waiting::acquire`]s a [`Lane`]: exclusive use of the channel for this invoice. The lane
//! [`Lane::certify`]s to the end in a task of its own: it prepares the invoice and computes
//! what the channel answers, journals the intent through the [`Journal`] it is given,
//! finalizes, journals the certification, or leaves the intent open and says so
//! ([`RunFailure::InDoubt`]) when the outcome is not known. [`Channel::settle`] later decides
//! such intents from what the channel says, never by guessing.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;

use crate::certify::admission::Ceiling;
use crate::certify::invoice::ValidInvoice;
use crate::certify::journal::Journal;
use crate::certify::reconcile::InDoubt;
use crate::certify::status::{ChannelView, Problem};
use crate::certify::CertifyError;
use crate::i18n::Lang;
use crate::model::{Environment, Intent, IntentId, Organization, ProbeReport, RegisterEntry};

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
    /// The client's `Idempotency-Key`, checked.
    pub idempotency_key: Option<String>,
    /// The request body as JSON text, for a wire capture (it holds no secret).
    pub body: Arc<[u8]>,
    /// The channels whose outcome is in doubt: a lane marks its own before it releases the
    /// channel, so that nothing else runs on it first.
    pub in_doubt: InDoubt,
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

/// One certification channel, by its configured name (the `device` of an organization).
pub trait Channel: Send + Sync {
    /// Its name (the intents' `device`).
    fn name(&self) -> &str;

    /// What it is, for monitoring: `"box"` (an e-MCF on a serial line) or `"web_api"` (the
    /// DGI's e-MCF web API).
    fn kind(&self) -> &'static str;

    /// A place in this channel's arrival order, taken when a request arrives: invoices reach
    /// the channel in that order. Dropping it gives the place up.
    fn arrive(&self) -> Box<dyn Waiting>;

    /// Settles `open`, this channel's intents whose outcome is not known, from what the channel
    /// says: `Ok(true)` when none is left, `Ok(false)` when the channel cannot tell yet.
    fn settle<'a>(
        &'a self,
        open: Vec<(IntentId, Intent)>,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<bool, CertifyError>>;

    /// What the channel is doing now, for `/status`, the dashboard and `/metrics`.
    fn view(&self) -> ChannelView;

    /// Why this channel could not certify now for `organizations` (those bound to it are
    /// checked), `None` when it could; `settling` when an intent of it is in doubt.
    fn problem(&self, organizations: &[Organization], settling: bool) -> Option<Problem>;

    /// The NIF the device is personalized for, as it last said (no traffic to the device);
    /// `None` until it has said.
    fn known_nif(&self) -> Option<String>;

    /// What a technician needs on first contact (`device probe`), its words in `lang`.
    fn probe(&self, lang: Lang) -> BoxFuture<'_, Result<ProbeReport, CertifyError>>;

    /// The register, given once when the service starts (a channel that needs it to tell its
    /// own requests from others keeps it).
    fn adopt(&self, _journal: Journal) {}

    /// The intents of this channel whose outcome only an administrator can settle (the
    /// channel will never tell), and why: `intent list`, the dashboard, `/metrics`.
    fn awaiting_administrator(&self) -> Vec<(IntentId, String)> {
        Vec::new()
    }

    /// An administrator settled `intent` (journaled by the caller): stop listing it.
    fn settled_by_administrator(&self, _intent: IntentId) {}

    /// Stops the channel after its current invoice.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// A place in a channel's arrival order.
pub trait Waiting: Send {
    /// Waits for exclusive use of the channel, after every earlier place. Fails at once when
    /// the channel cannot take an invoice now (503). Dropping the future costs nothing.
    fn acquire(self: Box<Self>) -> BoxFuture<'static, Result<Box<dyn Lane>, CertifyError>>;
}

/// Exclusive use of a channel for one invoice.
pub trait Lane: Send {
    /// Certifies `job` to the end, journaling through `journal`. Not to be cancelled: the
    /// caller runs it in a task of its own, and takes a panic out of it for
    /// [`RunFailure::Panicked`], the channel marked in doubt. A lane whose work runs elsewhere
    /// (the box's, inside the port's actor) catches it there, to mark the channel in doubt
    /// before the port is released.
    fn certify(
        self: Box<Self>,
        job: Job,
        journal: Journal,
    ) -> BoxFuture<'static, Result<RegisterEntry, RunFailure>>;
}

/// A shared channel.
pub type SharedChannel = Arc<dyn Channel>;
