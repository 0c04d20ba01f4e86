//! `tokio_util::codec` pairs for both ends of the link.
//!
//! [`HostCodec`] is the gateway's end: it encodes [`RequestFrame`]s and decodes what the
//! device sends ([`FromDevice`]). [`DeviceCodec`] is the device's end (the simulator's):
//! it decodes [`FromHost`] and encodes [`ToHost`]. Both share one frame decoder.
//!
//! The decoders never return `Err` for bad bytes (tokio-util's `Framed` ends the stream after
//! an `Err`): a broken frame is an item, [`FromDevice::Malformed`] / [`FromHost::Malformed`].
//! Bytes before a SOH that are not a control byte are dropped (resync). A start that turns out
//! not to be a frame (bad LEN, structure, BCC or SEQ; stalled; cut by the end of the stream)
//! drops only its SOH, and the bytes behind it are scanned again: a false start never hides
//! the frame that follows it. A frame is at most [`MAX_FRAME_LEN`](crate::wire::MAX_FRAME_LEN)
//! bytes because LEN is a single byte, so the buffer never holds more than one frame's worth
//! of undecided bytes.

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::frame::{ReplyFrame, RequestFrame};
use crate::wire::{
    decode_bcc, encode_bcc, Seq, Status, BCC_LEN, ETX, FRAME_ENVELOPE, LEN_OFFSET, NAK, POSTAMBLE,
    REPLY_OVERHEAD, REQUEST_OVERHEAD, SOH, STATUS_LEN, STATUS_SEPARATOR, SYN,
};

/// Why bytes that started like a frame are not one. Reported as an item, never as a
/// stream-ending error; the device answers it with NAK, the host resends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// LEN is too small to hold even an empty frame of this direction.
    #[error("LEN byte {0:#04x} is too small for a frame")]
    BadLength(u8),
    /// The bytes where the separator, POSTAMBLE or ETX belong hold something else.
    #[error(
        "frame structure broken: expected {expected:#04x} at offset {offset}, found {found:#04x}"
    )]
    BadStructure {
        /// Offset from SOH.
        offset: usize,
        /// The control byte that belongs there.
        expected: u8,
        /// The byte that is there.
        found: u8,
    },
    /// SEQ below 0x20.
    #[error("SEQ byte {0:#04x} is below 0x20")]
    BadSeq(u8),
    /// The block check does not match the bytes.
    #[error("checksum mismatch on SEQ {seq:#04x} CMD {cmd:#04x}: frame says {received}, bytes sum to {computed:#06x}")]
    BadChecksum {
        /// SEQ byte as received.
        seq: u8,
        /// CMD byte as received.
        cmd: u8,
        /// The 4 BCC bytes as received, as text.
        received: String,
        /// The check computed over the received bytes.
        computed: u16,
    },
    /// The stream ended in the middle of a frame.
    #[error("stream ended {0} bytes into a frame")]
    Truncated(usize),
    /// No byte came for the inter-byte timeout in the middle of a frame.
    #[error("no byte for the inter-byte timeout {0} bytes into a frame")]
    Stalled(usize),
}

/// Gives up on an incomplete frame at the head of `buf` after the inter-byte timeout
/// ([`INTER_BYTE_TIMEOUT`](crate::wire::INTER_BYTE_TIMEOUT)): drops its SOH so that the
/// decoder rescans the bytes behind it. `None` when `buf` holds no partial frame.
///
/// Call it when the line has been quiet for the timeout and the decoder still waits; then
/// decode again (the bytes behind the SOH may hold whole frames).
pub fn drop_stalled(buf: &mut BytesMut) -> Option<FrameError> {
    drop_partial(buf).map(FrameError::Stalled)
}

/// Drops the SOH of the partial frame at the head of `buf` and returns how many bytes the
/// buffer held; `None` (and nothing dropped) when `buf` does not start with a SOH.
fn drop_partial(buf: &mut BytesMut) -> Option<usize> {
    if buf.first() != Some(&SOH) {
        return None;
    }
    let held = buf.len();
    buf.advance(1);
    Some(held)
}

/// What the host reads from the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromDevice {
    /// A well-formed reply frame.
    Reply(ReplyFrame),
    /// The device did not understand the last frame: send it again, same SEQ.
    Nak,
    /// The device is busy with the command: keep waiting.
    Syn,
    /// Bytes that started a frame but are not a valid one.
    Malformed(FrameError),
}

/// What the device reads from the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromHost {
    /// A well-formed command frame.
    Request(RequestFrame),
    /// Bytes that started a frame but are not a valid one: answer NAK.
    Malformed(FrameError),
}

/// What the device writes to the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToHost {
    /// A reply frame.
    Reply(ReplyFrame),
    /// The single byte NAK.
    Nak,
    /// The single byte SYN.
    Syn,
}

/// The host's end of the link (the gateway's).
#[derive(Debug, Default, Clone, Copy)]
pub struct HostCodec;

/// The device's end of the link (the simulator's).
#[derive(Debug, Default, Clone, Copy)]
pub struct DeviceCodec;

/// One decoded frame, before it is given its direction's type. Its DATA fits that type by
/// construction: it is what the frame's LEN byte counted, less the direction's overhead.
struct RawFrame {
    seq: Seq,
    cmd: u8,
    data: Vec<u8>,
    status: Option<Status>,
}

/// Which bytes outside a frame mean something.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToDevice,
    ToHost,
}

enum Decoded {
    Frame(RawFrame),
    Nak,
    Syn,
    Malformed(FrameError),
}

/// The decoder both directions share. `None` means: wait for more bytes.
fn decode_one(buf: &mut BytesMut, direction: Direction) -> Option<Decoded> {
    if let Some(control) = resync(buf, direction) {
        return Some(control);
    }
    let checked = frame_length(buf, direction)?
        .and_then(|total| check_frame(buf, direction, total).map(|seq| (total, seq)));
    match checked {
        Ok((total, seq)) => Some(take_frame(buf, direction, total, seq)),
        Err(error) => {
            // Not a frame after all, or a corrupted one: drop only its SOH and rescan.
            buf.advance(1);
            Some(Decoded::Malformed(error))
        }
    }
}

/// Drops everything before the next SOH, answering control bytes on the way (host end): a
/// NAK or SYN item, or `None` at an SOH or when the buffer runs out.
fn resync(buf: &mut BytesMut, direction: Direction) -> Option<Decoded> {
    while let Some(&first) = buf.first() {
        if first == SOH {
            return None;
        }
        buf.advance(1);
        if direction == Direction::ToHost {
            match first {
                NAK => return Some(Decoded::Nak),
                SYN => return Some(Decoded::Syn),
                _ => {}
            }
        }
    }
    None
}

/// The whole length of the frame whose SOH heads `buf`, from its LEN: `None` to wait for
/// more bytes (an empty buffer included), an error when LEN cannot be a frame's.
fn frame_length(buf: &mut BytesMut, direction: Direction) -> Option<Result<usize, FrameError>> {
    let &len = buf.get(1)?;
    let overhead = match direction {
        Direction::ToDevice => REQUEST_OVERHEAD,
        Direction::ToHost => REPLY_OVERHEAD,
    };
    let counted = usize::from(len.saturating_sub(LEN_OFFSET));
    if len < LEN_OFFSET || counted < overhead {
        return Some(Err(FrameError::BadLength(len)));
    }
    let total = counted + FRAME_ENVELOPE;
    if buf.len() < total {
        buf.reserve(total - buf.len());
        return None;
    }
    Some(Ok(total))
}

/// Checks the `total` bytes at the head of `buf` as a frame: envelope (postamble, ETX, the
/// status separator of a reply), BCC, SEQ; its SEQ when all hold.
fn check_frame(buf: &BytesMut, direction: Direction, total: usize) -> Result<Seq, FrameError> {
    let postamble_at = total - FRAME_ENVELOPE;
    let mut expected = vec![(postamble_at, POSTAMBLE), (total - 1, ETX)];
    if direction == Direction::ToHost {
        expected.push((postamble_at - STATUS_LEN - 1, STATUS_SEPARATOR));
    }
    for (offset, byte) in expected {
        if buf[offset] != byte {
            // Not a frame after all: this SOH was noise. Look for the next one.
            return Err(FrameError::BadStructure {
                offset,
                expected: byte,
                found: buf[offset],
            });
        }
    }
    // From here on the frame's envelope is right; a bad BCC or SEQ still drops only the SOH.
    // Either the SOH was noise whose LEN happened to land on a 05 and a 03 (`01 26` before a
    // C1h frame does), and the frame behind it must not be lost; or a real frame was corrupted
    // on the line, and its other bytes hold no SOH (LEN, SEQ, CMD and status are >= 0x20, BCC
    // is 0x30..=0x3F, DATA is text), so the rescan skips them as noise: still one report.
    let (seq, cmd) = (buf[2], buf[3]);
    let mut received = [0u8; BCC_LEN];
    received.copy_from_slice(&buf[postamble_at + 1..postamble_at + 1 + BCC_LEN]);
    let computed = buf[1..=postamble_at]
        .iter()
        .fold(0u16, |acc, &b| acc.wrapping_add(u16::from(b)));
    if decode_bcc(&received) != Some(computed) {
        debug_assert_ne!(received, encode_bcc(computed));
        return Err(FrameError::BadChecksum {
            seq,
            cmd,
            received: String::from_utf8_lossy(&received).into_owned(),
            computed,
        });
    }
    Seq::new(seq).ok_or(FrameError::BadSeq(seq))
}

/// Takes the checked frame of `total` bytes off the head of `buf`.
fn take_frame(buf: &mut BytesMut, direction: Direction, total: usize, seq: Seq) -> Decoded {
    let postamble_at = total - FRAME_ENVELOPE;
    let frame = buf.split_to(total);
    let (data_end, status) = match direction {
        Direction::ToDevice => (postamble_at, None),
        Direction::ToHost => {
            let status_at = postamble_at - STATUS_LEN;
            let mut status = [0u8; STATUS_LEN];
            status.copy_from_slice(&frame[status_at..postamble_at]);
            (status_at - 1, Some(Status(status)))
        }
    };
    Decoded::Frame(RawFrame {
        seq,
        cmd: frame[3],
        data: frame[4..data_end].to_vec(),
        status,
    })
}

/// At end of stream. Complete frames and control bytes still decode; then what is left is
/// either nothing or a partial frame at the head of the buffer (`decode_one` never waits on
/// anything else). Its SOH is dropped and reported as Truncated, and the next call rescans the
/// bytes behind it, which may hold whole frames (`01 FF` then a frame). Every call that returns
/// an item consumes at least one byte, so calling until `None` (as `Framed` does) terminates.
fn decode_tail(buf: &mut BytesMut, direction: Direction) -> Option<Decoded> {
    if let Some(item) = decode_one(buf, direction) {
        return Some(item);
    }
    debug_assert!(buf.is_empty() || buf[0] == SOH);
    drop_partial(buf).map(|held| Decoded::Malformed(FrameError::Truncated(held)))
}

fn to_device_item(decoded: Decoded) -> FromDevice {
    match decoded {
        Decoded::Frame(raw) => {
            let status = raw.status.unwrap_or_default();
            FromDevice::Reply(ReplyFrame::from_wire(raw.seq, raw.cmd, raw.data, status))
        }
        Decoded::Nak => FromDevice::Nak,
        Decoded::Syn => FromDevice::Syn,
        Decoded::Malformed(error) => FromDevice::Malformed(error),
    }
}

fn to_host_item(decoded: Decoded) -> Option<FromHost> {
    match decoded {
        Decoded::Frame(raw) => Some(FromHost::Request(RequestFrame::from_wire(
            raw.seq, raw.cmd, raw.data,
        ))),
        // The direction never yields these towards the device.
        Decoded::Nak | Decoded::Syn => None,
        Decoded::Malformed(error) => Some(FromHost::Malformed(error)),
    }
}

impl Decoder for HostCodec {
    type Item = FromDevice;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<FromDevice>, std::io::Error> {
        Ok(decode_one(buf, Direction::ToHost).map(to_device_item))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<FromDevice>, std::io::Error> {
        Ok(decode_tail(buf, Direction::ToHost).map(to_device_item))
    }
}

impl Decoder for DeviceCodec {
    type Item = FromHost;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<FromHost>, std::io::Error> {
        Ok(decode_one(buf, Direction::ToDevice).and_then(to_host_item))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<FromHost>, std::io::Error> {
        Ok(decode_tail(buf, Direction::ToDevice).and_then(to_host_item))
    }
}

impl Encoder<&RequestFrame> for HostCodec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: &RequestFrame, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        frame.encode(dst);
        Ok(())
    }
}

impl Encoder<RequestFrame> for HostCodec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: RequestFrame, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        frame.encode(dst);
        Ok(())
    }
}

impl Encoder<ToHost> for DeviceCodec {
    type Error = std::io::Error;

    fn encode(&mut self, item: ToHost, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        match item {
            ToHost::Reply(frame) => frame.encode(dst),
            ToHost::Nak => dst.extend_from_slice(&[NAK]),
            ToHost::Syn => dst.extend_from_slice(&[SYN]),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
