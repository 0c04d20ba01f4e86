//! A precise timer for paced writes: waits until an instant with sub-millisecond precision,
//! never returning before it, without blocking the runtime's thread or spinning.
//!
//! Tokio's own timer has 1 ms ticks: a sleep ends 0.1 to 2 ms after its deadline (about
//! 1.1 ms on average), which would write every paced chunk, the last one of each reply
//! frame included, that much late. On Linux this timer is a `timerfd` on `CLOCK_MONOTONIC`
//! (the clock of [`Instant`]), armed at an absolute deadline in nanoseconds and awaited
//! through tokio's reactor like any file descriptor: the kernel's high-resolution timer
//! wakes the runtime when it expires, and nothing blocks meanwhile. Elsewhere it falls back
//! to a tokio sleep (late by up to a tick, never early).
//!
//! It is only created for a paced line ([`super::LinkConfig::pace`], opt-in: the `emcf-sim`
//! binary's `--pace`, the benchmark, tests), in a runtime with I/O enabled, which the
//! simulator's ports need anyway.

use std::time::Duration;

use tokio::time::Instant;

#[cfg(target_os = "linux")]
pub(crate) use self::linux::PreciseTimer;
#[cfg(not(target_os = "linux"))]
pub(crate) use self::other::PreciseTimer;

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const NANOS_PER_SEC: u64 = 1_000_000_000;

/// `(seconds, nanoseconds)` of a clock reading `after` later than `now` (same form, with
/// `now.1` below a second): the deadline a timer is armed at. Saturates instead of
/// overflowing, so a deadline too far away for the clock is still never early.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn deadline_after(now: (u64, u64), after: Duration) -> (u64, u64) {
    let nanos = now.1 + u64::from(after.subsec_nanos());
    let secs = now
        .0
        .saturating_add(after.as_secs())
        .saturating_add(nanos / NANOS_PER_SEC);
    (secs, nanos % NANOS_PER_SEC)
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    use tokio::time::Instant;

    use super::deadline_after;

    /// A `timerfd` registered with tokio's reactor.
    #[derive(Debug)]
    pub(crate) struct PreciseTimer {
        fd: AsyncFd<OwnedFd>,
    }

    impl PreciseTimer {
        /// A new, disarmed timer. Must be called within a tokio runtime with I/O enabled.
        pub(crate) fn new() -> io::Result<Self> {
            // SAFETY: no pointer arguments; returns a new descriptor or -1.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a descriptor just opened, owned by nothing else.
            let owned = unsafe { OwnedFd::from_raw_fd(raw) };
            // SAFETY: the `OwnedFd` owns its descriptor, which stays open and the same for
            // as long as the `AsyncFd` holds it.
            let fd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }?;
            Ok(PreciseTimer { fd })
        }

        /// Waits until `due`; returns at once if it has passed, and never before it.
        ///
        /// Cancel-safe: dropped midway, it leaves the timer armed, and the next wait arms it
        /// again (which also clears an expiration nobody read).
        pub(crate) async fn wait_until(&self, due: Instant) -> io::Result<()> {
            loop {
                let now = Instant::now();
                if due <= now {
                    return Ok(());
                }
                self.arm(due - now)?;
                let mut ready = self.fd.readable().await?;
                // Consumes the expiration. `WouldBlock` (not expired: a readiness left over
                // from an earlier wait) clears the readiness; either way the loop checks the
                // clock again, so an early wake-up only arms the timer once more.
                match ready.try_io(|fd| read_expirations(fd.get_ref().as_raw_fd())) {
                    Ok(result) => result?,
                    Err(_would_block) => {}
                }
            }
        }

        /// Arms the timer to expire `after` from now, at an absolute `CLOCK_MONOTONIC`
        /// deadline. The clock is read after the caller's `Instant::now()`, so the deadline
        /// is never earlier than the caller's.
        fn arm(&self, after: std::time::Duration) -> io::Result<()> {
            let mut now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `now` is a valid, writable timespec.
            if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let (secs, nanos) = deadline_after(
                (
                    u64::try_from(now.tv_sec).unwrap_or(0),
                    u64::try_from(now.tv_nsec).unwrap_or(0),
                ),
                after,
            );
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: libc::time_t::try_from(secs).unwrap_or(libc::time_t::MAX),
                    // Below a second: always fits.
                    tv_nsec: libc::c_long::try_from(nanos).unwrap_or(0),
                },
            };
            // SAFETY: the descriptor is a timerfd owned by `self`; `spec` is a valid
            // itimerspec and a null old value is allowed.
            let armed = unsafe {
                libc::timerfd_settime(
                    self.fd.get_ref().as_raw_fd(),
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            };
            if armed != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
    }

    /// Reads (and so resets) a timerfd's expiration count.
    fn read_expirations(fd: std::os::fd::RawFd) -> io::Result<()> {
        let mut count = [0u8; 8];
        // SAFETY: `count` is 8 writable bytes, the size a timerfd read needs.
        let read = unsafe { libc::read(fd, count.as_mut_ptr().cast(), count.len()) };
        if read < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use std::io;

    use tokio::time::Instant;

    /// Without a timerfd: tokio's timer (late by up to a tick, never early).
    #[derive(Debug)]
    pub(crate) struct PreciseTimer;

    impl PreciseTimer {
        pub(crate) fn new() -> io::Result<Self> {
            Ok(PreciseTimer)
        }

        pub(crate) async fn wait_until(&self, due: Instant) -> io::Result<()> {
            super::super::line::sleep_until_due(due).await;
            Ok(())
        }
    }
}

/// Waits until `due` on `timer`, or on tokio's timer without one (or if it fails).
pub(crate) async fn wait_until(timer: Option<&PreciseTimer>, due: Instant) {
    if let Some(timer) = timer {
        if timer.wait_until(due).await.is_ok() {
            return;
        }
    }
    super::line::sleep_until_due(due).await;
}
