//! Shared module of the `properties_*.rs` tests: feeding a decoder the way `Framed` does (cut
//! anywhere, drained, ended) and the proptest strategies for frames and line noise. The
//! strategies for typed values (text, numbers, commands, replies) are in [`typed`].
//!
//! Included with `mod strategies;`; each test file uses only part of it.
#![allow(dead_code)]

pub mod typed;

use bytes::BytesMut;
use mcf_sfe::wire::{MAX_FRAME_LEN, MAX_REPLY_DATA, MAX_REQUEST_DATA, NAK, SOH, SYN};
use mcf_sfe::{DeviceCodec, FromDevice, ReplyFrame, RequestFrame, Seq, Status, ToHost};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use tokio_util::codec::{Decoder, Encoder};

// ---------------------------------------------------------------------------------------------
// Feeding a decoder

/// Feeds `bytes` to `codec` cut at `cuts`, draining it after each chunk as `Framed` does, then
/// ends the stream. Checks on the way that the buffer never holds a frame's worth of
/// undecided bytes and that every item consumed at least one byte (no endless loop).
pub fn feed<D: Decoder>(codec: &mut D, bytes: &[u8], cuts: &[Index]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.push(bytes.len());
    points.sort_unstable();
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    let mut start = 0;
    for end in points {
        buf.extend_from_slice(&bytes[start..end]);
        start = end;
        while let Some(item) = codec.decode(&mut buf).expect("decode never fails") {
            items.push(item);
            assert!(items.len() <= bytes.len(), "more items than bytes");
        }
        assert!(
            buf.len() < MAX_FRAME_LEN,
            "decoder waits with {} bytes buffered",
            buf.len()
        );
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("decode_eof never fails") {
        items.push(item);
        assert!(items.len() <= bytes.len() + 1, "more items than bytes");
    }
    assert!(buf.is_empty(), "bytes left after end of stream");
    items
}

pub fn decode_whole<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    feed(codec, bytes, &[])
}

pub fn to_device_bytes(items: &[FromDevice]) -> Vec<u8> {
    let mut buf = BytesMut::new();
    for item in items {
        let out = match item {
            FromDevice::Reply(frame) => ToHost::Reply(frame.clone()),
            FromDevice::Nak => ToHost::Nak,
            FromDevice::Syn => ToHost::Syn,
            FromDevice::Malformed(_) => unreachable!("not generated"),
        };
        DeviceCodec.encode(out, &mut buf).unwrap();
    }
    buf.to_vec()
}

// ---------------------------------------------------------------------------------------------
// Frame strategies

pub fn seq() -> impl Strategy<Value = Seq> {
    (0x20u8..=0xFF).prop_map(|b| Seq::new(b).unwrap())
}

pub fn request_frame() -> impl Strategy<Value = RequestFrame> {
    (seq(), any::<u8>(), vec(any::<u8>(), 0..=MAX_REQUEST_DATA))
        .prop_map(|(seq, cmd, data)| RequestFrame::new(seq, cmd, data).unwrap())
}

pub fn reply_frame() -> impl Strategy<Value = ReplyFrame> {
    (
        seq(),
        any::<u8>(),
        vec(any::<u8>(), 0..=MAX_REPLY_DATA),
        any::<[u8; 6]>(),
    )
        .prop_map(|(seq, cmd, data, status)| {
            ReplyFrame::new(seq, cmd, data, Status(status)).unwrap()
        })
}

/// What a device sends: replies and control bytes.
pub fn device_items() -> impl Strategy<Value = Vec<FromDevice>> {
    vec(
        prop_oneof![
            3 => reply_frame().prop_map(FromDevice::Reply),
            1 => Just(FromDevice::Nak),
            1 => Just(FromDevice::Syn),
        ],
        0..6,
    )
}

/// Bytes that look like pieces of frames more often than uniform bytes would.
pub fn line_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            3 => any::<u8>(),
            2 => select(vec![SOH, 0x03, 0x04, 0x05, NAK, SYN, 0x20, 0x24, 0x2B, 0x30, 0xFF]),
        ],
        0..max,
    )
}

/// Noise full of false starts: single SOH bytes, and SOH followed by a LEN byte (any, or one
/// that claims the largest frame), between ordinary noise bytes.
pub fn false_starts(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            3 => line_bytes(4),
            2 => Just(vec![SOH]),
            2 => any::<u8>().prop_map(|len| vec![SOH, len]),
            1 => (0x24u8..=0x30).prop_map(|len| vec![SOH, len]),
            1 => Just(vec![SOH, 0xFF]),
        ],
        0..max,
    )
    .prop_map(|pieces| pieces.concat())
}

pub fn soh_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == SOH).count()
}

/// The NAK and SYN items that `noise` yields towards the host (its other bytes are dropped).
pub fn control_items(noise: &[u8]) -> impl Iterator<Item = FromDevice> + '_ {
    noise.iter().filter_map(|&b| match b {
        NAK => Some(FromDevice::Nak),
        SYN => Some(FromDevice::Syn),
        _ => None,
    })
}

pub fn cuts() -> impl Strategy<Value = Vec<Index>> {
    vec(any::<Index>(), 0..8)
}
