//! Alerts: what an organization's administrators must know before it costs them invoices.
//!
//! | kind | about | raised when | cleared when |
//! |---|---|---|---|
//! | `quota_80`, `quota_90`, `quota_100` (`[alerts] quota_thresholds`) | organization | its production invoices of the quota year reach that share of its annual quota | a new quota year, or a larger quota |
//! | `channel_down` | configured device | it has not answered for `channel_down_minutes` | it is connected |
//! | `dgi_contact_old` | configured box | its last contact with the DGI (C2h) is older than `dgi_contact_days` | a fresher contact |
//! | `in_doubt` | organization | a production invoice waits for an administrator, or is not settled after `channel_down_minutes` | nothing in doubt |
//! | `backup_old` | the gateway (every organization) | the last good backup (`<state_dir>/last-backup.json`) is older than two days, or there is none and the first production entry is that old | a newer backup |
//! | `backup_command_failed` | the gateway (every organization) | the `[backup] command` after the last copy failed | a copy whose command succeeds |
//! | `register_unwritable` | the gateway (every organization) | the invoice register cannot be written (disk full, read-only, I/O error: `certify/storage_fault.rs`) | it can be written again |
//!
//! Each alert is raised once per crossing, never once per request: [`state`] keeps what is
//! raised (and whose e-mail is still to send) in `<state_dir>/alerts.json`, so a restart sends
//! nothing twice. Over PostgreSQL the replicas share it in the store (`shared.rs`): each
//! e-mail is recorded there, fenced, before it is sent; the service's alerts by the leader,
//! a replica's own (its boxes, its state directory) and its notices by that replica. A raised alert is a `warn!` line, `emcf_alerts_active` and
//! `emcf_alerts_raised_total` in `/metrics` (by kind, never by organization), a banner on the
//! organization's dashboard overview, and with `[smtp]` an e-mail to the organization's
//! `admin_emails` (in the configured language); a clearing is an `info!` line. An unknown fact
//! never clears an alert (at start every channel is "not connected since now" and no box's
//! DGI contact is read yet): `channel_down` clears once the channel is connected,
//! `dgi_contact_old` once a fresh contact is read. An e-mail the relay refuses for now, or a
//! relay that cannot be reached, is tried again at the next evaluation; one refused for good
//! (5xx, no valid address) is logged and given up; nothing here ever blocks a certification.
//!
//! The change notices (`crate::notices`, `notice add`) go through the same relay and the same
//! rounds (`notice_mail.rs`): a notice is in its file before any e-mail about it is tried, and
//! each e-mail is recorded there once the relay took it.

mod collect;
mod conditions;
mod engine;
mod kind;
mod mail;
mod notice_mail;
mod settings;
mod shared;
mod state;
mod text;

use std::path::PathBuf;

use thiserror::Error;

// What the service (serve, the dashboard) uses, and what their signatures name.
pub use conditions::{BackupFacts, Facts, Snapshot};
pub use engine::{AlertEngine, EngineSettings};
pub use kind::{AlertKey, AlertKind, Subject};
pub use mail::{try_relay, RelayFailure, RelayFailureKind};
pub use settings::{dashboard_url, AlertSettings, SmtpSettings, SmtpTls, DEFAULT_SMTP_PORT};
pub use state::{RaisedAlert, Transitions};

/// What went wrong with the alerts (never with a certification).
#[derive(Debug, Error)]
pub enum AlertError {
    /// The state of the service or the register could not be read.
    #[error("reading the service's state: {0}")]
    Service(String),
    /// The state file could not be read or written.
    #[error("alerts state file {}: {source}", path.display())]
    StateFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The state file is not what this version writes.
    #[error("alerts state file {} is damaged: {reason}", path.display())]
    StateDamaged {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `smtp.password_file` could not be read.
    #[error("smtp.password_file {}: {source}", path.display())]
    PasswordFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An address the relay would refuse.
    #[error("e-mail address {0:?}: {1}")]
    Address(String, String),
    /// The relay refused or could not be reached.
    #[error("SMTP: {0}")]
    Smtp(String),
}
