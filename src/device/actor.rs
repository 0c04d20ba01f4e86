//! The task that owns one device's port: connects (throwaway C2h, then C1h), reconnects with
//! backoff, leases the port to one holder at a time (`Grant::give`), and reads the box's
//! state while idle. The port's commands (`commands.rs`) and replies (`reply.rs`) are
//! methods of [`Port`], run by whoever holds it.

use std::future::pending;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use mcf_sfe::capture::Event;
use mcf_sfe::{Command, Dialect, FromDevice, Seq};
use rust_decimal::Decimal;
use tokio::sync::{mpsc, watch, Mutex};
use tokio::time::{sleep_until, Instant};
use tokio_serial::SerialStream;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, info_span, warn, Instrument};

mod commands;
mod reply;

use super::capture::DeviceCapture;
use super::port::{Backoff, SerialConnector};
use super::transport::{describe, Outcome, Resend, Transport};
use super::{DeviceConfig, DeviceError, DeviceHandle, Grant, LinkStatus, LinkTiming, WireSettings};

/// Starts the actor for `config`, reaching the device through `connector`.
pub(super) fn spawn(config: DeviceConfig, connector: SerialConnector) -> DeviceHandle {
    let name: Arc<str> = Arc::from(config.name.as_str());
    let (grants_tx, grants) = mpsc::channel(config.queue_capacity.max(1));
    let (status, status_rx) = watch::channel(LinkStatus::disconnected());
    let stop = CancellationToken::new();
    let span = info_span!("device", name = %name, port = %connector.describe());
    let capture = config.capture.map(|capture| {
        capture.comment(&format!(
            "device {} {} {} baud, SEQ {:02X}-{:02X}, line breaks {}, status map {}, SEQ replay {}",
            name,
            connector.describe(),
            config.baud,
            config.wire.seq.first().get(),
            config.wire.seq.last().get(),
            config.wire.line_breaks.as_str(),
            config.wire.status_map.as_str(),
            config.wire.seq_replay,
        ));
        DeviceCapture {
            capture,
            device: name.clone(),
        }
    });
    let port = Port {
        name: name.clone(),
        timing: config.timing,
        wire: config.wire,
        dialect: config.wire.dialect(),
        fallback_rates: config.fallback_rates,
        capture,
        backoff: Backoff::new(config.timing.reconnect_min, config.timing.reconnect_max),
        connector,
        link: None,
        seq: config.wire.seq.last(),
        state_error: None,
        status,
    };
    let actor = Actor {
        port: Arc::new(Mutex::new(port)),
        health_interval: config.health_interval,
        grants,
        stop: stop.clone(),
    };
    tokio::spawn(actor.run().instrument(span));
    DeviceHandle {
        name,
        grants: grants_tx,
        status: status_rx,
        stop,
        arrivals: Arc::new(crate::arrivals::Arrivals::new()),
    }
}

/// The task that grants the port: one lease at a time, in the queue's order; between leases
/// it keeps the link up and reads the box's state.
struct Actor {
    /// The port, locked by the actor while idle and by a [`Lease`] while leased.
    port: Arc<Mutex<Port>>,
    health_interval: Option<Duration>,
    grants: mpsc::Receiver<Grant>,
    stop: CancellationToken,
}

/// The port of one device: the link to the box and what the gateway knows of it. Its
/// commands run on it directly, in whichever task holds it (the actor while idle, a lease's
/// holder while leased).
pub(super) struct Port {
    pub(super) name: Arc<str>,
    pub(super) timing: LinkTiming,
    pub(super) wire: WireSettings,
    dialect: Dialect,
    pub(super) fallback_rates: [Option<Decimal>; 16],
    pub(super) capture: Option<DeviceCapture>,
    backoff: Backoff,
    connector: SerialConnector,
    link: Option<Transport<SerialStream>>,
    /// SEQ of the last command sent; continues across sessions and reopens.
    seq: Seq,
    /// Why the last C1h could not be read (`None` once one is read).
    state_error: Option<String>,
    status: watch::Sender<LinkStatus>,
}

/// Whether the actor goes on.
enum Flow {
    Continue,
    Stop,
}

impl Actor {
    async fn run(mut self) {
        let mut wait = None;
        let mut next_health = self.health_interval.map(|every| Instant::now() + every);
        let mut leased = false;
        loop {
            // Waits for the last lease, if any, to be given back.
            let mut port = Arc::clone(&self.port).lock_owned().await;
            if std::mem::take(&mut leased) && port.link.is_none() {
                // The link dropped during the lease: reopened after the backoff.
                wait = Some(port.backoff.next_delay());
            }
            if port.link.is_none() {
                if let Some(delay) = wait.take() {
                    if let Flow::Stop = self.wait_down(&port, delay).await {
                        break;
                    }
                }
                if self.stop.is_cancelled() {
                    break;
                }
                let deadline = Instant::now() + port.timing.command_budget;
                match port.connect(deadline).await {
                    Ok(()) => port.backoff.reset(),
                    Err(reason) => {
                        port.link_down(reason);
                        wait = Some(port.backoff.next_delay());
                    }
                }
                continue;
            }
            let flow = tokio::select! {
                biased;
                () = self.stop.cancelled() => Flow::Stop,
                grant = self.grants.recv() => match grant {
                    Some(grant) => {
                        // The next turn of the loop waits for the lease to end.
                        grant.give(port);
                        leased = true;
                        Flow::Continue
                    }
                    None => Flow::Stop,
                },
                item = idle_item(&mut port.link) => {
                    port.idle(item);
                    if port.link.is_none() {
                        wait = Some(port.backoff.next_delay());
                    }
                    Flow::Continue
                }
                () = health_due(next_health) => {
                    port.health_check().await;
                    next_health = self.health_interval.map(|every| Instant::now() + every);
                    if port.link.is_none() {
                        wait = Some(port.backoff.next_delay());
                    }
                    Flow::Continue
                }
            };
            if let Flow::Stop = flow {
                break;
            }
        }
        self.close().await;
    }

    /// While the link is down: refuses grants until `delay` has passed.
    async fn wait_down(&mut self, port: &Port, delay: std::time::Duration) -> Flow {
        let until = Instant::now() + delay;
        loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return Flow::Stop,
                () = sleep_until(until) => return Flow::Continue,
                grant = self.grants.recv() => match grant {
                    Some(grant) => {
                        let why = port.status.borrow().last_error.clone();
                        let why = why.unwrap_or_else(|| "not connected".to_owned());
                        let error = DeviceError::Unavailable(format!("device {}: {why}", port.name));
                        grant.refuse(error);
                    }
                    None => return Flow::Stop,
                },
            }
        }
    }

    /// Stops: turns away whoever still waits and closes the port (after the last lease).
    async fn close(&mut self) {
        self.grants.close();
        while let Ok(grant) = self.grants.try_recv() {
            grant.refuse(DeviceError::ShuttingDown);
        }
        self.port.lock().await.close();
    }
}

impl Port {
    /// Opens the port and sends the throwaway C2h (PROTOCOL.md §3.2); once it is answered
    /// the link is up, and C1h tells what the box is now.
    async fn connect(&mut self, deadline: Instant) -> Result<(), String> {
        let io = self
            .connector
            .connect()
            .map_err(|e| format!("cannot open {}: {e}", self.connector.describe()))?;
        if let Some(capture) = &self.capture {
            capture.record(&Event::Open);
        }
        let mut link = Transport::new(io, self.capture.clone());
        let frame = self
            .frame_of(&Command::LinkState)
            .map_err(|e| format!("C2h: {e}"))?;
        let span = info_span!(
            "command",
            cmd = "0xc2",
            seq = frame.seq().get(),
            throwaway = true
        );
        let exchange = link
            .exchange(&frame, &self.timing, deadline, Resend::HARMLESS)
            .instrument(span)
            .await;
        match exchange.outcome {
            Outcome::Reply(reply) => {
                info!("device link up");
                self.link = Some(link);
                // Only informative (it may be a replay of an older C2h: PROTOCOL.md §3.2).
                let _ = self.read_reply(&reply);
                // What an earlier connection read may be another box's: read again.
                self.status.send_modify(|status| {
                    status.connected = true;
                    status.since = Utc::now();
                    status.state = None;
                });
                self.read_state().await;
                if self.link.is_none() {
                    // The box answered C2h but not C1h: not a usable link.
                    return Err("the device answers C2h but not C1h".to_owned());
                }
                Ok(())
            }
            Outcome::NoAnswer => {
                self.record_close("the port opened but the device does not answer");
                Err("the port opened but the device does not answer".to_owned())
            }
            Outcome::Disconnected(reason) => {
                self.record_close(&reason);
                Err(reason)
            }
        }
    }

    /// C1h, on connecting and while idle: what the box says of itself now (kept in the
    /// status). A box that does not answer is down, as after any unanswered command.
    async fn read_state(&mut self) {
        if let Err(error) = self.run_command(&Command::DeviceState).await {
            debug!(%error, "C1h outside a session failed");
        }
    }

    /// While idle: C1h and C2h, so that the status is what the box says now.
    async fn health_check(&mut self) {
        if self.link.is_none() {
            return;
        }
        self.read_state().await;
        if self.link.is_some() {
            if let Err(error) = self.run_command(&Command::LinkState).await {
                debug!(%error, "C2h outside a session failed");
            }
        }
    }

    fn record_close(&self, why: &str) {
        if let Some(capture) = &self.capture {
            capture.record(&Event::Close(why.to_owned()));
        }
    }

    /// Closes the port (if open) and records why.
    fn link_down(&mut self, reason: String) {
        if self.link.is_some() {
            self.record_close(&reason);
        }
        let was_up = self.link.take().is_some();
        if was_up || self.status.borrow().last_error.as_ref() != Some(&reason) {
            warn!(%reason, "device link down");
        } else {
            debug!(%reason, "device still unreachable");
        }
        self.status.send_modify(|status| {
            if status.connected {
                status.connected = false;
                status.since = Utc::now();
            }
            status.last_error = Some(reason);
        });
    }

    fn idle(&mut self, item: Option<io::Result<FromDevice>>) {
        match item {
            Some(Ok(item)) => debug!(item = %describe(&item), "stale input while idle"),
            Some(Err(error)) => self.link_down(format!("read failed: {error}")),
            None => self.link_down("end of stream (read returned 0 bytes)".to_owned()),
        }
    }

    /// Closes the port for good (the actor stops).
    fn close(&mut self) {
        if self.link.is_some() {
            self.record_close("the gateway stopped");
        }
        if self.link.take().is_some() {
            info!("device link closed");
        }
        self.status.send_modify(|status| {
            if status.connected {
                status.connected = false;
                status.since = Utc::now();
            }
            status.last_error = Some("the device link was shut down".to_owned());
        });
    }
}

impl Drop for Port {
    /// A port dropped without `close` (a bug that panicked in the actor) must not leave its
    /// status saying the box answers: `/status` and readiness would lie.
    fn drop(&mut self) {
        self.status.send_modify(|status| {
            if status.connected {
                status.connected = false;
                status.since = Utc::now();
                status.last_error = Some("the device link stopped unexpectedly".to_owned());
            }
        });
    }
}

/// Resolves at `at`; never when there is no health poll.
async fn health_due(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => pending().await,
    }
}

/// The next item read while no command runs; never resolves when the link is down.
async fn idle_item<IO>(link: &mut Option<Transport<IO>>) -> Option<io::Result<FromDevice>>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match link {
        Some(link) => link.idle_item().await,
        None => pending().await,
    }
}
