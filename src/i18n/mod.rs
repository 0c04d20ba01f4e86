//! Languages: every text a person reads (the API's `errorDesc`, the dashboard, the CLI) comes
//! from the Fluent catalogue in `locales/<lang>/*.ftl`, French first, English too.
//!
//! - A text is a [`Message`]: a catalogue id and its arguments, built with [`msg!`](crate::msg)
//!   where the fact is known and rendered with [`Message::render`] where the reader's language
//!   is known (the API's `Accept-Language`, the dashboard's choice, the CLI's `--lang`).
//! - [`Lang::negotiate`] reads an `Accept-Language` header; the installation's default
//!   ([`default_lang`]) is the configuration's `language` (French unless set).
//! - Ids are only ever written as the literal first argument of `msg!`: `tests/catalogue.rs`
//!   finds every one in the sources and fails when one is missing from a language, and
//!   [`catalogue`]'s tests fail when the two languages do not have the same messages with the
//!   same variables.
//! - Logs stay in English (`Display` of a message): they are for the people who read the code.
//!
//! [`format`] writes amounts (`168 040,00 CDF`) and times (in the organization's zone, with
//! its offset) for each language; [`names`] names codes (environments, invoice types).

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

pub mod catalogue;
pub mod format;
pub mod names;

/// A language the gateway speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    /// French, the default.
    #[default]
    Fr,
    /// English.
    En,
}

impl Lang {
    /// Every language, the default first.
    pub const ALL: [Lang; 2] = [Lang::Fr, Lang::En];

    /// The language's code: `fr` or `en`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Fr => "fr",
            Lang::En => "en",
        }
    }

    /// A language tag (`fr`, `fr-CD`, `EN_us`, `en-GB`...) to a language, by its primary
    /// subtag; `None` for a language the gateway does not speak.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_', '.']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("fr") {
            Some(Lang::Fr)
        } else if primary.eq_ignore_ascii_case("en") {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// The language an `Accept-Language` header prefers (RFC 9110 §12.5.4: the highest
    /// `q`, the first listed on a tie, `q=0` never), or `default` when it names none the
    /// gateway speaks (or is absent, or `*`).
    pub fn negotiate(accept_language: Option<&str>, default: Lang) -> Lang {
        let Some(header) = accept_language else {
            return default;
        };
        let mut best: Option<(u16, Lang)> = None;
        for range in header.split(',') {
            let mut parts = range.split(';');
            let tag = parts.next().unwrap_or_default().trim();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .map(parse_quality)
                .next()
                .unwrap_or(Some(1000));
            let Some(quality) = quality else { continue };
            if quality == 0 {
                continue;
            }
            let lang = if tag == "*" {
                Some(default)
            } else {
                Lang::parse(tag)
            };
            if let Some(lang) = lang {
                if best.is_none_or(|(q, _)| quality > q) {
                    best = Some((quality, lang));
                }
            }
        }
        best.map_or(default, |(_, lang)| lang)
    }
}

/// A `q` value in thousandths (`1`, `0.8`, `0.125`), `None` when malformed.
fn parse_quality(text: &str) -> Option<u16> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// In the configuration: `language = "fr"` (any tag whose primary subtag is `fr` or `en`).
impl serde::Serialize for Lang {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> serde::Deserialize<'de> for Lang {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Lang, D::Error> {
        let text = String::deserialize(deserializer)?;
        Lang::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(crate::msg!("config-language-unknown", value = text))
        })
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

static DEFAULT_LANG: AtomicU8 = AtomicU8::new(0);

/// The installation's default language (the configuration's `language`), French until set.
pub fn default_lang() -> Lang {
    match DEFAULT_LANG.load(Ordering::Relaxed) {
        1 => Lang::En,
        _ => Lang::Fr,
    }
}

/// Sets the installation's default language (at start-up, from the configuration).
pub fn set_default_lang(lang: Lang) {
    DEFAULT_LANG.store(
        match lang {
            Lang::Fr => 0,
            Lang::En => 1,
        },
        Ordering::Relaxed,
    );
}

/// One argument of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A text, shown as it is (amounts and times are formatted by the caller, see [`format`]).
    Text(String),
    /// A count: shown as digits, and selects plural forms (`{ $n -> [one] ... *[other] ... }`).
    Count(i64),
    /// Another message, rendered in the same language (a reason inside a sentence).
    Message(Box<Message>),
}

impl From<Message> for Arg {
    fn from(value: Message) -> Arg {
        Arg::Message(Box::new(value))
    }
}

impl From<String> for Arg {
    fn from(value: String) -> Arg {
        Arg::Text(value)
    }
}

impl From<&String> for Arg {
    fn from(value: &String) -> Arg {
        Arg::Text(value.clone())
    }
}

impl From<&str> for Arg {
    fn from(value: &str) -> Arg {
        Arg::Text(value.to_owned())
    }
}

impl From<rust_decimal::Decimal> for Arg {
    fn from(value: rust_decimal::Decimal) -> Arg {
        Arg::Text(value.to_string())
    }
}

macro_rules! count_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(value: $t) -> Arg {
                Arg::Count(i64::try_from(value).unwrap_or(i64::MAX))
            }
        }
    )*};
}
count_from!(u8, u16, u32, u64, usize, i32, i64);

/// A text to show a person: a catalogue id and its arguments, rendered in a language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    id: &'static str,
    args: Vec<(&'static str, Arg)>,
}

impl Message {
    /// The message `id` without arguments (prefer [`msg!`](crate::msg), which the catalogue
    /// test can see).
    pub fn new(id: &'static str) -> Message {
        Message {
            id,
            args: Vec::new(),
        }
    }

    /// With the argument `name` (a Fluent variable `$name`).
    #[must_use]
    pub fn arg(mut self, name: &'static str, value: impl Into<Arg>) -> Message {
        self.args.push((name, value.into()));
        self
    }

    /// Its catalogue id.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// Its arguments.
    pub fn args(&self) -> &[(&'static str, Arg)] {
        &self.args
    }

    /// The text in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        catalogue::render(lang, self.id, &self.args)
    }
}

/// English, for logs.
impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

/// A message is an error the CLI can return as it is (`bail!(msg!(...))`): its edge renders
/// it in the reader's language.
impl std::error::Error for Message {}

/// An error a person may read: its text from the catalogue, rendered where the reader's
/// language is known (the CLI's edge, the admin socket's answer). `Display` stays the English
/// one, for logs. Implemented next to each error type a person can meet; texts that come
/// from outside the gateway (the operating system's, a parser's) are arguments of the
/// message, marked as such, never its sentence.
pub trait Localized {
    /// The catalogue message saying what went wrong.
    fn message(&self) -> Message;
}

impl Localized for Message {
    fn message(&self) -> Message {
        self.clone()
    }
}

/// What failed is said by the caller (a message around this one); this says why, in the
/// reader's words, with the system's own text as a detail.
impl Localized for std::io::Error {
    fn message(&self) -> Message {
        use std::io::ErrorKind;
        let detail = self.to_string();
        match self.kind() {
            ErrorKind::NotFound => crate::msg!("io-not-found", detail = detail),
            ErrorKind::PermissionDenied => crate::msg!("io-permission-denied", detail = detail),
            ErrorKind::AddrInUse => crate::msg!("io-addr-in-use", detail = detail),
            ErrorKind::AddrNotAvailable => crate::msg!("io-addr-not-available", detail = detail),
            ErrorKind::AlreadyExists => crate::msg!("io-already-exists", detail = detail),
            ErrorKind::ConnectionRefused => crate::msg!("io-connection-refused", detail = detail),
            ErrorKind::TimedOut => crate::msg!("io-timed-out", detail = detail),
            ErrorKind::StorageFull => crate::msg!("io-storage-full", detail = detail),
            ErrorKind::ReadOnlyFilesystem => crate::msg!("io-read-only", detail = detail),
            ErrorKind::IsADirectory => crate::msg!("io-is-a-directory", detail = detail),
            ErrorKind::NotADirectory => crate::msg!("io-not-a-directory", detail = detail),
            _ => crate::msg!("io-other", detail = detail),
        }
    }
}

/// A [`Message`]: `msg!("id")`, `msg!("id", name = value, other = value)`. The id must be a
/// literal (the catalogue test finds ids by reading the sources).
#[macro_export]
macro_rules! msg {
    ($id:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::Message::new($id)$(.arg(stringify!($name), $value))*
    };
}

/// A French text as the catalogue writes it (for tests): a no-break space before `:`, `;`,
/// `!`, `?` and `»`, and after `«`, so that an expected text is written with plain spaces.
#[cfg(test)]
pub(crate) fn nbsp(text: &str) -> String {
    let mut out = text.replace("« ", "«\u{a0}");
    for mark in [":", ";", "!", "?", "»"] {
        out = out.replace(&format!(" {mark}"), &format!("\u{a0}{mark}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_by_primary_subtag() {
        assert_eq!(Lang::parse("fr-CD"), Some(Lang::Fr));
        assert_eq!(Lang::parse("EN_us.UTF-8"), Some(Lang::En));
        assert_eq!(Lang::parse("ln"), None);
        assert_eq!(Lang::parse(""), None);
    }

    #[test]
    fn accept_language_by_quality_then_order() {
        let fr = Lang::Fr;
        assert_eq!(Lang::negotiate(None, fr), Lang::Fr);
        assert_eq!(Lang::negotiate(Some("en"), fr), Lang::En);
        assert_eq!(Lang::negotiate(Some("en-US,en;q=0.9"), fr), Lang::En);
        assert_eq!(
            Lang::negotiate(Some("ln, fr;q=0.5, en;q=0.8"), fr),
            Lang::En
        );
        assert_eq!(Lang::negotiate(Some("en;q=0, fr;q=0.1"), fr), Lang::Fr);
        assert_eq!(Lang::negotiate(Some("de, *;q=0.5"), Lang::En), Lang::En);
        assert_eq!(Lang::negotiate(Some("de"), Lang::En), Lang::En);
        assert_eq!(Lang::negotiate(Some("en;q=2, fr"), Lang::En), Lang::Fr);
        assert_eq!(Lang::negotiate(Some("fr, en"), Lang::En), Lang::Fr);
        assert_eq!(Lang::negotiate(Some(";;,,q="), Lang::En), Lang::En);
    }

    #[test]
    fn qualities() {
        assert_eq!(parse_quality("1"), Some(1000));
        assert_eq!(parse_quality("1.000"), Some(1000));
        assert_eq!(parse_quality("0.8"), Some(800));
        assert_eq!(parse_quality("0.125"), Some(125));
        assert_eq!(parse_quality("0.1234"), None);
        assert_eq!(parse_quality("1.5"), None);
        assert_eq!(parse_quality("x"), None);
    }
}
