//! The e-MCF box as a certification channel: each invoice runs as one session on the
//! port leased from the device's actor (a [`Lease`](crate::device::Lease)), commands sent
//! straight on it. `run.rs` is the sequence of one invoice (C1h checks, commands, intent, 38h,
//! certification), `commands.rs` the mapping from a valid invoice to box commands and back,
//! `compare.rs` the 33h check, `readings.rs` the rates of C1h and the checks of `R:`,
//! `settle_from_c1h.rs` an unknown 38h outcome decided from C1h, `readiness.rs` whether the box could
//! certify now.

mod commands;
mod compare;
mod readiness;
mod readings;
mod run;
mod settle_from_c1h;

pub use commands::{check_frames, translate as box_commands};

use std::sync::Arc;

pub use run::{BoxLane, BoxWaiting};

use crate::certify::channel::{Channel, SharedChannel};
use crate::certify::register_writer::RegisterWriter;
use crate::certify::status::{ChannelView, DgiContact, Problem};
use crate::certify::CertifyError;
use crate::device::{DeviceError, DeviceHandle, LinkStatus};
use crate::i18n::Lang;
use crate::model::{Intent, IntentId, Organization, ProbeReport};
use crate::msg;

/// The box behind `device` as a certification channel.
pub fn new_box_channel(device: DeviceHandle) -> SharedChannel {
    Arc::new(Channel::Box(BoxChannel { device }))
}

/// An e-MCF box on its serial line, through the actor that owns its port.
pub struct BoxChannel {
    device: DeviceHandle,
}

impl BoxChannel {
    pub(crate) fn name(&self) -> &str {
        self.device.name()
    }

    /// A place in the box's queue, in arrival order.
    pub(crate) fn arrive(&self) -> BoxWaiting {
        BoxWaiting {
            device: self.device.clone(),
            turn: self.device.take_turn(),
        }
    }

    /// The open intents of the box, settled from its C1h on the leased port (in a task of
    /// its own: it runs to its end even if the caller stops waiting).
    pub(crate) async fn settle(
        &self,
        open: Vec<(IntentId, Intent)>,
        journal: &RegisterWriter,
    ) -> Result<bool, CertifyError> {
        let lease = match self.device.lease_in_turn(self.device.take_turn()).await {
            Ok(lease) => lease,
            Err(error) => {
                tracing::info!(%error, "device not available for reconciliation yet");
                return Ok(false);
            }
        };
        let journal = journal.clone();
        let settling = tokio::spawn(async move {
            let mut lease = lease;
            settle_from_c1h::settle_all(&mut lease.session(), open, &journal).await
        });
        match settling.await {
            Ok(settled) => settled,
            // A bug that panicked on the port: nothing is concluded, the next round asks again.
            Err(error) => {
                tracing::error!(%error, "settling the box ended without an answer");
                Ok(false)
            }
        }
    }

    pub(crate) fn view(&self) -> ChannelView {
        view_of(self.device.name(), &self.device.status())
    }

    pub(crate) fn problem(
        &self,
        organizations: &[Organization],
        settling: bool,
    ) -> Option<Problem> {
        let status = self.device.status();
        readiness::problem(self.device.name(), &status, organizations, settling)
    }

    pub(crate) fn known_nif(&self) -> Option<String> {
        self.device.status().state.map(|state| state.nif)
    }

    /// The NIM, NIF and TC of the box's last C1h, as its actor read it.
    pub(crate) fn last_counters(&self) -> Option<crate::certify::register_behind::BoxState> {
        self.device
            .status()
            .state
            .map(|state| crate::certify::register_behind::BoxState {
                last: readings::last_invoice(state.tc, &state.last),
                nim: state.mid,
                nif: state.nif,
                tc: state.tc,
            })
    }

    /// `device probe` on the leased port, after every earlier arrival.
    pub(crate) async fn probe(&self, lang: Lang) -> Result<ProbeReport, CertifyError> {
        crate::device::probe::probe(&self.device, lang)
            .await
            .map_err(unavailable)
    }

    pub(crate) async fn shutdown(&self) {
        self.device.shutdown().await
    }
}

/// What the dashboard and `/metrics` show of a box's link.
fn view_of(name: &str, status: &LinkStatus) -> ChannelView {
    ChannelView {
        name: name.to_owned(),
        connected: status.connected,
        since: status.since,
        last_error: status.last_error.clone(),
        last_reply_at: status.last_reply_at,
        queued: status.queued,
        dgi: status.dgi.as_ref().map(|dgi| DgiContact {
            last_contact: dgi.last_contact,
            state: dgi.state.clone(),
            sent: dgi.sent,
            stored: dgi.stored,
            error: dgi.error.clone(),
        }),
        token_valid: None,
        pending: None,
    }
}

/// What a link failure means for the client: 503 with the device's own retry delay; a box
/// whose state cannot be read is not ready (154).
fn unavailable(error: DeviceError) -> CertifyError {
    let retry_after = error.retry_after();
    let command_of = mcf_sfe::command::code::name;
    let reason = match error {
        DeviceError::QueueFull => return CertifyError::QueueFull { retry_after },
        DeviceError::UnreadableState { reason, .. } => {
            return CertifyError::DeviceNotReady {
                reason: msg!("reason-state-unreadable", detail = reason),
            }
        }
        DeviceError::Unavailable(detail) => msg!("reason-link-down", detail = detail),
        DeviceError::NoAnswer { command } => {
            msg!("reason-no-answer", command = command_of(command))
        }
        DeviceError::Disconnected => msg!("reason-disconnected"),
        DeviceError::OutcomeUnknown => msg!("reason-outcome-unknown"),
        DeviceError::BadReply { command, reason } => msg!(
            "reason-bad-reply",
            command = command_of(command),
            detail = reason
        ),
        DeviceError::Encode(field_error) => {
            msg!("reason-not-sent", detail = field_error.to_string())
        }
        DeviceError::ShuttingDown => msg!("reason-stopping"),
    };
    CertifyError::DeviceUnavailable {
        reason,
        retry_after,
    }
}
