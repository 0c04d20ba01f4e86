//! Sales invoices (FV, EV) from C1h to 38h, and the refusals on the way.

use super::*;

#[test]
fn a_full_fv_in_ttc_mode_is_certified_with_exact_totals() {
    let mut engine = Engine::open(config()).unwrap();
    let state = device_state(&mut engine);
    assert_eq!(
        state.rates.as_ref().map(|r| r[group('B')].clone()),
        Some(mcf_sfe::reply::GroupRate::Percent(dec!(16)))
    );
    let client = Command::SetClient(Client {
        name: "Client, SARL".into(),
        ..Client::default()
    });
    assert_eq!(send(&mut engine, &client), Reply::Done);
    assert!(engine.status().has(StatusFlag::ClientSet));
    send(
        &mut engine,
        &open(InvoiceType::Fv, PriceMode::Ttc, "F-2026-001"),
    );
    assert!(engine.status().has(StatusFlag::InvoiceOpen));
    send(&mut engine, &stylo());
    let comment = Command::Comment(Comment {
        line: CommentLine::A,
        text: "Merci".into(),
    });
    assert_eq!(send(&mut engine, &comment), Reply::Done);
    let (reply, handled) = send_at(&mut engine, &Command::Subtotal, Instant::now());
    let expected_data = format!("1200.00,{},{},0.00,", groups("1200.00"), groups("165.52"));
    assert_eq!(String::from_utf8(handled.reply).unwrap(), expected_data);
    let Reply::Subtotal(sub) = reply else {
        panic!()
    };
    assert_eq!((sub.total, sub.vat()), (dec!(1200.00), dec!(165.52)));
    send(&mut engine, &pay(dec!(1000.00)));
    send(&mut engine, &pay(dec!(200.00)));

    let (reply, handled) = send_at(
        &mut engine,
        &finalize(dec!(1200.00), dec!(165.52)),
        Instant::now(),
    );
    let cert = certified(reply);
    assert_eq!(
        (cert.fc, cert.tc, cert.invoice_type),
        (1, 1, InvoiceType::Fv)
    );
    assert_eq!(cert.at, clock().with_nanosecond(0).unwrap());
    assert_eq!(
        (cert.mid.as_str(), cert.nif.as_str()),
        ("SIM0000001", "A1234567B")
    );
    assert_eq!(cert.rn.as_deref(), Some("F-2026-001"));
    assert_eq!(cert.code_def.len(), 24);
    assert!(cert
        .code_def
        .bytes()
        .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)));
    assert_eq!(handled.finalized.as_ref(), Some(&cert));
    assert_eq!(handled.processing, engine.config().timing.finalize);
    assert!(!handled.silent);
    assert!(!handled.status.has(StatusFlag::InvoiceOpen));
    assert!(!handled.status.has(StatusFlag::ClientSet));

    let record = engine.memory().last().unwrap();
    assert_eq!((record.total, record.vat), (dec!(1200.00), dec!(165.52)));
    let state = device_state(&mut engine);
    assert_eq!((state.tc, state.fvc, state.frc), (1, 1, 0));
    let last = state.last.invoice().cloned().unwrap();
    assert_eq!(
        (last.rn.as_str(), last.amount),
        ("F-2026-001", Some(dec!(1200.00)))
    );
    assert_eq!(last.code_def, cert.code_def);
}

#[test]
fn an_ht_mode_invoice_adds_the_vat() {
    let mut engine = Engine::open(config()).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ht, "F-HT-1"));
    send(&mut engine, &stylo());
    send(
        &mut engine,
        &item("CAHIER", 'C', dec!(5.00), dec!(33.33), dec!(3)),
    );
    let sub = subtotal(&mut engine);
    assert_eq!(sub.group_ttc[group('B')], dec!(1392.00));
    assert_eq!(sub.group_vat[group('C')], dec!(5.00));
    assert_eq!((sub.total, sub.vat()), (dec!(1496.99), dec!(197.00)));
    send(&mut engine, &pay(dec!(1500.00)));
    let cert = certified(send(&mut engine, &finalize(dec!(1496.99), dec!(197.00))));
    assert_eq!(cert.tc, 1);
}

#[test]
fn a_usd_ev_reports_mcur_and_the_rate_in_c1h() {
    let mut engine = Engine::open(config()).unwrap();
    let Command::OpenInvoice(mut header) = open(InvoiceType::Ev, PriceMode::Ttc, "EV-1") else {
        unreachable!()
    };
    let date = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    header.usd_rate = Some(UsdRate {
        rate: dec!(2850.5),
        date,
    });
    assert_eq!(
        send(&mut engine, &Command::OpenInvoice(header)),
        Reply::Done
    );
    send(&mut engine, &stylo());
    let sub = subtotal(&mut engine);
    // 1200.00 / 2850.5 = 0.42098...
    assert_eq!(sub.usd_equivalent(), Some(dec!(0.42)));
    assert_eq!(sub.mcur, "0.42");
    send(&mut engine, &pay(dec!(1200.00)));
    let cert = certified(send(&mut engine, &finalize(dec!(1200.00), dec!(165.52))));
    assert_eq!((cert.invoice_type, cert.fc), (InvoiceType::Ev, 1));
    let currency = device_state(&mut engine).currency.unwrap();
    assert_eq!(
        (currency.code.as_str(), currency.rate(), currency.date()),
        ("USD", Some(dec!(2850.5)), Some(date))
    );
}

#[test]
fn a_cancelled_invoice_leaves_the_counters_unchanged() {
    let mut engine = Engine::open(config()).unwrap();
    sell(&mut engine, "F-1");
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-2"));
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    send(&mut engine, &pay(dec!(1200.00)));
    assert_eq!(send(&mut engine, &Command::Cancel), Reply::Done);
    assert!(!engine.status().has(StatusFlag::InvoiceOpen));
    let state = device_state(&mut engine);
    assert_eq!((state.tc, state.fvc, state.frc), (1, 1, 0));
    assert_eq!(state.last.invoice().map(|l| l.rn.as_str()), Some("F-1"));
    assert_eq!(refused(&mut engine, &Command::Cancel), "no open invoice");
    // The next invoice follows on.
    assert_eq!(sell(&mut engine, "F-2").tc, 2);
}

#[test]
fn out_of_order_commands_are_refused_and_leave_the_state_unchanged() {
    let mut engine = Engine::open(config()).unwrap();
    assert_eq!(refused(&mut engine, &stylo()), "no open invoice");
    assert!(engine.status().has(StatusFlag::CommandRefused));
    assert!(!engine.status().has(StatusFlag::SyntaxError));
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    assert!(
        !engine.status().has(StatusFlag::CommandRefused),
        "cleared by the next command"
    );
    let before = engine.machine().clone();
    assert_eq!(refused(&mut engine, &pay(dec!(10))), "subtotal (33h) first");
    assert_eq!(
        refused(&mut engine, &finalize(dec!(0), dec!(0))),
        "subtotal (33h) first"
    );
    assert_eq!(refused(&mut engine, &Command::Subtotal), "no item");
    let again = open(InvoiceType::Fv, PriceMode::Ttc, "F-2");
    assert_eq!(refused(&mut engine, &again), "invoice already open");
    assert_eq!(
        refused(&mut engine, &Command::SetClient(Client::default())),
        "invoice already open"
    );
    assert_eq!(engine.machine(), &before);
    // Read-only commands are allowed in every state and change nothing.
    device_state(&mut engine);
    send(&mut engine, &Command::LinkState);
    assert_eq!(engine.machine(), &before);
}

#[test]
fn totals_that_differ_from_the_subtotal_are_refused() {
    let mut engine = Engine::open(config()).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    send(&mut engine, &pay(dec!(1200.00)));
    let text = refused(&mut engine, &finalize(dec!(1200.00), dec!(192.00)));
    assert_eq!(
        text,
        "totals differ from subtotal: device has 1200.00,165.52"
    );
    assert!(engine.status().has(StatusFlag::InvoiceOpen));
    assert_eq!(engine.memory().tc(), 0);
}

#[test]
fn a_payment_shortfall_is_refused() {
    let mut engine = Engine::open(config()).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    let totals = finalize(dec!(1200.00), dec!(165.52));
    assert_eq!(refused(&mut engine, &totals), "no payment");
    send(&mut engine, &pay(dec!(1000.00)));
    assert_eq!(
        refused(&mut engine, &totals),
        "payment shortfall: paid 1000.00 of 1200.00"
    );
    send(&mut engine, &pay(dec!(200.00)));
    assert_eq!(certified(send(&mut engine, &totals)).tc, 1);
}

#[test]
fn link_state_and_taxpayer_fields_are_answered() {
    let mut engine = Engine::open(config()).unwrap();
    sell(&mut engine, "F-1");
    let Reply::LinkState(link) = send(&mut engine, &Command::LinkState) else {
        panic!()
    };
    assert_eq!((link.sent, link.stored), (Some(1), Some(0)));
    assert_eq!(link.last_contact, clock().with_nanosecond(0));
    assert_eq!(link.known_state(), Some(DgiLinkState::Connected));
    let reply = send(&mut engine, &Command::TaxpayerField(TaxpayerKey::I1));
    let Reply::TaxpayerField(field) = reply else {
        panic!()
    };
    assert_eq!(field.value, engine.config().taxpayer[1]);
    assert!(
        field.value.contains(','),
        "escaped on the wire, whole once read"
    );
}
