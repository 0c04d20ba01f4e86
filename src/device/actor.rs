//! The task that owns one device's port: connects (throwaway C2h), reconnects with backoff,
//! grants sessions one at a time, runs their commands, and polls 38h (PROTOCOL.md §3.4).

use std::future::pending;
use std::io;
use std::sync::Arc;

use chrono::Utc;
use mcf_sfe::{Command, FromDevice, Reply, Seq};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, info_span, warn, Instrument};

mod session;

use super::port::{Backoff, Connector};
use super::transport::{describe, AfterTries, Outcome, Transport};
use super::{DeviceConfig, DeviceError, DeviceHandle, Grant, LinkStatus, LinkTiming};

/// Starts the actor for `config`, reaching the device through `connector`.
pub(super) fn spawn<C: Connector>(config: DeviceConfig, connector: C) -> DeviceHandle {
    let name: Arc<str> = Arc::from(config.name.as_str());
    let (grants_tx, grants) = mpsc::channel(config.queue_capacity.max(1));
    let (status, status_rx) = watch::channel(LinkStatus {
        connected: false,
        since: Utc::now(),
        last_error: None,
        last_reply_at: None,
        dgi: None,
        queued: 0,
    });
    let stop = CancellationToken::new();
    let span = info_span!("device", name = %name, port = %connector.describe());
    let actor = Actor {
        name: name.clone(),
        timing: config.timing,
        backoff: Backoff::new(config.timing.reconnect_min, config.timing.reconnect_max),
        connector,
        link: None,
        seq: Seq::FIRST,
        status,
        grants,
        stop: stop.clone(),
    };
    tokio::spawn(actor.run().instrument(span));
    DeviceHandle {
        name,
        grants: grants_tx,
        status: status_rx,
        stop,
        arrivals: Arc::new(super::arrivals::Arrivals::new()),
    }
}

struct Actor<C: Connector> {
    name: Arc<str>,
    timing: LinkTiming,
    backoff: Backoff,
    connector: C,
    link: Option<Transport<C::Io>>,
    /// SEQ of the last command sent; continues across sessions and reopens.
    seq: Seq,
    status: watch::Sender<LinkStatus>,
    grants: mpsc::Receiver<Grant>,
    stop: CancellationToken,
}

/// Whether the actor goes on.
enum Flow {
    Continue,
    Stop,
}

impl<C: Connector> Actor<C> {
    async fn run(mut self) {
        let mut wait = None;
        loop {
            if self.link.is_none() {
                if let Some(delay) = wait.take() {
                    if let Flow::Stop = self.wait_down(delay).await {
                        break;
                    }
                }
                if self.stop.is_cancelled() {
                    break;
                }
                let deadline = Instant::now() + self.timing.command_budget;
                match self.connect(deadline).await {
                    Ok(()) => self.backoff.reset(),
                    Err(reason) => {
                        self.link_down(reason);
                        wait = Some(self.backoff.next_delay());
                    }
                }
                continue;
            }
            let flow = tokio::select! {
                biased;
                () = self.stop.cancelled() => Flow::Stop,
                grant = self.grants.recv() => match grant {
                    Some(grant) => {
                        self.serve(grant).await;
                        Flow::Continue
                    }
                    None => Flow::Stop,
                },
                item = idle_item(&mut self.link) => {
                    self.idle(item);
                    Flow::Continue
                }
            };
            if let Flow::Stop = flow {
                break;
            }
            if self.link.is_none() {
                wait = Some(self.backoff.next_delay());
            }
        }
        self.close();
    }

    /// While the link is down: refuses grants until `delay` has passed.
    async fn wait_down(&mut self, delay: std::time::Duration) -> Flow {
        let until = Instant::now() + delay;
        loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return Flow::Stop,
                () = sleep_until(until) => return Flow::Continue,
                grant = self.grants.recv() => match grant {
                    Some(grant) => {
                        let why = self.status.borrow().last_error.clone();
                        let why = why.unwrap_or_else(|| "not connected".to_owned());
                        let error = DeviceError::Unavailable(format!("device {}: {why}", self.name));
                        let _ = grant.reply.send(Err(error));
                    }
                    None => return Flow::Stop,
                },
            }
        }
    }

    /// Opens the port and sends the throwaway C2h (PROTOCOL.md §3.2).
    async fn connect(&mut self, deadline: Instant) -> Result<(), String> {
        let io = self
            .connector
            .connect()
            .map_err(|e| format!("cannot open {}: {e}", self.connector.describe()))?;
        let mut link = Transport::new(io);
        let seq = self.next_seq();
        let frame = Command::LinkState
            .to_frame(seq)
            .map_err(|e| format!("C2h: {e}"))?;
        let span = info_span!("command", cmd = "0xc2", seq = seq.get(), throwaway = true);
        let exchange = link
            .exchange(&frame, &self.timing, deadline, AfterTries::GiveUp)
            .instrument(span)
            .await;
        match exchange.outcome {
            Outcome::Reply(reply) => {
                info!("device link up");
                self.link = Some(link);
                // Only informative (it may be a replay of an older C2h: PROTOCOL.md §3.2).
                let dgi = match Reply::parse(reply.cmd(), reply.data()) {
                    Ok(Reply::LinkState(state)) => Some(state),
                    _ => None,
                };
                self.status.send_modify(|status| {
                    status.connected = true;
                    status.since = Utc::now();
                    status.last_reply_at = Some(Utc::now());
                    if dgi.is_some() {
                        status.dgi = dgi;
                    }
                });
                Ok(())
            }
            Outcome::NoAnswer => Err("the port opened but the device does not answer".to_owned()),
            Outcome::Disconnected(reason) => Err(reason),
        }
    }

    /// Closes the port (if open) and records why.
    fn link_down(&mut self, reason: String) {
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

    fn next_seq(&mut self) -> Seq {
        self.seq = self.seq.next();
        self.seq
    }

    fn replied(&mut self) {
        self.status.send_modify(|status| {
            status.last_reply_at = Some(Utc::now());
        });
    }

    /// Stops: closes the port and turns away whoever still waits.
    fn close(&mut self) {
        self.grants.close();
        while let Ok(grant) = self.grants.try_recv() {
            let _ = grant.reply.send(Err(DeviceError::ShuttingDown));
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
