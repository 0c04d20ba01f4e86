//! The named presets: plausible real firmware, each varying several of PROTOCOL.md's assumed
//! points. Together they use every value of every knob (checked by `firmware/tests.rs`), so a
//! host tested against all of them has met every difference docs/firmware.md lists.

use std::time::Duration;

use mcf_sfe::command::code;
use mcf_sfe::LineBreaks;

use super::{
    C1hLayout, C2hLayout, CertificationForm, CreditNote, CurrencyBlock, Firmware, Mcur,
    RefusalForm, SlowCommands, StatusBytes, SynPace, TaxpayerReply, UntaxedRate,
};
use crate::config::SlowReply;

/// The presets: name and one-line description (for `emcf-sim --help` and tests).
pub const PRESETS: [(&str, &str); 8] = [
    ("reference", "PROTOCOL.md as written (the default)"),
    (
        "cdf-currency",
        "the box of issue 16: C1h currency CDF,-1, and no-VAT groups as 0.00; MCUR 0.00; 38h `R :`; French refusals",
    ),
    (
        "usd-currency",
        "C1h USD rate with 2 decimals; MCUR always a value; credit notes answer P: for 2 s",
    ),
    (
        "c1h-27",
        "C1h of 27 fields (no currency); 38h 8 fields without prefix; MCUR always empty",
    ),
    (
        "c1h-11",
        "C1h of 11 fields; C2h of 4 fields; 38h 7 fields without prefix; refusals as empty DATA + status bit S0.1",
    ),
    (
        "c1h-10",
        "C1h of 10 fields; 2Bh value alone; C2h of 4 fields; 38h 7 fields without prefix",
    ),
    (
        "silent",
        "no SYN ever; C0h 33h 35h silent 1.5 s; credit note silent 25 s; no SEQ replay; swapped CR/LF escapes; French Windows-1252 refusals; real idle status bytes",
    ),
    (
        "slow-syn",
        "SYN every 700 ms; 33h takes 1.5 s; credit note 3 s with slow SYN; 38h `R :`",
    ),
];

impl Firmware {
    /// PROTOCOL.md as written: every knob at its reference value.
    pub fn reference() -> Firmware {
        Firmware {
            name: "reference",
            c1h_layout: C1hLayout::Fields30,
            currency: CurrencyBlock::Reference,
            untaxed_rate: UntaxedRate::Empty,
            c2h_layout: C2hLayout::Fields5,
            taxpayer: TaxpayerReply::KeyValue,
            mcur: Mcur::Reference,
            certification: CertificationForm::Prefixed,
            credit_note: None,
            slow_commands: None,
            syn: SynPace::Configured,
            seq_replay: true,
            refusals: RefusalForm::English,
            status: StatusBytes::Simulator,
            line_breaks: LineBreaks::Protocol,
        }
    }

    /// The preset called `name` (see [`PRESETS`]).
    pub fn named(name: &str) -> Option<Firmware> {
        let reference = Firmware::reference();
        let ms = Duration::from_millis;
        let firmware = match name {
            "reference" => reference,
            "cdf-currency" => Firmware {
                name: "cdf-currency",
                currency: CurrencyBlock::CdfWhenNoRate,
                untaxed_rate: UntaxedRate::Zero,
                mcur: Mcur::Zero,
                certification: CertificationForm::SpacedPrefix,
                refusals: RefusalForm::French,
                ..reference
            },
            "usd-currency" => Firmware {
                name: "usd-currency",
                currency: CurrencyBlock::UsdTwoDecimals,
                mcur: Mcur::Always,
                credit_note: Some(CreditNote {
                    reply: SlowReply::Pending,
                    duration: ms(2_000),
                }),
                ..reference
            },
            "c1h-27" => Firmware {
                name: "c1h-27",
                c1h_layout: C1hLayout::Fields27,
                certification: CertificationForm::Bare,
                mcur: Mcur::Empty,
                ..reference
            },
            "c1h-11" => Firmware {
                name: "c1h-11",
                c1h_layout: C1hLayout::Fields11,
                c2h_layout: C2hLayout::Fields4Idle,
                certification: CertificationForm::BareWithoutFn,
                refusals: RefusalForm::StatusBit,
                ..reference
            },
            "c1h-10" => Firmware {
                name: "c1h-10",
                c1h_layout: C1hLayout::Fields10,
                taxpayer: TaxpayerReply::ValueOnly,
                c2h_layout: C2hLayout::Fields4Idle,
                certification: CertificationForm::BareWithoutFn,
                ..reference
            },
            "silent" => Firmware {
                name: "silent",
                syn: SynPace::Never,
                slow_commands: Some(SlowCommands {
                    commands: vec![code::OPEN_INVOICE, code::SUBTOTAL, code::PAYMENT],
                    duration: ms(1_500),
                    silent: true,
                }),
                credit_note: Some(CreditNote {
                    reply: SlowReply::Silent,
                    duration: ms(25_000),
                }),
                seq_replay: false,
                line_breaks: LineBreaks::Swapped,
                refusals: RefusalForm::FrenchWindows1252,
                status: StatusBytes::RealIdle,
                ..reference
            },
            "slow-syn" => Firmware {
                name: "slow-syn",
                syn: SynPace::Every(ms(700)),
                slow_commands: Some(SlowCommands {
                    commands: vec![code::SUBTOTAL],
                    duration: ms(1_500),
                    silent: false,
                }),
                credit_note: Some(CreditNote {
                    reply: SlowReply::Syn,
                    duration: ms(3_000),
                }),
                certification: CertificationForm::SpacedPrefix,
                ..reference
            },
            _ => return None,
        };
        Some(firmware)
    }

    /// Every preset, in [`PRESETS`] order.
    pub fn presets() -> Vec<Firmware> {
        PRESETS
            .iter()
            .filter_map(|(name, _)| Firmware::named(name))
            .collect()
    }
}
