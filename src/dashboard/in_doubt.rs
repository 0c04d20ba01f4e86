//! An organization's invoices in doubt (a web API confirm whose answer was lost and whose
//! request left the DGI's pending list): shown on the overview, each with a form to settle it
//! from what the DGI's portal shows, as `emcf-gateway intent resolve` does. The settlement is
//! journaled with the name typed and the organization's dashboard as where it came from.

use chrono::NaiveDateTime;
use hyper::{Response, StatusCode};

use super::html::{self, csrf_input, t};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::certify::{OpenIntent, Resolution, ResolveError};
use crate::http_request;
use crate::i18n::Lang;
use crate::msg;

/// The overview's section: nothing when no invoice of the organization is in doubt.
pub(super) fn section(
    mine: &[OpenIntent],
    zone: chrono::FixedOffset,
    csrf: &str,
    lang: Lang,
) -> String {
    if mine.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<section class=\"notice error\" role=\"alert\" id=\"in-doubt\"><h2>{}</h2><p>{}</p><ul>",
        t(lang, msg!("dash-doubt-title", n = mine.len())),
        t(lang, msg!("dash-doubt-intro")),
    );
    for intent in mine {
        let item = msg!(
            "dash-doubt-item",
            rn = &intent.rn,
            total = html::amount(intent.total, lang),
            received = html::time(&intent.received_at, zone, lang),
            request = intent.channel_ref.as_deref().unwrap_or("-"),
        );
        html.push_str(&format!(
            "<li>{}{}</li>",
            t(lang, item),
            form(intent, csrf, lang)
        ));
    }
    html.push_str("</ul></section>");
    html
}

/// The settle form of one invoice in doubt.
fn form(intent: &OpenIntent, csrf: &str, lang: Lang) -> String {
    let id = intent.intent;
    let l = |message| t(lang, message);
    format!(
        "<details id=\"settle-{id}\"><summary>{summary}</summary>\
         <form method=\"post\" action=\"/dashboard/in-doubt/resolve\">{csrf}\
         <input type=\"hidden\" name=\"intent\" value=\"{id}\">\
         <fieldset><legend>{portal}</legend>\
         <label><input type=\"radio\" name=\"outcome\" value=\"certified\" required> {certified}</label>\
         <label>{code} <input name=\"code_def\" maxlength=\"500\"></label>\
         <label>{qr} <input name=\"qr_code\" maxlength=\"500\"></label>\
         <label>{counters} <input name=\"counters\" maxlength=\"40\"></label>\
         <label>{nim} <input name=\"nim\" maxlength=\"100\"></label>\
         <label>{date} <input type=\"datetime-local\" step=\"1\" name=\"date_time\"></label>\
         <label><input type=\"radio\" name=\"outcome\" value=\"not_certified\"> {not_certified}</label>\
         </fieldset>\
         <label>{by} <input name=\"by\" required maxlength=\"100\"></label>\
         <label>{note} <input name=\"note\" maxlength=\"300\"></label>\
         <button type=\"submit\">{submit}</button></form></details>",
        summary = l(msg!("dash-doubt-settle-rn", rn = &intent.rn)),
        csrf = csrf_input(csrf),
        portal = l(msg!("dash-doubt-portal")),
        certified = l(msg!("dash-doubt-certified")),
        code = l(msg!("dash-doubt-code")),
        qr = l(msg!("dash-doubt-qr")),
        nim = l(msg!("dash-doubt-nim")),
        counters = l(msg!("dash-doubt-counters")),
        date = l(msg!("dash-doubt-date")),
        not_certified = l(msg!("dash-doubt-not-certified")),
        by = l(msg!("dash-doubt-by")),
        note = l(msg!("dash-doubt-note")),
        submit = l(msg!("dash-doubt-submit")),
    )
}

/// A date-time from the form: `datetime-local` sends `YYYY-MM-DDTHH:MM[:SS]`.
fn date_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M"))
        .ok()
}

impl Dashboard {
    /// `POST /dashboard/in-doubt/resolve`: settles one of the organization's invoices in doubt.
    pub(super) async fn resolve_in_doubt(
        &self,
        ctx: &Ctx,
        form: &[(String, String)],
    ) -> Response<Body> {
        let field = |name: &str| http_request::field(form, name).unwrap_or("").to_string();
        let refuse = |message: super::errors::Text| {
            self.error_in(
                ctx,
                StatusCode::BAD_REQUEST,
                msg!("dash-doubt-not-settled-title"),
                message,
            )
        };
        // Only this organization's invoices in doubt can be named (the form is anyone's to
        // write).
        let org = ctx.org.id.clone();
        let mine = self
            .certifier
            .off_workers(move |certifier| certifier.in_doubt_of(&org))
            .await
            .unwrap_or_default();
        let Some(open) = field("intent")
            .parse::<u64>()
            .ok()
            .and_then(|id| mine.into_iter().find(|open| open.intent == id))
        else {
            return refuse(msg!("dash-doubt-not-mine").into());
        };
        let resolution = match field("outcome").as_str() {
            "certified" => {
                let Some(at) = date_time(&field("date_time")) else {
                    return refuse(msg!("dash-doubt-need-date").into());
                };
                Resolution::Certified {
                    code_def: field("code_def"),
                    qr_code: field("qr_code"),
                    counters: field("counters"),
                    nim: field("nim"),
                    date_time: at,
                }
            }
            "not_certified" => Resolution::NotCertified,
            _ => return refuse(msg!("dash-doubt-say-outcome").into()),
        };
        let note = format!("dashboard of {}; {}", ctx.org.id, field("note").trim());
        match self
            .certifier
            .resolve_intent(open.intent, resolution.clone(), &field("by"), &note)
            .await
        {
            Ok(_) => {
                let outcome = match resolution {
                    Resolution::Certified { .. } => "certified",
                    Resolution::NotCertified => "not_certified",
                };
                web::redirect(&format!("/dashboard/?settled={outcome}"))
            }
            Err(error @ (ResolveError::NoName | ResolveError::BadElement(_))) => {
                refuse(super::errors::Text::described(error.describe(ctx.lang())))
            }
            Err(ResolveError::NotAwaiting(_)) => refuse(msg!("dash-doubt-not-awaiting").into()),
            Err(ResolveError::Certify(error)) => self.error_in(
                ctx,
                StatusCode::SERVICE_UNAVAILABLE,
                msg!("dash-doubt-not-settled-title"),
                msg!(
                    "dash-doubt-register-failed",
                    error = error.describe(ctx.lang())
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_date_time_is_read_with_or_without_seconds() {
        let at = date_time("2026-11-23T10:15:30").unwrap();
        assert_eq!(at.to_string(), "2026-11-23 10:15:30");
        let at = date_time("2026-11-23T10:15").unwrap();
        assert_eq!(at.to_string(), "2026-11-23 10:15:00");
        assert!(date_time("23/11/2026 10:15").is_none());
        assert!(date_time("").is_none());
    }
}
