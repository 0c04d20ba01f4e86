//! The exchange alone, over an in-memory stream (the link is generic over its I/O).

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use mcf_sfe::{Command, DeviceCodec, FromHost, ReplyFrame, Seq, Status, ToHost};
use tokio::io::AsyncWriteExt;
use tokio::time::{timeout, Instant};
use tokio_util::codec::Framed;

use super::timing;
use crate::device::transport::{Outcome, Resend, Transport};

#[tokio::test]
async fn stale_input_is_discarded_before_sending() {
    let (host, device) = tokio::io::duplex(1024);
    let mut link = Transport::new(host, None);
    let mut device = Framed::new(device, DeviceCodec);
    // Left on the line before the command: a NAK (would cause a resend), a SYN and a
    // false start (would swallow the reply until the inter-byte timeout).
    device
        .get_mut()
        .write_all(&[0x15, 0x16, 0x01, 0xFF])
        .await
        .unwrap();
    let frame = Command::DeviceState.to_frame(Seq::FIRST).unwrap();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(2);
    let timing = timing();
    let (exchange, received) = tokio::join!(
        link.exchange(&frame, &timing, deadline, Resend::HARMLESS),
        async {
            let Some(Ok(FromHost::Request(request))) = device.next().await else {
                panic!("no request")
            };
            let reply = ReplyFrame::new(request.seq(), request.cmd(), vec![], Status::default());
            device.send(ToHost::Reply(reply.unwrap())).await.unwrap();
            // Anything else the host sends within a window is a resend.
            let more = timeout(Duration::from_millis(200), device.next()).await;
            (request, more.is_ok())
        }
    );
    let (request, resent) = received;
    assert_eq!(request, frame);
    assert!(!resent, "the stale NAK made the host resend");
    assert_eq!(exchange.transmissions, 1);
    assert!(matches!(exchange.outcome, Outcome::Reply(_)));
    // The reply came at once; a false start left in the buffer would have held it 100 ms.
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[tokio::test]
async fn end_of_stream_is_a_disconnect() {
    let (host, device) = tokio::io::duplex(64);
    let mut link = Transport::new(host, None);
    drop(device);
    let frame = Command::DeviceState.to_frame(Seq::FIRST).unwrap();
    let deadline = Instant::now() + Duration::from_secs(1);
    let exchange = link
        .exchange(&frame, &timing(), deadline, Resend::HARMLESS)
        .await;
    assert_eq!(exchange.transmissions, 0, "nothing could be written");
    assert!(matches!(exchange.outcome, Outcome::Disconnected(_)));
}
