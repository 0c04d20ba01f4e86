//! The `[alerts]` and `[smtp]` tables (1.5.0): when the gateway warns, and how it e-mails the
//! organizations' administrators; and the top-level `public_url` (1.6.0) their e-mails link to.
//! Every key optional, so older files read unchanged; without `[smtp]` no e-mail is attempted
//! (docs/configuration.md, "Alerts").

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::validate::{in_range, Unit};
use super::{Config, ConfigError};
use crate::i18n::Message;
use crate::msg;

/// `alerts.channel_down_minutes` default.
pub const DEFAULT_CHANNEL_DOWN_MINUTES: u64 = 15;
/// `alerts.dgi_contact_days` default.
pub const DEFAULT_DGI_CONTACT_DAYS: u64 = 3;
/// `alerts.quota_thresholds` default, in percent of the annual quota.
pub const DEFAULT_QUOTA_THRESHOLDS: [u8; 3] = [80, 90, 100];
/// `smtp.port` default (submission, STARTTLS; also with `tls = "none"`).
pub const DEFAULT_SMTP_PORT: u16 = 587;
/// `smtp.port` default with `tls = "tls"` (submissions, TLS from the first byte).
pub const DEFAULT_SMTPS_PORT: u16 = 465;

/// `[alerts]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AlertSettings {
    /// A configured channel that does not answer for this long raises `channel_down`.
    pub channel_down_minutes: u64,
    /// A box whose last contact with the DGI (C2h) is older than this raises
    /// `dgi_contact_old`.
    pub dgi_contact_days: u64,
    /// Quota use, in percent of the annual quota, at which an organization is warned.
    pub quota_thresholds: Vec<u8>,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            channel_down_minutes: DEFAULT_CHANNEL_DOWN_MINUTES,
            dgi_contact_days: DEFAULT_DGI_CONTACT_DAYS,
            quota_thresholds: DEFAULT_QUOTA_THRESHOLDS.to_vec(),
        }
    }
}

impl AlertSettings {
    /// Whether every key has its default (the table is then left out when written).
    pub fn is_default(&self) -> bool {
        *self == AlertSettings::default()
    }

    /// `channel_down_minutes` as a duration.
    pub fn channel_down(&self) -> Duration {
        Duration::from_secs(self.channel_down_minutes.saturating_mul(60))
    }

    /// `dgi_contact_days` as a duration.
    pub fn dgi_contact(&self) -> Duration {
        Duration::from_secs(self.dgi_contact_days.saturating_mul(86_400))
    }
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SmtpTls {
    /// Plain connection upgraded with STARTTLS (required), usually port 587.
    #[default]
    Starttls,
    /// TLS from the first byte, usually port 465.
    Tls,
    /// No encryption: only for a relay on the same machine or a trusted LAN.
    None,
}

impl SmtpTls {
    /// The value as the configuration file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SmtpTls::Starttls => "starttls",
            SmtpTls::Tls => "tls",
            SmtpTls::None => "none",
        }
    }
}

/// `[smtp]`: the relay the alerts go through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpSettings {
    /// The relay's host name (checked against its certificate with TLS).
    pub host: String,
    /// Its port; see [`SmtpSettings::port`] for the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The sender, e.g. `"emcf-gateway <alertes@example.cd>"`.
    pub from: String,
    /// User name for SMTP authentication, if the relay asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// A file holding the password (its first line); never the password itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    /// `starttls` (default), `tls` or `none`.
    #[serde(default)]
    pub tls: SmtpTls,
}

impl SmtpSettings {
    /// The port: the configured one, else 465 with `tls = "tls"` and 587 otherwise.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(match self.tls {
            SmtpTls::Tls => DEFAULT_SMTPS_PORT,
            SmtpTls::Starttls | SmtpTls::None => DEFAULT_SMTP_PORT,
        })
    }
}

/// `public_url`: an http(s) URL naming a host (a path is kept: a gateway behind a proxy's
/// prefix), no credentials, no query, no fragment.
fn check_public_url(url: &str) -> Result<(), Message> {
    let form = || msg!("config-public-url-form", value = url);
    if url.is_empty() || url.contains(|c: char| c.is_whitespace() || c == '#') {
        return Err(form());
    }
    let uri: hyper::Uri = url.parse().map_err(|_| form())?;
    if uri.path().trim_end_matches('/').ends_with("/dashboard") {
        return Err(msg!("config-public-url-dashboard", value = url));
    }
    let web = matches!(uri.scheme_str(), Some("http" | "https"));
    let host = uri.authority().filter(|a| !a.host().is_empty());
    match host {
        Some(authority) if web && !authority.as_str().contains('@') && uri.query().is_none() => {
            Ok(())
        }
        _ => Err(form()),
    }
}

/// The dashboard's address under `public_url` (a trailing `/` or not).
pub fn dashboard_url(public_url: &str) -> String {
    format!("{}/dashboard/", public_url.trim_end_matches('/'))
}

impl Config {
    /// The `[alerts]` and `[smtp]` keys, and `public_url`.
    pub(super) fn validate_alerts(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.public_url {
            check_public_url(url).map_err(|m| self.invalid("public_url", m))?;
        }
        let alerts = &self.alerts;
        let invalid = |key: &str, message: Message| self.invalid(key, message);
        in_range(alerts.channel_down_minutes, 1, 10_080, Unit::Minutes)
            .map_err(|m| invalid("alerts.channel_down_minutes", m))?;
        in_range(alerts.dgi_contact_days, 1, 365, Unit::Days)
            .map_err(|m| invalid("alerts.dgi_contact_days", m))?;
        let mut seen = Vec::new();
        for threshold in &alerts.quota_thresholds {
            if !(1..=100).contains(threshold) || seen.contains(threshold) {
                return Err(invalid(
                    "alerts.quota_thresholds",
                    msg!("config-quota-thresholds"),
                ));
            }
            seen.push(*threshold);
        }
        let Some(smtp) = &self.smtp else {
            return Ok(());
        };
        if smtp.host.trim().is_empty() || smtp.host.contains(char::is_whitespace) {
            return Err(invalid("smtp.host", msg!("config-smtp-host")));
        }
        if smtp.port == Some(0) {
            return Err(invalid("smtp.port", msg!("config-smtp-port")));
        }
        if smtp.from.parse::<lettre::message::Mailbox>().is_err() {
            return Err(invalid("smtp.from", msg!("config-smtp-from")));
        }
        if smtp.username.is_some() != smtp.password_file.is_some() {
            return Err(invalid("smtp.username", msg!("config-smtp-username")));
        }
        Ok(())
    }
}
