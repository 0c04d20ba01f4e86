//! The overview: the organization, its quota gauge, its devices (`devices`: whether they
//! answer, the last exchange with the DGI), what stops or worries certification (device not
//! ready, fiscal anomalies, invoices in doubt), and the counts of its registers and keys; in a
//! shop owner's words, the protocol's names and raw values in the collapsed technical details.

use std::sync::Arc;

use chrono::FixedOffset;
use hyper::body::Incoming;
use hyper::{Request, Response};

use super::devices::{self, Register, Technical};
use super::html::{self, esc, notice, shown, t, Tab};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::i18n::{format, Lang};
use crate::model::AnomalyRecord;
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
        // The status the service keeps: read, not computed, here.
        let status = self.certifier.status();
        let device = |name: &str| status.devices.iter().find(|view| view.name == name);
        let org = &ctx.org;
        let zone = self.admin.time_zone();
        // What is open now, read after anything this request follows (a settlement): the
        // in-doubt section and the alert banner say the same. Read off the runtime's workers
        // with the fiscal anomalies, in one go.
        let certifier = Arc::clone(&self.certifier);
        let (open, anomalies) = tokio::task::spawn_blocking(move || {
            (
                certifier.open_intents().unwrap_or_default(),
                certifier.fiscal_anomalies().unwrap_or_default(),
            )
        })
        .await
        .unwrap_or_default();
        let mut body = match web::field(&web::query(request), "settled") {
            Some("certified") => notice("ok", &ctx.text(msg!("dash-settled-certified"))),
            Some("not_certified") => notice("ok", &ctx.text(msg!("dash-settled-not-certified"))),
            _ => String::new(),
        };
        if let Some(notices) = &self.notices {
            body.push_str(&super::alerts::notice_banners(&notices.shown(), lang));
        }
        if let Some(fault) = &status.storage_fault {
            body.push_str(&super::alerts::register_unwritable(fault, zone, lang));
        }
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
            shown(&org.name),
            t(lang, msg!("dash-org-id")),
            esc(&org.id),
            esc(&org.nif),
            esc(&org.isf),
            t(lang, msg!("dash-org-plan")),
            t(lang, msg!("dash-plan", plan = org.plan.as_str())),
        ));
        let left = quota.saturating_sub(used);
        body.push_str(&format!(
            "<section><h2>{}</h2><p><meter id=\"quota\" min=\"0\" max=\"{max}\" \
             value=\"{used}\" low=\"{low}\" high=\"{high}\" optimum=\"0\">{used} / {quota}</meter> \
             <span id=\"quota-text\">{}</span></p><p>{}</p></section>",
            t(lang, msg!("dash-quota-title", year = year.to_string())),
            t(
                lang,
                msg!(
                    "dash-quota-used",
                    used = format::integer(used, lang),
                    quota = format::integer(quota, lang),
                    left = format::integer(left, lang),
                    n_left = left
                )
            ),
            t(lang, msg!("dash-quota-sandbox")),
            max = quota.max(1),
            low = quota * 7 / 10,
            high = quota * 9 / 10,
        ));
        let mut technical = Technical::default();
        let sandbox = crate::certify::sandbox_device_name(&org.id);
        body.push_str(&format!(
            "<section id=\"devices-section\"><h2>{}</h2>{}",
            t(lang, msg!("dash-devices-title")),
            devices::table(
                &[
                    (Register::Production, &org.device, device(&org.device)),
                    (Register::Sandbox, &sandbox, device(&sandbox)),
                ],
                zone,
                lang,
                &mut technical,
            )
        ));
        if let Some(problem) = self.certifier.problem_for(org) {
            body.push_str(&devices::not_ready(&problem, lang, &mut technical));
        }
        body.push_str(&fiscal_anomalies(
            &anomalies,
            &org.device,
            zone,
            lang,
            &mut technical,
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
        body.push_str(&devices::dgi_paragraph(
            device(&org.device),
            zone,
            lang,
            &mut technical,
        ));
        body.push_str(&technical.html(lang));
        body.push_str("</section>");
        let (p, s) = (summary.entries.production, summary.entries.sandbox);
        body.push_str(&format!(
            "<section><h2>{}</h2><ul><li>{} <a href=\"/dashboard/invoices?env=production\">{}</a> · \
             <a href=\"/dashboard/invoices?env=sandbox\">{}</a> ({})</li><li>{} \
             <a href=\"/dashboard/keys\">{}</a></li></ul></section>",
            t(lang, msg!("dash-registers-title")),
            t(lang, msg!("dash-registers-invoices")),
            t(
                lang,
                msg!(
                    "dash-registers-production",
                    n = p,
                    count = format::integer(p, lang)
                )
            ),
            t(
                lang,
                msg!(
                    "dash-registers-sandbox",
                    n = s,
                    count = format::integer(s, lang)
                )
            ),
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

/// The unacknowledged fiscal anomalies of `device`: a box whose counters contradict the
/// register. Certification goes on; an administrator acknowledges them with the CLI. What the
/// box said, and where, goes to the technical details.
fn fiscal_anomalies(
    anomalies: &[AnomalyRecord],
    device: &str,
    zone: FixedOffset,
    lang: Lang,
    technical: &mut Technical,
) -> String {
    let open: Vec<_> = anomalies
        .iter()
        .filter(|a| a.acknowledged.is_none() && a.anomaly.device == device)
        .collect();
    if open.is_empty() {
        return String::new();
    }
    // A register behind its box stops certification (certify/register_behind.rs).
    let stopped = open
        .iter()
        .any(|a| a.anomaly.kind == crate::model::FiscalAnomalyKind::RegisterBehind);
    let intro = if stopped {
        msg!("dash-anomaly-intro-stopped")
    } else {
        msg!("dash-anomaly-intro")
    };
    let mut html = format!(
        "<section class=\"notice error\" role=\"alert\" id=\"fiscal-anomalies\"><h2>{}</h2>\
         <p>{}</p><ul>",
        t(lang, msg!("dash-anomaly-title")),
        t(lang, intro),
    );
    for record in open {
        let a = &record.anomaly;
        let what = crate::i18n::names::anomaly(a.kind);
        let item = msg!(
            "dash-anomaly-item",
            id = record.id.to_string(),
            at = html::time(&record.detected_at, zone, lang),
            what = what.render(lang),
            known_nif = &a.known.nif,
            known_tc = format::integer(a.known.tc, lang),
            seen_nif = &a.seen_nif,
            seen_tc = format::integer(a.seen_tc, lang),
        );
        html.push_str(&format!("<li>{}</li>", t(lang, item)));
        technical.add(
            lang,
            msg!("dash-tech-anomaly", id = record.id.to_string()),
            &format!(
                "NIM={} entry={} seen_in={}",
                a.nim, a.known.sequence, a.seen_in
            ),
        );
    }
    html.push_str("</ul></section>");
    html
}
