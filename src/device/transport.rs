//! One command exchange on an open link, as PROTOCOL.md §3.3 prescribes: discard stale
//! input, send, wait for a reply or SYN within the window (every SYN restarts it), resend the
//! same bytes on NAK, or on a silent window when the command allows it ([`Resend`]), up to the
//! tries; ignore stale replies and bad frames, drop stalled partial frames, and report a read
//! of 0 bytes or an I/O error as a disconnect. Every byte goes to the wire capture, if any.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{FutureExt, SinkExt, StreamExt};
use mcf_sfe::capture::Event;
use mcf_sfe::wire::{INTER_BYTE_TIMEOUT, SOH};
use mcf_sfe::{drop_stalled, FromDevice, HostCodec, ReplyFrame, RequestFrame};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{sleep_until, timeout_at, Instant};
use tokio_util::codec::{Decoder, Framed};
use tracing::{debug, trace};

use super::capture::DeviceCapture;
use super::LinkTiming;

/// Most items thrown away in one stale-input sweep: a device that never stops talking must
/// not keep the host from sending.
const MAX_STALE_ITEMS: usize = 1024;

/// When a frame may be sent again, and what happens when it may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Resend {
    /// Send it again after a silent window, not only after a NAK (the box said it did not
    /// execute it). Off for 38h with totals, always, and for the commands that change the
    /// invoice on a box that does not replay a repeated SEQ.
    pub on_silence: bool,
    /// Once no more sending is allowed, keep listening until the deadline (the box may still
    /// be working, silently) instead of giving up at the end of the window.
    pub listen_until_deadline: bool,
}

impl Resend {
    /// Read-only commands (C1h, C2h, 2Bh, 33h) and 38h `C`: sending again is harmless.
    pub(super) const HARMLESS: Resend = Resend {
        on_silence: true,
        listen_until_deadline: false,
    };
    /// 38h with totals: only after a NAK; then listen until the budget ends.
    pub(super) const NAK_ONLY: Resend = Resend {
        on_silence: false,
        listen_until_deadline: true,
    };

    /// A command that changes the invoice (C3h, C0h, 31h, 36h, 35h) on a box that does
    /// (`seq_replay`) or does not replay a repeated SEQ.
    pub(super) fn changing(seq_replay: bool) -> Resend {
        Resend {
            on_silence: seq_replay,
            listen_until_deadline: !seq_replay,
        }
    }
}

/// How one exchange ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// The reply with the request's SEQ and CMD.
    Reply(ReplyFrame),
    /// No valid reply within the tries and the deadline.
    NoAnswer,
    /// The stream ended or failed: close the port.
    Disconnected(String),
}

/// The result of one exchange.
#[derive(Debug)]
pub(super) struct Exchange {
    /// How many times the frame was (or was being) written: 0 means it never left.
    pub transmissions: u32,
    pub outcome: Outcome,
}

/// The open link: the framed stream plus items decoded out of band (after a stalled frame).
pub(super) struct Transport<IO> {
    framed: Framed<Activity<IO>, HostCodec>,
    pending: VecDeque<FromDevice>,
}

/// What waiting for the next item gave.
enum Next {
    Item(FromDevice),
    Timeout,
    Closed(String),
}

/// How waiting for the reply to one transmission ended.
enum Wait {
    Reply(ReplyFrame),
    /// The device said it did not execute the frame.
    Nak,
    /// The window (or the deadline) ran out in silence.
    Silence,
    Closed(String),
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Transport<IO> {
    pub(super) fn new(io: IO, capture: Option<DeviceCapture>) -> Self {
        Transport {
            framed: Framed::new(
                Activity {
                    io,
                    last_byte: Instant::now(),
                    capture,
                },
                HostCodec,
            ),
            pending: VecDeque::new(),
        }
    }

    /// Sends `frame` and waits for its reply (PROTOCOL.md §3.3). Nothing after `deadline`.
    pub(super) async fn exchange(
        &mut self,
        frame: &RequestFrame,
        timing: &LinkTiming,
        deadline: Instant,
        resend: Resend,
    ) -> Exchange {
        let mut transmissions = 0;
        let done = |transmissions, outcome| Exchange {
            transmissions,
            outcome,
        };
        if let Err(reason) = self.discard_stale().await {
            return done(transmissions, Outcome::Disconnected(reason));
        }
        let mut listen = false;
        while Instant::now() < deadline {
            transmissions += 1;
            trace!(try_no = transmissions, "sending");
            match self.send(frame, deadline).await {
                Ok(true) => {}
                Ok(false) => return done(transmissions, Outcome::NoAnswer),
                Err(reason) => return done(transmissions, Outcome::Disconnected(reason)),
            }
            let nak = match self.await_reply(frame, deadline, Some(timing.window)).await {
                Wait::Reply(reply) => return done(transmissions, Outcome::Reply(reply)),
                Wait::Closed(reason) => return done(transmissions, Outcome::Disconnected(reason)),
                Wait::Nak => true,
                Wait::Silence => false,
            };
            let tries_left = transmissions < timing.tries.max(1);
            if tries_left && (nak || resend.on_silence) {
                debug!(
                    try_no = transmissions,
                    nak, "no reply to this try: sending again"
                );
                continue;
            }
            listen = resend.listen_until_deadline;
            break;
        }
        if listen && transmissions > 0 {
            debug!("no more sending: listening until the budget ends");
            match self.await_reply(frame, deadline, None).await {
                Wait::Reply(reply) => return done(transmissions, Outcome::Reply(reply)),
                Wait::Nak | Wait::Silence => {}
                Wait::Closed(reason) => return done(transmissions, Outcome::Disconnected(reason)),
            }
        }
        done(transmissions, Outcome::NoAnswer)
    }

    /// The next item while no command runs: everything is stale, only the end of the stream
    /// matters. `None` = end of stream.
    pub(super) async fn idle_item(&mut self) -> Option<io::Result<FromDevice>> {
        self.framed.next().await
    }

    /// Throws away what the device sent before this command (late replies, replays, noise).
    async fn discard_stale(&mut self) -> Result<(), String> {
        // Let the reactor report bytes that have already arrived.
        tokio::task::yield_now().await;
        let mut items = self.pending.len();
        self.pending.clear();
        while items < MAX_STALE_ITEMS {
            match self.framed.next().now_or_never() {
                None => break,
                Some(Some(Ok(item))) => {
                    trace!(item = %describe(&item), "stale input discarded");
                    items += 1;
                }
                Some(Some(Err(error))) => return Err(format!("read failed: {error}")),
                Some(None) => return Err(end_of_stream()),
            }
        }
        let buffer = self.framed.read_buffer_mut();
        if items > 0 || !buffer.is_empty() {
            debug!(
                items,
                bytes = buffer.len(),
                "stale input discarded before sending"
            );
        }
        buffer.clear();
        Ok(())
    }

    /// Writes the frame. `Ok(false)`: the port took nothing before the deadline.
    async fn send(&mut self, frame: &RequestFrame, deadline: Instant) -> Result<bool, String> {
        // A write cut by the deadline may have left bytes behind: never send half a frame
        // in front of the next one.
        self.framed.write_buffer_mut().clear();
        match timeout_at(deadline, self.framed.send(frame)).await {
            Ok(Ok(())) => Ok(true),
            Ok(Err(error)) => Err(format!("write failed: {error}")),
            Err(_) => {
                self.framed.write_buffer_mut().clear();
                Ok(false)
            }
        }
    }

    /// Waits for the reply to `frame`: within `window` (restarted by SYN) and never past
    /// `deadline`; `window: None` = listen until the deadline, NAK and SYN ignored.
    async fn await_reply(
        &mut self,
        frame: &RequestFrame,
        deadline: Instant,
        window: Option<std::time::Duration>,
    ) -> Wait {
        let window_end = || window.map_or(deadline, |w| (Instant::now() + w).min(deadline));
        let mut end = window_end();
        loop {
            match self.next_item(end).await {
                Next::Item(FromDevice::Syn) => {
                    trace!("SYN: device busy");
                    end = window_end();
                }
                Next::Item(FromDevice::Nak) => {
                    if window.is_some() {
                        debug!("NAK: the device did not execute the frame");
                        return Wait::Nak;
                    }
                    debug!("NAK while only listening: ignored");
                }
                Next::Item(FromDevice::Reply(reply)) if reply.answers(frame) => {
                    return Wait::Reply(reply)
                }
                Next::Item(FromDevice::Reply(reply)) => debug!(
                    seq = reply.seq().get(),
                    cmd = reply.cmd(),
                    "stale reply ignored"
                ),
                Next::Item(FromDevice::Malformed(error)) => {
                    debug!(%error, "bad frame from the device ignored");
                }
                Next::Timeout => {
                    // End of the window: a partial frame still buffered is dropped (Stalled),
                    // and what was behind it is decoded before giving up on this try.
                    if !self.drop_partial(true) {
                        return Wait::Silence;
                    }
                }
                Next::Closed(reason) => return Wait::Closed(reason),
            }
        }
    }

    /// The next item, or `Timeout` at `until`. Applies the inter-byte timeout to a partial
    /// frame at the head of the buffer (PROTOCOL.md §2.3 step 3).
    async fn next_item(&mut self, until: Instant) -> Next {
        let timer = sleep_until(until);
        tokio::pin!(timer);
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Next::Item(item);
            }
            let polled = poll_fn(|cx| {
                if let Poll::Ready(item) = self.framed.poll_next_unpin(cx) {
                    return Poll::Ready(Some(item));
                }
                // The stream has read all it could: the buffer shows whether a frame is
                // under way, and since when no byte came.
                let stall_at = partial_since(&self.framed).map(|last| last + INTER_BYTE_TIMEOUT);
                let wake = stall_at.map_or(until, |stall| stall.min(until));
                if timer.deadline() != wake {
                    timer.as_mut().reset(wake);
                }
                timer.as_mut().poll(cx).map(|()| None)
            })
            .await;
            match polled {
                Some(Some(Ok(item))) => return Next::Item(item),
                Some(Some(Err(error))) => return Next::Closed(format!("read failed: {error}")),
                Some(None) => return Next::Closed(end_of_stream()),
                None => {
                    if self.drop_partial(false) {
                        continue;
                    }
                    if Instant::now() >= until {
                        return Next::Timeout;
                    }
                }
            }
        }
    }

    /// When the buffer holds the start of a frame: the time of the last byte received.
    fn partial_since(&self) -> Option<Instant> {
        partial_since(&self.framed)
    }

    /// Drops the SOH of a partial frame at the head of the buffer (if `force`, or if no byte
    /// came for the inter-byte timeout) and decodes the bytes behind it into `pending`.
    fn drop_partial(&mut self, force: bool) -> bool {
        let Some(last) = self.partial_since() else {
            return false;
        };
        if !force && Instant::now() < last + INTER_BYTE_TIMEOUT {
            return false;
        }
        let buffer = self.framed.read_buffer_mut();
        if let Some(error) = drop_stalled(buffer) {
            debug!(%error, "partial frame dropped");
        }
        let mut codec = HostCodec;
        while let Ok(Some(item)) = codec.decode(buffer) {
            self.pending.push_back(item);
        }
        true
    }
}

/// An item for the log: SEQ and CMD of a reply, never its DATA (invoice contents, security
/// elements).
pub(super) fn describe(item: &FromDevice) -> String {
    match item {
        FromDevice::Reply(reply) => format!(
            "reply SEQ {:#04x} CMD {:#04x}, {} bytes of DATA",
            reply.seq().get(),
            reply.cmd(),
            reply.data().len()
        ),
        FromDevice::Nak => "NAK".to_owned(),
        FromDevice::Syn => "SYN".to_owned(),
        FromDevice::Malformed(error) => format!("bad frame: {error}"),
    }
}

/// When `framed`'s buffer holds the start of a frame: the time of the last byte received.
fn partial_since<IO>(framed: &Framed<Activity<IO>, HostCodec>) -> Option<Instant> {
    (framed.read_buffer().first() == Some(&SOH)).then(|| framed.get_ref().last_byte)
}

fn end_of_stream() -> String {
    "end of stream (read returned 0 bytes)".to_owned()
}

/// The port, remembering when the last byte arrived (for the inter-byte timeout, which
/// `Framed` does not know about) and writing every byte to the capture, if any.
struct Activity<IO> {
    io: IO,
    last_byte: Instant,
    capture: Option<DeviceCapture>,
}

impl<IO: AsyncRead + Unpin> AsyncRead for Activity<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.last_byte = Instant::now();
            if let Some(capture) = &this.capture {
                capture.record(&Event::FromDevice(buf.filled()[before..].to_vec()));
            }
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Activity<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        if let (Poll::Ready(Ok(written)), Some(capture)) = (&polled, &this.capture) {
            capture.record(&Event::ToDevice(buf[..*written].to_vec()));
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
