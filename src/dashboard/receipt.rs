//! `GET /dashboard/invoices/{env}/{seq}/receipt?layout=a4|80mm|58mm`: the printable fiscal
//! block of one register entry of the session's organization (the same page as the API's
//! `receipt.html`, `crate::receipt::html`), in the reader's language, with a link back to the
//! invoice and to the other layouts above it on screen (not printed); a credit note's block
//! names the invoice it reduces when this organization's register holds it. Served with the
//! receipt's CSP (inline styles, nothing else) and no framing.

use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LANGUAGE};
use hyper::{Request, Response, StatusCode};

use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::audit::InvoiceRecord;
use crate::admin::Admin;
use crate::http_request;
use crate::model::Environment;
use crate::msg;
use crate::receipt::html::{self, Screen};
use crate::receipt::{Layout, Original};

/// The page's `Content-Security-Policy`: the receipt's, and no framing (as every dashboard
/// page).
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

impl Dashboard {
    /// The fiscal block of entry `sequence` of `env`, laid out as `?layout=` asks.
    pub(super) async fn receipt_page(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
        env: Environment,
        sequence: u64,
    ) -> Response<Body> {
        let query = http_request::query(request);
        let layout = match http_request::field(&query, "layout") {
            None => Layout::default(),
            Some(text) => match Layout::parse(text) {
                Some(layout) => layout,
                None => return self.refused(ctx, msg!("receipt-bad-layout", value = text)),
            },
        };
        let org_id = ctx.org.id.clone();
        let show = move |admin: &Admin| admin.org_log_invoice(&org_id, env, sequence);
        let record: InvoiceRecord = match self.blocking(show).await {
            Ok(record) => record,
            Err(error) => return self.failure_in(ctx, &error),
        };
        // A credit note's block names its original (this organization's, this register's).
        let original = record.original.as_ref().map(|link| Original {
            rn: &link.rn,
            code_def: &link.code_def,
        });
        let lang = ctx.lang();
        let invoice = format!("/dashboard/invoices/{}/{sequence}", env.as_str());
        let layout_text = |layout: Layout| {
            match layout {
                Layout::A4 => msg!("receipt-layout-a4"),
                Layout::Mm80 => msg!("receipt-layout-80mm"),
                Layout::Mm58 => msg!("receipt-layout-58mm"),
            }
            .render(lang)
        };
        let others = Layout::ALL
            .into_iter()
            .filter(|other| *other != layout)
            .map(|other| {
                (
                    format!("{invoice}/receipt?layout={}", other.as_str()),
                    layout_text(other),
                )
            })
            .collect();
        let screen = Screen {
            back: Some((invoice.clone(), msg!("receipt-back").render(lang))),
            layouts: Some((msg!("receipt-print-hint").render(lang), others)),
        };
        let page = html::page_with(&record.entry, original, layout, lang, &screen);
        let mut response = web::html(StatusCode::OK, page);
        let headers = response.headers_mut();
        headers.insert("content-security-policy", HeaderValue::from_static(CSP));
        headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
        response
    }
}
