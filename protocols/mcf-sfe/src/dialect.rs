//! What a box does where the protocol's public evidence disagrees (PROTOCOL.md §0, what real
//! boxes do differently, and §4): per-device choices the reader and the
//! writer follow. The defaults are this crate's reference (PROTOCOL.md as written); the gateway
//! picks its own defaults per device from the evidence.

use std::borrow::Cow;

/// Which escape stands for CR and which for LF inside a text field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LineBreaks {
    /// CR is `^xd;`, LF is `^xa;` (the character codes; PROTOCOL.md §4.1).
    #[default]
    Protocol,
    /// CR is `^xa;`, LF is `^xd;`: what every public driver of real boxes writes.
    Swapped,
}

impl LineBreaks {
    /// The name used in configuration files: `protocol` or `swapped`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineBreaks::Protocol => "protocol",
            LineBreaks::Swapped => "swapped",
        }
    }

    /// Reads a name written by [`LineBreaks::as_str`].
    pub fn from_name(name: &str) -> Option<LineBreaks> {
        match name {
            "protocol" => Some(LineBreaks::Protocol),
            "swapped" => Some(LineBreaks::Swapped),
            _ => None,
        }
    }

    /// `ch` as this convention means it after decoding an escape with the character codes.
    pub(crate) fn map(self, ch: char) -> char {
        match (self, ch) {
            (LineBreaks::Swapped, '\r') => '\n',
            (LineBreaks::Swapped, '\n') => '\r',
            (_, other) => other,
        }
    }

    /// DATA encoded with the character codes (this crate's encoders), rewritten for this
    /// convention. Only the exact sequences the encoders write (`^xd;`, `^xa;`) stand for
    /// CR and LF: a `^` typed in a text is itself escaped (`^x5e;`), so nothing else is touched.
    pub fn outgoing<'a>(self, data: &'a [u8]) -> Cow<'a, [u8]> {
        match self {
            LineBreaks::Protocol => Cow::Borrowed(data),
            LineBreaks::Swapped => Cow::Owned(swap_escapes(data)),
        }
    }
}

/// Exchanges every `^xd;` and `^xa;` (any case of the hex digit).
fn swap_escapes(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let window = data.get(i..i + 4);
        let swapped = match window {
            Some([b'^', b'x', d, b';']) if d.eq_ignore_ascii_case(&b'd') => Some(b'a'),
            Some([b'^', b'x', a, b';']) if a.eq_ignore_ascii_case(&b'a') => Some(b'd'),
            _ => None,
        };
        match swapped {
            Some(digit) => {
                out.extend_from_slice(&[b'^', b'x', digit, b';']);
                i += 4;
            }
            None => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    out
}

/// How one box writes and reads what the protocol leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dialect {
    /// Escapes of CR and LF.
    pub line_breaks: LineBreaks,
    /// A reply with empty DATA and the refusal status bit set (the simulator's S0.1,
    /// [`crate::StatusFlag::CommandRefused`]) is a refusal without text, as some firmware
    /// answers instead of `E:`. Off: such a reply is read as if the bit were clear.
    pub refusal_by_status: bool,
}

impl Default for Dialect {
    fn default() -> Self {
        Dialect {
            line_breaks: LineBreaks::Protocol,
            refusal_by_status: true,
        }
    }
}

/// DATA as text: UTF-8 when it is, else Windows-1252 (the ANSI code page some firmware
/// writes: `É` as the single byte 0xC9). The flag says the fallback was used. Numbers and
/// field separators are ASCII in both, so only texts can differ.
pub fn decode_text(data: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(data) {
        Ok(text) => (Cow::Borrowed(text), false),
        Err(_) => (
            Cow::Owned(data.iter().map(|&b| windows_1252(b)).collect()),
            true,
        ),
    }
}

/// One Windows-1252 byte as a character (the five unassigned bytes as U+FFFD).
fn windows_1252(byte: u8) -> char {
    const HIGH: [u16; 32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
        0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ];
    match byte {
        0x80..=0x9F => {
            char::from_u32(u32::from(HIGH[usize::from(byte - 0x80)])).unwrap_or('\u{FFFD}')
        }
        other => char::from(other),
    }
}

/// `text` in Windows-1252, for a simulated box that writes that code page; a character it
/// cannot hold becomes `?`.
pub fn encode_windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match u32::from(c) {
            code @ (0x00..=0x7F | 0xA0..=0xFF) => code as u8,
            _ => (0x80..=0x9Fu8)
                .find(|&b| windows_1252(b) == c && c != '\u{FFFD}')
                .unwrap_or(b'?'),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapped_line_breaks_exchange_only_the_two_escapes() {
        let data = b"A^xd;^xa;B^x5e;xd;^xD;";
        assert_eq!(
            LineBreaks::Swapped.outgoing(data).as_ref(),
            b"A^xa;^xd;B^x5e;xd;^xa;"
        );
        assert_eq!(LineBreaks::Protocol.outgoing(data).as_ref(), data);
        assert_eq!(LineBreaks::from_name("swapped"), Some(LineBreaks::Swapped));
        assert_eq!(LineBreaks::from_name("SWAPPED"), None);
    }

    #[test]
    fn text_that_is_not_utf8_is_read_as_windows_1252() {
        assert_eq!(decode_text("É".as_bytes()), (Cow::Borrowed("É"), false));
        let (text, fallback) = decode_text(b"INCOH\xC9RENT \x80 \x9C\x81");
        assert!(fallback);
        assert_eq!(text, "INCOHÉRENT € œ\u{FFFD}");
        assert_eq!(
            encode_windows_1252("INCOHÉRENT € œ ✓"),
            b"INCOH\xC9RENT \x80 \x9C ?"
        );
    }
}
