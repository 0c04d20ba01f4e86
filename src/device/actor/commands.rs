//! The port's commands, run by whoever holds it (a lease's holder, or the actor while idle):
//! one exchange each, with one reconnection attempt if the link is down, and the finalization
//! with `P:` polling (PROTOCOL.md §3.3-3.4).

use mcf_sfe::command::{code, FinalizeTotals};
use mcf_sfe::{Command, FieldError, Reply, Status};
use tokio::time::{sleep, Instant};
use tracing::{debug, info, info_span, warn, Instrument};

use super::Port;
use crate::device::transport::{Outcome, Resend};
use crate::device::{DeviceError, FinalizeOutcome};

impl Port {
    /// A comment for the wire capture, if one is written (nothing otherwise).
    pub(in crate::device) fn annotate_capture(&self, text: &str) {
        if let Some(capture) = &self.capture {
            capture.capture.comment(&format!("{} {text}", self.name));
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

    /// One command (not 38h with totals) within its budget.
    pub(in crate::device) async fn execute_command(
        &mut self,
        command: Command,
    ) -> Result<(Reply, Status), DeviceError> {
        if let Command::Finalize(_) = command {
            return Err(DeviceError::Encode(FieldError::Invalid {
                field: "command",
                reason: "38h with totals goes through PortSession::finalize".to_owned(),
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
            // Read-only, or harmless twice (38h `C` cancels nothing the second time).
            Command::DeviceState
            | Command::LinkState
            | Command::TaxpayerField(_)
            | Command::Subtotal
            | Command::Cancel => Resend::HARMLESS,
            // Never after silence (it goes through `finalize_invoice`; here only by mistake).
            Command::Finalize(_) => Resend::NAK_ONLY,
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
    pub(in crate::device) async fn finalize_invoice(
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
                other => return Err(self.finalize_unanswered(other, seq.get(), nothing_written)),
            };
            let once = polls == 0 && exchange.transmissions == 1;
            match self.judge_finalize_reply(&reply, seq.get(), polls, once) {
                Judged::Settled(outcome) => return outcome,
                Judged::Pending => {
                    polls += 1;
                    if Instant::now() + self.timing.poll_interval >= deadline {
                        let why = "P: and no time left to poll again";
                        warn!(seq = seq.get(), why, "38h: outcome unknown");
                        return Err(DeviceError::OutcomeUnknown);
                    }
                    debug!(
                        seq = seq.get(),
                        polls, "38h: P: still working, polling again"
                    );
                    sleep(self.timing.poll_interval).await;
                }
            }
        }
    }

    /// A 38h left unanswered (`outcome` is not a reply): the link is closed; the outcome is
    /// unknown unless `nothing_written`.
    fn finalize_unanswered(
        &mut self,
        outcome: Outcome,
        seq: u8,
        nothing_written: bool,
    ) -> DeviceError {
        let (reason, if_nothing_written, lost) = match outcome {
            Outcome::Disconnected(reason) => (
                reason,
                DeviceError::Disconnected,
                "38h: link lost after sending, outcome unknown",
            ),
            _ => (
                "no answer to 38h within its budget".to_owned(),
                DeviceError::NoAnswer {
                    command: code::FINALIZE,
                },
                "38h: no answer within the budget, outcome unknown",
            ),
        };
        self.link_down(reason);
        if nothing_written {
            return if_nothing_written;
        }
        warn!(seq, "{lost}");
        DeviceError::OutcomeUnknown
    }

    /// What a reply to 38h with totals settles: `R:` certified; `E:` refused only for a 38h
    /// sent `once` (never resent, never answered `P:`) with a text; `P:` not yet; anything
    /// else an unknown outcome.
    fn judge_finalize_reply(
        &mut self,
        reply: &mcf_sfe::ReplyFrame,
        seq: u8,
        polls: u32,
        once: bool,
    ) -> Judged {
        let unknown = |why: &str| {
            warn!(seq, why, "38h: outcome unknown");
            Judged::Settled(Err(DeviceError::OutcomeUnknown))
        };
        match self.read_reply(reply) {
            Ok(Reply::Certified(certification)) => {
                info!(seq, polls, "38h: certified");
                Judged::Settled(Ok(FinalizeOutcome::Certified(certification)))
            }
            // A refusal without text (empty DATA and the refusal bit) is no proof that
            // nothing was committed: only an `E:` text is.
            Ok(Reply::Refused(text)) if once && !reply.data().is_empty() => {
                info!(seq, "38h: refused by the device");
                Judged::Settled(Ok(FinalizeOutcome::Refused(text)))
            }
            Ok(Reply::Refused(_)) => {
                unknown("refused after a resend or a P: poll, or without a text")
            }
            Ok(Reply::Pending(_)) => Judged::Pending,
            Ok(Reply::Done) => unknown("empty reply to 38h with totals"),
            Ok(_) => unknown("reply of another kind"),
            Err(_) => unknown("unreadable reply"),
        }
    }
}

/// What one reply to 38h with totals means.
enum Judged {
    /// The outcome is settled (certified, refused, or unknown).
    Settled(Result<FinalizeOutcome, DeviceError>),
    /// `P:`: the box is still working; poll again.
    Pending,
}
