//! Counter continuity: what the register knows of each box, and the fiscal anomalies found
//! when a box says otherwise.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::register::RegisterEntry;

/// What the register knows of one box (by its NIM): from its last production entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxCounters {
    /// Machine id.
    pub nim: String,
    /// The NIF the box certified that entry for (from its qrCode).
    pub nif: String,
    /// The box's total counter (TC) of that entry.
    pub tc: u64,
    /// That entry's production sequence.
    pub sequence: u64,
}

impl BoxCounters {
    /// The counters an entry shows: NIM, the NIF of its qrCode (`RDCDEF01;MID;SIG;NIF;DT`,
    /// the organization's NIF if it cannot be read) and TC from `counters` (`FC/TC FT`).
    /// `None` when `counters` does not carry a TC.
    pub fn of_entry(entry: &RegisterEntry) -> Option<BoxCounters> {
        let tc = entry
            .security
            .counters
            .split_once('/')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .and_then(|tc| tc.parse().ok())?;
        let nif = entry
            .security
            .qr_code
            .split(';')
            .nth(3)
            .filter(|nif| !nif.is_empty())
            .unwrap_or(&entry.request.nif)
            .to_owned();
        Some(BoxCounters {
            nim: entry.security.nim.clone(),
            nif,
            tc,
            sequence: entry.sequence,
        })
    }
}

/// What kind of break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FiscalAnomalyKind {
    /// The box reports a total counter (TC) lower than the register's last entry of it, or
    /// certifies with a TC the register already holds: its fiscal memory was reset, replaced
    /// or cloned.
    CounterWentBack,
    /// A NIM the register knows reports another NIF.
    NifChanged,
}

/// A box said something its register history contradicts. Journaled once; certification
/// goes on (the box is the fiscal authority) until an administrator acknowledges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiscalAnomaly {
    /// The configured device name.
    pub device: String,
    /// The box's NIM.
    pub nim: String,
    /// What kind.
    pub kind: FiscalAnomalyKind,
    /// What the register knew.
    pub known: BoxCounters,
    /// The NIF the box reported.
    pub seen_nif: String,
    /// The TC the box reported.
    pub seen_tc: u64,
    /// Where: `C1h` (its state) or `38h` (a certification).
    pub seen_in: String,
}

/// An acknowledgement of a fiscal anomaly by an administrator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnomalyAck {
    /// Who (free text given to the CLI).
    pub by: String,
    /// Why it is understood (e.g. "fiscal memory replaced by the DGI, PV 2026-114").
    pub note: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// A fiscal anomaly as the register holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnomalyRecord {
    /// Its id: the journal seq of its record.
    pub id: u64,
    /// When it was journaled.
    pub detected_at: DateTime<Utc>,
    /// What was found.
    pub anomaly: FiscalAnomaly,
    /// The acknowledgement, once given.
    pub acknowledged: Option<AnomalyAck>,
}
