//! The store's errors.

use std::fmt;

use crate::i18n::{Localized, Message};
use crate::msg;
use crate::store::postgres::PgError;

/// Where a damage was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DamageAt {
    /// At the journal record with this sequence number (or where it was expected).
    Seq(u64),
    /// At this byte offset of `journal.log` (the record there cannot be read).
    Offset(u64),
    /// The journal file as a whole (missing, shorter than what was written...).
    JournalFile,
    /// The register in PostgreSQL (what `log verify` found there, one line each).
    Database,
}

impl fmt::Display for DamageAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DamageAt::Seq(seq) => write!(f, "journal record seq {seq}"),
            DamageAt::Offset(offset) => write!(f, "journal byte offset {offset}"),
            DamageAt::JournalFile => f.write_str("the journal file"),
            DamageAt::Database => f.write_str("the register in PostgreSQL"),
        }
    }
}

/// Everything the store can refuse or fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file-system operation failed (the message names the path).
    #[error("store I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// `gateway.lock` is held by someone else.
    #[error("another gateway process uses this state directory")]
    Locked,
    /// The journal (or its agreement with the index) is damaged: the store refuses to open or
    /// to verify. Never repaired automatically; see the module documentation.
    #[error("store damaged at {seq_or_offset}: {reason}")]
    Damaged {
        /// Where.
        seq_or_offset: DamageAt,
        /// What is wrong, and what an operator can do.
        reason: String,
    },
    /// The sled index failed.
    #[error("index (sled) error: {0}")]
    Index(#[from] sled::Error),
    /// The operation contradicts the current state (duplicate key id, invoice in flight...).
    #[error("conflict: {0}")]
    Conflict(String),
    /// No intent has this id.
    #[error("unknown intent {0}")]
    UnknownIntent(u64),
    /// The intent exists but was already certified or abandoned.
    #[error("intent {0} is not open (already certified or abandoned)")]
    IntentNotOpen(u64),
    /// No API key has this id.
    #[error("unknown API key {0:?}")]
    UnknownKey(String),
    /// No organization has this id.
    #[error("unknown organization {0:?}")]
    UnknownOrganization(String),
    /// The record given is not acceptable (empty id, too large...).
    #[error("invalid record: {0}")]
    Invalid(String),
    /// A record could not be encoded or decoded.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// A journal write failed earlier: appends are refused until the store is reopened (the
    /// journal is then rescanned and its tail checked).
    #[error("journal halted after a write failure ({0}); restart the gateway")]
    Halted(String),
    /// A restore into this state directory did not finish (its marker
    /// [`RESTORE_MARKER`](super::RESTORE_MARKER) is there): what it holds may be half old,
    /// half restored, so the store refuses to open it until `restore` runs again.
    #[error("a restore into {0} did not finish: run `emcf-gateway restore` again")]
    RestoreUnfinished(std::path::PathBuf),
    /// The PostgreSQL store failed: [`PgError::is_unreachable`] when the server cannot be
    /// reached or a COMMIT's outcome is unknown (503, try again), else a statement refused.
    #[error(transparent)]
    Database(#[from] PgError),
    /// The organization's annual quota is used up: PostgreSQL claims the unit with the intent,
    /// and refuses an intent past it (whichever replica sent it).
    #[error("the annual quota of organization {0:?} is used up")]
    QuotaExhausted(String),
    /// The invoice's rn or Idempotency-Key was taken by another request between admission's
    /// read and the intent's write (another replica's, on PostgreSQL).
    #[error("in flight elsewhere: {0}")]
    InFlight(String),
    /// This replica's lease was fenced off, or the intent is another replica's now: nothing
    /// was written (`store/postgres/replicas.rs`).
    #[error("this replica may no longer write: its lease was fenced off ({0})")]
    Fenced(String),
    /// Devices kept as data are the PostgreSQL store's: the embedded store's devices are the
    /// configuration file's `[[devices]]` blocks.
    #[error("the embedded store keeps no device: its devices are the configuration's [[devices]] blocks")]
    DevicesInFile,
    /// No device of this name is kept in the store.
    #[error("no device {0:?} is kept in the store")]
    UnknownDevice(String),
    /// A device of this name is kept already.
    #[error("a device {0:?} is kept already")]
    DeviceExists(String),
    /// A device cannot be removed while organizations certify on it or intents on it are open.
    #[error("device {device:?} is used by organizations {organizations:?} and open intents {open_intents:?}")]
    DeviceInUse {
        /// The device.
        device: String,
        /// The organizations whose device it is.
        organizations: Vec<String>,
        /// Its open intents.
        open_intents: Vec<u64>,
    },
    /// A sealed token could not be opened or sealed (never the token itself).
    #[error("the token of device {device:?}: {error}")]
    Sealed {
        /// The device.
        device: String,
        /// Why.
        error: super::sealed::SealError,
    },
}

impl StoreError {
    /// The kind of storage refusal this error is, if it is one: an I/O error of the journal,
    /// or of sled's files (a full disk, a read-only file system...).
    pub fn storage_refusal(&self) -> Option<super::FaultKind> {
        match self {
            StoreError::Io(io) => Some(super::FaultKind::of(io)),
            StoreError::Index(sled) => {
                super::embedded::journal::storage_refusal(sled).map(|io| super::FaultKind::of(&io))
            }
            _ => None,
        }
    }

    /// Shorthand for [`StoreError::Damaged`].
    pub(crate) fn damaged(at: DamageAt, reason: impl Into<String>) -> StoreError {
        StoreError::Damaged {
            seq_or_offset: at,
            reason: reason.into(),
        }
    }
}

/// An I/O error that names the path it happened on.
pub(crate) fn io_at(path: &std::path::Path, what: &str, err: std::io::Error) -> StoreError {
    StoreError::Io(std::io::Error::new(
        err.kind(),
        format!("{what} {}: {err}", path.display()),
    ))
}

/// What an administrator reads (the CLI, the dashboard): the register's own words for what
/// they can act on, and the technical text of an internal fault as a detail.
impl Localized for StoreError {
    fn message(&self) -> Message {
        match self {
            StoreError::Io(error) => msg!("store-io", reason = error.message()),
            StoreError::Locked => msg!("store-locked"),
            StoreError::Damaged {
                seq_or_offset,
                reason,
            } => {
                let at = match seq_or_offset {
                    DamageAt::Seq(seq) => msg!("store-damage-at-seq", seq = *seq),
                    DamageAt::Offset(offset) => msg!("store-damage-at-offset", offset = *offset),
                    DamageAt::JournalFile => msg!("store-damage-at-file"),
                    DamageAt::Database => msg!("store-damage-at-database"),
                };
                msg!("store-damaged", at = at, detail = reason.as_str())
            }
            StoreError::Index(error) => msg!("store-index", detail = error.to_string()),
            StoreError::Conflict(detail) => msg!("store-conflict", detail = detail.as_str()),
            StoreError::UnknownIntent(id) => msg!("store-unknown-intent", id = *id),
            StoreError::IntentNotOpen(id) => msg!("store-intent-not-open", id = *id),
            StoreError::UnknownKey(id) => msg!("store-unknown-key", id = id.as_str()),
            StoreError::UnknownOrganization(id) => {
                msg!("store-unknown-organization", id = id.as_str())
            }
            StoreError::Invalid(detail) => msg!("store-invalid", detail = detail.as_str()),
            StoreError::Json(error) => msg!("store-json", detail = error.to_string()),
            StoreError::Halted(detail) => msg!("store-halted", detail = detail.as_str()),
            StoreError::RestoreUnfinished(dir) => {
                msg!("store-restore-unfinished", dir = dir.display().to_string())
            }
            StoreError::Database(error) if error.is_unreachable() => {
                msg!("store-database-unreachable", detail = error.to_string())
            }
            StoreError::Database(error) => msg!("store-database", detail = error.to_string()),
            StoreError::QuotaExhausted(org) => msg!("store-quota-exhausted", org = org.as_str()),
            StoreError::InFlight(detail) => msg!("store-conflict", detail = detail.as_str()),
            StoreError::Fenced(detail) => msg!("store-fenced", detail = detail.as_str()),
            StoreError::DevicesInFile => msg!("store-devices-in-file"),
            StoreError::UnknownDevice(name) => msg!("store-unknown-device", device = name.as_str()),
            StoreError::DeviceExists(name) => msg!("store-device-exists", device = name.as_str()),
            StoreError::DeviceInUse {
                device,
                organizations,
                open_intents,
            } => {
                let none = || "-".to_owned();
                let join = |items: Vec<String>| {
                    if items.is_empty() {
                        none()
                    } else {
                        items.join(", ")
                    }
                };
                msg!(
                    "store-device-in-use",
                    device = device.as_str(),
                    organizations = join(organizations.clone()),
                    intents = join(open_intents.iter().map(u64::to_string).collect())
                )
            }
            StoreError::Sealed { device, error } => {
                msg!(
                    "store-device-sealed",
                    device = device.as_str(),
                    detail = error.to_string()
                )
            }
        }
    }
}
