//! Firmware profiles: how the simulated box TALKS where PROTOCOL.md marks a point *assumed* and
//! real boxes differ (PROTOCOL.md §0): field layouts and forms of the
//! replies, timing, SYN, SEQ replay, status bytes, refusals and CR/LF escapes.
//!
//! A profile never changes what the box certifies, signs or counts: the engine runs the same
//! state machine and fiscal memory for every profile, builds the reference reply (PROTOCOL.md
//! as written), and only then is that reply rewritten into the profile's wire form
//! (`firmware/wire.rs`). So a host that copes with a profile's form certifies exactly what it
//! would with the reference box. The default profile, [`Firmware::reference`], rewrites
//! nothing: its bytes are PROTOCOL.md's.
//!
//! The knobs are public so that tests can build any combination; the named presets
//! ([`PRESETS`], [`Firmware::named`]) are plausible real firmware, and together they use
//! every value of every knob at least once.

mod french;
mod presets;
#[cfg(test)]
mod tests;
mod wire;

pub use presets::PRESETS;

use std::borrow::Cow;
use std::time::Duration;

use mcf_sfe::{LineBreaks, Status, StatusFlag};

use crate::config::{SlowReply, Timing, MAX_TIMING};
use crate::invoice::Refusal;

/// The status bytes a real DRC box sends when idle, whatever its state (docs/firmware.md §2).
/// No bit of the simulator's map is set in them (S0 = 0xC0 has bits 0..2 clear, S1 = 0x80).
pub const REAL_IDLE_STATUS: [u8; 6] = [0xC0, 0x80, 0xC0, 0x80, 0xC0, 0xD8];

/// How many fields C1h carries (its trailing fields are left out, never reordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum C1hLayout {
    /// 30 fields: MID .. curDate (PROTOCOL.md §5.1).
    #[default]
    Fields30,
    /// 27 fields: MID .. rateP, no currency block.
    Fields27,
    /// 11 fields: MID .. lastAmount, no rates, no currency block (all the DRC client needs).
    Fields11,
    /// 10 fields: MID .. lastFN (a Benin box).
    Fields10,
}

impl C1hLayout {
    /// The number of fields.
    pub fn fields(self) -> usize {
        match self {
            C1hLayout::Fields30 => 30,
            C1hLayout::Fields27 => 27,
            C1hLayout::Fields11 => 11,
            C1hLayout::Fields10 => 10,
        }
    }
}

/// How C1h's currency block (curCode, curRate, curDate) is written when C1h has 30 fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CurrencyBlock {
    /// `USD,rate,yyyyMMdd` once a USD rate was used (rate with at most 4 decimals, trailing
    /// zeros dropped), else 3 empty fields.
    #[default]
    Reference,
    /// `CDF,-1,` while no USD rate was used (the box of issue 16 sent `...,1.00,1.00,CDF,-1,`).
    CdfWhenNoRate,
    /// The last USD rate with exactly 2 decimals: `USD,2850.50,20261120`.
    UsdTwoDecimals,
}

/// How C1h writes the rate of a group that charges no VAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UntaxedRate {
    /// An empty field (PROTOCOL.md §5.1).
    #[default]
    Empty,
    /// `0.00`, as a real Benin box does.
    Zero,
}

/// The layout of the C2h reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum C2hLayout {
    /// 5 fields `EC,DC,DT,STA,ER`, DC = 0 and STA `CON` (PROTOCOL.md §5.2).
    #[default]
    Fields5,
    /// 4 fields `EC,DC,DT,STA`, DC = C1h's TC and STA `DIS`: what a DRC client says a healthy
    /// idle box sends.
    Fields4Idle,
}

/// The form of the 2Bh reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaxpayerReply {
    /// `key,value` (PROTOCOL.md §5.3).
    #[default]
    KeyValue,
    /// The value alone.
    ValueOnly,
}

/// What 33h sends in MCUR (field 34).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mcur {
    /// The USD total when C0h had a USD rate, else empty (PROTOCOL.md §5.8).
    #[default]
    Reference,
    /// Always empty.
    Empty,
    /// Always `0.00`.
    Zero,
    /// Always a value: the USD total, or MV itself for an invoice without a USD rate.
    Always,
}

/// The form of a 38h certification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CertificationForm {
    /// `R:` + 8 fields (PROTOCOL.md §5.10).
    #[default]
    Prefixed,
    /// `R :` + 8 fields.
    SpacedPrefix,
    /// 8 fields without a prefix.
    Bare,
    /// 7 fields without a prefix and without FN (legacy firmware).
    BareWithoutFn,
}

/// How the box refuses a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RefusalForm {
    /// `E:` + the English text (PROTOCOL.md §7).
    #[default]
    English,
    /// `E:` + a French text, UTF-8.
    French,
    /// `E:` + a French text in Windows-1252 (`É` is the single byte 0xC9).
    FrenchWindows1252,
    /// An empty DATA with status bit S0.1 set: no text at all (a Benin-family document).
    StatusBit,
}

/// Which status bytes the box sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusBytes {
    /// The simulator's map (PROTOCOL.md §9).
    #[default]
    Simulator,
    /// Always [`REAL_IDLE_STATUS`], whatever the state (plus S0.1 on a refusal when refusals
    /// are [`RefusalForm::StatusBit`], or the refusal could not be told at all).
    RealIdle,
}

/// How often the box sends SYN while it works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SynPace {
    /// Every [`crate::link::LinkConfig::syn_interval`] (60 ms by default; PROTOCOL.md §10).
    #[default]
    Configured,
    /// Every this long (at least 1 ms is used).
    Every(Duration),
    /// Never: the box works in silence.
    Never,
}

/// A credit note's long 38h, when the profile sets it (it then wins over the device's
/// [`Timing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditNote {
    /// SYN, silence, or `P:` replies.
    pub reply: SlowReply,
    /// How long the DGI check takes.
    pub duration: Duration,
}

/// Ordinary commands the box takes long over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowCommands {
    /// The command bytes concerned (e.g. C0h, 33h, 35h).
    pub commands: Vec<u8>,
    /// How long each of them takes at least.
    pub duration: Duration,
    /// The box sends no SYN meanwhile (else SYN at the profile's [`SynPace`]).
    pub silent: bool,
}

/// How one firmware talks. [`Firmware::default`] is [`Firmware::reference`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firmware {
    /// The preset this profile started from (for logs), `custom` for none.
    pub name: &'static str,
    /// C1h field count.
    pub c1h_layout: C1hLayout,
    /// C1h currency block.
    pub currency: CurrencyBlock,
    /// C1h rate of a group without VAT.
    pub untaxed_rate: UntaxedRate,
    /// C2h layout.
    pub c2h_layout: C2hLayout,
    /// 2Bh form.
    pub taxpayer: TaxpayerReply,
    /// 33h MCUR.
    pub mcur: Mcur,
    /// 38h certification form.
    pub certification: CertificationForm,
    /// Credit note 38h mode and duration; `None` keeps the device's [`Timing`].
    pub credit_note: Option<CreditNote>,
    /// Ordinary commands that take long.
    pub slow_commands: Option<SlowCommands>,
    /// SYN while working.
    pub syn: SynPace,
    /// A repeated SEQ + CMD gets the last reply again (off: the frame is executed again, as
    /// on some real boxes).
    pub seq_replay: bool,
    /// Refusal form and language.
    pub refusals: RefusalForm,
    /// Status bytes.
    pub status: StatusBytes,
    /// CR/LF escapes, in both directions.
    pub line_breaks: LineBreaks,
}

impl Default for Firmware {
    fn default() -> Self {
        Firmware::reference()
    }
}

/// Language of the refusal texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    English,
    French,
}

/// A text the box may refuse with: a state-machine [`Refusal`], or one of the engine's and
/// the link's own.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    /// A refusal of the invoice state machine.
    Refusal(&'a Refusal),
    /// DATA that does not parse; the parser's message.
    Syntax(&'a str),
    /// A CMD the box does not know.
    UnknownCommand(u8),
    /// An injected fault refused the command without executing it.
    FaultInjected,
    /// The reply did not fit a frame.
    ReplyTooLong,
    /// The reply could not be encoded; why.
    CannotSend(&'a str),
    /// The fiscal memory could not be written; why.
    MemoryWriteFailed(&'a str),
}

impl Firmware {
    /// This profile with every duration it sets (credit note, slow commands, SYN interval)
    /// multiplied by `percent` / 100: tests keep a profile's shape and spend less time.
    pub fn scale_time(mut self, percent: u32) -> Firmware {
        let scale = |d: Duration| d.saturating_mul(percent) / 100;
        if let Some(credit) = &mut self.credit_note {
            credit.duration = scale(credit.duration);
        }
        if let Some(slow) = &mut self.slow_commands {
            slow.duration = scale(slow.duration);
        }
        if let SynPace::Every(interval) = &mut self.syn {
            *interval = scale(*interval);
        }
        self
    }

    /// `timing` with this profile's credit note, when it sets one.
    pub fn timing(&self, timing: Timing) -> Timing {
        match self.credit_note {
            Some(credit) => Timing {
                credit_note: credit.duration,
                credit_note_reply: credit.reply,
                ..timing
            },
            None => timing,
        }
    }

    /// Checks that the profile's durations are within the simulator's limits.
    pub fn validate(&self) -> Result<(), String> {
        let durations = [
            self.credit_note.map(|c| c.duration),
            self.slow_commands.as_ref().map(|s| s.duration),
            match self.syn {
                SynPace::Every(interval) => Some(interval),
                SynPace::Configured | SynPace::Never => None,
            },
        ];
        if durations.into_iter().flatten().any(|d| d > MAX_TIMING) {
            return Err(format!(
                "firmware {}: a duration is longer than {} s",
                self.name,
                MAX_TIMING.as_secs()
            ));
        }
        Ok(())
    }

    /// The SYN interval while working, given the link's configured one; `None`: no SYN.
    pub fn syn_interval(&self, configured: Duration) -> Option<Duration> {
        match self.syn {
            SynPace::Configured => Some(configured),
            SynPace::Every(interval) => Some(interval),
            SynPace::Never => None,
        }
    }

    /// How long command `cmd` works and whether silently, given the engine's figures.
    pub fn pace(&self, cmd: u8, processing: Duration, silent: bool) -> (Duration, bool) {
        match &self.slow_commands {
            Some(slow) if slow.commands.contains(&cmd) => {
                (processing.max(slow.duration), silent || slow.silent)
            }
            _ => (processing, silent),
        }
    }

    /// The status bytes on the wire for the simulator's `status`; `refused`: the reply is a
    /// refusal.
    pub fn status(&self, status: Status, refused: bool) -> Status {
        let mut out = match self.status {
            StatusBytes::Simulator => status,
            StatusBytes::RealIdle => Status(REAL_IDLE_STATUS),
        };
        // Without a text, the bit is the only sign of a refusal: never hide it.
        if refused && self.refusals == RefusalForm::StatusBit {
            out.set(StatusFlag::CommandRefused, true);
        }
        out
    }

    /// `text` in the profile's language (before escaping and encoding).
    pub fn text(&self, text: Text<'_>) -> String {
        match self.language() {
            Language::English => english(text),
            Language::French => french::text(text),
        }
    }

    fn language(&self) -> Language {
        match self.refusals {
            RefusalForm::French | RefusalForm::FrenchWindows1252 => Language::French,
            // A status-bit refusal sends no text: the English one goes to the log only.
            RefusalForm::English | RefusalForm::StatusBit => Language::English,
        }
    }

    /// Incoming DATA as PROTOCOL.md writes it: with swapped escapes, `^xd;` (LF to this box)
    /// and `^xa;` (CR) are exchanged before the command is parsed. The swap is its own
    /// inverse, so the outgoing rewrite serves both directions.
    pub fn incoming<'a>(&self, data: &'a [u8]) -> Cow<'a, [u8]> {
        self.line_breaks.outgoing(data)
    }

    /// The DATA this box sends for the reference reply `data` to `cmd` (`refused`: it is an
    /// `E:` refusal; `tc`: the fiscal memory's total counter). See `firmware/wire.rs`.
    pub fn reply_data(&self, cmd: u8, data: Vec<u8>, refused: bool, tc: u64) -> Vec<u8> {
        wire::reply_data(self, cmd, data, refused, tc)
    }
}

/// The English texts: exactly those PROTOCOL.md §7 lists (the reference bytes).
fn english(text: Text<'_>) -> String {
    match text {
        Text::Refusal(refusal) => refusal.to_string(),
        Text::Syntax(message) => format!("syntax: {message}"),
        Text::UnknownCommand(code) => format!("unknown command 0x{code:02X}"),
        Text::FaultInjected => "fault injected: command not executed".to_owned(),
        Text::ReplyTooLong => "reply too long".to_owned(),
        Text::CannotSend(why) => format!("reply cannot be sent: {why}"),
        Text::MemoryWriteFailed(why) => format!("fiscal memory write failed: {why}"),
    }
}
