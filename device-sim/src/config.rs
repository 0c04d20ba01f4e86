//! What a simulated device is: its identity, taxpayer fields, VAT rates, signing key,
//! timing and fiscal memory file.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use mcf_sfe::command::code;
use mcf_sfe::reply::TaxpayerValue;
use mcf_sfe::types::{TaxGroup, TaxpayerKey};
use mcf_sfe::Reply;
use rust_decimal::Decimal;

use crate::error::SimError;

/// Longest NIM or NIF the simulator accepts, so that every reply carrying them fits a frame.
pub const MAX_IDENTITY_LEN: usize = 20;

/// Longest processing time the simulator accepts for any command.
pub const MAX_TIMING: Duration = Duration::from_secs(3600);

/// The VAT rate in percent of each group A..P; `None` for a group that charges no VAT.
pub type Rates = [Option<Decimal>; TaxGroup::COUNT];

/// The configuration of one simulated device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceConfig {
    /// Machine id (NIM). A fiscal memory file that already exists keeps its own.
    pub nim: String,
    /// NIF of the taxpayer the device is personalized for. An existing fiscal memory file
    /// keeps its own.
    pub nif: String,
    /// The 2Bh values of I0..I4 then D0..D2 (name, address, phone, e-mail, RCCM, two header
    /// lines, footer).
    pub taxpayer: [String; 8],
    /// VAT rate in percent per group A..P, at most 2 decimals; `None` = not charged.
    pub rates: Rates,
    /// Secret mixed into every signature (codeDEFDGI).
    pub signing_key: String,
    /// How long commands take.
    pub timing: Timing,
    /// The fiscal memory file; `None` keeps the fiscal memory in memory only.
    pub state_file: Option<PathBuf>,
    /// How many invoices the fiscal memory holds; nearly full from 95 %.
    pub memory_capacity: u64,
}

/// How long the device works on a command before it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Processing time of every command.
    pub command: Duration,
    /// 38h of a sales invoice (FV, FT, EV, ET).
    pub finalize: Duration,
    /// 38h of a credit note (FA, EA): the real box checks the original with the DGI.
    pub credit_note: Duration,
    /// How a credit note's long 38h behaves.
    pub credit_note_reply: SlowReply,
}

/// How the device behaves during a credit note's long 38h.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlowReply {
    /// Works for the whole time, sending SYN every 60 ms (link behaviour).
    #[default]
    Syn,
    /// Works for the whole time and sends nothing (link behaviour).
    Silent,
    /// Answers `P:` at once; the host asks again until the check is over.
    Pending,
}

impl SlowReply {
    /// The name used on the command line: `syn`, `silent` or `pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            SlowReply::Syn => "syn",
            SlowReply::Silent => "silent",
            SlowReply::Pending => "pending",
        }
    }
}

impl fmt::Display for SlowReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SlowReply {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "syn" => Ok(SlowReply::Syn),
            "silent" => Ok(SlowReply::Silent),
            "pending" => Ok(SlowReply::Pending),
            other => Err(format!(
                "{other:?} is not a slow reply mode (syn, silent, pending)"
            )),
        }
    }
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            command: Duration::from_millis(20),
            finalize: Duration::from_millis(300),
            credit_note: Duration::from_secs(2),
            credit_note_reply: SlowReply::Syn,
        }
    }
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            nim: "SIM0000001".to_owned(),
            nif: "A1234567B".to_owned(),
            taxpayer: [
                "SIMULATEUR e-MCF SARL".to_owned(),
                "12 avenue du Commerce, Gombe, Kinshasa".to_owned(),
                "+243 810 000 000".to_owned(),
                "contact@simulateur.example".to_owned(),
                "CD/KIN/RCCM/24-B-00001".to_owned(),
                "SIMULATEUR e-MCF - boutique de demonstration".to_owned(),
                "Kinshasa, Republique Democratique du Congo".to_owned(),
                "Merci de votre visite".to_owned(),
            ],
            rates: mcf_sfe::types::dgi_rates(),
            signing_key: "emcf-sim-demo-key".to_owned(),
            timing: Timing::default(),
            state_file: None,
            memory_capacity: 1_000_000,
        }
    }
}

impl DeviceConfig {
    /// The configured rate of `group`, `None` when it charges no VAT.
    pub fn rate(&self, group: TaxGroup) -> Option<Decimal> {
        self.rates[group.index()]
    }

    /// The 2Bh value of `key`.
    pub fn taxpayer_value(&self, key: TaxpayerKey) -> &str {
        TaxpayerKey::ALL
            .iter()
            .position(|&k| k == key)
            .and_then(|index| self.taxpayer.get(index))
            .map_or("", String::as_str)
    }

    /// Checks that every reply built from this configuration can be sent.
    pub fn validate(&self) -> Result<(), SimError> {
        check_identity("nim", &self.nim).map_err(config_error)?;
        check_identity("nif", &self.nif).map_err(config_error)?;
        for &key in TaxpayerKey::ALL {
            let reply = Reply::TaxpayerField(TaxpayerValue {
                key: Some(key),
                value: self.taxpayer_value(key).to_owned(),
            });
            reply
                .encode(code::TAXPAYER_FIELD)
                .map_err(|e| config_error(format!("taxpayer field {key}: {e}")))?;
        }
        for group in TaxGroup::all() {
            if let Some(rate) = self.rate(group) {
                let two_places = rate.round_dp(2) == rate;
                if rate.is_sign_negative() || rate >= Decimal::ONE_HUNDRED || !two_places {
                    return Err(config_error(format!(
                        "rate of group {group}: {rate} is not a percentage in [0, 100) with at most 2 decimals"
                    )));
                }
            }
        }
        if self.signing_key.is_empty() {
            return Err(config_error("the signing key is empty".to_owned()));
        }
        if self.memory_capacity == 0 {
            return Err(config_error("the memory capacity is 0".to_owned()));
        }
        let t = &self.timing;
        if [t.command, t.finalize, t.credit_note]
            .iter()
            .any(|&d| d > MAX_TIMING)
        {
            return Err(config_error(format!(
                "a processing time is longer than {} s",
                MAX_TIMING.as_secs()
            )));
        }
        Ok(())
    }
}

fn config_error(reason: String) -> SimError {
    SimError::Config { reason }
}

/// Checks a NIM or NIF: 1 to [`MAX_IDENTITY_LEN`] printable ASCII characters, none of which
/// needs an escape on the wire, and no `:` (a C1h reply starting with a NIM `E:...` would read
/// as a refusal).
pub(crate) fn check_identity(field: &str, value: &str) -> Result<(), String> {
    // Bytes, not characters: the replies that carry them are counted in bytes.
    if value.is_empty() || value.len() > MAX_IDENTITY_LEN {
        return Err(format!(
            "{field} {value:?} must have 1 to {MAX_IDENTITY_LEN} characters"
        ));
    }
    if let Some(c) = value
        .chars()
        .find(|&c| !c.is_ascii_graphic() || mcf_sfe::fields::is_escaped(c) || c == ':')
    {
        return Err(format!("{field} {value:?}: character {c:?} is not allowed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn group(letter: char) -> TaxGroup {
        TaxGroup::from_letter(letter).unwrap()
    }

    #[test]
    fn defaults_follow_the_seed_rate_table() {
        let config = DeviceConfig::default();
        assert_eq!(config.rate(group('B')), Some(dec!(16)));
        assert_eq!(config.rate(group('F')), Some(dec!(16)));
        assert_eq!(config.rate(group('C')), Some(dec!(5)));
        assert_eq!(config.rate(group('G')), Some(dec!(5)));
        assert_eq!(config.rate(group('O')), Some(dec!(1)));
        assert_eq!(config.rate(group('P')), Some(dec!(1)));
        assert_eq!(config.rate(group('E')), Some(dec!(0)));
        assert_eq!(config.rate(group('A')), None);
        assert_eq!(config.rates.iter().flatten().count(), 7);
        assert_eq!(config.nim, "SIM0000001");
        assert_eq!(config.timing.credit_note_reply, SlowReply::Syn);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn taxpayer_values_follow_the_key_order() {
        let config = DeviceConfig::default();
        assert_eq!(
            config.taxpayer_value(TaxpayerKey::I0),
            "SIMULATEUR e-MCF SARL"
        );
        assert_eq!(
            config.taxpayer_value(TaxpayerKey::D2),
            "Merci de votre visite"
        );
    }

    #[test]
    fn unusable_configurations_are_refused() {
        let mut config = DeviceConfig::default();
        config.rates[1] = Some(dec!(16.125));
        assert!(matches!(config.validate(), Err(SimError::Config { .. })));

        for nim in [
            "SIM,1",
            "E:SIM",
            "SIM 1",
            "\u{1F600}",
            "S\u{e9}M",
            &"S".repeat(21),
        ] {
            let config = DeviceConfig {
                nim: nim.to_owned(),
                ..DeviceConfig::default()
            };
            assert!(config.validate().is_err(), "{nim:?} accepted");
        }
        let config = DeviceConfig {
            nim: "S".repeat(20),
            ..DeviceConfig::default()
        };
        assert!(config.validate().is_ok());

        let mut config = DeviceConfig::default();
        config.taxpayer[0] = "X".repeat(300);
        assert!(config.validate().is_err());

        let config = DeviceConfig {
            memory_capacity: 0,
            ..DeviceConfig::default()
        };
        assert!(config.validate().is_err());
    }

    #[test]
    fn slow_reply_modes_parse_from_their_names() {
        for mode in [SlowReply::Syn, SlowReply::Silent, SlowReply::Pending] {
            assert_eq!(mode.as_str().parse::<SlowReply>(), Ok(mode));
        }
        assert!("SYN".parse::<SlowReply>().is_err());
    }
}
