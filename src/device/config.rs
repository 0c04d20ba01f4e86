//! How to talk to one device: its port, timing and the wire choices where boxes differ
//! (PROTOCOL.md §3-§4, and §0 for what real boxes do differently).

use std::path::PathBuf;
use std::time::Duration;

use mcf_sfe::{Dialect, LineBreaks, SeqRange};
use rust_decimal::Decimal;

use super::capture::Capture;

/// Default length of a device's queue of sessions.
pub const DEFAULT_QUEUE_CAPACITY: usize = 32;

/// One device and how to talk to it.
#[derive(Debug, Clone)]
pub struct DeviceConfig {
    /// Name used in configuration, logs and errors.
    pub name: String,
    /// The port, e.g. `/dev/serial/by-id/...` or a simulator's pty.
    pub path: PathBuf,
    /// Baud rate (8N1, no flow control).
    pub baud: u32,
    /// Timeouts, tries and budgets.
    pub timing: LinkTiming,
    /// How many sessions may wait for the device (at least 1).
    pub queue_capacity: usize,
    /// What this box does where boxes differ.
    pub wire: WireSettings,
    /// While no session runs, read C1h (and C2h) this often, so that the status says what
    /// the box says now; `None`: only at each connection and invoice.
    pub health_interval: Option<Duration>,
    /// VAT rates to use when the box's C1h carries none (a C1h of fewer than 27 fields).
    pub fallback_rates: [Option<Decimal>; 16],
    /// Where every byte both ways is written, if anywhere.
    pub capture: Option<Capture>,
}

impl DeviceConfig {
    /// A device at `path` with the default baud (115200), timing, wire settings and queue.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        DeviceConfig {
            name: name.into(),
            path: path.into(),
            baud: 115_200,
            timing: LinkTiming::default(),
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            wire: WireSettings::default(),
            health_interval: Some(DEFAULT_HEALTH_INTERVAL),
            fallback_rates: mcf_sfe::types::dgi_rates(),
            capture: None,
        }
    }

    /// The bundled simulator at `path`: it answers within milliseconds and writes exactly what
    /// PROTOCOL.md says, so the short timing of the protocol's first draft and its escapes.
    pub fn simulator(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        DeviceConfig {
            timing: LinkTiming::fast(),
            wire: WireSettings {
                line_breaks: LineBreaks::Protocol,
                seq_replay: true,
                ..WireSettings::default()
            },
            ..DeviceConfig::new(name, path)
        }
    }
}

/// The default [`DeviceConfig::health_interval`].
pub const DEFAULT_HEALTH_INTERVAL: Duration = Duration::from_secs(60);

/// What a box does where the public evidence shows boxes differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireSettings {
    /// The SEQ values sent (default 0x20..=0xFF).
    pub seq: SeqRange,
    /// Escapes of CR and LF in texts (default: swapped, as every public driver writes them).
    pub line_breaks: LineBreaks,
    /// How the status bytes are read (default: the simulator's map, PROTOCOL.md §9).
    pub status_map: StatusMap,
    /// The box does not execute a frame sent again with the same SEQ (the Datecs rule): a
    /// command that changes the invoice may be sent again after a silent window. Off (the
    /// default for a real box: no DRC driver relies on the rule, the DRC client never sends a
    /// frame again): only after a NAK (the box said it did not execute it); after silence the
    /// gateway keeps listening until the command's budget. On for the bundled simulator.
    pub seq_replay: bool,
}

impl Default for WireSettings {
    fn default() -> Self {
        WireSettings {
            seq: SeqRange::FULL,
            line_breaks: LineBreaks::Swapped,
            status_map: StatusMap::Simulator,
            seq_replay: false,
        }
    }
}

impl WireSettings {
    /// The reader's dialect for these settings.
    pub fn dialect(&self) -> Dialect {
        Dialect {
            line_breaks: self.line_breaks,
            refusal_by_status: self.status_map == StatusMap::Simulator,
        }
    }
}

/// How the 6 status bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMap {
    /// PROTOCOL.md §9 (the simulator's map): S0.1 refused, S1.0 invoice open, S2.1 fiscal
    /// memory full, S3.0 DGI link overdue.
    Simulator,
    /// Not read at all (a box whose map is unknown): no refusal by status bit, a 38h `C`
    /// before every invoice instead of reading "invoice open", and nothing read about the
    /// fiscal memory or the DGI link.
    Ignored,
}

impl StatusMap {
    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusMap::Simulator => "simulator",
            StatusMap::Ignored => "none",
        }
    }
}

/// Link timing (PROTOCOL.md §3.3).
///
/// The defaults are chosen from what drivers of real boxes do (docs/firmware.md §10): a box
/// may stay silent, without SYN, for seconds on an ordinary command (the DRC client waits 5 s
/// for each reply) and about 25 s on a credit note, so a window shorter than that would resend
/// to a box that is still working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// Silence tolerated after a transmission (every SYN restarts it) before it counts
    /// as unanswered.
    pub window: Duration,
    /// Transmissions per command (same SEQ).
    pub tries: u32,
    /// Whole budget of one ordinary command (38h `C` included).
    pub command_budget: Duration,
    /// Budget of 38h with totals for FV FT EV ET, `P:` polls included.
    pub finalize_budget: Duration,
    /// Budget of 38h with totals for FA EA, `P:` polls included.
    pub credit_note_budget: Duration,
    /// Wait after a `P:` before polling with a new SEQ.
    pub poll_interval: Duration,
    /// First wait before reopening the port.
    pub reconnect_min: Duration,
    /// Longest wait before reopening the port.
    pub reconnect_max: Duration,
}

impl Default for LinkTiming {
    fn default() -> Self {
        LinkTiming {
            window: Duration::from_secs(5),
            tries: 3,
            command_budget: Duration::from_secs(15),
            finalize_budget: Duration::from_secs(15),
            credit_note_budget: Duration::from_secs(90),
            poll_interval: Duration::from_millis(500),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
        }
    }
}

impl LinkTiming {
    /// The timing of a box known to answer or send SYN within milliseconds (the bundled
    /// simulator): a 500 ms window, 5 s per command and per sale's 38h.
    pub fn fast() -> LinkTiming {
        LinkTiming {
            window: Duration::from_millis(500),
            command_budget: Duration::from_secs(5),
            finalize_budget: Duration::from_secs(5),
            ..LinkTiming::default()
        }
    }

    /// The longest single budget (finalize, credit note or command): an HTTP request timeout
    /// must exceed it.
    pub fn longest_budget(&self) -> Duration {
        self.credit_note_budget
            .max(self.finalize_budget)
            .max(self.command_budget)
    }
}
