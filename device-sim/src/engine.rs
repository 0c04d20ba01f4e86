//! The simulated device: executes one command (CMD byte and DATA) against the invoice state
//! machine and the fiscal memory, and says what to answer, with which status and after how
//! long. Pure and synchronous: the link owns the port, SYN, NAK, replays and faults.
//!
//! The [`Firmware`] profile changes how the box talks, never what it does: the engine runs the
//! same state machine and fiscal memory for every profile, builds PROTOCOL.md's reply, and
//! then has the profile rewrite it (`firmware/wire.rs`), with its refusal texts, status bytes
//! and slow commands.

use std::time::{Duration, Instant};

use chrono::{NaiveDateTime, Timelike};
use mcf_sfe::command::FinalizeTotals;
use mcf_sfe::reply::{
    Certification, CurrencyInfo, DeviceState, GroupRate, Last, LastInvoice, LinkState,
    TaxpayerValue,
};
use mcf_sfe::types::{DgiLinkState, TaxpayerKey};
use mcf_sfe::{Command, DataError, FieldError, Reply, Status, StatusFlag};

use crate::config::{DeviceConfig, SlowReply};
use crate::error::SimError;
use crate::firmware::{Firmware, Text};
use crate::fiscal::{FiscalMemory, NewInvoice};
use crate::invoice::{Checks, InvoiceMachine, Phase, Refusal};

/// The `P:` text of a credit note waiting for the DGI check.
pub const PENDING_TEXT: &str = "checking original with DGI";

/// What the device does with one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handled {
    /// Reply DATA as the firmware sends it; always fits `mcf_sfe::wire::MAX_REPLY_DATA`.
    pub reply: Vec<u8>,
    /// Status bytes to send with it (the firmware's: see [`Firmware::status`]).
    pub status: Status,
    /// How long the device works before answering (the link sends SYN meanwhile).
    pub processing: Duration,
    /// The device stays silent while processing (credit note with [`SlowReply::Silent`], or
    /// a firmware's silent slow command).
    pub silent: bool,
    /// The invoice this command committed to fiscal memory, if any.
    pub finalized: Option<Certification>,
}

/// A simulated e-MCF: configuration, fiscal memory and the invoice in progress.
#[derive(Debug)]
pub struct Engine {
    config: DeviceConfig,
    memory: FiscalMemory,
    machine: InvoiceMachine,
    firmware: Firmware,
    last_syntax_error: bool,
    last_refused: bool,
}

/// The result of one command before it is encoded.
struct Outcome {
    reply: Reply,
    processing: Duration,
    silent: bool,
    finalized: Option<Certification>,
    syntax_error: bool,
}

impl Engine {
    /// Loads the fiscal memory from `config.state_file` (creating it if absent); the box
    /// talks as PROTOCOL.md says ([`Firmware::reference`]).
    pub fn open(config: DeviceConfig) -> Result<Engine, SimError> {
        Engine::open_with_firmware(config, Firmware::reference())
    }

    /// Same, for a box that talks as `firmware` does. The profile's credit note, when it sets
    /// one, replaces `config.timing`'s ([`Firmware::timing`]).
    pub fn open_with_firmware(
        mut config: DeviceConfig,
        firmware: Firmware,
    ) -> Result<Engine, SimError> {
        firmware
            .validate()
            .map_err(|reason| SimError::Config { reason })?;
        config.timing = firmware.timing(config.timing);
        config.validate()?;
        let memory = FiscalMemory::open(
            config.state_file.as_deref(),
            &config.nim,
            &config.nif,
            config.memory_capacity,
        )?;
        Ok(Engine {
            config,
            memory,
            machine: InvoiceMachine::new(),
            firmware,
            last_syntax_error: false,
            last_refused: false,
        })
    }

    /// Executes one command frame's CMD byte and DATA. `clock` = device clock (local time),
    /// `now` = monotonic time (for the Pending mode). Never panics on any input.
    pub fn handle(&mut self, cmd: u8, data: &[u8], clock: NaiveDateTime, now: Instant) -> Handled {
        let clock = clock.with_nanosecond(0).unwrap_or(clock);
        let data = self.firmware.incoming(data);
        let outcome = match Command::parse(cmd, &data) {
            Ok(command) => self.execute(command, clock, now),
            Err(DataError::UnknownCommand(code)) => {
                self.plain(self.refused(Text::UnknownCommand(code)))
            }
            Err(error) => Outcome {
                syntax_error: true,
                ..self.plain(self.refused(Text::Syntax(&error.to_string())))
            },
        };
        let (reply, refused) = encode(cmd, &outcome.reply, &self.firmware);
        self.last_syntax_error = outcome.syntax_error;
        self.last_refused = refused;
        let reply = self
            .firmware
            .reply_data(cmd, reply, refused, self.memory.tc());
        tracing::debug!(
            cmd = format_args!("{cmd:#04x}"),
            reply = %String::from_utf8_lossy(&reply),
            "command handled"
        );
        let (processing, silent) = self.firmware.pace(cmd, outcome.processing, outcome.silent);
        Handled {
            reply,
            status: self.firmware.status(self.status(), refused),
            processing,
            silent,
            finalized: outcome.finalized,
        }
    }

    /// The reply DATA and status of a command refused without being executed (an injected
    /// fault), in the firmware's form. Changes nothing.
    pub fn refuse_unexecuted(&self, cmd: u8) -> (Vec<u8>, Status) {
        let mut status = self.status();
        status.set(StatusFlag::CommandRefused, true);
        (
            self.refusal_data(cmd, Text::FaultInjected),
            self.firmware.status(status, true),
        )
    }

    /// The DATA of a refusal with `text`, in the firmware's form and language.
    pub fn refusal_data(&self, cmd: u8, text: Text<'_>) -> Vec<u8> {
        let data = refusal(cmd, &self.firmware.text(text));
        self.firmware.reply_data(cmd, data, true, self.memory.tc())
    }

    /// How this box talks.
    pub fn firmware(&self) -> &Firmware {
        &self.firmware
    }

    /// The status bytes of the device now, on the simulator's map (PROTOCOL.md §9); what goes
    /// on the wire is [`Firmware::status`] of them.
    pub fn status(&self) -> Status {
        let mut status = Status::default();
        let phase = self.machine.phase();
        status.set(StatusFlag::SyntaxError, self.last_syntax_error);
        status.set(StatusFlag::CommandRefused, self.last_refused);
        status.set(StatusFlag::InvoiceOpen, self.machine.invoice().is_some());
        status.set(StatusFlag::ClientSet, self.machine.client().is_some());
        status.set(StatusFlag::FinalizePending, phase == Phase::Pending);
        status.set(
            StatusFlag::FiscalMemoryNearlyFull,
            self.memory.is_nearly_full(),
        );
        status.set(StatusFlag::FiscalMemoryFull, self.memory.is_full());
        status
    }

    /// The configuration the device was opened with (its NIM and NIF may differ from the
    /// fiscal memory's: see [`Engine::memory`]).
    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }

    /// The fiscal memory (read-only).
    pub fn memory(&self) -> &FiscalMemory {
        &self.memory
    }

    /// The invoice state machine (read-only).
    pub fn machine(&self) -> &InvoiceMachine {
        &self.machine
    }

    fn execute(&mut self, command: Command, clock: NaiveDateTime, now: Instant) -> Outcome {
        let checks = Checks {
            nif: self.memory.nif(),
            rates: &self.config.rates,
            memory: &self.memory,
        };
        let accepted = match command {
            Command::DeviceState => Ok(Reply::DeviceState(self.device_state(clock))),
            Command::LinkState => Ok(Reply::LinkState(LinkState {
                sent: Some(self.memory.tc()),
                stored: Some(0),
                last_contact: Some(clock),
                state: DgiLinkState::Connected.to_string(),
                error: String::new(),
            })),
            Command::TaxpayerField(key) => Ok(self.taxpayer(key)),
            Command::SetClient(client) => self.machine.set_client(client).map(done),
            Command::OpenInvoice(open) => self.machine.open(open, &checks).map(done),
            Command::Item(item) => self.machine.add_item(&item, &checks).map(done),
            Command::Comment(comment) => self.machine.add_comment(comment).map(done),
            Command::Subtotal => self.machine.take_subtotal().map(Reply::Subtotal),
            Command::Payment(payment) => self.machine.add_payment(payment).map(done),
            Command::Cancel => self.machine.cancel().map(done),
            Command::Finalize(totals) => return self.finalize(totals, clock, now),
        };
        self.plain(accepted.unwrap_or_else(|refusal| self.refused(Text::Refusal(&refusal))))
    }

    /// 38 with totals: commit now, or answer `P:` while a credit note is being checked.
    fn finalize(&mut self, totals: FinalizeTotals, clock: NaiveDateTime, now: Instant) -> Outcome {
        let invoice = match self.machine.check_finalize(totals) {
            Ok(invoice) => invoice,
            Err(refusal) => return self.plain(self.refused(Text::Refusal(&refusal))),
        };
        let timing = self.config.timing;
        let credit = invoice.invoice_type().is_credit_note();
        let (processing, silent) = match (credit, timing.credit_note_reply) {
            (false, _) => (timing.finalize, false),
            (true, SlowReply::Syn) => (timing.credit_note, false),
            (true, SlowReply::Silent) => (timing.credit_note, true),
            (true, SlowReply::Pending) => match invoice.pending_until() {
                Some(ready_at) if now >= ready_at => (timing.command, false),
                Some(_) => return self.plain(Reply::Pending(PENDING_TEXT.to_owned())),
                None => {
                    // Durations are at most MAX_TIMING (validated), so this cannot overflow.
                    let ready_at = now.checked_add(timing.credit_note).unwrap_or(now);
                    self.machine.mark_pending(ready_at);
                    return self.plain(Reply::Pending(PENDING_TEXT.to_owned()));
                }
            },
        };
        // The device's own totals (equal to the host's, maybe written with another scale).
        let device_totals = invoice.subtotal().finalize_totals();
        let header = invoice.header();
        let new = NewInvoice {
            invoice_type: header.invoice_type,
            rn: header.rn.clone(),
            at: clock,
            total: device_totals.total,
            vat: device_totals.vat,
            reference: header.reference.as_ref().map(|r| r.code_def.clone()),
            usd_rate: header.usd_rate,
        };
        let record = match self.memory.commit(new, &self.config.signing_key) {
            Ok(record) => record,
            Err(error) => {
                tracing::error!(%error, "finalization not committed");
                let reply = match error {
                    SimError::MemoryFull { .. } => {
                        self.refused(Text::Refusal(&Refusal::MemoryFull))
                    }
                    other => self.refused(Text::MemoryWriteFailed(&other.to_string())),
                };
                return self.plain(reply);
            }
        };
        self.machine.close();
        let certification = Certification {
            fc: record.fc,
            tc: record.tc,
            invoice_type: record.invoice_type,
            at: record.at,
            mid: self.memory.nim().to_owned(),
            nif: self.memory.nif().to_owned(),
            rn: Some(record.rn),
            code_def: record.code_def,
        };
        Outcome {
            reply: Reply::Certified(certification.clone()),
            processing,
            silent,
            finalized: Some(certification),
            syntax_error: false,
        }
    }

    fn device_state(&self, clock: NaiveDateTime) -> DeviceState {
        DeviceState {
            mid: self.memory.nim().to_owned(),
            nif: self.memory.nif().to_owned(),
            clock: Some(clock),
            tc: self.memory.tc(),
            fvc: self.memory.fvc(),
            frc: self.memory.frc(),
            last: self.memory.last().map_or(Last::Nothing, |r| {
                Last::Invoice(LastInvoice {
                    at: r.at,
                    invoice_type: r.invoice_type,
                    code_def: r.code_def.clone(),
                    rn: r.rn.clone(),
                    amount: Some(r.total),
                })
            }),
            rates: Some(self.config.rates.map(GroupRate::from)),
            currency: self
                .memory
                .currency()
                .map(|c| CurrencyInfo::usd(c.rate, c.date)),
        }
    }

    fn taxpayer(&self, key: TaxpayerKey) -> Reply {
        Reply::TaxpayerField(TaxpayerValue {
            key: Some(key),
            value: self.config.taxpayer_value(key).to_owned(),
        })
    }

    /// A refusal with `text` in the firmware's language.
    fn refused(&self, text: Text<'_>) -> Reply {
        Reply::Refused(self.firmware.text(text))
    }

    /// An outcome that takes the ordinary command time.
    fn plain(&self, reply: Reply) -> Outcome {
        Outcome {
            reply,
            processing: self.config.timing.command,
            silent: false,
            finalized: None,
            syntax_error: false,
        }
    }
}

fn done(_: ()) -> Reply {
    Reply::Done
}

/// The DATA of `reply` (PROTOCOL.md's form) and whether it is a refusal. A reply that cannot
/// be encoded becomes a refusal saying why; a refusal text too long for a frame is cut; so the
/// DATA always fits.
fn encode(cmd: u8, reply: &Reply, firmware: &Firmware) -> (Vec<u8>, bool) {
    if let Reply::Refused(text) = reply {
        return (refusal(cmd, text), true);
    }
    match reply.encode(cmd) {
        Ok(data) => (data, false),
        Err(error) => {
            if let Reply::DeviceState(state) = reply {
                if let Some(data) = device_state_without_currency(cmd, state, &error) {
                    return (data, false);
                }
            }
            tracing::error!(%error, cmd, "reply cannot be encoded");
            let text = firmware.text(Text::CannotSend(&error.to_string()));
            (refusal(cmd, &text), true)
        }
    }
}

/// C1h is at most one field too long with a long FN, a large amount and many rates: the
/// currency (the least needed field) is left out rather than losing lastFN and lastDEF.
fn device_state_without_currency(
    cmd: u8,
    state: &DeviceState,
    error: &FieldError,
) -> Option<Vec<u8>> {
    if !matches!(error, FieldError::DataTooLong { .. }) || state.currency.is_none() {
        return None;
    }
    let reply = Reply::DeviceState(DeviceState {
        currency: None,
        ..state.clone()
    });
    let data = reply.encode(cmd).ok()?;
    tracing::warn!("C1h too long for a frame: currency left out");
    Some(data)
}

/// `E:<text>`, with control characters replaced by spaces and cut to fit a frame.
fn refusal(cmd: u8, text: &str) -> Vec<u8> {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut end = clean.len();
    loop {
        let cut = clean.get(..end).unwrap_or_default();
        if let Ok(data) = Reply::Refused(cut.to_owned()).encode(cmd) {
            return data;
        }
        match cut.char_indices().next_back() {
            Some((i, _)) if i > 0 => end = i,
            _ => return b"E:".to_vec(),
        }
    }
}

#[cfg(test)]
mod tests;
