//! An alert in words, for the administrators' e-mail (`alerts.ftl`) and the log (English,
//! `Display`).

use chrono::FixedOffset;

use super::kind::AlertKind;
use super::mail::Mail;
use super::state::RaisedAlert;
use crate::i18n::{format, Lang, Message};
use crate::model::Organization;
use crate::msg;

/// The e-mail to `org`'s administrators about `alert`; `None` when it has no address.
pub fn mail(
    alert: &RaisedAlert,
    org: &Organization,
    zone: FixedOffset,
    lang: Lang,
) -> Option<Mail> {
    let to = Organization::distinct_emails(&org.admin_emails);
    if to.is_empty() {
        return None;
    }
    let (subject, body) = words(alert, org, zone, lang);
    let mut text = body.render(lang);
    text.push_str("\n\n");
    text.push_str(&msg!("alert-mail-footer").render(lang));
    text.push('\n');
    Some(Mail {
        to,
        subject: subject.render(lang),
        body: text,
    })
}

/// The subject and the body of `alert` for `org`.
fn words(
    alert: &RaisedAlert,
    org: &Organization,
    zone: FixedOffset,
    lang: Lang,
) -> (Message, Message) {
    let facts = &alert.facts;
    let name = org.name.as_str();
    let device = match &alert.key.subject {
        super::Subject::Device(device) => device.as_str(),
        super::Subject::Org(_) => org.device.as_str(),
    };
    match alert.key.kind {
        AlertKind::Quota(percent) => {
            let used = facts.used.unwrap_or_default();
            let quota = facts.quota.unwrap_or_default();
            let year = facts.year.unwrap_or_default().to_string();
            let subject = msg!("alert-quota-subject", org = name, percent = percent);
            let plan = org.plan.as_str();
            let body = if percent >= 100 {
                msg!(
                    "alert-quota-full-body",
                    org = name,
                    used = format::integer(used, lang),
                    quota = format::integer(quota, lang),
                    year = year,
                    plan = plan
                )
            } else {
                let left = quota.saturating_sub(used);
                msg!(
                    "alert-quota-body",
                    org = name,
                    percent = percent,
                    used = format::integer(used, lang),
                    quota = format::integer(quota, lang),
                    left = format::integer(left, lang),
                    n = left,
                    year = year,
                    plan = plan
                )
            };
            (subject, body)
        }
        AlertKind::ChannelDown => {
            let since = facts
                .since
                .map(|at| format::date_time(at, zone, lang))
                .unwrap_or_default();
            (
                msg!("alert-channel-down-subject", device = device),
                msg!(
                    "alert-channel-down-body",
                    org = name,
                    device = device,
                    since = since
                ),
            )
        }
        AlertKind::DgiContactOld => {
            let at = facts.last_contact.map_or_else(
                || msg!("alert-never").render(lang),
                |at| at.format("%Y-%m-%d %H:%M").to_string(),
            );
            (
                msg!("alert-dgi-contact-subject", device = device),
                msg!(
                    "alert-dgi-contact-body",
                    org = name,
                    device = device,
                    at = at
                ),
            )
        }
        AlertKind::InDoubt => {
            let count = facts.count.unwrap_or_default();
            (
                msg!("alert-in-doubt-subject", org = name, count = count),
                msg!("alert-in-doubt-body", org = name, count = count),
            )
        }
    }
}
