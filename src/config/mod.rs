//! Configuration: a TOML file, then environment variables, then command-line flags.
//!
//! Every key, default and variable is described for operators in `docs/configuration.md`.
//!
//! Typical use by the CLI:
//!
//! ```no_run
//! # use emcf_gateway::config::{Config, Overrides};
//! # fn main() -> Result<(), emcf_gateway::config::ConfigError> {
//! let flags = Overrides::default(); // from clap: --state-dir, --listen
//! let config = Config::resolve(None, emcf_gateway::config::env_vars(), &flags)?;
//! # let _ = config; Ok(()) }
//! ```
//!
//! which is [`Config::load`] (file), [`Config::apply_env`], [`Config::apply_overrides`] and
//! [`Config::validate`] in that order. Nothing here opens a device or a directory.
//!
//! The configuration is at the edge, with the CLI, and only the CLI names it
//! (`tests/layers.rs`): it turns the file into each layer's own settings
//! ([`DeviceEntry::device_config`], [`DeviceEntry::web_api_settings`], [`Config::body_limits`],
//! [`Config::trusted_proxies`], [`Config::store_settings`]; the `[alerts]` and `[smtp]`
//! tables are the alerts' types), so that no layer depends on the file's shape.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Datelike, FixedOffset, Offset, Utc};
use serde::{Deserialize, Serialize};

use crate::alerts::{AlertSettings, SmtpSettings};
use crate::device::LinkTiming;
use crate::i18n::{Lang, Message};
use crate::model::Plan;
use crate::msg;

pub use error::{ConfigError, ConfigKey};

/// The file read when neither a path nor `EMCF_CONFIG` is given, if it exists.
pub const DEFAULT_CONFIG_FILE: &str = "/etc/emcf-gateway/config.toml";
/// Environment variable naming the configuration file (used by [`Config::load`]).
pub const ENV_CONFIG: &str = "EMCF_CONFIG";
/// Environment variable overriding `state_dir`.
pub const ENV_STATE_DIR: &str = "EMCF_STATE_DIR";
/// Environment variable overriding `listen`.
pub const ENV_LISTEN: &str = "EMCF_LISTEN";
/// Environment variable overriding `language`.
pub const ENV_LANG: &str = "EMCF_LANG";
/// Set by systemd for units with `StateDirectory=`: the default `state_dir` when the file does
/// not set one.
pub const ENV_SYSTEMD_STATE_DIRECTORY: &str = "STATE_DIRECTORY";

/// `state_dir` when nothing sets it: relative to the working directory.
pub const DEFAULT_STATE_DIR: &str = "./emcf-state";
/// `listen` default: loopback only, so that a test install is not exposed on the LAN.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8080);
/// `timezone_offset` default in seconds east of UTC: +01:00, Kinshasa (West DRC, no DST).
pub const DEFAULT_TIMEZONE_OFFSET_SECS: i32 = 3600;
/// `max_connections` default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// `request_timeout_secs` default: above the 90 s credit-note budget.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
/// `header_read_timeout_secs` default.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
/// `body_limit_bytes` default: 256 KiB.
pub const DEFAULT_BODY_LIMIT_BYTES: usize = 256 * 1024;
/// `plans.start` default: invoices per quota year.
pub const DEFAULT_PLAN_START: u64 = 5_000;
/// `plans.grow` default: invoices per quota year.
pub const DEFAULT_PLAN_GROW: u64 = 50_000;
/// `baud` default of a device (PROTOCOL.md §1: 115200 8N1).
pub const DEFAULT_BAUD: u32 = 115_200;
/// `queue_capacity` default of a device: invoices waiting for the port.
pub const DEFAULT_QUEUE_CAPACITY: usize = crate::device::DEFAULT_QUEUE_CAPACITY;
/// `index_cache_mib` default: sled's page cache for the register's index.
pub const DEFAULT_INDEX_CACHE_MIB: u64 = crate::store::DEFAULT_INDEX_CACHE_MIB;

const MAX_TIMEOUT_SECS: u64 = 3_600;
const MAX_BUDGET_MS: u64 = 3_600_000;
const MAX_TRIES: u32 = 10;
const MAX_CONNECTIONS: usize = 65_536;
const MAX_QUEUE_CAPACITY: usize = 10_000;
const MIN_BODY_LIMIT: usize = 1024;
const MAX_BODY_LIMIT: usize = 64 * 1024 * 1024;
const MAX_DEVICE_NAME: usize = 32;
const MAX_OFFSET_SECS: i32 = 14 * 3600;
const MAX_INDEX_CACHE_MIB: u64 = 4096;

/// The whole configuration. `Default` is the built-in configuration (no devices: the embedded
/// simulator, see docs/design.md §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Journal and index directory, if set by the file, an environment variable or a flag.
    /// Use [`Config::resolved_state_dir`] for the directory to use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_dir: Option<PathBuf>,
    /// Address and port of the HTTP server.
    #[serde(with = "listen_text")]
    pub listen: SocketAddr,
    /// Offset from UTC of the quota year's time zone (no DST rules: a fixed offset).
    #[serde(with = "offset_text")]
    pub timezone_offset: FixedOffset,
    /// The language of the dashboard, the CLI and the API's `errorDesc` when the reader does
    /// not ask for another (`Accept-Language`, `--lang`): `fr` (default) or `en`.
    pub language: Lang,
    /// Without `[[devices]]`: `true` runs the bundled simulator with a demo organization (not
    /// fiscal); `false` certifies nothing and says that no device is configured (the packaged
    /// file). No effect once a device is configured. Added in 1.7.0; older files: `true`.
    pub demo: bool,
    /// HTTP connections served at once (the HTTP layer decides what happens to more).
    pub max_connections: usize,
    /// Longest time one HTTP request may take, queue wait included; must exceed every device's
    /// finalize and credit-note budgets.
    pub request_timeout_secs: u64,
    /// Longest time to receive a request's headers.
    pub header_read_timeout_secs: u64,
    /// Largest accepted request body.
    pub body_limit_bytes: usize,
    /// `[http]`: per-peer connections, the dashboard's share, body rate, metrics labels.
    #[serde(skip_serializing_if = "HttpLimits::is_default")]
    pub http: HttpLimits,
    /// sled's page cache for the register's index, in MiB.
    pub index_cache_mib: u64,
    /// Annual quotas of the plans.
    pub plans: Plans,
    /// Fiscal devices. Empty: the embedded simulator (demo mode, not fiscal).
    pub devices: Vec<DeviceEntry>,
    /// `[alerts]`: quota thresholds, how long a channel may be down, how old a DGI contact.
    #[serde(skip_serializing_if = "AlertSettings::is_default")]
    pub alerts: AlertSettings,
    /// `[smtp]`: the relay alerts are e-mailed through; none: no e-mail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smtp: Option<SmtpSettings>,
    /// The address people reach the gateway at (`https://factures.example.cd`, behind a
    /// reverse proxy its public name): the alert e-mails link to its dashboard. None: they
    /// say how to reach it without a link. Added in 1.6.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
    /// `[backup]`: where `backup` writes its copies, how many it keeps, what it runs after.
    /// Added in 1.7.0.
    #[serde(skip_serializing_if = "BackupSettings::is_default")]
    pub backup: BackupSettings,
    /// `[store]`: without `url`, the embedded store in `state_dir`; with it, a PostgreSQL
    /// server ([`Config::store_settings`]). Added in issue 28.
    #[serde(skip_serializing_if = "StoreSettings::is_default")]
    pub store: StoreSettings,
    /// The file this was loaded from (not a key; set by [`Config::load`]).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            state_dir: None,
            listen: DEFAULT_LISTEN,
            timezone_offset: default_offset(),
            language: Lang::Fr,
            demo: true,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            header_read_timeout_secs: DEFAULT_HEADER_READ_TIMEOUT_SECS,
            body_limit_bytes: DEFAULT_BODY_LIMIT_BYTES,
            http: HttpLimits::default(),
            index_cache_mib: DEFAULT_INDEX_CACHE_MIB,
            plans: Plans::default(),
            devices: Vec::new(),
            alerts: AlertSettings::default(),
            smtp: None,
            public_url: None,
            backup: BackupSettings::default(),
            store: StoreSettings::default(),
            source: None,
        }
    }
}

/// Annual invoice quotas per plan (`[plans]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Plans {
    /// Start plan: invoices per quota year.
    pub start: u64,
    /// Grow plan: invoices per quota year.
    pub grow: u64,
}

impl Default for Plans {
    fn default() -> Self {
        Plans {
            start: DEFAULT_PLAN_START,
            grow: DEFAULT_PLAN_GROW,
        }
    }
}

impl Config {
    /// The annual quota of an organization: its override if any, else its plan's.
    pub fn quota_for(&self, plan: Plan, override_: Option<u64>) -> u64 {
        override_.unwrap_or(match plan {
            Plan::Start => self.plans.start,
            Plan::Grow => self.plans.grow,
        })
    }

    /// The quota year's time zone (fixed offset).
    pub fn offset(&self) -> FixedOffset {
        self.timezone_offset
    }

    /// The quota year of instant `at`: its calendar year at [`Config::offset`].
    pub fn quota_year(&self, at: DateTime<Utc>) -> i32 {
        at.with_timezone(&self.timezone_offset).year()
    }

    /// Whether fiscal devices are configured (if not: demo mode on the embedded simulator).
    pub fn has_devices(&self) -> bool {
        !self.devices.is_empty()
    }

    /// No device and `demo = false`: `serve` waits for an administrator to name the box.
    /// Not when the register is in PostgreSQL with a `secret_key_file`, whose web API devices
    /// are kept in the database (`device add`, issue 29): `serve` then runs with those alone.
    pub fn awaits_device(&self) -> bool {
        let devices_as_data = self.store.url.is_some() && self.store.secret_key_file.is_some();
        !self.demo && !self.has_devices() && !devices_as_data
    }

    /// No device and `demo` on: `serve` certifies on the bundled simulator.
    pub fn runs_demo(&self) -> bool {
        self.demo && !self.has_devices()
    }

    /// The device named `name` (exact match).
    pub fn device(&self, name: &str) -> Option<&DeviceEntry> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The state directory to use: `state_dir` if set, else [`DEFAULT_STATE_DIR`].
    pub fn resolved_state_dir(&self) -> &Path {
        self.state_dir
            .as_deref()
            .unwrap_or(Path::new(DEFAULT_STATE_DIR))
    }

    /// `request_timeout_secs` as a duration.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_secs)
    }

    /// `header_read_timeout_secs` as a duration.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs)
    }
}

fn default_offset() -> FixedOffset {
    // +01:00 is always in range; UTC is only a fallback the compiler cannot rule out.
    FixedOffset::east_opt(DEFAULT_TIMEZONE_OFFSET_SECS).unwrap_or(Utc.fix())
}

mod alerts;
mod backup;
mod device;
mod error;
mod http;
mod sources;
mod store;
mod text;
mod unknown;
mod validate;
mod web_api;

pub use backup::{BackupSettings, BACKUP_DIR_PLACEHOLDER, DEFAULT_BACKUP_DIR, DEFAULT_BACKUP_KEEP};
pub use device::{ActionCaseSetting, DeviceEntry, DeviceKind, LineBreaksSetting, StatusMapSetting};
pub use http::HttpLimits;
pub use sources::{env_vars, Overrides};
pub use store::{
    SslMode, StoreSettings, DEFAULT_STORE_POOL_SIZE, ENV_STORE_PASSWORD_FILE, ENV_STORE_URL,
};
use text::{listen_text, offset_text};
pub use text::{parse_listen, parse_offset};

#[cfg(test)]
mod tests;
