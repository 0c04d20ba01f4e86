//! What an invoice comes to at a channel's VAT rates ([`Totals`]), the gateway's own
//! computation each channel checks its answer against: the box's 33h subtotal before paying
//! (PROTOCOL.md §3.2: a resent 31h may have added a line twice; `certify/box_channel/commands.rs`),
//! the DGI's calculation before confirming (`certify/web_api_channel/invoice.rs`). The rules are the
//! box's (PROTOCOL.md §8) as the simulator computes them (`device-sim/src/totals.rs`).
//!
//! Decimal arithmetic, checked; "round" is half away from zero to 2 places:
//! - line amount = round(price x quantity) (already in [`ValidItem::line_amount`]);
//! - per group, lines summed in body order; `ht`: VAT = round(HT x rate / 100), TTC = HT + VAT;
//!   `ttc`: TTC = sum, VAT = round(TTC x rate / (100 + rate)); no rate or 0 %: VAT = 0;
//! - MTS = sum of the specific tax amounts, outside every group; MV = sum of TTC + MTS;
//! - the USD equivalent = round(MV / USD rate), 2 places, when the invoice has a USD rate.

use rust_decimal::{Decimal, RoundingStrategy};

#[cfg(doc)]
use super::ValidItem;
use super::{PriceMode, TaxGroup, ValidInvoice};

/// What an invoice comes to, in CDF, at given VAT rates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    /// The whole invoice: the TTC of every group plus the specific taxes (the box's MV).
    pub total: Decimal,
    /// TTC per group A..P.
    pub group_ttc: [Decimal; TaxGroup::COUNT],
    /// VAT per group A..P.
    pub group_vat: [Decimal; TaxGroup::COUNT],
    /// The specific taxes, outside every group.
    pub specific_tax: Decimal,
    /// round(total / USD rate) with exactly 2 places, for an invoice with a USD rate.
    pub usd_equivalent: Option<Decimal>,
}

impl Totals {
    /// Sum of the group VAT amounts (saturating: never a panic, and a saturated sum never
    /// equals what a channel computed).
    pub fn vat(&self) -> Decimal {
        self.group_vat
            .iter()
            .fold(Decimal::ZERO, |sum, v| sum.saturating_add(*v))
    }
}

impl ValidInvoice {
    /// What this invoice comes to at the channel's `rates` (A..P, `None` = not charged);
    /// `None` if the arithmetic overflows.
    pub fn expected_totals(&self, rates: &[Option<Decimal>; TaxGroup::COUNT]) -> Option<Totals> {
        let mut lines = [Decimal::ZERO; TaxGroup::COUNT];
        let mut specific_tax = Decimal::ZERO;
        for item in &self.items {
            let slot = &mut lines[item.group.index()];
            *slot = slot.checked_add(item.line_amount)?;
            if let Some(tax) = &item.specific_tax {
                specific_tax = specific_tax.checked_add(tax.amount)?;
            }
        }
        let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
        let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
        let mut total = specific_tax;
        let mut vat_total = Decimal::ZERO;
        for i in 0..TaxGroup::COUNT {
            let (ttc, vat) = group_amounts(self.price_mode, lines[i], rates[i])?;
            group_ttc[i] = ttc;
            group_vat[i] = vat;
            total = total.checked_add(ttc)?;
            vat_total = vat_total.checked_add(vat)?;
        }
        let usd_equivalent = match &self.usd_rate {
            Some(usd) => {
                let mut amount = round(total.checked_div(usd.rate)?);
                amount.rescale(2);
                Some(amount)
            }
            None => None,
        };
        Some(Totals {
            total,
            group_ttc,
            group_vat,
            specific_tax,
            usd_equivalent,
        })
    }
}

impl ValidInvoice {
    /// The least and the most the device's total (MV: the TTC of every group plus the
    /// specific taxes, in CDF) can be before the channel gives its VAT rates: one value in
    /// `ttc` mode, where the lines are TTC; in `ht` mode from no VAT at all to VAT at 100 %
    /// (the widest rate the protocol carries) on every line. `None` if the arithmetic
    /// overflows.
    pub fn total_range(&self) -> Option<(Decimal, Decimal)> {
        let mut lines = Decimal::ZERO;
        let mut specific_tax = Decimal::ZERO;
        for item in &self.items {
            lines = lines.checked_add(item.line_amount)?;
            if let Some(tax) = &item.specific_tax {
                specific_tax = specific_tax.checked_add(tax.amount)?;
            }
        }
        let least = lines.checked_add(specific_tax)?;
        match self.price_mode {
            PriceMode::Ttc => Some((least, least)),
            // round(HT x 100 / 100) is HT itself (HT has 2 places): the VAT at most doubles
            // the lines.
            PriceMode::Ht => Some((least, least.checked_add(lines)?)),
        }
    }
}

fn round(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// (TTC, VAT) of one group whose line amounts sum to `lines`.
fn group_amounts(
    mode: PriceMode,
    lines: Decimal,
    rate: Option<Decimal>,
) -> Option<(Decimal, Decimal)> {
    let Some(rate) = rate.filter(|r| !r.is_zero()) else {
        return Some((lines, Decimal::ZERO));
    };
    let taxed = lines.checked_mul(rate)?;
    match mode {
        PriceMode::Ht => {
            let vat = round(taxed.checked_div(Decimal::ONE_HUNDRED)?);
            Some((lines.checked_add(vat)?, vat))
        }
        PriceMode::Ttc => {
            let vat = round(taxed.checked_div(Decimal::ONE_HUNDRED.checked_add(rate)?)?);
            Some((lines, vat))
        }
    }
}
