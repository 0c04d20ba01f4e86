//! The Fluent catalogue: `locales/<lang>/<area>.ftl`, built into the binary, one bundle per
//! language. One file per area, the same files in every language:
//!
//! | file | what |
//! |---|---|
//! | `common.ftl` | words shared by several areas (yes/no, environments, plans) |
//! | `api.ftl` | the API's `errorDesc` other than validation, the landing page |
//! | `validation.ftl` | the invoice body's rules (HTTP 400, codes 1..99) |
//! | `dashboard.ftl` | the dashboard's pages |
//! | `cli.ftl` | the CLI's messages and table headings |
//! | `alerts.ftl` | the alerts e-mailed to organizations' administrators |
//! | `receipt.ftl` | the printable fiscal block (API `receipt.html`/`receipt.escpos`, dashboard) |
//! | `help.ftl` | the CLI's `--help`: ids derived from the clap tree (`src/cli/help.rs`) and clap's own words |
//!
//! Texts are plain (no bidi isolation marks: they go into JSON, HTML and terminals). A message
//! missing in a language falls back to the other one, then to its id, and is logged once;
//! the tests below and `tests/catalogue.rs` keep that from happening.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Mutex, OnceLock};

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use fluent_syntax::ast;

use super::{Arg, Lang};

/// The catalogue's files, by area: (name, French, English).
pub const FILES: &[(&str, &str, &str)] = &[
    (
        "common.ftl",
        include_str!("../../locales/fr/common.ftl"),
        include_str!("../../locales/en/common.ftl"),
    ),
    (
        "api.ftl",
        include_str!("../../locales/fr/api.ftl"),
        include_str!("../../locales/en/api.ftl"),
    ),
    (
        "validation.ftl",
        include_str!("../../locales/fr/validation.ftl"),
        include_str!("../../locales/en/validation.ftl"),
    ),
    (
        "dashboard.ftl",
        include_str!("../../locales/fr/dashboard.ftl"),
        include_str!("../../locales/en/dashboard.ftl"),
    ),
    (
        "cli.ftl",
        include_str!("../../locales/fr/cli.ftl"),
        include_str!("../../locales/en/cli.ftl"),
    ),
    (
        "alerts.ftl",
        include_str!("../../locales/fr/alerts.ftl"),
        include_str!("../../locales/en/alerts.ftl"),
    ),
    (
        "receipt.ftl",
        include_str!("../../locales/fr/receipt.ftl"),
        include_str!("../../locales/en/receipt.ftl"),
    ),
    (
        "help.ftl",
        include_str!("../../locales/fr/help.ftl"),
        include_str!("../../locales/en/help.ftl"),
    ),
];

struct Bundles {
    fr: FluentBundle<FluentResource>,
    en: FluentBundle<FluentResource>,
}

fn bundles() -> &'static Bundles {
    static BUNDLES: OnceLock<Bundles> = OnceLock::new();
    BUNDLES.get_or_init(|| Bundles {
        fr: bundle(Lang::Fr),
        en: bundle(Lang::En),
    })
}

fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let id: unic_langid::LanguageIdentifier = lang.code().parse().unwrap_or_default();
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    bundle.set_use_isolating(false);
    for (name, fr, en) in FILES {
        let source = match lang {
            Lang::Fr => fr,
            Lang::En => en,
        };
        // A parse error keeps the entries that parsed; the tests refuse any.
        let resource = FluentResource::try_new((*source).to_owned()).unwrap_or_else(|(r, e)| {
            tracing::error!(file = %name, lang = %lang, errors = ?e, "message catalogue damaged");
            r
        });
        if let Err(errors) = bundle.add_resource(resource) {
            tracing::error!(file = %name, lang = %lang, ?errors, "message catalogue conflicts");
        }
    }
    bundle
}

/// Message `id` in `lang` with `args`.
pub fn render(lang: Lang, id: &'static str, args: &[(&'static str, Arg)]) -> String {
    let bundles = bundles();
    let (first, second) = match lang {
        Lang::Fr => (&bundles.fr, &bundles.en),
        Lang::En => (&bundles.en, &bundles.fr),
    };
    let mut fluent_args = FluentArgs::with_capacity(args.len());
    for (name, value) in args {
        let value = match value {
            Arg::Text(text) => FluentValue::from(text.as_str()),
            Arg::Count(n) => FluentValue::from(*n),
            Arg::Message(message) => FluentValue::from(message.render(lang)),
        };
        fluent_args.set(*name, value);
    }
    for (bundle, fallback) in [(first, false), (second, true)] {
        let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
            continue;
        };
        let mut errors = Vec::new();
        let text = bundle.format_pattern(pattern, Some(&fluent_args), &mut errors);
        if fallback || !errors.is_empty() {
            report_once(id, lang, Some(&format!("{errors:?}")));
        }
        return text.into_owned();
    }
    report_once(id, lang, None);
    id.to_owned()
}

/// Logs once per message and language what is wrong with it (`None`: it is missing).
fn report_once(id: &'static str, lang: Lang, problem: Option<&str>) {
    static REPORTED: Mutex<Option<HashSet<(&'static str, Lang)>>> = Mutex::new(None);
    let first = REPORTED
        .lock()
        .map(|mut set| set.get_or_insert_with(HashSet::new).insert((id, lang)))
        .unwrap_or(false);
    if first {
        tracing::warn!(
            id,
            lang = %lang,
            problem = problem.unwrap_or("no such message"),
            "message catalogue: incomplete message"
        );
    }
}

/// Message `id`, known only at run time (the CLI's help texts, whose ids come from the clap
/// tree), without arguments, in `lang`; `None` if `lang` has no such message.
pub fn render_id(lang: Lang, id: &str) -> Option<String> {
    let bundles = bundles();
    let bundle = match lang {
        Lang::Fr => &bundles.fr,
        Lang::En => &bundles.en,
    };
    let pattern = bundle.get_message(id)?.value()?;
    let mut errors = Vec::new();
    Some(
        bundle
            .format_pattern(pattern, None, &mut errors)
            .into_owned(),
    )
}

/// Whether message `id` exists in `lang`.
pub fn has(lang: Lang, id: &str) -> bool {
    let bundles = bundles();
    match lang {
        Lang::Fr => bundles.fr.has_message(id),
        Lang::En => bundles.en.has_message(id),
    }
}

/// The messages of one file's source: id -> the variables its value and attributes use
/// (with `.attribute` entries as `id.attribute`). Parse errors are returned as texts.
pub fn outline(source: &str) -> Result<BTreeMap<String, BTreeSet<String>>, Vec<String>> {
    let resource = fluent_syntax::parser::parse(source)
        .map_err(|(_, errors)| errors.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>())?;
    let mut messages = BTreeMap::new();
    for entry in &resource.body {
        match entry {
            ast::Entry::Message(message) => {
                let mut vars = BTreeSet::new();
                if let Some(value) = &message.value {
                    pattern_vars(value, &mut vars);
                }
                messages.insert(message.id.name.to_owned(), vars);
                for attribute in &message.attributes {
                    let mut vars = BTreeSet::new();
                    pattern_vars(&attribute.value, &mut vars);
                    messages.insert(format!("{}.{}", message.id.name, attribute.id.name), vars);
                }
            }
            ast::Entry::Term(term) => {
                let mut vars = BTreeSet::new();
                pattern_vars(&term.value, &mut vars);
                messages.insert(format!("-{}", term.id.name), vars);
            }
            ast::Entry::Junk { content } => return Err(vec![format!("junk: {content}")]),
            _ => {}
        }
    }
    Ok(messages)
}

fn pattern_vars(pattern: &ast::Pattern<&str>, vars: &mut BTreeSet<String>) {
    for element in &pattern.elements {
        if let ast::PatternElement::Placeable { expression } = element {
            expression_vars(expression, vars);
        }
    }
}

fn expression_vars(expression: &ast::Expression<&str>, vars: &mut BTreeSet<String>) {
    match expression {
        ast::Expression::Select { selector, variants } => {
            inline_vars(selector, vars);
            for variant in variants {
                pattern_vars(&variant.value, vars);
            }
        }
        ast::Expression::Inline(inline) => inline_vars(inline, vars),
    }
}

fn inline_vars(inline: &ast::InlineExpression<&str>, vars: &mut BTreeSet<String>) {
    match inline {
        ast::InlineExpression::VariableReference { id } => {
            vars.insert(id.name.to_owned());
        }
        ast::InlineExpression::FunctionReference { arguments, .. }
        | ast::InlineExpression::TermReference {
            arguments: Some(arguments),
            ..
        } => {
            for positional in &arguments.positional {
                inline_vars(positional, vars);
            }
            for named in &arguments.named {
                inline_vars(&named.value, vars);
            }
        }
        ast::InlineExpression::Placeable { expression } => expression_vars(expression, vars),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_and_both_languages_have_the_same_messages_and_variables() {
        let mut problems = Vec::new();
        for (name, fr, en) in FILES {
            let fr = outline(fr).unwrap_or_else(|e| {
                problems.push(format!("fr/{name} does not parse: {e:?}"));
                BTreeMap::new()
            });
            let en = outline(en).unwrap_or_else(|e| {
                problems.push(format!("en/{name} does not parse: {e:?}"));
                BTreeMap::new()
            });
            for (id, vars) in &fr {
                match en.get(id) {
                    None => problems.push(format!("{name}: {id} is in French only")),
                    Some(en_vars) if en_vars != vars => problems.push(format!(
                        "{name}: {id} uses {vars:?} in French, {en_vars:?} in English"
                    )),
                    Some(_) => {}
                }
            }
            for id in en.keys().filter(|id| !fr.contains_key(*id)) {
                problems.push(format!("{name}: {id} is in English only"));
            }
        }
        assert!(
            problems.is_empty(),
            "catalogue problems:\n{}",
            problems.join("\n")
        );
    }

    /// French typography, the same in every file: a no-break space (U+00A0) before `:`, `;`,
    /// `!`, `?` and `»`, and after `«`, so that no line breaks there and the catalogue reads
    /// as one text (tests write the same with a plain space and `nbsp()`).
    #[test]
    fn french_punctuation_keeps_its_no_break_spaces() {
        let mut wrong = Vec::new();
        for (name, fr, _) in FILES {
            for (number, line) in fr.lines().enumerate() {
                if line.trim_start().starts_with('#') {
                    continue;
                }
                let plain = [" :", " ;", " !", " ?", " »", "« "];
                if plain.iter().any(|p| line.contains(p)) {
                    wrong.push(format!("fr/{name}:{}: {line}", number + 1));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "a plain space where French wants a no-break space (U+00A0):\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn no_id_is_defined_in_two_files() {
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for (name, fr, _) in FILES {
            for id in outline(fr).unwrap_or_default().into_keys() {
                if let Some(other) = seen.insert(id.clone(), name) {
                    panic!("{id} is defined in {other} and {name}");
                }
            }
        }
    }

    #[test]
    fn renders_with_arguments_plain_and_falls_back_to_the_id() {
        let fr = render(
            Lang::Fr,
            "test-greeting",
            &[("name", Arg::from("Kinshasa"))],
        );
        assert_eq!(fr, "Bonjour, Kinshasa");
        let en = render(
            Lang::En,
            "test-greeting",
            &[("name", Arg::from("Kinshasa"))],
        );
        assert_eq!(en, "Hello, Kinshasa");
        let one = render(Lang::Fr, "test-count", &[("n", Arg::Count(1))]);
        let many = render(Lang::Fr, "test-count", &[("n", Arg::Count(3))]);
        assert_eq!((one.as_str(), many.as_str()), ("1 facture", "3 factures"));
        assert_eq!(render(Lang::Fr, "no-such-message", &[]), "no-such-message");
        assert!(has(Lang::En, "test-greeting") && !has(Lang::En, "no-such-message"));
    }
}
