//! Every text must fit its device frame: the real commands (C3h, C0h, 31h with a rate of
//! 100.00, the widest, 36h, 35h) are encoded with `mcf_sfe`, and a [`FieldError`] becomes a
//! 400 that names the JSON field. Nothing is ever truncated.

use mcf_sfe::command::Command;
use mcf_sfe::fields::{escape, FieldError};
use mcf_sfe::types::CommentLine;
use rust_decimal::Decimal;

use super::{code, Seller, ValidInvoice, ValidationError};
use crate::certify::invoice::request::COMMENT_FIELDS;
use crate::msg;

/// A text of a command: the `mcf_sfe` field name, its JSON path and its value.
type Text<'a> = (&'static str, String, &'a str);

/// Encodes every command of `invoice` as the device will receive it.
pub(super) fn check(invoice: &ValidInvoice, seller: &Seller) -> Result<(), ValidationError> {
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
        &Command::SetClient(invoice.client.clone()),
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
        &Command::OpenInvoice(invoice.open_command(seller)),
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
        let command = Command::Item(item.to_command(Some(Decimal::ONE_HUNDRED)));
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
            &Command::Comment(comment.clone()),
            &format!("36h ({path})"),
            &texts,
        )?;
    }
    for (i, payment) in invoice.payments.iter().enumerate() {
        let texts = [("payment amount", format!("payments[{i}].amount"), "")];
        encode(
            &Command::Payment(*payment),
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
                code: code::TEXT_TOO_LONG,
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
                code: code::CONTROL_CHARACTER,
                message: msg!(
                    "err-control-character",
                    field = path.as_deref().unwrap_or(what),
                    char = format!("{c:04X}"),
                    name = char::from_u32(c).map_or("other", super::json::control_name),
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
                code: code::NOT_ENCODABLE,
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
                code: code::NOT_ENCODABLE,
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
