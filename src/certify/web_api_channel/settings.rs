//! What a `[[devices]]` entry of `kind = "web_api"` says (docs/configuration.md): where the API
//! is, where the token is, timeouts, the pending window, and the choices docs/web-api.md leaves
//! open, each with its documented default.

use std::path::PathBuf;
use std::time::Duration;

use edef::paths::ActionCase;
use rust_decimal::Decimal;

use super::token::GivenToken;

/// Connect timeout by default (integrators' experience: 5 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Request timeout by default (integrators' experience: 15 s).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Pending requests per e-MCF by default (the API's limit).
pub const DEFAULT_PENDING_LIMIT: usize = 10;
/// Longest a request may stay pending before it is confirmed or cancelled, by default (the
/// API expires it after about 2 minutes).
pub const DEFAULT_HOLD: Duration = Duration::from_secs(60);
/// Between two status calls while idle, by default.
pub const DEFAULT_STATUS_INTERVAL: Duration = Duration::from_secs(60);
/// Between two reads of the VAT rates, by default.
pub const DEFAULT_RATES_INTERVAL: Duration = Duration::from_secs(3600);

/// The currency block of a CDF invoice (the sources disagree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CdfCurrency {
    /// Left out (default).
    #[default]
    Omit,
    /// `curCode` `CDF` with this `curRate` (1, 0 or -1 in the sources).
    Rate(Decimal),
}

/// One web API channel's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebApiSettings {
    /// The entry's name (organizations' `device`).
    pub name: String,
    /// The API base, `http(s)://host[:port][/prefix]`, without a trailing `/`.
    pub url: String,
    /// The file holding the token (JWT) of this e-MCF; re-read when it changes.
    pub token_file: PathBuf,
    /// The token itself, when it is not in a file: a device kept in the store (issue 29),
    /// its token opened from its sealed form. `token_file` is unused then.
    pub token: Option<GivenToken>,
    /// PEM certificates to trust instead of the public roots (a test base, the simulator).
    pub ca_file: Option<PathBuf>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Timeout of one call, answer body included.
    pub request_timeout: Duration,
    /// Requests pending on the DGI at once.
    pub pending_limit: usize,
    /// Invoices that may wait for a place in the window; more are refused with 503.
    pub queue_capacity: usize,
    /// Longest a request stays pending before it is confirmed or cancelled.
    pub hold: Duration,
    /// The case of `confirm`/`cancel`.
    pub action_case: ActionCase,
    /// The currency block of CDF invoices.
    pub cdf_currency: CdfCurrency,
    /// Between two status calls while idle.
    pub status_interval: Duration,
    /// Between two reads of the VAT rates.
    pub rates_interval: Duration,
    /// An invoice without a client is sent with an anonymous natural person (`"type": "PP"`)
    /// instead of no `client` (for a DGI that requires the block).
    pub anonymous_client: bool,
}

impl WebApiSettings {
    /// Settings for `url` and `token_file`, every other choice at its default.
    pub fn new(name: impl Into<String>, url: impl Into<String>, token_file: PathBuf) -> Self {
        WebApiSettings {
            name: name.into(),
            url: url.into().trim_end_matches('/').to_owned(),
            token_file,
            token: None,
            ca_file: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            pending_limit: DEFAULT_PENDING_LIMIT,
            queue_capacity: 64,
            hold: DEFAULT_HOLD,
            action_case: ActionCase::Lower,
            cdf_currency: CdfCurrency::Omit,
            status_interval: DEFAULT_STATUS_INTERVAL,
            rates_interval: DEFAULT_RATES_INTERVAL,
            anonymous_client: false,
        }
    }
}
