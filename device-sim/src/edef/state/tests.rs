use chrono::NaiveDate;
use mcf_sfe::types::TaxGroup;
use rust_decimal_macros::dec;

use super::*;
use crate::fiscal::CODE_DEF_LEN;

const SIGNER: Signer<'static> = Signer {
    nim: "CD01000001-1",
    signing_key: "key",
};

fn calculation(invoice_type: InvoiceType, rn: &str) -> Calculation {
    Calculation {
        invoice_type,
        rn: rn.to_owned(),
        reference: None,
        rates: [Decimal::ZERO; TaxGroup::COUNT],
        ttc: [Decimal::ZERO; TaxGroup::COUNT],
        ht: [Decimal::ZERO; TaxGroup::COUNT],
        vat: [Decimal::ZERO; TaxGroup::COUNT],
        specific_tax: Decimal::ZERO,
        total: dec!(116.00),
        vat_total: dec!(16.00),
        foreign_total: None,
    }
}

fn at() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 5, 4)
        .and_then(|d| d.and_hms_opt(10, 11, 12))
        .unwrap()
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn uids_look_like_uuids_and_differ() {
    let mut state = EmcfState::default();
    let now = Instant::now();
    let a = state.add_pending(calculation(InvoiceType::Fv, "1"), now, MINUTE, "s");
    let b = state.add_pending(calculation(InvoiceType::Fv, "2"), now, MINUTE, "s");
    assert_ne!(a, b);
    for uid in [&a, &b] {
        let parts: Vec<usize> = uid.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12], "{uid}");
        assert_eq!(uid.as_bytes()[14], b'4', "{uid}");
        assert!(uid.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
        assert_eq!(uid.to_lowercase(), *uid);
    }
    assert_eq!(state.pending().len(), 2);
    assert_eq!(state.pending()[0].uid, a);
}

#[test]
fn requests_expire_and_can_be_expired_at_once() {
    let mut state = EmcfState::default();
    let now = Instant::now();
    let short = state.add_pending(calculation(InvoiceType::Fv, "1"), now, MINUTE, "s");
    let long = state.add_pending(calculation(InvoiceType::Fv, "2"), now, MINUTE * 2, "s");
    state.purge_expired(now + MINUTE);
    assert!(state.pending_calculation(&short).is_err());
    assert!(state.pending_calculation(&long).is_ok());
    state.expire_all();
    assert!(state.pending().is_empty());
    assert_eq!(
        state.finalize(&long, SIGNER, at()).unwrap_err(),
        DgiError::NotPending(long.clone())
    );
}

#[test]
fn counters_go_per_type_and_overall_from_one() {
    let mut state = EmcfState::default();
    let now = Instant::now();
    let mut finalize = |invoice_type, rn| {
        let uid = state.add_pending(calculation(invoice_type, rn), now, MINUTE, "s");
        state.finalize(&uid.to_uppercase(), SIGNER, at()).unwrap()
    };
    let first = finalize(InvoiceType::Fv, "1");
    let second = finalize(InvoiceType::Ft, "2");
    let third = finalize(InvoiceType::Fv, "3");
    assert_eq!(first.counters, "1/1 FV");
    assert_eq!(second.counters, "1/2 FT");
    assert_eq!(third.counters, "2/3 FV");
    assert_eq!(first.code_def.len(), CODE_DEF_LEN);
    assert_ne!(first.code_def, third.code_def);
    // The signature is the device simulator's, TC included.
    let expected = code_def(
        "key",
        "CD01000001-1",
        3,
        &NewInvoice {
            invoice_type: InvoiceType::Fv,
            rn: "3".into(),
            at: at(),
            total: dec!(116.00),
            vat: dec!(16.00),
            reference: None,
            usd_rate: None,
        },
    );
    assert_eq!(third.code_def, expected);
    assert_eq!(state.finalized().len(), 3);
    assert_eq!(state.original(&third.code_def), Some(&third));
    assert!(state.pending().is_empty());
}

#[test]
fn cancel_removes_only_pending_requests() {
    let mut state = EmcfState::default();
    let uid = state.add_pending(
        calculation(InvoiceType::Fv, "1"),
        Instant::now(),
        MINUTE,
        "s",
    );
    assert!(state.cancel(&uid).is_ok());
    assert_eq!(state.cancel(&uid).unwrap_err().code(), 20);
    assert_eq!(state.cancel("unknown").unwrap_err().code(), 20);
}

#[test]
fn credited_sums_the_credit_notes_of_an_original() {
    let mut state = EmcfState::default();
    let now = Instant::now();
    let uid = state.add_pending(calculation(InvoiceType::Fv, "1"), now, MINUTE, "s");
    let original = state.finalize(&uid, SIGNER, at()).unwrap().code_def;
    for rn in ["A1", "A2"] {
        let mut credit = calculation(InvoiceType::Fa, rn);
        credit.reference = Some(original.clone());
        credit.total = dec!(10.50);
        let uid = state.add_pending(credit, now, MINUTE, "s");
        state.finalize(&uid, SIGNER, at()).unwrap();
    }
    assert_eq!(state.credited(&original), dec!(21.00));
    assert_eq!(state.credited("other"), Decimal::ZERO);
    assert_eq!(state.finalized()[2].counters, "2/3 FA");
}
