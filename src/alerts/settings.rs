//! What the alerts are told by the configuration (`[alerts]`, `[smtp]`, docs/configuration.md,
//! "Alerts"): when to warn, and the relay to e-mail through. Read from the file by `config`,
//! which checks them (`Config::validate`); every key optional, so older files read unchanged.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

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

/// The dashboard's address under `public_url` (a trailing `/` or not).
pub fn dashboard_url(public_url: &str) -> String {
    format!("{}/dashboard/", public_url.trim_end_matches('/'))
}
