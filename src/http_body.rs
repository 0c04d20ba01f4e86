//! Reading a request body under the server's limits, for the API and the dashboard alike:
//!
//! * a size limit (also for chunked bodies);
//! * a deadline that grows with what has arrived: the body must keep up a minimum rate after
//!   a grace period (`grace + received / min_rate`), so that a client trickling one byte every
//!   few seconds is cut off after the grace period instead of holding a connection for the
//!   whole request timeout (issue 14: 260 such connections kept the status unanswered);
//! * an oversize body is read and discarded up to [`BodyLimits::drain`] before the 413 is
//!   answered: a client that writes its whole body before reading (Python's `http.client`,
//!   `requests`) then reads the 413 instead of a broken pipe. Beyond the drain bound, or when
//!   the declared length is beyond it, the answer goes at once and the connection closes.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::CONTENT_LENGTH;
use hyper::Request;
use tokio::time::Instant;

/// An oversize body is read and dropped up to this much beyond the limit, so that a client
/// which writes before it reads hears the 413 (a body that fits in the sockets' buffers, a few
/// MiB, is heard anyway; beyond them the client would get a broken pipe).
pub const DRAIN_BEYOND_LIMIT: usize = 16 * 1024 * 1024;

/// How much, and how fast, a body must come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// Largest body accepted, in bytes.
    pub limit: usize,
    /// Time the whole body may take before the rate counts.
    pub grace: Duration,
    /// Bytes per second a body must keep up after `grace` (at least 1).
    pub min_rate: u64,
    /// An oversize body is read and discarded up to this many bytes (at least `limit`).
    pub drain: usize,
}

impl BodyLimits {
    /// The same limits with another size limit (a small form, a sign-in).
    pub fn with_limit(self, limit: usize) -> BodyLimits {
        BodyLimits {
            limit,
            drain: self.drain.max(limit),
            ..self
        }
    }

    /// Longest wait for the rest of a body of which `received` bytes have arrived.
    fn deadline(&self, started: Instant, received: u64) -> Instant {
        let rate = self.min_rate.max(1);
        let earned = Duration::from_secs(received / rate)
            + Duration::from_nanos((received % rate) * 1_000_000_000 / rate);
        started + self.grace + earned
    }
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits {
            limit: 256 * 1024,
            grace: Duration::from_secs(10),
            min_rate: 1024,
            drain: 256 * 1024 + DRAIN_BEYOND_LIMIT,
        }
    }
}

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Above the limit. `drained`: the whole body was read (the connection can stay open).
    #[error("request body larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
        /// Whether the rest of the body was read and discarded.
        drained: bool,
    },
    /// The body did not keep up the minimum rate.
    #[error("the request body arrived too slowly")]
    TooSlow,
    /// Cut off or badly framed.
    #[error("{0}")]
    Unreadable(String),
}

/// Reads the whole body of `request` under `limits`.
pub async fn read(request: Request<Incoming>, limits: &BodyLimits) -> Result<Bytes, BodyError> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let drain = limits.drain.max(limits.limit) as u64;
    if declared.is_some_and(|length| length > drain) {
        return Err(BodyError::TooLarge {
            limit: limits.limit,
            drained: false,
        });
    }
    let mut body = request.into_body();
    let started = Instant::now();
    let mut received: u64 = 0;
    // The chunks as they came (no copy), then one contiguous copy: never more than twice the
    // body in memory, as with `http_body_util::Collected`.
    let mut kept: Vec<Bytes> = Vec::new();
    loop {
        let deadline = limits.deadline(started, received);
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(BodyError::TooSlow),
            Ok(None) => break,
            Ok(Some(Err(error))) => return Err(BodyError::Unreadable(error.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        received = received.saturating_add(data.len() as u64);
        if received > drain {
            return Err(BodyError::TooLarge {
                limit: limits.limit,
                drained: false,
            });
        }
        if received <= limits.limit as u64 {
            kept.push(data);
        }
    }
    if received > limits.limit as u64 {
        return Err(BodyError::TooLarge {
            limit: limits.limit,
            drained: true,
        });
    }
    Ok(match kept.len() {
        0 => Bytes::new(),
        1 => kept.swap_remove(0),
        _ => {
            let mut whole = BytesMut::with_capacity(received as usize);
            for chunk in kept {
                whole.extend_from_slice(&chunk);
            }
            whole.freeze()
        }
    })
}

/// Reads and drops the body of a request refused before its body was wanted (401, 415): what
/// the client is already sending, up to `limit` bytes and for at most `within`, so that a client
/// which writes its whole body before reading (an ERP with a mistyped key and Python's
/// `requests`) reads the answer rather than a broken pipe, while a body that never comes
/// delays the answer by `within` only. Whether the whole body was read.
pub async fn discard(request: Request<Incoming>, limit: usize, within: Duration) -> bool {
    let mut body = request.into_body();
    let deadline = Instant::now() + within;
    let mut received: u64 = 0;
    loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(None) => return true,
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    received = received.saturating_add(data.len() as u64);
                    if received > limit as u64 {
                        return false;
                    }
                }
            }
            Err(_) | Ok(Some(Err(_))) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_grows_with_what_has_arrived() {
        let limits = BodyLimits {
            limit: 100,
            grace: Duration::from_secs(10),
            min_rate: 1000,
            drain: 50,
        };
        let t0 = Instant::now();
        assert_eq!(limits.deadline(t0, 0), t0 + Duration::from_secs(10));
        assert_eq!(
            limits.deadline(t0, 1500),
            t0 + Duration::from_millis(11_500)
        );
        let small = limits.with_limit(4096);
        assert_eq!((small.limit, small.drain), (4096, 4096));
        let zero_rate = BodyLimits {
            min_rate: 0,
            ..limits
        };
        assert_eq!(zero_rate.deadline(t0, 2), t0 + Duration::from_secs(12));
    }
}
