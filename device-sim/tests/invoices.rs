//! Whole invoices driven over a real pseudo-terminal through tokio-serial.

mod common;

use std::time::Duration;

use common::*;
use emcf_sim::config::SlowReply;

use mcf_sfe::types::{InvoiceType, TaxGroup};
use mcf_sfe::{Command, Reply, StatusFlag};
use rust_decimal_macros::dec;

fn device_state(reply: Reply) -> mcf_sfe::reply::DeviceState {
    match reply {
        Reply::DeviceState(state) => state,
        other => panic!("C1h answered {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sales_invoice_then_a_credit_note_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;

    let before = device_state(host.call(&Command::DeviceState).await);
    assert_eq!(before.nif, NIF);
    assert_eq!(
        before.rate(group('B')),
        Some(&mcf_sfe::reply::GroupRate::Percent(dec!(16)))
    );
    assert_eq!(
        before.rate(group('A')),
        Some(&mcf_sfe::reply::GroupRate::NotCharged)
    );

    let (subtotal, fv) = host.certify(&fv_invoice("F-2026-0001")).await;
    // 1200.00 TTC at 16% in B: VAT 165.52; 1050.00 TTC at 5% in C: VAT 50.00.
    assert_eq!(subtotal.total, dec!(2250.00));
    assert_eq!(subtotal.group_vat[1], dec!(165.52));
    assert_eq!(subtotal.group_vat[2], dec!(50.00));
    assert_eq!(subtotal.vat(), dec!(215.52));
    assert_eq!(subtotal.usd_equivalent(), None);
    assert_eq!(fv.invoice_type, InvoiceType::Fv);
    assert_eq!((fv.fc, fv.tc), (before.fvc + 1, before.tc + 1));
    assert_eq!(fv.rn.as_deref(), Some("F-2026-0001"));
    assert_eq!(fv.code_def.len(), 24);
    assert!(fv
        .qr_code()
        .starts_with(&format!("RDCDEF01;{};{};{NIF};", fv.mid, fv.code_def)));

    let (credit_total, fa) = host
        .certify(&fa_invoice("AV-2026-0001", &fv.code_def, dec!(600)))
        .await;
    assert_eq!(credit_total.total, dec!(600.00));
    assert_eq!(fa.invoice_type, InvoiceType::Fa);
    assert_eq!((fa.fc, fa.tc), (before.frc + 1, before.tc + 2));
    assert_ne!(fa.code_def, fv.code_def);
    // A credit note takes long: the box said SYN meanwhile instead of going silent.
    assert!(host.stats.syns >= 5, "{:?}", host.stats);
    assert_eq!(host.stats.timeouts, 0);

    let after = device_state(host.call(&Command::DeviceState).await);
    assert_eq!(
        (after.tc, after.fvc, after.frc),
        (before.tc + 2, before.fvc + 1, before.frc + 1)
    );
    let last = after
        .last
        .invoice()
        .cloned()
        .expect("C1h reports the last invoice");
    assert_eq!(
        (last.rn.as_str(), last.code_def.as_str()),
        ("AV-2026-0001", fa.code_def.as_str())
    );
    assert_eq!(last.amount, Some(dec!(600.00)));
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credit_note_needs_a_real_original() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;
    let invoice = fa_invoice("AV-1", "ZZZZZZZZZZZZZZZZZZZZZZZZ", dec!(100));
    let frame = host.call_frame(&invoice[0]).await.unwrap();
    assert!(frame.status().has(StatusFlag::CommandRefused));
    assert!(!frame.status().has(StatusFlag::InvoiceOpen));
    match Reply::parse(frame.cmd(), frame.data()).unwrap() {
        Reply::Refused(text) => assert!(text.contains("original"), "{text}"),
        other => panic!("FA without a valid original answered {other:?}"),
    }
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_invoice_in_usd_reports_its_usd_equivalent() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;
    let (subtotal, ev) = host.certify(&ev_usd_invoice("EXP-77")).await;
    assert_eq!(subtotal.total, dec!(840000.00));
    assert_eq!(
        subtotal.group_ttc[TaxGroup::from_letter('E').unwrap().index()],
        dec!(840000.00)
    );
    assert_eq!(subtotal.vat(), dec!(0));
    assert_eq!(subtotal.usd_equivalent(), Some(dec!(300.00)));
    assert_eq!(ev.invoice_type, InvoiceType::Ev);
    assert_eq!(ev.counters(), format!("{}/{} EV", ev.fc, ev.tc));
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_invoice_changes_no_counter_and_frees_the_box() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;
    let before = device_state(host.call(&Command::DeviceState).await);
    let invoice = fv_invoice("F-CANCEL");
    for cmd in &invoice[..4] {
        assert_eq!(host.call(cmd).await, Reply::Done, "{cmd:?}");
    }
    let open = host.call_frame(&Command::DeviceState).await.unwrap();
    assert!(open.status().has(StatusFlag::InvoiceOpen));
    // One invoice at a time.
    assert!(matches!(host.call(&invoice[1]).await, Reply::Refused(_)));
    assert_eq!(host.call(&Command::Cancel).await, Reply::Done);
    let after = host.call_frame(&Command::DeviceState).await.unwrap();
    assert!(!after.status().has(StatusFlag::InvoiceOpen));
    let after = device_state(Reply::parse(after.cmd(), after.data()).unwrap());
    assert_eq!(
        (after.tc, after.fvc, after.frc),
        (before.tc, before.fvc, before.frc)
    );
    // Nothing left open: cancelling again is refused, and a new invoice goes through.
    assert!(matches!(
        host.call(&Command::Cancel).await,
        Reply::Refused(_)
    ));
    let (_, cert) = host.certify(&fv_invoice("F-AFTER-CANCEL")).await;
    assert_eq!(cert.tc, before.tc + 1);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_order_and_inconsistent_commands_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;
    let invoice = fv_invoice("F-ORDER");
    // An item before C0h, a payment before 33h.
    assert!(matches!(host.call(&invoice[2]).await, Reply::Refused(_)));
    host.call(&invoice[1]).await;
    assert!(matches!(host.call(&invoice[6]).await, Reply::Refused(_)));
    // A rate that is not the device's.
    let wrong_rate = item("X", 'B', dec!(18), dec!(10), dec!(1));
    match host.call(&Command::Item(wrong_rate)).await {
        Reply::Refused(text) => assert!(text.contains("rate"), "{text}"),
        other => panic!("{other:?}"),
    }
    host.call(&invoice[2]).await;
    host.call(&Command::Subtotal).await;
    // 38h totals that differ from 33h, then a payment shortfall.
    assert!(matches!(
        host.call(&finalize(dec!(1), dec!(0))).await,
        Reply::Refused(_)
    ));
    host.call(&Command::Payment(mcf_sfe::command::Payment {
        method: mcf_sfe::types::PaymentMethod::Especes,
        amount: dec!(1000),
    }))
    .await;
    match host.call(&finalize(dec!(1200), dec!(165.52))).await {
        Reply::Refused(text) => assert!(text.contains("shortfall"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(host.call(&Command::Cancel).await, Reply::Done);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_mode_credit_note_answers_p_until_done() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = fast_options(&dir.path().join("state.json"));
    options.device.timing.credit_note_reply = SlowReply::Pending;
    let (sim, mut host) = start(options).await;
    let (_, fv) = host.certify(&fv_invoice("F-P1")).await;
    let invoice = fa_invoice("AV-P1", &fv.code_def, dec!(600));
    let mut subtotal = None;
    for cmd in &invoice {
        if let Reply::Subtotal(s) = host.call(cmd).await {
            subtotal = Some(s);
        }
    }
    let finalize = Command::Finalize(subtotal.unwrap().finalize_totals());
    let mut pending = 0;
    let cert = loop {
        match host.call(&finalize).await {
            Reply::Pending(_) => {
                pending += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Reply::Certified(cert) => break cert,
            other => panic!("{other:?}"),
        }
    };
    assert!(pending >= 2, "answered P: {pending} times");
    assert_eq!(cert.tc, fv.tc + 1);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_credit_note_is_certified_once_despite_the_host_resending() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = fast_options(&dir.path().join("state.json"));
    options.device.timing.credit_note_reply = SlowReply::Silent;
    options.device.timing.credit_note = Duration::from_millis(900);
    let (sim, mut host) = start(options).await;
    let (_, fv) = host.certify(&fv_invoice("F-SIL")).await;
    let syns_before = host.stats.syns;
    let (_, fa) = host
        .certify(&fa_invoice("AV-SIL", &fv.code_def, dec!(600)))
        .await;
    // The box said nothing for 900 ms: the host timed out and resent the same SEQ, and the
    // resends queued behind the finalization were answered by replay, not executed.
    assert!(host.stats.timeouts >= 1, "{:?}", host.stats);
    assert_eq!(host.stats.syns, syns_before, "a silent box sends no SYN");
    assert_eq!(fa.tc, fv.tc + 1);
    let after = device_state(host.call(&Command::DeviceState).await);
    assert_eq!((after.tc, after.frc), (2, 1));
    let (_, engine) = sim.stop().await.unwrap();
    assert_eq!(engine.memory().invoices().len(), 2);
}
