//! The protocol crate's golden frames, sent byte for byte to the simulator over a pty: the
//! host->device vectors form one consistent invoice, and the simulator's 33h reply must be
//! the golden reply frame exactly.

mod common;

#[path = "../../protocols/mcf-sfe/tests/vectors/mod.rs"]
mod vectors;

use std::time::Duration;

use common::*;
use mcf_sfe::{FromDevice, Reply, ReplyFrame};

/// The golden host frames of one FV: identity reads, client, open, two items, comment,
/// subtotal, payment, finalize.
const INVOICE: &[&str] = &[
    "cmd-c1-device-state",
    "cmd-c2-link-state",
    "cmd-2b-taxpayer-field",
    "cmd-c3-set-client",
    "cmd-c0-open-fv",
    "cmd-31-item-simple",
    "cmd-31-item-full",
    "cmd-36-comment",
    "cmd-33-subtotal",
    "cmd-35-payment",
    "cmd-38-finalize",
];

async fn reply_to(host: &mut Host, frame: &[u8]) -> ReplyFrame {
    host.write_raw(frame).await;
    loop {
        match host.next_item(Duration::from_secs(2)).await {
            Some(FromDevice::Syn) => continue,
            Some(FromDevice::Reply(reply)) => return reply,
            other => panic!("expected a reply frame, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_golden_invoice_frames_certify_and_the_subtotal_reply_is_golden() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, mut host) = start(fast_options(&dir.path().join("state.json"))).await;
    let mut last = None;
    for name in INVOICE {
        let vector = vectors::get(name);
        let reply = reply_to(&mut host, &vector.frame).await;
        assert_eq!(
            (reply.seq().get(), reply.cmd()),
            (vector.frame[2], vector.frame[3]),
            "{name}: the reply answers its frame"
        );
        let parsed = Reply::parse(reply.cmd(), reply.data()).unwrap();
        assert!(!matches!(parsed, Reply::Refused(_)), "{name}: {parsed:?}");
        if *name == "cmd-33-subtotal" {
            assert_eq!(
                vectors::hex(&reply.to_bytes()),
                vectors::hex(&vectors::get("reply-33-subtotal").frame),
                "the simulator's 33h reply is the golden frame"
            );
        }
        last = Some(parsed);
    }
    let Some(Reply::Certified(cert)) = last else {
        panic!("38h answered {last:?}")
    };
    assert_eq!(cert.rn.as_deref(), Some("F-2026-001"));
    assert_eq!(cert.counters(), "1/1 FV");
    sim.stop().await.unwrap();
}
