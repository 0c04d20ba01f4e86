//! What a technician reads of a certification channel: a probe's findings and what in the
//! channel's replies differs from its documentation. Plain data, filled by the channel
//! (`device::probe` for a box), printed by the CLI.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a probe found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The device's configured name.
    pub device: String,
    /// Machine id (NIM), from C1h.
    pub nim: Option<String>,
    /// Taxpayer NIF, from C1h.
    pub nif: Option<String>,
    /// The box's clock (its local time, written as the reader writes a date: `yyyy-MM-dd
    /// HH:mm:ss` in English, which `--json` asks).
    pub clock: Option<String>,
    /// TC, FVC, FRC.
    pub counters: Option<(u64, u64, u64)>,
    /// The last finalized invoice, in words.
    pub last_invoice: Option<String>,
    /// VAT rate per group as C1h gives it (`A` .. `P`, `-` for no VAT); `None` when its C1h
    /// carries no rates.
    pub rates: Option<Vec<(char, String)>>,
    /// The currency block of C1h as sent (code, rate, date).
    pub currency: Option<(String, String, String)>,
    /// The link with the DGI (C2h), in words.
    pub dgi: Option<String>,
    /// 2Bh values: key and value (or why none).
    pub taxpayer: Vec<(String, String)>,
    /// The status bytes of the last reply, in hex.
    pub status_bytes: Option<String>,
    /// Why the box cannot certify now, if anything stops it.
    pub blocked: Option<String>,
    /// What in its replies differs from PROTOCOL.md.
    pub anomalies: Vec<SeenAnomaly>,
    /// Commands that failed, and why.
    pub errors: Vec<String>,
}

/// One kind of difference from PROTOCOL.md seen in a box's replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenAnomaly {
    /// The command whose reply it was in, e.g. `C1h`.
    pub command: String,
    /// The field (PROTOCOL.md's name), or `fields`, `prefix`, `DATA`, `refusal`.
    pub field: String,
    /// The last value received there.
    pub raw: String,
    /// What PROTOCOL.md describes there.
    pub expected: String,
    /// How many replies showed it.
    pub count: u64,
    /// When it was first seen.
    pub first_seen: DateTime<Utc>,
}
