//! What a credit note refused with 180 would have taken of its original.

use rust_decimal::Decimal;

/// What a credit note refused with 180 would have taken of its original, in CDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditExcess {
    /// The original's codeDEFDGI (the credit note's `reference`).
    pub reference: String,
    /// The original's rn.
    pub original_rn: String,
    /// The original's total.
    pub original_total: Decimal,
    /// The credit notes of it the register holds.
    pub credited: Decimal,
    /// The credit notes of it being certified now.
    pub pending: Decimal,
    /// What is left of it: total - credited - pending.
    pub room: Decimal,
    /// This credit note's total, or the least it can be (`at_least`).
    pub total: Decimal,
    /// Whether `total` is a lower bound (an `ht` credit note before its VAT rates are known).
    pub at_least: bool,
}
