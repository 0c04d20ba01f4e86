//! The host rules of PROTOCOL.md §3.3 against a device the test plays byte by byte.

use std::time::Duration;

use mcf_sfe::command::FinalizeTotals;
use mcf_sfe::types::TaxpayerKey;
use mcf_sfe::{Command, Seq, ToHost};
use rust_decimal_macros::dec;
use tokio::time::Instant;

use super::{config, timing, FakeDevice};
use crate::device::{DeviceError, FinalizeOutcome};
use mcf_sfe::Reply;

const I0: Command = Command::TaxpayerField(TaxpayerKey::I0);

fn taxpayer_value(result: Result<Reply, DeviceError>) -> String {
    match result {
        Ok(Reply::TaxpayerField(value)) => value.value,
        other => panic!("2Bh answered {other:?}"),
    }
}

fn totals() -> FinalizeTotals {
    FinalizeTotals {
        total: dec!(1392.00),
        vat: dec!(192.00),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nak_is_answered_by_the_same_frame() {
    let mut device = FakeDevice::new();
    let mut config = config(&device.path);
    // A long window: only the NAK can explain a quick resend.
    config.timing.window = Duration::from_secs(1);
    let handle = device.connect_with(config).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (result, (first, again, delay)) = tokio::join!(session.execute(I0), async {
        let first = device.recv(Duration::from_secs(1)).await.unwrap();
        device.send(ToHost::Nak).await;
        let nak_at = Instant::now();
        let again = device.recv(Duration::from_secs(2)).await.unwrap();
        let delay = nak_at.elapsed();
        device.reply(&again, b"I0,Boutique").await;
        (first, again, delay)
    });
    assert_eq!(taxpayer_value(result), "Boutique");
    assert_eq!(first.to_bytes(), again.to_bytes(), "same SEQ, same bytes");
    assert!(delay < Duration::from_millis(500), "resent after {delay:?}");
    // The next command gets a new SEQ.
    let (_, next) = tokio::join!(session.execute(I0), async {
        let next = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&next, b"I0,x").await;
        next
    });
    assert_eq!(next.seq(), first.seq().next());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syn_extends_the_wait_beyond_the_window() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let started = Instant::now();
    let (result, resent) = tokio::join!(session.execute(I0), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        // Busy for 4 windows (more than the 3 tries would last without SYN).
        let mut resent = 0;
        for _ in 0..8 {
            device.send(ToHost::Syn).await;
            resent += device.collect(Duration::from_millis(75)).await.len();
        }
        device.reply(&frame, b"I0,late").await;
        resent
    });
    assert_eq!(taxpayer_value(result), "late");
    assert_eq!(resent, 0, "SYN means busy: no resend");
    assert!(started.elapsed() >= 4 * timing().window);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_replies_are_ignored() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (result, extra) = tokio::join!(session.execute(I0), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        let old = Seq::new(frame.seq().get() - 1).unwrap();
        // A late reply to the previous SEQ, then one with this SEQ but another CMD.
        device.reply_as(old, frame.cmd(), b"I0,stale").await;
        device.reply_as(frame.seq(), 0xC1, b"not,this,one").await;
        device.reply(&frame, b"I0,right").await;
        device.collect(Duration::from_millis(200)).await.len()
    });
    assert_eq!(taxpayer_value(result), "right");
    assert_eq!(extra, 0, "no resend was needed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_device_is_no_answer_after_three_windows() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let started = Instant::now();
    let window = timing().window;
    let (result, frames) = tokio::join!(
        async {
            let result = session.execute(Command::DeviceState).await;
            (result, started.elapsed())
        },
        device.collect(5 * window)
    );
    let (result, elapsed) = result;
    assert_eq!(result, Err(DeviceError::NoAnswer { command: 0xC1 }));
    assert!(elapsed >= 3 * window, "gave up after {elapsed:?}");
    assert!(
        elapsed < 3 * window + Duration::from_millis(200),
        "{elapsed:?}"
    );
    assert_eq!(frames.len(), 3, "3 tries");
    assert!(frames.iter().all(|f| f.to_bytes() == frames[0].to_bytes()));
    // The link is suspect: it is closed, and reopened (a new throwaway C2h) by the next
    // command of the session or, as here, once the session ends.
    assert!(!handle.status().connected);
    drop(lease);
    let c2 = device.recv(Duration::from_secs(1)).await.unwrap();
    assert_eq!(c2.cmd(), 0xC2);
    assert!(handle.status().last_error.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_finalize_is_sent_once_listened_for_its_budget_then_is_unknown() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let budget = timing().finalize_budget;
    let started = Instant::now();
    let (result, frames) = tokio::join!(
        async {
            let result = session.finalize(totals(), false).await;
            (result, started.elapsed())
        },
        device.collect(budget + Duration::from_millis(300))
    );
    let (result, elapsed) = result;
    assert_eq!(result, Err(DeviceError::OutcomeUnknown));
    assert!(elapsed >= budget, "gave up after {elapsed:?}");
    assert!(elapsed < budget + Duration::from_millis(200), "{elapsed:?}");
    assert_eq!(
        frames.len(),
        1,
        "never sent again after silence (a box may work silently): only listening"
    );
    assert_eq!(frames[0].data(), b"1392.00,192.00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalize_refusal_counts_only_for_a_single_transmission() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (once, _) = tokio::join!(session.finalize(totals(), false), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&frame, b"E:no payment").await;
    });
    assert_eq!(once, Ok(FinalizeOutcome::Refused("no payment".into())));
    // Sent twice: an earlier copy may have committed, so E: settles nothing.
    let (twice, _) = tokio::join!(session.finalize(totals(), false), async {
        device.recv(Duration::from_secs(1)).await.unwrap();
        device.send(ToHost::Nak).await;
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&frame, b"E:no open invoice").await;
    });
    assert_eq!(twice, Err(DeviceError::OutcomeUnknown));
    // E: after a P: is unknown too; so is an empty reply.
    let (after_p, _) = tokio::join!(session.finalize(totals(), false), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&frame, b"P:working").await;
        let poll = device.recv(Duration::from_secs(1)).await.unwrap();
        assert_eq!(poll.seq(), frame.seq().next(), "a poll has a new SEQ");
        device.reply(&poll, b"E:no open invoice").await;
    });
    assert_eq!(after_p, Err(DeviceError::OutcomeUnknown));
    let (empty, _) = tokio::join!(session.finalize(totals(), false), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&frame, b"").await;
    });
    assert_eq!(empty, Err(DeviceError::OutcomeUnknown));
    // 38h with totals never goes through execute.
    assert!(matches!(
        session.execute(Command::Finalize(totals())).await,
        Err(DeviceError::Encode(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_false_start_does_not_hide_the_reply() {
    let mut device = FakeDevice::new();
    let mut config = config(&device.path);
    // A window long enough that only the 100 ms inter-byte timeout can explain a quick reply.
    config.timing.window = Duration::from_secs(1);
    let handle = device.connect_with(config).await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let started = Instant::now();
    let (result, _) = tokio::join!(
        async {
            let result = session.execute(I0).await;
            (result, started.elapsed())
        },
        async {
            let frame = device.recv(Duration::from_secs(1)).await.unwrap();
            // SOH + LEN 0xFF announce 229 bytes that never come.
            device.raw(&[0x01, 0xFF]).await;
            tokio::time::sleep(Duration::from_millis(150)).await;
            device.reply(&frame, b"I0,behind").await;
        }
    );
    let (result, elapsed) = result;
    assert_eq!(taxpayer_value(result), "behind");
    assert!(elapsed < Duration::from_millis(600), "took {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_dropped_mid_command_leaves_the_link_sane() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (gave_up, first) = tokio::join!(
        tokio::time::timeout(Duration::from_millis(50), session.execute(I0)),
        async {
            let frame = device.recv(Duration::from_secs(1)).await.unwrap();
            for _ in 0..4 {
                device.send(ToHost::Syn).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            device.reply(&frame, b"I0,first").await;
            frame
        }
    );
    assert!(gave_up.is_err(), "the caller stopped waiting");
    drop(lease);
    // A late copy of the old reply arrives before the next command: it is stale.
    device.reply(&first, b"I0,first again").await;
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (result, second) = tokio::join!(session.execute(I0), async {
        let frame = device.recv(Duration::from_secs(1)).await.unwrap();
        device.reply(&frame, b"I0,second").await;
        frame
    });
    assert_eq!(taxpayer_value(result), "second");
    assert_eq!(second.seq(), first.seq().next());
}
