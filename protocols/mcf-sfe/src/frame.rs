//! The two frame shapes and their byte encoding.
//!
//! ```text
//! host -> device:  01 LEN SEQ CMD DATA... 05 BCC(4) 03
//! device -> host:  01 LEN SEQ CMD DATA... 04 STATUS(6) 05 BCC(4) 03
//! ```
//! LEN = 0x20 + the count of bytes from LEN to the 05 inclusive; BCC sums the same bytes.

use bytes::{BufMut, BytesMut};

use crate::wire::{
    bcc, Seq, Status, ETX, LEN_OFFSET, MAX_REPLY_DATA, MAX_REQUEST_DATA, POSTAMBLE, REPLY_OVERHEAD,
    REQUEST_OVERHEAD, SOH, STATUS_SEPARATOR,
};

/// A frame that cannot be built because its DATA does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("command {cmd:#04x}: DATA is {len} bytes, a frame carries at most {max}")]
pub struct DataTooLong {
    /// Command byte of the frame.
    pub cmd: u8,
    /// Length of the DATA that was given.
    pub len: usize,
    /// Largest DATA the frame can carry.
    pub max: usize,
}

/// A host -> device command frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    seq: Seq,
    cmd: u8,
    data: Vec<u8>,
}

impl RequestFrame {
    /// A frame, if `data` fits (at most [`MAX_REQUEST_DATA`] bytes).
    pub fn new(seq: Seq, cmd: u8, data: Vec<u8>) -> Result<Self, DataTooLong> {
        check_len(cmd, data.len(), MAX_REQUEST_DATA)?;
        Ok(RequestFrame { seq, cmd, data })
    }

    /// A frame the decoder read off the wire. It cannot be too long: its DATA is what a LEN
    /// byte (at most 0xFF) counted, less the 4 other counted bytes, so at most
    /// [`MAX_REQUEST_DATA`].
    pub(crate) fn from_wire(seq: Seq, cmd: u8, data: Vec<u8>) -> Self {
        debug_assert!(data.len() <= MAX_REQUEST_DATA);
        RequestFrame { seq, cmd, data }
    }

    /// Sequence number.
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Command byte.
    pub fn cmd(&self) -> u8 {
        self.cmd
    }

    /// DATA bytes (escaped text fields).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Appends the frame's wire bytes to `dst`.
    pub fn encode(&self, dst: &mut BytesMut) {
        encode_frame(dst, self.seq, self.cmd, &self.data, None);
    }

    /// The frame's wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut buf = BytesMut::new();
        self.encode(&mut buf);
        buf.to_vec()
    }
}

/// A device -> host reply frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyFrame {
    seq: Seq,
    cmd: u8,
    data: Vec<u8>,
    status: Status,
}

impl ReplyFrame {
    /// A reply, if `data` fits (at most [`MAX_REPLY_DATA`] bytes).
    pub fn new(seq: Seq, cmd: u8, data: Vec<u8>, status: Status) -> Result<Self, DataTooLong> {
        check_len(cmd, data.len(), MAX_REPLY_DATA)?;
        Ok(ReplyFrame::from_wire(seq, cmd, data, status))
    }

    /// A reply the decoder read off the wire. It cannot be too long: its DATA is what a LEN
    /// byte (at most 0xFF) counted, less the 11 other counted bytes, so at most
    /// [`MAX_REPLY_DATA`].
    pub(crate) fn from_wire(seq: Seq, cmd: u8, data: Vec<u8>, status: Status) -> Self {
        debug_assert!(data.len() <= MAX_REPLY_DATA);
        ReplyFrame {
            seq,
            cmd,
            data,
            status,
        }
    }

    /// Sequence number (that of the command it answers).
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Command byte (that of the command it answers).
    pub fn cmd(&self) -> u8 {
        self.cmd
    }

    /// DATA bytes (escaped text fields).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The 6 status bytes.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Whether this reply answers `request` (same SEQ and CMD): a late reply to an earlier
    /// command must never be taken as the answer to the current one.
    pub fn answers(&self, request: &RequestFrame) -> bool {
        self.seq == request.seq && self.cmd == request.cmd
    }

    /// Appends the frame's wire bytes to `dst`.
    pub fn encode(&self, dst: &mut BytesMut) {
        encode_frame(dst, self.seq, self.cmd, &self.data, Some(&self.status));
    }

    /// The frame's wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut buf = BytesMut::new();
        self.encode(&mut buf);
        buf.to_vec()
    }
}

fn check_len(cmd: u8, len: usize, max: usize) -> Result<(), DataTooLong> {
    if len > max {
        return Err(DataTooLong { cmd, len, max });
    }
    Ok(())
}

fn encode_frame(dst: &mut BytesMut, seq: Seq, cmd: u8, data: &[u8], status: Option<&Status>) {
    let overhead = if status.is_some() {
        REPLY_OVERHEAD
    } else {
        REQUEST_OVERHEAD
    };
    let counted = overhead + data.len();
    // Constructors bound DATA, so `counted` fits in the LEN byte.
    let len = LEN_OFFSET.saturating_add(u8::try_from(counted).unwrap_or(u8::MAX));
    dst.reserve(counted + 6);
    dst.put_u8(SOH);
    let start = dst.len();
    dst.put_u8(len);
    dst.put_u8(seq.get());
    dst.put_u8(cmd);
    dst.put_slice(data);
    if let Some(status) = status {
        dst.put_u8(STATUS_SEPARATOR);
        dst.put_slice(&status.0);
    }
    dst.put_u8(POSTAMBLE);
    let check = bcc(&dst[start..]);
    dst.put_slice(&check);
    dst.put_u8(ETX);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_frame_bytes() {
        let frame = RequestFrame::new(Seq::FIRST, 0xC1, Vec::new()).unwrap();
        // 01 | LEN 0x24 | SEQ 0x20 | CMD 0xC1 | 05 | BCC of 24+20+C1+05 = 0x010A | 03
        assert_eq!(
            frame.to_bytes(),
            [0x01, 0x24, 0x20, 0xC1, 0x05, 0x30, 0x31, 0x30, 0x3A, 0x03]
        );
    }

    #[test]
    fn data_limits_follow_the_len_byte() {
        let seq = Seq::FIRST;
        assert!(RequestFrame::new(seq, 0x31, vec![b'a'; 219]).is_ok());
        assert_eq!(
            RequestFrame::new(seq, 0x31, vec![b'a'; 220]),
            Err(DataTooLong {
                cmd: 0x31,
                len: 220,
                max: 219
            })
        );
        let status = Status::default();
        assert!(ReplyFrame::new(seq, 0x33, vec![b'a'; 212], status).is_ok());
        assert!(ReplyFrame::new(seq, 0x33, vec![b'a'; 213], status).is_err());
        let longest = RequestFrame::new(seq, 0x31, vec![b'a'; 219]).unwrap();
        assert_eq!(longest.to_bytes()[1], 0xFF);
    }
}
