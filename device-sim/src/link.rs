//! The device's end of the line: reads host frames, answers NAK, SYN or a reply frame, and
//! replays the last reply to a retransmitted SEQ instead of executing it twice.
//!
//! The link owns bytes and time; the [`Engine`] owns meaning. Bytes that arrive while a
//! command is processing stay in the port's buffer and are read after the reply, as on a
//! real single-threaded box.

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use chrono::{FixedOffset, NaiveDateTime, Utc};
use mcf_sfe::{DeviceCodec, FromHost, Reply, ReplyFrame, RequestFrame, Seq, Status, ToHost};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::time::{sleep, sleep_until, Instant};
use tokio_util::codec::Encoder;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::engine::Engine;
use crate::faults::{Faults, ReplyFaults};
use crate::reader::FrameReader;

/// Line settings.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Baud rate, used for pacing.
    pub baud: u32,
    /// Write bytes no faster than the baud rate would (10 bits per byte).
    pub pace: bool,
    /// Interval between SYN bytes while a command is processing.
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
    let (reader, mut writer) = tokio::io::split(io);
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
            end = answer(item, &mut writer, engine, faults, config, &mut last) => end?,
        };
        if let Some(end) = end {
            return Ok(end);
        }
    }
}

/// Answers one item from the host; `Some` when the link ends with it.
async fn answer<W: AsyncWrite + Unpin>(
    item: Option<FromHost>,
    writer: &mut W,
    engine: &mut Engine,
    faults: &mut Faults,
    config: &LinkConfig,
    last: &mut Option<LastReply>,
) -> io::Result<Option<LinkEnd>> {
    let request = match item {
        None => return Ok(Some(LinkEnd::HostClosed)),
        Some(FromHost::Malformed(error)) => {
            debug!(%error, "bad frame, NAK");
            send(writer, &encode(ToHost::Nak)?, config).await?;
            return Ok(None);
        }
        Some(FromHost::Request(request)) => request,
    };
    if let Some(last) = last.as_ref().filter(|l| is_retransmission(l, &request)) {
        debug!(
            seq = request.seq().get(),
            "repeated SEQ: replaying the last reply"
        );
        send(writer, &last.bytes, config).await?;
        return Ok(None);
    }
    let (reply, finalized) = execute(&request, engine, faults, writer, config).await?;
    if finalized && faults.power_cut_on_finalize() {
        warn!(
            seq = request.seq().get(),
            "fault: power cut after finalize, reply not sent"
        );
        return Ok(Some(LinkEnd::PowerCut));
    }
    let bytes = encode(ToHost::Reply(reply))?;
    deliver(writer, &bytes, faults.for_reply(), config).await?;
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
    writer: &mut W,
    config: &LinkConfig,
) -> io::Result<(ReplyFrame, bool)> {
    let (data, status, finalized) = if faults.refuse_command() {
        info!(cmd = request.cmd(), "fault: command refused unexecuted");
        let data = Reply::Refused("fault injected: command not executed".into())
            .encode(request.cmd())
            .map_err(io::Error::other)?;
        let mut status = engine.status();
        status.set(mcf_sfe::StatusFlag::CommandRefused, true);
        (data, status, false)
    } else {
        let started = Instant::now();
        let handled = engine.handle(
            request.cmd(),
            request.data(),
            config.clock(),
            started.into_std(),
        );
        work(writer, started + handled.processing, handled.silent, config).await?;
        (handled.reply, handled.status, handled.finalized.is_some())
    };
    let frame = ReplyFrame::new(request.seq(), request.cmd(), data, status).or_else(|e| {
        warn!(%e, "engine reply too long; refusing instead");
        let text = Reply::Refused("reply too long".into())
            .encode(request.cmd())
            .map_err(io::Error::other)?;
        ReplyFrame::new(request.seq(), request.cmd(), text, Status::default())
            .map_err(io::Error::other)
    })?;
    Ok((frame, finalized))
}

/// Waits until `until`, sending SYN every `syn_interval` unless silent.
async fn work<W: AsyncWrite + Unpin>(
    writer: &mut W,
    until: Instant,
    silent: bool,
    config: &LinkConfig,
) -> io::Result<()> {
    if silent {
        sleep_until(until).await;
        return Ok(());
    }
    let syn = encode(ToHost::Syn)?;
    loop {
        let next = Instant::now() + config.syn_interval;
        if next >= until {
            sleep_until(until).await;
            return Ok(());
        }
        sleep_until(next).await;
        send(writer, &syn, config).await?;
    }
}

/// Sends a reply with its injected faults.
async fn deliver<W: AsyncWrite + Unpin>(
    writer: &mut W,
    bytes: &[u8],
    faults: ReplyFaults,
    config: &LinkConfig,
) -> io::Result<()> {
    if let Some(delay) = faults.delay {
        debug!(?delay, "fault: late reply");
        sleep(delay).await;
    }
    if !faults.garbage.is_empty() {
        debug!(len = faults.garbage.len(), "fault: garbage burst");
        send(writer, &faults.garbage, config).await?;
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
            send(writer, &corrupted, config).await
        }
        _ => send(writer, bytes, config).await,
    }
}

fn encode(item: ToHost) -> io::Result<Vec<u8>> {
    let mut buf = BytesMut::new();
    DeviceCodec.encode(item, &mut buf)?;
    Ok(buf.to_vec())
}

/// Writes `bytes`, no faster than the baud rate when pacing.
async fn send<W: AsyncWrite + Unpin>(
    writer: &mut W,
    bytes: &[u8],
    config: &LinkConfig,
) -> io::Result<()> {
    if !config.pace || config.baud == 0 {
        writer.write_all(bytes).await?;
        return writer.flush().await;
    }
    // 10 bits a byte (8N1); write about a millisecond's worth at a time.
    let per_byte = Duration::from_secs_f64(10.0 / f64::from(config.baud));
    let chunk = (config.baud as usize / 10_000).max(1);
    for part in bytes.chunks(chunk) {
        let due = Instant::now() + per_byte * part.len() as u32;
        writer.write_all(part).await?;
        writer.flush().await?;
        sleep_until(due).await;
    }
    Ok(())
}
