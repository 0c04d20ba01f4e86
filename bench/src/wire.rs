//! What the captured bytes of a line were: frames per direction, decoded with the protocol
//! crate's own codecs.

use std::collections::BTreeMap;

use bytes::BytesMut;
use mcf_sfe::{DeviceCodec, FromDevice, FromHost, HostCodec};
use serde::Serialize;
use tokio_util::codec::Decoder;

use crate::line::Captured;

/// Frames and bytes of one exchange (an invoice).
#[derive(Debug, Default, Clone, Serialize)]
pub struct Frames {
    pub request_frames: u64,
    pub request_bytes: u64,
    pub reply_frames: u64,
    pub reply_bytes: u64,
    /// NAK, SYN and undecodable bytes, both ways.
    pub other_bytes: u64,
    /// Per command code (hex): frames sent, request bytes, reply bytes.
    pub by_command: BTreeMap<String, (u64, u64, u64)>,
}

/// Decodes both directions.
pub fn frames(captured: &Captured) -> Frames {
    let mut out = Frames::default();
    let mut buf = BytesMut::from(&captured.to_device[..]);
    let mut accounted = 0u64;
    while let Ok(Some(item)) = DeviceCodec.decode(&mut buf) {
        if let FromHost::Request(frame) = item {
            let len = frame.to_bytes().len() as u64;
            out.request_frames += 1;
            out.request_bytes += len;
            accounted += len;
            let entry = out
                .by_command
                .entry(format!("{:02X}h", frame.cmd()))
                .or_default();
            entry.0 += 1;
            entry.1 += len;
        }
    }
    out.other_bytes += captured.to_device.len() as u64 - accounted;
    let mut buf = BytesMut::from(&captured.to_host[..]);
    let mut accounted = 0u64;
    while let Ok(Some(item)) = HostCodec.decode(&mut buf) {
        if let FromDevice::Reply(frame) = item {
            let len = frame.to_bytes().len() as u64;
            out.reply_frames += 1;
            out.reply_bytes += len;
            accounted += len;
            out.by_command
                .entry(format!("{:02X}h", frame.cmd()))
                .or_default()
                .2 += len;
        }
    }
    out.other_bytes += captured.to_host.len() as u64 - accounted;
    out
}
