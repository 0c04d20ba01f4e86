//! The `[alerts]` and `[smtp]` tables (1.5.0): when the gateway warns, and how it e-mails the
//! organizations' administrators; and the top-level `public_url` (1.6.0) their e-mails link to.
//! Every key optional, so older files read unchanged; without `[smtp]` no e-mail is attempted
//! (docs/configuration.md, "Alerts"). The tables' types are the alerts' own
//! (`alerts/settings.rs`); here is what the file may say in them.

use super::validate::{in_range, Unit};
use super::{Config, ConfigError};
use crate::i18n::Message;
use crate::msg;

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
