//! The command line's errors as a person reads them, in the CLI's language.
//!
//! A command fails with an `anyhow` chain. What failed is said in the catalogue's words where
//! it is known: a [`Message`] returned as the error (`bail!(msg!(...))`), or put around a
//! cause with [`Say::say`] (the CLI's `context`). [`describe`] walks the chain from the
//! outside in: each message said around the cause, then the first typed error it knows (one
//! that is [`Localized`]: the register's, the configuration's, the admin socket's, a device's,
//! the operating system's), whose message says why. A text the CLI wrote itself
//! (`bail!("{}", text)`, already in its language) is shown as it is. A text from outside the
//! gateway that no typed error explains (a library's) is shown last, marked as a technical
//! detail; the English `Display` of every error stays for the logs.

use std::fmt;

use crate::admin::AdminError;
use crate::certify::{CertifyError, ResolveError};
use crate::config::ConfigError;
use crate::device::DeviceError;
use crate::i18n::{Lang, Localized, Message};
use crate::msg;
use crate::store::StoreError;

use super::state_dir::StateDirError;

/// A failure said in our words (`message`: what failed), around its cause.
#[derive(Debug)]
pub(super) struct Said {
    message: Message,
    cause: anyhow::Error,
}

/// English, for logs.
impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.message, f)
    }
}

impl std::error::Error for Said {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.cause.as_ref())
    }
}

/// `context` for the CLI: says what failed in the catalogue's words, keeping the cause (whose
/// own message says why).
pub(super) trait Say<T> {
    /// Wraps the error, if any, in `message`.
    fn say(self, message: impl FnOnce() -> Message) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> Say<T> for Result<T, E> {
    fn say(self, message: impl FnOnce() -> Message) -> anyhow::Result<T> {
        self.map_err(|cause| {
            anyhow::Error::new(Said {
                message: message(),
                cause: cause.into(),
            })
        })
    }
}

/// A command line clap refused (unknown argument, missing value...): said by
/// [`super::help`], exit status 2 as clap's own.
#[derive(Debug)]
pub(super) struct Usage(pub(super) clap::Error);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Usage {}

/// The message of an error whose type the CLI knows, in `lang` where the type says its text
/// in a language (the certification layer's `describe`).
fn known(error: &(dyn std::error::Error + 'static), lang: Lang) -> Option<Message> {
    if let Some(message) = error.downcast_ref::<Message>() {
        return Some(message.clone());
    }
    if let Some(error) = error.downcast_ref::<CertifyError>() {
        return Some(msg!("cli-error-text", text = error.describe(lang)));
    }
    if let Some(error) = error.downcast_ref::<ResolveError>() {
        return Some(msg!("cli-error-text", text = error.describe(lang)));
    }
    if let Some(error) = error.downcast_ref::<AdminError>() {
        return Some(error.message());
    }
    if let Some(error) = error.downcast_ref::<StoreError>() {
        return Some(error.message());
    }
    if let Some(error) = error.downcast_ref::<ConfigError>() {
        return Some(error.message());
    }
    if let Some(error) = error.downcast_ref::<StateDirError>() {
        return Some(error.message());
    }
    if let Some(error) = error.downcast_ref::<DeviceError>() {
        return Some(error.message());
    }
    if let Some(error) = error.downcast_ref::<std::io::Error>() {
        return Some(error.message());
    }
    None
}

/// The whole error as a person reads it in `lang`, and the exit status.
pub fn describe(error: &anyhow::Error, lang: Lang) -> (String, u8) {
    if let Some(Usage(error)) = error.downcast_ref::<Usage>() {
        return (super::help::usage_error(error, lang), 2);
    }
    let mut said: Vec<Message> = Vec::new();
    let mut details: Vec<String> = Vec::new();
    let mut error = error;
    while let Some(outer) = error.downcast_ref::<Said>() {
        said.push(outer.message.clone());
        error = &outer.cause;
    }
    // A text of the CLI's own (`bail!("{}", text)`): said as it is.
    let own = error
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| error.downcast_ref::<&str>().map(|text| (*text).to_owned()));
    match own {
        Some(text) => said.push(msg!("cli-error-text", text = text)),
        None => {
            for cause in error.chain() {
                if let Some(message) = known(cause, lang) {
                    said.push(message);
                    details.clear();
                    break;
                }
                // A text from outside the gateway: kept, unless its source says the same.
                let text = cause.to_string();
                if !details.iter().any(|d| d.contains(&text)) {
                    details.push(text);
                }
            }
        }
    }
    let mut text = match said.pop() {
        Some(inner) => inner,
        None => msg!("cli-error-unexpected"),
    };
    while let Some(outer) = said.pop() {
        text = msg!("cli-error-because", what = outer, why = text);
    }
    if !details.is_empty() {
        text = msg!("cli-error-detail", text = text, detail = details.join(": "));
    }
    (msg!("cli-error", text = text).render(lang), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(kind: std::io::ErrorKind) -> std::io::Error {
        std::io::Error::new(kind, "os text")
    }

    #[test]
    fn what_failed_then_why_then_the_system_s_text_as_a_detail() {
        let error = Err::<(), _>(io(std::io::ErrorKind::AddrInUse))
            .say(|| msg!("cli-listen-failed", addr = "127.0.0.1:8080"))
            .unwrap_err();
        let (fr, status) = describe(&error, Lang::Fr);
        assert_eq!(status, 1);
        assert!(fr.starts_with("erreur"), "{fr}");
        assert!(fr.contains("127.0.0.1:8080"), "{fr}");
        assert!(fr.contains("déjà utilisée"), "{fr}");
        assert!(fr.contains("os text"), "{fr}");
        let (en, _) = describe(&error, Lang::En);
        assert!(
            en.starts_with("error") && en.contains("already in use"),
            "{en}"
        );
    }

    #[test]
    fn a_foreign_text_is_marked_as_a_detail() {
        let error = Err::<(), _>(anyhow::anyhow!("library words"))
            .say(|| msg!("cli-runtime-failed"))
            .unwrap_err();
        let (fr, _) = describe(&error, Lang::Fr);
        assert!(fr.contains("library words"), "{fr}");
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let error = Err::<(), _>(json)
            .say(|| msg!("cli-runtime-failed"))
            .unwrap_err();
        let (fr, _) = describe(&error, Lang::Fr);
        assert!(
            fr.contains("détail technique") && fr.contains("expected value"),
            "{fr}"
        );
        let own = describe(&anyhow::anyhow!("{}", "déjà dit"), Lang::En).0;
        assert!(own.ends_with("déjà dit"), "{own}");
    }

    #[test]
    fn a_known_error_inside_says_why() {
        let error = anyhow::Error::new(AdminError::Store(StoreError::UnknownKey("k1".into())));
        let (fr, _) = describe(&error, Lang::Fr);
        assert!(fr.contains("k1") && !fr.contains("unknown"), "{fr}");
    }
}
