//! Tax computation: from the item lines of an invoice to the 33h subtotal.
//!
//! All money is [`Decimal`], rounded half away from zero to 2 places, and every operation is
//! checked: an amount too large for the arithmetic is an error, never a panic.
//!
//! - `ht` mode: per group `HT = sum of lines`, `VAT = round(HT x rate / 100)`, `TTC = HT + VAT`.
//! - `ttc` mode: per group `TTC = sum of lines`, `VAT = round(TTC x rate / (100 + rate))`.
//! - A group without a rate charges no VAT: `TTC = sum of lines`.
//! - Specific taxes (MTS) are outside every group; `MV = sum of TTC + MTS`, MT = sum of VAT.
//! - `MCUR = round(MV / usd rate)` when the invoice has a USD rate.

use mcf_sfe::command::Item;
use mcf_sfe::reply::Subtotal;
use mcf_sfe::types::{PriceMode, TaxGroup};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::config::Rates;

/// An amount too large for the device's arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("amount out of range")]
pub struct OutOfRange;

/// Rounds an amount half away from zero to 2 places.
pub fn round_amount(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// The line amounts of an invoice summed per VAT group, and its specific taxes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineSums {
    /// Sum of the line amounts of each group A..P (HT or TTC, as the price mode says).
    pub groups: [Decimal; TaxGroup::COUNT],
    /// Sum of the specific tax amounts of every line (MTS).
    pub specific_tax: Decimal,
}

impl LineSums {
    /// These sums with one more line; `self` is left as it was.
    pub fn with_item(&self, item: &Item) -> Result<LineSums, OutOfRange> {
        let mut next = *self;
        let slot = &mut next.groups[item.group.index()];
        *slot = slot.checked_add(item.line_amount).ok_or(OutOfRange)?;
        if let Some(tax) = &item.specific_tax {
            next.specific_tax = next
                .specific_tax
                .checked_add(tax.amount)
                .ok_or(OutOfRange)?;
        }
        Ok(next)
    }

    /// The 33h subtotal of these lines.
    pub fn subtotal(
        &self,
        mode: PriceMode,
        rates: &Rates,
        usd_rate: Option<Decimal>,
    ) -> Result<Subtotal, OutOfRange> {
        let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
        let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
        let mut total = self.specific_tax;
        // MT is summed again (unchecked) by `Subtotal::vat`: it must be in range too.
        let mut vat_total = Decimal::ZERO;
        for group in TaxGroup::all() {
            let i = group.index();
            let (ttc, vat) = group_amounts(mode, self.groups[i], rates[i])?;
            group_ttc[i] = ttc;
            group_vat[i] = vat;
            total = total.checked_add(ttc).ok_or(OutOfRange)?;
            vat_total = vat_total.checked_add(vat).ok_or(OutOfRange)?;
        }
        let mcur = match usd_rate {
            Some(rate) => {
                let usd = round_amount(total.checked_div(rate).ok_or(OutOfRange)?);
                mcf_sfe::fields::amount("MCUR", usd).map_err(|_| OutOfRange)?
            }
            None => String::new(),
        };
        Ok(Subtotal {
            total,
            group_ttc,
            group_vat,
            specific_tax: self.specific_tax,
            mcur,
            groups: TaxGroup::COUNT,
        })
    }
}

/// (TTC, VAT) of one group whose line amounts sum to `lines`.
pub fn group_amounts(
    mode: PriceMode,
    lines: Decimal,
    rate: Option<Decimal>,
) -> Result<(Decimal, Decimal), OutOfRange> {
    let Some(rate) = rate.filter(|r| !r.is_zero()) else {
        return Ok((lines, Decimal::ZERO));
    };
    let taxed = lines.checked_mul(rate).ok_or(OutOfRange)?;
    match mode {
        PriceMode::Ht => {
            let vat = round_amount(taxed.checked_div(Decimal::ONE_HUNDRED).ok_or(OutOfRange)?);
            Ok((lines.checked_add(vat).ok_or(OutOfRange)?, vat))
        }
        PriceMode::Ttc => {
            let divisor = Decimal::ONE_HUNDRED.checked_add(rate).ok_or(OutOfRange)?;
            let vat = round_amount(taxed.checked_div(divisor).ok_or(OutOfRange)?);
            Ok((lines, vat))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeviceConfig;
    use mcf_sfe::command::SpecificTax;
    use mcf_sfe::types::ItemType;
    use rust_decimal_macros::dec;

    fn item(group: char, rate: Decimal, price: Decimal, quantity: Decimal) -> Item {
        Item::new(
            "X",
            ItemType::Bie,
            TaxGroup::from_letter(group).unwrap(),
            rate,
            price,
            quantity,
        )
        .unwrap()
    }

    fn sums(items: &[Item]) -> LineSums {
        items
            .iter()
            .fold(LineSums::default(), |s, i| s.with_item(i).unwrap())
    }

    fn index(letter: char) -> usize {
        TaxGroup::from_letter(letter).unwrap().index()
    }

    #[test]
    fn ttc_mode_extracts_the_vat_from_the_line_sum() {
        let rates = DeviceConfig::default().rates;
        let lines = [item('B', dec!(16), dec!(600.00), dec!(2))];
        let s = sums(&lines).subtotal(PriceMode::Ttc, &rates, None).unwrap();
        assert_eq!(s.total, dec!(1200.00));
        assert_eq!(s.group_ttc[index('B')], dec!(1200.00));
        assert_eq!(s.group_vat[index('B')], dec!(165.52));
        assert_eq!(s.vat(), dec!(165.52));
        assert_eq!(s.mcur, "");
    }

    #[test]
    fn ht_mode_adds_the_vat_per_group() {
        let rates = DeviceConfig::default().rates;
        let lines = [
            item('B', dec!(16), dec!(600.00), dec!(2)),
            item('C', dec!(5), dec!(33.33), dec!(3)),
            item('A', dec!(0), dec!(10.00), dec!(1)),
        ];
        let s = sums(&lines).subtotal(PriceMode::Ht, &rates, None).unwrap();
        // B: 1200.00 + 192.00; C: 99.99 + round(4.9995) = 5.00; A: not charged.
        assert_eq!(s.group_vat[index('B')], dec!(192.00));
        assert_eq!(s.group_ttc[index('B')], dec!(1392.00));
        assert_eq!(s.group_vat[index('C')], dec!(5.00));
        assert_eq!(s.group_ttc[index('C')], dec!(104.99));
        assert_eq!(s.group_ttc[index('A')], dec!(10.00));
        assert_eq!(s.total, dec!(1506.99));
        assert_eq!(s.vat(), dec!(197.00));
    }

    #[test]
    fn rounding_is_half_away_from_zero_per_group_not_per_line() {
        let rates = DeviceConfig::default().rates;
        // Two lines of 0.10 at 5 % ht: per line 0.005 -> 0.01 each, per group 0.01 once.
        let lines = [
            item('C', dec!(5), dec!(0.10), dec!(1)),
            item('C', dec!(5), dec!(0.10), dec!(1)),
        ];
        let s = sums(&lines).subtotal(PriceMode::Ht, &rates, None).unwrap();
        assert_eq!(s.group_vat[index('C')], dec!(0.01));
        assert_eq!(round_amount(dec!(0.005)), dec!(0.01));
        assert_eq!(round_amount(dec!(-0.005)), dec!(-0.01));
    }

    #[test]
    fn specific_taxes_are_outside_the_groups_and_usd_is_rounded() {
        let rates = DeviceConfig::default().rates;
        let mut line = item('E', dec!(0), dec!(1000.00), dec!(1));
        line.specific_tax = Some(SpecificTax {
            rate: Some(dec!(10)),
            amount: dec!(100.00),
        });
        let s = sums(&[line])
            .subtotal(PriceMode::Ttc, &rates, Some(dec!(2850)))
            .unwrap();
        assert_eq!(s.specific_tax, dec!(100.00));
        assert_eq!(s.group_ttc[index('E')], dec!(1000.00));
        assert_eq!(s.total, dec!(1100.00));
        assert_eq!(s.vat(), dec!(0));
        // 1100 / 2850 = 0.38596...
        assert_eq!(s.usd_equivalent(), Some(dec!(0.39)));
    }

    #[test]
    fn amounts_beyond_the_arithmetic_are_an_error_not_a_panic() {
        let rates = DeviceConfig::default().rates;
        let mut huge = item('B', dec!(16), dec!(1), dec!(1));
        huge.line_amount = Decimal::MAX;
        let one = sums(&[huge.clone()]);
        assert_eq!(one.with_item(&huge), Err(OutOfRange));
        assert_eq!(one.subtotal(PriceMode::Ht, &rates, None), Err(OutOfRange));
    }
}
