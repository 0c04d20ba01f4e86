//! The alerts' e-mails: one message per alert and organization, to its administrators'
//! addresses, through the `[smtp]` relay (lettre, tokio, rustls). The text comes from the
//! catalogue (`alerts.ftl`) in the configured language.

use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
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
        let mut builder = builder.port(settings.port).timeout(Some(SEND_TIMEOUT));
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

    /// Sends `mail`; an error says why (the caller retries at the next evaluation).
    pub async fn send(&self, mail: &Mail) -> Result<(), AlertError> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN);
        for to in &mail.to {
            let mailbox = to
                .parse::<Mailbox>()
                .map_err(|e| AlertError::Address(to.clone(), e.to_string()))?;
            builder = builder.to(mailbox);
        }
        let message = builder
            .body(mail.body.clone())
            .map_err(|e| AlertError::Smtp(e.to_string()))?;
        match tokio::time::timeout(SEND_TIMEOUT * 2, self.transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(AlertError::Smtp(e.to_string())),
            Err(_) => Err(AlertError::Smtp("no answer from the relay in time".into())),
        }
    }
}
