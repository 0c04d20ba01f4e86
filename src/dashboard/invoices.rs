//! LogInvoices: the organization's registers (production and sandbox apart), searched by rn
//! and certification day, paged newest first; one entry with its security elements and the QR
//! code drawn from `qrCode`; the CSV export.

use chrono::NaiveDate;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::html::{self, esc, notice, Tab};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::{csv, Admin, EntryFilter, LogPage, Search};
use crate::model::{Environment, RegisterEntry};

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
    fn parse(pairs: &[(String, String)]) -> Result<Query, String> {
        let text = |name: &str| -> Option<String> {
            web::field(pairs, name)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let env = match text("env") {
            None => Environment::Production,
            Some(env) => parse_env(&env).ok_or("env must be production or sandbox")?,
        };
        let day = |name: &str| match text(name) {
            None => Ok(None),
            Some(v) => NaiveDate::parse_from_str(&v, "%Y-%m-%d")
                .map(Some)
                .map_err(|_| format!("{name}: expected a date as YYYY-MM-DD, got {v:?}")),
        };
        let (from, to) = (day("from")?, day("to")?);
        if let (Some(from), Some(to)) = (from, to) {
            if from > to {
                return Err("the start date is after the end date".to_string());
            }
        }
        let before = match text("before") {
            None => None,
            Some(v) => Some(v.parse::<u64>().map_err(|_| "before: expected a number")?),
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
            href.push_str(&format!("&rn={}", web::url_encode(&self.rn)));
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
        let query = match Query::parse(&web::query(request)) {
            Ok(query) => query,
            Err(text) => {
                return self.error_page(Some(ctx), StatusCode::BAD_REQUEST, "Bad search", &text)
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
            Err(error) => return self.failure(Some(ctx), &error),
        };
        let mut body = search_form(&query);
        if entries.is_empty() {
            body.push_str(&notice("info", "No invoice in this register matches."));
        } else {
            body.push_str(&self.entries_table(&entries));
        }
        body.push_str(&paging(&query, next));
        web::html(
            StatusCode::OK,
            html::page("LogInvoices", Some(&ctx.shell(Tab::Invoices)), &body),
        )
    }

    fn entries_table(&self, entries: &[RegisterEntry]) -> String {
        let offset = self.admin.time_zone();
        let mut out = String::from(
            "<table id=\"entries\"><tr><th>Seq</th><th>rn</th><th>Type</th><th>Total</th>\
             <th>codeDEFDGI</th><th>Certified</th><th>Device time</th></tr>",
        );
        for e in entries {
            out.push_str(&format!(
                "<tr><td class=\"num\">{seq}</td><td><a class=\"rn\" href=\"/dashboard/invoices/{env}/{seq}\">{rn}</a></td>\
                 <td>{kind}</td><td class=\"num\">{total}</td><td><code>{code}</code></td><td>{at}</td><td>{dt}</td></tr>",
                seq = e.sequence,
                env = e.request.environment.as_str(),
                rn = esc(&e.request.rn),
                kind = esc(&e.request.invoice_type),
                total = esc(&e.request.totals.total.to_string()),
                code = esc(&e.security.code_def),
                at = esc(&html::time(&e.certified_at, offset)),
                dt = esc(&e.security.date_time.format("%Y-%m-%d %H:%M:%S").to_string()),
            ));
        }
        out.push_str("</table>");
        out
    }

    pub(super) async fn invoice_page(
        &self,
        ctx: &Ctx,
        env: Environment,
        sequence: u64,
    ) -> Response<Body> {
        let org_id = ctx.org.id.clone();
        let show = move |admin: &Admin| admin.org_log_show(&org_id, env, sequence);
        let entry: RegisterEntry = match self.blocking(show).await {
            Ok(entry) => entry,
            Err(error) => return self.failure(Some(ctx), &error),
        };
        let offset = self.admin.time_zone();
        let (r, s) = (&entry.request, &entry.security);
        let row = |name: &str, id: &str, value: &str| {
            format!("<dt>{}</dt><dd id=\"{id}\">{}</dd>", esc(name), esc(value))
        };
        let groups = |list: &[(char, rust_decimal::Decimal)]| {
            list.iter()
                .map(|(g, v)| format!("{g}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let qr = match crate::qr::svg_of(&s.qr_code) {
            Ok(svg) => strip_prolog(&svg).to_string(),
            Err(error) => notice("error", &error.to_string()),
        };
        let mut body = format!(
            "<p><a href=\"/dashboard/invoices?env={env}\">← {env} register</a></p>\
             <section id=\"security\"><h2>Security elements</h2><div class=\"qr-box\">\
             <figure id=\"qr\">{qr}<figcaption>QR code of <code>qrCode</code></figcaption></figure></div>\
             <dl class=\"grid\">{}{}{}{}{}</dl></section>",
            row("codeDEFDGI", "codeDEFDGI", &s.code_def),
            row("nim", "nim", &s.nim),
            row("counters", "counters", &s.counters),
            row("dateTime (device)", "dateTime", &s.date_time.format("%Y-%m-%d %H:%M:%S").to_string()),
            row("qrCode", "qrCode", &s.qr_code),
            env = env.as_str(),
        );
        body.push_str(&format!(
            "<section><h2>Invoice</h2><dl class=\"grid\">{}{}{}{}{}{}{}{}{}{}{}</dl></section>",
            row("Register", "env", env.as_str()),
            row("Sequence", "sequence", &entry.sequence.to_string()),
            row("rn", "rn", &r.rn),
            row("Type", "type", &r.invoice_type),
            row(
                "Seller NIF / ISF",
                "seller",
                &format!("{} / {}", r.nif, r.isf)
            ),
            row("Received", "received", &html::time(&r.received_at, offset)),
            row(
                "Certified",
                "certified",
                &html::time(&entry.certified_at, offset)
            ),
            row("Recorded from", "source", &entry.source),
            row("API key", "key", &r.key_id),
            row("Device", "device", &r.device),
            row("Request digest (SHA-256)", "digest", &r.request_digest),
        ));
        body.push_str(&format!(
            "<section><h2>Totals (from the device)</h2><dl class=\"grid\">{}{}{}{}{}{}</dl></section>",
            row("Total TTC", "total", &r.totals.total.to_string()),
            row("VAT", "vat", &r.totals.vat.to_string()),
            row("TTC per group", "group-ttc", &groups(&r.totals.group_ttc)),
            row("VAT per group", "group-vat", &groups(&r.totals.group_vat)),
            row("Specific tax", "specific-tax", &r.totals.specific_tax.to_string()),
            row(
                "USD equivalent",
                "usd",
                &r.totals.usd_equivalent.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
            ),
        ));
        let title = format!("Invoice {}", r.rn);
        web::html(
            StatusCode::OK,
            html::page(&title, Some(&ctx.shell(Tab::Invoices)), &body),
        )
    }

    pub(super) async fn invoices_csv(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
    ) -> Response<Body> {
        let query = web::query(request);
        let env = match web::field(&query, "env").map(parse_env) {
            None => Environment::Production,
            Some(Some(env)) => env,
            Some(None) => {
                return self.error_page(
                    Some(ctx),
                    StatusCode::BAD_REQUEST,
                    "Bad export",
                    "env must be production or sandbox",
                )
            }
        };
        let mut out = format!("{}\r\n", csv::HEADER);
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
                    Err(error) => return self.failure(Some(ctx), &error),
                };
            let Some(last) = entries.last() else { break };
            after = last.sequence;
            for entry in entries.iter().filter(|e| e.request.org == ctx.org.id) {
                out.push_str(&csv::row(entry));
                out.push_str("\r\n");
            }
        }
        let mut response = web::response(StatusCode::OK, "text/csv; charset=utf-8", out);
        let name = format!(
            "attachment; filename=\"loginvoices-{}-{}.csv\"",
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

/// The SVG element without the XML declaration, to be inlined in HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    }
}

/// The register tabs and the search form of `query`.
fn search_form(query: &Query) -> String {
    let env = query.env.as_str();
    let tab = |e: Environment, text: &str| {
        let current = if e == query.env {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!(
            "<a href=\"/dashboard/invoices?env={}\" id=\"tab-{0}\"{current}>{text}</a>",
            e.as_str()
        )
    };
    let mut body = format!(
        "<p class=\"tabs\">{} · {} <small>(the sandbox register is separate and never counts in the quota)</small></p>",
        tab(Environment::Production, "Production register"),
        tab(Environment::Sandbox, "Sandbox register"),
    );
    body.push_str(&format!(
        "<form method=\"get\" action=\"/dashboard/invoices\" id=\"search-form\"><fieldset>\
         <legend>Search the {env} register</legend><input type=\"hidden\" name=\"env\" value=\"{env}\">\
         <label>Invoice number (rn) <input name=\"rn\" id=\"rn\" value=\"{rn}\" maxlength=\"64\"></label>\
         <label>Certified from <input type=\"date\" name=\"from\" id=\"from\" value=\"{from}\"></label>\
         <label>to <input type=\"date\" name=\"to\" id=\"to\" value=\"{to}\"></label>\
         <button type=\"submit\" id=\"search\">Search</button> <a href=\"/dashboard/invoices?env={env}\">Clear</a>\
         </fieldset></form><p><a href=\"/dashboard/invoices.csv?env={env}\" id=\"csv\" download>\
         Export the whole {env} register (CSV)</a></p>",
        rn = esc(&query.rn),
        from = query.from.map(|d| d.to_string()).unwrap_or_default(),
        to = query.to.map(|d| d.to_string()).unwrap_or_default(),
    ));
    body
}

/// The links to the newest and the older page.
fn paging(query: &Query, next: Option<u64>) -> String {
    let mut paging = Vec::new();
    if query.before.is_some() {
        paging.push(format!(
            "<a href=\"{}\" id=\"newest\">Newest</a>",
            esc(&query.href(None))
        ));
    }
    if let Some(next) = next {
        paging.push(format!(
            "<a href=\"{}\" id=\"older\">Older →</a>",
            esc(&query.href(Some(next)))
        ));
    }
    if paging.is_empty() {
        return String::new();
    }
    format!("<p class=\"paging\">{}</p>", paging.join(" · "))
}
