//! Why the device refuses a command: the text after `E:`.

use mcf_sfe::types::TaxGroup;
use rust_decimal::Decimal;

use crate::totals::OutOfRange;

/// Why the device refuses a command; the `E:` text is its `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// C3 or C0 while an invoice is open.
    #[error("invoice already open")]
    InvoiceAlreadyOpen,
    /// A command that needs an open invoice.
    #[error("no open invoice")]
    NoOpenInvoice,
    /// C0 for another taxpayer.
    #[error("NIF {given} is not the device NIF {device}")]
    NifMismatch {
        /// NIF in C0.
        given: String,
        /// NIF the device is personalized for.
        device: String,
    },
    /// C0 with an FN the protocol cannot carry.
    #[error("invalid FN: {0}")]
    InvalidRn(String),
    /// C0 when no invoice can be committed any more.
    #[error("fiscal memory full")]
    MemoryFull,
    /// C0 of a credit note whose original is not a finalized invoice of the right kind.
    #[error("original invoice not found: {0}")]
    OriginalNotFound(String),
    /// C0 with a USD rate that is not positive or too precise.
    #[error("invalid usd rate {0}: must be positive with at most 4 decimals")]
    InvalidUsdRate(Decimal),
    /// 31 with a rate other than the group's.
    #[error("rate mismatch for group {group}: device has {}", rate_text(*.device))]
    RateMismatch {
        /// Group of the item.
        group: TaxGroup,
        /// The group's configured rate.
        device: Option<Decimal>,
    },
    /// 31 whose line amount is not price x quantity.
    #[error("line amount mismatch: {given:.2} given, price x quantity is {expected:.2}")]
    LineAmountMismatch {
        /// Line amount in 31.
        given: Decimal,
        /// What the device computes.
        expected: Decimal,
    },
    /// 31 with an empty name.
    #[error("item name must not be empty")]
    EmptyItemName,
    /// 31 with a quantity <= 0.
    #[error("quantity must be positive")]
    QuantityNotPositive,
    /// 31 with a negative amount.
    #[error("{0} must not be negative")]
    Negative(&'static str),
    /// A value with more decimals than the protocol carries.
    #[error("{field} has more than {places} decimals")]
    TooPrecise {
        /// Which value.
        field: &'static str,
        /// Decimals allowed.
        places: u32,
    },
    /// An amount too large for the device.
    #[error("amount out of range")]
    OutOfRange,
    /// 31 after 33.
    #[error("no more items after the subtotal")]
    ItemsClosed,
    /// 36 after 33.
    #[error("comments only before the subtotal")]
    CommentsClosed,
    /// 33 with no item.
    #[error("no item")]
    NoItem,
    /// 33 after a payment.
    #[error("payments already started")]
    PaymentsStarted,
    /// 35 or 38 before 33.
    #[error("subtotal (33h) first")]
    NoSubtotal,
    /// 35 with an amount <= 0.
    #[error("payment amount must be positive")]
    PaymentNotPositive,
    /// 38 whose totals are not the subtotal's.
    #[error("totals differ from subtotal: device has {total:.2},{vat:.2}")]
    TotalsDiffer {
        /// Subtotal MV.
        total: Decimal,
        /// Subtotal VAT.
        vat: Decimal,
    },
    /// 38 with no payment.
    #[error("no payment")]
    NoPayment,
    /// 38 with payments below the total.
    #[error("payment shortfall: paid {paid:.2} of {total:.2}")]
    Shortfall {
        /// Sum of the payments.
        paid: Decimal,
        /// Invoice total.
        total: Decimal,
    },
    /// A command other than 38 while a credit note's 38 is pending.
    #[error("finalization in progress")]
    FinalizePending,
}

fn rate_text(rate: Option<Decimal>) -> String {
    rate.map_or_else(|| "no VAT".to_owned(), |r| format!("{r:.2}"))
}

impl From<OutOfRange> for Refusal {
    fn from(_: OutOfRange) -> Self {
        Refusal::OutOfRange
    }
}
