//! A fault relay: a bad cable between a host (the gateway) and a device (the simulator or a
//! real box), with faults injected from a seed and a plug that can be pulled.
//!
//! ```text
//! host (gateway) --opens--> host_link (symlink to a pty the relay serves)
//!                                 relay task: frames found, faults injected, both ways
//! device_path (the simulator's pty, or a serial port) <--opened like a host-- relay
//! ```
//!
//! [`Relay::start`] creates the host side, a new pseudo-terminal with a symlink at
//! [`RelayConfig::host_link`] (the relay keeps a slave handle, so hosts can come and go, as
//! with the simulator's own pty), opens [`RelayConfig::device_path`] with tokio-serial (8N1,
//! no flow control, like a host) and forwards bytes both ways on one tokio task. If the
//! device side ends (the simulator stopped), the relay drops what the host sends and reopens
//! the path every 100 ms; a restarted simulator at the same path is picked up.
//!
//! # Faults ([`RelayFaults`], one [`DirectionFaults`] per direction)
//! The relay finds frames in each stream as the codec does (SOH, LEN, `05` and ETX where LEN
//! puts them), so frame faults hit whole frames; NAK, SYN and noise pass as loose bytes.
//! Per byte: flip one bit, drop the byte. Per frame: drop it, send it twice, delay it (the
//! stream behind it waits too: a line does not reorder), a garbage burst before it (1 to
//! [`MAX_GARBAGE_BURST`] bytes, never a SOH), a stale frame before it (a clean copy of one of
//! the last [`DirectionFaults::stale_depth`] frames of that direction, so towards the host a
//! reply the host already had or gave up on). Byte faults also hit the copies.
//!
//! Every random choice comes from a SplitMix64 generator per direction, seeded from
//! [`RelayConfig::seed`], drawn in a fixed order per byte and per frame: the same seed and
//! the same bytes in give the same bytes out, whatever the other direction does. A
//! probability of 0 draws nothing. [`RelayHandle::set_faults`] changes probabilities without
//! reseeding.
//!
//! # Rules ([`Rule`]) and the plug
//! [`RelayHandle::arm`] adds a deterministic one-shot: "drop the next 3 frames with CMD 38h
//! towards the host" ([`RelayHandle::drop_next_replies`]), duplicate, delay. Rules run
//! before the random faults; the first armed rule that matches a frame takes it.
//! [`RelayHandle::cut`] unplugs the host side: the pty and its symlink go away, a host
//! holding the port reads EIO, and bytes from the device meanwhile are lost.
//! [`RelayHandle::restore`] plugs in a new pty at the same symlink.
//!
//! # Counting ([`RelayStats`])
//! Per direction: bytes in and out, frames found (and per CMD), frames forwarded, bytes lost
//! because the other side was absent, and each fault injected, by kind.

mod pipe;
mod task;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The longest garbage burst, in bytes.
pub const MAX_GARBAGE_BURST: usize = 24;

/// Which way bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Host (gateway) to device: requests.
    ToDevice,
    /// Device to host: replies, NAK, SYN.
    ToHost,
}

/// Faults of one direction. Byte probabilities are per byte, frame probabilities per frame
/// found in the stream; all 0.0 to 1.0.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionFaults {
    /// Flip one random bit of a byte.
    pub flip_bit: f64,
    /// Lose a byte.
    pub drop_byte: f64,
    /// Lose a whole frame.
    pub drop_frame: f64,
    /// Send a frame twice in a row.
    pub duplicate_frame: f64,
    /// Hold a frame (and what follows it) back by [`DirectionFaults::delay_for`].
    pub delay_frame: f64,
    /// How long a delayed frame waits.
    pub delay_for: Duration,
    /// Send a garbage burst (no SOH) before a frame.
    pub garbage: f64,
    /// Send a copy of an earlier frame of this direction before a frame.
    pub stale_frame: f64,
    /// How many earlier frames a stale copy is picked from (the newest ones).
    pub stale_depth: usize,
}

impl Default for DirectionFaults {
    fn default() -> Self {
        DirectionFaults {
            flip_bit: 0.0,
            drop_byte: 0.0,
            drop_frame: 0.0,
            duplicate_frame: 0.0,
            delay_frame: 0.0,
            delay_for: Duration::from_millis(300),
            garbage: 0.0,
            stale_frame: 0.0,
            stale_depth: 8,
        }
    }
}

impl DirectionFaults {
    /// Checks that every probability is in 0..=1.
    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [
            ("flip_bit", self.flip_bit),
            ("drop_byte", self.drop_byte),
            ("drop_frame", self.drop_frame),
            ("duplicate_frame", self.duplicate_frame),
            ("delay_frame", self.delay_frame),
            ("garbage", self.garbage),
            ("stale_frame", self.stale_frame),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} is a probability between 0 and 1, not {p}"));
            }
        }
        Ok(())
    }
}

/// Faults of both directions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RelayFaults {
    /// Host to device.
    pub to_device: DirectionFaults,
    /// Device to host.
    pub to_host: DirectionFaults,
}

impl RelayFaults {
    /// The same faults both ways.
    pub fn both(faults: DirectionFaults) -> RelayFaults {
        RelayFaults {
            to_device: faults.clone(),
            to_host: faults,
        }
    }

    fn validate(&self) -> io::Result<()> {
        self.to_device
            .validate()
            .and_then(|()| self.to_host.validate())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }
}

/// What a [`Rule`] does to the frames it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleAction {
    /// Lose the frame.
    Drop,
    /// Send it twice.
    Duplicate,
    /// Hold it (and what follows) back this long.
    Delay(Duration),
}

/// A deterministic fault for the next matching frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The stream it watches.
    pub direction: Direction,
    /// Only frames with this CMD (a reply carries its command's CMD); `None` = any frame.
    pub cmd: Option<u8>,
    /// What to do.
    pub action: RuleAction,
    /// How many matching frames it applies to (then it is gone).
    pub times: u32,
}

/// Faults injected, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Bits flipped (one per byte hit).
    pub flipped_bits: u64,
    /// Bytes lost.
    pub dropped_bytes: u64,
    /// Frames lost (random or by a rule).
    pub dropped_frames: u64,
    /// Extra copies of frames sent.
    pub duplicated_frames: u64,
    /// Frames held back.
    pub delayed_frames: u64,
    /// Garbage bursts sent.
    pub garbage_bursts: u64,
    /// Stale frames sent.
    pub stale_frames: u64,
    /// Frames a [`Rule`] applied to.
    pub rules_fired: u64,
}

impl FaultCounts {
    /// Every fault, all kinds together (rules counted through what they did).
    pub fn total(&self) -> u64 {
        self.flipped_bits
            + self.dropped_bytes
            + self.dropped_frames
            + self.duplicated_frames
            + self.delayed_frames
            + self.garbage_bursts
            + self.stale_frames
    }
}

/// Counters of one direction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Bytes read from the source.
    pub bytes_in: u64,
    /// Bytes written to the destination (garbage, copies and stale frames included).
    pub bytes_out: u64,
    /// Frames found in the source stream.
    pub frames: u64,
    /// Frames found, per CMD byte.
    pub by_cmd: BTreeMap<u8, u64>,
    /// Frames written (duplicates included, stale copies not).
    pub frames_forwarded: u64,
    /// Bytes lost because the destination was absent (cut, device gone) or would not take
    /// them.
    pub bytes_discarded: u64,
    /// Partial frames passed on as they were after the source went quiet.
    pub partial_flushes: u64,
    /// Faults injected.
    pub faults: FaultCounts,
}

/// Counters of the whole relay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Host to device.
    pub to_device: DirectionStats,
    /// Device to host.
    pub to_host: DirectionStats,
    /// Times the host side was cut.
    pub cuts: u64,
    /// Times the device side was opened (the first time included).
    pub device_opens: u64,
    /// Whether the host side is plugged in now.
    pub host_connected: bool,
    /// Whether the device side is open now.
    pub device_connected: bool,
}

impl RelayStats {
    /// Frames found in both directions.
    pub fn frames(&self) -> u64 {
        self.to_device.frames + self.to_host.frames
    }

    /// The counters of one direction.
    pub fn direction(&self, direction: Direction) -> &DirectionStats {
        match direction {
            Direction::ToDevice => &self.to_device,
            Direction::ToHost => &self.to_host,
        }
    }
}

/// How to start a relay.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The symlink the host opens (replaced if it exists as a symlink).
    pub host_link: PathBuf,
    /// The device's port: the simulator's pty (or its symlink), or a serial port.
    pub device_path: PathBuf,
    /// Baud of the device side (no effect on a pty).
    pub baud: u32,
    /// The faults.
    pub faults: RelayFaults,
    /// Seed of the fault generators.
    pub seed: u64,
}

impl RelayConfig {
    /// A relay without faults, seed 0, 115200 baud.
    pub fn new(host_link: impl Into<PathBuf>, device_path: impl Into<PathBuf>) -> RelayConfig {
        RelayConfig {
            host_link: host_link.into(),
            device_path: device_path.into(),
            baud: 115_200,
            faults: RelayFaults::default(),
            seed: 0,
        }
    }
}

/// Starting a relay.
#[derive(Debug)]
pub struct Relay;

impl Relay {
    /// Creates the host side (pty + symlink) and starts the relay task on the current tokio
    /// runtime; the device side is opened by the task (now if it exists, else every 100 ms).
    /// Fails if a probability is out of range or the pty or symlink cannot be made.
    pub fn start(config: RelayConfig) -> io::Result<RelayHandle> {
        config.faults.validate()?;
        let stats = Arc::new(Mutex::new(RelayStats::default()));
        let (commands, receiver) = mpsc::channel(16);
        let task = task::spawn(config, receiver, stats.clone())?;
        Ok(RelayHandle {
            commands,
            stats,
            task: Mutex::new(Some(task)),
        })
    }
}

/// A command for the relay task.
#[derive(Debug)]
enum Control {
    Cut(oneshot::Sender<()>),
    Restore(oneshot::Sender<io::Result<()>>),
    SetFaults(RelayFaults, oneshot::Sender<()>),
    Arm(Rule, oneshot::Sender<()>),
    Armed(oneshot::Sender<usize>),
    Stop,
}

/// Controls a running relay. Dropping it stops the relay (its task sees the channel close;
/// the host side and its symlink are removed).
#[derive(Debug)]
pub struct RelayHandle {
    commands: mpsc::Sender<Control>,
    stats: Arc<Mutex<RelayStats>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl RelayHandle {
    /// Unplugs the host side: closes its pty (a host reading it gets EIO) and removes the
    /// symlink. Returns when done. A no-op when already cut.
    pub async fn cut(&self) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(Control::Cut(tx)).await?;
        rx.await.map_err(|_| stopped())
    }

    /// Plugs in a new pty at the same symlink. A no-op when plugged in.
    pub async fn restore(&self) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(Control::Restore(tx)).await?;
        rx.await.map_err(|_| stopped())?
    }

    /// Replaces the random faults (the generators are not reseeded).
    pub async fn set_faults(&self, faults: RelayFaults) -> io::Result<()> {
        faults.validate()?;
        let (tx, rx) = oneshot::channel();
        self.send(Control::SetFaults(faults, tx)).await?;
        rx.await.map_err(|_| stopped())
    }

    /// Adds a rule for the next matching frames.
    pub async fn arm(&self, rule: Rule) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(Control::Arm(rule, tx)).await?;
        rx.await.map_err(|_| stopped())
    }

    /// Drops the next `times` frames towards the host whose CMD is `cmd` (the replies to
    /// that command, replays of a retransmission included).
    pub async fn drop_next_replies(&self, cmd: u8, times: u32) -> io::Result<()> {
        self.arm(Rule {
            direction: Direction::ToHost,
            cmd: Some(cmd),
            action: RuleAction::Drop,
            times,
        })
        .await
    }

    /// Rules armed and not used up yet (both directions).
    pub async fn armed(&self) -> io::Result<usize> {
        let (tx, rx) = oneshot::channel();
        self.send(Control::Armed(tx)).await?;
        rx.await.map_err(|_| stopped())
    }

    /// The counters now.
    pub fn stats(&self) -> RelayStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Whether the relay task has ended (stopped, or it failed).
    pub fn is_finished(&self) -> bool {
        self.task
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(|t| t.is_finished()))
            .unwrap_or(true)
    }

    /// Stops the relay (both sides closed, symlink removed) and returns the final counters.
    pub async fn stop(self) -> RelayStats {
        let _ = self.commands.send(Control::Stop).await;
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let _ = task.await;
        }
        self.stats()
    }

    async fn send(&self, control: Control) -> io::Result<()> {
        self.commands.send(control).await.map_err(|_| stopped())
    }
}

fn stopped() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the relay has stopped")
}
