//! The e-MCF box as a certification channel: each invoice runs as one session inside the
//! actor task that owns the port (a [`SessionJob`] shipped through a [`Lease`]). `run.rs` is the sequence of one invoice (C1h checks, commands, intent, 38h,
//! certification), `commands.rs` the mapping from a valid invoice to box commands and back,
//! `compare.rs` the 33h check, `readings.rs` the rates of C1h and the checks of `R:`,
//! `settle.rs` an unknown 38h outcome decided from C1h, `readiness.rs` whether the box could
//! certify now.

mod commands;
mod compare;
mod readiness;
mod readings;
mod run;
mod settle;

pub use commands::{check_frames, translate as box_commands};

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::certify::backend::{Channel, SharedChannel, Waiting};
use crate::certify::journal::Journal;
use crate::certify::status::{ChannelView, DgiContact, Problem};
use crate::certify::CertifyError;
use crate::device::{DeviceError, DeviceHandle, LinkStatus, PortSession, SessionJob};
use crate::model::{Intent, IntentId, Organization, ProbeReport};
use crate::msg;

/// The box behind `device` as a certification channel.
pub fn box_channel(device: DeviceHandle) -> SharedChannel {
    Arc::new(BoxChannel { device })
}

struct BoxChannel {
    device: DeviceHandle,
}

impl Channel for BoxChannel {
    fn name(&self) -> &str {
        self.device.name()
    }

    fn kind(&self) -> &'static str {
        "box"
    }

    fn arrive(&self) -> Box<dyn Waiting> {
        Box::new(run::BoxWaiting {
            device: self.device.clone(),
            turn: self.device.take_turn(),
        })
    }

    fn settle<'a>(
        &'a self,
        open: Vec<(IntentId, Intent)>,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<bool, CertifyError>> {
        Box::pin(async move {
            let lease = match self.device.lease_in_turn(self.device.take_turn()).await {
                Ok(lease) => lease,
                Err(error) => {
                    tracing::info!(%error, "device not available for reconciliation yet");
                    return Ok(false);
                }
            };
            let job = SettleOnBox {
                open,
                journal: journal.clone(),
            };
            lease.run(job).await.map_err(unavailable)?
        })
    }

    fn view(&self) -> ChannelView {
        view_of(self.device.name(), &self.device.status())
    }

    fn problem(&self, organizations: &[Organization], settling: bool) -> Option<Problem> {
        let status = self.device.status();
        readiness::problem(self.device.name(), &status, organizations, settling)
    }

    fn known_nif(&self) -> Option<String> {
        self.device.status().state.map(|state| state.nif)
    }

    fn probe(&self, lang: crate::i18n::Lang) -> BoxFuture<'_, Result<ProbeReport, CertifyError>> {
        Box::pin(async move {
            crate::device::probe::probe(&self.device, lang)
                .await
                .map_err(unavailable)
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.device.shutdown())
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

/// The open intents of the box, settled from its C1h inside the actor task.
struct SettleOnBox {
    open: Vec<(IntentId, Intent)>,
    journal: Journal,
}

impl SessionJob for SettleOnBox {
    type Output = Result<bool, CertifyError>;

    fn run(self: Box<Self>, mut session: PortSession<'_>) -> BoxFuture<'_, Self::Output> {
        Box::pin(async move {
            let SettleOnBox { open, journal } = *self;
            settle::settle_all(&mut session, open, &journal).await
        })
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
        DeviceError::JobAborted => msg!("reason-job-aborted"),
    };
    CertifyError::DeviceUnavailable {
        reason,
        retry_after,
    }
}
