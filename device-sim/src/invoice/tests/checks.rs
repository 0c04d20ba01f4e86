//! What C0 and 31 check against the device: NIF, FN, memory, originals, rates, amounts.

use super::*;

#[test]
fn open_checks_nif_rn_memory_and_usd_rate() {
    let full = memory(0);
    let memory = memory(10);
    let rates = rates();
    let checks = Checks {
        nif: NIF,
        rates: &rates,
        memory: &memory,
    };
    let mut m = InvoiceMachine::new();
    let mut other_nif = header(InvoiceType::Fv, PriceMode::Ttc);
    other_nif.nif = "B7654321C".into();
    assert_eq!(
        m.open(other_nif, &checks).map_err(|r| r.to_string()),
        Err("NIF B7654321C is not the device NIF A1234567B".to_owned())
    );
    let mut bad_rn = header(InvoiceType::Fv, PriceMode::Ttc);
    bad_rn.rn = "F^1".into();
    assert!(matches!(
        m.open(bad_rn, &checks),
        Err(Refusal::InvalidRn(_))
    ));
    bad_rn = header(InvoiceType::Fv, PriceMode::Ttc);
    bad_rn.rn = "R".repeat(33);
    assert!(matches!(
        m.open(bad_rn, &checks),
        Err(Refusal::InvalidRn(_))
    ));
    let mut usd = header(InvoiceType::Ev, PriceMode::Ttc);
    let date = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
    usd.usd_rate = Some(UsdRate {
        rate: dec!(0),
        date,
    });
    assert_eq!(m.open(usd, &checks), Err(Refusal::InvalidUsdRate(dec!(0))));
    let full_checks = Checks {
        memory: &full,
        ..checks
    };
    let fv = header(InvoiceType::Fv, PriceMode::Ttc);
    assert_eq!(m.open(fv.clone(), &full_checks), Err(Refusal::MemoryFull));
    assert_eq!(m.phase(), Phase::Idle);
    m.open(fv, &checks).unwrap();
    assert_eq!(m.phase(), Phase::Open);
}

#[test]
fn credit_notes_need_an_original_of_the_matching_kind() {
    let mut memory = memory(10);
    let at = NaiveDate::from_ymd_opt(2026, 11, 21)
        .and_then(|d| d.and_hms_opt(10, 0, 0))
        .unwrap();
    let fv = memory
        .commit(
            NewInvoice {
                invoice_type: InvoiceType::Fv,
                rn: "F-1".into(),
                at,
                total: dec!(1200.00),
                vat: dec!(165.52),
                reference: None,
                usd_rate: None,
            },
            "key",
        )
        .unwrap();
    let rates = rates();
    let checks = Checks {
        nif: NIF,
        rates: &rates,
        memory: &memory,
    };
    let credit = |t, code: &str| {
        let mut h = header(t, PriceMode::Ttc);
        h.reference = Some(CreditReference {
            kind: ReferenceType::Ran,
            code_def: code.into(),
        });
        h
    };
    let mut m = InvoiceMachine::new();
    let unknown = credit(InvoiceType::Fa, "AAAAAAAAAAAAAAAAAAAAAAAA");
    assert_eq!(
        m.open(unknown, &checks).map_err(|r| r.to_string()),
        Err("original invoice not found: AAAAAAAAAAAAAAAAAAAAAAAA".to_owned())
    );
    // EA refers to EV/ET only, not to an FV.
    let wrong_kind = credit(InvoiceType::Ea, &fv.code_def);
    assert!(matches!(
        m.open(wrong_kind, &checks),
        Err(Refusal::OriginalNotFound(_))
    ));
    m.open(credit(InvoiceType::Fa, &fv.code_def), &checks)
        .unwrap();
    assert_eq!(
        m.invoice().map(Invoice::invoice_type),
        Some(InvoiceType::Fa)
    );
}

#[test]
fn item_lines_are_checked_against_the_device() {
    let memory = memory(10);
    let rates = rates();
    let checks = Checks {
        nif: NIF,
        rates: &rates,
        memory: &memory,
    };
    let mut m = machine_at(Phase::Open, &memory);
    let refused = |m: &mut InvoiceMachine, item: Item| {
        m.add_item(&item, &checks).map_err(|r| r.to_string()).err()
    };
    let wrong_rate = item('B', dec!(18), dec!(10), dec!(1));
    assert_eq!(
        refused(&mut m, wrong_rate).as_deref(),
        Some("rate mismatch for group B: device has 16.00")
    );
    let uncharged = item('A', dec!(16), dec!(10), dec!(1));
    assert_eq!(
        refused(&mut m, uncharged).as_deref(),
        Some("rate mismatch for group A: device has no VAT")
    );
    let mut wrong_amount = stylo();
    wrong_amount.line_amount = dec!(1100.00);
    assert_eq!(
        refused(&mut m, wrong_amount).as_deref(),
        Some("line amount mismatch: 1100.00 given, price x quantity is 1200.00")
    );
    let zero_qty = item('B', dec!(16), dec!(10), dec!(0));
    assert_eq!(
        refused(&mut m, zero_qty).as_deref(),
        Some("quantity must be positive")
    );
    let negative = item('B', dec!(16), dec!(-10), dec!(1));
    assert_eq!(
        refused(&mut m, negative).as_deref(),
        Some("price must not be negative")
    );
    let precise = item('B', dec!(16), dec!(10.005), dec!(1));
    assert_eq!(
        refused(&mut m, precise).as_deref(),
        Some("price has more than 2 decimals")
    );
    let mut huge = item('B', dec!(16), dec!(1), dec!(1));
    huge.price = Decimal::MAX;
    huge.quantity = dec!(2);
    assert_eq!(
        refused(&mut m, huge).as_deref(),
        Some("amount out of range")
    );
    assert_eq!(m.phase(), Phase::Open);
    // Group A charges nothing: rate 0 is right; E is 0 %.
    m.add_item(&item('A', dec!(0), dec!(10), dec!(1)), &checks)
        .unwrap();
    m.add_item(&item('E', dec!(0.00), dec!(2.50), dec!(4)), &checks)
        .unwrap();
    assert_eq!(m.take_subtotal().unwrap().total, dec!(20.00));
}
