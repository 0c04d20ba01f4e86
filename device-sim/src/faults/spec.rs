//! Every injectable fault as the person who sets it reads it: its name, what values it takes,
//! what it does and an example. One definition for the box ([`super::BOX_FAULTS`], flags of
//! `emcf-sim`) and one for the web API ([`crate::edef::EDEF_FAULTS`], members of the control
//! endpoint's JSON); `emcf-sim --help`, `emcf-sim edef --help`, the README's technician section
//! ([`readme_tables`], checked by a test) and the messages refusing a wrong value are all
//! drawn from them.
//!
//! The help and the flags' messages are English, like the rest of the simulator's command line
//! (a technician's tool, documented in English beside PROTOCOL.md); the control endpoint
//! refuses in French, like every other answer of the simulated DGI.

use std::fmt::Write as _;

use serde_json::Value;

/// A non-breaking space, before `:` and `;` in French.
pub(crate) const NBSP: char = '\u{a0}';

/// What values a fault takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// On or off: `true` or `false`.
    OnOff,
    /// An action done at once when set to `true`; it reads `false` afterwards.
    OneShot,
    /// Acts on the next N calls: `true` (the next one), `false` (off) or a whole number.
    NextCount,
    /// A whole number of times, 0 for off.
    Count,
    /// The Nth time, from 1.
    Ordinal,
    /// A duration in milliseconds, from 0 to `max`.
    Milliseconds {
        /// The longest accepted.
        max: u64,
    },
    /// A probability from 0 to 1.
    Probability,
    /// A command code in hex (`C0`, `0xC0`, `C0h`).
    CommandCode,
    /// Any whole number (a seed).
    Seed,
}

/// A fault's value, once checked against its kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaultValue {
    /// On/off and one-shot faults.
    Bool(bool),
    /// Counts, ordinals, durations, seeds (a `NextCount` set with `true` is 1).
    Whole(u64),
    /// Probabilities.
    Probability(f64),
    /// Command codes.
    Command(u8),
}

impl FaultKind {
    /// The kind's name, in English.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::OnOff => "on/off",
            FaultKind::OneShot => "one-shot",
            FaultKind::NextCount => "count or on/off",
            FaultKind::Count => "count",
            FaultKind::Ordinal => "ordinal",
            FaultKind::Milliseconds { .. } => "milliseconds",
            FaultKind::Probability => "probability",
            FaultKind::CommandCode => "command code",
            FaultKind::Seed => "number",
        }
    }

    /// The kind's name as a complement: "takes a probability".
    fn name_with_article(self) -> &'static str {
        match self {
            FaultKind::OnOff | FaultKind::OneShot | FaultKind::Milliseconds { .. } => self.name(),
            FaultKind::NextCount => "a count or on/off",
            FaultKind::Count => "a count",
            FaultKind::Ordinal => "an ordinal",
            FaultKind::Probability => "a probability",
            FaultKind::CommandCode => "a command code",
            FaultKind::Seed => "a number",
        }
    }

    /// The values it takes, in English.
    pub fn values(self) -> String {
        match self {
            FaultKind::OnOff => "true (on) or false (off)".to_owned(),
            FaultKind::OneShot => "true (acts at once, reads false afterwards)".to_owned(),
            FaultKind::NextCount => {
                "true (the next one), false (off) or a whole number N (the next N)".to_owned()
            }
            FaultKind::Count => "a whole number N, 0 for off".to_owned(),
            FaultKind::Ordinal => "a whole number N from 1 (the Nth)".to_owned(),
            FaultKind::Milliseconds { max } => format!("0 to {max}"),
            FaultKind::Probability => "0 to 1".to_owned(),
            FaultKind::CommandCode => "C0, 0xC0 or C0h (hex)".to_owned(),
            FaultKind::Seed => "any whole number".to_owned(),
        }
    }

    /// The values it takes, in French (the control endpoint's refusals).
    pub fn values_fr(self) -> String {
        match self {
            FaultKind::OnOff => "true (active) ou false (inactive)".to_owned(),
            FaultKind::OneShot => "true (agit aussitôt, se relit false ensuite)".to_owned(),
            FaultKind::NextCount => "true (la prochaine fois), false (inactive) ou un nombre \
                                     entier N (les N prochaines fois)"
                .to_owned(),
            FaultKind::Count => format!("un nombre entier N (0{NBSP}: inactive)"),
            FaultKind::Ordinal => "un nombre entier N à partir de 1 (la N-ième fois)".to_owned(),
            FaultKind::Milliseconds { max } => format!("des millisecondes, de 0 à {max}"),
            FaultKind::Probability => "une probabilité de 0 à 1".to_owned(),
            FaultKind::CommandCode => {
                "un code de commande en hexadécimal (C0, 0xC0 ou C0h)".to_owned()
            }
            FaultKind::Seed => "un nombre entier".to_owned(),
        }
    }

    /// `text` (a flag's value) read as this kind; `None` if it is not one of its values.
    pub fn read_text(self, text: &str) -> Option<FaultValue> {
        let text = text.trim();
        let whole = || text.parse::<u64>().ok();
        let flag = || match text {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        match self {
            FaultKind::OnOff | FaultKind::OneShot => flag().map(FaultValue::Bool),
            FaultKind::NextCount => flag()
                .map(u64::from)
                .or_else(whole)
                .filter(|&n| n <= u64::from(u32::MAX))
                .map(FaultValue::Whole),
            FaultKind::Count => whole()
                .filter(|&n| n <= u64::from(u32::MAX))
                .map(FaultValue::Whole),
            FaultKind::Ordinal => whole()
                .filter(|&n| (1..=u64::from(u32::MAX)).contains(&n))
                .map(FaultValue::Whole),
            FaultKind::Milliseconds { max } => whole().filter(|&n| n <= max).map(FaultValue::Whole),
            FaultKind::Probability => text
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .map(FaultValue::Probability),
            FaultKind::CommandCode => {
                let digits = text
                    .strip_prefix("0x")
                    .or_else(|| text.strip_prefix("0X"))
                    .unwrap_or(text);
                let digits = digits.strip_suffix(['h', 'H']).unwrap_or(digits);
                let all_hex = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit());
                all_hex
                    .then(|| u8::from_str_radix(digits, 16).ok())
                    .flatten()
                    .map(FaultValue::Command)
            }
            FaultKind::Seed => whole().map(FaultValue::Whole),
        }
    }

    /// A JSON member's value read as this kind: booleans and numbers as JSON booleans and
    /// numbers (a number in a string is refused), a command code as a string.
    pub fn read_json(self, value: &Value) -> Option<FaultValue> {
        match value {
            Value::Bool(flag) => self.read_text(if *flag { "true" } else { "false" }),
            Value::Number(number) => self.read_text(&number.to_string()),
            Value::String(text) if self == FaultKind::CommandCode => self.read_text(text),
            _ => None,
        }
    }
}

/// A Rust value a [`FaultValue`] can become (the field it sets).
pub trait FromFault: Sized {
    /// `value` as `Self`, if it is of the right sort.
    fn from_fault(value: FaultValue) -> Option<Self>;
}

impl FromFault for bool {
    fn from_fault(value: FaultValue) -> Option<bool> {
        match value {
            FaultValue::Bool(flag) => Some(flag),
            _ => None,
        }
    }
}

impl FromFault for u64 {
    fn from_fault(value: FaultValue) -> Option<u64> {
        match value {
            FaultValue::Whole(n) => Some(n),
            _ => None,
        }
    }
}

impl FromFault for u32 {
    fn from_fault(value: FaultValue) -> Option<u32> {
        u64::from_fault(value).and_then(|n| u32::try_from(n).ok())
    }
}

impl FromFault for u8 {
    fn from_fault(value: FaultValue) -> Option<u8> {
        match value {
            FaultValue::Command(code) => Some(code),
            _ => None,
        }
    }
}

impl FromFault for f64 {
    fn from_fault(value: FaultValue) -> Option<f64> {
        match value {
            FaultValue::Probability(p) => Some(p),
            _ => None,
        }
    }
}

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultSpec {
    /// Its name: the flag without `--` (box), the JSON member (web API).
    pub name: &'static str,
    /// The values it takes.
    pub kind: FaultKind,
    /// What it does, in English.
    pub what: &'static str,
    /// A value as typed (`0.05`, `true`, `C0`).
    pub example: &'static str,
}

impl FaultSpec {
    /// The example as a flag: `--drop-replies 0.05` (`_` written `-`).
    pub fn flag_example(&self) -> String {
        format!("--{} {}", self.name.replace('_', "-"), self.example)
    }

    /// The example as the control endpoint's JSON: `{"token_expired": true}`.
    pub fn json_example(&self) -> String {
        let value = match self.kind {
            FaultKind::CommandCode => format!("\"{}\"", self.example),
            _ => self.example.to_owned(),
        };
        format!("{{\"{}\": {value}}}", self.name)
    }

    /// The help of its flag: what it does, what it takes, an example.
    pub fn flag_help(&self) -> String {
        format!(
            "{} [{}: {}] e.g. {}",
            self.what,
            self.kind.name(),
            self.kind.values(),
            self.flag_example()
        )
    }

    /// Why a flag's value is refused (clap prints it after the flag and the value).
    pub fn flag_refusal(&self) -> String {
        format!(
            "--{} takes {}: {}, e.g. {}",
            self.name.replace('_', "-"),
            self.kind.name_with_article(),
            self.kind.values(),
            self.flag_example()
        )
    }

    /// A clap value parser for its flag, into the type of the field it sets.
    pub fn flag_parser<T: FromFault + Clone + Send + Sync + 'static>(
        self,
    ) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
        move |text: &str| {
            self.kind
                .read_text(text)
                .and_then(T::from_fault)
                .ok_or_else(|| self.flag_refusal())
        }
    }
}

/// How the faults of a list are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBy {
    /// A flag of the command line, at start.
    Flag,
    /// A member of the JSON body of `POST /_sim/faults`, while it runs.
    ControlEndpoint,
}

/// The faults of one simulator.
#[derive(Debug, Clone, Copy)]
pub struct FaultList {
    /// The simulator, as the README and the help name it.
    pub title: &'static str,
    /// How they are set (and so how their examples are written).
    pub set_by: SetBy,
    /// What to know before the list, in English.
    pub intro: &'static str,
    /// A command that sets one, in full.
    pub how: &'static str,
    /// The faults.
    pub faults: &'static [FaultSpec],
}

impl FaultList {
    /// A fault's name as it is set: `--drop-replies`, `token_expired`.
    pub fn shown_name(&self, fault: &FaultSpec) -> String {
        match self.set_by {
            SetBy::Flag => format!("--{}", fault.name),
            SetBy::ControlEndpoint => fault.name.to_owned(),
        }
    }

    /// A fault's example as it is set.
    pub fn example(&self, fault: &FaultSpec) -> String {
        match self.set_by {
            SetBy::Flag => fault.flag_example(),
            SetBy::ControlEndpoint => fault.json_example(),
        }
    }

    /// The list for `--help`: the title, intro and a command that sets one, then per fault
    /// its name and type, what it does, its values and an example, wrapped for a terminal.
    pub fn help_text(&self) -> String {
        let mut text = format!("{}:\n", self.title);
        for line in wrap(self.intro, 96) {
            let _ = writeln!(text, "  {line}");
        }
        let _ = writeln!(text, "  For example:\n    {}", self.how);
        for fault in self.faults {
            let _ = writeln!(
                text,
                "\n  {} ({})",
                self.shown_name(fault),
                fault.kind.name()
            );
            let values = format!("Values: {}.", fault.kind.values());
            for paragraph in [fault.what, values.as_str()] {
                for line in wrap(paragraph, 92) {
                    let _ = writeln!(text, "      {line}");
                }
            }
            let _ = writeln!(text, "      e.g. {}", self.example(fault));
        }
        text
    }

    /// The list as a Markdown table (README).
    pub fn markdown(&self) -> String {
        let mut text = format!(
            "**{}**. {} For example: `{}`\n\n",
            self.title, self.intro, self.how
        );
        text.push_str("| Fault | Type: values | What it does | Example |\n|---|---|---|---|\n");
        for fault in self.faults {
            let _ = writeln!(
                text,
                "| `{}` | {}: {} | {} | `{}` |",
                self.shown_name(fault),
                fault.kind.name(),
                fault.kind.values(),
                fault.what,
                self.example(fault)
            );
        }
        text
    }
}

/// `text` cut into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Both simulators' faults as the README's technician section lists them.
pub fn readme_tables() -> String {
    format!(
        "{}\n{}",
        super::BOX_FAULTS.markdown(),
        crate::edef::EDEF_FAULTS.markdown()
    )
}

#[cfg(test)]
mod tests;
