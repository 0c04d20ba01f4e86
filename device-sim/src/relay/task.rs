//! The relay's task: owns both ports, reads them, runs the pipes, writes what is due, and
//! obeys the handle. One task, no locks on the I/O: every event is handled to the end before
//! the next one is read.

use std::collections::VecDeque;
use std::fs::File;
use std::future::pending;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, timeout, Instant};
use tokio_serial::SerialStream;
use tracing::{debug, info, warn};

use super::pipe::{Emit, Pipe};
use super::{Control, Direction, RelayConfig, RelayStats};
use crate::port::{open_serial, Pty};

/// A partial frame with no new byte for this long is passed on as it is (well below the
/// protocol's 100 ms inter-byte timeout, so the relay never causes a stall itself).
const PARTIAL_QUIET: Duration = Duration::from_millis(30);
/// Between attempts to reopen a vanished device side.
const DEVICE_RETRY: Duration = Duration::from_millis(100);
/// A write that takes longer than this (nobody reads the other end) is given up.
const WRITE_TIMEOUT: Duration = Duration::from_millis(500);

/// Creates the host side now (errors are the caller's), then runs the task.
pub(super) fn spawn(
    config: RelayConfig,
    commands: mpsc::Receiver<Control>,
    stats: Arc<Mutex<RelayStats>>,
) -> io::Result<JoinHandle<()>> {
    let host = HostSide::open(&config.host_link)?;
    info!(link = %config.host_link.display(), pty = %host.pty.path().display(), device = %config.device_path.display(), "relay started");
    let to_device_seed = derive_seed(config.seed, 1);
    let to_host_seed = derive_seed(config.seed, 2);
    let task = Task {
        to_device: Pipe::new(
            Direction::ToDevice,
            config.faults.to_device.clone(),
            to_device_seed,
        ),
        to_host: Pipe::new(
            Direction::ToHost,
            config.faults.to_host.clone(),
            to_host_seed,
        ),
        host_link: config.host_link,
        device_path: config.device_path,
        baud: config.baud,
        host: Some(host),
        device: None,
        device_retry_at: Some(Instant::now()),
        out_device: Outbox::default(),
        out_host: Outbox::default(),
        last_from_host: Instant::now(),
        last_from_device: Instant::now(),
        commands,
        shared: stats,
        cuts: 0,
        device_opens: 0,
    };
    Ok(tokio::spawn(task.run()))
}

/// One generator per direction, both from the one seed.
fn derive_seed(seed: u64, direction: u64) -> u64 {
    let mut rng = super::pipe::SplitMix64(seed ^ direction.wrapping_mul(0xD1B5_4A32_D192_ED03));
    rng.next()
}

/// The pty the host opens, with the master end the relay serves.
struct HostSide {
    master: PtyMaster,
    pty: Pty,
}

impl HostSide {
    fn open(link: &std::path::Path) -> io::Result<HostSide> {
        let mut pty = Pty::open(Some(link))?;
        let master = pty
            .take_master()
            .ok_or_else(|| io::Error::other("pty master already taken"))?;
        let master = PtyMaster::new(master)?;
        Ok(HostSide { master, pty })
    }
}

/// The master end of the host side, on a close-on-exec descriptor.
///
/// `SerialStream::pair` opens the master without `O_CLOEXEC`, so every process spawned
/// afterwards (a gateway under test, a CLI run) would inherit a copy, and closing the relay's
/// copy would no longer hang up the host: a cut would look like silence, not a vanished port.
/// The relay keeps only a close-on-exec duplicate and closes the original at once.
struct PtyMaster(AsyncFd<File>);

impl PtyMaster {
    fn new(master: SerialStream) -> io::Result<PtyMaster> {
        // SAFETY: the descriptor belongs to `master`, which is alive for this statement; the
        // duplicate (F_DUPFD_CLOEXEC) is a new descriptor owned by the returned value.
        let owned = unsafe { BorrowedFd::borrow_raw(master.as_raw_fd()) }.try_clone_to_owned()?;
        // The duplicate shares the open file description, O_NONBLOCK included.
        drop(master);
        // SAFETY: the `File` owns its descriptor, which stays open and the same for as long
        // as the `AsyncFd` holds it.
        let registered = unsafe { AsyncFd::register(File::from(owned)) }?;
        Ok(PtyMaster(registered))
    }

    /// Cancel-safe: nothing is read unless it returns.
    async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.0.readable().await?;
            if let Ok(result) = guard.try_io(|file| (&mut file.get_ref()).read(buf)) {
                return result;
            }
        }
    }

    async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut guard = self.0.writable().await?;
            match guard.try_io(|file| (&mut file.get_ref()).write(bytes)) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }
}

/// Bytes waiting to be written to one side, in order, each with the time it is due.
#[derive(Default)]
struct Outbox {
    queue: VecDeque<(Instant, Vec<u8>)>,
    last_due: Option<Instant>,
}

impl Outbox {
    fn push(&mut self, now: Instant, emit: Emit) {
        let start = self.last_due.map_or(now, |last| last.max(now));
        let due = start + emit.delay.unwrap_or_default();
        self.last_due = Some(due);
        if !emit.bytes.is_empty() {
            self.queue.push_back((due, emit.bytes));
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.front().map(|(due, _)| *due)
    }

    /// Empties the box; returns how many bytes were in it.
    fn clear(&mut self) -> u64 {
        self.last_due = None;
        self.queue.drain(..).map(|(_, b)| b.len() as u64).sum()
    }
}

struct Task {
    host_link: PathBuf,
    device_path: PathBuf,
    baud: u32,
    host: Option<HostSide>,
    device: Option<SerialStream>,
    device_retry_at: Option<Instant>,
    to_device: Pipe,
    to_host: Pipe,
    out_device: Outbox,
    out_host: Outbox,
    last_from_host: Instant,
    last_from_device: Instant,
    commands: mpsc::Receiver<Control>,
    shared: Arc<Mutex<RelayStats>>,
    cuts: u64,
    device_opens: u64,
}

enum Event {
    Control(Option<Control>),
    FromHost(io::Result<usize>),
    FromDevice(io::Result<usize>),
    Timer,
}

impl Task {
    async fn run(mut self) {
        let mut host_buf = vec![0u8; 4096];
        let mut device_buf = vec![0u8; 4096];
        self.publish();
        loop {
            let wake = self.next_wake();
            let event = tokio::select! {
                control = self.commands.recv() => Event::Control(control),
                read = read_host(self.host.as_ref(), &mut host_buf) => Event::FromHost(read),
                read = read_from(self.device.as_mut(), &mut device_buf) => Event::FromDevice(read),
                () = sleep_until_some(wake) => Event::Timer,
            };
            let now = Instant::now();
            match event {
                Event::Control(None) | Event::Control(Some(Control::Stop)) => break,
                Event::Control(Some(control)) => self.control(control),
                Event::FromHost(Ok(n)) if n > 0 => {
                    self.last_from_host = now;
                    let mut emits = Vec::new();
                    self.to_device.feed(&host_buf[..n], &mut emits);
                    for emit in emits {
                        self.out_device.push(now, emit);
                    }
                }
                Event::FromHost(read) => {
                    // The relay holds a slave handle, so this is not a host leaving.
                    warn!(?read, "the host side of the relay failed: cutting it");
                    self.cut();
                }
                Event::FromDevice(Ok(n)) if n > 0 => {
                    self.last_from_device = now;
                    let mut emits = Vec::new();
                    self.to_host.feed(&device_buf[..n], &mut emits);
                    for emit in emits {
                        self.out_host.push(now, emit);
                    }
                }
                Event::FromDevice(read) => {
                    info!(?read, "relay: the device side went away; reopening it");
                    self.device_lost();
                }
                Event::Timer => {}
            }
            self.housekeeping(now);
            self.write_due().await;
            self.publish();
        }
        // Unplugged: the pty and its symlink go, the device port closes.
        self.host = None;
        self.device = None;
        self.publish();
        info!(link = %self.host_link.display(), "relay stopped");
    }

    /// The earliest time something has to happen without any input.
    fn next_wake(&self) -> Option<Instant> {
        let partial =
            |pipe: &Pipe, last: Instant| pipe.has_partial().then_some(last + PARTIAL_QUIET);
        [
            self.out_device.next_due(),
            self.out_host.next_due(),
            partial(&self.to_device, self.last_from_host),
            partial(&self.to_host, self.last_from_device),
            self.device_retry_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Quiet partial frames, reopening the device.
    fn housekeeping(&mut self, now: Instant) {
        if self.to_device.has_partial() && now >= self.last_from_host + PARTIAL_QUIET {
            let mut emits = Vec::new();
            self.to_device.flush_partial(&mut emits);
            for emit in emits {
                self.out_device.push(now, emit);
            }
        }
        if self.to_host.has_partial() && now >= self.last_from_device + PARTIAL_QUIET {
            let mut emits = Vec::new();
            self.to_host.flush_partial(&mut emits);
            for emit in emits {
                self.out_host.push(now, emit);
            }
        }
        if self.device.is_none() && self.device_retry_at.is_some_and(|at| now >= at) {
            match open_serial(&self.device_path, self.baud) {
                Ok(port) => {
                    info!(device = %self.device_path.display(), "relay: device side open");
                    self.device = Some(port);
                    self.device_retry_at = None;
                    self.device_opens += 1;
                }
                Err(error) => {
                    debug!(%error, device = %self.device_path.display(), "relay: device side not there yet");
                    self.device_retry_at = Some(now + DEVICE_RETRY);
                }
            }
        }
    }

    fn control(&mut self, control: Control) {
        match control {
            Control::Cut(done) => {
                self.cut();
                let _ = done.send(());
            }
            Control::Restore(done) => {
                let result = if self.host.is_some() {
                    Ok(())
                } else {
                    HostSide::open(&self.host_link).map(|host| {
                        info!(link = %self.host_link.display(), pty = %host.pty.path().display(), "relay: host side plugged in");
                        self.host = Some(host);
                    })
                };
                let _ = done.send(result);
            }
            Control::SetFaults(faults, done) => {
                self.to_device.set_faults(faults.to_device);
                self.to_host.set_faults(faults.to_host);
                let _ = done.send(());
            }
            Control::Arm(rule, done) => {
                match rule.direction {
                    Direction::ToDevice => self.to_device.arm(rule),
                    Direction::ToHost => self.to_host.arm(rule),
                }
                let _ = done.send(());
            }
            Control::Armed(answer) => {
                let _ = answer.send(self.to_device.armed() + self.to_host.armed());
            }
            Control::Stop => {}
        }
    }

    /// Unplugs the host side: its pty closes and its symlink goes.
    fn cut(&mut self) {
        if let Some(host) = self.host.take() {
            info!(link = %self.host_link.display(), "relay: host side cut");
            drop(host);
            self.cuts += 1;
        }
        self.to_device.reset();
        self.to_host.stats.bytes_discarded += self.out_host.clear();
    }

    fn device_lost(&mut self) {
        self.device = None;
        self.device_retry_at = Some(Instant::now() + DEVICE_RETRY);
        self.to_host.reset();
        self.to_device.stats.bytes_discarded += self.out_device.clear();
    }

    /// Writes every chunk that is due, in order; a side that is absent loses its bytes.
    async fn write_due(&mut self) {
        let now = Instant::now();
        while self.out_device.next_due().is_some_and(|due| due <= now) {
            let Some((_, bytes)) = self.out_device.queue.pop_front() else {
                break;
            };
            let stats = &mut self.to_device.stats;
            let Some(device) = self.device.as_mut() else {
                stats.bytes_discarded += bytes.len() as u64;
                continue;
            };
            match timeout(WRITE_TIMEOUT, write_flush(device, &bytes)).await {
                Ok(Ok(())) => stats.bytes_out += bytes.len() as u64,
                Ok(Err(error)) => {
                    stats.bytes_discarded += bytes.len() as u64;
                    info!(%error, "relay: writing to the device failed; reopening it");
                    self.device_lost();
                }
                Err(_) => {
                    stats.bytes_discarded += bytes.len() as u64;
                    warn!("relay: the device side does not take bytes; dropped");
                }
            }
        }
        while self.out_host.next_due().is_some_and(|due| due <= now) {
            let Some((_, bytes)) = self.out_host.queue.pop_front() else {
                break;
            };
            let stats = &mut self.to_host.stats;
            let Some(host) = self.host.as_mut() else {
                stats.bytes_discarded += bytes.len() as u64;
                continue;
            };
            match timeout(WRITE_TIMEOUT, host.master.write_all(&bytes)).await {
                Ok(Ok(())) => stats.bytes_out += bytes.len() as u64,
                Ok(Err(error)) => {
                    stats.bytes_discarded += bytes.len() as u64;
                    warn!(%error, "relay: writing to the host side failed: cutting it");
                    self.cut();
                }
                Err(_) => {
                    // Nobody reads the host side and its buffer is full.
                    stats.bytes_discarded += bytes.len() as u64;
                    debug!("relay: the host side does not take bytes; dropped");
                }
            }
        }
        if self.out_device.queue.is_empty() {
            self.out_device.last_due = self.out_device.last_due.filter(|due| *due > now);
        }
        if self.out_host.queue.is_empty() {
            self.out_host.last_due = self.out_host.last_due.filter(|due| *due > now);
        }
    }

    fn publish(&self) {
        if let Ok(mut shared) = self.shared.lock() {
            *shared = RelayStats {
                to_device: self.to_device.stats.clone(),
                to_host: self.to_host.stats.clone(),
                cuts: self.cuts,
                device_opens: self.device_opens,
                host_connected: self.host.is_some(),
                device_connected: self.device.is_some(),
            };
        }
    }
}

async fn write_flush(io: &mut SerialStream, bytes: &[u8]) -> io::Result<()> {
    AsyncWriteExt::write_all(io, bytes).await?;
    AsyncWriteExt::flush(io).await
}

/// Reads from the host side; never resolves while it is cut.
async fn read_host(host: Option<&HostSide>, buf: &mut [u8]) -> io::Result<usize> {
    match host {
        Some(host) => host.master.read(buf).await,
        None => pending().await,
    }
}

/// Reads from `io`; never resolves when there is none.
async fn read_from(io: Option<&mut SerialStream>, buf: &mut [u8]) -> io::Result<usize> {
    match io {
        Some(io) => AsyncReadExt::read(io, buf).await,
        None => pending().await,
    }
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => pending().await,
    }
}
