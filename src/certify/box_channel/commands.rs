//! A valid invoice sent as box commands (PROTOCOL.md §4): C3h, C0h, 31h per item, 36h per
//! comment, 33h (checked against the gateway's own computation, `compare.rs`), the payments
//! (checked to cover the total) as 35h; 38h `C` to cancel; and what the box's replies become
//! in the register (its totals, its security elements). `commands/translate.rs` writes the
//! invoice's values as MCF-SFE's.
//!
//! And, at validation, whatever the channel (the invoice must read the same on every channel),
//! [`check_frames`]: every text must fit its box frame. The real commands (C3h, C0h, 31h with
//! a rate of 100.00, the widest, 36h, 35h) are encoded with `mcf_sfe`, and a [`FieldError`]
//! becomes a 400 that names the JSON field. Nothing is ever truncated. The invoice's
//! [`WireCheck`](crate::certify::invoice::WireCheck), given to `validate`.

use mcf_sfe::command::{check_rn, code};
use mcf_sfe::fields::{escape, FieldError};
use mcf_sfe::reply::{Anomaly, Certification, Subtotal};
use mcf_sfe::types::TaxGroup;
use mcf_sfe::{Command, Reply};
use rust_decimal::Decimal;
use tracing::{info, warn};

use translate::{
    client_command, comment_command, item_command, open_command, payment_command, payment_commands,
    subtotal_of,
};
pub(crate) use translate::{invoice_type, tax_group};

use super::compare::compare_subtotal;
use super::unavailable;
use crate::certify::invoice::request::COMMENT_FIELDS;
use crate::certify::invoice::{
    code as error_code, quoted, CommentLine, Seller, ValidInvoice, ValidationError, MAX_RN_LEN,
};
use crate::certify::CertifyError;
use crate::device::PortSession;
use crate::model::{DeviceTotals, SecurityElements};
use crate::msg;

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
    expect_done(session, Command::SetClient(client_command(&invoice.client))).await?;
    expect_done(session, Command::OpenInvoice(open_command(invoice, seller))).await?;
    for item in &invoice.items {
        let rate = rates[item.group.index()];
        expect_done(session, Command::Item(item_command(item, rate))).await?;
    }
    for comment in &invoice.comments {
        expect_done(session, Command::Comment(comment_command(comment))).await?;
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
            let oddity = Anomaly {
                field: "MCUR",
                raw: subtotal.mcur.clone(),
                expected:
                    "the invoice's total at its USD rate, or empty without one (PROTOCOL.md §8)",
            };
            session.report_oddity(code::SUBTOTAL, oddity).await;
        }
    }
    let paid = invoice.payments_total();
    if !invoice.payments.is_empty() && paid < subtotal.total {
        return Err(CertifyError::PaymentsShort {
            paid,
            total: subtotal.total,
        });
    }
    for payment in payment_commands(invoice, subtotal.total) {
        expect_done(session, Command::Payment(payment)).await?;
    }
    Ok((subtotal, expected))
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

/// A text of a command: the `mcf_sfe` field name, its JSON path and its value.
type Text<'a> = (&'static str, String, &'a str);

/// Encodes every command of `invoice` as the box will receive it.
pub fn check_frames(invoice: &ValidInvoice, seller: &Seller) -> Result<(), ValidationError> {
    // The box's own FN rule, in case it says more than the invoice's (its reason is English:
    // the message says the rule in the reader's language instead).
    check_rn(&invoice.rn).map_err(|_| {
        ValidationError::at(
            error_code::RN_INVALID,
            "rn",
            msg!("err-rn-invalid", rn = quoted(&invoice.rn), max = MAX_RN_LEN),
        )
    })?;
    let c = &invoice.client;
    let client_texts = [
        (
            "client type",
            "client.type".to_owned(),
            c.client_type.as_str(),
        ),
        ("client nif", "client.nif".to_owned(), c.nif.as_str()),
        ("client name", "client.name".to_owned(), c.name.as_str()),
        (
            "client address",
            "client.address".to_owned(),
            c.address.as_str(),
        ),
        (
            "client contact",
            "client.contact".to_owned(),
            c.contact.as_str(),
        ),
        ("client email", "client.email".to_owned(), c.email.as_str()),
        ("client rccm", "client.rccm".to_owned(), c.rccm.as_str()),
    ];
    encode(
        &Command::SetClient(client_command(&invoice.client)),
        "C3h (client)",
        &client_texts,
    )?;
    let open_texts = [
        (
            "operator id",
            "operator.id".to_owned(),
            invoice.operator_id.as_str(),
        ),
        (
            "operator name",
            "operator.name".to_owned(),
            invoice.operator_name.as_str(),
        ),
        ("rn", "rn".to_owned(), invoice.rn.as_str()),
        (
            "reference",
            "reference".to_owned(),
            invoice
                .reference
                .as_ref()
                .map_or("", |r| r.code_def.as_str()),
        ),
        ("usd rate", "curRate".to_owned(), ""),
    ];
    encode(
        &Command::OpenInvoice(open_command(invoice, seller)),
        "C0h",
        &open_texts,
    )?;
    for (i, item) in invoice.items.iter().enumerate() {
        let path = format!("items[{i}]");
        let at = |field: &str| format!("{path}.{field}");
        let texts = [
            ("item name", at("name"), item.name.as_str()),
            ("item code", at("code"), item.code.as_deref().unwrap_or("")),
            (
                "price modification",
                at("priceModification"),
                item.price_change
                    .as_ref()
                    .map_or("", |p| p.description.as_str()),
            ),
            ("price", at("price"), ""),
            ("quantity", at("quantity"), ""),
            ("line amount", path.clone(), ""),
            ("specific tax rate", at("taxSpecificValue"), ""),
            ("specific tax amount", at("taxSpecificAmount"), ""),
            ("original price", at("originalPrice"), ""),
        ];
        let command = Command::Item(item_command(item, Some(Decimal::ONE_HUNDRED)));
        encode(&command, &format!("31h ({path})"), &texts)?;
    }
    for comment in &invoice.comments {
        let path = CommentLine::ALL
            .iter()
            .zip(COMMENT_FIELDS)
            .find_map(|(line, field)| (*line == comment.line).then_some(field))
            .unwrap_or("cmta");
        let texts = [("comment", path.to_owned(), comment.text.as_str())];
        encode(
            &Command::Comment(comment_command(comment)),
            &format!("36h ({path})"),
            &texts,
        )?;
    }
    for (i, payment) in invoice.payments.iter().enumerate() {
        let texts = [("payment amount", format!("payments[{i}].amount"), "")];
        encode(
            &Command::Payment(payment_command(payment)),
            &format!("35h (payments[{i}])"),
            &texts,
        )?;
    }
    Ok(())
}

fn encode(command: &Command, what: &str, texts: &[Text<'_>]) -> Result<(), ValidationError> {
    match command.encode() {
        Ok(_) => Ok(()),
        Err(error) => Err(refusal(error, what, texts)),
    }
}

/// The JSON path of an `mcf_sfe` field name among `texts`.
fn path_of(texts: &[Text<'_>], field: &str) -> Option<String> {
    texts
        .iter()
        .find(|(name, _, _)| *name == field)
        .map(|(_, path, _)| path.clone())
}

/// Bytes a text takes on the wire, escapes included.
fn wire_len(text: &str) -> usize {
    escape("", text).map_or(text.len(), |e| e.len())
}

fn refusal(error: FieldError, what: &str, texts: &[Text<'_>]) -> ValidationError {
    match error {
        FieldError::DataTooLong { len, max, .. } => {
            let mut given: Vec<&Text<'_>> =
                texts.iter().filter(|(_, _, t)| !t.is_empty()).collect();
            given.sort_by_key(|(_, _, t)| std::cmp::Reverse(wire_len(t)));
            let list = given
                .iter()
                .map(|(_, path, t)| format!("{path} ({})", wire_len(t)))
                .collect::<Vec<_>>()
                .join(", ");
            ValidationError {
                code: error_code::TEXT_TOO_LONG,
                field: given.first().map(|(_, path, _)| path.clone()),
                message: msg!(
                    "err-command-too-long",
                    command = what,
                    length = len,
                    max = max,
                    texts = list
                ),
            }
        }
        FieldError::ControlChar { field, code: c } => {
            let path = path_of(texts, field);
            // Where in its text, from 1 (the body's texts are checked before: only a text
            // that does not come from the body can reach this).
            let position = texts
                .iter()
                .find(|(name, _, _)| *name == field)
                .and_then(|(_, _, t)| t.chars().position(|ch| u32::from(ch) == c))
                .map_or(1, |at| at + 1);
            ValidationError {
                code: error_code::CONTROL_CHARACTER,
                message: msg!(
                    "err-control-character",
                    field = path.as_deref().unwrap_or(what),
                    char = format!("{c:04X}"),
                    name = char::from_u32(c).map_or("other", crate::certify::invoice::control_name),
                    position = position
                ),
                field: path,
            }
        }
        FieldError::TooPrecise {
            field,
            value,
            places,
        } => {
            let path = path_of(texts, field);
            ValidationError {
                code: error_code::NOT_ENCODABLE,
                message: msg!(
                    "err-too-precise",
                    field = path.as_deref().unwrap_or(what),
                    places = places,
                    value = value
                ),
                field: path,
            }
        }
        FieldError::Empty { field } | FieldError::Invalid { field, .. } => {
            // The protocol's own reason is English: the field and the command say where.
            let path = path_of(texts, field);
            ValidationError {
                code: error_code::NOT_ENCODABLE,
                message: msg!(
                    "err-not-encodable",
                    field = path.as_deref().unwrap_or(what),
                    command = what
                ),
                field: path,
            }
        }
    }
}

#[cfg(test)]
mod tests;
pub mod translate;
