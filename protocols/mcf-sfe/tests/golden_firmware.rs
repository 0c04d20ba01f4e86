//! Golden vectors of real boxes' replies (`vectors/firmware-variants.txt`): each frame decodes
//! through `HostCodec`, the tolerant reader reads it with the reference dialect, what a host
//! needs comes out right, and exactly the expected fields are reported as odd. The reference
//! vectors (`device-to-host.txt`) read without any anomaly.

mod meaning;
mod vectors;

use mcf_sfe::reply::{GroupRate, Last, Reading};
use mcf_sfe::types::{InvoiceType, TaxGroup};
use mcf_sfe::{Dialect, FromDevice, HostCodec, Reply};
use meaning::decode_all;
use rust_decimal_macros::dec;
use vectors::Body;

fn reading(name: &str) -> Reading {
    let v = vectors::firmware()
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no firmware vector {name}"));
    let items = decode_all(&mut HostCodec, &v.frame);
    let [FromDevice::Reply(frame)] = &items[..] else {
        panic!("{v}: HostCodec decoded {items:?}")
    };
    let Body::Reply { data, status, .. } = &v.body else {
        panic!("{v}: not a reply")
    };
    assert_eq!(frame.data(), &data[..], "{v}: DATA");
    assert_eq!(frame.status().0, *status, "{v}: status");
    Reply::read(
        frame.cmd(),
        frame.data(),
        frame.status(),
        &Dialect::default(),
    )
    .unwrap_or_else(|e| panic!("{v}: unreadable: {e}"))
}

fn odd(reading: &Reading) -> Vec<&'static str> {
    reading.anomalies.iter().map(|a| a.field).collect()
}

fn group(letter: char) -> TaxGroup {
    TaxGroup::from_letter(letter).expect("group")
}

#[test]
fn every_firmware_vector_is_read_and_checked_here() {
    let names: Vec<String> = vectors::firmware().into_iter().map(|v| v.name).collect();
    assert_eq!(names.len(), 13, "{names:?}");
    for name in &names {
        let _ = reading(name);
    }
}

#[test]
fn c1h_variants_give_identity_counters_and_rates() {
    let cdf = reading("fw-c1-currency-cdf");
    assert_eq!(odd(&cdf), ["curCode", "curRate", "curDate"]);
    let Reply::DeviceState(state) = &cdf.reply else {
        panic!("not C1h")
    };
    assert_eq!((state.nif.as_str(), state.tc), ("A1234567B", 5));
    assert_eq!(
        state.rate(group('B')),
        Some(&GroupRate::Percent(dec!(16.00)))
    );

    let usd = reading("fw-c1-usd-two-decimals");
    assert!(usd.anomalies.is_empty(), "{:?}", usd.anomalies);

    let eleven = reading("fw-c1-eleven-fields");
    assert_eq!(odd(&eleven), ["fields"]);
    let Reply::DeviceState(state) = &eleven.reply else {
        panic!("not C1h")
    };
    assert_eq!(state.rates, None);
    assert_eq!(state.last.invoice().map(|l| l.rn.as_str()), Some("F-1"));

    let ten = reading("fw-c1-ten-fields");
    let Reply::DeviceState(state) = &ten.reply else {
        panic!("not C1h")
    };
    assert_eq!((state.tc, state.fvc, state.frc), (2, 0, 0));
    let Last::Invoice(last) = &state.last else {
        panic!("last invoice not read: {:?}", state.last)
    };
    assert_eq!((last.invoice_type, last.amount), (InvoiceType::Fv, None));
}

#[test]
fn c2h_and_2bh_variants_read_as_information() {
    let c2 = reading("fw-c2-four-fields");
    assert_eq!(odd(&c2), ["fields"]);
    let Reply::LinkState(link) = &c2.reply else {
        panic!("not C2h")
    };
    assert_eq!(
        (link.sent, link.stored, link.state.as_str()),
        (Some(3), Some(3), "DIS")
    );

    let b2 = reading("fw-2b-value-only");
    assert_eq!(odd(&b2), ["key"]);
    let Reply::TaxpayerField(value) = &b2.reply else {
        panic!("not 2Bh")
    };
    assert_eq!(
        (value.key, value.value.as_str()),
        (None, "Boutique Demo, Gombe")
    );
}

#[test]
fn subtotal_variants_keep_the_compared_fields() {
    let zero = reading("fw-33-mcur-zero");
    assert!(
        zero.anomalies.is_empty(),
        "MCUR 0.00 is a decimal: only a host can judge it"
    );
    let Reply::Subtotal(subtotal) = &zero.reply else {
        panic!("not 33h")
    };
    assert_eq!(subtotal.total, dec!(28505.00));
    assert_eq!(subtotal.group_vat[group('B').index()], dec!(3931.72));
    assert_eq!(subtotal.mcur, "0.00");

    let short = reading("fw-33-fifteen-fields");
    assert_eq!(odd(&short), ["fields"]);
    let Reply::Subtotal(subtotal) = &short.reply else {
        panic!("not 33h")
    };
    assert_eq!((subtotal.groups, subtotal.vat()), (6, dec!(192.00)));
}

#[test]
fn finalization_variants_certify_or_poll() {
    for name in ["fw-38-r-space", "fw-38-seven-no-prefix"] {
        let r = reading(name);
        let Reply::Certified(cert) = &r.reply else {
            panic!("{name}: not a certification")
        };
        assert_eq!(cert.code_def, "4B2RQ5DXMT4N4AODOS5H4YXR", "{name}");
        assert_eq!(cert.counters(), "1/1 FV", "{name}");
    }
    assert_eq!(odd(&reading("fw-38-r-space")), ["prefix"]);
    assert!(reading("fw-38-seven-no-prefix").anomalies.is_empty());
    let pending = reading("fw-38-pending-space");
    assert!(matches!(pending.reply, Reply::Pending(_)));
    assert_eq!(odd(&pending), ["prefix"]);
}

#[test]
fn refusal_variants_are_refusals() {
    let by_status = reading("fw-31-refused-by-status");
    assert_eq!(by_status.reply, Reply::Refused(String::new()));
    assert_eq!(odd(&by_status), ["refusal"]);
    let cp1252 = reading("fw-31-refusal-windows-1252");
    assert_eq!(cp1252.reply, Reply::Refused("INCOH\u{c9}RENT".into()));
    assert_eq!(odd(&cp1252), ["DATA"]);
}

#[test]
fn the_reference_vectors_read_without_anomaly() {
    for v in vectors::all() {
        let Body::Reply {
            cmd, data, status, ..
        } = &v.body
        else {
            continue;
        };
        let reading = Reply::read(*cmd, data, mcf_sfe::Status(*status), &Dialect::default())
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert!(reading.anomalies.is_empty(), "{v}: {:?}", reading.anomalies);
    }
}
