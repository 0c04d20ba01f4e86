//! `log show` for people: one register entry as an auditor reads it (the invoice it
//! certified, its groups, its credit notes or its original, its security elements), in the
//! reader's language: the [`InvoiceView`] the dashboard's invoice page also renders, laid out
//! as text. `--json` prints the [`InvoiceRecord`] instead.
//!
//! Every text of the register is printed through [`visible`]: an entry an older release
//! certified may hold a line feed or a bidirectional override in its client's name, an item
//! or a comment, which would forge lines on the auditor's terminal; they show as `⟨LF⟩`,
//! `⟨U+202E⟩` (the `--json` form keeps the exact text).

use chrono::FixedOffset;

use super::admin_commands::format_table;
use crate::admin::audit::InvoiceRecord;
use crate::admin::invoice_view::{Content, InvoiceView, Kept, Link};
use crate::i18n::format::visible;
use crate::i18n::{Lang, Message};
use crate::msg;

/// The text `log show` prints for `record`.
pub(super) fn render(record: &InvoiceRecord, zone: FixedOffset, lang: Lang) -> String {
    let view = InvoiceView::of(record, zone, lang);
    let t = |m: Message| m.render(lang);
    let width = label_width(lang);
    let line = |label: Message, value: &str| format!("  {:<width$} {}\n", t(label), visible(value));
    let mut out = format!(
        "{}\n",
        t(msg!(
            "cli-show-title",
            document = view.document.as_str(),
            rn = visible(view.rn).into_owned(),
            register = view.environment.as_str(),
            sequence = view.sequence
        ))
    );
    out.push_str(&line(
        msg!("cli-show-seller"),
        &format!("{} (NIF {}, ISF {})", view.org, view.nif, view.isf),
    ));
    out.push_str(&line(msg!("cli-show-type"), &view.type_and_code));
    out.push_str(&line(msg!("cli-show-certified"), &view.certified));
    out.push_str(&line(msg!("cli-show-received"), &view.received));
    out.push_str(&line(
        msg!("cli-show-channel"),
        &format!("{} · {}", view.device, view.key_id),
    ));
    out.push_str(&line(msg!("recorded-by"), &view.recorded_by));
    match &view.content {
        Content::Kept(kept) => out.push_str(&content(&view, kept, lang)),
        Content::NotKept => out.push_str(&format!(
            "\n{}\n",
            t(msg!("cli-show-not-kept", digest = view.digest))
        )),
        Content::Unreadable(reason) => out.push_str(&format!(
            "\n{}\n",
            t(msg!("cli-show-unreadable", reason = *reason))
        )),
    }
    // Totals are in CDF whatever the invoice's currency (the channel computes in CDF).
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-groups"))));
    out.push_str(&indent(&format_table(
        &[8, 18, 18],
        &t(msg!("cli-show-groups-header")),
        view.groups.clone(),
    )));
    out.push_str(&line(msg!("cli-show-total"), &view.total));
    out.push_str(&line(msg!("cli-show-vat"), &view.vat));
    if let Some(specific_tax) = &view.specific_tax {
        out.push_str(&line(msg!("cli-show-specific-tax"), specific_tax));
    }
    if let Some(usd) = &view.usd {
        out.push_str(&line(msg!("cli-show-usd"), usd));
    }
    let s = &view.security;
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-security"))));
    out.push_str(&line(msg!("cli-show-code"), s.code_def));
    out.push_str(&line(msg!("cli-show-counters"), s.counters));
    out.push_str(&line(msg!("cli-show-nim"), s.nim));
    out.push_str(&line(msg!("cli-show-device-time"), &s.device_time));
    out.push_str(&line(msg!("cli-show-qr"), s.qr_code));
    out.push_str(&links(&view, lang));
    if let Content::Kept(_) = view.content {
        out.push_str(&format!(
            "\n{}\n",
            t(msg!("cli-show-kept", digest = view.digest))
        ));
    }
    out
}

/// The credit note's original and the invoice's credit notes.
fn links(view: &InvoiceView<'_>, lang: Lang) -> String {
    let t = |m: Message| m.render(lang);
    let mut out = String::new();
    let row = |l: &Link<'_>| {
        [
            l.sequence.to_string(),
            visible(l.rn).into_owned(),
            visible(l.invoice_type).into_owned(),
            l.total.clone(),
            visible(l.code_def).into_owned(),
            l.certified.clone(),
        ]
    };
    if let Some(reference) = &view.reference {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-original"))));
        match &view.original {
            Some(original) => out.push_str(&indent(&format_table(
                &[8, 24, 4, 16, 24],
                &t(msg!("cli-show-links-header")),
                vec![row(original)],
            ))),
            None => out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-original-unknown",
                    code = visible(reference.code).into_owned()
                ))
            )),
        }
    }
    if !view.credit_notes.is_empty() {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-credit-notes"))));
        out.push_str(&indent(&format_table(
            &[8, 24, 4, 16, 24],
            &t(msg!("cli-show-links-header")),
            view.credit_notes.iter().map(row).collect(),
        )));
    }
    out
}

/// Client, operator, reference, items, payments and comments of the kept invoice.
fn content(view: &InvoiceView<'_>, invoice: &Kept<'_>, lang: Lang) -> String {
    let t = |m: Message| m.render(lang);
    let width = label_width(lang);
    let line = |label: Message, value: &str| format!("  {:<width$} {}\n", t(label), visible(value));
    let mut out = String::new();
    out.push_str(&line(msg!("cli-show-mode"), &invoice.mode));
    out.push_str(&line(msg!("cli-show-currency"), &invoice.currency));
    if let Some(reference) = &view.reference {
        out.push_str(&line(
            msg!("cli-show-reference"),
            &format!("{} ({})", reference.code, reference.kind),
        ));
    }
    out.push_str(&line(msg!("cli-show-operator"), &invoice.operator));
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-client"))));
    match invoice.client {
        None => out.push_str(&format!("  {}\n", t(msg!("cli-show-no-client")))),
        Some(c) => {
            let fields = [
                (msg!("cli-show-client-name"), &c.name),
                (msg!("cli-show-client-nif"), &c.nif),
                (msg!("cli-show-client-type"), &c.client_type),
                (msg!("cli-show-client-type-desc"), &c.type_desc),
                (msg!("cli-show-client-contact"), &c.contact),
                (msg!("cli-show-client-address"), &c.address),
                (msg!("cli-show-client-email"), &c.email),
                (msg!("cli-show-client-rccm"), &c.rccm),
            ];
            for (label, value) in fields {
                if let Some(value) = value {
                    out.push_str(&line(label, value));
                }
            }
        }
    }
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-items"))));
    let rows = invoice
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let name = match item.code {
                Some(code) => format!("{} [{code}]", item.name),
                None => item.name.to_owned(),
            };
            [
                (i + 1).to_string(),
                visible(&name).into_owned(),
                visible(item.item_type).into_owned(),
                visible(item.tax_group).into_owned(),
                item.quantity.clone(),
                item.price.clone(),
                item.amount.clone(),
            ]
        })
        .collect();
    out.push_str(&indent(&format_table(
        &[3, 32, 4, 3, 10, 20],
        &t(msg!("cli-show-items-header")),
        rows,
    )));
    for item in &invoice.items {
        if let Some(amount) = &item.specific_tax {
            out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-item-specific-tax",
                    name = visible(item.name).into_owned(),
                    amount = amount.as_str()
                ))
            ));
        }
        if let Some((original, why)) = &item.price_change {
            out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-item-price-change",
                    name = visible(item.name).into_owned(),
                    original = original.as_str(),
                    why = why.as_str()
                ))
            ));
        }
    }
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-payments"))));
    if invoice.payments.is_empty() {
        out.push_str(&format!("  {}\n", t(msg!("cli-show-no-payments"))));
    }
    // A payment's amount is in CDF whatever currency it was paid in (the seed's currency
    // rules); that currency follows, with what the amount was worth in it.
    for p in &invoice.payments {
        let mut text = p.amount.clone();
        if let Some(paid_in) = &p.paid_in {
            text.push_str(&format!(" ({paid_in})"));
        }
        out.push_str(&format!("  {:<width$} {text}\n", visible(p.name)));
    }
    if !invoice.comments.is_empty() {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-comments"))));
        for comment in &invoice.comments {
            out.push_str(&format!("  {}\n", visible(comment)));
        }
    }
    out
}
/// The width of the labels' column: the longest label of a row in `lang` (a payment's name
/// is aligned with them), so that every value starts in one column.
fn label_width(lang: Lang) -> usize {
    [
        msg!("cli-show-seller"),
        msg!("cli-show-type"),
        msg!("cli-show-certified"),
        msg!("cli-show-received"),
        msg!("cli-show-channel"),
        msg!("recorded-by"),
        msg!("cli-show-mode"),
        msg!("cli-show-currency"),
        msg!("cli-show-reference"),
        msg!("cli-show-operator"),
        msg!("cli-show-client-name"),
        msg!("cli-show-client-nif"),
        msg!("cli-show-client-type"),
        msg!("cli-show-client-type-desc"),
        msg!("cli-show-client-contact"),
        msg!("cli-show-client-address"),
        msg!("cli-show-client-email"),
        msg!("cli-show-client-rccm"),
        msg!("cli-show-total"),
        msg!("cli-show-vat"),
        msg!("cli-show-specific-tax"),
        msg!("cli-show-usd"),
        msg!("cli-show-code"),
        msg!("cli-show-counters"),
        msg!("cli-show-nim"),
        msg!("cli-show-device-time"),
        msg!("cli-show-qr"),
    ]
    .into_iter()
    .map(|label| label.render(lang).chars().count())
    .max()
    .unwrap_or(0)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
