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
    /// The highest TC of this box the register holds, when it is above `tc`: entries
    /// recorded out of counter order (a web API e-MCF's requests confirmed side by side, or
    /// settled later by an administrator). 0 otherwise, and in records before 1.8.0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub highest_tc: u64,
}

/// What the register holds of one device and of its machine (NIM) at a write: what
/// `src/certify/register_behind.rs` compares a channel's counter with, and what counter
/// continuity (`src/certify/continuity.rs`) checks a box against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceView {
    /// The C1h counter (TC) each of the device's other open intents recorded, by intent id
    /// (`None`: an intent that recorded none, a web API's or one of 1.0.0). The intent the
    /// write records or certifies is never among them.
    pub open: Vec<Option<u64>>,
    /// The register's counters for the NIM before this write (`None`: a NIM it does not know).
    pub known: Option<BoxCounters>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl BoxCounters {
    /// The counters an entry shows: NIM, the NIF of its qrCode (`RDCDEF01;MID;SIG;NIF;DT`,
    /// the organization's NIF if it cannot be read) and TC from `counters` (`FC/TC FT`).
    /// `None` when `counters` does not carry a TC.
    pub fn of_entry(entry: &RegisterEntry) -> Option<BoxCounters> {
        let tc = total_counter(&entry.security.counters)?;
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
            highest_tc: 0,
        })
    }

    /// The highest TC of the box the register holds.
    pub fn highest(&self) -> u64 {
        self.tc.max(self.highest_tc)
    }

    /// `next`, the counters of a later entry of the same box, with the highest TC held so far
    /// when the entry's is lower (recorded out of counter order).
    pub fn after(&self, mut next: BoxCounters) -> BoxCounters {
        let top = self.highest();
        if top > next.tc {
            next.highest_tc = top;
        }
        next
    }
}

/// The total counter (TC) of a `counters` element (`FC/TC FT`, e.g. `5/8 FV`); `None` when it
/// does not carry one.
pub fn total_counter(counters: &str) -> Option<u64> {
    counters
        .split_once('/')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|tc| tc.parse().ok())
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
    /// The box is ahead of its register: it certified invoices the register does not hold
    /// (a register restored from an older copy, a disk that lost its last records), with
    /// nothing to explain them (no open intent of that box). The box certifies nothing more
    /// until an administrator restores a newer copy or acknowledges the missing numbers
    /// (1.8.0; an older release refuses a journal that holds one).
    RegisterBehind,
}

/// A box said something its register history contradicts. Journaled once. Certification
/// goes on (the box is the fiscal authority), except for a box ahead of its register
/// ([`FiscalAnomalyKind::RegisterBehind`]), which certifies nothing until an administrator
/// settles it.
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
    /// Where: `C1h` (its state) or `38h` (a certification); `confirm` for a web API e-MCF.
    pub seen_in: String,
    /// A register behind its box: the box's total counter (TC) numbers the register holds
    /// neither as entries nor as open intents, in order. Empty for the other kinds (and in
    /// journals before 1.8.0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u64>,
    /// A register behind its box, seen in its C1h: what C1h says of the box's last invoice
    /// (its number is `seen_tc`), when it is read. `None` otherwise (and before 1.8.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<LostInvoice>,
}

/// A certification the box made and the register lost, as far as it is known: its counter
/// number (TC) and rn, with what C1h said of it when the rn came from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostInvoice {
    /// Its total counter number (TC).
    pub number: u64,
    /// Its rn (the box's FN).
    pub rn: String,
    /// Its codeDEFDGI, when C1h gave it (empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code_def: String,
    /// Its type (`FV`, ...), when C1h gave it (empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub invoice_type: String,
    /// When the box finalized it (its clock), when C1h gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<chrono::NaiveDateTime>,
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
    /// A register behind its box: the missing certifications' numbers (TC) the administrator
    /// acknowledged, as given. Empty for the other kinds (and before 1.8.0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<u64>,
    /// Of those, the ones whose rn is known (from the box's C1h, or given by the
    /// administrator): those rns are never certified again for that device's organizations.
    /// Empty before 1.8.1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rns: Vec<LostInvoice>,
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

/// Counter numbers as a person reads and types them: runs joined (`7-9, 12`).
pub fn numbers_text(numbers: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &n in numbers {
        match runs.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(n) => *last = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|&(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads counter numbers as [`numbers_text`] writes them (`7-9,12`, spaces allowed), sorted
/// and without repeats; `None` when a part is not a number or a range, or a range goes
/// down or is longer than `max` numbers in all.
pub fn parse_numbers(text: &str, max: usize) -> Option<Vec<u64>> {
    let mut numbers = std::collections::BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (first.trim().parse().ok()?, last.trim().parse().ok()?),
            None => {
                let n: u64 = part.parse().ok()?;
                (n, n)
            }
        };
        if last < first || last - first >= max as u64 {
            return None;
        }
        numbers.extend(first..=last);
        if numbers.len() > max {
            return None;
        }
    }
    (!numbers.is_empty()).then(|| numbers.into_iter().collect())
}

/// A channel's counter numbers after the register's `known` up to what it says it is at
/// (`seen`) that nothing accounts for: neither an open intent of that channel (`open`: the
/// number after its C1h counter; one each, the lowest left, for an intent that did not record
/// it: it may have been finalized, and is settled as in doubt) nor `explained`. At most `max`.
pub fn missing_numbers(
    known: u64,
    seen: u64,
    open: &[Option<u64>],
    explained: &[u64],
    max: usize,
) -> Vec<u64> {
    if seen <= known {
        return Vec::new();
    }
    let mut accounted: std::collections::BTreeSet<u64> = explained.iter().copied().collect();
    accounted.extend(open.iter().flatten().map(|tc| tc.saturating_add(1)));
    let unrecorded = open.iter().filter(|tc| tc.is_none()).count();
    (known + 1..=seen)
        .filter(|n| !accounted.contains(n))
        .skip(unrecorded)
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_out_of_counter_order_keep_the_highest_number_held() {
        let at = |tc, sequence| BoxCounters {
            nim: "NIM1".into(),
            nif: "NIF".into(),
            tc,
            sequence,
            highest_tc: 0,
        };
        // Confirmed side by side: TC 53 recorded before TC 52.
        let after = at(53, 52).after(at(52, 53));
        assert_eq!((after.tc, after.sequence, after.highest()), (52, 53, 53));
        assert_eq!(after.after(at(54, 54)).highest_tc, 0, "in order again");
        // So the next confirmation (55) with 54 in doubt misses nothing.
        assert!(missing_numbers(after.highest(), 55, &[None], &[55], 10).is_empty());
        let json = serde_json::to_string(&at(1, 1)).expect("json");
        assert!(
            !json.contains("highest_tc"),
            "unchanged for records in order: {json}"
        );
    }

    #[test]
    fn open_intents_explain_the_numbers_they_may_have_finalized() {
        let missing = |known, seen, open: &[Option<u64>], explained: &[u64]| {
            missing_numbers(known, seen, open, explained, 100)
        };
        assert_eq!(missing(6, 6, &[], &[]), Vec::<u64>::new());
        assert_eq!(
            missing(6, 5, &[], &[]),
            Vec::<u64>::new(),
            "behind, not ahead"
        );
        assert_eq!(missing(6, 7, &[], &[]), vec![7]);
        assert_eq!(missing(6, 7, &[Some(6)], &[]), Vec::<u64>::new());
        assert_eq!(missing(6, 9, &[Some(6)], &[]), vec![8, 9]);
        assert_eq!(missing(6, 9, &[None], &[]), vec![8, 9]);
        assert_eq!(missing(6, 9, &[], &[9]), vec![7, 8]);
        assert_eq!(missing(0, 1_000_000, &[], &[]).len(), 100);
    }

    #[test]
    fn numbers_read_back_as_written() {
        let numbers = [7, 8, 9, 12, 14, 15];
        assert_eq!(numbers_text(&numbers), "7-9, 12, 14-15");
        assert_eq!(parse_numbers("7-9, 12,14-15", 100), Some(numbers.to_vec()));
        assert_eq!(parse_numbers("12, 7", 100), Some(vec![7, 12]));
        for bad in ["", "x", "9-7", "1-1000", "7;8"] {
            assert_eq!(parse_numbers(bad, 100), None, "{bad}");
        }
    }
}
