//! An organization's invoices in doubt (a web API confirm whose answer was lost and whose
//! request left the DGI's pending list): shown on the overview, each with a form to settle it
//! from what the DGI's portal shows, as `emcf-gateway intent resolve` does. The settlement is
//! journaled with the name typed and the organization's dashboard as where it came from.

use chrono::NaiveDateTime;
use hyper::{Response, StatusCode};

use super::html::{self, csrf_input, esc};
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::certify::{OpenIntent, Resolution, ResolveError};

/// The overview's section: nothing when no invoice of the organization is in doubt.
pub(super) fn section(mine: &[OpenIntent], offset: chrono::FixedOffset, csrf: &str) -> String {
    if mine.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<section class=\"notice error\" role=\"alert\" id=\"in-doubt\"><h2>{} invoice(s) in \
         doubt</h2><p>The DGI's answer to these confirmations was lost and the DGI no longer lists \
         them as pending: whether they were certified is not known. Do not send them again under \
         another number. Look each one up on the DGI's portal (by its number or its request), then \
         say here what the portal shows; the ERP's next try of the same number then gets the \
         answer. The gateway's administrator can do the same with <code>emcf-gateway intent \
         list</code> and <code>intent resolve</code>.</p><ul>",
        mine.len()
    );
    for intent in mine {
        html.push_str(&format!(
            "<li>rn <strong>{}</strong> ({}, total {}), received {}; request {}{}</li>",
            esc(&intent.rn),
            esc(&intent.invoice_type),
            intent.total,
            esc(&html::time(&intent.received_at, offset)),
            esc(intent.channel_ref.as_deref().unwrap_or("-")),
            form(intent, csrf),
        ));
    }
    html.push_str("</ul></section>");
    html
}

/// The settle form of one invoice in doubt.
fn form(intent: &OpenIntent, csrf: &str) -> String {
    let id = intent.intent;
    format!(
        "<details id=\"settle-{id}\"><summary>Settle rn {rn}</summary>\
         <form method=\"post\" action=\"/dashboard/in-doubt/resolve\">{csrf}\
         <input type=\"hidden\" name=\"intent\" value=\"{id}\">\
         <fieldset><legend>What the DGI's portal shows</legend>\
         <label><input type=\"radio\" name=\"outcome\" value=\"certified\" required> Certified, with \
         these elements:</label>\
         <label>codeDEFDGI <input name=\"code_def\" maxlength=\"500\"></label>\
         <label>QR code (its text) <input name=\"qr_code\" maxlength=\"500\"></label>\
         <label>Counters, e.g. 12/345 FV <input name=\"counters\" maxlength=\"40\"></label>\
         <label>NIM <input name=\"nim\" maxlength=\"100\"></label>\
         <label>Date and time on the portal <input type=\"datetime-local\" step=\"1\" \
         name=\"date_time\"></label>\
         <label><input type=\"radio\" name=\"outcome\" value=\"not_certified\"> Not certified: the \
         portal shows no such invoice (the ERP may then send it again)</label></fieldset>\
         <label>Your name (journaled) <input name=\"by\" required maxlength=\"100\"></label>\
         <label>Note <input name=\"note\" maxlength=\"300\"></label>\
         <button type=\"submit\">Settle</button></form></details>",
        rn = esc(&intent.rn),
        csrf = csrf_input(csrf),
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
        let field = |name: &str| web::field(form, name).unwrap_or("").to_string();
        let refuse = |message: &str| {
            self.error_page(Some(ctx), StatusCode::BAD_REQUEST, "Not settled", message)
        };
        // Only this organization's invoices in doubt can be named (the form is anyone's to
        // write).
        let mine = self.certifier.in_doubt_of(&ctx.org.id).unwrap_or_default();
        let Some(open) = field("intent")
            .parse::<u64>()
            .ok()
            .and_then(|id| mine.into_iter().find(|open| open.intent == id))
        else {
            return refuse(
                "This invoice is not in doubt for your organization (already settled?).",
            );
        };
        let resolution = match field("outcome").as_str() {
            "certified" => {
                let Some(at) = date_time(&field("date_time")) else {
                    return refuse("Give the date and time the DGI's portal shows for it.");
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
            _ => return refuse("Say what the DGI's portal shows: certified, or not certified."),
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
                refuse(&error.to_string())
            }
            Err(ResolveError::NotAwaiting(_)) => refuse(
                "This invoice is no longer waiting for a person: the gateway settled it, or someone else did.",
            ),
            Err(ResolveError::Certify(error)) => self.error_page(
                Some(ctx),
                StatusCode::SERVICE_UNAVAILABLE,
                "Not settled",
                &format!("The register could not take it: {error}. Nothing was changed; try again."),
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
