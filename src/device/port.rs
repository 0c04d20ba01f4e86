//! Opening the port, and the backoff between attempts. The only place that opens a
//! `tokio_serial::SerialStream` (a real serial port or a pty, by path).

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

/// A serial port (or pty) by path: 8N1, no flow control, exclusive (docs/design.md §9: one owner).
pub(super) struct SerialConnector {
    path: PathBuf,
    baud: u32,
}

impl SerialConnector {
    pub(super) fn new(path: PathBuf, baud: u32) -> Self {
        SerialConnector { path, baud }
    }
}

impl SerialConnector {
    /// Opens the stream (no I/O on it yet); called again after every failure or disconnect
    /// (with a backoff in between).
    pub(super) fn connect(&mut self) -> io::Result<SerialStream> {
        let mut port = tokio_serial::new(self.path.to_string_lossy(), self.baud)
            .data_bits(DataBits::Eight)
            .parity(Parity::None)
            .stop_bits(StopBits::One)
            .flow_control(FlowControl::None)
            .open_native_async()
            .map_err(io::Error::from)?;
        // serialport opens ttys exclusively by default; say so explicitly, and do not fail
        // the open if the platform cannot.
        #[cfg(unix)]
        if let Err(error) = port.set_exclusive(true) {
            tracing::debug!(%error, "could not make the port exclusive");
        }
        #[cfg(not(unix))]
        let _ = &mut port;
        Ok(port)
    }

    /// What is opened, for messages (a path).
    pub(super) fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// Opens the serial port at `path` at `baud` exactly as the link does (8N1, exclusive) and
/// closes it at once, sending nothing: whether the port can be opened (`config check` while
/// the service is stopped). Needs a tokio runtime. A port another program holds exclusively
/// fails as `NotFound`, like a missing one: the caller tells them apart by the path.
pub fn try_open(path: &std::path::Path, baud: u32) -> io::Result<()> {
    SerialConnector::new(path.to_path_buf(), baud)
        .connect()
        .map(drop)
}

/// Exponential backoff between reconnection attempts: `min`, 2 x `min`, ... up to `max`.
#[derive(Debug, Clone)]
pub(super) struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

/// The shortest wait ever used, whatever the configuration says: never spin.
const FLOOR: Duration = Duration::from_millis(10);

impl Backoff {
    pub(super) fn new(min: Duration, max: Duration) -> Self {
        let min = min.max(FLOOR);
        let max = max.max(min);
        Backoff {
            min,
            max,
            next: min,
        }
    }

    /// The wait before the next attempt; each call doubles the following one, up to `max`.
    pub(super) fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = delay.saturating_mul(2).min(self.max);
        delay
    }

    /// After a successful connection: start again from `min`.
    pub(super) fn reset(&mut self) {
        self.next = self.min;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_max_and_resets() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(500));
        let delays: Vec<u128> = (0..5).map(|_| backoff.next_delay().as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(100));
    }

    #[test]
    fn backoff_never_spins() {
        let mut backoff = Backoff::new(Duration::ZERO, Duration::ZERO);
        assert_eq!(backoff.next_delay(), FLOOR);
        assert_eq!(backoff.next_delay(), FLOOR);
    }
}
