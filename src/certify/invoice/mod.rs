//! Validation of the request body: from an [`InvoiceRequest`] to a [`ValidInvoice`], the
//! invoice in the gateway's own terms (header, items, payments, its canonical digest; no
//! channel's types), or a [`ValidationError`] (HTTP 400) with one stable code per rule
//! ([`code`], documented in `docs/error-codes.md`). Each channel translates a
//! [`ValidInvoice`]: the box into its MCF-SFE commands (`certify/box_channel/commands/translate.rs`),
//! the web API into its JSON body (`certify/web_api_channel/invoice.rs`).
//!
//! Everything a channel would refuse for the content alone is refused here, before the
//! queue: enumerations, decimals and their places, coherence of the optional parts, and the
//! length of every text, which the caller's [`WireCheck`] checks (the box's frames,
//! `certify/box_channel/commands.rs`, whatever the channel). What depends on the channel's
//! state (its VAT rates, its NIF, the total the payments must cover) is checked by the
//! certification run, against what the invoice comes to at its rates (`expected_totals`).
//!
//! Submodules: `json` (reading the body with JSON paths, for `request::parse_body`), `header`
//! (rn, type, mode, seller, currency, reference, operator, client, comments), `items`,
//! `payments`, `kinds` (the enumerations), `canonical` (the digest), `totals` (what the
//! invoice comes to), `code` (the error codes).

use chrono::NaiveDate;
use rust_decimal::Decimal;

use request::InvoiceRequest;

use crate::i18n::Message;
use crate::msg;

pub use header::{is_reserved, MAX_RN_LEN};
pub use items::line_amount;
pub(crate) use json::control_name;
pub use kinds::{
    CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup,
};
pub use request::parse_body;
pub use totals::Totals;

mod canonical;
pub mod code;
mod header;
mod items;
mod json;
mod kinds;
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

/// The seller, from the API key's organization: what each channel sends as the seller, and
/// what `nif`/`isF` must equal when the client sends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seller {
    /// Seller NIF.
    pub nif: String,
    /// ISF identifier.
    pub isf: String,
}

/// The client (`client`); every field empty when the body had none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// `type` (PP, PM...), as sent.
    pub client_type: String,
    /// NIF.
    pub nif: String,
    /// Name.
    pub name: String,
    /// Address.
    pub address: String,
    /// Telephone or other contact.
    pub contact: String,
    /// E-mail.
    pub email: String,
    /// RCCM (trade register number).
    pub rccm: String,
}

/// The original of a credit note (`reference`, `referenceType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditReference {
    /// Why it refers to the original (COR when absent).
    pub kind: ReferenceType,
    /// The original's codeDEFDGI.
    pub code_def: String,
}

/// The USD rate of a USD invoice (`curRate`, `curDate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsdRate {
    /// CDF per USD, > 0, at most 4 decimals.
    pub rate: Decimal,
    /// The calendar date of `curDate`.
    pub date: NaiveDate,
}

/// A specific tax of an item line (`taxSpecificValue`, `taxSpecificAmount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecificTax {
    /// The rate in percent; `None` for an amount given without one.
    pub rate: Option<Decimal>,
    /// The amount.
    pub amount: Decimal,
}

/// A price change of an item line (`originalPrice`, `priceModification`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceChange {
    /// The price before the change.
    pub original_price: Decimal,
    /// Why it changed.
    pub description: String,
}

/// One comment line (`cmta`..`cmth`), not empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// Which line.
    pub line: CommentLine,
    /// Its text.
    pub text: String,
}

/// One payment (method and amount; its currency fields go to the digest only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payment {
    /// Method.
    pub method: PaymentMethod,
    /// Amount, > 0, at most 2 decimals.
    pub amount: Decimal,
}

/// One validated item line. Its line amount is what the channels compute (round half away
/// from zero of price x quantity); only the group's rate is missing to certify it.
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

/// A request body that passed every content rule: the invoice each channel certifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidInvoice {
    /// The client's invoice number (FN).
    pub rn: String,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// Price mode.
    pub price_mode: PriceMode,
    /// The client; all fields empty when the body had no `client`.
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
    /// FA or EA.
    pub fn is_credit_note(&self) -> bool {
        self.invoice_type.is_credit_note()
    }

    /// Whether the body had a client with at least one non-empty field.
    pub fn has_client(&self) -> bool {
        self.client != Client::default()
    }

    /// Sum of the payments (0 when none). Validation bounds it by [`MAX_AMOUNT`]; the sum
    /// saturates rather than panic on hand-made values (a saturated sum never equals a
    /// channel's total).
    pub fn payments_total(&self) -> Decimal {
        self.payments
            .iter()
            .fold(Decimal::ZERO, |sum, p| sum.saturating_add(p.amount))
    }
}

/// What the wire the invoice travels on refuses for its content alone (a text too long for
/// its frame...), checked by [`validate`] after every content rule: the box's frames
/// (`check_frames` in `certify/box_channel/commands.rs`), for every channel.
pub type WireCheck = fn(&ValidInvoice, &Seller) -> Result<(), ValidationError>;

/// The largest canonical form kept in the register with its intent. The intent record and
/// the certified record each carry it as a JSON string (escaping can double it), under the
/// journal's 1 MiB record limit; the default body limit (256 KiB) never reaches it.
pub const MAX_KEPT_BYTES: usize = 384 * 1024;

/// Checks `request` against every content rule, in a fixed order (the first failure is
/// reported): rn, type, mode, seller ids, currency, reference, operator, client, items,
/// payments, comments, then `wire` (the device frames of every command).
pub fn validate(
    request: InvoiceRequest,
    seller: &Seller,
    wire: WireCheck,
) -> Result<ValidInvoice, ValidationError> {
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
        payments: payments.iter().map(|p| p.payment).collect(),
        digest: String::new(),
        canonical: String::new(),
    };
    wire(&invoice, seller)?;
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
