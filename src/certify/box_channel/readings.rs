//! What the gateway takes from the box's own words around one invoice: the VAT rates of C1h
//! (or the device's configured table), and the checks PROTOCOL.md §6.2 makes on `R:`, which
//! are reported and never refuse (the box certified).

use mcf_sfe::command::code;
use mcf_sfe::reply::{Anomaly, Certification, DeviceState, Last};
use mcf_sfe::types::{InvoiceType, TaxGroup};
use rust_decimal::Decimal;

use super::commands::{invoice_type, tax_group};
use crate::certify::invoice::ValidInvoice;
use crate::certify::CertifyError;
use crate::device::PortSession;
use crate::model::LostInvoice;
use crate::msg;

/// The VAT rates of this invoice's groups: the box's (C1h), or the device's configured ones
/// when its C1h carries none. A rate the box gives unreadably stops only an invoice that uses
/// that group.
pub(crate) fn rates_for(
    invoice: &ValidInvoice,
    state: &DeviceState,
    fallback: &[Option<Decimal>; TaxGroup::COUNT],
) -> Result<[Option<Decimal>; TaxGroup::COUNT], CertifyError> {
    let Some(reported) = &state.rates else {
        return Ok(*fallback);
    };
    let mut rates = [None; TaxGroup::COUNT];
    for (group, rate) in TaxGroup::all().zip(reported) {
        match rate.percent() {
            Ok(rate) => rates[group.index()] = rate,
            Err(raw)
                if invoice
                    .items
                    .iter()
                    .any(|item| tax_group(item.group) == group) =>
            {
                return Err(CertifyError::DeviceNotReady {
                    reason: msg!(
                        "reason-rate-unreadable",
                        group = group.to_string(),
                        value = format!("{raw:?}")
                    ),
                })
            }
            Err(_) => {}
        }
    }
    Ok(rates)
}

/// The checks PROTOCOL.md §6.2 makes on `R:` against the C1h read before the invoice: each
/// difference is reported (logged once, counted), never refused: the box certified.
pub(crate) async fn report_certification_oddities(
    session: &mut PortSession<'_>,
    invoice: &ValidInvoice,
    state: &DeviceState,
    cert: &Certification,
) {
    let kind_count = if cert.invoice_type.is_credit_note() {
        state.frc
    } else {
        state.fvc
    };
    let sent: InvoiceType = invoice_type(invoice.invoice_type);
    let checks = [
        (
            "FT",
            cert.invoice_type.to_string(),
            sent.to_string(),
            "the type sent in C0h",
        ),
        ("MID", cert.mid.clone(), state.mid.clone(), "C1h's MID"),
        ("NIF", cert.nif.clone(), state.nif.clone(), "C1h's NIF"),
        // Counters are the box's numbers: saturating, never a panic on a hostile value.
        (
            "TC",
            cert.tc.to_string(),
            state.tc.saturating_add(1).to_string(),
            "C1h's TC + 1",
        ),
        (
            "FC",
            cert.fc.to_string(),
            kind_count.saturating_add(1).to_string(),
            "C1h's FVC or FRC + 1",
        ),
    ];
    for (field, raw, want, expected) in checks {
        if raw != want {
            let oddity = Anomaly {
                field,
                raw,
                expected,
            };
            session.report_oddity(code::FINALIZE, oddity).await;
        }
    }
}

/// What a box's C1h says of its last invoice, whose number is its total counter `tc` (a
/// register behind its box keeps it: `register_behind.rs`); `None` when C1h names none or
/// cannot be read.
pub(crate) fn last_invoice(tc: u64, last: &Last) -> Option<LostInvoice> {
    let last = last.invoice()?;
    (!last.rn.is_empty() && tc > 0).then(|| LostInvoice {
        number: tc,
        rn: last.rn.clone(),
        code_def: last.code_def.clone(),
        invoice_type: last.invoice_type.to_string(),
        at: Some(last.at),
    })
}
