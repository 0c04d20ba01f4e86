//! Exclusive use of the device for one whole invoice: a [`Lease`] of its port.
//!
//! [`DeviceHandle::lease_in_turn`] waits in the device's queue and resolves to a [`Lease`]:
//! the port itself, taken from the actor until the lease is dropped. Its holder runs a
//! [`PortSession`] on it in its own task (an invoice's, a settling's, a probe's): each command
//! is one call on the port, with no hop between tasks (docs/performance.md, "line
//! efficiency"). The actor waits for the lease to come back before it reads the port again
//! or grants the next one.
//!
//! [`DeviceHandle::lease_in_turn`]: super::DeviceHandle::lease_in_turn

use mcf_sfe::command::FinalizeTotals;
use mcf_sfe::reply::Anomaly;
use mcf_sfe::{Command, Reply, Status, StatusFlag};
use rust_decimal::Decimal;
use tokio::sync::OwnedMutexGuard;

use super::actor::Port;
use super::{DeviceError, FinalizeOutcome, StatusMap};

/// The port, leased to one holder until dropped: run commands on it with
/// [`Lease::session`]. Dropping it gives the port back to the actor.
pub struct Lease {
    pub(super) port: OwnedMutexGuard<Port>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("device", &self.port.name)
            .finish()
    }
}

impl Lease {
    /// A session of commands on the leased port (one invoice, one settling, one probe).
    pub fn session(&mut self) -> PortSession<'_> {
        PortSession {
            port: &mut self.port,
            last_status: None,
        }
    }
}

/// Commands on a leased port, one at a time, each a call on the port itself.
pub struct PortSession<'a> {
    port: &'a mut Port,
    last_status: Option<Status>,
}

impl std::fmt::Debug for PortSession<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortSession")
            .field("device", &self.port.name)
            .finish()
    }
}

impl PortSession<'_> {
    /// The device's name.
    pub fn device(&self) -> &str {
        &self.port.name
    }

    /// Runs one command (any but 38h with totals, which goes through
    /// [`PortSession::finalize`]; 38h `C` goes here) within its budget. A device refusal is
    /// `Ok(Reply::Refused(text))`.
    pub async fn execute(&mut self, command: Command) -> Result<Reply, DeviceError> {
        let (reply, status) = self.port.execute_command(command).await?;
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
        self.port.finalize_invoice(totals, credit_note).await
    }

    /// Whether the last reply says an invoice is open on the box: `None` when this box's
    /// status bytes are not read ([`StatusMap::Ignored`]) or before the first reply.
    pub fn invoice_open(&self) -> Option<bool> {
        match self.port.wire.status_map {
            StatusMap::Simulator => self
                .last_status
                .map(|status| status.has(StatusFlag::InvoiceOpen)),
            StatusMap::Ignored => None,
        }
    }

    /// The VAT rates to use when the box's C1h carries none (configured per device).
    pub fn fallback_rates(&self) -> &[Option<Decimal>; 16] {
        &self.port.fallback_rates
    }

    /// Reports something odd in the reply to `cmd` that the reader could not judge alone (an
    /// R: whose counters do not follow C1h's, an MCUR other than the invoice's): logged once
    /// per device, command and field, counted in `/metrics`, listed in the status. Never
    /// fails.
    pub async fn report_oddity(&mut self, cmd: u8, oddity: Anomaly) {
        self.port.note_oddities(cmd, std::slice::from_ref(&oddity));
    }

    /// Whether this device's traffic is written to a wire capture.
    pub fn capturing(&self) -> bool {
        self.port.capture.is_some()
    }

    /// Writes `text` as a comment line of the wire capture, if one is written, prefixed with
    /// the device's name: `# <device> <text>`. Never fails.
    pub async fn annotate_capture(&mut self, text: String) {
        self.port.annotate_capture(&text);
    }
}
