//! Warnings on a certified invoice: what was certified as sent but looks like a mistake of the
//! ERP's (docs/error-codes.md, "Warnings"). Computed from the register entry and the register
//! it is in, so that the answer to the POST, its replay and `GET /api/v1/Invoice/{rn}` say the
//! same; nothing here refuses or changes an invoice.

use rust_decimal::Decimal;
use tracing::warn;

use super::register_writer::blocking;
use super::Certifier;
use crate::i18n::Message;
use crate::model::{reference_of, DeviceTotals, RegisterEntry};
use crate::msg;

/// 301: a USD invoice worth less than one dollar in all (its amounts were likely sent in USD,
/// while they are always in CDF).
pub const USD_AMOUNTS_IN_CDF: u16 = 301;

/// 302: a credit note whose original is not in this register (same organization, same
/// environment): allowed (it may predate the gateway), but its amount could not be compared
/// with the original's total (180) and its reference may be mistyped.
pub const ORIGINAL_NOT_IN_REGISTER: u16 = 302;

/// One warning: a stable code and its text for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The stable code (`warningCode`): 300 and up, never an error code.
    pub code: u16,
    /// Its text (`warningDesc`), rendered in the reader's language.
    pub message: Message,
}

/// The warnings the entry alone tells, in code order (empty for most).
pub fn warnings_of(entry: &RegisterEntry) -> Vec<Warning> {
    usd_amounts_look_like_usd(&entry.request.rn, &entry.request.totals)
        .into_iter()
        .collect()
}

impl Certifier {
    /// The warnings of a certified invoice, in code order: those the entry tells
    /// ([`warnings_of`]), then 302 when it is a credit note whose original its register does
    /// not hold. A register that cannot be read leaves 302 out (logged): the invoice is
    /// certified whatever its warnings. The register is read off the runtime's workers.
    pub async fn warnings(&self, entry: &RegisterEntry) -> Vec<Warning> {
        let mut warnings = warnings_of(entry);
        let request = &entry.request;
        let Some(reference) = request
            .invoice
            .as_deref()
            .and_then(reference_of)
            .filter(|_| request.is_credit_note())
        else {
            return warnings;
        };
        let (org, env) = (request.org.clone(), request.environment);
        let code = reference.clone();
        match blocking(&self.store, move |store| store.holds_code(&org, env, &code)).await {
            Ok(true) => {}
            Ok(false) => warnings.push(Warning {
                code: ORIGINAL_NOT_IN_REGISTER,
                message: msg!(
                    "warn-original-not-in-register",
                    rn = &request.rn,
                    reference = &reference
                ),
            }),
            Err(error) => warn!(
                sequence = entry.sequence,
                %error,
                "cannot tell whether the credit note's original is in the register: warning 302 left out"
            ),
        }
        warnings
    }
}

/// 301: the invoice is in USD (its totals have a USD equivalent), its total is positive and
/// its USD equivalent is below 1.00 USD: the whole invoice is worth less than a dollar, which
/// is what USD prices sent as CDF amounts give (`total 80.00` CDF, `usdTotal 0.03`).
fn usd_amounts_look_like_usd(rn: &str, totals: &DeviceTotals) -> Option<Warning> {
    let usd = totals.usd_equivalent?;
    if totals.total <= Decimal::ZERO || usd >= Decimal::ONE {
        return None;
    }
    Some(Warning {
        code: USD_AMOUNTS_IN_CDF,
        message: msg!(
            "warn-usd-amounts-in-cdf",
            rn = rn,
            usd = crate::i18n::format::plain_amount(usd),
            total = crate::i18n::format::plain_amount(totals.total)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use rust_decimal_macros::dec;

    fn totals(total: Decimal, usd: Option<Decimal>) -> DeviceTotals {
        DeviceTotals {
            total,
            vat: Decimal::ZERO,
            group_ttc: vec![('B', total)],
            group_vat: vec![('B', Decimal::ZERO)],
            specific_tax: Decimal::ZERO,
            usd_equivalent: usd,
            mcur: None,
        }
    }

    #[test]
    fn usd_prices_sent_as_cdf_are_warned() {
        // The case: USD prices gave total 80.00 CDF, usdTotal 0.03.
        let warning =
            usd_amounts_look_like_usd("F-1", &totals(dec!(80.00), Some(dec!(0.03)))).expect("301");
        assert_eq!(warning.code, USD_AMOUNTS_IN_CDF);
        let en = warning.message.render(Lang::En);
        assert!(
            en.contains("0.03 USD") && en.contains("80.00 CDF") && en.contains("F-1"),
            "{en}"
        );
        let fr = warning.message.render(Lang::Fr);
        assert!(fr.contains("0.03 USD") && fr.contains("CDF"), "{fr}");
        assert_ne!(en, fr);
        // Worth so little that its USD equivalent rounds to 0.00.
        assert!(usd_amounts_look_like_usd("F-2", &totals(dec!(5.00), Some(dec!(0.00)))).is_some());
        assert!(usd_amounts_look_like_usd("F-3", &totals(dec!(2849), Some(dec!(0.99)))).is_some());
    }

    #[test]
    fn a_real_usd_invoice_and_a_cdf_invoice_are_not() {
        // One dollar and more: a real USD sale.
        assert!(usd_amounts_look_like_usd("F-1", &totals(dec!(2850), Some(dec!(1.00)))).is_none());
        assert!(
            usd_amounts_look_like_usd("F-2", &totals(dec!(39800), Some(dec!(13.96)))).is_none()
        );
        // A CDF invoice has no USD equivalent, however small.
        assert!(usd_amounts_look_like_usd("F-3", &totals(dec!(80.00), None)).is_none());
        // Nothing to warn about in a zero total.
        assert!(usd_amounts_look_like_usd("F-4", &totals(dec!(0), Some(dec!(0)))).is_none());
    }
}
