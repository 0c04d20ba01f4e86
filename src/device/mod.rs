//! The device link: one actor task per device owns its port (DESIGN.md §2-4, §9).
//!
//! # Actor and handle
//! [`spawn`] starts the actor on the current tokio runtime and returns a [`DeviceHandle`]
//! (cheap to clone). The actor opens the port ([`DeviceConfig::path`], 8N1, exclusive) and,
//! after every open, sends one throwaway C2h and ignores its reply (PROTOCOL.md §3.2: a
//! restarted host must not get a replay of the device's last reply). Only when that C2h is
//! answered is the link *connected* ([`LinkStatus`]). While the port is absent, after an I/O
//! error, a read of 0 bytes (USB unplugged, pty closed) or a command left unanswered, the
//! actor closes the port and reopens it with an exponential backoff
//! ([`LinkTiming::reconnect_min`]..[`LinkTiming::reconnect_max`]); it never spins. While idle
//! it keeps reading the port, so a vanished device shows up in [`DeviceHandle::status`] at
//! once (bytes read then are stale and dropped).
//!
//! # Sessions
//! [`DeviceHandle::acquire`] queues a request on a bounded queue and resolves to a
//! [`Session`]: exclusive use of the device until the `Session` is dropped, so the commands
//! of one invoice are never interleaved with another's. Requests are served in order of
//! arrival: [`DeviceHandle::take_turn`] when a request arrives, and
//! [`DeviceHandle::acquire_in_turn`] enters the queue after every earlier turn (`arrivals.rs`). The
//! queue is not a waiting room for a dead link: `acquire` fails at once with
//! [`DeviceError::Unavailable`] while disconnected and with [`DeviceError::QueueFull`] when
//! full. A caller that gives up while queued costs nothing (its grant is skipped).
//! A `Session` sends each command to the actor, which runs it to the end even if the caller
//! stops waiting; so a session dropped mid-command leaves the link in a clean state. SEQ
//! continues across sessions and reopens. If the link drops during a session, the next
//! command of that session makes one reconnection attempt within its budget, else it fails
//! with [`DeviceError::Disconnected`].
//!
//! # Host rules (PROTOCOL.md §3.3, implemented in `transport.rs`)
//! New SEQ per command; stale input discarded before sending; 3 tries of one window each
//! (500 ms, restarted by every SYN); NAK = resend the same bytes at once; a reply counts only
//! with the request's SEQ and CMD (others are stale and ignored); bad frames are ignored; a
//! partial frame with no byte for 100 ms, or still partial at the end of a window, loses its
//! SOH and the bytes behind it are decoded again (§2.3). The whole command is bounded by
//! [`LinkTiming::command_budget`].
//!
//! # Finalization (38h with totals, §3.3-3.4, `actor/session.rs`)
//! [`Session::finalize`] has its own budget (sales [`LinkTiming::finalize_budget`], credit
//! notes [`LinkTiming::credit_note_budget`]) counted from the first 38h and covering every
//! `P:` poll. After the 3rd window it never resends: it keeps listening until the budget
//! ends. `P:` = wait [`LinkTiming::poll_interval`] and send 38h again with a **new** SEQ.
//! `R:` = certified; `E:` = refused only for a 38h sent once and never answered `P:`.
//! Everything else once a 38h was written (timeout, disconnect, a later `E:`, an empty or
//! unreadable reply) is [`DeviceError::OutcomeUnknown`]: reconcile with C1h (§6.3).
//!
//! Logs carry the device name, the command byte and SEQ, never DATA (invoice contents).

mod actor;
mod arrivals;
mod error;
mod port;
mod transport;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use mcf_sfe::command::FinalizeTotals;
use mcf_sfe::reply::Certification;
use mcf_sfe::{Command, Reply, Status};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use arrivals::Turn;
pub use error::DeviceError;

/// Default length of a device's queue of sessions.
pub const DEFAULT_QUEUE_CAPACITY: usize = 32;

/// One device and how to talk to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConfig {
    /// Name used in configuration, logs and errors.
    pub name: String,
    /// The port, e.g. `/dev/serial/by-id/...` or a simulator's pty.
    pub path: PathBuf,
    /// Baud rate (8N1, no flow control).
    pub baud: u32,
    /// Timeouts, tries and budgets.
    pub timing: LinkTiming,
    /// How many sessions may wait for the device (at least 1).
    pub queue_capacity: usize,
}

impl DeviceConfig {
    /// A device at `path` with the default baud (115200), timing and queue.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        DeviceConfig {
            name: name.into(),
            path: path.into(),
            baud: 115_200,
            timing: LinkTiming::default(),
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
        }
    }
}

/// Link timing (PROTOCOL.md §3.3). The defaults are the protocol's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// Wait for a reply or SYN after each transmission; every SYN restarts it.
    pub window: Duration,
    /// Transmissions per command (same SEQ).
    pub tries: u32,
    /// Whole budget of one ordinary command (38h `C` included).
    pub command_budget: Duration,
    /// Budget of 38h with totals for FV FT EV ET, `P:` polls included.
    pub finalize_budget: Duration,
    /// Budget of 38h with totals for FA EA, `P:` polls included.
    pub credit_note_budget: Duration,
    /// Wait after a `P:` before polling with a new SEQ.
    pub poll_interval: Duration,
    /// First wait before reopening the port.
    pub reconnect_min: Duration,
    /// Longest wait before reopening the port.
    pub reconnect_max: Duration,
}

impl Default for LinkTiming {
    fn default() -> Self {
        LinkTiming {
            window: Duration::from_millis(500),
            tries: 3,
            command_budget: Duration::from_secs(5),
            finalize_budget: Duration::from_secs(15),
            credit_note_budget: Duration::from_secs(90),
            poll_interval: Duration::from_millis(500),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
        }
    }
}

impl LinkTiming {
    /// The longest single budget (finalize, credit note or command): an HTTP request timeout
    /// must exceed it.
    pub fn longest_budget(&self) -> Duration {
        self.credit_note_budget
            .max(self.finalize_budget)
            .max(self.command_budget)
    }
}

/// The link as the dashboard and `/status` see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkStatus {
    /// The port is open and the device answered (the throwaway C2h, then every command).
    pub connected: bool,
    /// When `connected` last changed (or the actor started).
    pub since: DateTime<Utc>,
    /// The last link error (kept after a reconnect, for diagnosis).
    pub last_error: Option<String>,
    /// When the device last sent a valid reply.
    pub last_reply_at: Option<DateTime<Utc>>,
    /// The device's link with the DGI server (C2h: invoices sent and stored, last contact,
    /// state), as last read: at each connection and whenever a session sends C2h.
    pub dgi: Option<mcf_sfe::reply::LinkState>,
    /// Sessions waiting in the queue (not counting the one being served).
    pub queued: usize,
}

/// How a finalization (38h with totals) ended, when the device settled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalizeOutcome {
    /// `R:`: certified, with the security elements.
    Certified(Certification),
    /// `E:` to a 38h sent once and never answered `P:`: refused, nothing certified.
    Refused(String),
}

/// A request for the port, waiting in the queue.
struct Grant {
    reply: oneshot::Sender<Result<Session, DeviceError>>,
}

/// One command of a session, for the actor.
enum Request {
    Execute {
        command: Command,
        reply: oneshot::Sender<Result<(Reply, Status), DeviceError>>,
    },
    Finalize {
        totals: FinalizeTotals,
        credit_note: bool,
        reply: oneshot::Sender<Result<FinalizeOutcome, DeviceError>>,
    },
}

/// Starts the device's actor on the current tokio runtime (panics outside one, like
/// `tokio::spawn`). The actor opens the port in the background: the handle's status shows
/// when the link is up.
pub fn spawn(config: DeviceConfig) -> DeviceHandle {
    let connector = port::SerialConnector::new(config.path.clone(), config.baud);
    actor::spawn(config, connector)
}

/// The way to one device's actor. Cheap to clone; the actor stops when every handle is
/// dropped (after the current session) or on [`DeviceHandle::shutdown`].
#[derive(Clone, Debug)]
pub struct DeviceHandle {
    name: Arc<str>,
    grants: mpsc::Sender<Grant>,
    status: watch::Receiver<LinkStatus>,
    stop: CancellationToken,
    arrivals: Arc<arrivals::Arrivals>,
}

impl DeviceHandle {
    /// The device's configured name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The link's state now.
    pub fn status(&self) -> LinkStatus {
        let mut status = self.status.borrow().clone();
        status.queued = self.grants.max_capacity() - self.grants.capacity();
        status
    }

    /// Waits for exclusive use of the device. Fails at once when the link is down
    /// (`Unavailable`), the queue is full (`QueueFull`) or the actor stops (`ShuttingDown`).
    /// Dropping the returned future while queued gives the place up at no cost.
    pub async fn acquire(&self) -> Result<Session, DeviceError> {
        self.acquire_in_turn(self.take_turn()).await
    }

    /// A place in this device's arrival order, taken when a request arrives; pass it to
    /// [`DeviceHandle::acquire_in_turn`] once the request is ready for the device.
    pub fn take_turn(&self) -> Turn {
        self.arrivals.take()
    }

    /// [`DeviceHandle::acquire`], entering the queue only after every turn taken before
    /// `turn` has entered it or been given up (see [`Turn`]).
    pub async fn acquire_in_turn(&self, turn: Turn) -> Result<Session, DeviceError> {
        if self.stop.is_cancelled() {
            return Err(DeviceError::ShuttingDown);
        }
        {
            let status = self.status.borrow();
            if !status.connected {
                let why = status.last_error.as_deref().unwrap_or("not connected yet");
                return Err(DeviceError::Unavailable(format!(
                    "device {}: {why}",
                    self.name
                )));
            }
        }
        let asked = std::time::Instant::now();
        turn.wait().await;
        let (reply, granted) = oneshot::channel();
        self.grants
            .try_send(Grant { reply })
            .map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => DeviceError::QueueFull,
                mpsc::error::TrySendError::Closed(_) => DeviceError::ShuttingDown,
            })?;
        turn.finish();
        let session = granted.await.unwrap_or(Err(DeviceError::ShuttingDown));
        crate::metrics::queue_wait(&self.name, asked.elapsed());
        session
    }

    /// Stops the actor after the current session (if any) and closes the port; returns when
    /// it is done. Queued and later `acquire` calls get `ShuttingDown`. Do not call it while
    /// holding a `Session` of this device in the same task: it waits for that session.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let mut status = self.status.clone();
        // The actor owns the sender: `changed` fails once the actor has ended.
        while status.changed().await.is_ok() {}
    }
}

/// Exclusive use of the device until dropped. Commands run one at a time.
#[derive(Debug)]
pub struct Session {
    name: Arc<str>,
    requests: mpsc::Sender<Request>,
    last_status: Option<Status>,
}

impl Session {
    /// The device's name.
    pub fn device(&self) -> &str {
        &self.name
    }

    /// Runs one command (any but 38h with totals, which goes through
    /// [`Session::finalize`]; 38h `C` goes here) within [`LinkTiming::command_budget`].
    /// A device refusal is `Ok(Reply::Refused(text))`.
    pub async fn execute(&mut self, command: Command) -> Result<Reply, DeviceError> {
        let (reply, answer) = oneshot::channel();
        let (reply, status) = self
            .request(Request::Execute { command, reply }, answer)
            .await?;
        self.last_status = Some(status);
        Ok(reply)
    }

    /// The status bytes of the last reply [`Session::execute`] returned (opaque beyond the
    /// bits PROTOCOL.md documents), `None` before the first.
    pub fn last_status(&self) -> Option<Status> {
        self.last_status
    }

    /// 38h with `totals` (those of the 33h reply), polling on `P:`. `credit_note` (FA, EA)
    /// selects the long budget. See the module documentation for what each outcome means.
    pub async fn finalize(
        &mut self,
        totals: FinalizeTotals,
        credit_note: bool,
    ) -> Result<FinalizeOutcome, DeviceError> {
        let (reply, answer) = oneshot::channel();
        let request = Request::Finalize {
            totals,
            credit_note,
            reply,
        };
        self.request(request, answer).await
    }

    async fn request<T>(
        &mut self,
        request: Request,
        answer: oneshot::Receiver<Result<T, DeviceError>>,
    ) -> Result<T, DeviceError> {
        self.requests
            .send(request)
            .await
            .map_err(|_| DeviceError::ShuttingDown)?;
        answer.await.unwrap_or(Err(DeviceError::ShuttingDown))
    }
}
