//! The actor's session side: grants the port to one session, runs its commands (one
//! exchange each, with one reconnection attempt if the link is down) and its finalization
//! with `P:` polling (PROTOCOL.md §3.3-3.4).

use mcf_sfe::command::{code, FinalizeTotals};
use mcf_sfe::{Command, FieldError, Reply, Status};
use tokio::sync::mpsc;
use tokio::time::{sleep, Instant};
use tracing::{debug, info, info_span, warn, Instrument};

use super::{idle_item, Actor};
use crate::device::port::Connector;
use crate::device::transport::{Outcome, Resend};
use crate::device::{DeviceError, FinalizeOutcome, Grant, Request, Session};

impl<C: Connector> Actor<C> {
    /// Gives the port to one session until it is dropped.
    pub(super) async fn serve(&mut self, grant: Grant) {
        if grant.reply.is_closed() {
            debug!("the caller left the queue: grant skipped");
            return;
        }
        let (requests_tx, mut requests) = mpsc::channel(1);
        let session = Session {
            name: self.name.clone(),
            requests: requests_tx,
            last_status: None,
            wire: self.wire,
            fallback_rates: self.fallback_rates,
            capturing: self.capture.is_some(),
        };
        if grant.reply.send(Ok(session)).is_err() {
            debug!("the caller left the queue: grant skipped");
            return;
        }
        debug!("session granted");
        loop {
            tokio::select! {
                request = requests.recv() => match request {
                    Some(request) => self.handle(request).await,
                    None => break,
                },
                item = idle_item(&mut self.link) => self.idle(item),
            }
        }
        debug!("session ended");
    }

    async fn handle(&mut self, request: Request) {
        match request {
            Request::Execute { command, reply } => {
                let result = self.execute(command).await;
                let _ = reply.send(result);
            }
            Request::Finalize {
                totals,
                credit_note,
                reply,
            } => {
                let result = self.finalize(totals, credit_note).await;
                let _ = reply.send(result);
            }
            Request::Annotate(text) => {
                if let Some(capture) = &self.capture {
                    capture.capture.comment(&format!("{} {text}", self.name));
                }
            }
            Request::Note { cmd, anomaly } => {
                self.note_anomalies(cmd, std::slice::from_ref(&anomaly));
            }
        }
    }

    /// Within a session: one reconnection attempt if the link is down.
    async fn ensure_link(&mut self, deadline: Instant) -> Result<(), DeviceError> {
        if self.link.is_some() {
            return Ok(());
        }
        info!("link down during a session: one reconnection attempt");
        match self.connect(deadline).await {
            Ok(()) => {
                self.backoff.reset();
                Ok(())
            }
            Err(reason) => {
                self.link_down(reason);
                Err(DeviceError::Disconnected)
            }
        }
    }

    async fn execute(&mut self, command: Command) -> Result<(Reply, Status), DeviceError> {
        if let Command::Finalize(_) = command {
            return Err(DeviceError::Encode(FieldError::Invalid {
                field: "command",
                reason: "38h with totals goes through Session::finalize".to_owned(),
            }));
        }
        command.encode()?;
        self.ensure_link(Instant::now() + self.timing.command_budget)
            .await?;
        self.run_command(&command).await
    }

    /// One ordinary command on an open link, within its budget.
    pub(super) async fn run_command(
        &mut self,
        command: &Command,
    ) -> Result<(Reply, Status), DeviceError> {
        let cmd = command.code();
        let deadline = Instant::now() + self.timing.command_budget;
        let frame = self.frame_of(command)?;
        let resend = match command {
            Command::SetClient(_)
            | Command::OpenInvoice(_)
            | Command::Item(_)
            | Command::Comment(_)
            | Command::Payment(_) => Resend::changing(self.wire.seq_replay),
            _ => Resend::HARMLESS,
        };
        let Some(link) = self.link.as_mut() else {
            return Err(DeviceError::Disconnected);
        };
        let span =
            info_span!("command", cmd = %format_args!("{cmd:#04x}"), seq = frame.seq().get());
        let started = Instant::now();
        let exchange = link
            .exchange(&frame, &self.timing, deadline, resend)
            .instrument(span)
            .await;
        crate::metrics::device_round_trip(&self.name, cmd, started.elapsed());
        match exchange.outcome {
            Outcome::Reply(reply) => {
                let status = reply.status();
                self.read_reply(&reply).map(|parsed| (parsed, status))
            }
            Outcome::NoAnswer => {
                self.link_down(format!("no answer to command {cmd:#04x}"));
                Err(DeviceError::NoAnswer { command: cmd })
            }
            Outcome::Disconnected(reason) => {
                self.link_down(reason);
                Err(DeviceError::Disconnected)
            }
        }
    }

    /// 38h with totals, `P:` polls included (PROTOCOL.md §3.3-3.4).
    async fn finalize(
        &mut self,
        totals: FinalizeTotals,
        credit_note: bool,
    ) -> Result<FinalizeOutcome, DeviceError> {
        let command = Command::Finalize(totals);
        command.encode()?;
        self.ensure_link(Instant::now() + self.timing.command_budget)
            .await?;
        let budget = if credit_note {
            self.timing.credit_note_budget
        } else {
            self.timing.finalize_budget
        };
        let deadline = Instant::now() + budget;
        // `P:` replies so far: after one, only `R:` settles the outcome.
        let mut polls = 0u32;
        loop {
            // The DATA encoded once above: a poll can only fail to build if the first did.
            let frame = match self.frame_of(&command) {
                Ok(frame) => frame,
                Err(_) if polls > 0 => return Err(DeviceError::OutcomeUnknown),
                Err(error) => return Err(error.into()),
            };
            let seq = frame.seq();
            let Some(link) = self.link.as_mut() else {
                return Err(DeviceError::OutcomeUnknown);
            };
            let span = info_span!("command", cmd = "0x38", seq = seq.get(), polls);
            let started = Instant::now();
            let exchange = link
                .exchange(&frame, &self.timing, deadline, Resend::NAK_ONLY)
                .instrument(span)
                .await;
            crate::metrics::device_round_trip(&self.name, code::FINALIZE, started.elapsed());
            let nothing_written = polls == 0 && exchange.transmissions == 0;
            let reply = match exchange.outcome {
                Outcome::Reply(reply) => reply,
                Outcome::NoAnswer => {
                    self.link_down("no answer to 38h within its budget".to_owned());
                    return Err(if nothing_written {
                        DeviceError::NoAnswer {
                            command: code::FINALIZE,
                        }
                    } else {
                        warn!(
                            seq = seq.get(),
                            "38h: no answer within the budget, outcome unknown"
                        );
                        DeviceError::OutcomeUnknown
                    });
                }
                Outcome::Disconnected(reason) => {
                    self.link_down(reason);
                    return Err(if nothing_written {
                        DeviceError::Disconnected
                    } else {
                        warn!(
                            seq = seq.get(),
                            "38h: link lost after sending, outcome unknown"
                        );
                        DeviceError::OutcomeUnknown
                    });
                }
            };
            let unknown = |why: &str| {
                warn!(seq = seq.get(), why, "38h: outcome unknown");
                Err(DeviceError::OutcomeUnknown)
            };
            match self.read_reply(&reply) {
                Ok(Reply::Certified(certification)) => {
                    info!(seq = seq.get(), polls, "38h: certified");
                    return Ok(FinalizeOutcome::Certified(certification));
                }
                // A refusal without text (empty DATA and the refusal bit) is no proof that
                // nothing was committed: only an `E:` text is.
                Ok(Reply::Refused(text))
                    if polls == 0 && exchange.transmissions == 1 && !reply.data().is_empty() =>
                {
                    info!(seq = seq.get(), "38h: refused by the device");
                    return Ok(FinalizeOutcome::Refused(text));
                }
                Ok(Reply::Refused(_)) => {
                    return unknown("refused after a resend or a P: poll, or without a text")
                }
                Ok(Reply::Pending(_)) => {
                    polls += 1;
                    if Instant::now() + self.timing.poll_interval >= deadline {
                        return unknown("P: and no time left to poll again");
                    }
                    debug!(
                        seq = seq.get(),
                        polls, "38h: P: still working, polling again"
                    );
                    sleep(self.timing.poll_interval).await;
                }
                Ok(Reply::Done) => return unknown("empty reply to 38h with totals"),
                Ok(_) => return unknown("reply of another kind"),
                Err(_) => return unknown("unreadable reply"),
            }
        }
    }
}
