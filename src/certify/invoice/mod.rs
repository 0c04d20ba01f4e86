//! Validation of the request body: from an [`InvoiceRequest`] to a [`ValidInvoice`] typed with
//! `mcf_sfe`'s commands, or a [`ValidationError`] (HTTP 400) with one stable code per rule
//! ([`code`], documented in `docs/error-codes.md`).
//!
//! Everything the device would refuse for the content alone is refused here, before the
//! queue: enumerations, decimals and their places, coherence of the optional parts, and the
//! length of every text, checked by encoding the real commands (31h with a rate of 100.00,
//! the widest). What depends on the device's state (its VAT rates, its NIF, the total the
//! payments must cover) is checked by the certification run; [`ValidInvoice`] gives it the
//! commands and what the invoice comes to at the channel's rates (`expected_totals`).
//!
//! Submodules: `json` (reading the body with JSON paths, for `request::parse_body`), `header`
//! (rn, type, mode, seller, currency, reference, operator, client, comments), `items`,
//! `payments`, `frames` (device frame checks), `canonical` (the digest), `totals` (what
//! the invoice comes to), `code` (the error codes).

use mcf_sfe::command::{
    Client, Comment, CreditReference, Item, OpenInvoice, Payment, PriceChange, SpecificTax, UsdRate,
};
use mcf_sfe::types::{InvoiceType, ItemType, PaymentMethod, PriceMode, TaxGroup};
use rust_decimal::Decimal;

use request::InvoiceRequest;

use crate::i18n::Message;
use crate::msg;

pub use request::parse_body;
pub use totals::Totals;

mod canonical;
pub mod code;
mod frames;
mod header;
mod items;
mod json;
mod payments;
pub mod request;
#[cfg(test)]
pub(crate) mod tests;
mod totals;

/// Largest amount accepted (price, line amount, specific tax, payment): 15 integer digits,
/// so that no sum or tax of a body's worth of lines can overflow `Decimal`.
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(1_569_325_055, 23_283_064, 0, false, 2);

/// Longest `client.typeDesc`, in bytes (it is not sent to the device, only digested).
pub const MAX_TYPE_DESC: usize = 200;

/// A refused request body (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// The rule, see [`code`].
    pub code: u16,
    /// JSON path of the field at fault (`items[2].price`), `None` for the body as a whole.
    pub field: Option<String>,
    /// What is wrong, for a human (`errorDesc`, in the reader's language; English in logs).
    pub message: Message,
}

impl ValidationError {
    /// An error about the field at `path`.
    pub fn at(code: u16, path: &str, message: Message) -> ValidationError {
        ValidationError {
            code,
            field: Some(path.to_owned()),
            message,
        }
    }

    /// An error about the body as a whole.
    pub fn body(code: u16, message: Message) -> ValidationError {
        ValidationError {
            code,
            field: None,
            message,
        }
    }

    /// A required field is absent.
    pub(crate) fn missing(path: &str) -> ValidationError {
        ValidationError::at(
            code::MISSING_FIELD,
            path,
            msg!("err-field-required", field = path),
        )
    }
}

/// A value the client sent, as the messages quote it: `"F,1"` (escapes as Rust writes them).
pub(crate) fn quoted(value: &str) -> String {
    format!("{value:?}")
}

/// The seller, from the API key's organization: injected into C0h, and what `nif`/`isF` must
/// equal when the client sends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seller {
    /// Seller NIF.
    pub nif: String,
    /// ISF identifier.
    pub isf: String,
}

/// One validated item line. Its line amount is what the device computes (round half away
/// from zero of price x quantity); only the group's rate is missing to make the 31h.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidItem {
    /// Label, not blank.
    pub name: String,
    /// Item code; `None` when absent or empty.
    pub code: Option<String>,
    /// Kind.
    pub item_type: ItemType,
    /// VAT group.
    pub group: TaxGroup,
    /// Unit price, >= 0, at most 2 decimals.
    pub price: Decimal,
    /// Quantity, > 0, at most 3 decimals.
    pub quantity: Decimal,
    /// round(price x quantity), 2 places (HT in `ht` mode, TTC in `ttc` mode).
    pub line_amount: Decimal,
    /// Specific tax; `None` when absent or 0 % with a zero amount.
    pub specific_tax: Option<SpecificTax>,
    /// Price change; `None` when absent, or when `originalPrice` equals `price` with no text.
    pub price_change: Option<PriceChange>,
}

impl ValidItem {
    /// The 31h command, with the group's `rate` from C1h; `None` (a group that charges no
    /// VAT) is sent as `0.00` (PROTOCOL.md §5.6).
    pub fn to_command(&self, rate: Option<Decimal>) -> Item {
        Item {
            name: self.name.clone(),
            code: self.code.clone(),
            item_type: self.item_type,
            group: self.group,
            rate: rate.unwrap_or(Decimal::ZERO),
            line_amount: self.line_amount,
            price: self.price,
            quantity: self.quantity,
            specific_tax: self.specific_tax,
            price_change: self.price_change.clone(),
        }
    }
}

/// A request body that passed every content rule: what the device sequence needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidInvoice {
    /// The client's invoice number (FN), checked by `check_rn`.
    pub rn: String,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// Price mode.
    pub price_mode: PriceMode,
    /// C3h; all fields empty when the body had no `client` (then C3h may be skipped).
    pub client: Client,
    /// Operator id (may be empty).
    pub operator_id: String,
    /// Operator name (not empty).
    pub operator_name: String,
    /// Original invoice, for FA and EA only (default type COR).
    pub reference: Option<CreditReference>,
    /// USD rate and date, for USD invoices only.
    pub usd_rate: Option<UsdRate>,
    /// `CDF` or `USD`.
    pub currency_code: String,
    /// Item lines, at least one, in body order.
    pub items: Vec<ValidItem>,
    /// Comment lines, in slot order A..H, only the non-empty ones.
    pub comments: Vec<Comment>,
    /// Payments in body order; empty when the client sent none.
    pub payments: Vec<Payment>,
    /// Lowercase hex SHA-256 of [`ValidInvoice::canonical`].
    pub digest: String,
    /// The canonical form of the validated request (see `docs/error-codes.md`, "Request
    /// digest"): compact JSON, fixed key order, normalized decimals.
    pub canonical: String,
}

impl ValidInvoice {
    /// C0h for `seller`.
    pub fn open_command(&self, seller: &Seller) -> OpenInvoice {
        OpenInvoice {
            operator_id: self.operator_id.clone(),
            operator_name: self.operator_name.clone(),
            nif: seller.nif.clone(),
            invoice_type: self.invoice_type,
            reference: self.reference.clone(),
            price_mode: self.price_mode,
            isf: seller.isf.clone(),
            rn: self.rn.clone(),
            usd_rate: self.usd_rate,
        }
    }

    /// FA or EA.
    pub fn is_credit_note(&self) -> bool {
        self.invoice_type.is_credit_note()
    }

    /// Whether the body had a client with at least one non-empty field (send C3h then).
    pub fn has_client(&self) -> bool {
        self.client != Client::default()
    }

    /// Sum of the payments (0 when none). Validation bounds it by [`MAX_AMOUNT`]; the sum
    /// saturates rather than panic on hand-made values (a saturated sum never equals a
    /// device total).
    pub fn payments_total(&self) -> Decimal {
        self.payments
            .iter()
            .fold(Decimal::ZERO, |sum, p| sum.saturating_add(p.amount))
    }

    /// The 35h commands to send once the device total `total` (33h MV) is known: the client's
    /// payments, or one ESPECES payment of `total` when it sent none (docs/design.md §4). Whether
    /// they cover `total` is the caller's check.
    pub fn payment_commands(&self, total: Decimal) -> Vec<Payment> {
        if self.payments.is_empty() {
            vec![Payment {
                method: PaymentMethod::Especes,
                amount: total,
            }]
        } else {
            self.payments.clone()
        }
    }
}

/// The largest canonical form kept in the register with its intent. The intent record and
/// the certified record each carry it as a JSON string (escaping can double it), under the
/// journal's 1 MiB record limit; the default body limit (256 KiB) never reaches it.
pub const MAX_KEPT_BYTES: usize = 384 * 1024;

/// Checks `request` against every content rule, in a fixed order (the first failure is
/// reported): rn, type, mode, seller ids, currency, reference, operator, client, items,
/// payments, comments, then the device frames of every command.
pub fn validate(request: InvoiceRequest, seller: &Seller) -> Result<ValidInvoice, ValidationError> {
    let rn = header::rn(&request)?;
    let invoice_type = header::invoice_type(&request)?;
    let price_mode = header::price_mode(&request)?;
    header::seller_ids(&request, seller)?;
    let currency = header::currency(&request)?;
    let reference = header::reference(&request, invoice_type)?;
    let (operator_id, operator_name) = header::operator(&request)?;
    let (client, type_desc) = header::client(&request)?;
    let items = items::items(&request)?;
    let payments = payments::payments(&request)?;
    let comments = header::comments(&request);
    let mut invoice = ValidInvoice {
        rn,
        invoice_type,
        price_mode,
        client,
        operator_id,
        operator_name,
        reference,
        usd_rate: currency.usd_rate,
        currency_code: currency.code.clone(),
        items,
        comments,
        payments: payments.iter().map(|p| p.command).collect(),
        digest: String::new(),
        canonical: String::new(),
    };
    frames::check(&invoice, seller)?;
    invoice.canonical = canonical::form(&invoice, &currency, &type_desc, &payments);
    if invoice.canonical.len() > MAX_KEPT_BYTES {
        return Err(ValidationError::body(
            code::TOO_LARGE_TO_KEEP,
            msg!(
                "err-too-large-to-keep",
                length = invoice.canonical.len(),
                max = MAX_KEPT_BYTES
            ),
        ));
    }
    invoice.digest = canonical::digest(&invoice.canonical);
    Ok(invoice)
}
