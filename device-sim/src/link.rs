//! The device's end of the line: reads host frames, answers NAK, SYN or a reply frame, and
//! replays the last reply to a retransmitted SEQ instead of executing it twice.
//!
//! The engine's [`crate::firmware::Firmware`] decides the link's part of how the box talks:
//! the SYN pace (or none), and whether a retransmitted SEQ is replayed or executed again.
//!
//! The link owns bytes and time; the [`Engine`] owns meaning. Bytes that arrive while a
//! command is processing stay in the port's buffer and are read after the reply, as on a
//! real single-threaded box.
//!
//! Time is never rounded up where the line would not wait: a command with no processing
//! time (or one whose time has passed) is answered without touching the timer, and paced
//! writes follow an absolute schedule (`link/line.rs`), since every tokio sleep costs up to a
//! 1 ms tick.

mod line;
#[cfg(test)]
mod tests;
mod timer;

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use chrono::{FixedOffset, NaiveDateTime, Utc};
use mcf_sfe::{DeviceCodec, FromHost, ReplyFrame, RequestFrame, Seq, ToHost};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep, Instant};
use tokio_util::codec::Encoder;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use self::line::{sleep_until_due, Line};
use crate::engine::Engine;
use crate::faults::{Faults, ReplyFaults};
use crate::firmware::Text;
use crate::reader::FrameReader;

/// Line settings.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Baud rate, used for pacing.
    pub baud: u32,
    /// Write bytes no faster than the baud rate would (10 bits per byte), on an absolute
    /// schedule: on average exactly as fast as the line, never faster. Each chunk is written
    /// when due, to within a fraction of a millisecond on Linux (a `timerfd`, awaited
    /// without blocking; `link/timer.rs`). Paced, the link must run in a tokio runtime with
    /// I/O and time enabled.
    pub pace: bool,
    /// Interval between SYN bytes while a command is processing (at least 1 ms is used),
    /// unless the engine's firmware sets its own pace.
    pub syn_interval: Duration,
    /// Offset of the device clock from UTC in seconds (Kinshasa, UTC+1, by default).
    pub clock_offset_secs: i32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            baud: 115_200,
            pace: false,
            syn_interval: Duration::from_millis(60),
            clock_offset_secs: 3600,
        }
    }
}

impl LinkConfig {
    /// The device clock now.
    pub fn clock(&self) -> NaiveDateTime {
        match FixedOffset::east_opt(self.clock_offset_secs) {
            Some(offset) => Utc::now().with_timezone(&offset).naive_local(),
            None => Utc::now().naive_utc(),
        }
    }
}

/// Why a link session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkEnd {
    /// The host side closed (end of stream).
    HostClosed,
    /// Asked to stop.
    Stopped,
    /// Injected: power cut after a finalization was committed, before its reply.
    PowerCut,
    /// Injected: the port vanished.
    Vanished,
}

/// The last reply sent, for SEQ replay.
struct LastReply {
    seq: Seq,
    cmd: u8,
    bytes: Vec<u8>,
}

/// Serves one port until the host closes it, `stop` is cancelled, or a fault ends it.
pub async fn serve<IO>(
    io: IO,
    engine: &mut Engine,
    faults: &mut Faults,
    config: &LinkConfig,
    stop: &CancellationToken,
) -> io::Result<LinkEnd>
where
    IO: AsyncRead + AsyncWrite,
{
    let (reader, writer) = tokio::io::split(io);
    let mut line = Line::new(writer, config);
    let mut frames = FrameReader::new(reader);
    let mut last: Option<LastReply> = None;
    loop {
        let item = tokio::select! {
            () = stop.cancelled() => return Ok(LinkEnd::Stopped),
            item = frames.next() => item?,
        };
        // Stopping while a command runs is a power-off: what the engine committed stays
        // committed, the reply is never sent. Nothing here outlives a stop (delays, SYN
        // ticks and paced writes included).
        let end = tokio::select! {
            () = stop.cancelled() => return Ok(LinkEnd::Stopped),
            end = answer(item, &mut line, engine, faults, config, &mut last) => end?,
        };
        if let Some(end) = end {
            return Ok(end);
        }
    }
}

/// Answers one item from the host; `Some` when the link ends with it.
async fn answer<W: AsyncWrite + Unpin>(
    item: Option<FromHost>,
    line: &mut Line<W>,
    engine: &mut Engine,
    faults: &mut Faults,
    config: &LinkConfig,
    last: &mut Option<LastReply>,
) -> io::Result<Option<LinkEnd>> {
    let request = match item {
        None => return Ok(Some(LinkEnd::HostClosed)),
        Some(FromHost::Malformed(error)) => {
            debug!(%error, "bad frame, NAK");
            line.send(&encode(ToHost::Nak)?).await?;
            return Ok(None);
        }
        Some(FromHost::Request(request)) => request,
    };
    let replay = engine.firmware().seq_replay;
    if let Some(last) = last
        .as_ref()
        .filter(|l| replay && is_retransmission(l, &request))
    {
        debug!(
            seq = request.seq().get(),
            "repeated SEQ: replaying the last reply"
        );
        line.send(&last.bytes).await?;
        return Ok(None);
    }
    let (reply, finalized) = execute(&request, engine, faults, line, config).await?;
    if finalized && faults.power_cut_on_finalize() {
        warn!(
            seq = request.seq().get(),
            "fault: power cut after finalize, reply not sent"
        );
        return Ok(Some(LinkEnd::PowerCut));
    }
    let bytes = encode(ToHost::Reply(reply))?;
    deliver(line, &bytes, faults.for_reply()).await?;
    *last = Some(LastReply {
        seq: request.seq(),
        cmd: request.cmd(),
        bytes,
    });
    if faults.vanish_after_answer() {
        // Let the last reply leave the line first: closing a pty master discards what
        // the host has not read yet, and the fault is "after N answers".
        sleep(Duration::from_millis(200)).await;
        info!("fault: port vanishes");
        return Ok(Some(LinkEnd::Vanished));
    }
    Ok(None)
}

fn is_retransmission(last: &LastReply, request: &RequestFrame) -> bool {
    last.seq == request.seq() && last.cmd == request.cmd()
}

/// Runs one command (SYN while it works) and returns its reply frame and whether it
/// committed an invoice.
async fn execute<W: AsyncWrite + Unpin>(
    request: &RequestFrame,
    engine: &mut Engine,
    faults: &mut Faults,
    line: &mut Line<W>,
    config: &LinkConfig,
) -> io::Result<(ReplyFrame, bool)> {
    let (data, status, finalized) = if faults.refuse_command(request.cmd()) {
        info!(cmd = request.cmd(), "fault: command refused unexecuted");
        let (data, status) = engine.refuse_unexecuted(request.cmd());
        (data, status, false)
    } else {
        let started = Instant::now();
        let handled = engine.handle(
            request.cmd(),
            request.data(),
            config.clock(),
            started.into_std(),
        );
        let until = started + handled.processing;
        let syn_interval = engine
            .firmware()
            .syn_interval(config.syn_interval)
            .filter(|_| !handled.silent);
        work(line, until, syn_interval).await?;
        (handled.reply, handled.status, handled.finalized.is_some())
    };
    let frame = ReplyFrame::new(request.seq(), request.cmd(), data, status).or_else(|e| {
        warn!(%e, "engine reply too long; refusing instead");
        let text = engine.refusal_data(request.cmd(), Text::ReplyTooLong);
        let status = engine.firmware().status(mcf_sfe::Status::default(), true);
        ReplyFrame::new(request.seq(), request.cmd(), text, status).map_err(io::Error::other)
    })?;
    Ok((frame, finalized))
}

/// What [`work`] does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorkStep {
    /// The processing time is over: reply now, without a timer.
    Done,
    /// Sleep until the processing time is over.
    Finish(Instant),
    /// Sleep until this instant, then send a SYN.
    Syn(Instant),
}

/// The next step of a command processing until `until`, at `now`, with the next SYN due at
/// `next_syn` (`None` when silent). A deadline that has passed (a zero processing time
/// included) is [`WorkStep::Done`]: no sleep is scheduled, not even one until now.
fn work_step(until: Instant, next_syn: Option<Instant>, now: Instant) -> WorkStep {
    if until <= now {
        return WorkStep::Done;
    }
    match next_syn {
        Some(at) if at < until => WorkStep::Syn(at),
        _ => WorkStep::Finish(until),
    }
}

/// The shortest SYN interval used: the timer's resolution. Keeps a zero interval from
/// becoming a SYN flood that never yields.
const MIN_SYN_INTERVAL: Duration = Duration::from_millis(1);

/// Waits until `until`, sending SYN every `syn_interval` (`None`: silently).
async fn work<W: AsyncWrite + Unpin>(
    line: &mut Line<W>,
    until: Instant,
    syn_interval: Option<Duration>,
) -> io::Result<()> {
    let interval = syn_interval.map(|i| i.max(MIN_SYN_INTERVAL));
    let syn = encode(ToHost::Syn)?;
    let mut next_syn = interval.map(|i| Instant::now() + i);
    loop {
        match work_step(until, next_syn, Instant::now()) {
            WorkStep::Done => return Ok(()),
            WorkStep::Finish(at) => sleep_until_due(at).await,
            WorkStep::Syn(at) => {
                sleep_until_due(at).await;
                line.send(&syn).await?;
                next_syn = interval.map(|i| Instant::now() + i);
            }
        }
    }
}

/// Sends a reply with its injected faults.
async fn deliver<W: AsyncWrite + Unpin>(
    line: &mut Line<W>,
    bytes: &[u8],
    faults: ReplyFaults,
) -> io::Result<()> {
    if let Some(delay) = faults.delay {
        debug!(?delay, "fault: late reply");
        sleep(delay).await;
    }
    if !faults.garbage.is_empty() {
        debug!(len = faults.garbage.len(), "fault: garbage burst");
        line.send(&faults.garbage).await?;
    }
    if faults.drop {
        debug!("fault: reply dropped");
        return Ok(());
    }
    match faults.corrupt {
        Some((at, mask)) if !bytes.is_empty() => {
            let mut corrupted = bytes.to_vec();
            // Never corrupt the leading SOH: the host must see a bad frame, not silence.
            let index = 1 + at % (corrupted.len() - 1).max(1);
            if let Some(byte) = corrupted.get_mut(index) {
                *byte ^= mask;
            }
            debug!(index, "fault: corrupted reply");
            line.send(&corrupted).await
        }
        _ => line.send(bytes).await,
    }
}

fn encode(item: ToHost) -> io::Result<Vec<u8>> {
    let mut buf = BytesMut::new();
    DeviceCodec.encode(item, &mut buf)?;
    Ok(buf.to_vec())
}
