//! The overview (device link, quota gauge, counters) and the API keys page (list, issue with
//! the secret shown once, enable/disable).

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tracing::info;

use super::html::{self, csrf_input, esc, notice, Tab};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::Admin;
use crate::certify::ChannelView;
use crate::model::{Environment, KeyRecord};

/// Longest key label accepted from the dashboard.
const MAX_LABEL: usize = 100;

impl Dashboard {
    pub(super) async fn overview(&self, ctx: &Ctx, request: &Request<Incoming>) -> Response<Body> {
        let org_id = ctx.org.id.clone();
        let summary = match self.blocking(move |admin| admin.org_summary(&org_id)).await {
            Ok(summary) => summary,
            Err(error) => return self.failure(Some(ctx), &error),
        };
        let (year, used, quota) = (summary.quota.year, summary.quota.used, summary.quota.quota);
        let status = self.certifier.status();
        let device = |name: &str| status.devices.iter().find(|view| view.name == name);
        let org = &ctx.org;
        let offset = self.admin.time_zone();
        let mut body = match web::field(&web::query(request), "settled") {
            Some("certified") => notice(
                "ok",
                "The invoice in doubt is settled as certified, with your name in the register: \
                 the ERP's next try of its number gets its elements.",
            ),
            Some("not_certified") => notice(
                "ok",
                "The invoice in doubt is settled as not certified, with your name in the register: \
                 the ERP may send it again.",
            ),
            _ => String::new(),
        };
        body.push_str(&format!(
            "<section><h2>Organization</h2><dl class=\"grid\"><dt>Name</dt><dd>{}</dd>\
             <dt>Id</dt><dd>{}</dd><dt>NIF</dt><dd>{}</dd><dt>ISF</dt><dd>{}</dd>\
             <dt>Plan</dt><dd>{}</dd></dl></section>",
            esc(&org.name),
            esc(&org.id),
            esc(&org.nif),
            esc(&org.isf),
            esc(org.plan.as_str()),
        ));
        body.push_str(&format!(
            "<section><h2>Quota {year}</h2><p><meter id=\"quota\" min=\"0\" max=\"{max}\" \
             value=\"{used}\" low=\"{low}\" high=\"{high}\" optimum=\"0\">{used} / {quota}</meter> \
             <span id=\"quota-text\">{used} of {quota} production invoices used, {left} left \
             this year</span></p><p>Sandbox invoices never count.</p></section>",
            max = quota.max(1),
            low = quota * 7 / 10,
            high = quota * 9 / 10,
            left = quota.saturating_sub(used),
        ));
        body.push_str(
            "<section><h2>Devices</h2><table><tr><th>Register</th><th>Device</th>\
                       <th>Link</th><th>Since</th><th>Last reply from the device</th>\
                       <th>Queued</th><th>Last link error</th></tr>",
        );
        let sandbox = crate::certify::sandbox_device_name(&org.id);
        for (label, name) in [
            ("Production", org.device.as_str()),
            ("Sandbox", sandbox.as_str()),
        ] {
            body.push_str(&device_row(label, name, device(name), offset));
        }
        body.push_str("</table>");
        if let Some(reason) = self.certifier.problem_for(org) {
            body.push_str(&format!(
                "<p class=\"notice error\" role=\"alert\" id=\"device-not-ready\">\
                 Invoices cannot be certified now: {}.</p>",
                esc(&reason)
            ));
        }
        body.push_str(&fiscal_anomalies(
            &self.certifier.fiscal_anomalies().unwrap_or_default(),
            &org.device,
            offset,
        ));
        if status.reconciling.contains(&org.device) {
            body.push_str(&notice(
                "info",
                "The gateway is settling an earlier invoice with this device; new invoices wait.",
            ));
        }
        body.push_str(&super::in_doubt::section(
            &self.certifier.in_doubt_of(&org.id).unwrap_or_default(),
            offset,
            &ctx.session.csrf,
        ));
        body.push_str(&dgi_paragraph(device(&org.device)));
        body.push_str(&format!(
            "<section><h2>Registers</h2><p>LogInvoices: <a href=\"/dashboard/invoices?env=production\">\
             {} production</a> · <a href=\"/dashboard/invoices?env=sandbox\">{} sandbox</a> (a separate \
             register and counter). API keys: <a href=\"/dashboard/keys\">{} enabled of {}</a>.</p></section>",
            summary.entries.production,
            summary.entries.sandbox,
            summary.keys.enabled,
            summary.keys.total,
        ));
        web::html(
            StatusCode::OK,
            html::page("Overview", Some(&ctx.shell(Tab::Overview)), &body),
        )
    }

    pub(super) async fn keys_page(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
        message: Option<String>,
    ) -> Response<Body> {
        let org_id = ctx.org.id.clone();
        let keys: Vec<KeyRecord> = match self.blocking(move |admin| admin.key_list(&org_id)).await {
            Ok(keys) => keys,
            Err(error) => return self.failure(Some(ctx), &error),
        };
        let query = web::query(request);
        let mut body = message.unwrap_or_default();
        // Only this organization's keys are named (the query string is anyone's to write).
        let known =
            |name: &str| web::field(&query, name).filter(|id| keys.iter().any(|k| k.id == *id));
        if let Some(id) = known("disabled") {
            body.push_str(&notice(
                "ok",
                &format!("Key {id} is disabled: requests with it now get 401."),
            ));
        } else if let Some(id) = known("enabled") {
            body.push_str(&notice("ok", &format!("Key {id} is enabled again.")));
        }
        let offset = self.admin.time_zone();
        body.push_str(
            "<table id=\"keys\"><tr><th>Id</th><th>Environment</th><th>Label</th>\
                       <th>Created</th><th>Enabled</th><th></th></tr>",
        );
        for key in &keys {
            let env = key.environment.as_str();
            let (state, action, next) = if key.enabled {
                ("yes", "Disable", "false")
            } else {
                ("no", "Enable", "true")
            };
            body.push_str(&format!(
                "<tr id=\"key-{id}\"><td><code>{id}</code></td><td><span class=\"badge {env}\">{env}</span></td>\
                 <td>{label}</td><td>{created}</td><td class=\"enabled\">{state}</td><td>\
                 <form method=\"post\" action=\"/dashboard/keys/toggle\" class=\"inline\">{csrf}\
                 <input type=\"hidden\" name=\"id\" value=\"{id}\">\
                 <input type=\"hidden\" name=\"enabled\" value=\"{next}\">\
                 <button type=\"submit\" id=\"toggle-{id}\">{action}</button></form></td></tr>",
                id = esc(&key.id),
                label = esc(&key.label),
                created = esc(&html::time(&key.created_at, offset)),
                csrf = csrf_input(&ctx.session.csrf),
            ));
        }
        body.push_str("</table>");
        if keys.is_empty() {
            body.push_str("<p>No API key yet.</p>");
        }
        body.push_str(&format!(
            "<form method=\"post\" action=\"/dashboard/keys\" id=\"issue-form\"><fieldset>\
             <legend>Issue a new API key</legend>{}\
             <label>Environment <select name=\"environment\" id=\"environment\">\
             <option value=\"production\">production (mcf_live_: the fiscal device, counts in the quota)</option>\
             <option value=\"sandbox\">sandbox (mcf_test_: the simulator, separate register)</option>\
             </select></label> <label>Label <input name=\"label\" id=\"label\" maxlength=\"{MAX_LABEL}\" \
             placeholder=\"e.g. ERP till 2\"></label> <button type=\"submit\" id=\"issue\">Issue key</button>\
             </fieldset></form>",
            csrf_input(&ctx.session.csrf)
        ));
        web::html(
            StatusCode::OK,
            html::page("API keys", Some(&ctx.shell(Tab::Keys)), &body),
        )
    }

    pub(super) async fn issue_key(&self, ctx: &Ctx, form: &[(String, String)]) -> Response<Body> {
        let environment = match web::field(form, "environment") {
            Some("production") => Environment::Production,
            Some("sandbox") => Environment::Sandbox,
            _ => {
                return self.error_page(
                    Some(ctx),
                    StatusCode::BAD_REQUEST,
                    "Not possible",
                    "Choose production or sandbox.",
                )
            }
        };
        let label = web::field(form, "label").unwrap_or("").trim().to_string();
        if label.chars().count() > MAX_LABEL || label.chars().any(char::is_control) {
            let text = format!("The label must be at most {MAX_LABEL} characters, on one line.");
            return self.error_page(Some(ctx), StatusCode::BAD_REQUEST, "Not possible", &text);
        }
        let org_id = ctx.org.id.clone();
        let issue = move |admin: &Admin| admin.key_issue(&org_id, environment, &label);
        let issued = match self.blocking(issue).await {
            Ok(issued) => issued,
            Err(error) => return self.failure(Some(ctx), &error),
        };
        let (key, id) = (issued.key.as_str(), issued.record.id.as_str());
        info!(org = %ctx.org.id, key = %id, environment = environment.as_str(), "API key issued from the dashboard");
        let body = format!(
            "{}<p>Key <code>{}</code> ({}):</p><code class=\"secret\" id=\"new-key\">{}</code>\
             <p>Copy it into the ERP now. The gateway keeps only a hash of it: it will never be \
             shown again, and if it is lost, issue another and disable this one.</p>\
             <p><a href=\"/dashboard/keys\">Back to the keys</a></p>",
            notice("ok", "Key issued."),
            esc(id),
            esc(environment.as_str()),
            esc(key),
        );
        web::html(
            StatusCode::OK,
            html::page("API key issued", Some(&ctx.shell(Tab::Keys)), &body),
        )
    }

    pub(super) async fn toggle_key(&self, ctx: &Ctx, form: &[(String, String)]) -> Response<Body> {
        let id = web::field(form, "id").unwrap_or("").to_string();
        let enabled = match web::field(form, "enabled") {
            Some("true") => true,
            Some("false") => false,
            _ => {
                return self.error_page(
                    Some(ctx),
                    StatusCode::BAD_REQUEST,
                    "Not possible",
                    "Say whether to enable or disable the key.",
                )
            }
        };
        let (org_id, key_id) = (ctx.org.id.clone(), id.clone());
        let toggle = move |admin: &Admin| admin.org_key_set_enabled(&org_id, &key_id, enabled);
        if let Err(error) = self.blocking(toggle).await {
            return self.failure(Some(ctx), &error);
        }
        info!(org = %ctx.org.id, key = %id, enabled, "API key toggled from the dashboard");
        let done = if enabled { "enabled" } else { "disabled" };
        web::redirect(&format!("/dashboard/keys?{done}={}", web::url_encode(&id)))
    }
}

/// One device's row of the overview.
fn device_row(
    label: &str,
    name: &str,
    status: Option<&ChannelView>,
    offset: chrono::FixedOffset,
) -> String {
    let Some(s) = status else {
        return format!(
            "<tr><td>{}</td><td>{}</td><td><span class=\"badge down\">not configured</span></td>\
             <td></td><td></td><td></td><td></td></tr>",
            esc(label),
            esc(name)
        );
    };
    let (class, text) = if s.connected {
        ("up", "connected")
    } else {
        ("down", "disconnected")
    };
    let at = |t: &Option<chrono::DateTime<chrono::Utc>>| {
        t.as_ref()
            .map(|t| html::time(t, offset))
            .unwrap_or_else(|| "never".to_string())
    };
    format!(
        "<tr class=\"device\"><td>{}</td><td>{}</td><td><span class=\"badge {class}\" \
         id=\"link-{}\">{text}</span></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
        esc(label),
        esc(name),
        esc(&label.to_ascii_lowercase()),
        esc(&html::time(&s.since, offset)),
        esc(&at(&s.last_reply_at)),
        s.queued,
        esc(s.last_error.as_deref().unwrap_or("")),
    )
}

/// The unacknowledged fiscal anomalies of `device`: a box whose counters contradict the
/// register. Certification goes on; an administrator acknowledges them with the CLI.
fn fiscal_anomalies(
    anomalies: &[crate::model::AnomalyRecord],
    device: &str,
    offset: chrono::FixedOffset,
) -> String {
    let open: Vec<_> = anomalies
        .iter()
        .filter(|a| a.acknowledged.is_none() && a.anomaly.device == device)
        .collect();
    if open.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<section class=\"notice error\" role=\"alert\" id=\"fiscal-anomalies\"><h2>Fiscal \
         anomaly</h2><p>The box contradicts what the register knows of it. Invoices are still \
         certified (the box is the fiscal authority); tell the gateway's administrator, who \
         checks it with the DGI and acknowledges it.</p><ul>",
    );
    for record in open {
        let a = &record.anomaly;
        html.push_str(&format!(
            "<li>No. {}, {}: box {} {}: the register's last entry ({}) has NIF {} and counter \
             {}; the box said NIF {} and counter {} ({}).</li>",
            record.id,
            esc(&html::time(&record.detected_at, offset)),
            esc(&a.nim),
            esc(a.kind.describe()),
            a.known.sequence,
            esc(&a.known.nif),
            a.known.tc,
            esc(&a.seen_nif),
            a.seen_tc,
            esc(&a.seen_in),
        ));
    }
    html.push_str("</ul></section>");
    html
}

/// The device's link with the DGI server, as C2h last reported it; for the web API, the
/// token's expiry.
fn dgi_paragraph(status: Option<&ChannelView>) -> String {
    if let Some(until) = status.and_then(|s| s.token_valid) {
        let soon = until - chrono::Utc::now() < chrono::Duration::days(7);
        return format!(
            "<p>DGI web API token valid until <em id=\"token-valid\">{}</em>{}</p></section>",
            esc(&until.format("%Y-%m-%d %H:%M UTC").to_string()),
            if soon {
                ": <strong>it expires within 7 days; install a new token from the DGI portal.</strong>"
            } else {
                "."
            }
        );
    }
    let Some(dgi) = status.and_then(|s| s.dgi.as_ref()) else {
        return "<p>Last contact of the device with the DGI (C2h): <em id=\"dgi-contact\">\
                unknown</em> (the device has not answered C2h since the gateway started).</p></section>"
            .to_string();
    };
    let contact = dgi.last_contact.map_or_else(
        || "never".to_string(),
        |at| at.format("%Y-%m-%d %H:%M:%S").to_string(),
    );
    let error = if dgi.error.is_empty() {
        String::new()
    } else {
        format!(" Last error: {}.", esc(&dgi.error))
    };
    format!(
        "<p>Last contact of the device with the DGI (C2h, device clock): \
         <em id=\"dgi-contact\">{}</em>; link {}; {} invoices sent, {} stored not yet sent.{}</p></section>",
        esc(&contact),
        esc(&dgi.state),
        dgi.sent.map_or_else(|| "?".to_owned(), |n| n.to_string()),
        dgi.stored.map_or_else(|| "?".to_owned(), |n| n.to_string()),
        error
    )
}
