//! The wire capture format: every byte both ways between a host and a box, with the time it
//! crossed, as plain text. The gateway writes it (`serve --capture`, `device probe
//! --capture`); tests load it as a golden exchange, so a capture from a real box becomes a
//! regression test (a replaying box serves it again: `emcf-sim` `replay`).
//!
//! ```text
//! # emcf wire capture 1
//! # started 2026-11-23T09:14:02.120Z
//! # device shop /dev/serial/by-id/usb-FTDI-if00-port0 115200 baud, SEQ 20-FF, line breaks swapped, status map simulator, SEQ replay false
//! 0.000000 shop open
//! 0.000231 shop > 01 24 21 C2 05 30 31 30 3C 03
//! 0.004102 shop < 01 31 21 C2 31 2C ...
//! 61.250000 shop close end of stream (read returned 0 bytes)
//! ```
//!
//! - The first line is `# emcf wire capture 1` (the format's version). Other lines starting
//!   with `#` are comments: the header lines above, notes a person adds, and `# expect ...`
//!   lines that a regression test checks (see the gateway's `tests/device/captures.rs`).
//! - Every other line is `<seconds> <device> <event>`: seconds since the capture started,
//!   from a monotonic clock, with 6 decimals; the device's configured name; then `open`,
//!   `close <why>`, `> <hex bytes>` (host to box, as written) or `< <hex bytes>` (box to
//!   host, as read: one line per read, so the grouping shows how the bytes arrived).
//! - No secret crosses this wire: it carries invoices and the box's answers, never API keys.

use std::fmt::Write as _;
use std::time::Duration;

/// The first line of every capture.
pub const MAGIC: &str = "# emcf wire capture 1";

/// What happened on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The port was opened.
    Open,
    /// The port was closed, and why.
    Close(String),
    /// Bytes the host wrote.
    ToDevice(Vec<u8>),
    /// Bytes the host read.
    FromDevice(Vec<u8>),
}

/// One line of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Time since the capture started.
    pub at: Duration,
    /// The device's name.
    pub device: String,
    /// What happened.
    pub event: Event,
}

/// A whole capture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    /// The comment lines, without their `#` and leading space, in order.
    pub comments: Vec<String>,
    /// The events, in order.
    pub lines: Vec<Line>,
}

/// A line that does not follow the format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("capture line {line}: {reason}")]
pub struct CaptureError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// The text of one event line (no newline). A device name never holds a space (the
/// gateway's names are letters, digits, `-` and `_`).
pub fn format_line(at: Duration, device: &str, event: &Event) -> String {
    let mut line = format!("{}.{:06} {device} ", at.as_secs(), at.subsec_micros());
    match event {
        Event::Open => line.push_str("open"),
        Event::Close(why) => {
            let _ = write!(line, "close {}", why.replace(['\n', '\r'], " "));
        }
        Event::ToDevice(bytes) => push_bytes(&mut line, '>', bytes),
        Event::FromDevice(bytes) => push_bytes(&mut line, '<', bytes),
    }
    line
}

fn push_bytes(line: &mut String, arrow: char, bytes: &[u8]) {
    line.push(arrow);
    for b in bytes {
        let _ = write!(line, " {b:02X}");
    }
}

/// Reads a capture.
pub fn parse(text: &str) -> Result<Capture, CaptureError> {
    let mut capture = Capture::default();
    let mut lines = text.lines().enumerate();
    let first = lines.next().map(|(_, l)| l.trim_end());
    if first != Some(MAGIC) {
        return Err(CaptureError {
            line: 1,
            reason: format!("the first line must be {MAGIC:?}"),
        });
    }
    for (index, raw) in lines {
        let at_line = |reason: String| CaptureError {
            line: index + 1,
            reason,
        };
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            capture.comments.push(comment.trim().to_owned());
            continue;
        }
        let mut parts = line.splitn(3, ' ');
        let (Some(time), Some(device), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(at_line("expected `<seconds> <device> <event>`".to_owned()));
        };
        let at = parse_time(time).ok_or_else(|| at_line(format!("bad time {time:?}")))?;
        let (word, payload) = rest.split_once(' ').unwrap_or((rest, ""));
        let event = match word {
            "open" => Event::Open,
            "close" => Event::Close(payload.to_owned()),
            ">" => Event::ToDevice(parse_hex(payload).map_err(at_line)?),
            "<" => Event::FromDevice(parse_hex(payload).map_err(at_line)?),
            other => return Err(at_line(format!("unknown event {other:?}"))),
        };
        capture.lines.push(Line {
            at,
            device: device.to_owned(),
            event,
        });
    }
    Ok(capture)
}

fn parse_time(text: &str) -> Option<Duration> {
    let (secs, micros) = text.split_once('.')?;
    if micros.len() != 6 {
        return None;
    }
    Duration::from_secs(secs.parse().ok()?).checked_add(Duration::from_micros(micros.parse().ok()?))
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    text.split_whitespace()
        .map(|token| {
            (token.len() == 2)
                .then(|| u8::from_str_radix(token, 16).ok())
                .flatten()
                .ok_or_else(|| format!("{token:?} is not a two-digit hex byte"))
        })
        .collect()
}

impl Capture {
    /// The bytes each way for `device`, concatenated in order.
    pub fn streams(&self, device: &str) -> (Vec<u8>, Vec<u8>) {
        let mut to_device = Vec::new();
        let mut from_device = Vec::new();
        for line in self.lines.iter().filter(|l| l.device == device) {
            match &line.event {
                Event::ToDevice(bytes) => to_device.extend_from_slice(bytes),
                Event::FromDevice(bytes) => from_device.extend_from_slice(bytes),
                Event::Open | Event::Close(_) => {}
            }
        }
        (to_device, from_device)
    }

    /// The device names, in order of first appearance.
    pub fn devices(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for line in &self.lines {
            if !names.contains(&line.device) {
                names.push(line.device.clone());
            }
        }
        names
    }

    /// The comments that start with `expect `, without that word.
    pub fn expectations(&self) -> Vec<&str> {
        self.comments
            .iter()
            .filter_map(|c| c.strip_prefix("expect "))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_through_the_text() {
        let events = [
            Event::Open,
            Event::ToDevice(vec![0x01, 0x24, 0x21, 0xC2]),
            Event::FromDevice(vec![0x16]),
            Event::Close("end of\nstream".into()),
        ];
        let mut text = format!("{MAGIC}\n# started now\n");
        for (i, event) in events.iter().enumerate() {
            let at = Duration::from_micros(1_500_000 * i as u64 + 7);
            text.push_str(&format_line(at, "shop", event));
            text.push('\n');
        }
        text.push_str("# expect certified 1/1 FV\n");
        let capture = parse(&text).unwrap();
        assert_eq!(capture.lines.len(), 4);
        assert_eq!(capture.lines[1].at, Duration::from_micros(1_500_007));
        assert_eq!(capture.lines[3].event, Event::Close("end of stream".into()));
        assert_eq!(capture.expectations(), ["certified 1/1 FV"]);
        assert_eq!(
            capture.streams("shop"),
            (vec![1, 0x24, 0x21, 0xC2], vec![0x16])
        );
        assert_eq!(capture.devices(), ["shop"]);
        assert_eq!(
            format_line(Duration::ZERO, "a", &Event::FromDevice(vec![])),
            "0.000000 a <"
        );
    }

    #[test]
    fn malformed_captures_are_refused_with_their_line() {
        assert_eq!(parse("hello").unwrap_err().line, 1);
        let bad = format!("{MAGIC}\n0.000000 shop > 0G\n");
        assert_eq!(parse(&bad).unwrap_err().line, 2);
        let bad = format!("{MAGIC}\n1.5 shop open\n");
        assert!(parse(&bad).is_err());
    }
}
