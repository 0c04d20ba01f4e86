//! The API keys page: the organization's keys, issuing one (the secret shown once), enabling
//! one, and disabling one, which cuts off the tills using it at once: so it is asked first
//! (`GET /dashboard/keys/disable?id=`: the key's id and label, Confirm / Cancel) and done only by
//! that page's form (`POST /dashboard/keys/disable`, with the CSRF token).

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tracing::info;

use super::html::{self, cell, csrf_input, esc, notice, t, Tab};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::{Admin, AdminError};
use crate::http_request;
use crate::i18n::Lang;
use crate::model::{Environment, KeyRecord};
use crate::msg;

/// Longest key label accepted from the dashboard.
const MAX_LABEL: usize = crate::admin::MAX_NAME;

/// An environment's name in the reader's language.
pub(super) use crate::i18n::names::environment as env_name;

/// An environment's badge (its class is its code, its text in the reader's language).
pub(super) fn env_badge(env: Environment, lang: Lang) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        env.as_str(),
        t(lang, env_name(env))
    )
}

impl Dashboard {
    /// The organization's keys, or the page to answer instead.
    async fn keys_of(&self, ctx: &Ctx) -> Result<Vec<KeyRecord>, Response<Body>> {
        let org_id = ctx.org.id.clone();
        self.blocking(move |admin| admin.key_list(&org_id))
            .await
            .map_err(|error| self.failure_in(ctx, &error))
    }

    pub(super) async fn keys_page(&self, ctx: &Ctx, request: &Request<Incoming>) -> Response<Body> {
        let lang = ctx.lang();
        let keys = match self.keys_of(ctx).await {
            Ok(keys) => keys,
            Err(response) => return response,
        };
        let query = http_request::query(request);
        let mut body = String::new();
        // Only this organization's keys are named (the query string is anyone's to write).
        let known = |name: &str| {
            http_request::field(&query, name).filter(|id| keys.iter().any(|k| k.id == *id))
        };
        if let Some(id) = known("disabled") {
            body.push_str(&notice("ok", &ctx.text(msg!("dash-key-disabled", id = id))));
        } else if let Some(id) = known("enabled") {
            body.push_str(&notice("ok", &ctx.text(msg!("dash-key-enabled", id = id))));
        }
        let zone = self.admin.time_zone();
        let headings = [
            msg!("dash-key-id"),
            msg!("dash-key-environment"),
            msg!("dash-key-label"),
            msg!("dash-key-created"),
            msg!("dash-key-enabled-heading"),
            msg!("dash-key-action"),
        ]
        .map(|m| m.render(lang));
        body.push_str(&html::table_start("keys", &headings));
        for key in &keys {
            let id = esc(&key.id);
            let (state, action) = if key.enabled {
                (
                    msg!("yes"),
                    // Asked first: a GET to the confirmation page.
                    format!(
                        "<form method=\"get\" action=\"/dashboard/keys/disable\" class=\"inline\">\
                         <input type=\"hidden\" name=\"id\" value=\"{id}\">\
                         <button type=\"submit\" id=\"toggle-{id}\">{}</button></form>",
                        t(lang, msg!("dash-key-disable"))
                    ),
                )
            } else {
                (
                    msg!("no"),
                    format!(
                        "<form method=\"post\" action=\"/dashboard/keys/toggle\" class=\"inline\">{}\
                         <input type=\"hidden\" name=\"id\" value=\"{id}\">\
                         <input type=\"hidden\" name=\"enabled\" value=\"true\">\
                         <button type=\"submit\" id=\"toggle-{id}\">{}</button></form>",
                        csrf_input(&ctx.session.csrf),
                        t(lang, msg!("dash-key-enable"))
                    ),
                )
            };
            body.push_str(&format!(
                "<tr id=\"key-{id}\">{}{}{}{}{}{}</tr>",
                cell(&headings[0], "", &format!("<code>{id}</code>")),
                cell(&headings[1], "", &env_badge(key.environment, lang)),
                cell(&headings[2], "", &esc(&key.label)),
                cell(
                    &headings[3],
                    "",
                    &esc(&html::time(&key.created_at, zone, lang))
                ),
                cell(&headings[4], "enabled", &t(lang, state)),
                cell("", "", &action),
            ));
        }
        body.push_str(html::TABLE_END);
        if keys.is_empty() {
            body.push_str(&format!("<p>{}</p>", t(lang, msg!("dash-keys-none"))));
        }
        body.push_str(&format!(
            "<form method=\"post\" action=\"/dashboard/keys\" id=\"issue-form\"><fieldset>\
             <legend>{legend}</legend>{csrf}\
             <label>{env} <select name=\"environment\" id=\"environment\">\
             <option value=\"production\">{production}</option>\
             <option value=\"sandbox\">{sandbox}</option>\
             </select></label> <label>{label} <input name=\"label\" id=\"label\" maxlength=\"{MAX_LABEL}\" \
             placeholder=\"{placeholder}\"></label> <button type=\"submit\" id=\"issue\">{submit}</button>\
             </fieldset></form>",
            legend = t(lang, msg!("dash-issue-legend")),
            csrf = csrf_input(&ctx.session.csrf),
            env = t(lang, msg!("dash-key-environment")),
            production = t(lang, msg!("dash-issue-production")),
            sandbox = t(lang, msg!("dash-issue-sandbox")),
            label = t(lang, msg!("dash-key-label")),
            placeholder = t(lang, msg!("dash-issue-placeholder")),
            submit = t(lang, msg!("dash-issue-submit")),
        ));
        ctx.page(&ctx.text(msg!("dash-keys-title")), Tab::Keys, &body)
    }

    pub(super) async fn issue_key(&self, ctx: &Ctx, form: &[(String, String)]) -> Response<Body> {
        let lang = ctx.lang();
        let environment = match http_request::field(form, "environment") {
            Some("production") => Environment::Production,
            Some("sandbox") => Environment::Sandbox,
            _ => return self.refused(ctx, msg!("dash-issue-choose-env")),
        };
        // The admin layer refuses a label that is not one plain line (`admin::check_name`).
        let label = http_request::field(form, "label")
            .unwrap_or("")
            .trim()
            .to_string();
        let org_id = ctx.org.id.clone();
        let issue = move |admin: &Admin| admin.key_issue(&org_id, environment, &label);
        let issued = match self.blocking(issue).await {
            Ok(issued) => issued,
            Err(error) => return self.failure_in(ctx, &error),
        };
        let (key, id) = (issued.plaintext.as_str(), issued.record.id.as_str());
        info!(org = %ctx.org.id, key = %id, environment = environment.as_str(), "API key issued from the dashboard");
        let body = format!(
            "{}<p>{}</p><code class=\"secret\" id=\"new-key\">{}</code><p>{}</p>\
             <p><a href=\"/dashboard/keys\">{}</a></p>",
            notice("ok", &ctx.text(msg!("dash-issued"))),
            t(
                lang,
                msg!(
                    "dash-issued-key",
                    id = id,
                    environment = env_name(environment).render(lang)
                )
            ),
            esc(key),
            t(lang, msg!("dash-issued-copy")),
            t(lang, msg!("dash-back-keys")),
        );
        ctx.page(&ctx.text(msg!("dash-issued-title")), Tab::Keys, &body)
    }

    /// `POST /dashboard/keys/toggle`: enables a key; a request to disable one is led to the
    /// confirmation (nothing is done).
    pub(super) async fn toggle_key(&self, ctx: &Ctx, form: &[(String, String)]) -> Response<Body> {
        let id = http_request::field(form, "id").unwrap_or("").to_string();
        match http_request::field(form, "enabled") {
            Some("true") => self.set_enabled(ctx, id, true).await,
            Some("false") => web::redirect(&format!(
                "/dashboard/keys/disable?id={}",
                http_request::url_encode(&id)
            )),
            _ => self.refused(ctx, msg!("dash-toggle-say")),
        }
    }

    /// `POST /dashboard/keys/disable`: the confirmation's form.
    pub(super) async fn disable_key(&self, ctx: &Ctx, form: &[(String, String)]) -> Response<Body> {
        let id = http_request::field(form, "id").unwrap_or("").to_string();
        self.set_enabled(ctx, id, false).await
    }

    async fn set_enabled(&self, ctx: &Ctx, id: String, enabled: bool) -> Response<Body> {
        let (org_id, key_id) = (ctx.org.id.clone(), id.clone());
        let toggle = move |admin: &Admin| admin.org_key_set_enabled(&org_id, &key_id, enabled);
        match self.blocking(toggle).await {
            Ok(_) => {}
            Err(AdminError::NotFound(_)) => {
                return self.error_in(
                    ctx,
                    StatusCode::NOT_FOUND,
                    msg!("dash-err-not-found-title"),
                    msg!("dash-key-not-found", id = id),
                )
            }
            Err(error) => return self.failure_in(ctx, &error),
        }
        info!(org = %ctx.org.id, key = %id, enabled, "API key toggled from the dashboard");
        let done = if enabled { "enabled" } else { "disabled" };
        web::redirect(&format!(
            "/dashboard/keys?{done}={}",
            http_request::url_encode(&id)
        ))
    }

    /// `GET /dashboard/keys/disable?id=`: "Disable key X (label)? The tills using it will be
    /// refused at once." with Confirm (a POST form with the CSRF token) and Cancel.
    pub(super) async fn confirm_disable(
        &self,
        ctx: &Ctx,
        request: &Request<Incoming>,
    ) -> Response<Body> {
        let lang = ctx.lang();
        let query = http_request::query(request);
        let id = http_request::field(&query, "id").unwrap_or("");
        let keys = match self.keys_of(ctx).await {
            Ok(keys) => keys,
            Err(response) => return response,
        };
        let Some(key) = keys.iter().find(|k| k.id == id) else {
            let text = msg!("dash-key-not-found", id = id);
            return self.error_in(
                ctx,
                StatusCode::NOT_FOUND,
                msg!("dash-err-not-found-title"),
                text,
            );
        };
        let back = format!(
            "<p><a href=\"/dashboard/keys\" id=\"cancel\">{}</a></p>",
            t(lang, msg!("dash-back-keys"))
        );
        if !key.enabled {
            let body = format!(
                "{}{back}",
                notice("info", &ctx.text(msg!("dash-disable-already", id = id)))
            );
            return ctx.page(&ctx.text(msg!("dash-keys-title")), Tab::Keys, &body);
        }
        let question = if key.label.is_empty() {
            msg!("dash-disable-question-unlabelled", id = &key.id)
        } else {
            msg!("dash-disable-question", id = &key.id, label = &key.label)
        };
        let body = format!(
            "<p class=\"notice warn\" id=\"confirm-question\">{}</p><p>{} {}</p>\
             <form method=\"post\" action=\"/dashboard/keys/disable\" id=\"disable-form\">{}\
             <input type=\"hidden\" name=\"id\" value=\"{}\"><div class=\"actions\">\
             <button type=\"submit\" class=\"danger\" id=\"confirm-disable\">{}</button>\
             <a href=\"/dashboard/keys\" class=\"button\" id=\"cancel\">{}</a></div></form>",
            t(lang, question),
            env_badge(key.environment, lang),
            t(lang, msg!("dash-disable-undo")),
            csrf_input(&ctx.session.csrf),
            esc(&key.id),
            t(lang, msg!("dash-disable-confirm")),
            t(lang, msg!("dash-disable-cancel")),
        );
        let title = ctx.text(msg!("dash-disable-title", id = &key.id));
        ctx.page(&title, Tab::Keys, &body)
    }
}
