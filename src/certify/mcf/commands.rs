//! A valid invoice as box commands (PROTOCOL.md §4): C3h, C0h, 31h per item, 36h per
//! comment, 33h (checked against the gateway's own computation, `compare.rs`), the payments
//! (checked to cover the total) as 35h; 38h `C` to cancel; and what the box's replies become
//! in the register (its totals, its security elements).

use mcf_sfe::command::code;
use mcf_sfe::reply::{Anomaly, Certification, Subtotal};
use mcf_sfe::types::TaxGroup;
use mcf_sfe::{Command, Reply};
use rust_decimal::Decimal;
use tracing::{info, warn};

use super::compare::compare_subtotal;
use super::unavailable;
use crate::certify::invoice::{Seller, Totals, ValidInvoice};
use crate::certify::CertifyError;
use crate::device::PortSession;
use crate::model::{DeviceTotals, SecurityElements};

/// C3, C0, items, comments, 33 (checked), payments (checked): everything before the intent.
/// Returns the box's subtotal and the gateway's own, when the rates let it compute one.
pub(super) async fn prepare(
    session: &mut PortSession<'_>,
    invoice: &ValidInvoice,
    seller: &Seller,
    rates: &[Option<Decimal>; TaxGroup::COUNT],
) -> Result<(Subtotal, Option<Subtotal>), CertifyError> {
    let expected = invoice.expected_totals(rates).and_then(|t| subtotal_of(&t));
    if let Some(expected) = &expected {
        if expected.total.is_zero() {
            // The box takes only positive payments and needs one to finalize.
            return Err(CertifyError::ZeroTotal);
        }
        if Reply::Subtotal(expected.clone())
            .encode(code::SUBTOTAL)
            .is_err()
        {
            return Err(CertifyError::TotalsTooLarge);
        }
    }
    // Always sent, empty when there is no client: it also clears a client left by an
    // invoice that was cancelled.
    expect_done(session, Command::SetClient(invoice.client.clone())).await?;
    expect_done(session, Command::OpenInvoice(invoice.open_command(seller))).await?;
    for item in &invoice.items {
        let rate = rates[item.group.index()];
        expect_done(session, Command::Item(item.to_command(rate))).await?;
    }
    for comment in &invoice.comments {
        expect_done(session, Command::Comment(comment.clone())).await?;
    }
    let subtotal = match session
        .execute(Command::Subtotal)
        .await
        .map_err(unavailable)?
    {
        Reply::Subtotal(subtotal) => subtotal,
        Reply::Refused(text) => return Err(CertifyError::DeviceRefused { text }),
        other => {
            return Err(CertifyError::Internal(format!(
                "unexpected answer to 33h: {other:?}"
            )))
        }
    };
    if let Some(expected) = &expected {
        compare_subtotal(expected, &subtotal)?;
        if expected.mcur != subtotal.mcur {
            // Information only: some boxes send 0.00, or nothing, for every invoice.
            let anomaly = Anomaly {
                field: "MCUR",
                raw: subtotal.mcur.clone(),
                expected:
                    "the invoice's total at its USD rate, or empty without one (PROTOCOL.md §8)",
            };
            session.report_anomaly(code::SUBTOTAL, anomaly).await;
        }
    }
    let paid = invoice.payments_total();
    if !invoice.payments.is_empty() && paid < subtotal.total {
        return Err(CertifyError::PaymentsShort {
            paid,
            total: subtotal.total,
        });
    }
    for payment in invoice.payment_commands(subtotal.total) {
        expect_done(session, Command::Payment(payment)).await?;
    }
    Ok((subtotal, expected))
}

/// The gateway's `totals` as the box's 33h reply carries them: every group, and MCUR the
/// USD equivalent as the box writes it (`None` if it cannot be written).
pub(super) fn subtotal_of(totals: &Totals) -> Option<Subtotal> {
    let mcur = match totals.usd_equivalent {
        Some(usd) => mcf_sfe::fields::amount("MCUR", usd).ok()?,
        None => String::new(),
    };
    Some(Subtotal {
        total: totals.total,
        group_ttc: totals.group_ttc,
        group_vat: totals.group_vat,
        specific_tax: totals.specific_tax,
        mcur,
        groups: TaxGroup::COUNT,
    })
}

/// Sends a command whose only good answer is an empty reply.
async fn expect_done(session: &mut PortSession<'_>, command: Command) -> Result<(), CertifyError> {
    let name = code::name(command.code());
    match session.execute(command).await.map_err(unavailable)? {
        Reply::Done => Ok(()),
        Reply::Refused(text) => Err(CertifyError::DeviceRefused { text }),
        other => Err(CertifyError::Internal(format!(
            "unexpected answer to {name}: {other:?}"
        ))),
    }
}

/// 38h `C`, best effort: the box must not stay blocked, and a refusal means nothing was open.
pub(super) async fn cancel(session: &mut PortSession<'_>, device: &str) {
    match session.execute(Command::Cancel).await {
        Ok(Reply::Refused(text)) => info!(device, %text, "cancel: nothing to cancel"),
        Ok(_) => info!(device, "open invoice cancelled"),
        Err(error) => warn!(device, %error, "cancel could not be sent"),
    }
}

/// The device's totals, keeping only the groups that have an amount.
pub(super) fn device_totals(subtotal: &Subtotal, usd_equivalent: Option<Decimal>) -> DeviceTotals {
    let pick = |amounts: &[Decimal; TaxGroup::COUNT]| {
        TaxGroup::all()
            .zip(amounts.iter())
            .filter(|(_, amount)| !amount.is_zero())
            .map(|(group, amount)| (group.letter(), *amount))
            .collect::<Vec<_>>()
    };
    DeviceTotals {
        total: subtotal.total,
        vat: subtotal.vat(),
        group_ttc: pick(&subtotal.group_ttc),
        group_vat: pick(&subtotal.group_vat),
        specific_tax: subtotal.specific_tax,
        usd_equivalent,
        mcur: (!subtotal.mcur.is_empty()).then(|| subtotal.mcur.clone()),
    }
}

/// The security elements of a certification.
pub(super) fn security_elements(certification: &Certification) -> SecurityElements {
    SecurityElements {
        code_def: certification.code_def.clone(),
        qr_code: certification.qr_code(),
        counters: certification.counters(),
        nim: certification.mid.clone(),
        date_time: certification.at,
        date_time_as_sent: None,
    }
}

#[cfg(test)]
mod tests;
