//! `log show` for people: one register entry as an auditor reads it (the invoice it
//! certified, its groups, its credit notes or its original, its security elements), in the
//! reader's language. `--json` prints the [`InvoiceRecord`] instead.
//!
//! Every text of the register is printed through [`visible`]: an entry an older release
//! certified may hold a line feed or a bidirectional override in its client's name, an item
//! or a comment, which would forge lines on the auditor's terminal; they show as `⟨LF⟩`,
//! `⟨U+202E⟩` (the `--json` form keeps the exact text).

use chrono::FixedOffset;

use super::admin_commands::format_table;
use crate::admin::audit::{EntryLink, InvoiceRecord, KeptInvoice};
use crate::i18n::format::visible;
use crate::i18n::{format, names, Lang, Message};
use crate::model::{InvoiceContent, FISCAL_CURRENCY};
use crate::msg;

/// The text `log show` prints for `record`.
pub(super) fn render(record: &InvoiceRecord, zone: FixedOffset, lang: Lang) -> String {
    let (e, r) = (&record.entry, &record.entry.request);
    let t = |m: Message| m.render(lang);
    let width = label_width(lang);
    let line = |label: Message, value: &str| format!("  {:<width$} {}\n", t(label), visible(value));
    let mut out = format!(
        "{}\n",
        t(msg!(
            "cli-show-title",
            document = names::document(&r.invoice_type).render(lang),
            rn = visible(&r.rn).into_owned(),
            register = r.environment.as_str(),
            sequence = e.sequence
        ))
    );
    out.push_str(&line(
        msg!("cli-show-seller"),
        &format!("{} (NIF {}, ISF {})", r.org, r.nif, r.isf),
    ));
    out.push_str(&line(
        msg!("cli-show-type"),
        &names::document_and_code(&r.invoice_type, lang),
    ));
    out.push_str(&line(
        msg!("cli-show-certified"),
        &format::date_time(e.certified_at, zone, lang),
    ));
    out.push_str(&line(
        msg!("cli-show-received"),
        &format::date_time(r.received_at, zone, lang),
    ));
    out.push_str(&line(
        msg!("cli-show-channel"),
        &format!("{} · {}", r.device, r.key_id),
    ));
    out.push_str(&line(
        msg!("recorded-by"),
        &names::recorded_by(&e.source).render(lang),
    ));
    match &record.certified_invoice {
        KeptInvoice::Kept { invoice } => out.push_str(&content(invoice, lang)),
        KeptInvoice::NotKept => out.push_str(&format!(
            "\n{}\n",
            t(msg!(
                "cli-show-not-kept",
                digest = r.request_digest.as_str()
            ))
        )),
        KeptInvoice::Unreadable { reason } => out.push_str(&format!(
            "\n{}\n",
            t(msg!("cli-show-unreadable", reason = reason.as_str()))
        )),
    }
    // Totals are in CDF whatever the invoice's currency (the channel computes in CDF).
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-groups"))));
    let rows = record
        .groups
        .iter()
        .map(|g| {
            [
                g.group.to_string(),
                format::number(g.ht, lang),
                format::number(g.vat, lang),
                format::number(g.ttc, lang),
            ]
        })
        .collect();
    out.push_str(&indent(&format_table(
        &[8, 18, 18],
        &t(msg!("cli-show-groups-header")),
        rows,
    )));
    let totals = &r.totals;
    out.push_str(&line(
        msg!("cli-show-total"),
        &format::amount(totals.total, FISCAL_CURRENCY, lang),
    ));
    out.push_str(&line(
        msg!("cli-show-vat"),
        &format::amount(totals.vat, FISCAL_CURRENCY, lang),
    ));
    if !totals.specific_tax.is_zero() {
        out.push_str(&line(
            msg!("cli-show-specific-tax"),
            &format::amount(totals.specific_tax, FISCAL_CURRENCY, lang),
        ));
    }
    if let Some(usd) = totals.usd_equivalent {
        out.push_str(&line(
            msg!("cli-show-usd"),
            &format::amount(usd, "USD", lang),
        ));
    }
    let s = &e.security;
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-security"))));
    out.push_str(&line(msg!("cli-show-code"), &s.code_def));
    out.push_str(&line(msg!("cli-show-counters"), &s.counters));
    out.push_str(&line(msg!("cli-show-nim"), &s.nim));
    out.push_str(&line(
        msg!("cli-show-device-time"),
        &format::device_date_time(&s.date_time, lang),
    ));
    out.push_str(&line(msg!("cli-show-qr"), &s.qr_code));
    out.push_str(&links(record, zone, lang));
    if let KeptInvoice::Kept { .. } = record.certified_invoice {
        out.push_str(&format!(
            "\n{}\n",
            t(msg!("cli-show-kept", digest = r.request_digest.as_str()))
        ));
    }
    out
}

/// The credit note's original and the invoice's credit notes.
fn links(record: &InvoiceRecord, zone: FixedOffset, lang: Lang) -> String {
    let t = |m: Message| m.render(lang);
    let mut out = String::new();
    let row = |l: &EntryLink| {
        [
            l.sequence.to_string(),
            visible(&l.rn).into_owned(),
            visible(&l.invoice_type).into_owned(),
            format::number(l.total, lang),
            visible(&l.code_def).into_owned(),
            format::date_time(l.certified_at, zone, lang),
        ]
    };
    let reference = match &record.certified_invoice {
        KeptInvoice::Kept { invoice } => invoice.reference.clone(),
        _ => None,
    };
    if let Some(reference) = reference {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-original"))));
        match &record.original {
            Some(original) => out.push_str(&indent(&format_table(
                &[8, 24, 4, 16, 24],
                &t(msg!("cli-show-links-header")),
                vec![row(original)],
            ))),
            None => out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-original-unknown",
                    code = visible(&reference).into_owned()
                ))
            )),
        }
    }
    if !record.credit_notes.is_empty() {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-credit-notes"))));
        out.push_str(&indent(&format_table(
            &[8, 24, 4, 16, 24],
            &t(msg!("cli-show-links-header")),
            record.credit_notes.iter().map(row).collect(),
        )));
    }
    out
}

/// Client, operator, reference, items, payments and comments of the kept invoice.
fn content(invoice: &InvoiceContent, lang: Lang) -> String {
    let t = |m: Message| m.render(lang);
    let width = label_width(lang);
    let line = |label: Message, value: &str| format!("  {:<width$} {}\n", t(label), visible(value));
    let mut out = String::new();
    out.push_str(&line(msg!("cli-show-mode"), &invoice.mode.to_uppercase()));
    out.push_str(&line(
        msg!("cli-show-currency"),
        &names::invoice_currency(invoice, lang),
    ));
    if let Some(reference) = &invoice.reference {
        let kind = invoice.reference_type.as_deref().unwrap_or("COR");
        out.push_str(&line(
            msg!("cli-show-reference"),
            &format!("{reference} ({kind})"),
        ));
    }
    let operator = match &invoice.operator.id {
        Some(id) => format!("{} ({id})", invoice.operator.name),
        None => invoice.operator.name.clone(),
    };
    out.push_str(&line(msg!("cli-show-operator"), &operator));
    out.push_str(&format!("\n{}\n", t(msg!("cli-show-client"))));
    match &invoice.client {
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
            let mut name = item.name.clone();
            if let Some(code) = &item.code {
                name = format!("{name} [{code}]");
            }
            [
                (i + 1).to_string(),
                visible(&name).into_owned(),
                visible(&item.item_type).into_owned(),
                visible(&item.tax_group).into_owned(),
                format::quantity(item.quantity, lang),
                format::number(item.price, lang),
                item.line_amount()
                    .map_or_else(|| "-".into(), |v| format::number(v, lang)),
            ]
        })
        .collect();
    out.push_str(&indent(&format_table(
        &[3, 32, 4, 3, 10, 20],
        &t(msg!("cli-show-items-header")),
        rows,
    )));
    for item in &invoice.items {
        if let Some(amount) = item.tax_specific_amount {
            out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-item-specific-tax",
                    name = visible(&item.name).into_owned(),
                    amount = format::amount(amount, FISCAL_CURRENCY, lang)
                ))
            ));
        }
        if let Some(original) = item.original_price {
            out.push_str(&format!(
                "  {}\n",
                t(msg!(
                    "cli-show-item-price-change",
                    name = visible(&item.name).into_owned(),
                    original = format::amount(original, FISCAL_CURRENCY, lang),
                    why = visible(item.price_modification.as_deref().unwrap_or("-")).into_owned()
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
        let mut text = format::amount(p.amount, FISCAL_CURRENCY, lang);
        if let Some(paid_in) = names::payment_currency(p, invoice, lang) {
            text.push_str(&format!(" ({paid_in})"));
        }
        out.push_str(&format!("  {:<width$} {text}\n", visible(&p.name)));
    }
    let comments = invoice.comments();
    if !comments.is_empty() {
        out.push_str(&format!("\n{}\n", t(msg!("cli-show-comments"))));
        for comment in comments {
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
