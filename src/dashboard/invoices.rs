//! LogInvoices: the organization's registers (production and sandbox apart), searched by rn
//! and certification day, paged newest first; one entry with its security elements and the QR
//! code drawn from `qrCode`; the exports: CSV (for programs, or for a French spreadsheet:
//! "CSV pour Excel") and JSON lines.

use chrono::NaiveDate;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::html::{self, cell, esc, notice, shown, t, Tab};
use super::invoice_page::type_cell;
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::audit::{ExportedEntry, Period};
use crate::admin::{csv, Admin, AdminError, EntryFilter, LogPage, Search};
use crate::http_request;
use crate::i18n::{Lang, Message};
use crate::model::{Environment, RegisterEntry};
use crate::msg;

/// Entries per page.
const PAGE: usize = 50;
/// Entries fetched per admin request while exporting.
const EXPORT_BATCH: usize = 1000;

/// `production` or `sandbox`.
pub(super) fn parse_env(text: &str) -> Option<Environment> {
    match text {
        "production" => Some(Environment::Production),
        "sandbox" => Some(Environment::Sandbox),
        _ => None,
    }
}

/// The search a query string asks for.
struct Query {
    env: Environment,
    rn: String,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    before: Option<u64>,
}

impl Query {
    fn parse(pairs: &[(String, String)]) -> Result<Query, Message> {
        let text = |name: &str| -> Option<String> {
            http_request::field(pairs, name)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let env = match text("env") {
            None => Environment::Production,
            Some(env) => parse_env(&env).ok_or(msg!("dash-search-bad-env"))?,
        };
        let day = |name: &str| match text(name) {
            None => Ok(None),
            Some(v) => NaiveDate::parse_from_str(&v, "%Y-%m-%d")
                .map(Some)
                .map_err(|_| msg!("dash-search-bad-date", value = v)),
        };
        let (from, to) = (day("from")?, day("to")?);
        Period::new(from, to).ok_or(msg!("dash-search-dates-reversed"))?;
        let before = match text("before") {
            None => None,
            Some(v) => Some(
                v.parse::<u64>()
                    .map_err(|_| msg!("dash-search-bad-before"))?,
            ),
        };
        let rn = text("rn").unwrap_or_default();
        Ok(Query {
            env,
            rn,
            from,
            to,
            before,
        })
    }

    /// The query string of this search with another cursor.
    fn href(&self, before: Option<u64>) -> String {
        let mut href = format!("/dashboard/invoices?env={}", self.env.as_str());
        if !self.rn.is_empty() {
            href.push_str(&format!("&rn={}", http_request::url_encode(&self.rn)));
        }
        if let Some(from) = self.from {
            href.push_str(&format!("&from={from}"));
        }
        if let Some(to) = self.to {
            href.push_str(&format!("&to={to}"));
        }
        if let Some(before) = before {
            href.push_str(&format!("&before={before}"));
        }
        href
    }
}

impl Dashboard {
    pub(super) async fn invoices_page(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
    ) -> Response<Body> {
        let query = match Query::parse(&http_request::query(request)) {
            Ok(query) => query,
            Err(text) => {
                return self.error_in(
                    ctx,
                    StatusCode::BAD_REQUEST,
                    msg!("dash-search-bad-title"),
                    text,
                )
            }
        };
        let search = Search {
            rn: Some(query.rn.clone()),
            from: query.from,
            to: query.to,
            before: query.before,
            limit: PAGE,
        };
        let (org_id, env) = (ctx.org.id.clone(), query.env);
        let find = move |admin: &Admin| admin.org_log_search(&org_id, env, &search);
        let LogPage {
            entries,
            next_before: next,
        } = match self.blocking(find).await {
            Ok(page) => page,
            Err(error) => return self.failure_in(ctx, &error),
        };
        let lang = ctx.lang();
        let mut body = search_form(&query, lang);
        if entries.is_empty() {
            body.push_str(&notice("info", &ctx.text(msg!("dash-invoices-none"))));
        } else {
            body.push_str(&self.entries_table(&entries, lang));
        }
        body.push_str(&paging(&query, next, lang));
        ctx.page(&ctx.text(msg!("dash-invoices-title")), Tab::Invoices, &body)
    }

    fn entries_table(&self, entries: &[RegisterEntry], lang: Lang) -> String {
        let zone = self.admin.time_zone();
        let h = [
            msg!("dash-entry-sequence"),
            msg!("dash-entry-rn"),
            msg!("dash-entry-type"),
            msg!("dash-entry-total"),
            msg!("dash-entry-code"),
            msg!("dash-entry-certified"),
            msg!("dash-entry-device-time"),
        ]
        .map(|m| m.render(lang));
        let mut out = html::table_start("entries", &h);
        for e in entries {
            let (seq, env) = (e.sequence, e.request.environment.as_str());
            let link = format!(
                "<a class=\"rn\" href=\"/dashboard/invoices/{env}/{seq}\">{}</a>",
                shown(&e.request.rn)
            );
            let cells = [
                cell(&h[0], "num", &seq.to_string()),
                cell(&h[1], "", &link),
                cell(&h[2], "", &type_cell(&e.request.invoice_type, lang)),
                cell(
                    &h[3],
                    "num total",
                    &esc(&html::amount(e.request.totals.total, lang)),
                ),
                cell(
                    &h[4],
                    "",
                    &format!("<code>{}</code>", shown(&e.security.code_def)),
                ),
                cell(&h[5], "", &esc(&html::time(&e.certified_at, zone, lang))),
                cell(
                    &h[6],
                    "",
                    &esc(&html::device_time(&e.security.date_time, lang)),
                ),
            ];
            out.push_str(&format!("<tr>{}</tr>", cells.concat()));
        }
        out.push_str(html::TABLE_END);
        out
    }

    /// The register of the search's period as CSV (`admin::csv`; `format=excel`: the
    /// spreadsheet dialect, semicolons, decimal commas and a byte order mark), or as JSON
    /// lines with `format=json` (the entry, the invoice it certified, its groups).
    pub(super) async fn invoices_csv(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
    ) -> Response<Body> {
        let pairs = http_request::query(request);
        // CSV for programs, CSV for a French spreadsheet (one code path: admin::csv), or JSON.
        let (dialect, json) = match http_request::field(&pairs, "format") {
            None | Some("csv") => (csv::Dialect::default(), false),
            Some("excel") => (csv::Dialect::SPREADSHEET, false),
            Some("json") => (csv::Dialect::default(), true),
            Some(_) => {
                return self.error_in(
                    ctx,
                    StatusCode::BAD_REQUEST,
                    msg!("dash-export-bad-title"),
                    msg!("dash-export-bad-format"),
                )
            }
        };
        let query = match Query::parse(&pairs) {
            Ok(query) => query,
            Err(text) => {
                return self.error_in(
                    ctx,
                    StatusCode::BAD_REQUEST,
                    msg!("dash-export-bad-title"),
                    text,
                )
            }
        };
        let (env, zone) = (query.env, self.admin.time_zone());
        let period = Period {
            from: query.from,
            to: query.to,
        };
        let mut out = if json {
            String::new()
        } else {
            format!("{}\r\n", csv::header_in(dialect))
        };
        let mut after = 0;
        loop {
            let filter = EntryFilter {
                org: Some(ctx.org.id.clone()),
                environment: env,
                after_sequence: after,
                limit: EXPORT_BATCH,
            };
            let entries: Vec<RegisterEntry> =
                match self.blocking(move |admin| admin.log_list(filter)).await {
                    Ok(entries) => entries,
                    Err(error) => return self.failure_in(ctx, &error),
                };
            let Some(last) = entries.last() else { break };
            after = last.sequence;
            let mine = entries
                .iter()
                .filter(|e| e.request.org == ctx.org.id && period.holds(e, zone));
            for entry in mine {
                if json {
                    match ExportedEntry::of(entry).line() {
                        Ok(line) => out.push_str(&line),
                        Err(error) => {
                            return self.failure_in(ctx, &AdminError::Internal(error.to_string()))
                        }
                    }
                    out.push('\n');
                } else {
                    out.push_str(&csv::row_in(entry, dialect));
                    out.push_str("\r\n");
                }
            }
        }
        let (content_type, extension) = if json {
            ("application/x-ndjson; charset=utf-8", "jsonl")
        } else {
            ("text/csv; charset=utf-8", "csv")
        };
        let mut response = web::response(StatusCode::OK, content_type, out);
        let period = match (query.from, query.to) {
            (None, None) => String::new(),
            (from, to) => format!(
                "-{}_{}",
                from.map(|d| d.to_string()).unwrap_or_default(),
                to.map(|d| d.to_string()).unwrap_or_default()
            ),
        };
        let form = if dialect.semicolon { "-excel" } else { "" };
        let name = format!(
            "attachment; filename=\"loginvoices-{}-{}{period}{form}.{extension}\"",
            ctx.org
                .id
                .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
            env.as_str()
        );
        if let Ok(value) = hyper::header::HeaderValue::from_str(&name) {
            response
                .headers_mut()
                .insert(hyper::header::CONTENT_DISPOSITION, value);
        }
        response
    }
}

/// The register tabs and the search form of `query`.
fn search_form(query: &Query, lang: Lang) -> String {
    let env = query.env.as_str();
    let tab = |e: Environment, text: Message| {
        let current = if e == query.env {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!(
            "<a href=\"/dashboard/invoices?env={}\" id=\"tab-{0}\"{current}>{}</a>",
            e.as_str(),
            t(lang, text)
        )
    };
    let mut body = format!(
        "<p class=\"tabs\">{} · {} <small>{}</small></p>",
        tab(Environment::Production, msg!("dash-tab-production")),
        tab(Environment::Sandbox, msg!("dash-tab-sandbox")),
        t(lang, msg!("dash-tabs-note")),
    );
    body.push_str(&format!(
        "<form method=\"get\" action=\"/dashboard/invoices\" id=\"search-form\"><fieldset>\
         <legend>{legend}</legend><input type=\"hidden\" name=\"env\" value=\"{env}\">\
         <label>{rn_label} <input name=\"rn\" id=\"rn\" value=\"{rn}\" maxlength=\"64\"></label>\
         <label>{from_label} <input type=\"date\" name=\"from\" id=\"from\" value=\"{from}\"></label>\
         <label>{to_label} <input type=\"date\" name=\"to\" id=\"to\" value=\"{to}\"></label>\
         <button type=\"submit\" id=\"search\">{search}</button> <a href=\"/dashboard/invoices?env={env}\">{clear}</a>\
         </fieldset></form><p><a href=\"/dashboard/invoices.csv?env={env}{period}\" id=\"csv\" download>\
         {export}</a> · <a href=\"/dashboard/invoices.csv?env={env}{period}&amp;format=json\" \
         id=\"json\" download>{export_json}</a> · \
         <a href=\"/dashboard/invoices.csv?env={env}{period}&amp;format=excel\" id=\"csv-excel\" \
         aria-describedby=\"csv-excel-hint\" download>{excel}</a> \
         <small id=\"csv-excel-hint\">{excel_hint}</small></p>",
        legend = t(lang, msg!("dash-search-legend", register = env)),
        rn_label = t(lang, msg!("dash-search-rn")),
        from_label = t(lang, msg!("dash-search-from")),
        to_label = t(lang, msg!("dash-search-to")),
        search = t(lang, msg!("dash-search-submit")),
        clear = t(lang, msg!("dash-search-clear")),
        export = t(lang, msg!("dash-export", register = env)),
        export_json = t(lang, msg!("dash-export-json")),
        excel = t(lang, msg!("dash-export-excel")),
        excel_hint = t(lang, msg!("dash-export-excel-hint")),
        period = period_query(query),
        rn = esc(&query.rn),
        from = query.from.map(|d| d.to_string()).unwrap_or_default(),
        to = query.to.map(|d| d.to_string()).unwrap_or_default(),
    ));
    body
}

/// `&from=...&to=...` of the search (for the export links), HTML-escaped.
fn period_query(query: &Query) -> String {
    let mut out = String::new();
    if let Some(from) = query.from {
        out.push_str(&format!("&amp;from={from}"));
    }
    if let Some(to) = query.to {
        out.push_str(&format!("&amp;to={to}"));
    }
    out
}

/// The links to the newest and the older page.
fn paging(query: &Query, next: Option<u64>, lang: Lang) -> String {
    let mut paging = Vec::new();
    if query.before.is_some() {
        paging.push(format!(
            "<a href=\"{}\" id=\"newest\">{}</a>",
            esc(&query.href(None)),
            t(lang, msg!("dash-page-newest"))
        ));
    }
    if let Some(next) = next {
        paging.push(format!(
            "<a href=\"{}\" id=\"older\">{}</a>",
            esc(&query.href(Some(next))),
            t(lang, msg!("dash-page-older"))
        ));
    }
    if paging.is_empty() {
        return String::new();
    }
    format!("<p class=\"paging\">{}</p>", paging.join(" · "))
}
