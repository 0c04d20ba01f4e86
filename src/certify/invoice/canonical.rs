//! The canonical form of a validated request and its digest (docs/design.md §4-5: duplicate
//! check and LogInvoices). Same invoice content, same digest, whatever the JSON key order,
//! whitespace, escapes, or `"12.5"` vs `12.50` vs `"12.50"`.
//!
//! The form is compact JSON (no blanks) built from the *validated* values:
//! - object keys sorted by byte order; strings escaped with `\"`, `\\` and `\u00XX` for
//!   control characters only (everything else as UTF-8);
//! - every decimal as a JSON string, normalized (`12.50` -> `"12.5"`, `2.000` -> `"2"`);
//! - absent, `null` and empty optional values are left out; defaults are applied
//!   (`curCode` CDF, `referenceType` COR, a payment's `curCode` = the invoice's);
//! - left out as well: `nif`/`isF` (they can only equal the key's), a CDF invoice's
//!   `curRate` -1 and `curDate`, a zero specific tax, an unchanged `originalPrice`;
//! - `curDate` contributes its calendar date `YYYY-MM-DD` (what the device carries);
//! - comment lines under their seed names `cmta`..`cmth`;
//! - `"canon": "1"` names this version of the form.
//!
//! Digest: lowercase hex SHA-256 of the form's UTF-8 bytes.

use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use super::header::Currency;
use super::payments::ValidPayment;
use super::{CommentLine, ValidInvoice};
use crate::certify::invoice::request::COMMENT_FIELDS;

/// A JSON value of the canonical form.
enum Json {
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

fn text(value: &str) -> Json {
    Json::Text(value.to_owned())
}

fn number(value: Decimal) -> Json {
    Json::Text(value.normalize().to_string())
}

/// An object from `(key, value)` pairs, leaving out the `None` values.
fn object(fields: Vec<(&'static str, Option<Json>)>) -> Json {
    Json::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect(),
    )
}

fn non_empty(value: &str) -> Option<Json> {
    (!value.is_empty()).then(|| text(value))
}

/// The canonical form of `invoice` (with what validation kept aside: the currency, the
/// client's `typeDesc` and the payments' currency fields).
pub(super) fn form(
    invoice: &ValidInvoice,
    currency: &Currency,
    type_desc: &Option<String>,
    payments: &[ValidPayment],
) -> String {
    let c = &invoice.client;
    let client = object(vec![
        ("address", non_empty(&c.address)),
        ("contact", non_empty(&c.contact)),
        ("email", non_empty(&c.email)),
        ("name", non_empty(&c.name)),
        ("nif", non_empty(&c.nif)),
        ("rccm", non_empty(&c.rccm)),
        ("type", non_empty(&c.client_type)),
        ("typeDesc", type_desc.as_deref().and_then(non_empty)),
    ]);
    let items = invoice
        .items
        .iter()
        .map(|item| {
            let tax = item.specific_tax.as_ref();
            let change = item.price_change.as_ref();
            object(vec![
                ("code", item.code.as_deref().map(text)),
                ("name", Some(text(&item.name))),
                ("originalPrice", change.map(|p| number(p.original_price))),
                ("price", Some(number(item.price))),
                ("priceModification", change.map(|p| text(&p.description))),
                ("quantity", Some(number(item.quantity))),
                (
                    "taxGroup",
                    Some(Json::Text(item.group.letter().to_string())),
                ),
                ("taxSpecificAmount", tax.map(|t| number(t.amount))),
                ("taxSpecificValue", tax.and_then(|t| t.rate).map(number)),
                ("type", Some(text(item.item_type.as_str()))),
            ])
        })
        .collect();
    let payments = payments
        .iter()
        .map(|p| {
            object(vec![
                ("amount", Some(number(p.payment.amount))),
                (
                    "curCode",
                    Some(text(p.cur_code.as_deref().unwrap_or(&currency.code))),
                ),
                ("curRate", p.cur_rate.map(number)),
                ("name", Some(text(p.payment.method.as_str()))),
            ])
        })
        .collect();
    let reference = invoice.reference.as_ref();
    let mut fields = vec![
        ("canon", Some(text("1"))),
        (
            "client",
            (invoice.client != Default::default() || type_desc.is_some()).then_some(client),
        ),
        ("curCode", Some(text(&currency.code))),
        (
            "curDate",
            currency
                .usd_rate
                .map(|u| Json::Text(u.date.format("%Y-%m-%d").to_string())),
        ),
        ("curRate", currency.usd_rate.map(|u| number(u.rate))),
        ("items", Some(Json::Array(items))),
        ("mode", Some(text(invoice.price_mode.as_str()))),
        (
            "operator",
            Some(object(vec![
                ("id", non_empty(&invoice.operator_id)),
                ("name", Some(text(&invoice.operator_name))),
            ])),
        ),
        (
            "payments",
            (!invoice.payments.is_empty()).then_some(Json::Array(payments)),
        ),
        ("reference", reference.map(|r| text(&r.code_def))),
        ("referenceType", reference.map(|r| text(r.kind.as_str()))),
        ("rn", Some(text(&invoice.rn))),
        ("type", Some(text(invoice.invoice_type.as_str()))),
    ];
    for comment in &invoice.comments {
        let key = CommentLine::ALL
            .iter()
            .zip(COMMENT_FIELDS)
            .find_map(|(line, key)| (*line == comment.line).then_some(key));
        if let Some(key) = key {
            fields.push((key, Some(text(&comment.text))));
        }
    }
    let root = object(fields);
    let mut out = String::new();
    write(&root, &mut out);
    out
}

/// Lowercase hex SHA-256 of `canonical`.
pub(super) fn digest(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

fn write(value: &Json, out: &mut String) {
    match value {
        Json::Text(s) => write_string(s, out),
        Json::Array(values) => {
            out.push('[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        Json::Object(fields) => {
            let mut sorted: Vec<&(&str, Json)> = fields.iter().collect();
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write(v, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}
