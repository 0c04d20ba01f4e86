//! What the link knows of the box at any moment, for `/status`, the dashboard, `/metrics` and
//! `device probe`: whether it answers, what it last said of itself (C1h, C2h, status bytes),
//! whether anything it says stops certification, and what in its replies differs from
//! PROTOCOL.md.

use chrono::{DateTime, Utc};
use mcf_sfe::reply::{Anomaly, DeviceState, LinkState};
use mcf_sfe::{Status, StatusFlag};

use super::config::StatusMap;
use crate::i18n::Message;
use crate::model::SeenAnomaly;
use crate::msg;

/// The link as the dashboard and `/status` see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkStatus {
    /// The port is open and the device answered (the throwaway C2h, then every command).
    pub connected: bool,
    /// When `connected` last changed (or the actor started).
    pub since: DateTime<Utc>,
    /// The last link error (kept after a reconnect, for diagnosis).
    pub last_error: Option<String>,
    /// When the device last sent a valid reply.
    pub last_reply_at: Option<DateTime<Utc>>,
    /// The device's link with the DGI server (C2h), as last read.
    pub dgi: Option<LinkState>,
    /// The device's state (C1h) as last read: at each connection, each invoice and each
    /// health poll.
    pub state: Option<DeviceState>,
    /// The status bytes of the last reply.
    pub status_bytes: Option<Status>,
    /// Why the box, although it answers, cannot certify now: its state cannot be read, its
    /// fiscal memory is full, its link with the DGI is overdue (as its status bytes say). Said
    /// in the reader's language where one is known (`device probe`), in English in logs.
    pub blocked: Option<Message>,
    /// What in this box's replies differs from PROTOCOL.md, once per command and field, since
    /// the gateway started.
    pub oddities: Vec<SeenAnomaly>,
    /// Sessions waiting in the queue (not counting the one being served).
    pub queued: usize,
}

impl LinkStatus {
    /// A link that has not connected yet.
    pub fn disconnected() -> LinkStatus {
        LinkStatus {
            connected: false,
            since: Utc::now(),
            last_error: None,
            last_reply_at: None,
            dgi: None,
            state: None,
            status_bytes: None,
            blocked: None,
            oddities: Vec::new(),
            queued: 0,
        }
    }
}

/// Counts `oddity` in `seen`; true the first time this (command, field) is seen.
pub(super) fn note_oddity(seen: &mut Vec<SeenAnomaly>, cmd: u8, oddity: &Anomaly) -> bool {
    let command = mcf_sfe::command::code::name(cmd);
    if let Some(known) = seen
        .iter_mut()
        .find(|s| s.command == command && s.field == oddity.field)
    {
        known.count += 1;
        known.raw.clone_from(&oddity.raw);
        return false;
    }
    seen.push(SeenAnomaly {
        command,
        field: oddity.field.to_owned(),
        raw: oddity.raw.clone(),
        expected: oddity.expected.to_owned(),
        count: 1,
        first_seen: Utc::now(),
    });
    true
}

/// Why a box that answers cannot certify now, from what it last said: its state unreadable
/// (`state_error`), then what its status bytes say under `map`.
pub(super) fn blocked_reason(
    state_error: Option<&str>,
    status: Option<Status>,
    map: StatusMap,
) -> Option<Message> {
    if let Some(error) = state_error {
        return Some(msg!("device-blocked-state", detail = error));
    }
    let status = status.filter(|_| map == StatusMap::Simulator)?;
    if status.has(StatusFlag::FiscalMemoryFull) {
        return Some(msg!("device-blocked-memory-full"));
    }
    if status.has(StatusFlag::DgiLinkOverdue) {
        return Some(msg!("device-blocked-dgi-overdue"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oddity_is_new_once_per_command_and_field_and_counted_each_time() {
        let mut seen = Vec::new();
        let odd = |raw: &str| Anomaly {
            field: "curDate",
            raw: raw.into(),
            expected: "yyyyMMdd, or empty",
        };
        assert!(note_oddity(&mut seen, 0xC1, &odd("")));
        assert!(!note_oddity(&mut seen, 0xC1, &odd("x")));
        assert!(note_oddity(&mut seen, 0x33, &odd("")));
        assert_eq!(seen.len(), 2);
        assert_eq!((seen[0].count, seen[0].raw.as_str()), (2, "x"));
        assert_eq!(seen[0].command, "C1h");
    }

    #[test]
    fn the_status_bits_block_only_under_the_simulator_map() {
        let full = Status::with(&[StatusFlag::FiscalMemoryFull]);
        assert!(blocked_reason(None, Some(full), StatusMap::Simulator)
            .is_some_and(|r| r.to_string().contains("full")));
        assert_eq!(blocked_reason(None, Some(full), StatusMap::Ignored), None);
        let real_idle = Status([0xC0, 0x80, 0xC0, 0x80, 0xC0, 0xD8]);
        assert_eq!(
            blocked_reason(None, Some(real_idle), StatusMap::Simulator),
            None
        );
        assert!(blocked_reason(Some("TC: x"), None, StatusMap::Ignored)
            .is_some_and(|r| r.to_string().contains("C1h")));
    }
}
