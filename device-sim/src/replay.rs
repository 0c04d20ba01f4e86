//! A box that answers with what a real one said: serves a wire capture
//! (`mcf_sfe::capture`) again, so that a capture taken at a shop becomes a regression test.
//!
//! The capture is cut into steps, one per frame the host wrote: the recorded request and the
//! device's items (SYN, NAK, replies) that came before the next request, with their delays.
//! Serving, each frame the live host sends must be the next step's request (same CMD and DATA;
//! its SEQ may differ, since a host's SEQ depends on its history): the step's items are then
//! sent with their recorded delays, replies re-addressed to the live SEQ (their BCC
//! recomputed). A host that asks anything else makes the replay stop with
//! [`ReplayError::Diverged`]: the host no longer talks as it did when the capture was taken.

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use mcf_sfe::capture::{Capture, Event};
use mcf_sfe::command::code;
use mcf_sfe::{DeviceCodec, FromDevice, FromHost, HostCodec, ReplyFrame, RequestFrame};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::Decoder;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use crate::reader::FrameReader;

/// One request of the capture and what the box sent after it.
#[derive(Debug, Clone)]
pub struct Step {
    /// The request as recorded.
    pub request: RequestFrame,
    /// The box's items after it, each with the wait before it.
    pub answer: Vec<(Duration, FromDevice)>,
}

/// A capture cut into steps.
#[derive(Debug, Clone)]
pub struct Script {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// Why a replay stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The capture holds no exchange of that device.
    #[error("the capture has no request to device {0:?}")]
    Empty(String),
    /// The host asked something the capture does not hold at this point.
    #[error(
        "step {step}: the host sent {} DATA {got_data:?}, the capture has {} DATA {want_data:?}",
        code::name(*got_cmd),
        code::name(*want_cmd)
    )]
    Diverged {
        /// 0-based step.
        step: usize,
        /// What the capture holds.
        want_cmd: u8,
        /// Its DATA.
        want_data: String,
        /// What the host sent.
        got_cmd: u8,
        /// Its DATA.
        got_data: String,
    },
    /// The host went on after the capture's last request.
    #[error(
        "after the capture's last request, the host sent {} DATA {got_data:?}",
        code::name(*got_cmd)
    )]
    BeyondTheEnd {
        /// What the host sent.
        got_cmd: u8,
        /// Its DATA.
        got_data: String,
    },
    /// The port failed.
    #[error("port: {0}")]
    Io(#[from] io::Error),
}

/// How a replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayEnd {
    /// Every step was served.
    Done,
    /// The host closed the port first, after this many steps.
    HostClosed(usize),
    /// Asked to stop, after this many steps.
    Stopped(usize),
}

impl Script {
    /// The steps of `device` in `capture`.
    pub fn from_capture(capture: &Capture, device: &str) -> Result<Script, ReplayError> {
        let mut steps: Vec<Step> = Vec::new();
        let mut host = BytesMut::new();
        let mut from_box = BytesMut::new();
        let mut last_at = Duration::ZERO;
        for line in capture.lines.iter().filter(|l| l.device == device) {
            match &line.event {
                Event::ToDevice(bytes) => {
                    host.extend_from_slice(bytes);
                    while let Ok(Some(item)) = DeviceCodec.decode(&mut host) {
                        if let FromHost::Request(request) = item {
                            steps.push(Step {
                                request,
                                answer: Vec::new(),
                            });
                        }
                    }
                    last_at = line.at;
                }
                Event::FromDevice(bytes) => {
                    from_box.extend_from_slice(bytes);
                    let delay = line.at.saturating_sub(last_at);
                    last_at = line.at;
                    let mut first = true;
                    while let Ok(Some(item)) = HostCodec.decode(&mut from_box) {
                        if let Some(step) = steps.last_mut() {
                            let wait = if first { delay } else { Duration::ZERO };
                            step.answer.push((wait, item));
                            first = false;
                        }
                    }
                }
                Event::Open | Event::Close(_) => {
                    host.clear();
                    from_box.clear();
                    last_at = line.at;
                }
            }
        }
        if steps.is_empty() {
            return Err(ReplayError::Empty(device.to_owned()));
        }
        Ok(Script { steps })
    }
}

/// Serves `script` on `io` until every step is served and then the host closes or `stop` is
/// cancelled. Delays are multiplied by `percent` / 100 (100: as recorded).
pub async fn serve<IO>(
    io: IO,
    script: &Script,
    percent: u32,
    stop: &CancellationToken,
) -> Result<ReplayEnd, ReplayError>
where
    IO: AsyncRead + AsyncWrite,
{
    let (reader, mut writer) = tokio::io::split(io);
    let mut frames = FrameReader::new(reader);
    for (index, step) in script.steps.iter().enumerate() {
        // A bad frame is answered NAK and the same step waits for the host's resend.
        let request = loop {
            let item = tokio::select! {
                () = stop.cancelled() => return Ok(ReplayEnd::Stopped(index)),
                item = frames.next() => item?,
            };
            match item {
                None => return Ok(ReplayEnd::HostClosed(index)),
                Some(FromHost::Malformed(error)) => {
                    debug!(%error, "bad frame from the host: NAK");
                    writer.write_all(&[mcf_sfe::wire::NAK]).await?;
                    writer.flush().await?;
                }
                Some(FromHost::Request(request)) => break request,
            }
        };
        let want = &step.request;
        if request.cmd() != want.cmd() || request.data() != want.data() {
            return Err(ReplayError::Diverged {
                step: index,
                want_cmd: want.cmd(),
                want_data: String::from_utf8_lossy(want.data()).into_owned(),
                got_cmd: request.cmd(),
                got_data: String::from_utf8_lossy(request.data()).into_owned(),
            });
        }
        for (wait, item) in &step.answer {
            let wait = wait.saturating_mul(percent) / 100;
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let bytes = match item {
                FromDevice::Syn => vec![mcf_sfe::wire::SYN],
                FromDevice::Nak => vec![mcf_sfe::wire::NAK],
                FromDevice::Malformed(_) => continue,
                FromDevice::Reply(reply) => readdressed(reply, want, &request).to_bytes(),
            };
            writer.write_all(&bytes).await?;
            writer.flush().await?;
        }
    }
    info!(steps = script.steps.len(), "capture replayed");
    // The port stays open until the host leaves or the replay is stopped: closing a pty
    // master discards what the host has not read yet, the last reply included.
    loop {
        let item = tokio::select! {
            () = stop.cancelled() => return Ok(ReplayEnd::Done),
            item = frames.next() => item?,
        };
        match item {
            None => return Ok(ReplayEnd::Done),
            Some(FromHost::Malformed(_)) => {}
            Some(FromHost::Request(request)) => {
                return Err(ReplayError::BeyondTheEnd {
                    got_cmd: request.cmd(),
                    got_data: String::from_utf8_lossy(request.data()).into_owned(),
                })
            }
        }
    }
}

/// `reply` to the recorded request `recorded`, sent to the live `request`: the same reply with
/// the live SEQ (a reply to another SEQ, a stale one, keeps its own).
fn readdressed(reply: &ReplyFrame, recorded: &RequestFrame, request: &RequestFrame) -> ReplyFrame {
    let seq = if reply.seq() == recorded.seq() {
        request.seq()
    } else {
        reply.seq()
    };
    ReplyFrame::new(seq, reply.cmd(), reply.data().to_vec(), reply.status())
        .unwrap_or_else(|_| reply.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcf_sfe::capture::{format_line, parse, MAGIC};
    use mcf_sfe::{Command, Seq, Status};

    fn capture() -> Capture {
        let c2 = Command::LinkState
            .to_frame(Seq::new(0x21).unwrap())
            .unwrap();
        let reply = ReplyFrame::new(
            Seq::new(0x21).unwrap(),
            0xC2,
            b"1,1,20261121143010,DIS".to_vec(),
            Status::default(),
        )
        .unwrap();
        let mut text = format!("{MAGIC}\n");
        let at = Duration::from_millis;
        for (t, event) in [
            (0, Event::Open),
            (1, Event::ToDevice(c2.to_bytes())),
            (30, Event::FromDevice(vec![0x16])),
            (50, Event::FromDevice(reply.to_bytes()[..10].to_vec())),
            (51, Event::FromDevice(reply.to_bytes()[10..].to_vec())),
        ] {
            text.push_str(&format_line(at(t), "shop", &event));
            text.push('\n');
        }
        parse(&text).unwrap()
    }

    #[test]
    fn a_capture_is_cut_into_requests_and_their_answers() {
        let script = Script::from_capture(&capture(), "shop").unwrap();
        assert_eq!(script.steps.len(), 1);
        let answer = &script.steps[0].answer;
        assert_eq!(answer.len(), 2);
        assert_eq!(answer[0], (Duration::from_millis(29), FromDevice::Syn));
        assert!(matches!(answer[1].1, FromDevice::Reply(_)));
        assert!(Script::from_capture(&capture(), "other").is_err());
    }

    #[tokio::test]
    async fn the_answer_goes_to_the_live_seq() {
        let script = Script::from_capture(&capture(), "shop").unwrap();
        let (host, device) = tokio::io::duplex(1024);
        let stop = CancellationToken::new();
        let server_stop = stop.clone();
        let server = tokio::spawn(async move { serve(device, &script, 0, &server_stop).await });
        let (mut read, mut write) = tokio::io::split(host);
        let live = Command::LinkState
            .to_frame(Seq::new(0x40).unwrap())
            .unwrap();
        write.write_all(&live.to_bytes()).await.unwrap();
        let mut buf = BytesMut::new();
        let mut items = Vec::new();
        while items.len() < 2 {
            tokio::io::AsyncReadExt::read_buf(&mut read, &mut buf)
                .await
                .unwrap();
            while let Ok(Some(item)) = HostCodec.decode(&mut buf) {
                items.push(item);
            }
        }
        let FromDevice::Reply(reply) = &items[1] else {
            panic!("{items:?}")
        };
        assert!(reply.answers(&live));
        stop.cancel();
        assert_eq!(server.await.unwrap().unwrap(), ReplayEnd::Done);
    }
}
