//! The e-MCF box as a certification channel: one [`Session`] over the device link per
//! invoice. `run.rs` is the sequence of one invoice (C1h checks, commands, intent, 38h,
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

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tracing::error;

use crate::certify::backend::{Channel, Job, Lane, RunFailure, SharedChannel, Waiting};
use crate::certify::journal::Journal;
use crate::certify::status::{ChannelView, DgiContact, Problem};
use crate::certify::CertifyError;
use crate::device::{DeviceError, DeviceHandle, LinkStatus, Session, Turn};
use crate::model::{Intent, IntentId, Organization, ProbeReport, RegisterEntry};

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

    fn arrive(&self) -> Box<dyn Waiting> {
        Box::new(BoxWaiting {
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
            let mut session = match self.device.acquire().await {
                Ok(session) => session,
                Err(error) => {
                    tracing::info!(%error, "device not available for reconciliation yet");
                    return Ok(false);
                }
            };
            settle::settle_all(&mut session, open, journal).await
        })
    }

    fn view(&self) -> ChannelView {
        view_of(self.device.name(), &self.device.status())
    }

    fn problem(&self, organizations: &[Organization], settling: bool) -> Option<Problem> {
        let status = self.device.status();
        readiness::problem(self.device.name(), &status, organizations, settling)
    }

    fn probe(&self) -> BoxFuture<'_, Result<ProbeReport, CertifyError>> {
        Box::pin(async move {
            crate::device::probe::probe(&self.device)
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
    }
}

/// A place in the box's arrival order.
struct BoxWaiting {
    device: DeviceHandle,
    turn: Turn,
}

impl Waiting for BoxWaiting {
    fn acquire(self: Box<Self>) -> BoxFuture<'static, Result<Box<dyn Lane>, CertifyError>> {
        Box::pin(async move {
            let BoxWaiting { device, turn } = *self;
            let session = device.acquire_in_turn(turn).await.map_err(unavailable)?;
            Ok(Box::new(BoxLane { session }) as Box<dyn Lane>)
        })
    }
}

/// The box's port, held for one invoice.
struct BoxLane {
    session: Session,
}

impl Lane for BoxLane {
    fn certify(
        self: Box<Self>,
        job: Job,
        journal: Journal,
    ) -> BoxFuture<'static, Result<RegisterEntry, RunFailure>> {
        Box::pin(async move {
            let mut session = self.session;
            let device = session.device().to_owned();
            // The request beside the bytes it became, in the wire capture if one is written: a
            // capture that can be replayed as a regression test (tests/captures.rs).
            if session.capturing() {
                if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&job.body) {
                    session.annotate_capture(format!("invoice {value}")).await;
                }
            }
            let run = run::Run {
                job: &job,
                journal: &journal,
                device: &device,
            };
            // A bug that panics mid-invoice must not leave an intent behind unnoticed: the
            // device is then treated as in doubt until reconciliation finds nothing open.
            let outcome = AssertUnwindSafe(run::run_invoice(&mut session, &run))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    error!("the certification panicked: settling the device before it takes another invoice");
                    Err(RunFailure::Panicked)
                });
            if matches!(outcome, Err(RunFailure::InDoubt(_) | RunFailure::Panicked)) {
                // Marked before the port is released, so that nothing else runs first.
                job.in_doubt.mark(&device);
            }
            drop(session);
            outcome
        })
    }
}

/// What a link failure means for the client: 503 with the device's own retry delay; a box
/// whose state cannot be read is not ready (154).
fn unavailable(error: DeviceError) -> CertifyError {
    let retry_after = error.retry_after();
    match error {
        DeviceError::QueueFull => CertifyError::QueueFull { retry_after },
        DeviceError::UnreadableState { .. } => CertifyError::DeviceNotReady {
            reason: error.to_string(),
        },
        other => CertifyError::DeviceUnavailable {
            reason: other.to_string(),
            retry_after,
        },
    }
}
