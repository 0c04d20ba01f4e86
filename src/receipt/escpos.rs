//! The fiscal block as ESC/POS bytes for a 58 or 80 mm receipt printer (Epson TM-T20/T88 and
//! the many printers that follow them), the QR code printed by the printer itself.
//!
//! # Byte layout
//!
//! ```text
//! 1B 40                      ESC @        initialize (font A, left, no emphasis)
//! 1B 61 01                   ESC a 1      centre
//! 1B 45 01 <title> 0A        ESC E 1      emphasis on: the title (word-wrapped), LF
//! 1B 45 00                   ESC E 0      emphasis off
//! 0A                                      a blank line
//! 1D 28 6B 04 00 31 41 32 00 GS ( k fn 165: QR model 2
//! 1D 28 6B 03 00 31 43 nn    GS ( k fn 167: module size nn dots (06 on 80 mm, 04 on 58 mm)
//! 1D 28 6B 03 00 31 45 31    GS ( k fn 169: error correction M (0x31)
//! 1D 28 6B pL pH 31 50 30 <qrCode>
//!                            GS ( k fn 180: store the data; pL + 256 pH = len(qrCode) + 3,
//!                                           the qrCode's bytes exactly as the register has them
//! 1D 28 6B 03 00 31 51 30    GS ( k fn 181: print the stored code
//! 0A                                      LF
//! <codeDEFDGI label> 0A                   centred
//! 1B 45 01 <codeDEFDGI> 0A 1B 45 00       the codeDEFDGI in clear, emphasized
//! 1B 61 00                   ESC a 0      left
//! <dashes> 0A                             a rule: 32 or 48 '-'
//! [<label ... value> 0A <dashes> 0A]     a credit note's original: its codeDEFDGI and rn
//! <label ... value> 0A                    one line each: rn, type, seller NIF, ISF, date-time,
//!                                         counters, nim
//! <dashes> 0A
//! <label ... value> 0A                    total TTC, each tax group's TTC and VAT, total VAT,
//!                                         specific tax (when not 0), USD equivalent (when any),
//!                                         rate (an invoice made in USD)
//! <dashes> 0A
//! 1B 64 03                   ESC d 3      feed 3 lines
//! 1D 56 42 00                GS V 66 0    feed to the cutter and cut partially
//! ```
//!
//! A `label ... value` line is the label on the left and the value on the right of one line
//! of 32 (58 mm) or 48 (80 mm) characters, font A; when both do not fit, the label takes a
//! line and the value the next, on the right (a value longer than a line is cut into lines).
//!
//! # Text
//!
//! Every text byte is printable ASCII (0x20..0x7E) or LF, so that the receipt reads the same
//! whatever code page the printer is set to (CP437, CP850, CP858 agree on ASCII): accented
//! letters lose their accent (`é` -> `e`, `Œ` -> `OE`), `°` becomes `o`, dashes and the
//! no-break spaces of French amounts become `-` and a space, quotes become `"` and `'`; any
//! other character (and any control character, which a printer would run as a command)
//! becomes `?`. The QR code's data are the only bytes outside this rule: they are the
//! `qrCode` exactly, inside fn 180, where the printer reads them as data.

use crate::i18n::Lang;
use crate::model::RegisterEntry;

use super::{block, Line, Original, PaperWidth};

/// ESC @: initialize.
pub const INIT: [u8; 2] = [0x1B, 0x40];
/// GS V 66 0: feed to the cutting position, then a partial cut.
pub const CUT: [u8; 4] = [0x1D, 0x56, 0x42, 0x00];

/// The receipt of `entry`'s fiscal block on `width` paper, texts in `lang` (`original`: see
/// [`super::block`]).
pub fn receipt(
    entry: &RegisterEntry,
    original: Option<Original<'_>>,
    width: PaperWidth,
    lang: Lang,
) -> Vec<u8> {
    let block = block(entry, original, lang);
    let columns = width.columns();
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(&INIT);
    out.extend_from_slice(&[0x1B, 0x61, 0x01]);
    out.extend_from_slice(&[0x1B, 0x45, 0x01]);
    for line in wrap_words(&ascii(&block.title), columns) {
        text_line(&mut out, &line);
    }
    out.extend_from_slice(&[0x1B, 0x45, 0x00]);
    out.push(b'\n');
    out.extend_from_slice(&qr_commands(&block.qr_code, width.qr_module()));
    out.push(b'\n');
    for line in wrap_words(&ascii(&block.code_label), columns) {
        text_line(&mut out, &line);
    }
    out.extend_from_slice(&[0x1B, 0x45, 0x01]);
    for line in cut(&ascii(&block.code), columns) {
        text_line(&mut out, &line);
    }
    out.extend_from_slice(&[0x1B, 0x45, 0x00]);
    out.extend_from_slice(&[0x1B, 0x61, 0x00]);
    let rule = "-".repeat(columns);
    text_line(&mut out, &rule);
    if !block.original.is_empty() {
        labelled(&mut out, &block.original, columns);
        text_line(&mut out, &rule);
    }
    labelled(&mut out, &block.security, columns);
    text_line(&mut out, &rule);
    labelled(&mut out, &block.totals, columns);
    text_line(&mut out, &rule);
    out.extend_from_slice(&[0x1B, 0x64, 0x03]);
    out.extend_from_slice(&CUT);
    out
}

/// The `GS ( k` commands that print `data` as a QR code (model 2, error correction M,
/// `module` dots a module). `data` longer than the command can carry (65 532 bytes) is cut
/// there; a `qrCode` is about 70.
pub fn qr_commands(data: &str, module: u8) -> Vec<u8> {
    let data = &data.as_bytes()[..data.len().min(0xFFFF - 3)];
    let stored = data.len() + 3;
    let mut out = Vec::with_capacity(data.len() + 40);
    // fn 165: select the model: n1 = 50 (model 2), n2 = 0.
    out.extend_from_slice(&[0x1D, 0x28, 0x6B, 0x04, 0x00, 0x31, 0x41, 0x32, 0x00]);
    // fn 167: the size of a module, in dots.
    out.extend_from_slice(&[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x43, module]);
    // fn 169: error correction level: 48 L, 49 M, 50 Q, 51 H.
    out.extend_from_slice(&[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x45, 0x31]);
    // fn 180: store the data in the symbol storage area (m = 48).
    out.extend_from_slice(&[
        0x1D,
        0x28,
        0x6B,
        (stored & 0xFF) as u8,
        (stored >> 8) as u8,
        0x31,
        0x50,
        0x30,
    ]);
    out.extend_from_slice(data);
    // fn 181: print the stored symbol (m = 48).
    out.extend_from_slice(&[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x51, 0x30]);
    out
}

fn text_line(out: &mut Vec<u8>, line: &str) {
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
}

/// Each line as `label ... value` on `columns` characters (see the module's doc).
fn labelled(out: &mut Vec<u8>, lines: &[Line], columns: usize) {
    for line in lines {
        let (label, value) = (ascii(&line.label), ascii(&line.value));
        if label.len() + 1 + value.len() <= columns {
            let gap = columns - label.len() - value.len();
            text_line(out, &format!("{label}{}{value}", " ".repeat(gap)));
            continue;
        }
        for part in cut(&label, columns) {
            text_line(out, &part);
        }
        for part in cut(&value, columns) {
            text_line(out, &format!("{part:>columns$}"));
        }
    }
}

/// `text` in lines of at most `columns` characters, broken between words where it can.
fn wrap_words(text: &str, columns: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        for piece in cut(word, columns) {
            if current.is_empty() {
                current = piece;
            } else if current.len() + 1 + piece.len() <= columns {
                current.push(' ');
                current.push_str(&piece);
            } else {
                lines.push(std::mem::replace(&mut current, piece));
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// ASCII `text` cut every `columns` bytes (at least one, possibly empty, piece).
fn cut(text: &str, columns: usize) -> Vec<String> {
    if text.is_empty() {
        return vec![String::new()];
    }
    text.as_bytes()
        .chunks(columns.max(1))
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect()
}

/// `text` as printable ASCII (see the module's doc: accents dropped, the rest `?`).
pub fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let plain = match c {
            ' '..='~' => {
                out.push(c);
                continue;
            }
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => "a",
            'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => "A",
            'ç' => "c",
            'Ç' => "C",
            'è' | 'é' | 'ê' | 'ë' => "e",
            'È' | 'É' | 'Ê' | 'Ë' => "E",
            'ì' | 'í' | 'î' | 'ï' => "i",
            'Ì' | 'Í' | 'Î' | 'Ï' => "I",
            'ñ' => "n",
            'Ñ' => "N",
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' => "o",
            'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' => "O",
            'ù' | 'ú' | 'û' | 'ü' => "u",
            'Ù' | 'Ú' | 'Û' | 'Ü' => "U",
            'ý' | 'ÿ' => "y",
            'Ý' | 'Ÿ' => "Y",
            // What `format::visible` writes around a hidden character: `<U+202E>`, `<LF>`.
            '⟨' => "<",
            '⟩' => ">",
            'œ' => "oe",
            'Œ' => "OE",
            'æ' => "ae",
            'Æ' => "AE",
            'ß' => "ss",
            '°' | 'º' => "o",
            'ª' => "a",
            '\u{a0}' | '\u{202f}' | '\u{2009}' | '\u{2007}' => " ",
            '‐' | '‑' | '‒' | '–' | '—' | '−' => "-",
            '‘' | '’' | '‚' | '′' => "'",
            '“' | '”' | '„' | '«' | '»' | '″' => "\"",
            '…' => "...",
            '·' | '•' => ".",
            '€' => "EUR",
            _ => "?",
        };
        out.push_str(plain);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_becomes_printable_ascii_and_controls_cannot_reach_the_printer() {
        assert_eq!(
            ascii("Facture normalisée – éléments n° «1»"),
            "Facture normalisee - elements no \"1\""
        );
        assert_eq!(ascii("168\u{202f}040,00\u{a0}CDF"), "168 040,00 CDF");
        assert_eq!(ascii("Œuvre ÉTÉ ß"), "OEuvre ETE ss");
        assert_eq!(ascii("a\x1bb\nc\x7f漢"), "a?b?c??");
    }

    #[test]
    fn lines_fit_the_paper() {
        assert_eq!(
            wrap_words("Facture normalisee - elements de securite e-MCF", 32),
            ["Facture normalisee - elements de", "securite e-MCF"]
        );
        assert_eq!(cut("ABCDEFG", 3), ["ABC", "DEF", "G"]);
        let mut out = Vec::new();
        let line = |label: &str, value: &str| Line {
            label: label.into(),
            value: value.into(),
            id: String::new(),
        };
        labelled(
            &mut out,
            &[
                line("Total", "1 200,00 CDF"),
                line("A label", &"x".repeat(30)),
            ],
            32,
        );
        let text = String::from_utf8(out).expect("ascii");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("Total{}1 200,00 CDF", " ".repeat(15)));
        assert_eq!(lines[1], "A label");
        assert_eq!(lines[2], format!("  {}", "x".repeat(30)));
        assert!(lines.iter().all(|l| l.len() <= 32));
    }

    #[test]
    fn the_qr_commands_are_the_epson_functions() {
        let bytes = qr_commands("ABC", 6);
        assert_eq!(
            bytes,
            [
                0x1D, 0x28, 0x6B, 0x04, 0x00, 0x31, 0x41, 0x32, 0x00, // fn 165 model 2
                0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x43, 0x06, // fn 167 size 6
                0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x45, 0x31, // fn 169 level M
                0x1D, 0x28, 0x6B, 0x06, 0x00, 0x31, 0x50, 0x30, b'A', b'B', b'C', // fn 180
                0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x51, 0x30, // fn 181 print
            ]
        );
        let long = "x".repeat(300);
        let bytes = qr_commands(&long, 4);
        // 303 = 0x012F: pL 0x2F, pH 0x01.
        assert_eq!(
            &bytes[25..33],
            &[0x1D, 0x28, 0x6B, 0x2F, 0x01, 0x31, 0x50, 0x30]
        );
    }
}
