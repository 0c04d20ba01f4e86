//! The overview's alert banners: the alerts raised for the signed-in organization (its quota,
//! its invoices in doubt) and its production channel (the device, or the DGI's online service
//! for the web API, down; the device's DGI contact old or never made; named so, not by its
//! configured name), at the top of the page, in the alert e-mails' words.
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
use crate::notices::Notice;

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

/// The banners of the change notices `shown` (until their effective date): the subject, the
/// date and a link to the notice's page (its body).
pub(super) fn notice_banners(shown: &[Notice], lang: Lang) -> String {
    shown
        .iter()
        .map(|notice| {
            let date = format::day(&notice.notice.effective.to_string(), lang);
            let inner = format!(
                "{text} <a href=\"/notices/{id}?lang={code}\">{read}</a>",
                id = notice.id,
                text = t(
                    lang,
                    msg!(
                        "dash-notice-banner",
                        subject = format::visible(&notice.notice.subject).into_owned(),
                        date = date
                    )
                ),
                code = lang.code(),
                read = t(lang, msg!("dash-notice-read")),
            );
            html::banner("warn", "note", &format!("notice-{}", notice.id), &inner)
        })
        .collect()
}

/// The banner of a register that cannot be written (the status's `storage_fault`): why and
/// since when, shown as soon as the service knows, before any alert is evaluated.
pub(super) fn register_unwritable(
    fault: &crate::certify::StorageFault,
    zone: FixedOffset,
    lang: Lang,
) -> String {
    let text = msg!(
        "dash-alert-register-unwritable",
        fault = fault.kind.label(),
        since = html::time(&fault.since, zone, lang)
    );
    html::banner("error", "alert", "register-unwritable", &t(lang, text))
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
            AlertKind::ChannelDown => {
                // The box, or the DGI's online service (an organization on the web API).
                let channel = facts.channel.as_deref().unwrap_or("box");
                let text = match facts.since {
                    Some(at) => msg!(
                        "dash-alert-channel-down",
                        channel = channel,
                        since = html::time(&at, zone, lang)
                    ),
                    None => msg!("dash-alert-channel-down-no-date", channel = channel),
                };
                ("error", text)
            }
            AlertKind::DgiContactOld => (
                "warn",
                match facts.last_contact {
                    Some(at) => msg!("dash-alert-dgi-contact", at = html::device_time(&at, lang)),
                    None => msg!("dash-alert-dgi-contact-never"),
                },
            ),
            // Shown by the overview's fiscal anomalies section, with its numbers.
            AlertKind::RegisterBehind => continue,
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
            AlertKind::BackupOld => (
                "warn",
                match facts.backup_at {
                    Some(at) => msg!("dash-alert-backup-old", at = html::time(&at, zone, lang)),
                    None => msg!("dash-alert-backup-never"),
                },
            ),
            AlertKind::BackupCommandFailed => ("warn", msg!("dash-alert-backup-command")),
            // The overview says it from the status, at once ([`register_unwritable`]).
            AlertKind::RegisterUnwritable => continue,
        };
        let id = format!("alert-{}", esc(&alert.key.kind.label()));
        html.push_str(&html::banner(class, "alert", &id, &t(lang, text)));
    }
    if html.is_empty() {
        return html;
    }
    format!("<section id=\"alerts\">{html}</section>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::{AlertKey, Facts, Subject};

    /// `text` as the page writes it: French no-break spaces, HTML-escaped.
    fn html(text: &str) -> String {
        crate::markup::escape(&crate::i18n::nbsp(text))
    }
    use chrono::{DateTime, NaiveDateTime, Utc};

    fn alert(kind: AlertKind, facts: Facts) -> RaisedAlert {
        RaisedAlert {
            key: AlertKey {
                kind,
                subject: Subject::Device("shop".into()),
            },
            episode: String::new(),
            raised_at: DateTime::<Utc>::UNIX_EPOCH,
            facts,
            unsent: Default::default(),
        }
    }

    fn said(alert: RaisedAlert, lang: Lang) -> String {
        let zone = FixedOffset::east_opt(3600).expect("+01:00");
        banners(&[alert], InDoubtNow::default(), zone, lang)
    }

    #[test]
    fn a_channel_down_is_named_by_what_it_is_with_its_date_or_without() {
        let since = DateTime::parse_from_rfc3339("2026-11-23T09:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .ok();
        let down = |channel: Option<&str>, since| {
            alert(
                AlertKind::ChannelDown,
                Facts {
                    since,
                    channel: channel.map(str::to_owned),
                    ..Facts::default()
                },
            )
        };
        let web = said(down(Some("web_api"), since), Lang::Fr);
        assert!(
            web.contains(&html("Le service en ligne de la DGI ne répond plus depuis le 23/11/2026 10:00:00 UTC+01:00 : aucune facture ne peut être certifiée.")),
            "{web}"
        );
        // A state file of 1.5.0 names no channel: a box.
        let boxed = said(down(None, since), Lang::En);
        assert!(
            boxed.contains("The production device has not answered since 2026-11-23 10:00:00 UTC+01:00: no invoice can be certified."),
            "{boxed}"
        );
        let undated = said(down(Some("box"), None), Lang::Fr);
        assert!(
            undated.contains(&html(
                "L'appareil de production ne répond plus : aucune facture ne peut être certifiée."
            )),
            "{undated}"
        );
        assert!(!undated.contains("depuis le"), "{undated}");
    }

    #[test]
    fn a_box_that_never_reached_the_dgi_is_said_so() {
        let never = said(alert(AlertKind::DgiContactOld, Facts::default()), Lang::Fr);
        assert!(
            never.contains(&html("L'appareil de production n'a encore jamais échangé avec la DGI : vérifiez sa connexion au réseau.")),
            "{never}"
        );
        let at = NaiveDateTime::parse_from_str("2026-11-20 08:15:00", "%Y-%m-%d %H:%M:%S").ok();
        let old = said(
            alert(
                AlertKind::DgiContactOld,
                Facts {
                    last_contact: at,
                    ..Facts::default()
                },
            ),
            Lang::Fr,
        );
        assert!(old.contains("date du 20/11/2026 08:15:00"), "{old}");
    }

    #[test]
    fn a_register_that_cannot_be_written_says_why_at_once_and_once() {
        let since = DateTime::parse_from_rfc3339("2026-11-23T09:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("time");
        let fault = crate::certify::StorageFault {
            kind: crate::certify::StorageFaultKind::NoSpace,
            since,
            halted: true,
        };
        let zone = FixedOffset::east_opt(3600).expect("+01:00");
        let banner = register_unwritable(&fault, zone, Lang::Fr);
        assert!(banner.contains("id=\"register-unwritable\""), "{banner}");
        assert!(
            banner.contains(&html(
                "(le disque de la passerelle est plein) : aucune facture n'est certifiée"
            )),
            "{banner}"
        );
        // The raised alert says nothing more: the status's banner is there already.
        let raised = alert(
            AlertKind::RegisterUnwritable,
            Facts {
                since: Some(since),
                fault: Some("no_space".into()),
                ..Facts::default()
            },
        );
        assert_eq!(said(raised, Lang::Fr), "");
    }
}
