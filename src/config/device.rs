//! One `[[devices]]` entry: a fiscal box on a serial port, its timing, and what it does where
//! boxes differ (docs/configuration.md, "[[devices]]"). Every key added after 1.0.0 is optional
//! with a default, so a 1.0.0 file reads unchanged.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcf_sfe::types::{dgi_rates, TaxGroup};
use mcf_sfe::{LineBreaks, SeqRange};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

pub use super::web_api::{ActionCaseSetting, DeviceKind};
use super::{DEFAULT_BAUD, DEFAULT_QUEUE_CAPACITY};
use crate::device::{DeviceConfig, LinkTiming, StatusMap, WireSettings, DEFAULT_HEALTH_INTERVAL};
use crate::i18n::Message;
use crate::msg;

/// `line_breaks`: which escape stands for CR and which for LF in texts sent to the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineBreaksSetting {
    /// CR as `^xa;`, LF as `^xd;`: what every public driver of real boxes writes (default).
    Swapped,
    /// CR as `^xd;`, LF as `^xa;`: PROTOCOL.md's reading of the character codes (the bundled
    /// simulator).
    Protocol,
}

/// `status_map`: how the 6 status bytes of a reply are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusMapSetting {
    /// PROTOCOL.md §9 (default).
    Simulator,
    /// Not read: a box whose bits mean something else.
    None,
}

/// One `[[devices]]` entry. The caller converts it to the device layer's configuration
/// ([`DeviceEntry::device_config`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceEntry {
    /// Name organizations refer to (ASCII letters, digits, `-`, `_`; unique, ignoring case).
    pub name: String,
    /// `box` (a box on a serial port, the default) or `web_api` (the DGI's web API). Added
    /// in 1.2.0 (then spelled `serial` and `edef`, still read).
    #[serde(default, skip_serializing_if = "DeviceKind::is_box")]
    pub kind: DeviceKind,
    /// Serial port, preferably `/dev/serial/by-id/...` (stable across replugs); `box` only.
    #[serde(default, skip_serializing_if = "path_is_empty")]
    pub path: PathBuf,
    /// `web_api`: the API base, e.g. `https://edef.dgirdc.cd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `web_api`: the file holding this e-MCF's token (readable by the service only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    /// `web_api`: PEM certificates to trust instead of the public roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// `web_api`: connect timeout, ms (default 5000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_ms: Option<u64>,
    /// `web_api`: timeout of one call, answer included, ms (default 15000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_ms: Option<u64>,
    /// `web_api`: requests pending on the DGI at once (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_limit: Option<usize>,
    /// `web_api`: longest a request stays pending before confirm or cancel, s (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_secs: Option<u64>,
    /// `web_api`: `lower` (default) or `upper` for `confirm`/`cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_case: Option<ActionCaseSetting>,
    /// `web_api`: the currency block of a CDF invoice: `"omit"` (default), `"1"`, `"0"`, `"-1"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf_currency_block: Option<String>,
    /// `web_api`: seconds between two status calls while idle (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_interval_secs: Option<u64>,
    /// `web_api`: where `mcf_test_` keys certify instead of the bundled web API simulator, e.g.
    /// the DGI's test base (with `sandbox_token_file`). Added in 1.2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_url: Option<String>,
    /// `web_api`: the token of the test e-MCF at `sandbox_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_token_file: Option<PathBuf>,
    /// `web_api`: what an invoice without a client sends: `"omit"` (no `client`, the default) or
    /// `"pp"` (an anonymous natural person). Added in 1.2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anonymous_client: Option<String>,
    /// Line speed (8N1).
    #[serde(default = "default_baud")]
    pub baud: u32,
    /// Invoices that may wait for this device; more are refused with 503.
    #[serde(default = "default_queue_capacity")]
    pub queue_capacity: usize,
    /// Silence after a transmission before it counts as unanswered, ms (default:
    /// [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
    /// Sends of one frame before giving up (default: [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<u32>,
    /// Budget of one ordinary command, ms (default: [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_budget_ms: Option<u64>,
    /// Budget of 38h for FV/FT/EV/ET, ms (default: [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalize_budget_ms: Option<u64>,
    /// Budget of 38h for FA/EA, ms (default: [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_note_budget_ms: Option<u64>,
    /// Interval between 38h repeats after `P:`, ms (default: [`LinkTiming::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// The SEQ values sent, `"20-FF"` (hex, first-last; default the whole range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_range: Option<String>,
    /// Escapes of CR and LF (default `swapped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_breaks: Option<LineBreaksSetting>,
    /// How status bytes are read (default `simulator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_map: Option<StatusMapSetting>,
    /// Whether the box replays its last reply to a repeated SEQ (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_replay: Option<bool>,
    /// Seconds between two reads of the box's state while idle (default 60; 0: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_interval_secs: Option<u64>,
    /// VAT rates by group letter, used only when the box's C1h carries none (default: the
    /// DGI's table, B and F 16, C and G 5, O and P 1, E 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<BTreeMap<String, String>>,
}

fn path_is_empty(path: &std::path::Path) -> bool {
    path.as_os_str().is_empty()
}

fn default_baud() -> u32 {
    DEFAULT_BAUD
}

fn default_queue_capacity() -> usize {
    DEFAULT_QUEUE_CAPACITY
}

impl DeviceEntry {
    /// An entry with the given name and port and every other key at its default.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        DeviceEntry {
            name: name.into(),
            kind: DeviceKind::Box,
            path: path.into(),
            url: None,
            token_file: None,
            ca_file: None,
            connect_timeout_ms: None,
            request_timeout_ms: None,
            pending_limit: None,
            hold_secs: None,
            action_case: None,
            cdf_currency_block: None,
            status_interval_secs: None,
            sandbox_url: None,
            sandbox_token_file: None,
            anonymous_client: None,
            baud: DEFAULT_BAUD,
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            window_ms: None,
            tries: None,
            command_budget_ms: None,
            finalize_budget_ms: None,
            credit_note_budget_ms: None,
            poll_interval_ms: None,
            seq_range: None,
            line_breaks: None,
            status_map: None,
            seq_replay: None,
            health_interval_secs: None,
            rates: None,
        }
    }

    /// The timing to use: each override, or the default.
    pub fn timing(&self) -> LinkTiming {
        let d = LinkTiming::default();
        let ms =
            |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
        LinkTiming {
            window: ms(self.window_ms, d.window),
            tries: self.tries.unwrap_or(d.tries),
            command_budget: ms(self.command_budget_ms, d.command_budget),
            finalize_budget: ms(self.finalize_budget_ms, d.finalize_budget),
            credit_note_budget: ms(self.credit_note_budget_ms, d.credit_note_budget),
            poll_interval: ms(self.poll_interval_ms, d.poll_interval),
            ..d
        }
    }

    /// The wire settings; `Err` names what is wrong (checked by `Config::validate`).
    pub fn wire(&self) -> Result<WireSettings, (&'static str, Message)> {
        let d = WireSettings::default();
        let seq = match &self.seq_range {
            Some(text) => parse_seq_range(text).map_err(|m| ("seq_range", m))?,
            None => d.seq,
        };
        Ok(WireSettings {
            seq,
            line_breaks: match self.line_breaks {
                Some(LineBreaksSetting::Swapped) => LineBreaks::Swapped,
                Some(LineBreaksSetting::Protocol) => LineBreaks::Protocol,
                None => d.line_breaks,
            },
            status_map: match self.status_map {
                Some(StatusMapSetting::Simulator) => StatusMap::Simulator,
                Some(StatusMapSetting::None) => StatusMap::Ignored,
                None => d.status_map,
            },
            seq_replay: self.seq_replay.unwrap_or(d.seq_replay),
        })
    }

    /// The rates used when the box's C1h has none; `Err` names what is wrong.
    pub fn fallback_rates(&self) -> Result<[Option<Decimal>; 16], (&'static str, Message)> {
        let Some(table) = &self.rates else {
            return Ok(dgi_rates());
        };
        let mut rates = [None; 16];
        for (letter, text) in table {
            let group = letter
                .chars()
                .next()
                .filter(|_| letter.len() == 1)
                .and_then(TaxGroup::from_letter)
                .ok_or_else(|| ("rates", msg!("config-rate-group", letter = letter)))?;
            let rate: Decimal = text.trim().parse().map_err(|_| {
                (
                    "rates",
                    msg!("config-rate-not-number", letter = letter, value = text),
                )
            })?;
            if rate.is_sign_negative() || rate >= Decimal::ONE_HUNDRED || rate.scale() > 2 {
                return Err((
                    "rates",
                    msg!("config-rate-range", letter = letter, value = text),
                ));
            }
            rates[group.index()] = Some(rate);
        }
        Ok(rates)
    }

    /// The health interval: `None` for 0.
    pub fn health_interval(&self) -> Option<Duration> {
        match self.health_interval_secs {
            Some(0) => None,
            Some(secs) => Some(Duration::from_secs(secs)),
            None => Some(DEFAULT_HEALTH_INTERVAL),
        }
    }

    /// The device layer's configuration of this (validated) entry.
    pub fn device_config(&self) -> DeviceConfig {
        DeviceConfig {
            name: self.name.clone(),
            path: self.path.clone(),
            baud: self.baud,
            timing: self.timing(),
            queue_capacity: self.queue_capacity,
            wire: self.wire().unwrap_or_default(),
            health_interval: self.health_interval(),
            fallback_rates: self.fallback_rates().unwrap_or_else(|_| dgi_rates()),
            capture: None,
        }
    }
}

/// `"20-FF"`: the first and last SEQ, hex, 20 to FF.
fn parse_seq_range(text: &str) -> Result<SeqRange, Message> {
    let bad = || msg!("config-seq-range-bad", value = text);
    let (first, last) = text.trim().split_once('-').ok_or_else(bad)?;
    let byte = |t: &str| {
        let t = t.trim();
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        u8::from_str_radix(t, 16).map_err(|_| bad())
    };
    SeqRange::new(byte(first)?, byte(last)?)
        .ok_or_else(|| msg!("config-seq-range-order", value = text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_ranges_are_hex_pairs() {
        assert_eq!(parse_seq_range("20-FF"), Ok(SeqRange::FULL));
        assert_eq!(
            parse_seq_range("0x20 - 0x7f"),
            SeqRange::new(0x20, 0x7F).ok_or(msg!("config-seq-range-bad", value = ""))
        );
        assert!(parse_seq_range("41").is_err());
        assert!(parse_seq_range("10-7F")
            .unwrap_err()
            .to_string()
            .contains("at least 20"));
        assert!(parse_seq_range("80-7F").is_err());
    }

    #[test]
    fn rates_are_read_by_letter() {
        let mut entry = DeviceEntry::new("shop", "/dev/ttyUSB0");
        assert_eq!(entry.fallback_rates(), Ok(dgi_rates()));
        entry.rates = Some([("B".to_string(), "16.00".to_string())].into());
        let rates = entry.fallback_rates().unwrap();
        assert_eq!(rates[1], Some(Decimal::new(1600, 2)));
        assert_eq!(rates[2], None);
        for (letter, rate) in [
            ("Q", "1"),
            ("B", "16%"),
            ("B", "-1"),
            ("B", "100"),
            ("B", "1.234"),
        ] {
            entry.rates = Some([(letter.to_string(), rate.to_string())].into());
            assert!(entry.fallback_rates().is_err(), "{letter} = {rate}");
        }
    }
}
