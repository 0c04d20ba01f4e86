//! What the device link reports to its callers.

use std::time::Duration;

use crate::i18n::{Localized, Message};
use crate::msg;

/// Why a device request failed. A device refusal (`E:`) is not an error: it comes back as
/// `Ok(Reply::Refused(..))` or `Ok(FinalizeOutcome::Refused(..))`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The link is down (port absent, device not answering); nothing was queued.
    #[error("device unavailable: {0}")]
    Unavailable(String),
    /// The device's queue is full; nothing was queued.
    #[error("the device queue is full")]
    QueueFull,
    /// No valid reply to this command within its tries and budget (PROTOCOL.md §3.3).
    #[error("the device did not answer command {command:#04x}")]
    NoAnswer {
        /// The command byte.
        command: u8,
    },
    /// The link dropped (or could not be reopened) during the session; the command was not
    /// sent, or was an ordinary command whose effect does not matter after a reconnect.
    #[error("the device link is disconnected")]
    Disconnected,
    /// A 38h with totals was sent and no valid answer settles it (timeout, disconnect, `E:`
    /// after a resend or a `P:`, empty or unreadable reply). The invoice may be certified:
    /// reconcile with C1h (PROTOCOL.md §3.4, §6.3); never resend or cancel blindly.
    #[error("the outcome of the finalization (38h) is unknown")]
    OutcomeUnknown,
    /// A C1h reply with the right SEQ and CMD whose fields the gateway needs (MID, NIF, TC,
    /// FVC, FRC) cannot be read: the box answers but cannot be used.
    #[error("the box's state (C1h) cannot be read: {reason}")]
    UnreadableState {
        /// What is wrong with the DATA.
        reason: String,
        /// The NIF field, when at least that could be read.
        nif: Option<String>,
    },
    /// A reply with the right SEQ and CMD whose DATA does not parse.
    #[error("unreadable reply to command {command:#04x}: {reason}")]
    BadReply {
        /// The command byte.
        command: u8,
        /// What is wrong with the DATA.
        reason: String,
    },
    /// The command does not fit a frame (or cannot go through this method); nothing was sent.
    #[error("command not sent: {0}")]
    Encode(mcf_sfe::FieldError),
    /// The device actor is stopping or gone.
    #[error("the device link is shutting down")]
    ShuttingDown,
}

impl From<mcf_sfe::FieldError> for DeviceError {
    fn from(error: mcf_sfe::FieldError) -> Self {
        DeviceError::Encode(error)
    }
}

impl DeviceError {
    /// A hint for an HTTP 503 `Retry-After`: how long before trying again makes sense.
    /// Whole seconds, between 1 and 60.
    pub fn retry_after(&self) -> Duration {
        let secs = match self {
            // A session usually lasts about a second; the queue drains quickly.
            DeviceError::QueueFull => 2,
            // The actor reopens the port with a backoff of at most a few seconds.
            DeviceError::Unavailable(_) | DeviceError::Disconnected => 5,
            DeviceError::NoAnswer { .. } => 3,
            // Reconciliation (C1h) needs the device back first.
            DeviceError::OutcomeUnknown | DeviceError::ShuttingDown => 5,
            DeviceError::BadReply { .. } | DeviceError::Encode(_) => 1,
            // A box that sends an unreadable state needs a person (or a setting) first.
            DeviceError::UnreadableState { .. } => 60,
        };
        Duration::from_secs(secs)
    }
}

/// What a person reads (`device probe`, the CLI): the link's own technical text, if any, as a
/// detail.
impl Localized for DeviceError {
    fn message(&self) -> Message {
        let command = |command: &u8| format!("{command:02X}h");
        match self {
            DeviceError::Unavailable(detail) => {
                msg!("device-unavailable", detail = detail.as_str())
            }
            DeviceError::QueueFull => msg!("device-queue-full"),
            DeviceError::NoAnswer { command: c } => {
                msg!("device-no-answer", command = command(c))
            }
            DeviceError::Disconnected => msg!("device-disconnected"),
            DeviceError::OutcomeUnknown => msg!("device-outcome-unknown"),
            DeviceError::UnreadableState { reason, .. } => {
                msg!("device-unreadable-state", detail = reason.as_str())
            }
            DeviceError::BadReply { command: c, reason } => msg!(
                "device-bad-reply",
                command = command(c),
                detail = reason.as_str()
            ),
            DeviceError::Encode(error) => msg!("device-not-sent", detail = error.to_string()),
            DeviceError::ShuttingDown => msg!("device-shutting-down"),
        }
    }
}
