//! Text-level rewrites of reply DATA: the engine builds PROTOCOL.md's reply, and these turn it
//! into the profile's wire form (cut C1h after N fields, replace the currency block, rewrite
//! `R:`...). Each works on the escaped DATA: a `,` inside a text is `^x2c;` there, so
//! splitting on `,` finds exactly the fields.
//!
//! A rewrite never makes DATA longer than a frame carries: when a longer form would not fit,
//! the box falls back to a shorter one (for C1h: no currency block, then PROTOCOL.md's empty
//! rates; elsewhere: the reference form) and says so in the log. The reference form always
//! fits (the engine guarantees it).

use mcf_sfe::command::code;
use mcf_sfe::dialect::encode_windows_1252;
use mcf_sfe::wire::MAX_REPLY_DATA;
use mcf_sfe::LineBreaks;
use rust_decimal::Decimal;
use tracing::warn;

use super::{
    C1hLayout, C2hLayout, CertificationForm, CurrencyBlock, Firmware, Mcur, RefusalForm,
    TaxpayerReply, UntaxedRate,
};

/// C1h field indexes (PROTOCOL.md §5.1).
const C1H_FIELDS: usize = 30;
const FIRST_RATE: usize = 11;
const CURRENCY: usize = 27;
/// 33h field count and MCUR's index (PROTOCOL.md §5.8).
const SUBTOTAL_FIELDS: usize = 35;
const MCUR: usize = 34;

pub(super) fn reply_data(
    firmware: &Firmware,
    cmd: u8,
    data: Vec<u8>,
    refused: bool,
    tc: u64,
) -> Vec<u8> {
    let data = if refused {
        refusal(data, firmware.refusals)
    } else {
        match cmd {
            code::DEVICE_STATE => device_state(
                data,
                firmware.c1h_layout,
                firmware.currency,
                firmware.untaxed_rate,
            ),
            code::LINK_STATE => link_state(data, firmware.c2h_layout, tc),
            code::TAXPAYER_FIELD => taxpayer(data, firmware.taxpayer),
            code::SUBTOTAL => subtotal(data, firmware.mcur),
            code::FINALIZE => certification(data, firmware.certification),
            _ => data,
        }
    };
    line_breaks(data, firmware.line_breaks)
}

/// The fields of escaped DATA; `None` when it is not UTF-8 (never from the engine).
fn fields(data: &[u8]) -> Option<Vec<String>> {
    let text = std::str::from_utf8(data).ok()?;
    Some(text.split(',').map(str::to_owned).collect())
}

/// `fields` joined, when they fit a frame.
fn joined(fields: &[String]) -> Option<Vec<u8>> {
    let data = fields.join(",").into_bytes();
    (data.len() <= MAX_REPLY_DATA).then_some(data)
}

/// `rewritten` when it fits, else `reference` (and a log line saying which reply).
fn or_reference(what: &str, rewritten: Option<Vec<u8>>, reference: Vec<u8>) -> Vec<u8> {
    rewritten.unwrap_or_else(|| {
        warn!("{what}: the firmware's form does not fit a frame, PROTOCOL.md's is sent");
        reference
    })
}

/// C1h in the profile's layout, currency block and no-VAT rate form.
pub(super) fn device_state(
    data: Vec<u8>,
    layout: C1hLayout,
    currency: CurrencyBlock,
    untaxed: UntaxedRate,
) -> Vec<u8> {
    let Some(reference) = fields(&data).filter(|f| f.len() == C1H_FIELDS) else {
        return data;
    };
    // Longest first; the last attempt is never longer than the reference.
    let attempts = [
        (Some(currency), untaxed),
        (None, untaxed),
        (None, UntaxedRate::Empty),
    ];
    for (index, (currency, untaxed)) in attempts.into_iter().enumerate() {
        let mut f = reference.clone();
        if untaxed == UntaxedRate::Zero {
            for rate in f.iter_mut().skip(FIRST_RATE).take(CURRENCY - FIRST_RATE) {
                if rate.is_empty() {
                    "0.00".clone_into(rate);
                }
            }
        }
        match currency {
            Some(form) => currency_block(&mut f[CURRENCY..], form),
            None => f[CURRENCY..].iter_mut().for_each(String::clear),
        }
        f.truncate(layout.fields());
        if let Some(data) = joined(&f) {
            if index > 0 {
                warn!(
                    attempt = index,
                    "C1h too long for a frame: shorter form sent"
                );
            }
            return data;
        }
    }
    data
}

/// Rewrites the 3 fields of C1h's currency block.
fn currency_block(block: &mut [String], form: CurrencyBlock) {
    let [code, rate, date] = block else {
        return;
    };
    let used = !code.is_empty() || !rate.is_empty() || !date.is_empty();
    match form {
        CurrencyBlock::Reference => {}
        CurrencyBlock::CdfWhenNoRate if !used => {
            *code = "CDF".to_owned();
            *rate = "-1".to_owned();
        }
        CurrencyBlock::UsdTwoDecimals if used => {
            if let Ok(value) = rate.parse::<Decimal>() {
                *rate = format!("{:.2}", value.round_dp(2));
            }
        }
        CurrencyBlock::CdfWhenNoRate | CurrencyBlock::UsdTwoDecimals => {}
    }
}

/// C2h: `EC,DC,DT,STA,ER`, or `EC,TC,DT,DIS`.
pub(super) fn link_state(data: Vec<u8>, layout: C2hLayout, tc: u64) -> Vec<u8> {
    if layout == C2hLayout::Fields5 {
        return data;
    }
    let Some(mut f) = fields(&data).filter(|f| f.len() == 5) else {
        return data;
    };
    f[1] = tc.to_string();
    "DIS".clone_into(&mut f[3]);
    f.truncate(4);
    or_reference("C2h", joined(&f), data)
}

/// 2Bh: `key,value`, or the value alone.
pub(super) fn taxpayer(data: Vec<u8>, form: TaxpayerReply) -> Vec<u8> {
    match (form, data.iter().position(|&b| b == b',')) {
        (TaxpayerReply::ValueOnly, Some(comma)) => data[comma + 1..].to_vec(),
        _ => data,
    }
}

/// 33h with the profile's MCUR.
pub(super) fn subtotal(data: Vec<u8>, mcur: Mcur) -> Vec<u8> {
    if mcur == Mcur::Reference {
        return data;
    }
    let Some(mut f) = fields(&data).filter(|f| f.len() == SUBTOTAL_FIELDS) else {
        return data;
    };
    f[MCUR] = match mcur {
        Mcur::Reference => f[MCUR].clone(),
        Mcur::Empty => String::new(),
        Mcur::Zero => "0.00".to_owned(),
        // An invoice without a USD rate: the box repeats MV (in CDF) as its "currency total".
        Mcur::Always if f[MCUR].is_empty() => f[0].clone(),
        Mcur::Always => f[MCUR].clone(),
    };
    or_reference("33h", joined(&f), data)
}

/// 38h `R:` in the profile's form; `P:`, the empty reply and others unchanged.
pub(super) fn certification(data: Vec<u8>, form: CertificationForm) -> Vec<u8> {
    let Some(body) = data.strip_prefix(b"R:") else {
        return data;
    };
    let rewritten = match form {
        CertificationForm::Prefixed => return data,
        CertificationForm::SpacedPrefix => [b"R :".as_slice(), body].concat(),
        CertificationForm::Bare => body.to_vec(),
        CertificationForm::BareWithoutFn => match fields(body) {
            Some(mut f) if f.len() == 8 => {
                f.remove(6);
                f.join(",").into_bytes()
            }
            _ => body.to_vec(),
        },
    };
    if rewritten.len() > MAX_REPLY_DATA {
        return or_reference("38h", None, data);
    }
    rewritten
}

/// An `E:` refusal in the profile's form: as built (its text is already in the profile's
/// language), in Windows-1252, or no text at all (the status bit tells).
pub(super) fn refusal(data: Vec<u8>, form: RefusalForm) -> Vec<u8> {
    match form {
        RefusalForm::English | RefusalForm::French => data,
        // Windows-1252 never takes more bytes than UTF-8: it still fits.
        RefusalForm::FrenchWindows1252 => match std::str::from_utf8(&data) {
            Ok(text) => encode_windows_1252(text),
            Err(_) => data,
        },
        RefusalForm::StatusBit => Vec::new(),
    }
}

/// The profile's CR/LF escapes (same length: it still fits).
pub(super) fn line_breaks(data: Vec<u8>, line_breaks: LineBreaks) -> Vec<u8> {
    match line_breaks {
        LineBreaks::Protocol => data,
        LineBreaks::Swapped => line_breaks.outgoing(&data).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PROTOCOL.md §5.1's fresh C1h, and one after a USD invoice.
    const FRESH: &str =
        "SIM0000001,A1234567B,20261121143000,0,0,0,,,,,,,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00,,,";
    const USD: &str = "SIM0000001,A1234567B,20261121143000,1,1,0,20261121143005,FV,4B2RQ5DXMT4N4AODOS5H4YXR,F-1,1392.00,,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00,USD,2850.5,20261120";

    fn c1h(data: &str, layout: C1hLayout, currency: CurrencyBlock, untaxed: UntaxedRate) -> String {
        String::from_utf8(device_state(data.into(), layout, currency, untaxed)).unwrap()
    }

    #[test]
    fn c1h_reference_is_unchanged() {
        for data in [FRESH, USD] {
            let out = c1h(
                data,
                C1hLayout::Fields30,
                CurrencyBlock::Reference,
                UntaxedRate::Empty,
            );
            assert_eq!(out, data);
        }
    }

    #[test]
    fn c1h_layouts_cut_trailing_fields() {
        let cut = |layout| c1h(USD, layout, CurrencyBlock::Reference, UntaxedRate::Empty);
        assert_eq!(
            cut(C1hLayout::Fields27),
            "SIM0000001,A1234567B,20261121143000,1,1,0,20261121143005,FV,4B2RQ5DXMT4N4AODOS5H4YXR,F-1,1392.00,,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00"
        );
        assert_eq!(
            cut(C1hLayout::Fields11),
            "SIM0000001,A1234567B,20261121143000,1,1,0,20261121143005,FV,4B2RQ5DXMT4N4AODOS5H4YXR,F-1,1392.00"
        );
        assert_eq!(
            cut(C1hLayout::Fields10),
            "SIM0000001,A1234567B,20261121143000,1,1,0,20261121143005,FV,4B2RQ5DXMT4N4AODOS5H4YXR,F-1"
        );
    }

    #[test]
    fn c1h_currency_blocks() {
        let all = C1hLayout::Fields30;
        assert!(
            c1h(FRESH, all, CurrencyBlock::CdfWhenNoRate, UntaxedRate::Empty)
                .ends_with(",1.00,1.00,CDF,-1,")
        );
        // Once a USD rate was used, the CDF box reports it as PROTOCOL.md does.
        assert_eq!(
            c1h(USD, all, CurrencyBlock::CdfWhenNoRate, UntaxedRate::Empty),
            USD
        );
        assert!(
            c1h(USD, all, CurrencyBlock::UsdTwoDecimals, UntaxedRate::Empty)
                .ends_with(",USD,2850.50,20261120")
        );
        assert_eq!(
            c1h(
                FRESH,
                all,
                CurrencyBlock::UsdTwoDecimals,
                UntaxedRate::Empty
            ),
            FRESH
        );
        let four = USD.replace("2850.5", "2850.1251");
        assert!(c1h(
            &four,
            all,
            CurrencyBlock::UsdTwoDecimals,
            UntaxedRate::Empty
        )
        .ends_with(",USD,2850.13,20261120"));
    }

    #[test]
    fn c1h_groups_without_vat_as_zero() {
        let out = c1h(
            FRESH,
            C1hLayout::Fields30,
            CurrencyBlock::Reference,
            UntaxedRate::Zero,
        );
        assert_eq!(
            out,
            "SIM0000001,A1234567B,20261121143000,0,0,0,,,,,,0.00,16.00,5.00,0.00,0.00,16.00,5.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,1.00,1.00,,,"
        );
        // The last-invoice fields stay empty: only rates are rates.
        assert!(out.contains(",0,0,0,,,,,,0.00,"));
    }

    #[test]
    fn c1h_too_long_falls_back_to_shorter_forms() {
        // A C1h of exactly 212 bytes (PROTOCOL.md §13): the longer forms cannot fit.
        let long = format!(
            "SIM0000001,A1234567B,20261121143000,99999999,99999999,0,20261121143005,FV,4B2RQ5DXMT4N4AODOS5H4YXR,{},999999999.00,,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00,USD,2850.1234,20261120",
            "F".repeat(24)
        );
        let len = long.len();
        assert!(len <= MAX_REPLY_DATA, "{len}");
        let out = c1h(
            &long,
            C1hLayout::Fields30,
            CurrencyBlock::Reference,
            UntaxedRate::Zero,
        );
        assert!(out.len() <= MAX_REPLY_DATA);
        assert_eq!(out.split(',').count(), 30);
        assert!(out.ends_with(",1.00,1.00,,,"), "{out}");
        assert!(!out.contains("0.00,0.00"), "{out}");
    }

    #[test]
    fn c2h_four_fields_idle() {
        let data = b"3,0,20261121143010,CON,".to_vec();
        assert_eq!(link_state(data.clone(), C2hLayout::Fields5, 3), data);
        assert_eq!(
            link_state(data, C2hLayout::Fields4Idle, 3),
            b"3,3,20261121143010,DIS"
        );
    }

    #[test]
    fn taxpayer_value_alone() {
        let data = b"I0,Boutique^x2c; Kinshasa".to_vec();
        assert_eq!(taxpayer(data.clone(), TaxpayerReply::KeyValue), data);
        assert_eq!(
            taxpayer(data, TaxpayerReply::ValueOnly),
            b"Boutique^x2c; Kinshasa"
        );
    }

    #[test]
    fn subtotal_mcur_forms() {
        let zeros = ",0.00".repeat(33);
        let cdf = format!("1392.00{zeros},");
        let usd = format!("1392.00{zeros},0.49");
        let run = |data: &str, mcur| String::from_utf8(subtotal(data.into(), mcur)).unwrap();
        assert_eq!(run(&cdf, Mcur::Reference), cdf);
        assert_eq!(run(&usd, Mcur::Empty), cdf);
        assert_eq!(run(&cdf, Mcur::Zero), format!("1392.00{zeros},0.00"));
        assert_eq!(run(&usd, Mcur::Zero), format!("1392.00{zeros},0.00"));
        assert_eq!(run(&cdf, Mcur::Always), format!("1392.00{zeros},1392.00"));
        assert_eq!(run(&usd, Mcur::Always), usd);
    }

    #[test]
    fn certification_forms() {
        let r = b"R:1,1,FV,20261121143005,SIM0000001,A1234567B,F-2026-001,4B2RQ5DXMT4N4AODOS5H4YXR";
        let run = |form| String::from_utf8(certification(r.to_vec(), form)).unwrap();
        assert_eq!(run(CertificationForm::Prefixed).as_bytes(), r);
        assert_eq!(
            run(CertificationForm::SpacedPrefix),
            "R :1,1,FV,20261121143005,SIM0000001,A1234567B,F-2026-001,4B2RQ5DXMT4N4AODOS5H4YXR"
        );
        assert_eq!(
            run(CertificationForm::Bare),
            "1,1,FV,20261121143005,SIM0000001,A1234567B,F-2026-001,4B2RQ5DXMT4N4AODOS5H4YXR"
        );
        assert_eq!(
            run(CertificationForm::BareWithoutFn),
            "1,1,FV,20261121143005,SIM0000001,A1234567B,4B2RQ5DXMT4N4AODOS5H4YXR"
        );
        for other in [
            &b"P:checking original with DGI"[..],
            b"",
            b"E:no open invoice",
        ] {
            assert_eq!(
                certification(other.to_vec(), CertificationForm::BareWithoutFn),
                other
            );
        }
    }

    #[test]
    fn refusal_forms() {
        let data = "E:facture déjà ouverte".as_bytes().to_vec();
        assert_eq!(refusal(data.clone(), RefusalForm::French), data);
        assert_eq!(
            refusal(data.clone(), RefusalForm::FrenchWindows1252),
            b"E:facture d\xE9j\xE0 ouverte"
        );
        let incoherent = "E:INCOHÉRENT".as_bytes().to_vec();
        assert_eq!(
            refusal(incoherent, RefusalForm::FrenchWindows1252),
            b"E:INCOH\xC9RENT"
        );
        assert_eq!(refusal(data, RefusalForm::StatusBit), b"");
    }

    #[test]
    fn swapped_line_breaks_rewrite_replies_and_read_requests() {
        let data = b"D0,Ligne 1^xa;Ligne 2^xd;".to_vec();
        assert_eq!(line_breaks(data.clone(), LineBreaks::Protocol), data);
        assert_eq!(
            line_breaks(data, LineBreaks::Swapped),
            b"D0,Ligne 1^xd;Ligne 2^xa;"
        );
        let firmware = Firmware {
            line_breaks: LineBreaks::Swapped,
            ..Firmware::reference()
        };
        assert_eq!(
            firmware.incoming(b"A,Merci^xd;^xa;").as_ref(),
            b"A,Merci^xa;^xd;"
        );
        assert_eq!(
            Firmware::reference().incoming(b"A,Merci^xd;").as_ref(),
            b"A,Merci^xd;"
        );
    }

    #[test]
    fn the_whole_rewrite_applies_the_form_then_the_escapes() {
        let firmware = Firmware::named("silent").unwrap();
        let out = firmware.reply_data(0x31, "E:r^xd;é".as_bytes().to_vec(), true, 0);
        assert_eq!(out, b"E:r^xa;\xE9");
        let reference = Firmware::reference();
        let c1 = FRESH.as_bytes().to_vec();
        assert_eq!(
            reference.reply_data(code::DEVICE_STATE, c1.clone(), false, 0),
            c1
        );
    }
}
