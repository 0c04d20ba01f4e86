//! Golden tests of the fiscal block: a fixed, hand-built register entry drawn in every format
//! and compared byte for byte with `tests/golden/receipt/`. `UPDATE_GOLDEN=1 cargo test --lib
//! receipt` writes the files again; a changed file must be looked at before it is committed
//! (the HTML in a browser, the ESC/POS with `xxd`).
//!
//! The QR code's PNG is compared by its decoded pixels (the `png` crate's compression may
//! change between versions, the image may not): `qr.png` is the image, `qr.png.txt` its side
//! and the SHA-256 of its pixels.
//!
//! `receipt-80.escpos`, checked by hand with `xxd` (80 mm, French):
//!
//! ```text
//! 00000000: 1b40 1b61 011b 4501 4661 6374 7572 6520  .@.a..E.Facture
//! ...        ESC @, ESC a 1 (centre), ESC E 1, the title ("Facture de vente - elements de
//!            securite e-MCF", 45 characters: one line),
//!            LF, ESC E 0, LF
//! 1d28 6b04 0031 4132 00          fn 165: model 2
//! 1d28 6b03 0031 4306             fn 167: module of 6 dots
//! 1d28 6b03 0031 4531             fn 169: error correction M
//! 1d28 6b48 0031 5030 5244 4344 4546 3031 3b...
//!                                 fn 180: pL 0x48 = 72 = 69 bytes of qrCode + 3, pH 0;
//!                                 then "RDCDEF01;SIM0000001;..."
//! 1d28 6b03 0031 5130             fn 181: print
//! ... 1b64 03 1d56 4200           ESC d 3, GS V 66 0 (feed and partial cut): the last 7 bytes
//! ```
//!
//! The 58 mm file is the same with `4304` (module of 4 dots) and lines of 32 columns.
//!
//! `credit-note-*.escpos` and `credit-note-*.html` are a credit note (FA, in USD): its heading
//! "Facture d'avoir", the lines of its original under its codeDEFDGI (found: the original's
//! codeDEFDGI and rn; not found: the codeDEFDGI it named and "not found in this register"),
//! and the rate line after the USD equivalent.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::{escpos, html, Layout, Original, PaperWidth};
use crate::i18n::Lang;
use crate::model::RegisterEntry;

/// The `qrCode` of the fixture (69 bytes).
pub(crate) const QR_CODE: &str =
    "RDCDEF01;SIM0000001;5S4V3SVZA3Q5BSUPADEBK4HR;A1234567B;20261122012303";

/// A certified USD invoice with two tax groups and a specific tax; its `rn` has characters
/// HTML must escape. Built from JSON, as the journal keeps it: fields added to the register
/// later (with their defaults) do not change it.
pub(crate) fn fixture() -> RegisterEntry {
    let entry = serde_json::json!({
        "sequence": 42,
        "intent": 77,
        "org": "acme",
        "environment": "Production",
        "rn": "FV-2026/0042&<1>",
        "invoice_type": "FV",
        "key_id": "k3y1d0000001",
        "device": "shop",
        "request_digest": "0".repeat(64),
        "received_at": "2026-11-22T00:23:01Z",
        "totals": {
            "total": "182040.00",
            "vat": "23177.93",
            "group_ttc": [["B", "168040.00"], ["E", "12500.00"]],
            "group_vat": [["B", "23177.93"], ["E", "0.00"]],
            "specific_tax": "1500.00",
            "usd_equivalent": "63.87"
        },
        "nif": "A1234567B",
        "isf": "ISF-0001",
        "certified_at": "2026-11-22T00:23:04Z",
        "security": {
            "codeDEFDGI": "5S4V3SVZA3Q5BSUPADEBK4HR",
            "qrCode": QR_CODE,
            "counters": "42/57 FV",
            "nim": "SIM0000001",
            "dateTime": "2026-11-22T01:23:03"
        },
        "source": "finalize",
        "quota_year": 2026
    });
    serde_json::from_value(entry).expect("the fixture is a register entry")
}

/// The kept invoice of [`credit_note`]: a USD credit note naming [`fixture`]'s codeDEFDGI.
const CREDIT_NOTE_FORM: &str = r#"{"canon":"1","curCode":"USD","curDate":"2026-11-23","curRate":"2850","items":[{"name":"Retour","price":"28500","quantity":"1","taxGroup":"B","type":"BIE"}],"mode":"ttc","operator":{"name":"Caisse 1"},"reference":"5S4V3SVZA3Q5BSUPADEBK4HR","referenceType":"RAN","rn":"FA-2026/0007","type":"FA"}"#;

/// A certified credit note (FA, in USD) against [`fixture`], its invoice kept.
pub(crate) fn credit_note() -> RegisterEntry {
    let entry = serde_json::json!({
        "sequence": 43,
        "intent": 80,
        "org": "acme",
        "environment": "Production",
        "rn": "FA-2026/0007",
        "invoice_type": "FA",
        "key_id": "k3y1d0000001",
        "device": "shop",
        "request_digest": hex::encode(Sha256::digest(CREDIT_NOTE_FORM.as_bytes())),
        "received_at": "2026-11-23T09:00:01Z",
        "totals": {
            "total": "28500.00",
            "vat": "3931.03",
            "group_ttc": [["B", "28500.00"]],
            "group_vat": [["B", "3931.03"]],
            "specific_tax": "0.00",
            "usd_equivalent": "10.00"
        },
        "nif": "A1234567B",
        "isf": "ISF-0001",
        "certified_at": "2026-11-23T09:00:03Z",
        "security": {
            "codeDEFDGI": "TQ2W7ZB5M3KD8XRNH4JCV6PA",
            "qrCode": "RDCDEF01;SIM0000001;TQ2W7ZB5M3KD8XRNH4JCV6PA;A1234567B;20261123100002",
            "counters": "3/58 FA",
            "nim": "SIM0000001",
            "dateTime": "2026-11-23T10:00:02"
        },
        "source": "finalize",
        "quota_year": 2026,
        "invoice": CREDIT_NOTE_FORM
    });
    serde_json::from_value(entry).expect("the credit note is a register entry")
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/receipt")
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Compares `bytes` with the golden file `name` (or writes it with `UPDATE_GOLDEN=1`).
fn check(name: &str, bytes: &[u8]) {
    let path = golden_dir().join(name);
    if updating() {
        std::fs::create_dir_all(golden_dir()).expect("golden dir");
        std::fs::write(&path, bytes).expect("write golden");
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    if want != bytes {
        let at = want
            .iter()
            .zip(bytes)
            .position(|(a, b)| a != b)
            .unwrap_or(want.len().min(bytes.len()));
        panic!(
            "{name} differs from {} at byte {at} (golden {} bytes, now {}); \
             UPDATE_GOLDEN=1 cargo test --lib receipt writes it again, then review it",
            path.display(),
            want.len(),
            bytes.len()
        );
    }
}

#[test]
fn html_layouts_are_their_golden_files() {
    let entry = fixture();
    for (layout, lang, name) in [
        (Layout::A4, Lang::Fr, "receipt-a4.fr.html"),
        (Layout::Mm80, Lang::En, "receipt-80mm.en.html"),
        (Layout::Mm58, Lang::Fr, "receipt-58mm.fr.html"),
    ] {
        let page = html::page(&entry, None, layout, lang);
        check(name, page.as_bytes());
    }
}

/// A credit note names its original: found in the register (its codeDEFDGI and rn), or not
/// (the codeDEFDGI it named, said to be absent).
#[test]
fn credit_notes_are_their_golden_files() {
    let (sale, note) = (fixture(), credit_note());
    let found = Some(Original::of(&sale));
    check(
        "credit-note-a4.fr.html",
        html::page(&note, found, Layout::A4, Lang::Fr).as_bytes(),
    );
    check(
        "credit-note-80mm.en.html",
        html::page(&note, None, Layout::Mm80, Lang::En).as_bytes(),
    );
    check(
        "credit-note-80.escpos",
        &escpos::receipt(&note, found, PaperWidth::Mm80, Lang::Fr),
    );
    check(
        "credit-note-58.escpos",
        &escpos::receipt(&note, None, PaperWidth::Mm58, Lang::En),
    );
}

#[test]
fn a_credit_note_s_block_names_its_original_and_every_type_its_document() {
    let (sale, note) = (fixture(), credit_note());
    let found = html::page(&note, Some(Original::of(&sale)), Layout::A4, Lang::Fr);
    for needle in [
        "<h1>Facture d&#39;avoir – éléments de sécurité e-MCF</h1>",
        "id=\"originalCodeDEFDGI\">5S4V3SVZA3Q5BSUPADEBK4HR<",
        "id=\"originalRn\">FV-2026/0042&amp;&lt;1&gt;<",
        "id=\"rate\">1\u{a0}USD = 2\u{202f}850,00\u{a0}CDF<",
    ] {
        assert!(found.contains(needle), "{needle} in {found}");
    }
    let missing = html::page(&note, None, Layout::A4, Lang::En);
    for needle in [
        "<h1>Credit note – e-MCF security elements</h1>",
        "id=\"originalCodeDEFDGI\">5S4V3SVZA3Q5BSUPADEBK4HR<",
        "id=\"originalRn\">not found in this register<",
    ] {
        assert!(missing.contains(needle), "{needle} in {missing}");
    }
    let printed = escpos::receipt(&note, None, PaperWidth::Mm80, Lang::Fr);
    let text = String::from_utf8_lossy(&printed);
    assert!(
        text.contains("Facture d'avoir - elements de securite e-MCF\n"),
        "{text}"
    );
    assert!(text.contains("5S4V3SVZA3Q5BSUPADEBK4HR\n"), "{text}");
    assert!(text.contains("absente de ce registre\n"), "{text}");
    // A sale names no original; each type's heading is its document's name.
    assert!(!html::page(&sale, None, Layout::A4, Lang::Fr).contains("originalRn"));
    for (code, heading) in [
        ("FV", "Facture de vente"),
        ("FT", "Facture d&#39;acompte"),
        ("FA", "Facture d&#39;avoir"),
        ("EV", "Facture de vente à l&#39;exportation"),
        ("ET", "Facture d&#39;acompte à l&#39;exportation"),
        ("EA", "Facture d&#39;avoir à l&#39;exportation"),
    ] {
        let mut entry = fixture();
        entry.request.invoice_type = code.into();
        let page = html::page(&entry, None, Layout::Mm58, Lang::Fr);
        assert!(
            page.contains(&format!("<h1>{heading} – ")),
            "{code}: {page}"
        );
    }
}

#[test]
fn escpos_receipts_are_their_golden_files() {
    let entry = fixture();
    check(
        "receipt-80.escpos",
        &escpos::receipt(&entry, None, PaperWidth::Mm80, Lang::Fr),
    );
    check(
        "receipt-58.escpos",
        &escpos::receipt(&entry, None, PaperWidth::Mm58, Lang::En),
    );
}

/// (side, SHA-256 hex of the 8-bit gray pixels) of a PNG.
fn png_digest(bytes: &[u8]) -> (u32, String) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buffer).expect("a frame");
    assert_eq!(info.width, info.height, "square");
    buffer.truncate(info.buffer_size());
    (info.width, hex::encode(Sha256::digest(&buffer)))
}

#[test]
fn the_qr_png_is_its_golden_image() {
    let bytes = crate::qr::png_of(QR_CODE, None).expect("png");
    let (side, digest) = png_digest(&bytes);
    let text = format!("side {side}\nsha256 of the gray pixels {digest}\n");
    if updating() {
        check("qr.png", &bytes);
    } else {
        let golden =
            std::fs::read(golden_dir().join("qr.png")).expect("tests/golden/receipt/qr.png");
        assert_eq!(png_digest(&golden), (side, digest), "qr.png's pixels");
    }
    check("qr.png.txt", text.as_bytes());
}

#[test]
fn every_value_is_escaped_and_the_block_is_complete() {
    let entry = fixture();
    for layout in Layout::ALL {
        for lang in Lang::ALL {
            let page = html::page(&entry, None, layout, lang);
            assert!(!page.contains("<1>"), "{page}");
            assert!(page.contains("FV-2026/0042&amp;&lt;1&gt;"));
            for needle in [
                "id=\"codeDEFDGI\">5S4V3SVZA3Q5BSUPADEBK4HR<",
                "id=\"counters\">42/57 FV<",
                "id=\"nim\">SIM0000001<",
                "id=\"group-B-ttc\">",
                "id=\"group-E-vat\">",
                "id=\"usdTotal\">",
                "id=\"specificTax\">",
                "<svg ",
            ] {
                assert!(page.contains(needle), "{layout:?} {lang}: {needle}");
            }
            // Nothing fetched, nothing run.
            for refused in ["<script", "src=", "href=", "url(", "<link", "@import"] {
                assert!(!page.contains(refused), "{layout:?} {lang}: {refused}");
            }
        }
    }
    let fr = html::page(&entry, None, Layout::A4, Lang::Fr);
    assert!(fr.contains("168\u{202f}040,00\u{a0}CDF"), "French amounts");
    assert!(
        fr.contains("22/11/2026 01:23:03"),
        "the device's clock, as sent"
    );
    let en = html::page(&entry, None, Layout::Mm80, Lang::En);
    assert!(en.contains("168,040.00 CDF") && en.contains("2026-11-22 01:23:03"));
    assert!(en.contains("@page{size:80mm auto;margin:0}"));
}

#[test]
fn the_escpos_receipt_carries_the_qr_code_and_fits_the_paper() {
    let entry = fixture();
    for (width, module, columns) in [(PaperWidth::Mm80, 6, 48), (PaperWidth::Mm58, 4, 32)] {
        for lang in Lang::ALL {
            let bytes = escpos::receipt(&entry, None, width, lang);
            assert!(bytes.starts_with(&escpos::INIT));
            assert!(bytes.ends_with(&[0x1B, 0x64, 0x03, 0x1D, 0x56, 0x42, 0x00]));
            let stored = u8::try_from(QR_CODE.len() + 3).expect("short");
            let mut store = vec![0x1D, 0x28, 0x6B, stored, 0, 0x31, 0x50, 0x30];
            store.extend_from_slice(QR_CODE.as_bytes());
            let at = find(&bytes, &store).expect("fn 180 with the qrCode");
            assert_eq!(
                &bytes[at - 8..at],
                &[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x45, 0x31]
            );
            assert_eq!(
                &bytes[at - 16..at - 8],
                &[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x43, module]
            );
            // From the first rule to the feed: lines of printable ASCII that fit the paper.
            let rule = format!("{}\n", "-".repeat(columns));
            let start = find(&bytes, rule.as_bytes()).expect("a rule");
            let end = bytes.len() - 7;
            let lines = std::str::from_utf8(&bytes[start..end]).expect("ascii");
            for line in lines.trim_end_matches('\n').split('\n') {
                assert!(line.len() <= columns, "{line:?}");
                assert!(line.bytes().all(|b| (0x20..=0x7E).contains(&b)), "{line:?}");
            }
            let plain = String::from_utf8_lossy(&bytes);
            assert!(plain.contains("5S4V3SVZA3Q5BSUPADEBK4HR\n"));
            assert!(plain.contains("42/57 FV\n") && plain.contains("SIM0000001\n"));
        }
    }
}

/// Issue 24: security elements an administrator typed into a 1.5.0 settlement (any printable
/// text then) and a rate date are printed with their hidden effects shown, never obeyed.
#[test]
fn hidden_characters_an_older_release_kept_are_shown_not_obeyed() {
    let mut entry = credit_note();
    entry.security.nim = "SIM\u{202E}1000000".into();
    entry.security.counters = "3/58 FA\r\nTOTAL 0,00".into();
    entry.security.code_def = "TQ2W7ZB5M3KD8XRNH4J\u{2066}CV6PA".into();
    for lang in Lang::ALL {
        let page = html::page(&entry, None, Layout::A4, lang);
        assert!(page.contains("id=\"nim\">SIM⟨U+202E⟩1000000<"), "{page}");
        assert!(
            page.contains("id=\"counters\">3/58 FA⟨CR⟩⟨LF⟩TOTAL 0,00<"),
            "{page}"
        );
        assert!(
            page.contains(">TQ2W7ZB5M3KD8XRNH4J⟨U+2066⟩CV6PA<"),
            "{page}"
        );
        for hidden in ['\u{202E}', '\u{2066}', '\r'] {
            assert!(!page.contains(hidden), "{hidden:?} in {page}");
        }
        let bytes = escpos::receipt(&entry, None, PaperWidth::Mm80, lang);
        let plain = String::from_utf8_lossy(&bytes);
        assert!(plain.contains("SIM<U+202E>1000000\n"), "{plain}");
        assert!(plain.contains("3/58 FA<CR><LF>TOTAL 0,00\n"), "{plain}");
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
