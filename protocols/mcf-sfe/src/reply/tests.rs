use super::*;
use crate::command::code;
use rust_decimal_macros::dec;

fn at() -> NaiveDateTime {
    fields::parse_datetime("DT", "20261121143005").unwrap()
}

fn cert() -> Certification {
    Certification {
        fc: 12,
        tc: 345,
        invoice_type: InvoiceType::Fv,
        at: at(),
        mid: "SIM0000001".into(),
        nif: "A1234567B".into(),
        rn: Some("F-2026-001".into()),
        code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
    }
}

#[test]
fn certification_round_trips_and_builds_security_elements() {
    let reply = Reply::Certified(cert());
    let data = reply.encode(code::FINALIZE).unwrap();
    assert_eq!(
        data,
        b"R:12,345,FV,20261121143005,SIM0000001,A1234567B,F-2026-001,ABCDEFGHIJKLMNOPQRSTUVWX"
    );
    assert_eq!(Reply::parse(code::FINALIZE, &data).unwrap(), reply);
    assert_eq!(cert().counters(), "12/345 FV");
    assert_eq!(
        cert().qr_code(),
        "RDCDEF01;SIM0000001;ABCDEFGHIJKLMNOPQRSTUVWX;A1234567B;20261121143005"
    );
}

#[test]
fn older_firmware_forms_are_accepted() {
    let seven = b"12,345,FV,20261121143005,SIM0000001,A1234567B,ABCDEFGHIJKLMNOPQRSTUVWX";
    let Reply::Certified(c) = Reply::parse(code::FINALIZE, seven).unwrap() else {
        panic!("not a certification")
    };
    assert_eq!(c.rn, None);
    assert_eq!(c.code_def, "ABCDEFGHIJKLMNOPQRSTUVWX");
    assert_eq!(
        Reply::parse(code::FINALIZE, b"P:DGI").unwrap(),
        Reply::Pending("DGI".into())
    );
}

#[test]
fn refusals_are_recognized_for_any_command() {
    assert_eq!(
        Reply::parse(code::ITEM, b"E:rate mismatch^x2c; group B").unwrap(),
        Reply::Refused("rate mismatch, group B".into())
    );
}

#[test]
fn device_state_with_long_rn_still_fits() {
    let mut rates = [None; 16];
    for (i, r) in [(1, dec!(16)), (2, dec!(5)), (4, dec!(0)), (5, dec!(16))] {
        rates[i] = Some(r);
    }
    let state = DeviceState {
        mid: "SIM0000001".into(),
        nif: "A1234567B".into(),
        clock: Some(at()),
        tc: 99_999_999,
        fvc: 99_999_999,
        frc: 99_999_999,
        last: Last::Invoice(LastInvoice {
            at: at(),
            invoice_type: InvoiceType::Fa,
            code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
            rn: "R".repeat(crate::command::MAX_RN_LEN),
            amount: Some(dec!(999999999999.99)),
        }),
        rates: Some(rates.map(GroupRate::from)),
        currency: Some(CurrencyInfo::usd(dec!(2850.5), at().date())),
    };
    let reply = Reply::DeviceState(state);
    let data = reply.encode(code::DEVICE_STATE).unwrap();
    assert_eq!(Reply::parse(code::DEVICE_STATE, &data).unwrap(), reply);
}

mod tolerant;
