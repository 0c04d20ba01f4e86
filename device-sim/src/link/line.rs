//! The device's transmitter: writes bytes, no faster than the baud rate when pacing.
//!
//! Pacing follows an absolute schedule. The line keeps `free_at`, the instant the last byte
//! handed to it has fully crossed it. Bytes handed to the line at `now` cross it from
//! `max(free_at, now)` on, one [`byte_time`] each ([`next_due`]); a chunk is written when
//! it is due, that is once its last byte would have reached the host on the real line.
//!
//! Each deadline is computed from the previous deadline, never from the instant a wait
//! actually ended. A chunk may leave a little late (no wake-up is exact), but that
//! lateness does not push the chunks after it: the average rate over a frame is the line's
//! (11,520 B/s at 115200 baud, 8N1) and never above it.
//! A deadline that has already passed is not slept on at all ([`sleep_until_due`]), since
//! even a sleep until "now" costs a timer tick.
//!
//! Paced writes wait for their deadlines on a [`PreciseTimer`] (`link/timer.rs`), not on
//! tokio's timer: its 1 ms ticks would write every chunk, the last one of each reply frame
//! included, about a millisecond late, and the host would see the line slower than it is.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::{sleep_until, Instant};
use tracing::warn;

use super::timer::{self, PreciseTimer};
use super::LinkConfig;

/// Bits on the wire per byte: start bit, 8 data bits, stop bit (8N1).
const BITS_PER_BYTE: u64 = 10;

/// The time one byte takes on the line at `baud` (8N1), rounded up to the nanosecond so
/// that pacing is never faster than the line; `None` at 0 baud (no pacing possible).
pub(crate) fn byte_time(baud: u32) -> Option<Duration> {
    if baud == 0 {
        return None;
    }
    let nanos = (BITS_PER_BYTE * 1_000_000_000).div_ceil(u64::from(baud));
    Some(Duration::from_nanos(nanos))
}

/// When `bytes` handed to the line at `now` have fully crossed it, given that the bytes
/// handed to it before are still crossing until `line_free_at`.
///
/// Called for each chunk of a send with the same `now` (the instant the whole send was
/// handed over) and the previous chunk's result as `line_free_at`, the deadlines add up
/// to `start + total_bytes * byte_time`: they do not depend on when sleeps woke up.
pub(crate) fn next_due(
    line_free_at: Instant,
    now: Instant,
    bytes: usize,
    byte_time: Duration,
) -> Instant {
    let count = u32::try_from(bytes).unwrap_or(u32::MAX);
    line_free_at.max(now) + byte_time.saturating_mul(count)
}

/// Whether waiting for `due` needs a timer at `now`: never when it is due already.
pub(crate) fn needs_sleep(due: Instant, now: Instant) -> bool {
    due > now
}

/// Waits until `due`; returns at once, without touching the timer, if it has passed.
pub(crate) async fn sleep_until_due(due: Instant) {
    if needs_sleep(due, Instant::now()) {
        sleep_until(due).await;
    }
}

/// The pacing state of a line.
#[derive(Debug)]
struct Pacing {
    byte_time: Duration,
    /// Bytes written at a time: about a millisecond's worth (a wake-up per millisecond).
    chunk: usize,
    /// When the bytes written so far have fully crossed the line.
    free_at: Instant,
    /// `None` if it could not be created: tokio's timer then (late by up to a tick).
    timer: Option<PreciseTimer>,
}

/// The write half of the device's line.
pub(crate) struct Line<W> {
    writer: W,
    /// `None` when bytes go out as fast as the port takes them.
    pacing: Option<Pacing>,
}

impl<W: AsyncWrite + Unpin> Line<W> {
    /// A line over `writer`, paced when `config.pace` is set (and the baud rate is not 0).
    /// Paced, it must be created within a tokio runtime with I/O enabled (its timer).
    pub(crate) fn new(writer: W, config: &LinkConfig) -> Self {
        let pacing = config
            .pace
            .then(|| byte_time(config.baud))
            .flatten()
            .map(|byte_time| Pacing {
                byte_time,
                chunk: (config.baud as usize / 10_000).max(1),
                free_at: Instant::now(),
                timer: PreciseTimer::new()
                    .inspect_err(|error| warn!(%error, "no precise timer, pacing on tokio's"))
                    .ok(),
            });
        Line { writer, pacing }
    }

    /// Writes `bytes`; when pacing, returns once the last byte would have crossed the line.
    pub(crate) async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Line { writer, pacing } = self;
        let Some(pacing) = pacing else {
            writer.write_all(bytes).await?;
            return writer.flush().await;
        };
        // All of `bytes` is handed to the line now: one `now` for the whole send, so each
        // chunk's deadline follows from the previous one (see the module doc).
        let now = Instant::now();
        for part in bytes.chunks(pacing.chunk) {
            let due = next_due(pacing.free_at, now, part.len(), pacing.byte_time);
            pacing.free_at = due;
            timer::wait_until(pacing.timer.as_ref(), due).await;
            writer.write_all(part).await?;
            writer.flush().await?;
        }
        Ok(())
    }
}
