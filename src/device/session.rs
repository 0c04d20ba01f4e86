//! Exclusive use of the device for one whole invoice: a [`Session`].
//!
//! A [`PortSession`] runs where the port is owned. [`DeviceHandle::lease_in_turn`] reserves the port
//! and a [`Lease`] ships a [`SessionJob`] into the actor task, which runs it on the port
//! itself: each command is one call, with no hop between tasks (docs/performance.md, "line
//! efficiency"). The job runs to its end even if whoever shipped it stops waiting.
//! [`DeviceHandle::acquire`] gives a session whose commands are sent to the actor one by one
//! (`device probe`, the device's own tests): the same methods, one task hop per command.
//!
//! [`DeviceHandle::lease_in_turn`]: super::DeviceHandle::lease_in_turn
//! [`DeviceHandle::acquire`]: super::DeviceHandle::acquire

use std::sync::Arc;

use futures::future::BoxFuture;
use mcf_sfe::command::FinalizeTotals;
use mcf_sfe::reply::Anomaly;
use mcf_sfe::{Command, Reply, Status, StatusFlag};
use rust_decimal::Decimal;
use tokio::sync::{mpsc, oneshot};

use super::{DeviceError, FinalizeOutcome, StatusMap, WireSettings};

/// A session run from another task (its commands go to the actor one by one).
pub type Session = PortSession<'static>;

/// What the actor offers a session that runs inside it: the port's commands.
pub(super) trait Port: Send {
    /// One command (not 38h with totals) within its budget.
    fn execute(&mut self, command: Command) -> BoxFuture<'_, Result<(Reply, Status), DeviceError>>;
    /// 38h with totals, polling on `P:`.
    fn finalize(
        &mut self,
        totals: FinalizeTotals,
        credit_note: bool,
    ) -> BoxFuture<'_, Result<FinalizeOutcome, DeviceError>>;
    /// Counts and logs an anomaly the caller found.
    fn note(&mut self, cmd: u8, anomaly: Anomaly);
    /// A comment for the wire capture.
    fn annotate(&mut self, text: String);
}

/// One command of a session run from another task, for the actor.
pub(super) enum Request {
    Execute {
        command: Command,
        reply: oneshot::Sender<Result<(Reply, Status), DeviceError>>,
    },
    Finalize {
        totals: FinalizeTotals,
        credit_note: bool,
        reply: oneshot::Sender<Result<FinalizeOutcome, DeviceError>>,
    },
    /// Something odd in a reply that only the caller could judge (an R: whose counters do not
    /// follow C1h's, an MCUR other than the invoice's): counted and logged like the reader's.
    Note { cmd: u8, anomaly: Anomaly },
    /// A comment for the wire capture, if one is written (nothing otherwise).
    Annotate(String),
}

/// Where a session's commands go.
enum Route<'a> {
    /// Inside the actor task: straight to the port.
    Local(&'a mut dyn Port),
    /// From another task: to the actor, one message per command.
    Remote(mpsc::Sender<Request>),
}

/// What a session knows of its device, whatever its route.
#[derive(Debug, Clone)]
pub(super) struct SessionInfo {
    pub name: Arc<str>,
    pub wire: WireSettings,
    pub fallback_rates: [Option<Decimal>; 16],
    pub capturing: bool,
}

/// Exclusive use of the device until dropped (or until its job ends). Commands run one at a
/// time. `'a` is the borrow of the actor for a session run inside it; [`Session`] is one run
/// from another task.
pub struct PortSession<'a> {
    info: SessionInfo,
    route: Route<'a>,
    last_status: Option<Status>,
}

impl std::fmt::Debug for PortSession<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let route = match self.route {
            Route::Local(_) => "in the actor",
            Route::Remote(_) => "from another task",
        };
        f.debug_struct("Session")
            .field("device", &self.info.name)
            .field("route", &route)
            .finish()
    }
}

impl<'a> PortSession<'a> {
    pub(super) fn local(info: SessionInfo, port: &'a mut dyn Port) -> PortSession<'a> {
        PortSession {
            info,
            route: Route::Local(port),
            last_status: None,
        }
    }

    pub(super) fn remote(info: SessionInfo, requests: mpsc::Sender<Request>) -> Session {
        PortSession {
            info,
            route: Route::Remote(requests),
            last_status: None,
        }
    }

    /// The device's name.
    pub fn device(&self) -> &str {
        &self.info.name
    }

    /// Runs one command (any but 38h with totals, which goes through
    /// [`PortSession::finalize`]; 38h `C` goes here) within its budget. A device refusal is
    /// `Ok(Reply::Refused(text))`.
    pub async fn execute(&mut self, command: Command) -> Result<Reply, DeviceError> {
        let (reply, status) = match &mut self.route {
            Route::Local(port) => port.execute(command).await?,
            Route::Remote(requests) => {
                let (reply, answer) = oneshot::channel();
                request(requests, Request::Execute { command, reply }, answer).await?
            }
        };
        self.last_status = Some(status);
        Ok(reply)
    }

    /// 38h with `totals` (those of the 33h reply), polling on `P:`. `credit_note` (FA, EA)
    /// selects the long budget. See the module documentation of `device` for what each
    /// outcome means.
    pub async fn finalize(
        &mut self,
        totals: FinalizeTotals,
        credit_note: bool,
    ) -> Result<FinalizeOutcome, DeviceError> {
        match &mut self.route {
            Route::Local(port) => port.finalize(totals, credit_note).await,
            Route::Remote(requests) => {
                let (reply, answer) = oneshot::channel();
                let message = Request::Finalize {
                    totals,
                    credit_note,
                    reply,
                };
                request(requests, message, answer).await
            }
        }
    }

    /// Whether the last reply says an invoice is open on the box: `None` when this box's
    /// status bytes are not read ([`StatusMap::Ignored`]) or before the first reply.
    pub fn invoice_open(&self) -> Option<bool> {
        match self.info.wire.status_map {
            StatusMap::Simulator => self
                .last_status
                .map(|status| status.has(StatusFlag::InvoiceOpen)),
            StatusMap::Ignored => None,
        }
    }

    /// The VAT rates to use when the box's C1h carries none (configured per device).
    pub fn fallback_rates(&self) -> &[Option<Decimal>; 16] {
        &self.info.fallback_rates
    }

    /// Reports something odd in the reply to `cmd` that the reader could not judge alone:
    /// logged once per device, command and field, counted in `/metrics`, listed in the
    /// status. Never fails.
    pub async fn report_anomaly(&mut self, cmd: u8, anomaly: Anomaly) {
        match &mut self.route {
            Route::Local(port) => port.note(cmd, anomaly),
            Route::Remote(requests) => {
                let _ = requests.send(Request::Note { cmd, anomaly }).await;
            }
        }
    }

    /// Whether this device's traffic is written to a wire capture.
    pub fn capturing(&self) -> bool {
        self.info.capturing
    }

    /// Writes `text` as a comment line of the wire capture, if one is written, prefixed with
    /// the device's name: `# <device> <text>`. Never fails.
    pub async fn annotate_capture(&mut self, text: String) {
        match &mut self.route {
            Route::Local(port) => port.annotate(text),
            Route::Remote(requests) => {
                let _ = requests.send(Request::Annotate(text)).await;
            }
        }
    }
}

async fn request<T>(
    requests: &mpsc::Sender<Request>,
    request: Request,
    answer: oneshot::Receiver<Result<T, DeviceError>>,
) -> Result<T, DeviceError> {
    requests
        .send(request)
        .await
        .map_err(|_| DeviceError::ShuttingDown)?;
    // Sent, never answered: the actor stopped under it, and a 38h may have left.
    answer.await.unwrap_or(Err(DeviceError::JobAborted))
}

/// Work that runs on the port as one session, inside the actor task.
pub trait SessionJob: Send + 'static {
    /// What it answers.
    type Output: Send + 'static;
    /// Runs on `session`; the session ends when the returned future does.
    fn run(self: Box<Self>, session: PortSession<'_>) -> BoxFuture<'_, Self::Output>;
}

/// A job with the way back to whoever shipped it, its type erased for the actor.
pub(super) trait ShippedJob: Send {
    fn run(self: Box<Self>, session: PortSession<'_>) -> BoxFuture<'_, ()>;
}

struct WithAnswer<J: SessionJob> {
    job: Box<J>,
    answer: oneshot::Sender<J::Output>,
}

impl<J: SessionJob> ShippedJob for WithAnswer<J> {
    fn run(self: Box<Self>, session: PortSession<'_>) -> BoxFuture<'_, ()> {
        let WithAnswer { job, answer } = *self;
        Box::pin(async move {
            let output = job.run(session).await;
            let _ = answer.send(output);
        })
    }
}

/// The port, reserved for one job: ship it with [`Lease::run`]. Dropping the lease unused
/// gives the port back.
#[derive(Debug)]
pub struct Lease {
    pub(super) jobs: oneshot::Sender<Box<dyn ShippedJob>>,
}

impl std::fmt::Debug for dyn ShippedJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShippedJob")
    }
}

impl Lease {
    /// Runs `job` on the port inside the actor task and returns what it answers. The job runs
    /// to its end even if this future is dropped. `ShuttingDown`: the actor stopped before the
    /// job reached it (nothing ran); `JobAborted`: the job started and ended without an answer
    /// (it panicked, or the actor stopped under it), so what it did is not known.
    pub async fn run<J: SessionJob>(self, job: J) -> Result<J::Output, DeviceError> {
        let (answer, answered) = oneshot::channel();
        let shipped: Box<dyn ShippedJob> = Box::new(WithAnswer {
            job: Box::new(job),
            answer,
        });
        self.jobs
            .send(shipped)
            .map_err(|_| DeviceError::ShuttingDown)?;
        answered.await.map_err(|_| DeviceError::JobAborted)
    }
}
