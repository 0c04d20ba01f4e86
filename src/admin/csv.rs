//! The CSV export of a register, one format for `emcf-gateway log export --format csv` and
//! the dashboard's download.
//!
//! Values are written as stored (a fiscal register is not rewritten), with one exception made
//! for the spreadsheet the file is opened in: a cell that begins with `=`, `+`, `-`, `@`, TAB
//! or CR is a formula to Excel, LibreOffice and Google Sheets, and an `rn` is chosen by an API
//! client (`=HYPERLINK(...)`, `+cmd|' /C calc'!A0`). Such a cell is written with a single
//! quote `'` in front (OWASP's rule against CSV injection), so the spreadsheet shows it as
//! text. A cell that is a plain decimal number with a leading `-` (`-116.00`, the total of a
//! credit note) cannot be a formula and is left as it is, so that amounts stay numbers. Then
//! the cell is quoted per RFC 4180 where needed (a comma, a double quote, CR or LF).
//!
//! Only the CSV is neutralized: the register, `log show` and the JSON export keep every value
//! exactly as certified (the JSON export is the exact copy).

use std::borrow::Cow;

use crate::model::RegisterEntry;

/// The header line.
pub const HEADER: &str = "sequence,environment,org,nif,isf,rn,type,total,vat,codeDEFDGI,counters,nim,qrCode,deviceDateTime,receivedAt,certifiedAt,keyId,requestDigest,source";

/// One entry as a CSV line (without the line end).
pub fn row(e: &RegisterEntry) -> String {
    let millis =
        |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let fields = [
        e.sequence.to_string(),
        e.request.environment.as_str().to_string(),
        e.request.org.clone(),
        e.request.nif.clone(),
        e.request.isf.clone(),
        e.request.rn.clone(),
        e.request.invoice_type.clone(),
        e.request.totals.total.to_string(),
        e.request.totals.vat.to_string(),
        e.security.code_def.clone(),
        e.security.counters.clone(),
        e.security.nim.clone(),
        e.security.qr_code.clone(),
        e.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string(),
        millis(&e.request.received_at),
        millis(&e.certified_at),
        e.request.key_id.clone(),
        e.request.request_digest.clone(),
        e.source.clone(),
    ];
    fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",")
}

/// One cell: neutralized, then quoted if needed.
fn field(value: &str) -> String {
    let value = neutralized(value);
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.into_owned()
    }
}

/// `value` with `'` in front if a spreadsheet would take it for a formula (see the module doc).
fn neutralized(value: &str) -> Cow<'_, str> {
    match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') if !is_plain_number(value) => {
            Cow::Owned(format!("'{value}"))
        }
        _ => Cow::Borrowed(value),
    }
}

/// An optional `-`, digits, and optionally `.` and digits: `-116.00`, `-5`, `12.5`.
fn is_plain_number(value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = value.strip_prefix('-').unwrap_or(value);
    match unsigned.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(unsigned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{certified_entry, intent};
    use rust_decimal_macros::dec;

    #[test]
    fn rows_have_the_header_s_columns_and_quote_when_needed() {
        let entry = certified_entry(3, 9, intent("demo", "F,\"1\""));
        let line = row(&entry);
        assert!(line.starts_with("3,production,demo,NIF-demo,ISF-demo,\"F,\"\"1\"\"\",FV,116.00,"));
        assert!(
            line.ends_with(",live-demo,") || line.contains(",live-demo,"),
            "{line}"
        );
        assert_eq!(HEADER.split(',').count(), 19);
        assert_eq!(field("plain"), "plain");
    }

    #[test]
    fn cells_a_spreadsheet_would_run_as_formulas_are_prefixed_with_a_quote() {
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
        ];
        for (value, cell) in cases {
            assert_eq!(field(value), cell, "{value:?}");
        }
        // Plain numbers cannot be formulas: a credit note's negative total stays a number.
        for number in ["-116.00", "116.00", "-5", "0"] {
            assert_eq!(field(number), number);
        }
        // A trigger character elsewhere than at the start is left alone.
        assert_eq!(field("F-1=2"), "F-1=2");
    }

    #[test]
    fn an_attacker_s_rn_and_a_negative_total_in_a_row() {
        let mut note = intent("demo", "=HYPERLINK(\"http://e.x\")");
        note.totals.total = dec!(-116.00);
        note.totals.vat = dec!(-16.00);
        let line = row(&certified_entry(4, 10, note));
        assert!(
            line.contains(",\"'=HYPERLINK(\"\"http://e.x\"\")\",FV,-116.00,-16.00,"),
            "{line}"
        );
    }
}
