//! The most common mistake in a configuration file, said in the reader's words: a key the
//! gateway does not know (a typo, a key of another section) or a value that is none of a
//! key's names. The TOML reader says them in serde's English (`unknown field `foo`, expected
//! one of `a`, `b`` ...); this reads that text back into the key or value and the names
//! allowed there. Any other parser message is shown as the parser's.

use crate::i18n::Message;
use crate::msg;

/// A name the configuration does not take where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unknown {
    /// A key (`unknown field`).
    Key {
        /// The key as written.
        name: String,
        /// The keys allowed in its table.
        allowed: Vec<String>,
    },
    /// A value that names none of the key's choices (`unknown variant`).
    Value {
        /// The value as written.
        name: String,
        /// The values allowed.
        allowed: Vec<String>,
    },
}

impl Unknown {
    /// serde's text of an unknown field or variant, read back; `None` for any other text, or
    /// one that allows nothing there.
    pub(super) fn read(parser: &str) -> Option<Unknown> {
        let (is_key, rest) = match parser.strip_prefix("unknown field `") {
            Some(rest) => (true, rest),
            None => (false, parser.strip_prefix("unknown variant `")?),
        };
        let (name, rest) = rest.split_once("`, expected ")?;
        let allowed = names(rest)?;
        let name = name.to_owned();
        Some(if is_key {
            Unknown::Key { name, allowed }
        } else {
            Unknown::Value { name, allowed }
        })
    }

    /// What is wrong, in a sentence about the file `path`, at `line` when known.
    pub(super) fn message(&self, path: String, line: Option<usize>) -> Message {
        let (what, name, allowed) = match self {
            Unknown::Key { name, allowed } => ("key", name, allowed),
            Unknown::Value { name, allowed } => ("value", name, allowed),
        };
        let allowed = allowed.join(", ");
        match line {
            Some(line) => msg!(
                "config-unknown-at",
                path = path,
                line = line,
                what = what,
                name = name.as_str(),
                allowed = allowed
            ),
            None => msg!(
                "config-unknown",
                path = path,
                what = what,
                name = name.as_str(),
                allowed = allowed
            ),
        }
    }
}

/// serde's list of the expected names: "`a`", "`a` or `b`", "one of `a`, `b`, `c`".
fn names(expected: &str) -> Option<Vec<String>> {
    let list = expected.strip_prefix("one of ").unwrap_or(expected);
    let names: Option<Vec<String>> = list
        .split(", ")
        .flat_map(|part| part.split(" or "))
        .map(|quoted| {
            quoted
                .strip_prefix('`')
                .and_then(|q| q.strip_suffix('`'))
                .map(str::to_owned)
        })
        .collect();
    names.filter(|names| !names.is_empty())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::i18n::{nbsp, Lang, Localized};

    /// What the gateway says of `text` as a configuration file, in `lang`.
    fn said(text: &str, lang: Lang) -> String {
        let error =
            Config::from_toml_str(text, Path::new("/etc/emcf/c.toml")).expect_err("refused");
        error.message().render(lang)
    }

    #[test]
    fn serde_s_forms_are_read_back() {
        assert_eq!(
            Unknown::read("unknown field `foo`, expected `a` or `b`"),
            Some(Unknown::Key {
                name: "foo".into(),
                allowed: vec!["a".into(), "b".into()]
            })
        );
        assert_eq!(
            Unknown::read("unknown variant `usb`, expected `serial`"),
            Some(Unknown::Value {
                name: "usb".into(),
                allowed: vec!["serial".into()]
            })
        );
        assert_eq!(
            Unknown::read("unknown field `x`, there are no fields"),
            None
        );
        assert_eq!(
            Unknown::read("invalid type: integer `-1`, expected u32"),
            None
        );
    }

    #[test]
    fn an_unknown_key_is_said_with_the_keys_allowed_there() {
        let fr = said("foo = 1\n", Lang::Fr);
        assert!(
            fr.starts_with(&nbsp(
                "le fichier de configuration /etc/emcf/c.toml n'est pas valable, ligne 1 : clé inconnue « foo » ; les clés permises ici sont : "
            )),
            "{fr}"
        );
        for key in ["listen", "state_dir", "language", "demo", "devices"] {
            assert!(fr.contains(key), "{key}: {fr}");
        }
        assert!(!fr.contains("unknown field") && !fr.contains('`'), "{fr}");
        let en = said("[alerts]\nquota_threshold = [80]\n", Lang::En);
        assert!(
            en.starts_with(
                "the configuration file /etc/emcf/c.toml is not valid, line 2: unknown key \"quota_threshold\"; the keys allowed here are: "
            ),
            "{en}"
        );
        assert!(en.contains("quota_thresholds"), "{en}");
        // Any other mistake keeps the parser's own words.
        let other = said("max_connections = -1\n", Lang::Fr);
        assert!(other.contains("analyseur TOML"), "{other}");
    }
}
