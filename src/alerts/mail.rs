//! The alerts' e-mails: one message per alert and organization, to its administrators'
//! addresses, through the `[smtp]` relay (lettre, tokio, rustls). The text comes from the
//! catalogue (`alerts.ftl`) in the configured language.

use std::fmt;
use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::Address;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::AlertError;
use crate::config::{SmtpSettings, SmtpTls};

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
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN);
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
        let message = builder
            .body(mail.body.clone())
            .map_err(|e| SendFailure::give_up(e.to_string()))?;
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
