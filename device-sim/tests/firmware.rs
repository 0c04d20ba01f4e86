//! Every firmware preset, served in-process on a pty: a host that follows PROTOCOL.md but reads
//! replies tolerantly certifies an FV ttc, an FV ht, a USD invoice and an FA `COR` on each
//! (the fiscal memory holds them: `firmware/host.rs`), and each profile shows its traits on
//! the wire and the anomalies `Reply::read` reports for it. Long durations are shortened.

mod common;
#[path = "firmware/host.rs"]
mod host;

use std::collections::BTreeSet;
use std::time::Duration;

use emcf_sim::firmware::REAL_IDLE_STATUS;
use emcf_sim::Firmware;
use mcf_sfe::command::code;
use mcf_sfe::reply::{GroupRate, Last};
use mcf_sfe::{Reply, StatusFlag};
use rust_decimal_macros::dec;

use host::{run, Exchange, Session};

const WINDOW: Duration = Duration::from_millis(500);

fn preset(name: &str) -> Firmware {
    Firmware::named(name).expect("preset")
}

fn anomalies(fields: &[&'static str]) -> BTreeSet<&'static str> {
    fields.iter().copied().collect()
}

fn state(exchange: &Exchange) -> &mcf_sfe::reply::DeviceState {
    match &exchange.reading.reply {
        Reply::DeviceState(state) => state,
        other => panic!("C1h read as {other:?}"),
    }
}

/// MCUR of the 4 subtotals as sent.
fn mcurs(session: &Session) -> Vec<String> {
    session
        .of(code::SUBTOTAL)
        .iter()
        .map(|e| match &e.reading.reply {
            Reply::Subtotal(s) => s.mcur.clone(),
            other => panic!("33h read as {other:?}"),
        })
        .collect()
}

fn refused_text(exchange: &Exchange) -> &str {
    match &exchange.reading.reply {
        Reply::Refused(text) => text,
        other => panic!("not a refusal: {other:?}"),
    }
}

/// C1h: 5 reads, before each invoice and after the last; the third is before the USD one.
const BEFORE_USD: usize = 2;
const AFTER_USD: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_is_protocol_md() {
    let s = run(preset("reference"), WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&[]));
    let c1 = s.of(code::DEVICE_STATE);
    assert!(c1.iter().all(|e| e.field_count() == 30));
    assert!(c1[BEFORE_USD].text().ends_with(",1.00,1.00,,,"));
    assert!(c1[AFTER_USD].text().ends_with(",USD,2850.5,20261120"));
    assert!(s
        .certifications()
        .iter()
        .all(|e| e.text().starts_with("R:")));
    assert_eq!(mcurs(&s), ["", "", "0.49", ""]);
    assert_eq!(
        s.of(code::TAXPAYER_FIELD)[0].text(),
        "D0,Ligne 1^xa;Ligne 2"
    );
    let c2 = s.of(code::LINK_STATE)[1].text();
    assert!(c2.starts_with("4,0,") && c2.ends_with(",CON,"), "{c2}");
    // The repeated frame is replayed byte for byte, not executed again.
    let [first, second] = s.repeated.map(|i| &s.seen[i]);
    assert_eq!(first.frame.to_bytes(), second.frame.to_bytes());
    assert_eq!(second.reading.reply, Reply::Done);
    assert_eq!(refused_text(&s.seen[s.refusal]), "no open invoice");
    assert!(s.seen[s.refusal]
        .frame
        .status()
        .has(StatusFlag::CommandRefused));
    // The credit note worked with SYN every 60 ms.
    assert!(s.certifications()[3].syns >= 5);
    assert_eq!(s.stats.timeouts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cdf_currency_is_the_box_of_issue_16() {
    let s = run(preset("cdf-currency"), WINDOW).await;
    assert_eq!(
        s.anomalies(),
        anomalies(&["curCode", "curDate", "curRate", "prefix"])
    );
    let c1 = s.of(code::DEVICE_STATE);
    assert!(c1[BEFORE_USD].text().ends_with(",1.00,1.00,CDF,-1,"));
    assert!(c1[AFTER_USD].text().ends_with(",USD,2850.5,20261120"));
    // Group A charges no VAT and says 0.00.
    assert_eq!(c1[0].text().split(',').nth(11), Some("0.00"));
    assert_eq!(
        state(c1[0]).rate(common::group('A')),
        Some(&GroupRate::Percent(dec!(0)))
    );
    assert!(s
        .certifications()
        .iter()
        .all(|e| e.text().starts_with("R :")));
    assert_eq!(mcurs(&s), ["0.00"; 4]);
    assert_eq!(refused_text(&s.seen[s.refusal]), "aucune facture ouverte");
    // SEQ replay is on: the repeated frame gets its reply again.
    let [first, second] = s.repeated.map(|i| &s.seen[i]);
    assert_eq!(first.frame.to_bytes(), second.frame.to_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usd_currency_writes_rates_with_two_decimals_and_polls_credit_notes() {
    let mut firmware = preset("usd-currency");
    if let Some(credit) = &mut firmware.credit_note {
        credit.duration = Duration::from_millis(1_200);
    }
    let s = run(firmware, WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&[]));
    let c1 = s.of(code::DEVICE_STATE);
    assert!(c1[BEFORE_USD].text().ends_with(",1.00,1.00,,,"));
    assert!(c1[AFTER_USD].text().ends_with(",USD,2850.50,20261120"));
    // MCUR always carries a value: MV itself for a CDF invoice.
    assert_eq!(mcurs(&s), ["2750.00", "1370.00", "0.49", "600.00"]);
    let polls = s
        .of(code::FINALIZE)
        .iter()
        .filter(|e| matches!(e.reading.reply, Reply::Pending(_)))
        .count();
    assert!(polls >= 2, "{polls} P: replies");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1h_27_has_no_currency_block() {
    let s = run(preset("c1h-27"), WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&["fields"]));
    for exchange in s.of(code::DEVICE_STATE) {
        assert_eq!(exchange.field_count(), 27);
        assert!(state(exchange).rates.is_some() && state(exchange).currency.is_none());
    }
    for exchange in s.certifications() {
        assert!(exchange.text().starts_with(|c: char| c.is_ascii_digit()));
        assert_eq!(exchange.field_count(), 8);
    }
    assert!(s.certs.iter().all(|c| c.rn.is_some()));
    assert_eq!(mcurs(&s), ["", "", "", ""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1h_11_refuses_with_a_status_bit() {
    let s = run(preset("c1h-11"), WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&["fields", "refusal"]));
    for exchange in s.of(code::DEVICE_STATE) {
        assert_eq!(exchange.field_count(), 11);
        assert!(state(exchange).rates.is_none());
    }
    let last = s.of(code::DEVICE_STATE)[4];
    assert_eq!(
        state(last).last.invoice().and_then(|l| l.amount),
        Some(dec!(600.00))
    );
    let c2 = s.of(code::LINK_STATE);
    assert_eq!(c2[1].field_count(), 4);
    assert!(c2[1].text().starts_with("4,4,") && c2[1].text().ends_with(",DIS"));
    for exchange in s.certifications() {
        assert_eq!(exchange.field_count(), 7);
    }
    assert!(s.certs.iter().all(|c| c.rn.is_none()));
    let refused = &s.seen[s.refusal];
    assert!(refused.frame.data().is_empty());
    assert!(refused.frame.status().has(StatusFlag::CommandRefused));
    assert_eq!(refused_text(refused), "");
    // An accepted command's empty reply has the bit clear.
    assert_eq!(s.seen[s.repeated[0]].reading.reply, Reply::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1h_10_sends_taxpayer_values_alone() {
    let s = run(preset("c1h-10"), WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&["fields", "key"]));
    let c1 = s.of(code::DEVICE_STATE);
    assert!(c1.iter().all(|e| e.field_count() == 10));
    match &state(c1[4]).last {
        Last::Invoice(last) => assert_eq!((last.rn.as_str(), last.amount), ("AV-1", None)),
        other => panic!("{other:?}"),
    }
    let d0 = s.of(code::TAXPAYER_FIELD)[0];
    assert_eq!(d0.text(), "Ligne 1^xa;Ligne 2");
    let Reply::TaxpayerField(value) = &d0.reading.reply else {
        panic!("{:?}", d0.reading.reply)
    };
    assert_eq!(
        (value.key, value.value.as_str()),
        (None, "Ligne 1\nLigne 2")
    );
    assert!(s.of(code::LINK_STATE).iter().all(|e| e.field_count() == 4));
    assert!(s.certifications().iter().all(|e| e.field_count() == 7));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_never_sends_syn_and_executes_repeated_frames() {
    let mut firmware = preset("silent");
    if let Some(slow) = &mut firmware.slow_commands {
        slow.duration = Duration::from_millis(300);
    }
    if let Some(credit) = &mut firmware.credit_note {
        // Longer than the host's 3 windows: it must keep listening for the credit note.
        credit.duration = Duration::from_millis(2_000);
    }
    let s = run(firmware, WINDOW).await;
    assert_eq!(s.anomalies(), anomalies(&["DATA"]));
    assert_eq!(s.syns(), 0, "no SYN byte at all");
    assert!(s.stats.timeouts >= 3, "{:?}", s.stats);
    assert!(s
        .seen
        .iter()
        .all(|e| e.frame.status().0 == REAL_IDLE_STATUS));
    // Replies write LF as `^xd;`; the host reads them back with the same convention.
    let d0 = s.of(code::TAXPAYER_FIELD)[0];
    assert_eq!(d0.text(), "D0,Ligne 1^xd;Ligne 2");
    let Reply::TaxpayerField(value) = &d0.reading.reply else {
        panic!("{:?}", d0.reading.reply)
    };
    assert_eq!(value.value, "Ligne 1\nLigne 2");
    // The repeated C0h was executed again: refused, in French, in Windows-1252.
    let again = &s.seen[s.repeated[1]];
    assert_eq!(again.frame.data(), b"E:facture d\xE9j\xE0 ouverte");
    assert_eq!(refused_text(again), "facture déjà ouverte");
    assert_eq!(s.seen[s.repeated[0]].reading.reply, Reply::Done);
    assert_eq!(refused_text(&s.seen[s.refusal]), "aucune facture ouverte");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_syn_is_slower_than_an_old_host_window() {
    // A host configured for this box: a 500 ms window would lapse between two SYN.
    let s = run(preset("slow-syn"), Duration::from_secs(1)).await;
    assert_eq!(s.anomalies(), anomalies(&["prefix"]));
    assert_eq!(s.stats.timeouts, 0);
    for subtotal in s.of(code::SUBTOTAL) {
        // 1.5 s of work, one SYN every 700 ms.
        assert!((1..=3).contains(&subtotal.syns), "{} SYN", subtotal.syns);
    }
    let credit = s.certifications()[3];
    assert!((3..=5).contains(&credit.syns), "{} SYN", credit.syns);
    assert!(s
        .certifications()
        .iter()
        .all(|e| e.text().starts_with("R :")));
}
