//! The keys of a `[[devices]]` entry with `kind = "web_api"`: the DGI's e-MCF web API
//! (docs/configuration.md, "Certifying through the DGI web API"). All added in 1.2.0 and
//! optional, so older files read unchanged; their defaults are the channel's.

use std::time::Duration;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::validate::{in_range, Unit};
use super::DeviceEntry;
use crate::certify::{CdfCurrency, WebApiSettings};
use crate::i18n::Message;
use crate::msg;

/// What a `[[devices]]` entry is: its channel kind, named as in monitoring (`"box"`,
/// `"web_api"`). The spellings of 1.2.0 to 1.7.0 (`"serial"`, `"edef"`) are still read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeviceKind {
    /// An e-MCF box on a serial port (default).
    #[default]
    #[serde(rename = "box", alias = "serial")]
    Box,
    /// The DGI's e-MCF web API.
    #[serde(rename = "web_api", alias = "edef")]
    WebApi,
}

impl DeviceKind {
    /// Whether this is the default kind (left out when written).
    pub fn is_box(&self) -> bool {
        *self == DeviceKind::Box
    }

    /// The kind as the configuration file and monitoring write it.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Box => "box",
            DeviceKind::WebApi => "web_api",
        }
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

impl DeviceEntry {
    /// Whether any web API key is set (they belong to `kind = "web_api"` entries only).
    pub fn has_web_api_keys(&self) -> bool {
        self.url.is_some()
            || self.token_file.is_some()
            || self.ca_file.is_some()
            || self.connect_timeout_ms.is_some()
            || self.request_timeout_ms.is_some()
            || self.pending_limit.is_some()
            || self.hold_secs.is_some()
            || self.action_case.is_some()
            || self.cdf_currency_block.is_some()
            || self.status_interval_secs.is_some()
            || self.sandbox_url.is_some()
            || self.sandbox_token_file.is_some()
            || self.anonymous_client.is_some()
    }

    /// The CDF currency block; `Err` says what is wrong.
    pub fn cdf_currency(&self) -> Result<CdfCurrency, Message> {
        let refused = |value: &str| msg!("config-cdf-currency", value = value);
        match self.cdf_currency_block.as_deref().map(str::trim) {
            None | Some("omit") => Ok(CdfCurrency::Omit),
            Some(text @ ("1" | "0" | "-1")) => text
                .parse::<Decimal>()
                .map(CdfCurrency::Rate)
                .map_err(|_| refused(text)),
            Some(other) => Err(refused(other)),
        }
    }

    /// The web API channel's settings of this (validated) `web_api` entry.
    pub fn web_api_settings(&self) -> WebApiSettings {
        let mut settings = WebApiSettings::new(
            self.name.as_str(),
            self.url.as_deref().unwrap_or_default().trim().to_owned(),
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
        settings.queue_capacity = self.queue_capacity;
        settings.anonymous_client = self.anonymous_client.as_deref().map(str::trim) == Some("pp");
        settings
    }

    /// The settings of the channel `mcf_test_` keys use, named `name`, when `sandbox_url` is
    /// set: this entry's, at the sandbox URL with the sandbox token.
    pub fn sandbox_web_api_settings(&self, name: &str) -> Option<WebApiSettings> {
        let url = self.sandbox_url.clone()?;
        let mut settings = self.web_api_settings();
        settings.name = name.to_owned();
        settings.url = url.trim().trim_end_matches('/').to_owned();
        settings.token_file = self.sandbox_token_file.clone().unwrap_or_default();
        Some(settings)
    }

    /// Checks the keys of a `web_api` entry; `Err((key, message))`.
    pub fn validate_web_api_keys(&self) -> Result<(), (&'static str, Message)> {
        let url = self.url.as_deref().unwrap_or("").trim();
        if url.is_empty() {
            return Err(("url", msg!("config-url-missing")));
        }
        check_base_url(url).map_err(|m| ("url", m))?;
        if let Some(sandbox) = &self.sandbox_url {
            check_base_url(sandbox.trim()).map_err(|m| ("sandbox_url", m))?;
            if self
                .sandbox_token_file
                .as_ref()
                .is_none_or(|p| p.as_os_str().is_empty())
            {
                return Err(("sandbox_token_file", msg!("config-sandbox-token-missing")));
            }
        } else if self.sandbox_token_file.is_some() {
            return Err(("sandbox_token_file", msg!("config-sandbox-token-alone")));
        }
        if self
            .token_file
            .as_ref()
            .is_none_or(|p| p.as_os_str().is_empty())
        {
            return Err(("token_file", msg!("config-token-missing")));
        }
        let ranges: [(&'static str, Option<u64>, u64, u64); 4] = [
            ("connect_timeout_ms", self.connect_timeout_ms, 100, 60_000),
            ("request_timeout_ms", self.request_timeout_ms, 500, 120_000),
            ("hold_secs", self.hold_secs, 5, 110),
            ("status_interval_secs", self.status_interval_secs, 1, 3600),
        ];
        for (key, value, low, high) in ranges {
            if let Some(value) = value {
                in_range(value, low, high, Unit::None).map_err(|m| (key, m))?;
            }
        }
        if let Some(limit) = self.pending_limit {
            if !(1..=100).contains(&limit) {
                return Err((
                    "pending_limit",
                    msg!("config-pending-limit", value = limit.to_string()),
                ));
            }
        }
        self.cdf_currency().map_err(|m| ("cdf_currency_block", m))?;
        if let Some(choice) = self.anonymous_client.as_deref().map(str::trim) {
            if !matches!(choice, "omit" | "pp") {
                return Err((
                    "anonymous_client",
                    msg!("config-anonymous-client", value = choice),
                ));
            }
        }
        Ok(())
    }
}

/// An API base: `http(s)://host[/path]`, no query.
fn check_base_url(url: &str) -> Result<(), Message> {
    let uri: hyper::Uri = url.parse().map_err(|e: hyper::http::uri::InvalidUri| {
        msg!("config-url-not-url", value = url, detail = e.to_string())
    })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(msg!("config-url-scheme", value = url));
    }
    if uri.query().is_some() {
        return Err(msg!("config-url-query", value = url));
    }
    Ok(())
}
