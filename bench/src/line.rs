//! A serial line between the gateway and the simulator, modelled byte for byte.
//!
//! The gateway opens `host_link` (a symlink to a new pty whose master this line serves); the
//! line opens the simulator's pty like a host. One OS thread per direction forwards bytes
//! and, when that direction is paced, delivers each byte when its stop bit would have left a
//! 115200 baud 8N1 UART (10 bits a byte, 86.8 µs): a byte that arrives while the line is busy
//! waits for the bytes before it, as in a UART's FIFO. The schedule is absolute (errors do not
//! accumulate) and the threads sleep with a 1 ns timer slack; how late each delivery was is
//! recorded, so the precision of the model is itself measured.
//!
//! Every byte crossing the line is captured per direction, so the wire time of an invoice is
//! computed from the frames actually exchanged.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which directions are paced.
#[derive(Debug, Clone, Copy)]
pub struct LineConfig {
    pub baud: u32,
    /// Gateway to device (requests).
    pub pace_to_device: bool,
    /// Device to gateway (replies); off when the simulator paces its own writes.
    pub pace_to_host: bool,
}

/// Bytes captured since the last [`Line::take`], and where the time went between frames.
#[derive(Debug, Default, Clone)]
pub struct Captured {
    pub to_device: Vec<u8>,
    pub to_host: Vec<u8>,
    /// Device turnarounds: last request byte delivered to the device -> first reply byte
    /// back from it (the simulator's own time, its pty hop included).
    pub device_gaps: Vec<Duration>,
    /// Host turnarounds: last reply byte delivered to the gateway -> first byte of its next
    /// request (the gateway's time between exchanges, journal writes included).
    pub host_gaps: Vec<Duration>,
}

impl Captured {
    pub fn bytes(&self) -> usize {
        self.to_device.len() + self.to_host.len()
    }
}

#[derive(Default)]
struct Shared {
    captured: Captured,
    /// How late each paced delivery was (µs after its last byte's ideal time).
    late_us: Vec<f64>,
    /// The last delivery to the device not yet answered, and to the host not yet followed
    /// by a request.
    delivered_to_device: Option<Instant>,
    delivered_to_host: Option<Instant>,
}

/// A running line.
pub struct Line {
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    threads: Vec<JoinHandle<()>>,
    link: PathBuf,
    _master: Arc<OwnedFd>,
    _slave: OwnedFd,
    _device: Arc<OwnedFd>,
}

impl Line {
    /// Creates the host side at `host_link` and opens `device_path`.
    pub fn start(host_link: &Path, device_path: &Path, config: LineConfig) -> io::Result<Line> {
        let (master, slave, slave_path) = open_pty()?;
        let _ = std::fs::remove_file(host_link);
        std::os::unix::fs::symlink(&slave_path, host_link)?;
        let device = open_tty(device_path)?;
        let master = Arc::new(master);
        let device = Arc::new(device);
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let byte = Duration::from_secs_f64(10.0 / f64::from(config.baud));
        let mut threads = Vec::new();
        for (from, to, pace, to_device) in [
            (
                Arc::clone(&master),
                Arc::clone(&device),
                config.pace_to_device,
                true,
            ),
            (
                Arc::clone(&device),
                Arc::clone(&master),
                config.pace_to_host,
                false,
            ),
        ] {
            let stop = Arc::clone(&stop);
            let shared = Arc::clone(&shared);
            threads.push(
                std::thread::Builder::new()
                    .name(if to_device { "line-tx" } else { "line-rx" }.into())
                    .spawn(move || {
                        pump(
                            from.as_raw_fd(),
                            to.as_raw_fd(),
                            pace.then_some(byte),
                            to_device,
                            &stop,
                            &shared,
                        )
                    })?,
            );
        }
        Ok(Line {
            stop,
            shared,
            threads,
            link: host_link.to_path_buf(),
            _master: master,
            _slave: slave,
            _device: device,
        })
    }

    /// The bytes that crossed since the last call.
    pub fn take(&self) -> Captured {
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut shared.captured)
    }

    /// Lateness of paced deliveries so far (µs), and clears it.
    pub fn take_lateness(&self) -> Vec<f64> {
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut shared.late_us)
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.link);
    }
}

/// Forwards `from` to `to` until `stop`, pacing at `byte` per byte if given.
fn pump(
    from: RawFd,
    to: RawFd,
    byte: Option<Duration>,
    to_device: bool,
    stop: &AtomicBool,
    shared: &Mutex<Shared>,
) {
    // SAFETY: prctl(PR_SET_TIMERSLACK) on the calling thread only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    let mut buf = vec![0u8; 8192];
    let mut line_free = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let mut pfd = libc::pollfd {
            fd: from,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, 20) };
        if ready <= 0 {
            continue;
        }
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP/POLLERR (the other end closed for now): do not spin.
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        // SAFETY: reading into a buffer we own, within its length.
        let n = unsafe { libc::read(from, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let n = n as usize;
        let arrived = Instant::now();
        {
            let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
            let shared = &mut *shared;
            if to_device {
                shared.captured.to_device.extend_from_slice(&buf[..n]);
                if let Some(at) = shared.delivered_to_host.take() {
                    shared
                        .captured
                        .host_gaps
                        .push(arrived.saturating_duration_since(at));
                }
            } else {
                shared.captured.to_host.extend_from_slice(&buf[..n]);
                if let Some(at) = shared.delivered_to_device.take() {
                    shared
                        .captured
                        .device_gaps
                        .push(arrived.saturating_duration_since(at));
                }
            }
        }
        let delivered = |shared: &Mutex<Shared>| {
            let now = Instant::now();
            let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
            if to_device {
                shared.delivered_to_device = Some(now);
            } else {
                shared.delivered_to_host = Some(now);
            }
        };
        let Some(byte) = byte else {
            let _ = write_all(to, &buf[..n]);
            delivered(shared);
            continue;
        };
        let start = line_free.max(arrived);
        let done = |i: usize| start + byte * (i as u32 + 1);
        let mut sent = 0;
        while sent < n {
            let now = Instant::now();
            let complete = if now < start {
                0
            } else {
                (((now - start).as_nanos() / byte.as_nanos()) as usize).min(n)
            };
            if complete > sent {
                let _ = write_all(to, &buf[sent..complete]);
                delivered(shared);
                let late = now.saturating_duration_since(done(complete - 1));
                shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .late_us
                    .push(late.as_secs_f64() * 1e6);
                sent = complete;
            }
            if sent < n {
                let wait = done(sent).saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
            }
        }
        line_free = done(n - 1);
    }
}

fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writing from a slice we hold, within its length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted
                || error.kind() == io::ErrorKind::WouldBlock
            {
                std::thread::sleep(Duration::from_micros(50));
                continue;
            }
            return Err(error);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// A new pty: its master, a slave handle kept open (so the master never reads EIO while the
/// gateway reopens the port), and the slave's path. Both close on exec.
fn open_pty() -> io::Result<(OwnedFd, OwnedFd, PathBuf)> {
    // SAFETY: plain libc pty calls; every returned fd is checked and owned at once.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let master = OwnedFd::from_raw_fd(fd);
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0
            || libc::grantpt(fd) != 0
            || libc::unlockpt(fd) != 0
        {
            return Err(io::Error::last_os_error());
        }
        let mut name = [0 as libc::c_char; 256];
        if libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let path = PathBuf::from(CStr::from_ptr(name.as_ptr()).to_string_lossy().to_string());
        let slave = open_tty(&path)?;
        Ok((master, slave, path))
    }
}

/// Opens a tty like a host (no controlling terminal, close on exec) in raw mode.
pub fn open_tty(path: &Path) -> io::Result<OwnedFd> {
    let c_path =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: open/tcgetattr/tcsetattr on a path we own the CString of and the fd we opened.
    unsafe {
        let fd = libc::open(
            c_path.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let owned = OwnedFd::from_raw_fd(fd);
        let mut term: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut term) == 0 {
            libc::cfmakeraw(&mut term);
            libc::tcsetattr(fd, libc::TCSANOW, &term);
        }
        Ok(owned)
    }
}
