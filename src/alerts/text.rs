//! An alert in words, for the administrators' e-mail (`alerts.ftl`): what happened, what to
//! do now in the shop owner's words, and where the dashboard is. The log says it in English
//! (`Display`, in `engine.rs`).

use chrono::FixedOffset;
use sha2::{Digest, Sha256};

use super::dashboard_url;
use super::kind::{AlertKind, Subject};
use super::mail::Mail;
use super::state::RaisedAlert;
use crate::i18n::{format, Lang, Message};
use crate::model::Organization;
use crate::msg;

/// What every e-mail shares: the time zone of its times, its language, the gateway's public
/// address (`public_url`) its dashboard link is built from.
#[derive(Debug, Clone, Copy)]
pub struct Letterhead<'a> {
    /// The configured time zone.
    pub zone: FixedOffset,
    /// The configured `language`.
    pub lang: Lang,
    /// `public_url`, if configured.
    pub public_url: Option<&'a str>,
}

/// The e-mail to `org`'s administrators about `alert`; `None` when it has no address.
pub fn mail(alert: &RaisedAlert, org: &Organization, head: Letterhead<'_>) -> Option<Mail> {
    let to = Organization::distinct_emails(&org.admin_emails);
    if to.is_empty() {
        return None;
    }
    // A name an older release kept may hold a line break or a direction mark (names are
    // checked on save since 1.6.0): shown in the subject and the body, never obeyed.
    let shown = Organization {
        name: format::visible(&org.name).into_owned(),
        ..org.clone()
    };
    let org = &shown;
    let lang = head.lang;
    let words = words(alert, org, head.zone, lang);
    let dashboard = match head.public_url {
        Some(url) => msg!(
            "alert-mail-dashboard-link",
            org = org.name.as_str(),
            url = dashboard_url(url)
        ),
        None => msg!("alert-mail-dashboard-how", org = org.name.as_str()),
    };
    let paragraphs = [
        msg!("alert-mail-greeting").render(lang),
        words.what.render(lang),
        msg!("alert-mail-next-step", step = words.next.render(lang)).render(lang),
        dashboard.render(lang),
        msg!("alert-mail-footer").render(lang),
    ];
    let mut body = paragraphs.join("\n\n");
    body.push('\n');
    Some(Mail {
        to,
        subject: words.subject.render(lang),
        body,
        lang,
        id: message_id(alert, org),
    })
}

/// The left part of the e-mail's `Message-ID`: one per alert crossing and organization, the
/// same when the same e-mail is tried again (a client shows a duplicate once).
fn message_id(alert: &RaisedAlert, org: &Organization) -> String {
    let mut digest = Sha256::new();
    for part in [
        alert.key.kind.label(),
        alert.key.subject.to_string(),
        alert.episode.clone(),
        alert.raised_at.to_rfc3339(),
        org.id.clone(),
    ] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    let hex = hex::encode(digest.finalize());
    format!("alert.{}", &hex[..32])
}

/// An alert in three parts.
struct Words {
    subject: Message,
    /// What happened.
    what: Message,
    /// What to do now (a clause after "what to do:").
    next: Message,
}

/// The words of `alert` for `org`.
fn words(alert: &RaisedAlert, org: &Organization, zone: FixedOffset, lang: Lang) -> Words {
    let facts = &alert.facts;
    let name = org.name.as_str();
    let device = match &alert.key.subject {
        Subject::Device(device) => device.as_str(),
        Subject::Org(_) | Subject::Gateway => org.device.as_str(),
    };
    match alert.key.kind {
        AlertKind::Quota(percent) => {
            let used = facts.used.unwrap_or_default();
            let quota = facts.quota.unwrap_or_default();
            let year = facts.year.unwrap_or_default().to_string();
            let plan = org.plan.as_str();
            if percent >= 100 {
                return Words {
                    subject: msg!("alert-quota-full-subject", org = name),
                    what: msg!(
                        "alert-quota-full-body",
                        org = name,
                        used = format::integer(used, lang),
                        n_used = used,
                        quota = format::integer(quota, lang),
                        year = year
                    ),
                    next: msg!("alert-quota-full-next", plan = plan),
                };
            }
            let left = quota.saturating_sub(used);
            Words {
                subject: msg!("alert-quota-subject", org = name, percent = percent),
                what: msg!(
                    "alert-quota-body",
                    org = name,
                    percent = percent,
                    used = format::integer(used, lang),
                    n_used = used,
                    quota = format::integer(quota, lang),
                    left = format::integer(left, lang),
                    n = left,
                    year = year
                ),
                next: msg!("alert-quota-next", plan = plan),
            }
        }
        AlertKind::ChannelDown => {
            let channel = facts.channel.as_deref().unwrap_or("box");
            let since = facts
                .since
                .map(|at| format::date_time(at, zone, lang))
                .unwrap_or_default();
            Words {
                subject: msg!(
                    "alert-channel-down-subject",
                    org = name,
                    device = device,
                    channel = channel
                ),
                what: msg!(
                    "alert-channel-down-body",
                    org = name,
                    device = device,
                    channel = channel,
                    since = since
                ),
                next: msg!("alert-channel-down-next", channel = channel),
            }
        }
        AlertKind::DgiContactOld => Words {
            subject: msg!("alert-dgi-contact-subject", org = name, device = device),
            what: match &facts.last_contact {
                Some(at) => msg!(
                    "alert-dgi-contact-body",
                    org = name,
                    device = device,
                    at = format::device_date_time(at, lang)
                ),
                None => msg!("alert-dgi-contact-never-body", org = name, device = device),
            },
            next: msg!("alert-dgi-contact-next"),
        },
        AlertKind::InDoubt => {
            let count = facts.count.unwrap_or_default();
            let waiting = facts.waiting.unwrap_or_default();
            Words {
                subject: msg!("alert-in-doubt-subject", org = name, count = count),
                what: msg!("alert-in-doubt-body", org = name, count = count),
                next: msg!("alert-in-doubt-next", count = count, waiting = waiting),
            }
        }
        AlertKind::BackupOld => Words {
            subject: msg!("alert-backup-old-subject", org = name),
            what: match facts.backup_at {
                Some(at) => msg!(
                    "alert-backup-old-body",
                    org = name,
                    at = format::date_time(at, zone, lang)
                ),
                None => msg!("alert-backup-never-body", org = name),
            },
            next: msg!("alert-backup-old-next"),
        },
        AlertKind::RegisterBehind => {
            let missing = crate::model::numbers_text(facts.missing.as_deref().unwrap_or_default());
            Words {
                subject: msg!("alert-register-behind-subject", org = name, device = device),
                what: msg!(
                    "alert-register-behind-body",
                    org = name,
                    device = device,
                    missing = missing
                ),
                next: msg!("alert-register-behind-next"),
            }
        }
        AlertKind::BackupCommandFailed => Words {
            subject: msg!("alert-backup-command-subject", org = name),
            what: msg!(
                "alert-backup-command-body",
                org = name,
                at = facts
                    .backup_at
                    .map(|at| format::date_time(at, zone, lang))
                    .unwrap_or_default()
            ),
            next: msg!("alert-backup-command-next"),
        },
        AlertKind::RegisterUnwritable => {
            let fault = facts.fault.as_deref().unwrap_or("io");
            Words {
                subject: msg!("alert-register-unwritable-subject", org = name),
                what: msg!(
                    "alert-register-unwritable-body",
                    org = name,
                    fault = fault,
                    since = facts
                        .since
                        .map(|at| format::date_time(at, zone, lang))
                        .unwrap_or_default()
                ),
                next: msg!("alert-register-unwritable-next", fault = fault),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::conditions::tests::{org, snapshot};
    use crate::alerts::conditions::{evaluate, Facts};
    use crate::alerts::kind::AlertKey;
    use crate::alerts::AlertSettings;

    /// Words a shop owner does not read: a status, an error code, a protocol's name.
    const JARGON: &[&str] = &[
        "HTTP",
        "429",
        "503",
        "C1h",
        "C2h",
        "38h",
        "API",
        "errorCode",
        "SMTP",
        "intent",
    ];

    fn raised(kind: AlertKind, subject: Subject, facts: Facts) -> RaisedAlert {
        RaisedAlert {
            key: AlertKey { kind, subject },
            episode: String::new(),
            raised_at: "2025-06-01T12:00:00Z".parse().expect("time"),
            facts,
            unsent: Default::default(),
        }
    }

    fn every_kind() -> Vec<RaisedAlert> {
        let mut s = snapshot(5);
        s.orgs[0].in_doubt = 2;
        s.orgs[0].waiting = 1;
        let mut alerts: Vec<RaisedAlert> = evaluate(&s, &AlertSettings::default())
            .into_iter()
            .map(|c| raised(c.key.kind, c.key.subject, c.facts))
            .collect();
        for channel in ["box", "web_api"] {
            alerts.push(raised(
                AlertKind::ChannelDown,
                Subject::Device("shop".into()),
                Facts {
                    since: Some("2025-06-01T10:00:00Z".parse().expect("time")),
                    channel: Some(channel.into()),
                    ..Facts::default()
                },
            ));
        }
        for last_contact in [None, Some(s.local_now - chrono::Duration::days(4))] {
            alerts.push(raised(
                AlertKind::DgiContactOld,
                Subject::Device("shop".into()),
                Facts {
                    last_contact,
                    ..Facts::default()
                },
            ));
        }
        for (kind, backup_at) in [
            (AlertKind::BackupOld, None),
            (
                AlertKind::BackupOld,
                Some(s.now - chrono::Duration::days(3)),
            ),
            (AlertKind::BackupCommandFailed, Some(s.now)),
        ] {
            alerts.push(raised(
                kind,
                Subject::Gateway,
                Facts {
                    backup_at,
                    ..Facts::default()
                },
            ));
        }
        for fault in ["no_space", "read_only", "io", "database"] {
            alerts.push(raised(
                AlertKind::RegisterUnwritable,
                Subject::Gateway,
                Facts {
                    since: Some(s.now),
                    fault: Some(fault.into()),
                    ..Facts::default()
                },
            ));
        }

        alerts.push(raised(
            AlertKind::RegisterBehind,
            Subject::Device("shop".into()),
            Facts {
                missing: Some(vec![7, 8, 9]),
                ..Facts::default()
            },
        ));
        alerts
    }

    fn head(lang: Lang, public_url: Option<&str>) -> Letterhead<'_> {
        Letterhead {
            zone: FixedOffset::east_opt(3600).expect("offset"),
            lang,
            public_url,
        }
    }

    #[test]
    fn every_kind_says_what_to_do_and_where_without_jargon() {
        let org = org("acme", "shop");
        for alert in every_kind() {
            for lang in [Lang::Fr, Lang::En] {
                for url in [None, Some("https://factures.example.cd/")] {
                    let mail = mail(&alert, &org, head(lang, url)).expect("an address");
                    let text = format!("{}\n{}", mail.subject, mail.body);
                    for word in JARGON {
                        assert!(!text.contains(word), "{word} in {lang}:\n{text}");
                    }
                    let next = match lang {
                        Lang::Fr => "Ce qu'il faut faire\u{a0}: ",
                        Lang::En => "What to do: ",
                    };
                    assert!(mail.body.contains(next), "{text}");
                    assert!(mail.body.contains("acme shop"), "{text}");
                    match url {
                        Some(_) => assert!(
                            mail.body
                                .contains("\nhttps://factures.example.cd/dashboard/\n"),
                            "{text}"
                        ),
                        None => assert!(mail.body.contains("/dashboard "), "{text}"),
                    }
                }
            }
        }
    }

    #[test]
    fn a_name_an_older_release_kept_cannot_forge_the_mail() {
        let mut org = org("acme", "shop");
        org.name = "Acme\r\nBcc: victim@x.cd\r\n\r\nInjected \u{202E}body".into();
        for alert in every_kind() {
            let mail = mail(&alert, &org, head(Lang::Fr, None)).expect("an address");
            let text = format!("{}\n{}", mail.subject, mail.body);
            assert!(
                text.contains("Acme⟨CR⟩⟨LF⟩Bcc: victim@x.cd⟨CR⟩⟨LF⟩⟨CR⟩⟨LF⟩Injected ⟨U+202E⟩body"),
                "{text}"
            );
            assert!(!text.contains(['\r', '\u{202E}']), "{text:?}");
            assert!(!mail.subject.contains('\n'), "{}", mail.subject);
        }
    }

    #[test]
    fn the_quota_advice_follows_the_plan_and_names_the_operator_once() {
        let mut org = org("acme", "shop");
        let full = every_kind()
            .into_iter()
            .find(|a| a.key.kind == AlertKind::Quota(100))
            .expect("quota_100");
        let start = mail(&full, &org, head(Lang::Fr, None)).expect("mail");
        assert!(
            start.body.contains(
                "Ce qu'il faut faire\u{a0}: demandez la formule Grow à l'opérateur de la passerelle. Dès le changement de formule,"
            ),
            "{}",
            start.body
        );
        assert!(start.subject.contains("quota annuel de factures atteint"));
        org.plan = crate::model::Plan::Grow;
        let grow = mail(&full, &org, head(Lang::En, None)).expect("mail");
        assert!(
            grow.body
                .contains("What to do: ask the gateway's operator to raise your annual quota."),
            "{}",
            grow.body
        );
    }

    #[test]
    fn one_message_id_per_crossing_and_organization() {
        let org_a = org("acme", "shop");
        let org_b = org("beta", "shop");
        let alerts = every_kind();
        let mut ids: Vec<String> = alerts
            .iter()
            .flat_map(|a| [message_id(a, &org_a), message_id(a, &org_b)])
            .collect();
        let again = message_id(&alerts[0], &org_a);
        assert_eq!(ids[0], again, "the same e-mail tried again");
        let mut later = alerts[0].clone();
        later.raised_at += chrono::Duration::seconds(1);
        ids.push(message_id(&later, &org_a));
        let count = ids.len();
        ids.sort();
        ids.dedup();
        // Some of every_kind's alerts share a key and time by construction (the two channel
        // kinds, the two DGI contacts, the two old backups, the four register faults): their
        // ids are equal, nothing else is.
        assert_eq!(ids.len(), count - 12);
        assert!(ids.iter().all(|id| id.len() == 38 && id.is_ascii()));
    }
}
