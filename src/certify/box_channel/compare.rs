//! The 33h check (PROTOCOL.md §3.2): before paying, the box's subtotal must equal the
//! gateway's own computation in exactly the fields that guard against a line executed twice or
//! not at all: MV, MVA..MVP, MTA..MTP, MTS. MCUR is information, never compared here.
//!
//! A box with fewer groups sends a shorter 33h: a group it does not report must be one the
//! invoice does not use (the gateway expects 0 there), or the check fails on that group.

use mcf_sfe::reply::Subtotal;
use mcf_sfe::types::TaxGroup;
use rust_decimal::Decimal;

use crate::certify::CertifyError;

/// The first field where `device` differs from `expected`, named, with both values.
pub(crate) fn compare_subtotal(expected: &Subtotal, device: &Subtotal) -> Result<(), CertifyError> {
    check("MV", expected.total, Some(device.total))?;
    let reported = |i: usize| i < device.groups;
    for i in 0..TaxGroup::COUNT {
        let shown = |amounts: &[Decimal; TaxGroup::COUNT]| reported(i).then_some(amounts[i]);
        check(
            Subtotal::TTC_FIELDS[i],
            expected.group_ttc[i],
            shown(&device.group_ttc),
        )?;
        check(
            Subtotal::VAT_FIELDS[i],
            expected.group_vat[i],
            shown(&device.group_vat),
        )?;
    }
    check("MTS", expected.specific_tax, Some(device.specific_tax))
}

/// Compares one amount; `device` is `None` for a group the box's reply does not carry.
fn check(
    field: &'static str,
    expected: Decimal,
    device: Option<Decimal>,
) -> Result<(), CertifyError> {
    let same = match device {
        Some(device) => device == expected,
        None => expected.is_zero(),
    };
    if same {
        return Ok(());
    }
    Err(CertifyError::TotalsMismatch {
        field,
        device: device.map(|value| value.to_string()),
        expected: expected.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn subtotal(mcur: &str) -> Subtotal {
        let mut group_ttc = [Decimal::ZERO; 16];
        let mut group_vat = [Decimal::ZERO; 16];
        group_ttc[1] = dec!(4980.00);
        group_vat[1] = dec!(686.90);
        Subtotal {
            total: dec!(4980.00),
            group_ttc,
            group_vat,
            specific_tax: Decimal::ZERO,
            mcur: mcur.to_owned(),
            groups: 16,
        }
    }

    fn mismatch(expected: &Subtotal, device: &Subtotal) -> (String, String, String) {
        match compare_subtotal(expected, device) {
            Err(CertifyError::TotalsMismatch {
                field,
                device,
                expected,
            }) => (
                field.to_owned(),
                device.unwrap_or_else(|| "not in its 33h reply".to_owned()),
                expected,
            ),
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }

    #[test]
    fn mcur_is_never_compared() {
        // The box of issue 16: a USD invoice whose MCUR is 0.00.
        assert!(compare_subtotal(&subtotal("1.75"), &subtotal("0.00")).is_ok());
        assert!(compare_subtotal(&subtotal("1.75"), &subtotal("")).is_ok());
    }

    #[test]
    fn a_difference_names_the_field_and_both_values() {
        let mut device = subtotal("");
        device.group_vat[1] = dec!(686.89);
        let (field, got, wanted) = mismatch(&subtotal(""), &device);
        assert_eq!(
            (field.as_str(), got.as_str(), wanted.as_str()),
            ("MTB", "686.89", "686.90")
        );
        let message = CertifyError::TotalsMismatch {
            field: "MTB",
            device: Some(got),
            expected: wanted,
        }
        .to_string();
        assert!(
            message.contains("MTB (686.89)") && message.contains("(686.90)"),
            "{message}"
        );
        // A scale difference is no difference.
        let mut scaled = subtotal("");
        scaled.total = dec!(4980.0);
        assert!(compare_subtotal(&subtotal(""), &scaled).is_ok());
    }

    #[test]
    fn a_group_the_box_does_not_report_must_be_unused() {
        let mut short = subtotal("");
        short.groups = 6;
        assert!(compare_subtotal(&subtotal(""), &short).is_ok());
        let mut expected = subtotal("");
        expected.group_ttc[7] = dec!(10.00);
        expected.total = dec!(4990.00);
        short.total = dec!(4990.00);
        let (field, got, _) = mismatch(&expected, &short);
        assert_eq!(
            (field.as_str(), got.as_str()),
            ("MVH", "not in its 33h reply")
        );
    }
}
