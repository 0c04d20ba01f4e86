//! The overview: the organization, its quota gauge, its devices' links, what stops or worries
//! certification (device not ready, fiscal anomalies, invoices in doubt), the device's last
//! contact with the DGI, and the counts of its registers and keys.

use chrono::FixedOffset;
use hyper::body::Incoming;
use hyper::{Request, Response};

use super::html::{self, cell, esc, notice, t, Tab};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::certify::ChannelView;
use crate::i18n::Lang;
use crate::model::{AnomalyRecord, FiscalAnomalyKind};
use crate::msg;

impl Dashboard {
    pub(super) async fn overview(&self, ctx: &Ctx, request: &Request<Incoming>) -> Response<Body> {
        let lang = ctx.lang();
        let org_id = ctx.org.id.clone();
        let summary = match self.blocking(move |admin| admin.org_summary(&org_id)).await {
            Ok(summary) => summary,
            Err(error) => return self.failure_in(ctx, &error),
        };
        let (year, used, quota) = (summary.quota.year, summary.quota.used, summary.quota.quota);
        let status = self.certifier.status();
        let device = |name: &str| status.devices.iter().find(|view| view.name == name);
        let org = &ctx.org;
        let zone = self.admin.time_zone();
        // What is open now, read after anything this request follows (a settlement): the
        // in-doubt section and the alert banner say the same.
        let open = self.certifier.open_intents().unwrap_or_default();
        let mut body = match web::field(&web::query(request), "settled") {
            Some("certified") => notice("ok", &ctx.text(msg!("dash-settled-certified"))),
            Some("not_certified") => notice("ok", &ctx.text(msg!("dash-settled-not-certified"))),
            _ => String::new(),
        };
        if let Some(engine) = &self.alerts {
            let in_doubt = super::alerts::InDoubtNow::of(&open, &org.id);
            body.push_str(&super::alerts::banners(
                &engine.active_for(org),
                in_doubt,
                zone,
                lang,
            ));
        }
        body.push_str(&format!(
            "<section><h2>{}</h2><dl class=\"grid\"><dt>{}</dt><dd>{}</dd>\
             <dt>{}</dt><dd>{}</dd><dt>NIF</dt><dd>{}</dd><dt>ISF</dt><dd>{}</dd>\
             <dt>{}</dt><dd>{}</dd></dl></section>",
            t(lang, msg!("dash-org-title")),
            t(lang, msg!("dash-org-name")),
            esc(&org.name),
            t(lang, msg!("dash-org-id")),
            esc(&org.id),
            esc(&org.nif),
            esc(&org.isf),
            t(lang, msg!("dash-org-plan")),
            esc(org.plan.as_str()),
        ));
        body.push_str(&format!(
            "<section><h2>{}</h2><p><meter id=\"quota\" min=\"0\" max=\"{max}\" \
             value=\"{used}\" low=\"{low}\" high=\"{high}\" optimum=\"0\">{used} / {quota}</meter> \
             <span id=\"quota-text\">{}</span></p><p>{}</p></section>",
            t(lang, msg!("dash-quota-title", year = year.to_string())),
            t(
                lang,
                msg!(
                    "dash-quota-used",
                    used = used,
                    quota = quota,
                    left = quota.saturating_sub(used)
                )
            ),
            t(lang, msg!("dash-quota-sandbox")),
            max = quota.max(1),
            low = quota * 7 / 10,
            high = quota * 9 / 10,
        ));
        let headings = [
            msg!("dash-device-register"),
            msg!("dash-device-device"),
            msg!("dash-device-link"),
            msg!("dash-device-since"),
            msg!("dash-device-last-reply"),
            msg!("dash-device-queued"),
            msg!("dash-device-last-error"),
        ]
        .map(|m| m.render(lang));
        body.push_str(&format!(
            "<section><h2>{}</h2>{}",
            t(lang, msg!("dash-devices-title")),
            html::table_start("devices", &headings)
        ));
        let sandbox = crate::certify::sandbox_device_name(&org.id);
        for (id, label, name) in [
            (
                "production",
                msg!("dash-register-production"),
                org.device.as_str(),
            ),
            ("sandbox", msg!("dash-register-sandbox"), sandbox.as_str()),
        ] {
            let row = DeviceRow {
                id,
                label: &label.render(lang),
                name,
                headings: &headings,
            };
            body.push_str(&row.html(device(name), zone, lang));
        }
        body.push_str(html::TABLE_END);
        if let Some(reason) = self.certifier.problem_for(org) {
            body.push_str(&format!(
                "<p class=\"notice error\" role=\"alert\" id=\"device-not-ready\">{}</p>",
                t(lang, msg!("dash-device-not-ready", reason = reason))
            ));
        }
        body.push_str(&fiscal_anomalies(
            &self.certifier.fiscal_anomalies().unwrap_or_default(),
            &org.device,
            zone,
            lang,
        ));
        if status.reconciling.contains(&org.device) {
            body.push_str(&notice("info", &ctx.text(msg!("dash-reconciling"))));
        }
        let mine: Vec<_> = open
            .into_iter()
            .filter(|open| open.org == org.id && open.reason.is_some())
            .collect();
        body.push_str(&super::in_doubt::section(
            &mine,
            zone,
            &ctx.session.csrf,
            lang,
        ));
        body.push_str(&dgi_paragraph(device(&org.device), zone, lang));
        body.push_str("</section>");
        let (p, s) = (summary.entries.production, summary.entries.sandbox);
        body.push_str(&format!(
            "<section><h2>{}</h2><ul><li>{} <a href=\"/dashboard/invoices?env=production\">{}</a> · \
             <a href=\"/dashboard/invoices?env=sandbox\">{}</a> ({})</li><li>{} \
             <a href=\"/dashboard/keys\">{}</a></li></ul></section>",
            t(lang, msg!("dash-registers-title")),
            t(lang, msg!("dash-registers-invoices")),
            t(lang, msg!("dash-registers-production", n = p)),
            t(lang, msg!("dash-registers-sandbox", n = s)),
            t(lang, msg!("dash-registers-separate")),
            t(lang, msg!("dash-registers-keys")),
            t(
                lang,
                msg!(
                    "dash-registers-keys-enabled",
                    enabled = summary.keys.enabled,
                    total = summary.keys.total
                )
            ),
        ));
        ctx.page(&ctx.text(msg!("dash-overview-title")), Tab::Overview, &body)
    }
}

/// One device's row of the overview's table.
struct DeviceRow<'a> {
    /// `production` or `sandbox` (the link badge's id).
    id: &'a str,
    /// The register it certifies for, in the reader's language.
    label: &'a str,
    /// The device's configured name.
    name: &'a str,
    /// The table's column names.
    headings: &'a [String; 7],
}

impl DeviceRow<'_> {
    fn html(&self, status: Option<&ChannelView>, zone: FixedOffset, lang: Lang) -> String {
        let h = self.headings;
        let mut row = format!(
            "<tr class=\"device\">{}{}",
            cell(&h[0], "", &esc(self.label)),
            cell(&h[1], "", &esc(self.name))
        );
        let Some(s) = status else {
            row.push_str(&cell(
                &h[2],
                "",
                &format!(
                    "<span class=\"badge down\" id=\"link-{}\">{}</span>",
                    esc(self.id),
                    t(lang, msg!("dash-link-not-configured"))
                ),
            ));
            for heading in &h[3..] {
                row.push_str(&cell(heading, "", "-"));
            }
            row.push_str("</tr>");
            return row;
        };
        let (class, text) = if s.connected {
            ("up", msg!("dash-link-connected"))
        } else {
            ("down", msg!("dash-link-disconnected"))
        };
        let last_reply = s.last_reply_at.as_ref().map_or_else(
            || msg!("dash-never").render(lang),
            |at| html::time(at, zone, lang),
        );
        row.push_str(&cell(
            &h[2],
            "",
            &format!(
                "<span class=\"badge {class}\" id=\"link-{}\">{}</span>",
                esc(self.id),
                t(lang, text)
            ),
        ));
        row.push_str(&cell(&h[3], "", &esc(&html::time(&s.since, zone, lang))));
        row.push_str(&cell(&h[4], "", &esc(&last_reply)));
        row.push_str(&cell(&h[5], "num", &s.queued.to_string()));
        if let Some(error) = s.last_error.as_deref().filter(|e| !e.is_empty()) {
            row.push_str(&cell(&h[6], "", &esc(error)));
        } else {
            row.push_str(&cell(&h[6], "", "-"));
        }
        row.push_str("</tr>");
        row
    }
}

/// The unacknowledged fiscal anomalies of `device`: a box whose counters contradict the
/// register. Certification goes on; an administrator acknowledges them with the CLI.
fn fiscal_anomalies(
    anomalies: &[AnomalyRecord],
    device: &str,
    zone: FixedOffset,
    lang: Lang,
) -> String {
    let open: Vec<_> = anomalies
        .iter()
        .filter(|a| a.acknowledged.is_none() && a.anomaly.device == device)
        .collect();
    if open.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<section class=\"notice error\" role=\"alert\" id=\"fiscal-anomalies\"><h2>{}</h2>\
         <p>{}</p><ul>",
        t(lang, msg!("dash-anomaly-title")),
        t(lang, msg!("dash-anomaly-intro")),
    );
    for record in open {
        let a = &record.anomaly;
        let what = match a.kind {
            FiscalAnomalyKind::CounterWentBack => msg!("dash-anomaly-counter-went-back"),
            FiscalAnomalyKind::NifChanged => msg!("dash-anomaly-nif-changed"),
        };
        let item = msg!(
            "dash-anomaly-item",
            id = record.id.to_string(),
            at = html::time(&record.detected_at, zone, lang),
            nim = &a.nim,
            what = what.render(lang),
            entry = a.known.sequence.to_string(),
            known_nif = &a.known.nif,
            known_tc = a.known.tc.to_string(),
            seen_nif = &a.seen_nif,
            seen_tc = a.seen_tc.to_string(),
            seen_in = &a.seen_in,
        );
        html.push_str(&format!("<li>{}</li>", t(lang, item)));
    }
    html.push_str("</ul></section>");
    html
}

/// The device's link with the DGI server, as C2h last reported it; for the web API, the
/// token's expiry.
fn dgi_paragraph(status: Option<&ChannelView>, zone: FixedOffset, lang: Lang) -> String {
    if let Some(until) = status.and_then(|s| s.token_valid) {
        let soon = until - chrono::Utc::now() < chrono::Duration::days(7);
        let until = html::time(&until, zone, lang);
        let mut text = t(lang, msg!("dash-dgi-token-valid", until = until));
        if soon {
            text.push_str(&format!(
                " <strong>{}</strong>",
                t(lang, msg!("dash-dgi-token-soon"))
            ));
        }
        return format!("<p id=\"token-valid\">{text}</p>");
    }
    let Some(dgi) = status.and_then(|s| s.dgi.as_ref()) else {
        return format!(
            "<p id=\"dgi-contact\">{}</p>",
            t(lang, msg!("dash-dgi-unknown"))
        );
    };
    let contact = dgi.last_contact.map_or_else(
        || msg!("dash-never").render(lang),
        |at| html::device_time(&at, lang),
    );
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    let mut text = t(
        lang,
        msg!(
            "dash-dgi-contact",
            at = contact,
            state = &dgi.state,
            sent = count(dgi.sent),
            stored = count(dgi.stored)
        ),
    );
    if !dgi.error.is_empty() {
        text.push(' ');
        text.push_str(&t(lang, msg!("dash-dgi-error", error = &dgi.error)));
    }
    format!("<p id=\"dgi-contact\">{text}</p>")
}
