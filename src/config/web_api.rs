//! The keys of a `[[devices]]` entry with `kind = "edef"`: the DGI's e-MCF web API
//! (docs/configuration.md, "Certifying through the DGI web API"). All added in 1.2.0 and
//! optional, so older files read unchanged; their defaults are the channel's.

use std::path::PathBuf;
use std::time::Duration;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::certify::{CdfCurrency, EdefSettings};

/// What a `[[devices]]` entry is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// An e-MCF box on a serial port (default).
    #[default]
    Serial,
    /// The DGI's e-MCF web API.
    Edef,
}

impl DeviceKind {
    /// Whether this is the default kind (left out when written).
    pub fn is_serial(&self) -> bool {
        *self == DeviceKind::Serial
    }
}

/// `action_case`: how `confirm`/`cancel` are written in the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionCaseSetting {
    /// `confirm`, `cancel` (default).
    Lower,
    /// `CONFIRM`, `CANCEL`.
    Upper,
}

/// The web API keys of an entry ([`DeviceEntry::web`](super::DeviceEntry::web)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebApiKeys {
    /// The API base, e.g. `https://edef.dgirdc.cd` (production) or
    /// `https://developper.dgirdc.cd/edef` (test).
    pub url: Option<String>,
    /// The file holding this e-MCF's token (readable by the service only).
    pub token_file: Option<PathBuf>,
    /// PEM certificates to trust instead of the public roots (a test base, a simulator).
    pub ca_file: Option<PathBuf>,
    /// Connect timeout, ms (default 5000).
    pub connect_timeout_ms: Option<u64>,
    /// Timeout of one call, answer included, ms (default 15000).
    pub request_timeout_ms: Option<u64>,
    /// Requests pending on the DGI at once (default 10, the API's limit).
    pub pending_limit: Option<usize>,
    /// Longest a request stays pending before it is confirmed or cancelled, s (default 60).
    pub hold_secs: Option<u64>,
    /// `lower` (default) or `upper`.
    pub action_case: Option<ActionCaseSetting>,
    /// The currency block of a CDF invoice: `"omit"` (default), or the `curRate` to send
    /// with `curCode = "CDF"`: `"1"`, `"0"` or `"-1"`.
    pub cdf_currency_block: Option<String>,
    /// Seconds between two status calls while idle (default 60).
    pub status_interval_secs: Option<u64>,
}

impl WebApiKeys {
    /// Whether any web API key is set.
    pub fn any(&self) -> bool {
        *self != WebApiKeys::default()
    }

    /// The CDF currency block; `Err` says what is wrong.
    pub fn cdf_currency(&self) -> Result<CdfCurrency, String> {
        match self.cdf_currency_block.as_deref().map(str::trim) {
            None | Some("omit") => Ok(CdfCurrency::Omit),
            Some(text @ ("1" | "0" | "-1")) => text
                .parse::<Decimal>()
                .map(CdfCurrency::Rate)
                .map_err(|e| e.to_string()),
            Some(other) => Err(format!(
                "{other:?} is not one of \"omit\" (the default), \"1\", \"0\" or \"-1\""
            )),
        }
    }

    /// The channel's settings for the entry `name` (validated), with `queue_capacity`.
    pub fn settings(&self, name: &str, queue_capacity: usize) -> EdefSettings {
        let mut settings = EdefSettings::new(
            name,
            self.url.clone().unwrap_or_default(),
            self.token_file.clone().unwrap_or_default(),
        );
        settings.ca_file.clone_from(&self.ca_file);
        if let Some(ms) = self.connect_timeout_ms {
            settings.connect_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.request_timeout_ms {
            settings.request_timeout = Duration::from_millis(ms);
        }
        if let Some(limit) = self.pending_limit {
            settings.pending_limit = limit;
        }
        if let Some(secs) = self.hold_secs {
            settings.hold = Duration::from_secs(secs);
        }
        if self.action_case == Some(ActionCaseSetting::Upper) {
            settings.action_case = edef::paths::ActionCase::Upper;
        }
        settings.cdf_currency = self.cdf_currency().unwrap_or_default();
        if let Some(secs) = self.status_interval_secs {
            settings.status_interval = Duration::from_secs(secs.max(1));
        }
        settings.queue_capacity = queue_capacity;
        settings
    }

    /// Checks the keys of an `edef` entry; `Err((key, message))`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let url = self.url.as_deref().unwrap_or("").trim();
        if url.is_empty() {
            return Err((
                "url",
                "is missing: give the API base, e.g. \"https://edef.dgirdc.cd\" (production) or \"https://developper.dgirdc.cd/edef\" (test)".into(),
            ));
        }
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| ("url", format!("{url:?} is not a URL: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(("url", format!("{url:?} must start with https:// (or http:// for a local simulator) and name a host")));
        }
        if uri.query().is_some() {
            return Err((
                "url",
                format!("{url:?}: give the base only, without a query"),
            ));
        }
        if self
            .token_file
            .as_ref()
            .is_none_or(|p| p.as_os_str().is_empty())
        {
            return Err(("token_file", "is missing: the file holding this e-MCF's token (JWT) from the DGI portal, readable by the service only".into()));
        }
        let ranges: [(&'static str, Option<u64>, u64, u64); 4] = [
            ("connect_timeout_ms", self.connect_timeout_ms, 100, 60_000),
            ("request_timeout_ms", self.request_timeout_ms, 500, 120_000),
            ("hold_secs", self.hold_secs, 5, 110),
            ("status_interval_secs", self.status_interval_secs, 1, 3600),
        ];
        for (key, value, low, high) in ranges {
            if let Some(value) = value {
                if !(low..=high).contains(&value) {
                    return Err((key, format!("({value}) must be between {low} and {high}")));
                }
            }
        }
        if let Some(limit) = self.pending_limit {
            if !(1..=100).contains(&limit) {
                return Err((
                    "pending_limit",
                    format!("({limit}) must be between 1 and 100 (the DGI allows 10)"),
                ));
            }
        }
        self.cdf_currency().map_err(|m| ("cdf_currency_block", m))?;
        Ok(())
    }
}
