//! The change notices' e-mails ([`crate::notices`]): one per notice and organization, to its
//! administrators, through the alerts' relay and their outbox discipline (`Mailer::deliver`). The notice is in
//! the notices file before anything is sent; each e-mail is recorded there once the relay
//! accepted it (or refused it for good), so a restart sends only what was not recorded. The
//! operator's subject and body are given as written; the words around them come from the
//! catalogue (`alerts.ftl`, `notice-mail-*`) in the configured language, as the alerts'.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tracing::{error, info};

use super::mail::{Delivery, Mail, Mailer};
use super::text::Letterhead;
use crate::certify::{Certifier, MailClaim};
use crate::i18n::format;
use crate::model::Organization;
use crate::msg;
use crate::notices::{page_url, Notice, Notices};

/// The e-mail to `org`'s administrators about `notice`; `None` when it has no address.
pub fn mail(notice: &Notice, org: &Organization, head: Letterhead<'_>) -> Option<Mail> {
    let to = Organization::distinct_emails(&org.admin_emails);
    if to.is_empty() {
        return None;
    }
    let lang = head.lang;
    let name = format::visible(&org.name).into_owned();
    let effective = format::day(&notice.notice.effective.to_string(), lang);
    let mut paragraphs = vec![
        msg!("alert-mail-greeting").render(lang),
        msg!(
            "notice-mail-intro",
            org = name.as_str(),
            date = effective.as_str()
        )
        .render(lang),
        notice.notice.subject.clone(),
        notice.notice.body.trim_end().to_owned(),
    ];
    if let Some(version) = &notice.notice.retires {
        paragraphs.push(
            msg!(
                "notice-mail-retires",
                version = version.as_str(),
                date = effective.as_str()
            )
            .render(lang),
        );
    }
    paragraphs.push(match head.public_url {
        Some(url) => msg!("notice-mail-link", url = page_url(Some(url), notice.id)).render(lang),
        None => msg!("notice-mail-dashboard", org = name.as_str()).render(lang),
    });
    paragraphs.push(msg!("notice-mail-footer").render(lang));
    let mut body = paragraphs.join("\n\n");
    body.push('\n');
    Some(Mail {
        to,
        subject: msg!(
            "notice-mail-subject",
            subject = notice.notice.subject.as_str()
        )
        .render(lang),
        body,
        lang,
        id: message_id(notice, org),
    })
}

/// One per notice and organization, the same when tried again.
fn message_id(notice: &Notice, org: &Organization) -> String {
    let mut digest = Sha256::new();
    for part in [
        notice.id.to_string(),
        notice.published_at.to_rfc3339(),
        org.id.clone(),
    ] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    let hex = hex::encode(digest.finalize());
    format!("notice.{}.{}", notice.id, &hex[..32])
}

/// Writes the e-mails recorded in memory only (a write that failed at an earlier round:
/// [`Notices::record`]), at each round, relay or not.
pub async fn save_unsaved(notices: &Arc<Notices>) {
    let shared = Arc::clone(notices);
    match tokio::task::spawn_blocking(move || shared.save_unsaved()).await {
        Ok(Ok(true)) => info!("notices: e-mails recorded earlier now written to the notices file"),
        Ok(Ok(false)) => {}
        Ok(Err(error)) => {
            error!(%error, "notices: e-mails sent still not written to the notices file (this process does not send them again; trying again at the next evaluation; a restart before then sends them again, with the same Message-ID)")
        }
        Err(error) => error!(%error, "notices: writing the notices file failed"),
    }
}

/// Sends every notice e-mail not yet recorded, to the organizations of `orgs` (one gone is
/// given up). When the relay cannot be reached, the rest waits for the next round.
///
/// With `claims` (over PostgreSQL, issue 29), each e-mail is also recorded in the store,
/// fenced by this replica's own lease, before it is sent (`alerts/shared.rs`): the notices
/// are this replica's state directory's, sent by it, leader or not, and an e-mail recorded
/// there already (its `Message-ID`) is never sent again.
pub async fn send_pending(
    notices: &Arc<Notices>,
    mailer: &Mailer,
    orgs: &[Organization],
    head: Letterhead<'_>,
    claims: Option<&Arc<Certifier>>,
) {
    for notice in notices.all() {
        let pending: Vec<String> = notice.pending().cloned().collect();
        for id in pending {
            let sent = match orgs.iter().find(|o| o.id == id) {
                None => false,
                Some(org) => match mail(&notice, org, head) {
                    None => false,
                    Some(mail) => {
                        let record = format!("notice:{}", mail.id);
                        if let Some(certifier) = claims {
                            match claim(certifier, &record).await {
                                Some(MailClaim::Claimed) => {}
                                // Sent before (this directory's previous process).
                                Some(MailClaim::Recorded) => {
                                    record_here(notices, notice.id, id, true).await;
                                    continue;
                                }
                                Some(MailClaim::Fenced) | None => continue,
                            }
                        }
                        let about = notice.id.to_string();
                        let delivered = mailer.deliver(&mail, "notice", &about, &id).await;
                        if matches!(delivered, Delivery::Later | Delivery::RelayUnreachable) {
                            if let Some(certifier) = claims {
                                release(certifier, record).await;
                            }
                        }
                        match delivered {
                            Delivery::Sent => true,
                            // Recorded as given up: not tried again.
                            Delivery::GivenUp => false,
                            Delivery::Later => continue,
                            Delivery::RelayUnreachable => return,
                        }
                    }
                },
            };
            record_here(notices, notice.id, id, sent).await;
        }
    }
}

/// Records in the notices file the e-mail of notice `notice_id` to `org` (`sent`, or given
/// up).
async fn record_here(notices: &Arc<Notices>, notice_id: u32, org: String, sent: bool) {
    let shared = Arc::clone(notices);
    let recorded = tokio::task::spawn_blocking(move || shared.record(notice_id, &org, sent)).await;
    // A failed write leaves the record in memory: this process never sends that
    // e-mail again, and the next round writes the file again.
    match recorded {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            error!(notice = notice_id, %error, "notices: e-mail recorded in memory only, the notices file could not be written (trying again at the next evaluation; a restart before then sends it again, with the same Message-ID)")
        }
        Err(error) => {
            error!(notice = notice_id, %error, "notices: e-mail not recorded (a restart may send it again)")
        }
    }
}

/// The e-mail `record` recorded in the store before it is sent; `None` when the store could
/// not be written (not sent now: tried again at the next round).
async fn claim(certifier: &Arc<Certifier>, record: &str) -> Option<MailClaim> {
    let at = serde_json::json!({ "sent_at": chrono::Utc::now() }).to_string();
    match certifier.claim_mail(record.to_owned(), at, None).await {
        Ok(claim) => Some(claim),
        Err(error) => {
            error!(%error, record, "notices: the e-mail could not be recorded in the store; not sent now");
            None
        }
    }
}

/// Forgets the store's record of an e-mail the relay did not take (tried again).
async fn release(certifier: &Arc<Certifier>, record: String) {
    if let Err(error) = certifier.release_mail(record, None).await {
        error!(%error, "notices: an e-mail the relay did not take is still recorded as sent in the store (it will not be sent)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use crate::notices::NewNotice;
    use chrono::{FixedOffset, NaiveDate, Utc};

    #[test]
    fn the_operator_s_words_framed_in_the_reader_s_language() {
        let notice = Notice {
            id: 3,
            published_at: Utc::now(),
            notice: NewNotice {
                effective: NaiveDate::from_ymd_opt(2027, 1, 31).expect("day"),
                subject: "Fin de la v1".into(),
                body: "Passez à la v2.\n".into(),
                retires: Some("v1".into()),
            },
            recipients: Default::default(),
            sent: Default::default(),
            given_up: Default::default(),
        };
        let org = Organization {
            name: "Acme".into(),
            admin_emails: vec!["admin@acme.cd".into()],
            ..crate::alerts::conditions::tests::org("acme", "shop")
        };
        let head = |lang| Letterhead {
            zone: FixedOffset::east_opt(3600).expect("zone"),
            lang,
            public_url: Some("https://f.example.cd"),
        };
        let fr = mail(&notice, &org, head(Lang::Fr)).expect("mail");
        assert!(fr.body.contains("31/01/2027"), "{}", fr.body);
        assert!(fr.body.contains("\n\nFin de la v1\n\nPassez à la v2.\n\n"));
        assert!(fr.body.contains("https://f.example.cd/notices/3"));
        let en = mail(&notice, &org, head(Lang::En)).expect("mail");
        assert!(en.body.contains("2027-01-31"), "{}", en.body);
        assert_eq!(fr.id, en.id, "one e-mail, whatever its words");
        assert!(fr.id.starts_with("notice.3."));
        let nobody = Organization {
            admin_emails: Vec::new(),
            ..org
        };
        assert!(mail(&notice, &nobody, head(Lang::Fr)).is_none());
    }
}
