//! The invoice state machine: one invoice at a time.
//!
//! idle -> (C3) client set -> (C0) open -> (31, 36) items -> (33) subtotal -> (35) payments
//! -> (38) finalized -> idle. C3 is optional; 38 `C` cancels from any state but idle. Every
//! method checks first and changes the state only when it accepts: a [`Refusal`] leaves the
//! machine exactly as it was.

use std::collections::BTreeMap;
use std::time::Instant;

use mcf_sfe::command::{self, Client, Comment, FinalizeTotals, Item, OpenInvoice, Payment};
use mcf_sfe::reply::Subtotal;
use mcf_sfe::types::{CommentLine, InvoiceType};
use rust_decimal::Decimal;

use crate::config::Rates;
use crate::fiscal::FiscalMemory;
use crate::totals::LineSums;

mod refusal;

pub use refusal::Refusal;

/// Where the machine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No client, no invoice.
    Idle,
    /// C3 accepted, no invoice yet.
    ClientSet,
    /// C0 accepted, no item yet.
    Open,
    /// At least one item, no subtotal yet.
    Items,
    /// 33 taken, no payment yet.
    Subtotal,
    /// At least one payment.
    Payments,
    /// A credit note's 38 answered `P:`; waiting for the DGI check.
    Pending,
}

/// What the device checks commands against.
#[derive(Debug, Clone, Copy)]
pub struct Checks<'a> {
    /// NIF the device is personalized for.
    pub nif: &'a str,
    /// Configured VAT rates.
    pub rates: &'a Rates,
    /// The fiscal memory (originals of credit notes, capacity).
    pub memory: &'a FiscalMemory,
}

/// The open invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    header: OpenInvoice,
    items: usize,
    sums: LineSums,
    running: Subtotal,
    subtotal_taken: bool,
    comments: BTreeMap<CommentLine, String>,
    payments: Vec<Payment>,
    paid: Decimal,
    pending_until: Option<Instant>,
}

impl Invoice {
    /// What C0 said.
    pub fn header(&self) -> &OpenInvoice {
        &self.header
    }

    /// Invoice type.
    pub fn invoice_type(&self) -> InvoiceType {
        self.header.invoice_type
    }

    /// Number of item lines.
    pub fn item_count(&self) -> usize {
        self.items
    }

    /// The subtotal of the items so far (what 33 answers).
    pub fn subtotal(&self) -> &Subtotal {
        &self.running
    }

    /// Comment lines by slot.
    pub fn comments(&self) -> &BTreeMap<CommentLine, String> {
        &self.comments
    }

    /// Payments, in order.
    pub fn payments(&self) -> &[Payment] {
        &self.payments
    }

    /// Sum of the payments.
    pub fn paid(&self) -> Decimal {
        self.paid
    }

    /// When a pending credit note's check is over.
    pub fn pending_until(&self) -> Option<Instant> {
        self.pending_until
    }
}

/// The state machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvoiceMachine {
    client: Option<Client>,
    invoice: Option<Invoice>,
}

impl InvoiceMachine {
    /// An idle machine.
    pub fn new() -> InvoiceMachine {
        InvoiceMachine::default()
    }

    /// Where the machine is.
    pub fn phase(&self) -> Phase {
        match &self.invoice {
            None if self.client.is_some() => Phase::ClientSet,
            None => Phase::Idle,
            Some(i) if i.pending_until.is_some() => Phase::Pending,
            Some(i) if !i.payments.is_empty() => Phase::Payments,
            Some(i) if i.subtotal_taken => Phase::Subtotal,
            Some(i) if i.items > 0 => Phase::Items,
            Some(_) => Phase::Open,
        }
    }

    /// The client of the current or next invoice (C3).
    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// The open invoice.
    pub fn invoice(&self) -> Option<&Invoice> {
        self.invoice.as_ref()
    }

    /// C3: sets (or replaces) the client of the next invoice.
    pub fn set_client(&mut self, client: Client) -> Result<(), Refusal> {
        if self.invoice.is_some() {
            return Err(Refusal::InvoiceAlreadyOpen);
        }
        self.client = Some(client);
        Ok(())
    }

    /// C0: opens an invoice.
    pub fn open(&mut self, header: OpenInvoice, checks: &Checks<'_>) -> Result<(), Refusal> {
        if self.invoice.is_some() {
            return Err(Refusal::InvoiceAlreadyOpen);
        }
        if header.nif != checks.nif {
            return Err(Refusal::NifMismatch {
                given: header.nif,
                device: checks.nif.to_owned(),
            });
        }
        command::check_rn(&header.rn).map_err(|e| Refusal::InvalidRn(e.to_string()))?;
        if checks.memory.is_full() {
            return Err(Refusal::MemoryFull);
        }
        if let Some(reference) = &header.reference {
            let original = checks.memory.find(&reference.code_def);
            let fits = original.is_some_and(|o| refers_to(header.invoice_type, o.invoice_type));
            if !fits {
                return Err(Refusal::OriginalNotFound(reference.code_def.clone()));
            }
        }
        let usd = header.usd_rate.map(|u| u.rate);
        if let Some(rate) = usd {
            if rate <= Decimal::ZERO || !has_places(rate, 4) {
                return Err(Refusal::InvalidUsdRate(rate));
            }
        }
        let running = LineSums::default().subtotal(header.price_mode, checks.rates, usd)?;
        self.invoice = Some(Invoice {
            header,
            items: 0,
            sums: LineSums::default(),
            running,
            subtotal_taken: false,
            comments: BTreeMap::new(),
            payments: Vec::new(),
            paid: Decimal::ZERO,
            pending_until: None,
        });
        Ok(())
    }

    /// 31: adds an item line.
    pub fn add_item(&mut self, item: &Item, checks: &Checks<'_>) -> Result<(), Refusal> {
        let invoice = self.before_subtotal(Refusal::ItemsClosed)?;
        check_item(item, checks.rates)?;
        let sums = invoice.sums.with_item(item)?;
        let usd = invoice.header.usd_rate.map(|u| u.rate);
        let running = sums.subtotal(invoice.header.price_mode, checks.rates, usd)?;
        invoice.sums = sums;
        invoice.running = running;
        invoice.items += 1;
        Ok(())
    }

    /// 36: sets a comment line (a slot given twice keeps the last text).
    pub fn add_comment(&mut self, comment: Comment) -> Result<(), Refusal> {
        let invoice = self.before_subtotal(Refusal::CommentsClosed)?;
        invoice.comments.insert(comment.line, comment.text);
        Ok(())
    }

    /// 33: closes the items and returns the subtotal; again before any payment, the same.
    pub fn take_subtotal(&mut self) -> Result<Subtotal, Refusal> {
        let invoice = self.invoice_mut()?;
        if invoice.items == 0 {
            return Err(Refusal::NoItem);
        }
        if !invoice.payments.is_empty() {
            return Err(Refusal::PaymentsStarted);
        }
        invoice.subtotal_taken = true;
        Ok(invoice.running.clone())
    }

    /// 35: records a payment.
    pub fn add_payment(&mut self, payment: Payment) -> Result<(), Refusal> {
        let invoice = self.invoice_mut()?;
        if !invoice.subtotal_taken {
            return Err(Refusal::NoSubtotal);
        }
        if payment.amount <= Decimal::ZERO {
            return Err(Refusal::PaymentNotPositive);
        }
        if !has_places(payment.amount, 2) {
            return Err(Refusal::TooPrecise {
                field: "payment amount",
                places: 2,
            });
        }
        let paid = invoice
            .paid
            .checked_add(payment.amount)
            .ok_or(Refusal::OutOfRange)?;
        invoice.paid = paid;
        invoice.payments.push(payment);
        Ok(())
    }

    /// 38 with totals: the open invoice, if it can be finalized with them. Changes nothing.
    pub fn check_finalize(&self, totals: FinalizeTotals) -> Result<&Invoice, Refusal> {
        let invoice = self.invoice.as_ref().ok_or(Refusal::NoOpenInvoice)?;
        if !invoice.subtotal_taken {
            return Err(Refusal::NoSubtotal);
        }
        let expected = invoice.running.finalize_totals();
        if totals.total != expected.total || totals.vat != expected.vat {
            return Err(Refusal::TotalsDiffer {
                total: expected.total,
                vat: expected.vat,
            });
        }
        if invoice.payments.is_empty() {
            return Err(Refusal::NoPayment);
        }
        if invoice.paid < expected.total {
            return Err(Refusal::Shortfall {
                paid: invoice.paid,
                total: expected.total,
            });
        }
        Ok(invoice)
    }

    /// A credit note's 38 answered `P:`: the check is over at `ready_at`.
    pub fn mark_pending(&mut self, ready_at: Instant) {
        if let Some(invoice) = &mut self.invoice {
            invoice.pending_until = Some(ready_at);
        }
    }

    /// The invoice was committed: back to idle, returning it.
    pub fn close(&mut self) -> Option<Invoice> {
        self.client = None;
        self.invoice.take()
    }

    /// 38 `C`: drops the client and the open invoice; nothing is counted.
    pub fn cancel(&mut self) -> Result<(), Refusal> {
        if self.client.is_none() && self.invoice.is_none() {
            return Err(Refusal::NoOpenInvoice);
        }
        self.close();
        Ok(())
    }

    /// The open invoice, unless a finalization is pending.
    fn invoice_mut(&mut self) -> Result<&mut Invoice, Refusal> {
        match &mut self.invoice {
            None => Err(Refusal::NoOpenInvoice),
            Some(i) if i.pending_until.is_some() => Err(Refusal::FinalizePending),
            Some(i) => Ok(i),
        }
    }

    /// The open invoice while items and comments are allowed; `closed` after 33.
    fn before_subtotal(&mut self, closed: Refusal) -> Result<&mut Invoice, Refusal> {
        let invoice = self.invoice_mut()?;
        if invoice.subtotal_taken {
            return Err(closed);
        }
        Ok(invoice)
    }
}

/// FA refers to FV/FT, EA to EV/ET.
fn refers_to(credit: InvoiceType, original: InvoiceType) -> bool {
    use InvoiceType::{Ea, Et, Ev, Fa, Ft, Fv};
    matches!(
        (credit, original),
        (Fa, Fv) | (Fa, Ft) | (Ea, Ev) | (Ea, Et)
    )
}

/// At most `places` decimals (trailing zeros allowed).
fn has_places(value: Decimal, places: u32) -> bool {
    value.round_dp(places) == value
}

/// The checks of one item line that do not depend on the invoice.
fn check_item(item: &Item, rates: &Rates) -> Result<(), Refusal> {
    if item.name.is_empty() {
        return Err(Refusal::EmptyItemName);
    }
    let device = rates[item.group.index()];
    if item.rate != device.unwrap_or(Decimal::ZERO) {
        return Err(Refusal::RateMismatch {
            group: item.group,
            device,
        });
    }
    if item.quantity <= Decimal::ZERO {
        return Err(Refusal::QuantityNotPositive);
    }
    if item.price.is_sign_negative() {
        return Err(Refusal::Negative("price"));
    }
    let precise = |field, value, places| {
        if has_places(value, places) {
            Ok(())
        } else {
            Err(Refusal::TooPrecise { field, places })
        }
    };
    precise("price", item.price, 2)?;
    precise("quantity", item.quantity, 3)?;
    let expected = Item::line_amount_of(item.price, item.quantity).ok_or(Refusal::OutOfRange)?;
    if item.line_amount != expected {
        return Err(Refusal::LineAmountMismatch {
            given: item.line_amount,
            expected,
        });
    }
    if let Some(tax) = &item.specific_tax {
        if tax.amount.is_sign_negative() {
            return Err(Refusal::Negative("specific tax"));
        }
        precise("specific tax", tax.amount, 2)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
