//! The signature of a finalized invoice (codeDEFDGI): 24 characters of `[A-Z2-7]`, the first
//! 24 of the base32 (RFC 4648, no padding) of
//! `SHA-256(signing_key|nim|tc|type|rn|total|vat|at)`, with amounts written with 2 decimals
//! and `at` as `yyyyMMddHHmmss`. Deterministic: the same invoice always signs the same.

use mcf_sfe::fields;
use sha2::{Digest, Sha256};

use super::NewInvoice;

/// Length of a codeDEFDGI.
pub const CODE_DEF_LEN: usize = 24;

/// RFC 4648 base32 alphabet.
const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// The codeDEFDGI of `invoice`, counted as `tc` on device `nim`.
pub fn code_def(signing_key: &str, nim: &str, tc: u64, invoice: &NewInvoice) -> String {
    let message = format!(
        "{signing_key}|{nim}|{tc}|{}|{}|{:.2}|{:.2}|{}",
        invoice.invoice_type,
        invoice.rn,
        invoice.total,
        invoice.vat,
        fields::datetime(invoice.at)
    );
    let digest = Sha256::digest(message.as_bytes());
    let mut code = base32(&digest);
    code.truncate(CODE_DEF_LEN);
    code
}

/// Whether `text` looks like a codeDEFDGI this simulator produces.
pub(super) fn is_code_def(text: &str) -> bool {
    text.len() == CODE_DEF_LEN && text.bytes().all(|b| ALPHABET.contains(&b))
}

/// RFC 4648 base32 without padding.
fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let mut buffer: u16 = 0;
    let mut bits: u32 = 0;
    for &byte in bytes {
        buffer = (buffer << 8) | u16::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[usize::from((buffer >> bits) & 0x1F)]));
        }
        buffer &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(char::from(
            ALPHABET[usize::from((buffer << (5 - bits)) & 0x1F)],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use mcf_sfe::types::InvoiceType;
    use rust_decimal_macros::dec;

    #[test]
    fn base32_matches_rfc_4648_vectors() {
        assert_eq!(base32(b""), "");
        assert_eq!(base32(b"f"), "MY");
        assert_eq!(base32(b"fo"), "MZXQ");
        assert_eq!(base32(b"foo"), "MZXW6");
        assert_eq!(base32(b"foob"), "MZXW6YQ");
        assert_eq!(base32(b"fooba"), "MZXW6YTB");
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
    }

    fn invoice() -> NewInvoice {
        NewInvoice {
            invoice_type: InvoiceType::Fv,
            rn: "F-2026-001".into(),
            at: NaiveDate::from_ymd_opt(2026, 11, 21)
                .and_then(|d| d.and_hms_opt(14, 30, 5))
                .unwrap(),
            total: dec!(1200.00),
            vat: dec!(165.52),
            reference: None,
            usd_rate: None,
        }
    }

    #[test]
    fn signature_is_24_base32_chars_and_deterministic() {
        let a = code_def("key", "SIM0000001", 1, &invoice());
        assert_eq!(a.len(), CODE_DEF_LEN);
        assert!(is_code_def(&a));
        assert_eq!(a, code_def("key", "SIM0000001", 1, &invoice()));
        // The scale of an amount does not change the signature.
        let mut same = invoice();
        same.total = dec!(1200);
        assert_eq!(a, code_def("key", "SIM0000001", 1, &same));
    }

    #[test]
    fn every_signed_element_changes_the_signature() {
        let base = code_def("key", "SIM0000001", 1, &invoice());
        assert_ne!(base, code_def("other", "SIM0000001", 1, &invoice()));
        assert_ne!(base, code_def("key", "SIM0000002", 1, &invoice()));
        assert_ne!(base, code_def("key", "SIM0000001", 2, &invoice()));
        let mut changed = invoice();
        changed.rn = "F-2026-002".into();
        assert_ne!(base, code_def("key", "SIM0000001", 1, &changed));
        let mut changed = invoice();
        changed.vat = dec!(165.53);
        assert_ne!(base, code_def("key", "SIM0000001", 1, &changed));
        assert!(!is_code_def("abcdefghijklmnopqrstuvwx"));
        assert!(!is_code_def("ABC"));
    }
}
