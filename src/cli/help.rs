//! `--help` and clap's own words in the reader's language.
//!
//! The language is known before the command line is parsed ([`early_lang`]): `--lang`, then
//! `EMCF_LANG`, then the `language` of the configuration file the command would read (read
//! leniently: a broken file does not break `--help`), then French.
//!
//! Every command's and argument's help comes from `locales/*/help.ftl`, by an id derived from
//! its place in the clap tree ([`about_id`], [`arg_id`]): `help-org-add` is `org add`'s,
//! `help-org-add--nif` its `--nif`'s, `help--lang` the global `--lang`'s, `help-value-file`
//! the `<FILE>` placeholder's. A test walks the tree and fails on a command, an argument or
//! a placeholder without its message in both languages, and on a `help-` message no command
//! uses. Clap's own words are replaced too: the usage heading and the subcommands' heading
//! (a template), `--help` and `--version` (arguments of ours), defaults and possible values
//! (hidden, then said in the help text), the `help` subcommand, and its errors
//! ([`usage_error`], from the error's kind and the offending argument).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command, CommandFactory};

use super::Cli;
use crate::config::{env_vars, Config, ENV_LANG};
use crate::i18n::{catalogue, Lang, Message};
use crate::msg;

/// The language of the CLI's texts, from the raw command line and the environment.
pub(super) fn early_lang(args: &[OsString]) -> Lang {
    let flag = |name: &str| -> Option<String> {
        let long = format!("--{name}");
        let with_value = format!("--{name}=");
        let mut args = args.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(arg) = args.next() {
            if arg == "--" {
                return None;
            }
            if arg == long {
                return args.next().map(|v| v.into_owned());
            }
            if let Some(value) = arg.strip_prefix(&with_value) {
                return Some(value.to_owned());
            }
        }
        None
    };
    let vars: Vec<(String, String)> = env_vars().collect();
    flag("lang")
        .and_then(|tag| Lang::parse(&tag))
        .or_else(|| {
            vars.iter()
                .filter(|(name, value)| name == ENV_LANG && !value.is_empty())
                .find_map(|(_, value)| Lang::parse(value))
        })
        .or_else(|| Config::file_language(flag("config").map(PathBuf::from).as_deref(), vars))
        .unwrap_or_default()
}

/// The id of the help of the command at `path` (names below the binary): `help` for the
/// binary itself, `help-org-add` for `org add`.
pub(super) fn about_id(path: &[&str]) -> String {
    std::iter::once("help")
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join("-")
}

/// The id of the help of argument `arg` of the command at `path`: `help-org-add--nif`.
pub(super) fn arg_id(path: &[&str], arg: &str) -> String {
    format!("{}--{arg}", about_id(path))
}

/// The id of a value placeholder: `help-value-file` for `<FILE>`.
pub(super) fn value_id(name: &str) -> String {
    format!("help-value-{}", name.to_ascii_lowercase().replace('_', "-"))
}

/// The text of a help id in `lang`; `None` if the catalogue lacks it (the tests see to it
/// that it does not).
fn text(lang: Lang, id: &str) -> Option<String> {
    catalogue::render_id(lang, id)
}

/// The CLI's clap command with every text in `lang`.
pub(super) fn command(lang: Lang) -> Command {
    let mut command = localize(Cli::command(), &[], lang)
        .disable_version_flag(true)
        .arg(heading(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::Version)
                .display_order(LAST + 1)
                .help(msg!("help-print-version").render(lang)),
            lang,
        ));
    command.build();
    localize_help_subcommands(&mut command, lang);
    command
}

/// `command` (at `path`: the names below the binary) and its subcommands with their texts
/// in `lang`.
fn localize(command: Command, path: &[&str], lang: Lang) -> Command {
    let about = text(lang, &about_id(path)).unwrap_or_default();
    let template = format!(
        "{{about-with-newline}}\n{} {{usage}}\n\n{{all-args}}{{after-help}}",
        msg!("help-usage").render(lang)
    );
    let mut command = command
        .about(about)
        .long_about(None)
        .help_template(template)
        .subcommand_help_heading(msg!("help-commands").render(lang))
        .subcommand_value_name(msg!("help-value-command").render(lang))
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .display_order(LAST)
                .help(msg!("help-print-help").render(lang)),
        )
        .mut_args(|arg| localize_arg(arg, path, lang))
        .mut_args(|arg| heading(arg, lang));
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    for name in &names {
        let mut below = path.to_vec();
        below.push(name);
        command = command.mut_subcommand(name, |c| localize(c, &below, lang));
    }
    command
}

/// The place of `--help` and `--version` in a list of options: last, after the global
/// options (which come after the command's own, see [`localize_arg`]).
const LAST: usize = 2000;

/// The heading an argument is listed under (clap's "Options" and "Arguments", said with
/// the reader's typography).
fn heading(arg: Arg, lang: Lang) -> Arg {
    let heading = if arg.is_positional() {
        msg!("help-arguments")
    } else {
        msg!("help-options")
    };
    arg.help_heading(heading.render(lang))
}

/// An argument's help, placeholder, default and possible values in `lang`.
fn localize_arg(arg: Arg, path: &[&str], lang: Lang) -> Arg {
    let id = arg.get_id().as_str().to_owned();
    if id == "help" || id == "version" {
        return arg;
    }
    let mut help = text(lang, &arg_id(path, &id)).unwrap_or_default();
    // A flag has no value: its `true`/`false` and its placeholder are not shown.
    let takes_value = arg.get_action().takes_values();
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| takes_value && !v.is_hide_set())
        .map(|v| v.get_name().to_owned())
        .collect();
    if !values.is_empty() {
        help = msg!(
            "help-possible-values",
            help = help,
            values = values.join(", ")
        )
        .render(lang);
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty())
        .collect();
    if !defaults.is_empty() && takes_value {
        help = msg!("help-default", help = help, value = defaults.join(", ")).render(lang);
    }
    let names: Option<Vec<String>> = arg.get_value_names().filter(|_| takes_value).map(|names| {
        names
            .iter()
            .map(|name| text(lang, &value_id(name)).unwrap_or_else(|| name.to_string()))
            .collect()
    });
    let arg = arg.help(help).long_help(None);
    let arg = if arg.is_global_set() {
        arg.display_order(LAST - 1)
    } else {
        arg
    };
    let arg = if takes_value {
        arg.hide_possible_values(true).hide_default_value(true)
    } else {
        arg
    };
    match names {
        Some(names) => arg.value_names(names),
        None => arg,
    }
}

/// Clap's `help` subcommands (added when the tree is built) in `lang`.
fn localize_help_subcommands(command: &mut Command, lang: Lang) {
    for sub in command.get_subcommands_mut() {
        if sub.get_name() == "help" {
            let about = msg!("help-help").render(lang);
            let value = msg!("help-value-command").render(lang);
            let help = msg!("help-help-command").render(lang);
            let has_arg = sub.get_arguments().any(|a| a.get_id() == "subcommand");
            let mut taken = std::mem::take(sub).about(about);
            if has_arg {
                taken = taken.mut_arg("subcommand", |a| {
                    a.value_name(value.clone()).help(help.clone())
                });
            }
            *sub = taken;
        }
        localize_help_subcommands(sub, lang);
    }
}

/// Why a number given on the command line (a count, a sequence, a quota) was refused: it is
/// not a whole number, or too large for one.
pub(super) fn number_refused(error: &std::num::ParseIntError) -> Message {
    match error.kind() {
        std::num::IntErrorKind::PosOverflow => msg!("usage-number-too-large"),
        _ => msg!("usage-whole-number"),
    }
}

/// What clap refused, in `lang`, with the usage of the command and how to see its help.
pub(super) fn usage_error(error: &clap::Error, lang: Lang) -> String {
    let context = |kind: ContextKind| -> Option<String> {
        error.get(kind).map(|value| match value {
            ContextValue::String(text) => text.clone(),
            ContextValue::Strings(texts) => texts.join(", "),
            ContextValue::StyledStr(text) => text.to_string(),
            ContextValue::StyledStrs(texts) => texts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            ContextValue::Number(n) => n.to_string(),
            other => other.to_string(),
        })
    };
    let arg = context(ContextKind::InvalidArg).unwrap_or_default();
    let value = context(ContextKind::InvalidValue).unwrap_or_default();
    let said: Message = match error.kind() {
        ErrorKind::InvalidValue if value.is_empty() => msg!("usage-missing-value", arg = arg),
        ErrorKind::InvalidValue => match context(ContextKind::ValidValue).filter(|v| !v.is_empty())
        {
            Some(valid) => msg!(
                "usage-invalid-value-among",
                arg = arg,
                value = value,
                valid = valid
            ),
            None => msg!("usage-invalid-value", arg = arg, value = value),
        },
        ErrorKind::ValueValidation => {
            let source = std::error::Error::source(error);
            let why = source
                .and_then(|source| source.downcast_ref::<Message>())
                .cloned()
                .or_else(|| {
                    source
                        .and_then(|source| source.downcast_ref::<std::num::ParseIntError>())
                        .map(number_refused)
                })
                .unwrap_or_else(|| msg!("usage-not-accepted"));
            msg!("usage-value-refused", arg = arg, value = value, why = why)
        }
        ErrorKind::UnknownArgument => msg!("usage-unknown-argument", arg = arg),
        ErrorKind::InvalidSubcommand => msg!(
            "usage-unknown-subcommand",
            name = context(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        ErrorKind::NoEquals => msg!("usage-no-equals", arg = arg),
        ErrorKind::TooManyValues => msg!("usage-too-many-values", arg = arg, value = value),
        ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues => {
            msg!("usage-wrong-number-of-values", arg = arg)
        }
        ErrorKind::ArgumentConflict => {
            let other = context(ContextKind::PriorArg).unwrap_or_default();
            if other == arg {
                msg!("usage-repeated", arg = arg)
            } else {
                msg!("usage-conflict", arg = arg, other = other)
            }
        }
        ErrorKind::MissingRequiredArgument => msg!("usage-missing-argument", arg = arg),
        ErrorKind::MissingSubcommand => msg!(
            "usage-missing-subcommand",
            name = context(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        ErrorKind::InvalidUtf8 => msg!("usage-invalid-utf8"),
        _ => msg!("usage-other", detail = error.to_string()),
    };
    let mut said = said;
    if let Some(suggested) = context(ContextKind::SuggestedArg)
        .or_else(|| context(ContextKind::SuggestedSubcommand))
        .or_else(|| context(ContextKind::SuggestedValue))
    {
        said = msg!("usage-did-you-mean", text = said, suggested = suggested);
    }
    let mut out = msg!("cli-error", text = said).render(lang);
    if let Some(usage) = context(ContextKind::Usage) {
        let usage = usage.trim();
        let usage = usage.strip_prefix("Usage:").unwrap_or(usage).trim();
        out.push_str(&format!(
            "\n\n{} {usage}\n",
            msg!("help-usage").render(lang)
        ));
    }
    out.push_str(&format!("\n{}", msg!("usage-try-help").render(lang)));
    out
}

#[cfg(test)]
mod tests;
