//! One LogInvoices entry as an auditor reads it: its security elements and QR code, the
//! invoice it certified (client, items, payments, comments, reference), its amounts per tax
//! group, the credit notes that reduce it or the invoice it reduces (links both ways), and
//! the printable fiscal block.
//!
//! The register's texts are shown through [`shown`]: HTML-escaped, and with the characters an
//! older release let in (a line feed, a bidirectional override in a client's name or an item)
//! made visible (`⟨U+202E⟩`), since escaping alone does not stop U+202E reordering the page.

use hyper::Response;

use super::html::{self, cell, esc, notice, shown, t};
use super::keys::env_name;
use super::web::Body;
use super::{Ctx, Dashboard};
use crate::admin::audit::{EntryLink, InvoiceRecord, KeptInvoice};
use crate::admin::Admin;
use crate::i18n::format::visible;
use crate::i18n::{format, names, Lang, Message};
use crate::model::{Environment, InvoiceContent};
use crate::msg;

impl Dashboard {
    pub(super) async fn invoice_page(
        &self,
        ctx: &Ctx,
        env: Environment,
        sequence: u64,
    ) -> Response<Body> {
        let org_id = ctx.org.id.clone();
        let show = move |admin: &Admin| admin.org_log_invoice(&org_id, env, sequence);
        let record: InvoiceRecord = match self.blocking(show).await {
            Ok(record) => record,
            Err(error) => return self.failure_in(ctx, &error),
        };
        let (lang, zone) = (ctx.lang(), self.admin.time_zone());
        let entry = &record.entry;
        let (r, s) = (&entry.request, &entry.security);
        let qr = crate::qr::inline_svg(&s.qr_code, "qrCode").unwrap_or_else(|error| {
            tracing::warn!(%error, "an invoice's QR code could not be drawn");
            notice("error", &t(lang, msg!("qr-not-drawn")))
        });
        let base = format!("/dashboard/invoices/{}/{}", env.as_str(), entry.sequence);
        let mut body = format!(
            "<p><a href=\"/dashboard/invoices?env={env}\">← {}</a></p>\
             <p class=\"print\" id=\"print\">{} <a href=\"{base}/receipt?layout=a4\" id=\"print-a4\" \
             target=\"_blank\">{}</a> · <a href=\"{base}/receipt?layout=80mm\" id=\"print-80mm\" \
             target=\"_blank\">{}</a></p>\
             <section id=\"security\"><h2>{}</h2><div class=\"qr-box\">\
             <figure id=\"qr\">{qr}<figcaption>{}</figcaption></figure></div>\
             <dl class=\"grid\">{}{}{}{}{}</dl></section>",
            t(
                lang,
                msg!("dash-invoice-back", register = env.as_str())
            ),
            t(lang, msg!("dash-print")),
            t(lang, msg!("dash-print-a4")),
            t(lang, msg!("dash-print-80mm")),
            t(lang, msg!("dash-security-title")),
            t(lang, msg!("dash-qr-caption")),
            row(lang, msg!("dash-field-code"), "codeDEFDGI", &s.code_def),
            row(lang, msg!("dash-field-nim"), "nim", &s.nim),
            row(lang, msg!("dash-field-counters"), "counters", &s.counters),
            row(
                lang,
                msg!("dash-field-device-time"),
                "dateTime",
                &html::device_time(&s.date_time, lang)
            ),
            row(lang, msg!("dash-field-qr"), "qrCode", &s.qr_code),
            env = env.as_str(),
        );
        body.push_str(&links(&record, env, zone, lang));
        body.push_str(&format!(
            "<section><h2>{}</h2><dl class=\"grid\">{}{}{}{}{}{}{}{}{}{}{}</dl></section>",
            t(lang, msg!("dash-invoice-section")),
            row(
                lang,
                msg!("dash-field-register"),
                "env",
                &env_name(env).render(lang)
            ),
            row(
                lang,
                msg!("dash-field-sequence"),
                "sequence",
                &entry.sequence.to_string()
            ),
            row(lang, msg!("dash-entry-rn"), "rn", &r.rn),
            row(
                lang,
                msg!("dash-entry-type"),
                "type",
                &names::document_and_code(&r.invoice_type, lang)
            ),
            row(
                lang,
                msg!("dash-field-seller"),
                "seller",
                &format!("{} / {}", r.nif, r.isf)
            ),
            row(
                lang,
                msg!("dash-field-received"),
                "received",
                &html::time(&r.received_at, zone, lang)
            ),
            row(
                lang,
                msg!("dash-entry-certified"),
                "certified",
                &html::time(&entry.certified_at, zone, lang)
            ),
            row(
                lang,
                msg!("recorded-by"),
                "source",
                &names::recorded_by(&entry.source).render(lang)
            ),
            row(lang, msg!("dash-field-key"), "key", &r.key_id),
            row(lang, msg!("dash-field-device"), "device", &r.device),
            row(lang, msg!("dash-field-digest"), "digest", &r.request_digest),
        ));
        match &record.certified_invoice {
            KeptInvoice::Kept { invoice } => body.push_str(&content(invoice, lang)),
            KeptInvoice::NotKept => {
                body.push_str(&notice("info", &t(lang, msg!("dash-content-not-kept"))))
            }
            KeptInvoice::Unreadable { reason } => body.push_str(&notice(
                "error",
                &t(
                    lang,
                    msg!("dash-content-unreadable", reason = reason.as_str()),
                ),
            )),
        }
        body.push_str(&totals(&record, lang));
        let document = names::document(&r.invoice_type).render(lang);
        let title = ctx.text(msg!("dash-invoice-title", document = document, rn = &r.rn));
        ctx.page(&title, super::html::Tab::Invoices, &body)
    }
}

/// A type cell of a register table: the document's name, its code after it.
pub(super) fn type_cell(invoice_type: &str, lang: Lang) -> String {
    format!(
        "{} <small>{}</small>",
        esc(&names::document(invoice_type).render(lang)),
        esc(invoice_type)
    )
}

/// One `<dt>`/`<dd>` pair; the value is [`shown`].
fn row(lang: Lang, name: Message, id: &str, value: &str) -> String {
    format!(
        "<dt>{}</dt><dd id=\"{id}\">{}</dd>",
        t(lang, name),
        shown(value)
    )
}

/// The original a credit note reduces, and the credit notes that reduce this invoice.
fn links(
    record: &InvoiceRecord,
    env: Environment,
    zone: chrono::FixedOffset,
    lang: Lang,
) -> String {
    let link = |l: &EntryLink| {
        format!(
            "<a href=\"/dashboard/invoices/{}/{}\">{}</a>",
            env.as_str(),
            l.sequence,
            shown(&l.rn)
        )
    };
    let mut out = String::new();
    if let KeptInvoice::Kept { invoice } = &record.certified_invoice {
        if let Some(reference) = &invoice.reference {
            let kind = invoice.reference_type.as_deref().unwrap_or("COR");
            let lead = t(lang, msg!("dash-credit-of", kind = kind));
            let what = match &record.original {
                Some(original) => format!(
                    "{lead} {} (<code>{}</code>, {})",
                    link(original),
                    shown(reference),
                    esc(&html::amount(original.total, lang))
                ),
                None => format!(
                    "{lead} <code>{}</code> {}",
                    shown(reference),
                    t(lang, msg!("dash-credit-of-unknown"))
                ),
            };
            out.push_str(&format!("<p id=\"original\" class=\"link\">{what}</p>"));
        }
    }
    if !record.credit_notes.is_empty() {
        let h = [
            msg!("dash-entry-rn"),
            msg!("dash-entry-type"),
            msg!("dash-entry-total"),
            msg!("dash-entry-code"),
            msg!("dash-entry-certified"),
        ]
        .map(|m| m.render(lang));
        out.push_str(&format!(
            "<section id=\"credit-notes\"><h2>{}</h2>",
            t(lang, msg!("dash-credit-notes-title"))
        ));
        out.push_str(&html::table_start("credit-notes-table", &h));
        for note in &record.credit_notes {
            let cells = [
                cell(&h[0], "", &link(note)),
                cell(&h[1], "", &type_cell(&note.invoice_type, lang)),
                cell(&h[2], "num", &esc(&html::amount(note.total, lang))),
                cell(
                    &h[3],
                    "",
                    &format!("<code>{}</code>", shown(&note.code_def)),
                ),
                cell(&h[4], "", &esc(&html::time(&note.certified_at, zone, lang))),
            ];
            out.push_str(&format!("<tr>{}</tr>", cells.concat()));
        }
        out.push_str(html::TABLE_END);
        out.push_str("</section>");
    }
    out
}

/// Client, operator, items, payments and comments of the kept invoice.
fn content(invoice: &InvoiceContent, lang: Lang) -> String {
    let mut out = format!(
        "<section id=\"certified-invoice\"><h2>{}</h2><dl class=\"grid\">",
        t(lang, msg!("dash-content-title"))
    );
    out.push_str(&row(
        lang,
        msg!("dash-content-mode"),
        "mode",
        &invoice.mode.to_uppercase(),
    ));
    out.push_str(&row(
        lang,
        msg!("dash-content-currency"),
        "currency",
        &names::invoice_currency(invoice, lang),
    ));
    let operator = match &invoice.operator.id {
        Some(id) => format!("{} ({id})", invoice.operator.name),
        None => invoice.operator.name.clone(),
    };
    out.push_str(&row(
        lang,
        msg!("dash-content-operator"),
        "operator",
        &operator,
    ));
    match &invoice.client {
        None => out.push_str(&row(
            lang,
            msg!("dash-content-client"),
            "client",
            &t(lang, msg!("dash-content-no-client")),
        )),
        Some(c) => {
            let parts: Vec<String> = [
                &c.name,
                &c.nif.as_ref().map(|n| format!("NIF {n}")),
                &c.client_type,
                &c.type_desc,
                &c.contact,
                &c.address,
                &c.email,
                &c.rccm.as_ref().map(|n| format!("RCCM {n}")),
            ]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
            out.push_str(&row(
                lang,
                msg!("dash-content-client"),
                "client",
                &parts.join(" · "),
            ));
        }
    }
    let comments = invoice.comments();
    if !comments.is_empty() {
        out.push_str(&row(
            lang,
            msg!("dash-content-comments"),
            "comments",
            &comments.join(" / "),
        ));
    }
    out.push_str("</dl>");
    let h = [
        msg!("dash-item-name"),
        msg!("dash-item-type"),
        msg!("dash-item-group"),
        msg!("dash-item-quantity"),
        msg!("dash-item-price"),
        msg!("dash-item-amount"),
    ]
    .map(|m| m.render(lang));
    out.push_str(&html::table_start("items", &h));
    for item in &invoice.items {
        let mut name = shown(&item.name);
        if let Some(code) = &item.code {
            name.push_str(&format!(" <small>[{}]</small>", shown(code)));
        }
        if let Some(amount) = item.tax_specific_amount {
            name.push_str(&format!(
                "<br><small>{}</small>",
                esc(&t(
                    lang,
                    msg!(
                        "dash-item-specific-tax",
                        amount = html::amount(amount, lang)
                    )
                ))
            ));
        }
        if let Some(original) = item.original_price {
            name.push_str(&format!(
                "<br><small>{}</small>",
                esc(&t(
                    lang,
                    msg!(
                        "dash-item-price-change",
                        original = html::amount(original, lang),
                        why =
                            visible(item.price_modification.as_deref().unwrap_or("-")).into_owned()
                    )
                ))
            ));
        }
        let amount = item
            .line_amount()
            .map_or_else(|| "-".into(), |v| format::number(v, lang));
        let quantity = format::quantity(item.quantity, lang);
        let cells = [
            cell(&h[0], "", &name),
            cell(&h[1], "", &shown(&item.item_type)),
            cell(&h[2], "", &shown(&item.tax_group)),
            cell(&h[3], "num", &esc(&quantity)),
            cell(&h[4], "num", &esc(&format::number(item.price, lang))),
            cell(&h[5], "num", &esc(&amount)),
        ];
        out.push_str(&format!("<tr>{}</tr>", cells.concat()));
    }
    out.push_str(html::TABLE_END);
    let payments = if invoice.payments.is_empty() {
        t(lang, msg!("dash-content-no-payments"))
    } else {
        invoice
            .payments
            .iter()
            .map(|p| {
                // In CDF whatever currency it was paid in, that currency after it.
                let mut text = format!("{} {}", p.name, html::amount(p.amount, lang));
                if let Some(paid_in) = names::payment_currency(p, invoice, lang) {
                    text.push_str(&format!(" ({paid_in})"));
                }
                text
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    out.push_str(&format!(
        "<p id=\"payments\"><strong>{}</strong> {}</p></section>",
        t(lang, msg!("dash-content-payments")),
        shown(&payments)
    ));
    out
}

/// HT, VAT and TTC per group, and the totals.
fn totals(record: &InvoiceRecord, lang: Lang) -> String {
    let r = &record.entry.request;
    let h = [
        msg!("dash-group"),
        msg!("dash-group-ht"),
        msg!("dash-group-vat"),
        msg!("dash-group-ttc"),
    ]
    .map(|m| m.render(lang));
    let mut out = format!(
        "<section id=\"totals\"><h2>{}</h2>",
        t(lang, msg!("dash-totals-title"))
    );
    out.push_str(&html::table_start("groups", &h));
    for g in &record.groups {
        let cells = [
            cell(&h[0], "", &g.group.to_string()),
            cell(&h[1], "num", &esc(&format::number(g.ht, lang))),
            cell(&h[2], "num", &esc(&format::number(g.vat, lang))),
            cell(&h[3], "num", &esc(&format::number(g.ttc, lang))),
        ];
        out.push_str(&format!("<tr>{}</tr>", cells.concat()));
    }
    out.push_str(html::TABLE_END);
    let usd = r
        .totals
        .usd_equivalent
        .map_or_else(|| "-".into(), |v| format::amount(v, "USD", lang));
    out.push_str(&format!(
        "<dl class=\"grid\">{}{}{}{}</dl></section>",
        row(
            lang,
            msg!("dash-field-total"),
            "total",
            &html::amount(r.totals.total, lang)
        ),
        row(
            lang,
            msg!("dash-field-vat"),
            "vat",
            &html::amount(r.totals.vat, lang)
        ),
        row(
            lang,
            msg!("dash-field-specific-tax"),
            "specific-tax",
            &html::amount(r.totals.specific_tax, lang)
        ),
        row(lang, msg!("dash-field-usd"), "usd", &usd),
    ));
    out
}
