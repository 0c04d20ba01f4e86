//! Credit notes (FA, EA): originals, and the Syn, Silent and Pending slow replies.

use super::*;

#[test]
fn an_fa_refers_to_a_real_fv_and_an_unknown_code_is_refused() {
    let mut engine = Engine::open(config()).unwrap();
    let original = sell(&mut engine, "F-1");
    let unknown = credit(InvoiceType::Fa, "A-1", "AAAAAAAAAAAAAAAAAAAAAAAA");
    let text = refused(&mut engine, &unknown);
    assert!(text.starts_with("original invoice not found"), "{text}");
    assert!(!engine.status().has(StatusFlag::InvoiceOpen));

    send(
        &mut engine,
        &credit(InvoiceType::Fa, "A-1", &original.code_def),
    );
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    send(&mut engine, &pay(dec!(1200.00)));
    let (reply, handled) = send_at(
        &mut engine,
        &finalize(dec!(1200.00), dec!(165.52)),
        Instant::now(),
    );
    let cert = certified(reply);
    assert_eq!(
        (cert.invoice_type, cert.fc, cert.tc),
        (InvoiceType::Fa, 1, 2)
    );
    assert_eq!(handled.processing, engine.config().timing.credit_note);
    assert!(!handled.silent);
    let record = engine.memory().last().unwrap();
    assert_eq!(
        record.reference.as_deref(),
        Some(original.code_def.as_str())
    );
    // A credit note is not an original for another credit note.
    let text = refused(&mut engine, &credit(InvoiceType::Fa, "A-2", &cert.code_def));
    assert!(text.starts_with("original invoice not found"), "{text}");
}

#[test]
fn pending_mode_answers_p_until_the_dgi_check_is_over() {
    let (mut engine, totals) = credit_note_engine(SlowReply::Pending);
    let wait = engine.config().timing.credit_note;
    let t0 = Instant::now();
    let (reply, handled) = send_at(&mut engine, &totals, t0);
    assert_eq!(reply, Reply::Pending(PENDING_TEXT.into()));
    assert_eq!(handled.processing, engine.config().timing.command);
    assert!(handled.status.has(StatusFlag::FinalizePending));
    assert_eq!(handled.finalized, None);
    let (reply, _) = send_at(&mut engine, &totals, t0 + wait / 2);
    assert_eq!(reply, Reply::Pending(PENDING_TEXT.into()));
    assert_eq!(
        refused(&mut engine, &pay(dec!(1))),
        "finalization in progress"
    );
    let other = finalize(dec!(1200.00), dec!(0.00));
    assert!(matches!(
        send_at(&mut engine, &other, t0 + wait).0,
        Reply::Refused(_)
    ));
    assert_eq!(engine.memory().frc(), 0);

    let (reply, handled) = send_at(&mut engine, &totals, t0 + wait);
    let cert = certified(reply);
    assert_eq!(
        (cert.invoice_type, cert.fc, cert.tc),
        (InvoiceType::Fa, 1, 2)
    );
    assert_eq!(handled.finalized, Some(cert));
    assert!(!handled.status.has(StatusFlag::FinalizePending));
    assert!(!handled.status.has(StatusFlag::InvoiceOpen));
}

#[test]
fn a_pending_credit_note_can_be_cancelled() {
    let (mut engine, totals) = credit_note_engine(SlowReply::Pending);
    assert!(matches!(send(&mut engine, &totals), Reply::Pending(_)));
    assert_eq!(send(&mut engine, &Command::Cancel), Reply::Done);
    assert!(!engine.status().has(StatusFlag::FinalizePending));
    assert_eq!((engine.memory().tc(), engine.memory().frc()), (1, 0));
}

#[test]
fn silent_mode_works_the_whole_credit_note_time_without_syn() {
    let (mut engine, totals) = credit_note_engine(SlowReply::Silent);
    let (reply, handled) = send_at(&mut engine, &totals, Instant::now());
    certified(reply);
    assert!(handled.silent);
    assert_eq!(handled.processing, engine.config().timing.credit_note);
}
