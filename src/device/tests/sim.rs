//! Sessions against the simulator on a pty: invoices, `P:` polling, a vanishing device,
//! the queue.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use emcf_sim::config::SlowReply;
use emcf_sim::start_on_pty;
use mcf_sfe::Command;
use rust_decimal_macros::dec;

use super::{
    config, fa_invoice, fv_invoice, run_until_finalize, sim_options, wait_connected, wait_queued,
};
use crate::device::{spawn, DeviceError, FinalizeOutcome, PortSession};
use mcf_sfe::Reply;

async fn device_state(session: &mut PortSession<'_>) -> mcf_sfe::reply::DeviceState {
    match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => state,
        other => panic!("C1h answered {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sales_invoice_certifies_through_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(sim_options(&dir.path().join("state.json")), None)
        .await
        .unwrap();
    let handle = spawn(config(sim.path()));
    wait_connected(&handle, true).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let before = device_state(&mut session).await;
    assert_eq!(before.tc, 0);
    let subtotal = run_until_finalize(&mut session, fv_invoice("F-2026-001")).await;
    assert_eq!(subtotal.total, dec!(2250.00));
    let outcome = session.finalize(subtotal.finalize_totals(), false).await;
    let Ok(FinalizeOutcome::Certified(cert)) = outcome else {
        panic!("38h: {outcome:?}")
    };
    assert_eq!(cert.rn.as_deref(), Some("F-2026-001"));
    assert_eq!((cert.tc, cert.fc), (1, 1));
    let after = device_state(&mut session).await;
    let last = after.last.invoice().cloned().expect("a last invoice");
    assert_eq!(last.code_def, cert.code_def);
    assert!(handle.status().last_reply_at.is_some());
    drop(lease);
    handle.shutdown().await;
    assert_eq!(handle.lease().await.err(), Some(DeviceError::ShuttingDown));
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credit_note_polls_on_p_until_r() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = sim_options(&dir.path().join("state.json"));
    options.device.timing.credit_note_reply = SlowReply::Pending;
    let sim = start_on_pty(options, None).await.unwrap();
    let handle = spawn(config(sim.path()));
    wait_connected(&handle, true).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let subtotal = run_until_finalize(&mut session, fv_invoice("F-P1")).await;
    let Ok(FinalizeOutcome::Certified(fv)) =
        session.finalize(subtotal.finalize_totals(), false).await
    else {
        panic!("the sale is certified")
    };
    let refund = fa_invoice("AV-P1", &fv.code_def, dec!(600));
    let subtotal = run_until_finalize(&mut session, refund).await;
    // The simulator answers P: for 600 ms; polls every 100 ms with a new SEQ get R: at last
    // (a poll with the old SEQ would get the same P: replayed until the budget ran out).
    let started = tokio::time::Instant::now();
    let outcome = session.finalize(subtotal.finalize_totals(), true).await;
    let Ok(FinalizeOutcome::Certified(fa)) = outcome else {
        panic!("38h: {outcome:?}")
    };
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(fa.invoice_type, mcf_sfe::types::InvoiceType::Fa);
    assert_eq!((fa.tc, fa.fc), (2, 1));
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_device_is_unavailable_then_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let link = dir.path().join("emcf0");
    let sim = start_on_pty(sim_options(&state), Some(&link))
        .await
        .unwrap();
    let handle = spawn(config(&link));
    wait_connected(&handle, true).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    device_state(&mut session).await;
    // The device goes away while the session is held.
    drop(sim.stop().await.unwrap());
    assert_eq!(
        session.execute(Command::DeviceState).await.err(),
        Some(DeviceError::Disconnected)
    );
    drop(lease);
    wait_connected(&handle, false).await;
    assert!(handle.status().last_error.is_some());
    assert!(matches!(
        handle.lease().await.err(),
        Some(DeviceError::Unavailable(_))
    ));
    // A device comes back at the same path: the actor reopens it by itself.
    let sim = start_on_pty(sim_options(&state), Some(&link))
        .await
        .unwrap();
    wait_connected(&handle, true).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    assert_eq!(device_state(&mut session).await.nif, super::NIF);
    drop(lease);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_refuses_at_once_and_a_left_place_costs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(sim_options(&dir.path().join("state.json")), None)
        .await
        .unwrap();
    let mut config = config(sim.path());
    config.queue_capacity = 2;
    let handle = spawn(config);
    wait_connected(&handle, true).await;
    let held = handle.lease().await.unwrap();
    // One caller gives up while queued, another waits.
    let quitter = tokio::spawn({
        let handle = handle.clone();
        async move { handle.lease().await.map(drop) }
    });
    wait_queued(&handle, 1).await;
    quitter.abort();
    let waiter = tokio::spawn({
        let handle = handle.clone();
        async move {
            let mut lease = handle.lease().await?;
            let mut session = lease.session();
            session.execute(Command::DeviceState).await.map(drop)
        }
    });
    wait_queued(&handle, 2).await;
    let started = tokio::time::Instant::now();
    assert_eq!(handle.lease().await.err(), Some(DeviceError::QueueFull));
    assert!(started.elapsed() < Duration::from_millis(50));
    drop(held);
    let served = tokio::time::timeout(Duration::from_secs(2), waiter).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
    assert_eq!(handle.status().queued, 0);
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sessions_are_served_one_after_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(sim_options(&dir.path().join("state.json")), None)
        .await
        .unwrap();
    let handle = spawn(config(sim.path()));
    wait_connected(&handle, true).await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let run = |who: &'static str| {
        let handle = handle.clone();
        let events = events.clone();
        async move {
            let mut lease = handle.lease().await.unwrap();
            let mut session = lease.session();
            events.lock().unwrap().push((who, "start"));
            session.execute(Command::DeviceState).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            session.execute(Command::LinkState).await.unwrap();
            events.lock().unwrap().push((who, "end"));
        }
    };
    let (a, b) = tokio::join!(tokio::spawn(run("a")), tokio::spawn(run("b")));
    a.unwrap();
    b.unwrap();
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 4);
    assert_eq!(events[0].0, events[1].0, "{events:?}");
    assert_eq!(events[2].0, events[3].0, "{events:?}");
    assert_ne!(events[0].0, events[2].0);
    assert_eq!((events[0].1, events[1].1), ("start", "end"));
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_port_means_unavailable_and_shutdown_waits_for_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let absent = spawn(config(&dir.path().join("no-such-tty")));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = absent.status();
    assert!(!status.connected);
    assert!(status.last_error.unwrap().contains("no-such-tty"));
    assert!(matches!(
        absent.lease().await.err(),
        Some(DeviceError::Unavailable(_))
    ));
    absent.shutdown().await;

    let sim = start_on_pty(sim_options(&dir.path().join("state.json")), None)
        .await
        .unwrap();
    let handle = spawn(config(sim.path()));
    wait_connected(&handle, true).await;
    let lease = handle.lease().await.unwrap();
    let started = tokio::time::Instant::now();
    let holder = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        drop(lease);
    });
    handle.shutdown().await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(!handle.status().connected);
    assert_eq!(handle.lease().await.err(), Some(DeviceError::ShuttingDown));
    holder.await.unwrap();
    sim.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_waits_for_the_leased_port_like_an_invoice() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start_on_pty(sim_options(&dir.path().join("state.json")), None)
        .await
        .unwrap();
    let handle = spawn(config(sim.path()));
    wait_connected(&handle, true).await;
    let mut lease = handle.lease().await.unwrap();
    let probe = tokio::spawn({
        let handle = handle.clone();
        async move { crate::device::probe::probe(&handle, crate::i18n::Lang::En).await }
    });
    wait_queued(&handle, 1).await;
    // The invoice holding the port goes on; the probe has sent nothing meanwhile.
    device_state(&mut lease.session()).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !probe.is_finished(),
        "the probe ran while the port was leased"
    );
    drop(lease);
    let report = probe.await.unwrap().unwrap();
    assert_eq!(report.nif.as_deref(), Some(super::NIF));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    sim.stop().await.unwrap();
}
