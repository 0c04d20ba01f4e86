//! The overview's alert banners: the alerts raised for the signed-in organization (its quota,
//! its invoices in doubt) and its production device (down, DGI contact old; named so, not by
//! its configured name), at the top of the page.
//!
//! The alert engine evaluates every 30 s; the invoices in doubt can change in between (an
//! administrator settles one on this page). Their banner is therefore checked against what is
//! open now ([`InDoubtNow`]): gone when nothing of the organization is open any more, its
//! counts never more than what is open, so that it never contradicts the page's in-doubt
//! section or a settlement's confirmation.

use chrono::FixedOffset;

use super::html::{self, esc, t};
use crate::alerts::{AlertKind, RaisedAlert};
use crate::certify::OpenIntent;
use crate::i18n::{format, Lang};
use crate::model::Environment;
use crate::msg;

/// An organization's production invoices open now (the in-doubt alert's subject).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct InDoubtNow {
    /// Open, settled by the gateway or waiting for an administrator.
    pub open: u64,
    /// Of those, waiting for an administrator.
    pub waiting: u64,
}

impl InDoubtNow {
    /// Of `open` (every open intent), those of organization `org` in production.
    pub(super) fn of(open: &[OpenIntent], org: &str) -> InDoubtNow {
        let mine = open
            .iter()
            .filter(|i| i.org == org && i.environment == Environment::Production);
        InDoubtNow {
            open: mine.clone().count() as u64,
            waiting: mine.filter(|i| i.reason.is_some()).count() as u64,
        }
    }
}

/// The banners of `alerts` (of one organization), the in-doubt one checked against `now`;
/// empty when none. Of its quota alerts only the highest threshold shows.
pub(super) fn banners(
    alerts: &[RaisedAlert],
    now: InDoubtNow,
    zone: FixedOffset,
    lang: Lang,
) -> String {
    let top_quota = alerts
        .iter()
        .filter_map(|a| match a.key.kind {
            AlertKind::Quota(percent) => Some(percent),
            _ => None,
        })
        .max();
    let mut html = String::new();
    for alert in alerts {
        let facts = &alert.facts;
        let (class, text) = match alert.key.kind {
            AlertKind::Quota(percent) if Some(percent) != top_quota => continue,
            AlertKind::Quota(percent) => {
                let used = format::integer(facts.used.unwrap_or_default(), lang);
                let quota = format::integer(facts.quota.unwrap_or_default(), lang);
                let year = facts.year.unwrap_or_default().to_string();
                if percent >= 100 {
                    (
                        "error",
                        msg!(
                            "dash-alert-quota-full",
                            used = used,
                            quota = quota,
                            year = year,
                            plan = facts.plan.clone().unwrap_or_default()
                        ),
                    )
                } else {
                    (
                        "warn",
                        msg!(
                            "dash-alert-quota",
                            percent = percent,
                            used = used,
                            quota = quota,
                            year = year
                        ),
                    )
                }
            }
            AlertKind::ChannelDown => (
                "error",
                msg!(
                    "dash-alert-channel-down",
                    since = facts
                        .since
                        .map(|at| html::time(&at, zone, lang))
                        .unwrap_or_default()
                ),
            ),
            AlertKind::DgiContactOld => (
                "warn",
                msg!(
                    "dash-alert-dgi-contact",
                    at = facts.last_contact.map_or_else(
                        || msg!("dash-never").render(lang),
                        |at| html::device_time(&at, lang)
                    )
                ),
            ),
            AlertKind::InDoubt if now.open == 0 => continue,
            AlertKind::InDoubt => {
                // Never more than is open now, never fewer than wait for a decision.
                let count = facts
                    .count
                    .unwrap_or_default()
                    .min(now.open)
                    .max(now.waiting)
                    .max(1);
                (
                    "warn",
                    msg!("dash-alert-in-doubt", count = count, waiting = now.waiting),
                )
            }
        };
        html.push_str(&format!(
            "<p class=\"notice {class}\" role=\"alert\" id=\"alert-{}\">{}</p>",
            esc(&alert.key.kind.label()),
            t(lang, text)
        ));
    }
    if html.is_empty() {
        return html;
    }
    format!("<section id=\"alerts\">{html}</section>")
}
