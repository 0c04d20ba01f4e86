//! The CSV export of a register, one format for `emcf-gateway log export --format csv` and
//! the dashboard's download.
//!
//! Values are written as stored (a fiscal register is not rewritten), with two exceptions: a
//! credit note's amounts are written negative ([`super::audit::exported_totals`]), so that a
//! sum of `total` is the net turnover, and one made for the spreadsheet the file is opened
//! in. Each column is either a number the gateway
//! writes (an amount, a rate: [`Cell::Number`]) or a text ([`Cell::Text`]), and:
//!
//! - a text cell a spreadsheet would run as a formula is written with a single quote `'` in
//!   front (OWASP's rule against CSV injection), so the spreadsheet shows it as text: one
//!   that begins with `=`, `+`, `-`, `@`, TAB or CR, or with spaces, tabs, CR or LF before
//!   `=`, `+`, `-` or `@` (Excel, LibreOffice and Google Sheets skip such leading blanks).
//!   An `rn`, a client's name, a reference are chosen by an API client (`=HYPERLINK(...)`,
//!   `+cmd|' /C calc'!A0`, ` -1+2`); even a text that looks like a number (`-116.00` as an
//!   `rn`) is kept a text that way;
//! - a number cell is never touched: it is a decimal the gateway wrote from the register
//!   (`-116.00`, a credit note's total), which no spreadsheet runs, and which must stay a
//!   number it can sum.
//!
//! Then the cell is quoted per RFC 4180 where needed (the separator, a double quote, CR or
//! LF).
//!
//! Two dialects ([`Dialect`]): the standard one (commas, decimal points: for programs), and
//! the one a French spreadsheet opens as columns (`--separator semicolon`: semicolons, and
//! decimal commas in the amounts so that they stay numbers), each optionally preceded by a
//! UTF-8 byte order mark (`--bom`: Excel then reads accents right).
//!
//! Only the CSV is neutralized: the register, `log show` and the JSON export keep every text
//! exactly as certified.

use std::borrow::Cow;

use super::audit::{amount_sign, exported_totals};
use crate::model::{RegisterEntry, FISCAL_CURRENCY};

/// The header line: the 19 columns of 1.4.0 first, in their order and under their names (a
/// script reading them by position still reads them), then since 1.5.0 what an audit needs:
/// the client, the credit note's reference, the invoice's own currency (`invoiceCurrency`,
/// its `curCode`: `currency` in 1.5.0, renamed because the amounts are never in it), the USD
/// rate (CDF per USD) and the USD equivalent, HT and specific taxes, and HT/VAT/TTC of each
/// of the 16 tax groups A..P (empty cells for a group the invoice does not use; the client
/// and reference cells are empty for entries of 1.4.0 and before, which kept no invoice);
/// and last, since 1.6.0, `amountCurrency` (`CDF`: every amount column but `usdEquivalent`
/// is in it) and `amountSign` (`-1` for a credit note, whose amounts are written negative so
/// that a sum of `total` is the net turnover; `1` otherwise).
pub const HEADER: &str = concat!(
    "sequence,environment,org,nif,isf,rn,type,total,vat,codeDEFDGI,counters,nim,qrCode,",
    "deviceDateTime,receivedAt,certifiedAt,keyId,requestDigest,source,",
    "clientNif,clientName,clientType,reference,referenceType,invoiceCurrency,usdRate,",
    "usdEquivalent,specificTax,ht,",
    "htA,vatA,ttcA,htB,vatB,ttcB,htC,vatC,ttcC,htD,vatD,ttcD,htE,vatE,ttcE,htF,vatF,ttcF,",
    "htG,vatG,ttcG,htH,vatH,ttcH,htI,vatI,ttcI,htJ,vatJ,ttcJ,htK,vatK,ttcK,htL,vatL,ttcL,",
    "htM,vatM,ttcM,htN,vatN,ttcN,htO,vatO,ttcO,htP,vatP,ttcP,",
    "amountCurrency,amountSign"
);

/// The tax groups, in the header's order.
const GROUPS: &str = "ABCDEFGHIJKLMNOP";

/// How the CSV is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dialect {
    /// Semicolons between cells and decimal commas in amounts (a French spreadsheet); else
    /// commas and decimal points.
    pub semicolon: bool,
    /// A UTF-8 byte order mark before the header line.
    pub bom: bool,
}

impl Dialect {
    /// What a French Excel or LibreOffice opens as columns, accents right: semicolons,
    /// decimal commas, a byte order mark (the CLI's `--separator semicolon --bom`, the
    /// dashboard's "CSV pour Excel").
    pub const SPREADSHEET: Dialect = Dialect {
        semicolon: true,
        bom: true,
    };

    fn separator(self) -> char {
        if self.semicolon {
            ';'
        } else {
            ','
        }
    }

    fn amount(self, value: rust_decimal::Decimal) -> String {
        let text = value.to_string();
        if self.semicolon {
            text.replace('.', ",")
        } else {
            text
        }
    }
}

/// The header line in `dialect` (with the byte order mark when asked).
pub fn header_in(dialect: Dialect) -> String {
    let bom = if dialect.bom { "\u{FEFF}" } else { "" };
    format!(
        "{bom}{}",
        HEADER.replace(',', &dialect.separator().to_string())
    )
}

/// One entry as a CSV line (without the line end), standard dialect.
pub fn row(e: &RegisterEntry) -> String {
    row_in(e, Dialect::default())
}

/// One cell of a row, before it is written (see the module doc).
enum Cell {
    /// A text from the register: neutralized if a spreadsheet would run it.
    Text(String),
    /// A number the gateway writes (an amount, a rate), or an empty cell: never neutralized.
    Number(Option<rust_decimal::Decimal>),
}

/// One entry as a CSV line (without the line end) in `dialect`.
pub fn row_in(e: &RegisterEntry, dialect: Dialect) -> String {
    let millis =
        |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let content = e.request.content().and_then(Result::ok);
    let client = content
        .as_ref()
        .and_then(|c| c.client.clone())
        .unwrap_or_default();
    let text = |v: Option<&String>| Cell::Text(v.cloned().unwrap_or_default());
    let totals = &exported_totals(e);
    let number = |v| Cell::Number(Some(v));
    let mut cells = vec![
        Cell::Text(e.sequence.to_string()),
        Cell::Text(e.request.environment.as_str().to_string()),
        Cell::Text(e.request.org.clone()),
        Cell::Text(e.request.nif.clone()),
        Cell::Text(e.request.isf.clone()),
        Cell::Text(e.request.rn.clone()),
        Cell::Text(e.request.invoice_type.clone()),
        number(totals.total),
        number(totals.vat),
        Cell::Text(e.security.code_def.clone()),
        Cell::Text(e.security.counters.clone()),
        Cell::Text(e.security.nim.clone()),
        Cell::Text(e.security.qr_code.clone()),
        Cell::Text(e.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string()),
        Cell::Text(millis(&e.request.received_at)),
        Cell::Text(millis(&e.certified_at)),
        Cell::Text(e.request.key_id.clone()),
        Cell::Text(e.request.request_digest.clone()),
        Cell::Text(e.source.clone()),
        text(client.nif.as_ref()),
        text(client.name.as_ref()),
        text(client.client_type.as_ref()),
        text(content.as_ref().and_then(|c| c.reference.as_ref())),
        text(content.as_ref().and_then(|c| c.reference_type.as_ref())),
        text(content.as_ref().map(|c| &c.cur_code)),
        Cell::Number(content.as_ref().and_then(|c| c.cur_rate)),
        Cell::Number(totals.usd_equivalent),
        number(totals.specific_tax),
        number(totals.ht()),
    ];
    let groups = totals.groups();
    for letter in GROUPS.chars() {
        match groups.iter().find(|g| g.group == letter) {
            Some(g) => cells.extend([g.ht, g.vat, g.ttc].map(number)),
            None => cells.extend(std::iter::repeat_with(|| Cell::Number(None)).take(3)),
        }
    }
    cells.push(Cell::Text(FISCAL_CURRENCY.to_string()));
    cells.push(Cell::Number(Some(amount_sign(e).into())));
    let separator = dialect.separator();
    cells
        .iter()
        .map(|cell| match cell {
            Cell::Text(value) => field(&neutralized(value), separator),
            Cell::Number(value) => field(
                &value.map(|v| dialect.amount(v)).unwrap_or_default(),
                separator,
            ),
        })
        .collect::<Vec<_>>()
        .join(&separator.to_string())
}

/// One cell's text quoted per RFC 4180 if it needs to be.
fn field(value: &str, separator: char) -> String {
    if value.contains([separator, '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

/// `value` with `'` in front if a spreadsheet would take it for a formula (see the module
/// doc): it begins with `=`, `+`, `-`, `@`, TAB or CR, or with blanks (spaces, TAB, CR, LF
/// and other white space) before `=`, `+`, `-` or `@`.
fn neutralized(value: &str) -> Cow<'_, str> {
    let trigger = |c: Option<char>| matches!(c, Some('=' | '+' | '-' | '@'));
    let first = value.chars().next();
    let after_blanks = value.trim_start().chars().next();
    if trigger(first) || matches!(first, Some('\t' | '\r')) || trigger(after_blanks) {
        Cow::Owned(format!("'{value}"))
    } else {
        Cow::Borrowed(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{certified_entry, intent};

    #[test]
    fn rows_have_the_header_s_columns_and_quote_when_needed() {
        let entry = certified_entry(3, 9, intent("demo", "F,\"1\""));
        let line = row(&entry);
        assert!(line.starts_with("3,production,demo,NIF-demo,ISF-demo,\"F,\"\"1\"\"\",FV,116.00,"));
        assert!(
            line.ends_with(",live-demo,") || line.contains(",live-demo,"),
            "{line}"
        );
        assert_eq!(HEADER.split(',').count(), 19 + 10 + 48 + 2);
        assert!(line.ends_with(",CDF,1"), "{line}");
        assert_eq!(line.matches(',').count(), HEADER.matches(',').count() + 1);
        assert_eq!(text_cell("plain"), "plain");
    }

    /// A text cell as written in the standard dialect.
    fn text_cell(value: &str) -> String {
        field(&neutralized(value), ',')
    }

    #[test]
    fn text_cells_a_spreadsheet_would_run_as_formulas_are_prefixed_with_a_quote() {
        let cases = [
            (
                "=HYPERLINK(\"http://e.x\")",
                "\"'=HYPERLINK(\"\"http://e.x\"\")\"",
            ),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("@SUM(1+1)", "'@SUM(1+1)"),
            ("-1+2", "'-1+2"),
            ("-", "'-"),
            ("-2.", "'-2."),
            ("\tTAB", "'\tTAB"),
            ("\rCR", "\"'\rCR\""),
            // Blanks before the trigger: spreadsheets skip them and run the formula.
            (" =1+1", "' =1+1"),
            ("   @SUM(A1)", "'   @SUM(A1)"),
            ("\t=1+1", "'\t=1+1"),
            ("\n=1+1", "\"'\n=1+1\""),
            ("\r\n+1", "\"'\r\n+1\""),
            (" \u{a0}-2+3", "' \u{a0}-2+3"),
            // A text that looks like a number is kept a text (an rn, a client's name).
            ("-116.00", "'-116.00"),
        ];
        for (value, cell) in cases {
            assert_eq!(text_cell(value), cell, "{value:?}");
        }
        // A trigger elsewhere than first (after blanks) is left alone, and so are blanks.
        for plain in ["F-1=2", " F-1", "\nnote", "  ", "116.00", "A+B"] {
            assert_eq!(text_cell(plain).trim_matches('"'), plain, "{plain:?}");
        }
    }

    #[test]
    fn an_attacker_s_rn_and_a_negative_total_in_a_row() {
        // A credit note: the device's figures are positive, the export's negative.
        let mut note = intent("demo", "=HYPERLINK(\"http://e.x\")");
        note.invoice_type = "FA".into();
        let line = row(&certified_entry(4, 10, note));
        // The rn is a text, neutralized; the amounts are numbers, left as numbers.
        assert!(
            line.contains(",\"'=HYPERLINK(\"\"http://e.x\"\")\",FA,-116.00,-16.00,"),
            "{line}"
        );
    }

    #[test]
    fn the_spreadsheet_dialect_uses_semicolons_decimal_commas_and_a_bom() {
        let spreadsheet = Dialect {
            semicolon: true,
            bom: true,
        };
        let header = header_in(spreadsheet);
        assert!(
            header.starts_with("\u{FEFF}sequence;environment;org;"),
            "{header}"
        );
        assert_eq!(header.split(';').count(), 79);
        assert_eq!(header_in(Dialect::default()), HEADER);
        let mut note = intent("demo", "F;1");
        note.invoice_type = "EA".into();
        let line = row_in(&certified_entry(4, 10, note), spreadsheet);
        assert!(
            line.starts_with("4;production;demo;NIF-demo;ISF-demo;\"F;1\";EA;-116,00;-16,00;"),
            "{line}"
        );
        assert!(
            line.ends_with(
                ";-100,00;-16,00;-116,00;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;CDF;-1"
            ),
            "{line}"
        );
        // The QR code's own semicolons stay inside its quoted cell.
        assert!(
            line.contains(";\"RDCDEF01;NIM1;SIG4;NIF;20260302100000\";"),
            "{line}"
        );
    }
}

#[cfg(test)]
mod audit_columns {
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::store::tests::{certified_entry, intent};

    /// A credit note whose invoice was kept: client, reference and the group columns.
    #[test]
    fn a_kept_credit_note_has_its_client_reference_and_groups() {
        let form = r#"{"canon":"1","client":{"name":"Kinshasa SARL","nif":"A7654321Z","type":"PM"},"curCode":"CDF","items":[{"name":"Retour","price":"116","quantity":"1","taxGroup":"B","type":"BIE"}],"mode":"ttc","operator":{"name":"A"},"reference":"XN56YAPV37MZLNZLX6MOC3A5","referenceType":"COR","rn":"FA-1","type":"FA"}"#;
        let mut note = intent("demo", "FA-1");
        note.invoice_type = "FA".into();
        note.request_digest = hex::encode(Sha256::digest(form.as_bytes()));
        note.invoice = Some(form.to_string());
        let line = row(&certified_entry(4, 10, note));
        let cells: Vec<&str> = line.split(',').collect();
        let at = |name: &str| {
            let i = HEADER.split(',').position(|h| h == name).expect(name);
            cells[i]
        };
        assert_eq!(at("clientName"), "Kinshasa SARL");
        assert_eq!(at("clientNif"), "A7654321Z");
        assert_eq!(at("reference"), "XN56YAPV37MZLNZLX6MOC3A5");
        assert_eq!(at("referenceType"), "COR");
        assert_eq!(at("invoiceCurrency"), "CDF");
        // The fixture's totals: group B TTC 116.00 with VAT 16.00, negative in a credit note.
        assert_eq!(
            (at("htB"), at("vatB"), at("ttcB")),
            ("-100.00", "-16.00", "-116.00")
        );
        assert_eq!((at("htA"), at("ttcP")), ("", ""));
        assert_eq!(
            (at("total"), at("vat"), at("ht")),
            ("-116.00", "-16.00", "-100.00")
        );
        assert_eq!((at("amountCurrency"), at("amountSign")), ("CDF", "-1"));
    }
}
