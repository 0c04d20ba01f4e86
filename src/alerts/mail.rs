//! The alerts' e-mails: one message per alert and organization, to its administrators'
//! addresses, through the `[smtp]` relay (lettre, tokio, rustls). The text comes from the
//! catalogue (`alerts.ftl`) in the configured language.
//!
//! Each message is what a strict mail client expects (RFC 5322, MIME): `Date`, `From`, `To`,
//! `Subject` (RFC 2047 encoded words when it is not ASCII), a `Message-ID` on the sender's
//! domain, `MIME-Version: 1.0`, one `text/plain; charset=utf-8` part (quoted-printable or
//! base64, whichever is shorter), `Content-Language`, and `Auto-Submitted: auto-generated`
//! (RFC 3834: no auto-reply comes back). No HTML part: the plain text says it all, and a
//! client makes its one link clickable.

use std::fmt;
use std::time::Duration;

use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::Address;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use tracing::{error, info, warn};

use super::AlertError;
use super::{SmtpSettings, SmtpTls};
use crate::i18n::Lang;

/// The `Message-ID` domain when the sender's is not a plain ASCII host name (RFC 2606: never
/// anyone's).
const FALLBACK_ID_DOMAIN: &str = "emcf-gateway.invalid";

/// How long one message may take (connection, TLS, dialogue).
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// An e-mail to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// The addresses.
    pub to: Vec<String>,
    /// Subject line.
    pub subject: String,
    /// Plain text body.
    pub body: String,
    /// Its language.
    pub lang: Lang,
    /// The left part of its `Message-ID` (ASCII letters, digits and dots); the right part
    /// is the sender's domain.
    pub id: String,
}

/// The SMTP relay.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer {
    /// The relay of `[smtp]`; reads the password file now.
    pub fn new(settings: &SmtpSettings) -> Result<Mailer, AlertError> {
        let smtp = |e: lettre::transport::smtp::Error| AlertError::Smtp(e.to_string());
        let builder = match settings.tls {
            SmtpTls::Starttls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&settings.host)
                    .map_err(smtp)?
            }
            SmtpTls::Tls => {
                AsyncSmtpTransport::<Tokio1Executor>::relay(&settings.host).map_err(smtp)?
            }
            SmtpTls::None => {
                AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&settings.host)
            }
        };
        let mut builder = builder.port(settings.port()).timeout(Some(SEND_TIMEOUT));
        if let (Some(user), Some(path)) = (&settings.username, &settings.password_file) {
            let text =
                std::fs::read_to_string(path).map_err(|source| AlertError::PasswordFile {
                    path: path.clone(),
                    source,
                })?;
            let password = text.lines().next().unwrap_or_default().to_owned();
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        let from = settings
            .from
            .parse::<Mailbox>()
            .map_err(|e| AlertError::Address(settings.from.clone(), e.to_string()))?;
        Ok(Mailer {
            transport: builder.build(),
            from,
        })
    }

    /// Sends `mail` to those of its addresses that parse (one that does not is logged and
    /// skipped); a failure says whether to try again.
    pub async fn send(&self, mail: &Mail) -> Result<(), SendFailure> {
        let message = message(&self.from, mail)?;
        match tokio::time::timeout(SEND_TIMEOUT * 2, self.transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) if e.is_permanent() => Err(SendFailure::give_up(e.to_string())),
            Ok(Err(e)) if e.is_transient() => Err(SendFailure {
                kind: FailureKind::Retry,
                reason: e.to_string(),
            }),
            Ok(Err(e)) => Err(SendFailure::unreachable(e.to_string())),
            Err(_) => Err(SendFailure::unreachable("no answer from the relay in time")),
        }
    }
}

/// How trying the relay failed ([`try_relay`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayFailureKind {
    /// No connection (refused, no route, name unknown, no answer in time).
    Unreachable,
    /// The TLS handshake or STARTTLS failed (certificate, protocol, the relay offers none).
    Tls,
    /// The relay answered with a refusal (4xx, 5xx): its greeting, EHLO or the login.
    Refused,
    /// Anything else the SMTP client said (no login mechanism in common...).
    Other,
}

/// Why [`try_relay`] failed: its kind and the SMTP client's own text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayFailure {
    /// What kind of failure.
    pub kind: RelayFailureKind,
    /// The SMTP client's text (English, a technical detail; never the password).
    pub detail: String,
}

/// Tries the `[smtp]` relay as the alerts would use it: connects, secures the connection as
/// `tls` says, logs in when `username` is set, sends `NOOP` then `QUIT`. No message is sent
/// (`config check --smtp`). The password file is read as [`Mailer::new`] reads it.
pub async fn try_relay(settings: &SmtpSettings) -> Result<(), RelayFailure> {
    let mailer = Mailer::new(settings).map_err(|error| RelayFailure {
        kind: RelayFailureKind::Other,
        detail: error.to_string(),
    })?;
    let failure = |error: lettre::transport::smtp::Error| {
        let kind = if error.is_tls() || tls_failed(&error) {
            RelayFailureKind::Tls
        } else if error.is_permanent() || error.is_transient() {
            RelayFailureKind::Refused
        } else if error.is_client() || error.is_response() {
            RelayFailureKind::Other
        } else {
            RelayFailureKind::Unreachable
        };
        RelayFailure {
            kind,
            detail: error.to_string(),
        }
    };
    match tokio::time::timeout(SEND_TIMEOUT * 2, mailer.transport.test_connection()).await {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(RelayFailure {
            kind: RelayFailureKind::Refused,
            detail: "NOOP was not answered 250".to_owned(),
        }),
        Ok(Err(error)) => Err(failure(error)),
        Err(_) => Err(RelayFailure {
            kind: RelayFailureKind::Unreachable,
            detail: "no answer from the relay in time".to_owned(),
        }),
    }
}

/// Whether `error` came from TLS where lettre does not say so itself: a rustls error inside
/// its connection error (TLS spoken to a plain relay), or a relay that does not offer the
/// STARTTLS `tls = "starttls"` requires (lettre says it only in its client error's text).
fn tls_failed(error: &lettre::transport::smtp::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        let inner = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref());
        if current.is::<rustls::Error>() || inner.is_some_and(|e| e.is::<rustls::Error>()) {
            return true;
        }
        cause = current.source();
    }
    error.is_client() && error.to_string().contains("STARTTLS")
}

/// `mail` as a message from `from` (see the module's doc for its headers).
fn message(from: &Mailbox, mail: &Mail) -> Result<Message, SendFailure> {
    let domain = from.email.domain();
    let plain_host = !domain.is_empty()
        && domain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    let domain = if plain_host {
        domain
    } else {
        FALLBACK_ID_DOMAIN
    };
    let header = |name: &'static str, value: &str| {
        HeaderValue::new(HeaderName::new_from_ascii_str(name), value.to_owned())
    };
    let mut builder = Message::builder()
        .from(from.clone())
        .subject(mail.subject.clone())
        .date_now()
        .message_id(Some(format!("<{}@{domain}>", mail.id)))
        .raw_header(header("Content-Language", mail.lang.code()))
        .raw_header(header("Auto-Submitted", "auto-generated"));
    let mut recipients = 0;
    for to in &mail.to {
        match to.parse::<Address>() {
            Ok(address) => {
                builder = builder.to(Mailbox::new(None, address));
                recipients += 1;
            }
            Err(error) => {
                tracing::warn!(address = %to, %error, "alert e-mail: address skipped");
            }
        }
    }
    if recipients == 0 {
        return Err(SendFailure::give_up("no valid address"));
    }
    builder
        .singlepart(SinglePart::plain(mail.body.clone()))
        .map_err(|e| SendFailure::give_up(e.to_string()))
}

/// What became of one e-mail of an outbox (the alerts', the notices'), as
/// [`Mailer::deliver`] logged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The relay took it.
    Sent,
    /// It will never be sent (5xx, no valid address).
    GivenUp,
    /// Not now (4xx): the next evaluation tries it again.
    Later,
    /// The relay cannot be reached: the rest of the round waits for the next evaluation.
    RelayUnreachable,
}

impl Mailer {
    /// Sends `mail`, an e-mail of `what` (`"alert"`, `"notice"`) about `about` for the
    /// organization `org`, and logs what became of it: the one send step of every outbox.
    pub async fn deliver(&self, mail: &Mail, what: &str, about: &str, org: &str) -> Delivery {
        match self.send(mail).await {
            Ok(()) => {
                info!(about, org, to = %mail.to.join(", "), "{what} e-mailed");
                Delivery::Sent
            }
            Err(failure) => match failure.kind {
                FailureKind::GiveUp => {
                    error!(about, org, error = %failure, "{what} e-mail refused; given up");
                    Delivery::GivenUp
                }
                FailureKind::Retry => {
                    warn!(about, org, error = %failure, "{what} e-mail not sent; trying again at the next evaluation");
                    Delivery::Later
                }
                FailureKind::Unreachable => {
                    warn!(about, org, error = %failure, "{what} e-mails not sent, relay unreachable; trying again at the next evaluation");
                    Delivery::RelayUnreachable
                }
            },
        }
    }
}

/// What to do after a message was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The relay could not be reached (connection, TLS, time out): no use sending the other
    /// messages now; all are tried again at the next evaluation.
    Unreachable,
    /// The relay refused for now (4xx): tried again at the next evaluation.
    Retry,
    /// It will never be sent (5xx, no valid address): given up.
    GiveUp,
}

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    /// What to do.
    pub kind: FailureKind,
    /// Why.
    pub reason: String,
}

impl SendFailure {
    fn give_up(reason: impl Into<String>) -> SendFailure {
        SendFailure {
            kind: FailureKind::GiveUp,
            reason: reason.into(),
        }
    }

    fn unreachable(reason: impl Into<String>) -> SendFailure {
        SendFailure {
            kind: FailureKind::Unreachable,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for SendFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SMTP: {}", self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(to: &[&str]) -> Mail {
        Mail {
            to: to.iter().map(|a| (*a).to_owned()).collect(),
            subject: "[e-MCF] Épicerie : 80\u{a0}% du quota annuel de factures utilisé".into(),
            body: "Bonjour,\n\nÉpicerie a certifié 4 factures.\n".into(),
            lang: Lang::Fr,
            id: "alert.0123456789abcdef".into(),
        }
    }

    fn formatted(from: &str, mail: &Mail) -> String {
        let from: Mailbox = from
            .parse()
            .or_else(|_| from.parse::<Address>().map(|a| Mailbox::new(None, a)))
            .expect("from");
        let message = message(&from, mail).expect("message");
        String::from_utf8(message.formatted()).expect("ASCII")
    }

    #[test]
    fn a_message_carries_what_mail_clients_expect() {
        let text = formatted(
            "emcf-gateway <alertes@passerelle.cd>",
            &mail(&["admin@acme.cd", "not an address"]),
        );
        let head = text.split("\r\n\r\n").next().expect("head");
        assert!(head.is_ascii(), "{head}");
        for line in [
            "MIME-Version: 1.0",
            "Message-ID: <alert.0123456789abcdef@passerelle.cd>",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Language: fr",
            "Auto-Submitted: auto-generated",
            "To: admin@acme.cd",
            "Subject: [e-MCF] =?utf-8?b?",
            "Date: ",
            "From: emcf-gateway <alertes@passerelle.cd>",
            "Content-Transfer-Encoding: ",
        ] {
            assert!(
                head.lines().any(|l| l.starts_with(line)),
                "{line} in:\n{head}"
            );
        }
        assert!(!text.contains("not an address"), "skipped");
    }

    #[test]
    fn a_sender_without_a_plain_domain_gets_a_reserved_one() {
        let text = formatted("alertes@épicerie.cd", &mail(&["admin@acme.cd"]));
        assert!(text.contains("@emcf-gateway.invalid>"), "{text}");
    }

    #[test]
    fn no_valid_address_is_given_up() {
        let from: Mailbox = "a@b.cd".parse().expect("from");
        let failure = message(&from, &mail(&["nope"])).expect_err("no address");
        assert_eq!(failure.kind, FailureKind::GiveUp);
    }
}
