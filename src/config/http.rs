//! The `[http]` table: what the HTTP server allows a client, beyond the older top-level keys
//! (`max_connections`, `request_timeout_secs`, `header_read_timeout_secs`, `body_limit_bytes`,
//! which stay where they are). Added in 1.3.0, every key optional, so older files read
//! unchanged (docs/configuration.md, "HTTP limits"). `trusted_proxies` (1.6.0): the reverse
//! proxies whose `X-Forwarded-Host`, `X-Forwarded-Proto` and `X-Forwarded-For` the dashboard
//! believes (their types are the dashboard's, `dashboard/proxies.rs`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::validate::{in_range, Unit};
use super::{Config, ConfigError, MAX_CONNECTIONS};
use crate::dashboard::{IpRange, TrustedProxies};
use crate::http_body::{BodyLimits, DRAIN_BEYOND_LIMIT};

/// `http.max_connections_per_peer` default.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 32;
/// `http.dashboard_max_requests` default.
pub const DEFAULT_DASHBOARD_MAX_REQUESTS: usize = 32;
/// `http.body_read_grace_secs` default.
pub const DEFAULT_BODY_READ_GRACE_SECS: u64 = 10;
/// `http.body_min_bytes_per_sec` default.
pub const DEFAULT_BODY_MIN_BYTES_PER_SEC: u64 = 1024;

/// `[http]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpLimits {
    /// Connections one peer address may hold at once (more: 503, code 127).
    pub max_connections_per_peer: usize,
    /// Dashboard requests in progress at once (more: the dashboard answers 503 at once), so
    /// that the dashboard cannot take the connections the API needs.
    pub dashboard_max_requests: usize,
    /// Time a request body may take before its rate counts.
    pub body_read_grace_secs: u64,
    /// Rate a request body must keep up after the grace time (else 408, code 126).
    pub body_min_bytes_per_sec: u64,
    /// `/metrics` shows each organization's quota use by name (`org` label); off by default,
    /// since `/metrics` needs no key.
    pub metrics_per_organization: bool,
    /// The reverse proxies (addresses, or CIDR ranges such as `10.0.0.0/8`) whose
    /// `X-Forwarded-Host`, `X-Forwarded-Proto` and `X-Forwarded-For` are believed: the
    /// dashboard's same-origin check, its cookies' `Secure` flag, and the client address its
    /// sign-in protections count by. From any other peer those headers are ignored. None by
    /// default.
    pub trusted_proxies: Vec<String>,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
            dashboard_max_requests: DEFAULT_DASHBOARD_MAX_REQUESTS,
            body_read_grace_secs: DEFAULT_BODY_READ_GRACE_SECS,
            body_min_bytes_per_sec: DEFAULT_BODY_MIN_BYTES_PER_SEC,
            metrics_per_organization: false,
            trusted_proxies: Vec::new(),
        }
    }
}

impl HttpLimits {
    /// Whether every key has its default (the table is then left out when written).
    pub fn is_default(&self) -> bool {
        *self == HttpLimits::default()
    }
}

impl Config {
    /// What a request body may be: `body_limit_bytes`, the grace time and the minimum rate.
    pub fn body_limits(&self) -> BodyLimits {
        BodyLimits {
            limit: self.body_limit_bytes,
            grace: Duration::from_secs(self.http.body_read_grace_secs),
            min_rate: self.http.body_min_bytes_per_sec,
            drain: self.body_limit_bytes.saturating_add(DRAIN_BEYOND_LIMIT),
        }
    }

    /// The proxies of `[http] trusted_proxies` (checked by `validate`: an entry that does not
    /// read is left out here).
    pub fn trusted_proxies(&self) -> TrustedProxies {
        TrustedProxies::new(
            self.http
                .trusted_proxies
                .iter()
                .filter_map(|text| IpRange::parse(text).ok())
                .collect(),
        )
    }

    /// The `[http]` keys' ranges.
    pub(super) fn validate_http(&self) -> Result<(), ConfigError> {
        let http = &self.http;
        let invalid = |key: &str, message| self.invalid(format!("http.{key}"), message);
        // Above `max_connections` they change nothing (that cap binds first): not an error.
        in_range(
            http.max_connections_per_peer,
            1,
            MAX_CONNECTIONS,
            Unit::None,
        )
        .map_err(|m| invalid("max_connections_per_peer", m))?;
        in_range(http.dashboard_max_requests, 1, MAX_CONNECTIONS, Unit::None)
            .map_err(|m| invalid("dashboard_max_requests", m))?;
        in_range(http.body_read_grace_secs, 1, 3_600, Unit::Seconds)
            .map_err(|m| invalid("body_read_grace_secs", m))?;
        in_range(
            http.body_min_bytes_per_sec,
            1,
            1 << 30,
            Unit::BytesPerSecond,
        )
        .map_err(|m| invalid("body_min_bytes_per_sec", m))?;
        for text in &http.trusted_proxies {
            IpRange::parse(text).map_err(|m| invalid("trusted_proxies", m))?;
        }
        Ok(())
    }
}
