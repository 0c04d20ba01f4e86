//! The actor's side of every reply and request: frames in the box's dialect, replies read
//! tolerantly, what they say of the box kept in the link status, and what differs from
//! PROTOCOL.md logged once and counted.

use chrono::Utc;
use mcf_sfe::command::code;
use mcf_sfe::reply::{Anomaly, DeviceState};
use mcf_sfe::{Command, FieldError, Reply, ReplyFrame, RequestFrame, Seq};
use tracing::warn;

use super::Port;
use crate::device::status::{blocked_reason, note_oddity};
use crate::device::DeviceError;

impl Port {
    /// `command` as a frame with the next SEQ of this box's range, its texts escaped the
    /// way this box reads them.
    pub(super) fn frame_of(&mut self, command: &Command) -> Result<RequestFrame, FieldError> {
        let data = command.encode()?;
        let data = self.wire.line_breaks.outgoing(&data).into_owned();
        let seq = self.next_seq();
        RequestFrame::new(seq, command.code(), data).map_err(|e| FieldError::DataTooLong {
            cmd: e.cmd,
            len: e.len,
            max: e.max,
        })
    }

    /// The next SEQ of this box's range.
    pub(super) fn next_seq(&mut self) -> Seq {
        self.seq = self.wire.seq.after(self.seq);
        self.seq
    }

    /// Reads `frame` with this box's dialect: notes what it says of the box (status bytes,
    /// C1h, C2h) and what in it differs from PROTOCOL.md.
    pub(super) fn read_reply(&mut self, frame: &ReplyFrame) -> Result<Reply, DeviceError> {
        let cmd = frame.cmd();
        let status = frame.status();
        let read = Reply::read(cmd, frame.data(), status, &self.dialect);
        if let Ok(reading) = &read {
            self.note_oddities(cmd, &reading.anomalies);
        }
        match read {
            Ok(reading) => {
                let reply = reading.reply;
                match &reply {
                    Reply::DeviceState(state) => {
                        self.state_error = None;
                        let state = state.clone();
                        self.status.send_modify(|s| s.state = Some(state));
                    }
                    Reply::LinkState(link) => {
                        let link = link.clone();
                        self.status.send_modify(|s| s.dgi = Some(link));
                    }
                    _ => {}
                }
                self.note_status(status);
                Ok(reply)
            }
            Err(error) => {
                warn!(cmd, seq = frame.seq().get(), %error, "unreadable reply");
                self.note_status(status);
                if cmd == code::DEVICE_STATE {
                    self.state_error = Some(error.to_string());
                    self.refresh_blocked();
                    return Err(DeviceError::UnreadableState {
                        reason: error.to_string(),
                        nif: DeviceState::nif_in(frame.data(), &self.dialect),
                    });
                }
                Err(DeviceError::BadReply {
                    command: cmd,
                    reason: error.to_string(),
                })
            }
        }
    }

    /// Counts each oddity in `/metrics` and the status; logs the first of each command and
    /// field at `warn` (the same firmware says it in every reply).
    pub(in crate::device) fn note_oddities(&mut self, cmd: u8, oddities: &[Anomaly]) {
        for oddity in oddities {
            crate::metrics::device_reply_anomaly(&self.name, cmd, oddity.field);
            let mut first = false;
            self.status
                .send_modify(|s| first = note_oddity(&mut s.oddities, cmd, oddity));
            if first {
                warn!(
                    command = %code::name(cmd),
                    field = oddity.field,
                    raw = %oddity.raw,
                    expected = oddity.expected,
                    "the box's reply differs from PROTOCOL.md here; the gateway reads on (logged once, counted in /metrics)"
                );
            }
        }
    }

    fn note_status(&mut self, status: mcf_sfe::Status) {
        self.status.send_modify(|s| {
            s.status_bytes = Some(status);
            s.last_reply_at = Some(Utc::now());
        });
        self.refresh_blocked();
    }

    /// Recomputes why the box cannot certify now, and logs when that changes.
    pub(super) fn refresh_blocked(&mut self) {
        let status = self.status.borrow().status_bytes;
        let blocked = blocked_reason(self.state_error.as_deref(), status, self.wire.status_map);
        let changed = self.status.borrow().blocked != blocked;
        if changed {
            match &blocked {
                Some(reason) => warn!(%reason, "the box answers but cannot certify now"),
                None => tracing::info!("the box can certify again"),
            }
            self.status.send_modify(|s| s.blocked = blocked);
        }
    }
}
