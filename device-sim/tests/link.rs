//! Link behaviour over a real pseudo-terminal: NAK, SEQ replay, injected faults, power cut.

mod common;

use std::time::Duration;

use common::*;
use emcf_sim::faults::FaultConfig;
use emcf_sim::link::LinkEnd;
use emcf_sim::{start_on_pty, SimOptions};
use mcf_sfe::{Command, FromDevice, Reply};
use rust_decimal_macros::dec;

fn tc_of(reply: Reply) -> u64 {
    match reply {
        Reply::DeviceState(state) => state.tc,
        other => panic!("C1h answered {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_frame_gets_nak_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(fast_options(&dir.path().join("s.json")), None)
        .await
        .unwrap();
    let mut host = Host::open(sim.path());
    let invoice = fv_invoice("F-NAK");
    let frame = invoice[1].to_frame(mcf_sfe::Seq::FIRST).unwrap();
    let mut bytes = frame.to_bytes();
    let bcc_at = bytes.len() - 5;
    bytes[bcc_at] ^= 0x01;
    host.write_raw(&bytes).await;
    assert_eq!(
        host.next_item(Duration::from_secs(1)).await,
        Some(FromDevice::Nak)
    );
    // Garbage without a SOH is skipped silently; the next good frame is answered.
    host.write_raw(&[0x00, 0x42, 0xFF, 0x03]).await;
    let state = host.call_frame(&Command::DeviceState).await.unwrap();
    assert!(!state.status().has(mcf_sfe::StatusFlag::InvoiceOpen));
    assert_eq!(host.stats.naks, 0);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_seq_is_answered_but_not_executed_twice() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(fast_options(&dir.path().join("s.json")), None)
        .await
        .unwrap();
    let mut host = Host::open(sim.path());
    let invoice = fv_invoice("F-SEQ");
    host.call(&invoice[1]).await;
    // The same item frame twice (a host that missed the first reply): one line only.
    host.call(&invoice[2]).await;
    let item_frame = invoice[2].to_frame(host.seq()).unwrap();
    let replayed = host.exchange(&item_frame).await.unwrap();
    assert_eq!(
        Reply::parse(replayed.cmd(), replayed.data()).unwrap(),
        Reply::Done
    );
    let Reply::Subtotal(subtotal) = host.call(&Command::Subtotal).await else {
        panic!("33h")
    };
    assert_eq!(subtotal.total, dec!(1200.00));
    host.call(&Command::Payment(mcf_sfe::command::Payment {
        method: mcf_sfe::types::PaymentMethod::Especes,
        amount: subtotal.total,
    }))
    .await;
    // The same 38h twice: the same certification, one invoice in fiscal memory.
    let finalize = Command::Finalize(subtotal.finalize_totals());
    let first = host.call_frame(&finalize).await.unwrap();
    let again = host
        .exchange(&finalize.to_frame(host.seq()).unwrap())
        .await
        .unwrap();
    assert_eq!(first, again);
    assert_eq!(tc_of(host.call(&Command::DeviceState).await), 1);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_retries_gets_through_a_noisy_line_without_double_certification() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultConfig {
        seed: 7,
        corrupt_reply: 0.2,
        drop_reply: 0.15,
        garbage_burst: 0.3,
        ..FaultConfig::default()
    };
    let (sim, mut host) = start(SimOptions {
        faults,
        ..fast_options(&dir.path().join("s.json"))
    })
    .await;
    host.wait = Duration::from_millis(300);
    for n in 0..3 {
        host.certify(&fv_invoice(&format!("F-NOISE-{n}"))).await;
    }
    let stats = host.stats;
    assert!(
        stats.malformed + stats.timeouts > 0,
        "no fault was injected: {stats:?}"
    );
    // Each retransmission was replayed, not executed: exactly 3 invoices.
    let (_, engine) = sim.stop().await.unwrap();
    assert_eq!(engine.memory().tc(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_commands_are_not_executed() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultConfig {
        refuse_next: 2,
        ..FaultConfig::default()
    };
    let (sim, mut host) = start(SimOptions {
        faults,
        ..fast_options(&dir.path().join("s.json"))
    })
    .await;
    let invoice = fv_invoice("F-REFUSE");
    assert!(matches!(host.call(&invoice[1]).await, Reply::Refused(_)));
    assert!(matches!(
        host.call(&Command::DeviceState).await,
        Reply::Refused(_)
    ));
    // The C0h was not executed: opening now works.
    assert_eq!(host.call(&invoice[1]).await, Reply::Done);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_power_cut_after_finalize_keeps_the_invoice_in_fiscal_memory() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let faults = FaultConfig {
        power_cut_at_finalize: Some(1),
        ..FaultConfig::default()
    };
    let sim = start_on_pty(
        SimOptions {
            faults,
            ..fast_options(&state)
        },
        None,
    )
    .await
    .unwrap();
    let mut host = Host::open(sim.path());
    let invoice = fv_invoice("F-CUT");
    let mut subtotal = None;
    for cmd in &invoice {
        if let Reply::Subtotal(s) = host.call(cmd).await {
            subtotal = Some(s);
        }
    }
    let finalize = Command::Finalize(subtotal.unwrap().finalize_totals());
    assert!(
        host.call_frame(&finalize).await.is_err(),
        "no reply after a power cut"
    );
    let (end, _) = sim.finished().await.unwrap();
    assert_eq!(end, LinkEnd::PowerCut);

    // Power back: the box remembers the invoice the host never heard about.
    let (sim, mut host) = start(fast_options(&state)).await;
    let Reply::DeviceState(after) = host.call(&Command::DeviceState).await else {
        panic!("C1h")
    };
    assert_eq!(after.tc, 1);
    let last = after.last.invoice().cloned().expect("last invoice");
    assert_eq!(last.rn, "F-CUT");
    assert_eq!(last.code_def.len(), 24);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_port_vanishes_after_n_commands() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultConfig {
        vanish_after: Some(2),
        ..FaultConfig::default()
    };
    let (sim, mut host) = start(SimOptions {
        faults,
        ..fast_options(&dir.path().join("s.json"))
    })
    .await;
    host.call(&Command::DeviceState).await;
    host.call(&Command::DeviceState).await;
    assert!(host.call_frame(&Command::DeviceState).await.is_err());
    let (end, _) = sim.finished().await.unwrap();
    assert_eq!(end, LinkEnd::Vanished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stray_start_byte_does_not_hide_the_next_frame() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(fast_options(&dir.path().join("s.json")), None)
        .await
        .unwrap();
    let mut host = Host::open(sim.path());
    // SOH and the largest LEN: without an inter-byte timeout the box would wait for 229 bytes.
    host.write_raw(&[0x01, 0xFF]).await;
    let reply = host.call(&Command::DeviceState).await;
    assert!(matches!(reply, Reply::DeviceState(_)), "{reply:?}");
    assert!(
        host.stats.naks >= 1,
        "the stalled start was answered with NAK: {:?}",
        host.stats
    );
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pacing_sends_no_faster_than_the_baud_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = fast_options(&dir.path().join("s.json"));
    options.link.pace = true;
    options.link.baud = 2400;
    let (sim, mut host) = start(options).await;
    host.wait = Duration::from_secs(2);
    let started = std::time::Instant::now();
    let reply = host.call_frame(&Command::DeviceState).await.unwrap();
    // At 2400 baud, 8N1, a byte takes 1/240 s: the reply cannot arrive sooner than that allows.
    let floor = Duration::from_secs_f64(reply.to_bytes().len() as f64 / 240.0);
    assert!(
        started.elapsed() >= floor * 9 / 10,
        "{:?} < {floor:?}",
        started.elapsed()
    );
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_does_not_wait_for_a_late_reply() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultConfig {
        delay: 1.0,
        delay_for: Duration::from_secs(600),
        ..FaultConfig::default()
    };
    let (sim, mut host) = start(SimOptions {
        faults,
        ..fast_options(&dir.path().join("s.json"))
    })
    .await;
    host.write_raw(
        &Command::DeviceState
            .to_frame(mcf_sfe::Seq::FIRST)
            .unwrap()
            .to_bytes(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A hang here would be the test's failure: the reply is due in 10 minutes.
    let (end, _) = tokio::time::timeout(Duration::from_secs(30), sim.stop())
        .await
        .expect("stop returns while a reply is being delayed")
        .unwrap();
    assert_eq!(end, LinkEnd::Stopped);
}
