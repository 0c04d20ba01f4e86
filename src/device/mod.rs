//! The device link: one actor task per device owns its port.
//!
//! # Actor and handle
//! [`spawn`] starts the actor on the current tokio runtime and returns a [`DeviceHandle`]
//! (cheap to clone). The actor opens the port ([`DeviceConfig::path`], 8N1, exclusive) and,
//! after every open, sends one throwaway C2h and ignores its reply (PROTOCOL.md §3.2: a
//! restarted host must not get a replay of the device's last reply). Once that C2h is
//! answered the link is *connected* ([`LinkStatus`]) and reads C1h (a box that answers C2h
//! but not C1h is not a usable link: the port is closed again); it reads C1h again every
//! [`DeviceConfig::health_interval`] while idle, so that the status says what the box says
//! now ([`LinkStatus::state`], [`LinkStatus::blocked`]). While the port is absent, after an
//! I/O error, a read of 0 bytes (USB unplugged, pty closed) or a command left unanswered, the
//! actor closes the port and reopens it with an exponential backoff
//! ([`LinkTiming::reconnect_min`]..[`LinkTiming::reconnect_max`]); it never spins. While idle
//! it keeps reading the port, so a vanished device shows up in [`DeviceHandle::status`] at
//! once (bytes read then are stale and dropped).
//!
//! # Leases
//! The port serves one holder at a time, so the commands of one invoice are never
//! interleaved with another's. [`DeviceHandle::lease_in_turn`] queues a request on a bounded
//! queue and resolves to a [`Lease`]: the port itself, taken from the actor until the lease
//! is dropped. Its holder runs a [`PortSession`] on it in its own task (an invoice, a
//! settling, `device probe`): each command a call on the port, with no task hop
//! (`session.rs`). Requests are served in order of arrival: [`DeviceHandle::take_turn`] when a
//! request arrives, and [`DeviceHandle::lease_in_turn`] enters the queue after every earlier
//! turn (`arrivals.rs`). The queue is not a waiting room for a dead link: it fails at once
//! with [`DeviceError::Unavailable`] while disconnected and with [`DeviceError::QueueFull`]
//! when full. A caller that gives up while queued costs nothing (its grant is skipped). SEQ
//! continues across leases and reopens, within [`WireSettings::seq`]. If the link drops
//! during a lease, the next command makes one reconnection attempt within its budget, else
//! it fails with [`DeviceError::Disconnected`].
//!
//! # Host rules (PROTOCOL.md §3.3, implemented in `transport.rs`)
//! New SEQ per command; stale input discarded before sending; up to [`LinkTiming::tries`]
//! transmissions, each followed by a window of silence ([`LinkTiming::window`], restarted by
//! every SYN); NAK = send the same bytes again at once. After a silent window the same frame
//! goes again only when that is harmless: read-only commands and 38h `C` always, commands
//! that change the invoice only on a box that replays a repeated SEQ
//! ([`WireSettings::seq_replay`]; otherwise the gateway keeps listening until the budget). A
//! reply counts only with the request's SEQ and CMD (others are stale and ignored); bad frames
//! are ignored; a partial frame with no byte for 100 ms, or still partial at the end of a
//! window, loses its SOH and the bytes behind it are decoded again (§2.3). The whole command
//! is bounded by [`LinkTiming::command_budget`].
//!
//! # Replies (`actor/reply.rs`)
//! Every reply is read tolerantly with the box's dialect ([`WireSettings`]): what differs from
//! PROTOCOL.md in fields the gateway does not need is logged once per device, command and
//! field at `warn`, counted in `/metrics` and kept in [`LinkStatus::oddities`].
//!
//! # Finalization (38h with totals, §3.3-3.4, `actor/commands.rs`)
//! [`PortSession::finalize`] has its own budget (sales [`LinkTiming::finalize_budget`], credit
//! notes [`LinkTiming::credit_note_budget`]) counted from the first 38h and covering every
//! `P:` poll. It is sent again only after a NAK, never after silence (a box may work silently
//! for 25 s on a credit note): it keeps listening until the budget ends. `P:` = wait
//! [`LinkTiming::poll_interval`] and send 38h again with a **new** SEQ. `R:` = certified;
//! `E:` = refused only for a 38h sent once and never answered `P:`. Everything else once a 38h
//! was written (timeout, disconnect, a later `E:`, an empty or unreadable reply) is
//! [`DeviceError::OutcomeUnknown`]: reconcile with C1h (§6.3).
//!
//! Logs carry the device name, the command byte and SEQ, never DATA (invoice contents); the
//! wire capture ([`capture`]), when asked for, has every byte.

mod actor;

pub mod capture;
mod config;
mod error;
mod port;
pub mod probe;
mod session;
mod status;
mod transport;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use mcf_sfe::reply::Certification;

use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use crate::arrivals::Turn;
pub use config::{
    DeviceConfig, LinkTiming, StatusMap, WireSettings, DEFAULT_HEALTH_INTERVAL,
    DEFAULT_QUEUE_CAPACITY,
};
pub use error::DeviceError;
pub use port::try_open;
pub use session::{Lease, PortSession};
pub use status::LinkStatus;

/// How a finalization (38h with totals) ended, when the device settled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalizeOutcome {
    /// `R:`: certified, with the security elements.
    Certified(Certification),
    /// `E:` to a 38h sent once and never answered `P:`: refused, nothing certified.
    Refused(String),
}

/// A request for the port, waiting in the queue: answered with a [`Lease`].
struct Grant {
    reply: oneshot::Sender<Result<Lease, DeviceError>>,
}

impl Grant {
    /// Gives `port` to whoever asked, unless they left the queue (then the port is given
    /// back at once).
    fn give(self, port: tokio::sync::OwnedMutexGuard<actor::Port>) {
        if self.reply.is_closed() {
            tracing::debug!("the caller left the queue: grant skipped");
            return;
        }
        if self.reply.send(Ok(Lease { port })).is_ok() {
            tracing::debug!("port leased");
        }
    }

    /// Turns the request away.
    fn refuse(self, error: DeviceError) {
        drop(self.reply.send(Err(error)));
    }
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
    arrivals: Arc<crate::arrivals::Arrivals>,
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

    /// The port leased, after every request that arrived before. Fails at once when the link
    /// is down (`Unavailable`), the queue is full (`QueueFull`) or the actor stops
    /// (`ShuttingDown`). Dropping the returned future while queued gives the place up at no
    /// cost.
    pub async fn lease(&self) -> Result<Lease, DeviceError> {
        self.lease_in_turn(self.take_turn()).await
    }

    /// A place in this device's arrival order, taken when a request arrives; pass it to
    /// [`DeviceHandle::lease_in_turn`] once the request is ready for the device.
    pub fn take_turn(&self) -> Turn {
        self.arrivals.take()
    }

    /// The port leased, entering the queue only after every turn taken before `turn` has
    /// entered it or been given up (see [`Turn`]). Fails like [`DeviceHandle::lease`].
    pub async fn lease_in_turn(&self, turn: Turn) -> Result<Lease, DeviceError> {
        let (reply, granted) = oneshot::channel();
        self.enqueue(turn, Grant { reply }, granted).await
    }

    async fn enqueue(
        &self,
        turn: Turn,
        grant: Grant,
        granted: oneshot::Receiver<Result<Lease, DeviceError>>,
    ) -> Result<Lease, DeviceError> {
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
        self.grants.try_send(grant).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => DeviceError::QueueFull,
            mpsc::error::TrySendError::Closed(_) => DeviceError::ShuttingDown,
        })?;
        turn.finish();
        let answer = granted.await.unwrap_or(Err(DeviceError::ShuttingDown));
        crate::metrics::queue_wait(&self.name, asked.elapsed());
        answer
    }

    /// Stops the actor after the current lease (if any) and closes the port; returns when
    /// it is done. Queued and later leases get `ShuttingDown`. Do not call it while holding a
    /// `Lease` of this device in the same task: it waits for that lease.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let mut status = self.status.clone();
        // The actor owns the sender: `changed` fails once the actor has ended.
        while status.changed().await.is_ok() {}
    }
}
