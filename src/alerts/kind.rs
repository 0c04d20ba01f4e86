//! What an alert is about: its kind (the `/metrics` label) and its subject (an organization or
//! a device), which together are its key: one raised alert per key at most.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kinds of alert. `Quota(p)`: the annual quota's use reached `p` percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum AlertKind {
    /// Quota use reached this percentage (`quota_80`, `quota_90`, `quota_100` by default).
    Quota(u8),
    /// A configured channel has not answered for `alerts.channel_down_minutes`.
    ChannelDown,
    /// A box's last contact with the DGI (C2h) is older than `alerts.dgi_contact_days`.
    DgiContactOld,
    /// Invoices in doubt: waiting for an administrator, or not settled after
    /// `alerts.channel_down_minutes`.
    InDoubt,
    /// The last good backup is older than [`BACKUP_MAX_AGE_DAYS`] days, or none was ever
    /// made of a register whose first entry is that old (1.7.0).
    BackupOld,
    /// The `[backup] command` after the last copy failed (1.7.0).
    BackupCommandFailed,
    /// The invoice register cannot be written (disk full, read-only, I/O error): nothing is
    /// certified until it can (`certify::StorageFault`).
    RegisterUnwritable,

    /// A channel certified invoices its register does not hold: it certifies nothing until
    /// an administrator settles it (1.8.0; `certify/register_behind.rs`).
    RegisterBehind,
}

/// How old the last good backup may be before [`AlertKind::BackupOld`] is raised.
pub const BACKUP_MAX_AGE_DAYS: i64 = 2;

impl AlertKind {
    /// The fixed label of `/metrics` and the state file: `quota_80`, `channel_down`,
    /// `dgi_contact_old`, `in_doubt`.
    pub fn label(self) -> String {
        match self {
            AlertKind::Quota(percent) => format!("quota_{percent}"),
            AlertKind::ChannelDown => "channel_down".to_owned(),
            AlertKind::DgiContactOld => "dgi_contact_old".to_owned(),
            AlertKind::InDoubt => "in_doubt".to_owned(),
            AlertKind::BackupOld => "backup_old".to_owned(),
            AlertKind::BackupCommandFailed => "backup_command_failed".to_owned(),
            AlertKind::RegisterUnwritable => "register_unwritable".to_owned(),

            AlertKind::RegisterBehind => "register_behind".to_owned(),
        }
    }

    /// Reads a [`AlertKind::label`].
    pub fn parse(label: &str) -> Option<AlertKind> {
        match label {
            "channel_down" => Some(AlertKind::ChannelDown),
            "dgi_contact_old" => Some(AlertKind::DgiContactOld),
            "in_doubt" => Some(AlertKind::InDoubt),
            "backup_old" => Some(AlertKind::BackupOld),
            "backup_command_failed" => Some(AlertKind::BackupCommandFailed),
            "register_unwritable" => Some(AlertKind::RegisterUnwritable),

            "register_behind" => Some(AlertKind::RegisterBehind),
            other => other
                .strip_prefix("quota_")
                .and_then(|p| p.parse().ok())
                .filter(|p| (1..=100).contains(p))
                .map(AlertKind::Quota),
        }
    }
}

impl fmt::Display for AlertKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl From<AlertKind> for String {
    fn from(kind: AlertKind) -> String {
        kind.label()
    }
}

impl TryFrom<String> for AlertKind {
    type Error = String;

    fn try_from(label: String) -> Result<AlertKind, String> {
        AlertKind::parse(&label).ok_or_else(|| format!("unknown alert kind {label:?}"))
    }
}

/// Who an alert is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// An organization, by id (quota, invoices in doubt).
    Org(String),
    /// A configured device, by name (channel down, DGI contact).
    Device(String),
    /// The gateway itself, for every organization (its backups; 1.7.0).
    Gateway,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Org(id) => write!(f, "organization {id}"),
            Subject::Device(name) => write!(f, "device {name}"),
            Subject::Gateway => f.write_str("the gateway"),
        }
    }
}

/// One alert's identity: raised at most once until its condition clears.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AlertKey {
    /// Its kind.
    pub kind: AlertKind,
    /// What it is about.
    pub subject: Subject,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_back() {
        for kind in [
            AlertKind::Quota(80),
            AlertKind::Quota(100),
            AlertKind::ChannelDown,
            AlertKind::DgiContactOld,
            AlertKind::InDoubt,
            AlertKind::BackupOld,
            AlertKind::BackupCommandFailed,
            AlertKind::RegisterUnwritable,
            AlertKind::RegisterBehind,
        ] {
            assert_eq!(AlertKind::parse(&kind.label()), Some(kind));
        }
        assert_eq!(AlertKind::parse("quota_0"), None);
        assert_eq!(AlertKind::parse("quota_101"), None);
        assert_eq!(AlertKind::parse("fire"), None);
    }
}
