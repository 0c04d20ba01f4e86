//! The tolerant reader against each section of docs/firmware.md: what a real box may send,
//! what is read from it, and what is reported as odd.

use super::super::*;
use crate::command::code;
use crate::dialect::{Dialect, LineBreaks};
use crate::wire::{Status, StatusFlag};
use rust_decimal_macros::dec;

const RATES: &str = ",,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00";
const IDENTITY: &str = "SIM0000001,A1234567B,20261121143000,5,4,1";
const LAST: &str = "20261121120000,FV,ABCDEFGHIJKLMNOPQRSTUVWX,F-1,1392.00";

fn read(cmd: u8, data: &str) -> Reading {
    Reply::read(cmd, data.as_bytes(), Status::default(), &Dialect::default())
        .unwrap_or_else(|e| panic!("{data:?}: {e}"))
}

fn odd_fields(reading: &Reading) -> Vec<(&'static str, &str)> {
    reading
        .anomalies
        .iter()
        .map(|a| (a.field, a.raw.as_str()))
        .collect()
}

fn c1h(reading: &Reading) -> &DeviceState {
    match &reading.reply {
        Reply::DeviceState(state) => state,
        other => panic!("not C1h: {other:?}"),
    }
}

#[test]
fn the_reference_c1h_reads_without_anomaly() {
    let reading = read(code::DEVICE_STATE, &format!("{IDENTITY},{LAST}{RATES},,,"));
    assert!(reading.anomalies.is_empty(), "{:?}", reading.anomalies);
    let state = c1h(&reading);
    assert_eq!(state.currency, None);
    assert_eq!(
        state.rate(crate::types::TaxGroup::from_letter('B').unwrap()),
        Some(&GroupRate::Percent(dec!(16.00)))
    );
    assert_eq!(
        state.last.invoice().map(|l| l.amount),
        Some(Some(dec!(1392.00)))
    );
}

#[test]
fn a_filled_currency_block_is_kept_raw_and_reported() {
    // The box of the issue: `...,1.00,1.00,CDF,-1,` for a CDF state.
    let reading = read(
        code::DEVICE_STATE,
        &format!("{IDENTITY},{LAST}{RATES},CDF,-1,"),
    );
    let state = c1h(&reading);
    let currency = state.currency.as_ref().expect("kept");
    assert_eq!(
        (currency.code.as_str(), currency.rate.as_str()),
        ("CDF", "-1")
    );
    assert_eq!(
        odd_fields(&reading),
        [("curCode", "CDF"), ("curRate", "-1"), ("curDate", "")]
    );
    // A USD rate with 2 decimals is what PROTOCOL.md describes, just written longer.
    let usd = read(
        code::DEVICE_STATE,
        &format!("{IDENTITY},{LAST}{RATES},USD,2850.50,20261120"),
    );
    assert!(usd.anomalies.is_empty(), "{:?}", usd.anomalies);
    let currency = c1h(&usd).currency.clone().expect("usd");
    assert_eq!(currency.rate(), Some(dec!(2850.50)));
}

#[test]
fn short_and_long_c1h_read_what_they_carry() {
    // 10 fields: no lastAmount, no rates, no currency.
    let ten = read(
        code::DEVICE_STATE,
        &format!("{IDENTITY},20261121120000,FV,ABCDEFGHIJKLMNOPQRSTUVWX,F-1"),
    );
    let s = c1h(&ten);
    assert_eq!(s.rates, None);
    assert_eq!(s.last.invoice().map(|l| l.amount), Some(None));
    assert_eq!(odd_fields(&ten), [("fields", "10")]);
    // 11 fields: the DRC client's minimum.
    assert_eq!(
        c1h(&read(code::DEVICE_STATE, &format!("{IDENTITY},{LAST}"))).rates,
        None
    );
    // 27 fields: rates, no currency block.
    let s27 = read(code::DEVICE_STATE, &format!("{IDENTITY},{LAST}{RATES}"));
    assert!(c1h(&s27).rates.is_some());
    assert_eq!(c1h(&s27).currency, None);
    assert_eq!(odd_fields(&s27), [("fields", "27")]);
    // Extra trailing fields are ignored.
    let long = read(
        code::DEVICE_STATE,
        &format!("{IDENTITY},{LAST}{RATES},,,,X,Y"),
    );
    assert_eq!(odd_fields(&long), [("fields", "32")]);
    // Fewer than 6 fields: MID..FRC are needed.
    assert!(Reply::parse(code::DEVICE_STATE, b"SIM0000001,A1234567B,20261121143000,5").is_err());
}

#[test]
fn fields_only_settling_needs_never_fail_c1h() {
    let odd_clock = read(
        code::DEVICE_STATE,
        &format!("SIM1,NIF,2026-11-21,5,4,1,{LAST}"),
    );
    assert_eq!(c1h(&odd_clock).clock, None);
    assert_eq!(
        odd_fields(&odd_clock),
        [("fields", "11"), ("DT", "2026-11-21")]
    );
    // A last invoice without its FN cannot be matched to an intent: unreadable, not "another".
    let no_fn = read(
        code::DEVICE_STATE,
        "SIM1,NIF,20261121143000,5,4,1,20261121120000,FV,ABCDEFGHIJKLMNOPQRSTUVWX,,1.00",
    );
    assert!(matches!(c1h(&no_fn).last, Last::Unreadable(_)));
    let bad_type = read(
        code::DEVICE_STATE,
        "SIM1,NIF,20261121143000,5,4,1,20261121120000,XX,ABCDEFGHIJKLMNOPQRSTUVWX,F-1,1.00",
    );
    assert!(matches!(c1h(&bad_type).last, Last::Unreadable(_)));
    let nothing = read(code::DEVICE_STATE, "SIM1,NIF,20261121143000,0,0,0,,,,,");
    assert_eq!(c1h(&nothing).last, Last::Nothing);
    // An empty lastDEF beside a filled lastFN proves nothing.
    let half = read(
        code::DEVICE_STATE,
        "SIM1,NIF,20261121143000,5,4,1,20261121120000,FV,,F-1,116.00",
    );
    assert!(matches!(c1h(&half).last, Last::Unreadable(_)));
    // A counter is needed: a bad one fails the reply.
    assert!(Reply::parse(code::DEVICE_STATE, b"SIM1,NIF,20261121143000,x,4,1,,,,,").is_err());
}

#[test]
fn an_unreadable_rate_spoils_only_its_group() {
    let rates = RATES.replacen("16.00", "16%", 1);
    let reading = read(code::DEVICE_STATE, &format!("{IDENTITY},{LAST}{rates},,,"));
    let s = c1h(&reading);
    let group = |l| crate::types::TaxGroup::from_letter(l).unwrap();
    assert_eq!(
        s.rate(group('B')),
        Some(&GroupRate::Unreadable("16%".into()))
    );
    assert_eq!(s.rate(group('C')), Some(&GroupRate::Percent(dec!(5.00))));
    assert_eq!(s.rate(group('A')), Some(&GroupRate::NotCharged));
    assert_eq!(odd_fields(&reading), [("rateB", "16%")]);
}

#[test]
fn c2h_of_four_fields_or_unknown_states_still_reads() {
    let reading = read(code::LINK_STATE, "3,3,20261121143010,DIS");
    let Reply::LinkState(link) = &reading.reply else {
        panic!("not C2h")
    };
    assert_eq!((link.sent, link.stored), (Some(3), Some(3)));
    assert_eq!(link.state, "DIS");
    assert_eq!(link.error, "");
    assert_eq!(odd_fields(&reading), [("fields", "4")]);
    let odd = read(code::LINK_STATE, "x,,,RES,PAS DE R\u{c9}SEAU");
    let Reply::LinkState(link) = &odd.reply else {
        panic!("not C2h")
    };
    assert_eq!(link.sent, None);
    assert_eq!(link.error, "PAS DE R\u{c9}SEAU");
    assert_eq!(odd_fields(&odd), [("EC", "x"), ("DC", ""), ("STA", "RES")]);
}

#[test]
fn a_2bh_value_without_its_key_is_read() {
    let with_key = read(code::TAXPAYER_FIELD, "I0,Kin^x2c; Import");
    assert_eq!(
        with_key.reply,
        Reply::TaxpayerField(TaxpayerValue {
            key: Some(crate::types::TaxpayerKey::I0),
            value: "Kin, Import".into()
        })
    );
    let alone = read(code::TAXPAYER_FIELD, "Boutique Demo");
    assert_eq!(
        alone.reply,
        Reply::TaxpayerField(TaxpayerValue {
            key: None,
            value: "Boutique Demo".into()
        })
    );
    assert_eq!(odd_fields(&alone), [("key", "Boutique Demo")]);
}

fn subtotal(reading: &Reading) -> &Subtotal {
    match &reading.reply {
        Reply::Subtotal(s) => s,
        other => panic!("not 33h: {other:?}"),
    }
}

#[test]
fn mcur_is_information_kept_as_sent() {
    let zeros = ",0.00".repeat(32);
    for (mcur, odd) in [
        ("", false),
        ("0.00", false),
        ("10.00", false),
        ("N/A", true),
    ] {
        let reading = read(code::SUBTOTAL, &format!("1392.00{zeros},0.00,{mcur}"));
        assert_eq!(subtotal(&reading).mcur, mcur);
        assert_eq!(
            !reading.anomalies.is_empty(),
            odd,
            "{mcur}: {:?}",
            reading.anomalies
        );
    }
    // Without MCUR (34 fields).
    let reading = read(code::SUBTOTAL, &format!("1392.00{zeros},0.00"));
    assert_eq!(subtotal(&reading).mcur, "");
    assert_eq!(subtotal(&reading).groups, 16);
    assert_eq!(odd_fields(&reading), [("fields", "34")]);
}

#[test]
fn a_box_with_fewer_groups_sends_a_shorter_33h() {
    // 15 fields: MV, A..F TTC, A..F VAT, MTS, MCUR.
    let reading = read(
        code::SUBTOTAL,
        "1392.00,0.00,1392.00,0.00,0.00,0.00,0.00,0.00,192.00,0.00,0.00,0.00,0.00,0.00,",
    );
    let s = subtotal(&reading);
    assert_eq!(s.groups, 6);
    assert_eq!(s.group_ttc[1], dec!(1392.00));
    assert_eq!(s.group_vat[1], dec!(192.00));
    assert_eq!(s.vat(), dec!(192.00));
    assert_eq!(odd_fields(&reading), [("fields", "15")]);
    // A field that is needed fails the reply.
    assert!(Reply::parse(code::SUBTOTAL, b"1392.00,x,0.00,0.00,0.00").is_err());
    assert!(Reply::parse(code::SUBTOTAL, b"1392.00,0.00,0.00").is_err());
}

#[test]
fn r_with_a_space_and_no_prefix_are_one_thing() {
    let body = "1,1,FV,20261121143005,SIM0000001,A1234567B,F-1,4B2RQ5DXMT4N4AODOS5H4YXR";
    let plain = read(code::FINALIZE, &format!("R:{body}"));
    assert!(plain.anomalies.is_empty());
    let spaced = read(code::FINALIZE, &format!("R :{body}"));
    assert_eq!(spaced.reply, plain.reply);
    assert_eq!(odd_fields(&spaced), [("prefix", "R :")]);
    assert_eq!(read(code::FINALIZE, body).reply, plain.reply);
    let seven = read(
        code::FINALIZE,
        "1,1,FV,20261121143005,SIM0000001,A1234567B,4B2RQ5DXMT4N4AODOS5H4YXR",
    );
    assert!(matches!(
        seven.reply,
        Reply::Certified(Certification { rn: None, .. })
    ));
    // With a ninth field, which one is SIG is a guess: unreadable (settled from C1h).
    assert!(Reply::parse(code::FINALIZE, format!("R:{body},116.00").as_bytes()).is_err());
    let pending = read(code::FINALIZE, "P :MID,NIF,F-1,C,PR");
    assert_eq!(pending.reply, Reply::Pending("MID,NIF,F-1,C,PR".into()));
}

#[test]
fn an_empty_reply_with_the_refusal_bit_is_a_refusal() {
    let refused = Status::with(&[StatusFlag::CommandRefused]);
    let reading = Reply::read(code::ITEM, b"", refused, &Dialect::default()).unwrap();
    assert_eq!(reading.reply, Reply::Refused(String::new()));
    assert_eq!(odd_fields(&reading), [("refusal", "")]);
    let ignored = Dialect {
        refusal_by_status: false,
        ..Dialect::default()
    };
    let reading = Reply::read(code::ITEM, b"", refused, &ignored).unwrap();
    assert_eq!(reading.reply, Reply::Done);
    // The idle status of a real box sets no bit the gateway reads.
    let idle = Status([0xC0, 0x80, 0xC0, 0x80, 0xC0, 0xD8]);
    let reading = Reply::read(code::ITEM, b"", idle, &Dialect::default()).unwrap();
    assert_eq!(reading.reply, Reply::Done);
    assert!(reading.anomalies.is_empty());
}

#[test]
fn refusal_texts_in_windows_1252_and_swapped_line_breaks_are_read() {
    let reading = Reply::read(
        code::ITEM,
        b"E:INCOH\xC9RENT^xa;ligne 2",
        Status::default(),
        &Dialect {
            line_breaks: LineBreaks::Swapped,
            ..Dialect::default()
        },
    )
    .unwrap();
    assert_eq!(
        reading.reply,
        Reply::Refused("INCOH\u{c9}RENT\rligne 2".into())
    );
    assert_eq!(reading.anomalies[0].field, "DATA");
    // Text where an empty reply belongs is reported, not refused.
    let chatty = read(code::ITEM, "OK");
    assert_eq!(chatty.reply, Reply::Done);
    assert_eq!(odd_fields(&chatty), [("DATA", "OK")]);
}

#[test]
fn the_nif_of_an_unreadable_device_state_is_still_found() {
    let dialect = Dialect::default();
    // TC is not a number: the reply cannot be read, its NIF can.
    let broken = b"SIM0000001,B7654321C,20261121143000,x,4,1";
    assert!(Reply::read(code::DEVICE_STATE, broken, Status::default(), &dialect).is_err());
    assert_eq!(
        DeviceState::nif_in(broken, &dialect).as_deref(),
        Some("B7654321C")
    );
    assert_eq!(DeviceState::nif_in(b"SIM0000001,,x", &dialect), None);
    assert_eq!(DeviceState::nif_in(b"SIM0000001", &dialect), None);
}
