//! `tokio_util::codec` pairs for both ends of the link.
//!
//! [`HostCodec`] is the gateway's end: it encodes [`RequestFrame`]s and decodes what the
//! device sends ([`FromDevice`]). [`DeviceCodec`] is the device's end (the simulator's):
//! it decodes [`FromHost`] and encodes [`ToHost`]. Both share one frame decoder.
//!
//! The decoders never return `Err` for bad bytes (tokio-util's `Framed` ends the stream after
//! an `Err`): a broken frame is an item, [`FromDevice::Malformed`] / [`FromHost::Malformed`].
//! Bytes before a SOH that are not a control byte are dropped (resync). A frame is at most
//! [`MAX_FRAME_LEN`](crate::wire::MAX_FRAME_LEN) bytes because LEN is a single byte, so the
//! buffer never holds more than one frame's worth of undecided bytes.

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::frame::{ReplyFrame, RequestFrame};
use crate::wire::{
    decode_bcc, encode_bcc, Seq, Status, ETX, FRAME_ENVELOPE, LEN_OFFSET, NAK, POSTAMBLE,
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
    if buf.first() != Some(&SOH) {
        return None;
    }
    let held = buf.len();
    buf.advance(1);
    Some(FrameError::Stalled(held))
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

/// One decoded frame, before it is given its direction's type.
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
    // Resync: drop everything before the next SOH, answering control bytes on the way.
    loop {
        let first = *buf.first()?;
        if first == SOH {
            break;
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
    let &len = buf.get(1)?;
    let overhead = match direction {
        Direction::ToDevice => REQUEST_OVERHEAD,
        Direction::ToHost => REPLY_OVERHEAD,
    };
    let counted = usize::from(len.saturating_sub(LEN_OFFSET));
    if len < LEN_OFFSET || counted < overhead {
        buf.advance(1);
        return Some(Decoded::Malformed(FrameError::BadLength(len)));
    }
    let total = counted + FRAME_ENVELOPE;
    if buf.len() < total {
        buf.reserve(total - buf.len());
        return None;
    }
    let postamble_at = counted;
    let mut expected = vec![(postamble_at, POSTAMBLE), (total - 1, ETX)];
    if direction == Direction::ToHost {
        expected.push((postamble_at - STATUS_LEN - 1, STATUS_SEPARATOR));
    }
    for (offset, byte) in expected {
        if buf[offset] != byte {
            let found = buf[offset];
            // Not a frame after all: this SOH was noise. Look for the next one.
            buf.advance(1);
            return Some(Decoded::Malformed(FrameError::BadStructure {
                offset,
                expected: byte,
                found,
            }));
        }
    }
    let frame = buf.split_to(total);
    let (seq, cmd) = (frame[2], frame[3]);
    let mut received = [0u8; 4];
    received.copy_from_slice(&frame[postamble_at + 1..postamble_at + 5]);
    let computed = frame[1..=postamble_at]
        .iter()
        .fold(0u16, |acc, &b| acc.wrapping_add(u16::from(b)));
    if decode_bcc(&received) != Some(computed) {
        debug_assert_ne!(received, encode_bcc(computed));
        return Some(Decoded::Malformed(FrameError::BadChecksum {
            seq,
            cmd,
            received: String::from_utf8_lossy(&received).into_owned(),
            computed,
        }));
    }
    let Some(seq) = Seq::new(seq) else {
        return Some(Decoded::Malformed(FrameError::BadSeq(seq)));
    };
    let (data_end, status) = match direction {
        Direction::ToDevice => (postamble_at, None),
        Direction::ToHost => {
            let status_at = postamble_at - STATUS_LEN;
            let mut status = [0u8; STATUS_LEN];
            status.copy_from_slice(&frame[status_at..postamble_at]);
            (status_at - 1, Some(Status(status)))
        }
    };
    Some(Decoded::Frame(RawFrame {
        seq,
        cmd,
        data: frame[4..data_end].to_vec(),
        status,
    }))
}

/// At end of stream: whatever is left is a truncated frame (or dropped noise).
fn decode_tail(buf: &mut BytesMut, direction: Direction) -> Option<Decoded> {
    if let Some(item) = decode_one(buf, direction) {
        return Some(item);
    }
    let left = buf.len();
    buf.clear();
    (left > 0).then_some(Decoded::Malformed(FrameError::Truncated(left)))
}

fn to_device_item(decoded: Decoded) -> FromDevice {
    match decoded {
        Decoded::Frame(raw) => {
            let status = raw.status.unwrap_or_default();
            match ReplyFrame::new(raw.seq, raw.cmd, raw.data, status) {
                Ok(frame) => FromDevice::Reply(frame),
                Err(_) => FromDevice::Malformed(FrameError::BadLength(u8::MAX)),
            }
        }
        Decoded::Nak => FromDevice::Nak,
        Decoded::Syn => FromDevice::Syn,
        Decoded::Malformed(error) => FromDevice::Malformed(error),
    }
}

fn to_host_item(decoded: Decoded) -> Option<FromHost> {
    match decoded {
        Decoded::Frame(raw) => Some(match RequestFrame::new(raw.seq, raw.cmd, raw.data) {
            Ok(frame) => FromHost::Request(frame),
            Err(_) => FromHost::Malformed(FrameError::BadLength(u8::MAX)),
        }),
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
mod tests {
    use super::*;

    fn decode_all<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
    where
        D::Error: std::fmt::Debug,
    {
        let mut buf = BytesMut::from(bytes);
        let mut items = Vec::new();
        while let Some(item) = codec.decode(&mut buf).unwrap() {
            items.push(item);
        }
        items
    }

    fn c1_request() -> RequestFrame {
        RequestFrame::new(Seq::FIRST, 0xC1, Vec::new()).unwrap()
    }

    #[test]
    fn garbage_before_a_frame_is_dropped() {
        let mut bytes = vec![0x00, 0xFF, 0x42, 0x03];
        bytes.extend(c1_request().to_bytes());
        assert_eq!(
            decode_all(&mut DeviceCodec, &bytes),
            vec![FromHost::Request(c1_request())]
        );
    }

    #[test]
    fn nak_and_syn_are_items_towards_the_host() {
        let reply = ReplyFrame::new(Seq::FIRST, 0xC1, b"x".to_vec(), Status::default()).unwrap();
        let mut bytes = vec![SYN, SYN, NAK];
        bytes.extend(reply.to_bytes());
        assert_eq!(
            decode_all(&mut HostCodec, &bytes),
            vec![
                FromDevice::Syn,
                FromDevice::Syn,
                FromDevice::Nak,
                FromDevice::Reply(reply)
            ]
        );
    }

    #[test]
    fn bad_checksum_is_an_item_and_the_next_frame_still_decodes() {
        let mut bytes = c1_request().to_bytes();
        bytes[5] ^= 0x01; // first BCC nibble
        bytes.extend(c1_request().to_bytes());
        let items = decode_all(&mut DeviceCodec, &bytes);
        assert!(matches!(
            items[0],
            FromHost::Malformed(FrameError::BadChecksum {
                seq: 0x20,
                cmd: 0xC1,
                ..
            })
        ));
        assert_eq!(items[1], FromHost::Request(c1_request()));
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn a_partial_frame_waits_and_a_truncated_one_is_reported_at_eof() {
        let bytes = c1_request().to_bytes();
        let mut buf = BytesMut::from(&bytes[..6]);
        assert_eq!(DeviceCodec.decode(&mut buf).unwrap(), None);
        assert_eq!(
            DeviceCodec.decode_eof(&mut buf).unwrap(),
            Some(FromHost::Malformed(FrameError::Truncated(6)))
        );
        assert_eq!(DeviceCodec.decode_eof(&mut buf).unwrap(), None);
    }

    #[test]
    fn a_stalled_false_start_is_dropped_and_the_frame_behind_it_decodes() {
        // A stray SOH with the largest LEN, then a whole frame: the decoder waits for 229 bytes.
        let mut buf = BytesMut::from(&[SOH, 0xFF][..]);
        buf.extend_from_slice(&c1_request().to_bytes());
        assert_eq!(DeviceCodec.decode(&mut buf).unwrap(), None);
        assert_eq!(drop_stalled(&mut buf), Some(FrameError::Stalled(12)));
        assert_eq!(
            DeviceCodec.decode(&mut buf).unwrap(),
            Some(FromHost::Request(c1_request()))
        );
        assert_eq!(drop_stalled(&mut buf), None);
    }

    #[test]
    fn a_false_soh_is_skipped() {
        // SOH followed by a LEN that claims 5 counted bytes, then a real frame.
        let mut bytes = vec![SOH, 0x25, 0x00, 0x00];
        bytes.extend(c1_request().to_bytes());
        let items = decode_all(&mut DeviceCodec, &bytes);
        assert!(matches!(
            items[0],
            FromHost::Malformed(FrameError::BadStructure { .. })
        ));
        assert_eq!(items.last(), Some(&FromHost::Request(c1_request())));
    }
}
