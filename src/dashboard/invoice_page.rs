//! One LogInvoices entry as an auditor reads it: its security elements and QR code, the
//! invoice it certified (client, items, payments, comments, reference), its amounts per tax
//! group, the credit notes that reduce it or the invoice it reduces (links both ways), and
//! the printable fiscal block: the [`InvoiceView`] `log show` also renders, laid out as HTML.
//!
//! The register's texts are shown through [`shown`]: HTML-escaped, and with the characters an
//! older release let in (a line feed, a bidirectional override in a client's name or an item)
//! made visible (`⟨U+202E⟩`), since escaping alone does not stop U+202E reordering the page.

use hyper::Response;

use super::html::{self, cell, esc, notice, shown, t};
use super::keys::env_name;
use super::web::Body;
use super::{Ctx, Dashboard};
use crate::admin::audit::InvoiceRecord;
use crate::admin::invoice_view::{Content, InvoiceView, Kept, Link};
use crate::admin::Admin;
use crate::i18n::{names, Lang, Message};
use crate::model::Environment;
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
        let view = InvoiceView::of(&record, zone, lang);
        let s = &view.security;
        let qr = crate::qr::inline_svg(s.qr_code, "qrCode").unwrap_or_else(|error| {
            tracing::warn!(%error, "an invoice's QR code could not be drawn");
            notice("error", &t(lang, msg!("qr-not-drawn")))
        });
        let base = format!("/dashboard/invoices/{}/{}", env.as_str(), view.sequence);
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
            row(lang, msg!("dash-field-code"), "codeDEFDGI", s.code_def),
            row(lang, msg!("dash-field-nim"), "nim", s.nim),
            row(lang, msg!("dash-field-counters"), "counters", s.counters),
            row(
                lang,
                msg!("dash-field-device-time"),
                "dateTime",
                &s.device_time
            ),
            row(lang, msg!("dash-field-qr"), "qrCode", s.qr_code),
            env = env.as_str(),
        );
        body.push_str(&links(&view, env, lang));
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
                &view.sequence.to_string()
            ),
            row(lang, msg!("dash-entry-rn"), "rn", view.rn),
            row(lang, msg!("dash-entry-type"), "type", &view.type_and_code),
            row(
                lang,
                msg!("dash-field-seller"),
                "seller",
                &format!("{} / {}", view.nif, view.isf)
            ),
            row(
                lang,
                msg!("dash-field-received"),
                "received",
                &view.received
            ),
            row(
                lang,
                msg!("dash-entry-certified"),
                "certified",
                &view.certified
            ),
            row(lang, msg!("recorded-by"), "source", &view.recorded_by),
            row(lang, msg!("dash-field-key"), "key", view.key_id),
            row(lang, msg!("dash-field-device"), "device", view.device),
            row(lang, msg!("dash-field-digest"), "digest", view.digest),
        ));
        match &view.content {
            Content::Kept(kept) => body.push_str(&content(kept, lang)),
            Content::NotKept => {
                body.push_str(&notice("info", &t(lang, msg!("dash-content-not-kept"))))
            }
            Content::Unreadable(reason) => body.push_str(&notice(
                "error",
                &t(lang, msg!("dash-content-unreadable", reason = *reason)),
            )),
        }
        body.push_str(&totals(&view, lang));
        let title = ctx.text(msg!(
            "dash-invoice-title",
            document = view.document.as_str(),
            rn = view.rn
        ));
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
fn links(view: &InvoiceView<'_>, env: Environment, lang: Lang) -> String {
    let link = |l: &Link<'_>| {
        format!(
            "<a href=\"/dashboard/invoices/{}/{}\">{}</a>",
            env.as_str(),
            l.sequence,
            shown(l.rn)
        )
    };
    let mut out = String::new();
    if let Some(reference) = &view.reference {
        let lead = t(lang, msg!("dash-credit-of", kind = reference.kind));
        let what = match &view.original {
            Some(original) => format!(
                "{lead} {} (<code>{}</code>, {})",
                link(original),
                shown(reference.code),
                esc(&original.total_amount)
            ),
            None => format!(
                "{lead} <code>{}</code> {}",
                shown(reference.code),
                t(lang, msg!("dash-credit-of-unknown"))
            ),
        };
        out.push_str(&format!("<p id=\"original\" class=\"link\">{what}</p>"));
    }
    if !view.credit_notes.is_empty() {
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
        for note in &view.credit_notes {
            let cells = [
                cell(&h[0], "", &link(note)),
                cell(&h[1], "", &type_cell(note.invoice_type, lang)),
                cell(&h[2], "num", &esc(&note.total_amount)),
                cell(&h[3], "", &format!("<code>{}</code>", shown(note.code_def))),
                cell(&h[4], "", &esc(&note.certified)),
            ];
            out.push_str(&format!("<tr>{}</tr>", cells.concat()));
        }
        out.push_str(html::TABLE_END);
        out.push_str("</section>");
    }
    out
}

/// Client, operator, items, payments and comments of the kept invoice.
fn content(invoice: &Kept<'_>, lang: Lang) -> String {
    let mut out = format!(
        "<section id=\"certified-invoice\"><h2>{}</h2><dl class=\"grid\">",
        t(lang, msg!("dash-content-title"))
    );
    out.push_str(&row(lang, msg!("dash-content-mode"), "mode", &invoice.mode));
    out.push_str(&row(
        lang,
        msg!("dash-content-currency"),
        "currency",
        &invoice.currency,
    ));
    out.push_str(&row(
        lang,
        msg!("dash-content-operator"),
        "operator",
        &invoice.operator,
    ));
    match invoice.client {
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
    if !invoice.comments.is_empty() {
        out.push_str(&row(
            lang,
            msg!("dash-content-comments"),
            "comments",
            &invoice.comments.join(" / "),
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
        let mut name = shown(item.name);
        if let Some(code) = item.code {
            name.push_str(&format!(" <small>[{}]</small>", shown(code)));
        }
        if let Some(amount) = &item.specific_tax {
            name.push_str(&format!(
                "<br><small>{}</small>",
                esc(&t(
                    lang,
                    msg!("dash-item-specific-tax", amount = amount.as_str())
                ))
            ));
        }
        if let Some((original, why)) = &item.price_change {
            name.push_str(&format!(
                "<br><small>{}</small>",
                esc(&t(
                    lang,
                    msg!(
                        "dash-item-price-change",
                        original = original.as_str(),
                        why = why.as_str()
                    )
                ))
            ));
        }
        let cells = [
            cell(&h[0], "", &name),
            cell(&h[1], "", &shown(item.item_type)),
            cell(&h[2], "", &shown(item.tax_group)),
            cell(&h[3], "num", &esc(&item.quantity)),
            cell(&h[4], "num", &esc(&item.price)),
            cell(&h[5], "num", &esc(&item.amount)),
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
                let mut text = format!("{} {}", p.name, p.amount);
                if let Some(paid_in) = &p.paid_in {
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
fn totals(view: &InvoiceView<'_>, lang: Lang) -> String {
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
    for [group, ht, vat, ttc] in &view.groups {
        let cells = [
            cell(&h[0], "", group),
            cell(&h[1], "num", &esc(ht)),
            cell(&h[2], "num", &esc(vat)),
            cell(&h[3], "num", &esc(ttc)),
        ];
        out.push_str(&format!("<tr>{}</tr>", cells.concat()));
    }
    out.push_str(html::TABLE_END);
    let usd = view.usd.clone().unwrap_or_else(|| "-".into());
    out.push_str(&format!(
        "<dl class=\"grid\">{}{}{}{}</dl></section>",
        row(lang, msg!("dash-field-total"), "total", &view.total),
        row(lang, msg!("dash-field-vat"), "vat", &view.vat),
        row(
            lang,
            msg!("dash-field-specific-tax"),
            "specific-tax",
            &view.specific_tax_or_zero
        ),
        row(lang, msg!("dash-field-usd"), "usd", &usd),
    ));
    out
}
