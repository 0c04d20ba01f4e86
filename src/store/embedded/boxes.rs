//! Counter continuity in the register: the last (NIF, TC) of each box from its production
//! entries, and the fiscal anomalies with their acknowledgements.
//!
//! | key | value |
//! |---|---|
//! | `b` nim | `BoxCounters` (JSON) of the box's last production entry, or the counter an administrator acknowledged for a register behind its box (whichever is later) |
//! | `m:boxes` | the seq of the last record the `b` keys reflect (u64 BE); an index without it (written by 1.0.0), or whose marker lags its last applied record (a release that does not know these keys wrote to it since), gets its `b` keys again from its entries at open |
//! | `x` id | `AnomalyRecord` (JSON), id = the journal seq of its `fiscal_anomaly` record |
//!
//! Every batch of records writes its `b`, `x` keys and `m:boxes` with `m:applied` (layout 4),
//! so they agree after any crash (a build from nothing writes them without it, under
//! `m:building`: an interrupted build is built again from the first record); [`Index::complete_boxes`] at open only catches up an index
//! whose `m:boxes` lags (an index edited by another release), never by a rebuild.

use sled::Batch;

use super::event::{Event, Record};
use super::grouped::{first_seq, slots};
use super::index::{json, Index};
use super::staged::Staged;
use super::{EmbeddedStore, StoreError};
use crate::model::{
    AnomalyAck, AnomalyRecord, BoxCounters, DeviceView, Environment, FiscalAnomaly,
    FiscalAnomalyKind, IntentId, LostInvoice, RegisterEntry,
};

pub(super) const META_BOXES: &[u8] = b"m:boxes";

fn k_box(nim: &str) -> Vec<u8> {
    let mut k = vec![b'b'];
    k.extend_from_slice(nim.as_bytes());
    k
}

fn k_anomaly(id: u64) -> Vec<u8> {
    let mut k = vec![b'x'];
    k.extend_from_slice(&id.to_be_bytes());
    k
}

impl Index {
    /// What the register knows of the box `nim`.
    pub fn box_counters(&self, nim: &str) -> Result<Option<BoxCounters>, StoreError> {
        self.get_json(&k_box(nim))
    }

    /// The C1h counters (TC) of `device`'s open intents but `except`, by id: a
    /// [`DeviceView`]'s `open`.
    pub(super) fn open_counters_of(
        &self,
        device: &str,
        except: Option<IntentId>,
    ) -> Result<Vec<Option<u64>>, StoreError> {
        Ok(self
            .open_intents()?
            .into_iter()
            .filter(|(id, intent)| intent.device == device && Some(*id) != except)
            .map(|(_, intent)| intent.device_tc)
            .collect())
    }

    /// The view of `device` and of the machine `nim` now.
    pub(super) fn device_view(
        &self,
        device: &str,
        nim: &str,
        except: Option<IntentId>,
    ) -> Result<DeviceView, StoreError> {
        Ok(DeviceView {
            open: self.open_counters_of(device, except)?,
            known: self.box_counters(nim)?,
        })
    }

    /// Every fiscal anomaly, oldest first.
    pub fn anomalies(&self) -> Result<Vec<AnomalyRecord>, StoreError> {
        self.tree.scan_prefix(b"x").map(|kv| json(&kv?.1)).collect()
    }

    /// One anomaly.
    pub fn anomaly(&self, id: u64) -> Result<Option<AnomalyRecord>, StoreError> {
        self.get_json(&k_anomaly(id))
    }

    /// An index whose `b` keys do not reflect every record it applied (written by 1.0.0, or by
    /// it since) gets them from the production entries it holds. Nothing else in it changes.
    pub(super) fn complete_boxes(&self) -> Result<(), StoreError> {
        let applied = self.applied_seq()?;
        let marker = self
            .tree
            .get(META_BOXES)?
            .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
            .map(u64::from_be_bytes);
        if self.tree.is_empty() || marker == Some(applied) {
            return Ok(());
        }
        let mut latest: std::collections::BTreeMap<String, BoxCounters> = Default::default();
        for kv in self
            .tree
            .scan_prefix([b'r', super::index::env_byte(Environment::Production)])
        {
            let (k, block) = kv?;
            for held in slots(first_seq(&k)?, &block) {
                let (seq, at) = held?;
                let entry = self.read_entry(&at, Environment::Production, seq)?;
                if let Some(counters) = production_counters(&entry) {
                    let counters = match latest.get(&counters.nim) {
                        Some(known) => known.after(counters),
                        None => counters,
                    };
                    latest.insert(counters.nim.clone(), counters);
                }
            }
        }
        // An acknowledged register behind its box set the box's baseline (never lowered).
        for record in self.anomalies()? {
            let anomaly = &record.anomaly;
            if record.acknowledged.is_none() || anomaly.kind != FiscalAnomalyKind::RegisterBehind {
                continue;
            }
            let known = latest
                .entry(anomaly.nim.clone())
                .or_insert_with(|| anomaly.known.clone());
            if known.highest() < anomaly.seen_tc {
                known.tc = anomaly.seen_tc;
                known.highest_tc = 0;
            }
        }
        let mut batch = Batch::default();
        let boxes = latest.len();
        for counters in latest.into_values() {
            batch.insert(k_box(&counters.nim), serde_json::to_vec(&counters)?);
        }
        batch.insert(META_BOXES, &applied.to_be_bytes()[..]);
        self.tree.apply_batch(batch)?;
        tracing::info!(
            boxes,
            "register: each box's last counters indexed (first open by this release)"
        );
        Ok(())
    }
}

impl Staged<'_> {
    /// The effects of `record` on the keys of this module, staged.
    pub(super) fn apply_boxes(&mut self, record: &Record) -> Result<(), StoreError> {
        match &record.event {
            Event::Certified(entry) => {
                if let Some(counters) = production_counters(entry) {
                    let key = k_box(&counters.nim);
                    let counters = match self.staged_box(&key)? {
                        Some(known) => known.after(counters),
                        None => counters,
                    };
                    self.boxes.insert(key, counters);
                }
            }
            Event::FiscalAnomaly(anomaly) => {
                let stored = AnomalyRecord {
                    id: record.seq,
                    detected_at: record.at,
                    anomaly: anomaly.clone(),
                    acknowledged: None,
                };
                self.insert(k_anomaly(record.seq), serde_json::to_vec(&stored)?);
            }
            Event::FiscalAnomalyAcknowledged {
                anomaly,
                by,
                note,
                numbers,
                rns,
            } => {
                let mut stored: AnomalyRecord =
                    self.get_json(&k_anomaly(*anomaly))?.ok_or_else(|| {
                        StoreError::damaged(
                            super::error::DamageAt::Seq(record.seq),
                            format!("acknowledgement of unknown fiscal anomaly {anomaly}"),
                        )
                    })?;
                stored.acknowledged = Some(AnomalyAck {
                    by: by.clone(),
                    note: note.clone(),
                    at: record.at,
                    numbers: numbers.clone(),
                    rns: rns.clone(),
                });
                self.insert(k_anomaly(*anomaly), serde_json::to_vec(&stored)?);
                match stored.anomaly.kind {
                    FiscalAnomalyKind::RegisterBehind => {
                        self.acknowledged_baseline(&stored.anomaly)?
                    }
                    // A box whose counter went back, understood: its counters start again;
                    // the highest number of its old memory is no longer a baseline.
                    FiscalAnomalyKind::CounterWentBack => {
                        self.forget_highest(&stored.anomaly.nim)?
                    }
                    FiscalAnomalyKind::NifChanged => {}
                }
            }
            _ => {}
        }
        // `m:boxes` follows the last record staged: written by `stage_boxes` at the commit.
        Ok(())
    }

    /// The counters of the box at `key` as the staged records leave them.
    fn staged_box(&self, key: &[u8]) -> Result<Option<BoxCounters>, StoreError> {
        match self.boxes.get(key) {
            Some(counters) => Ok(Some(counters.clone())),
            None => self.get_json(key),
        }
    }

    /// Before a commit: each box's counters changed by the staged records, and `m:boxes` at
    /// the last record staged, into the writes.
    pub(super) fn stage_boxes(&mut self) -> Result<(), StoreError> {
        for (key, counters) in std::mem::take(&mut self.boxes) {
            self.insert(key, serde_json::to_vec(&counters)?);
        }
        if self.last_hash.is_some() {
            self.insert(META_BOXES.to_vec(), &self.applied.to_be_bytes()[..]);
        }
        Ok(())
    }
}

impl Staged<'_> {
    /// A register behind its box, acknowledged: the box's counter as it said it becomes the
    /// register's baseline for that NIM (its NIF and last entry unchanged), so that the box,
    /// which follows it, is not ahead any more. Never lowers a baseline.
    fn acknowledged_baseline(&mut self, anomaly: &FiscalAnomaly) -> Result<(), StoreError> {
        let key = k_box(&anomaly.nim);
        let current: BoxCounters = self
            .staged_box(&key)?
            .unwrap_or_else(|| anomaly.known.clone());
        if current.highest() < anomaly.seen_tc {
            let baseline = BoxCounters {
                tc: anomaly.seen_tc,
                highest_tc: 0,
                ..current
            };
            self.boxes.insert(key, baseline);
        }
        Ok(())
    }

    fn forget_highest(&mut self, nim: &str) -> Result<(), StoreError> {
        let key = k_box(nim);
        if let Some(current) = self.staged_box(&key)? {
            if current.highest_tc != 0 {
                let reset = BoxCounters {
                    highest_tc: 0,
                    ..current
                };
                self.boxes.insert(key, reset);
            }
        }
        Ok(())
    }
}

/// The counters of a production entry (sandbox boxes are the gateway's own simulators).
pub(super) fn production_counters(entry: &RegisterEntry) -> Option<BoxCounters> {
    (entry.request.environment == Environment::Production)
        .then(|| BoxCounters::of_entry(entry))
        .flatten()
}

impl EmbeddedStore {
    /// What the register knows of the box `nim` (its last production entry).
    pub fn box_counters(&self, nim: &str) -> Result<Option<BoxCounters>, StoreError> {
        self.read(|index| index.box_counters(nim))
    }

    /// Every fiscal anomaly, oldest first.
    pub fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, StoreError> {
        self.read(Index::anomalies)
    }

    /// Journals `anomaly` unless the same one (same box and kind, against the same register
    /// entry) is already journaled and not acknowledged; returns its record and whether it is
    /// new. (A box whose counter went back is seen at its C1h and again at its certification:
    /// one anomaly.)
    pub fn record_fiscal_anomaly(
        &self,
        anomaly: FiscalAnomaly,
    ) -> Result<(AnomalyRecord, bool), StoreError> {
        let same = |known: &AnomalyRecord| {
            known.acknowledged.is_none()
                && known.anomaly.nim == anomaly.nim
                && known.anomaly.kind == anomaly.kind
                && known.anomaly.known.sequence == anomaly.known.sequence
        };
        // Fast path: already journaled (read without the write lock).
        if let Some(known) = self.read(Index::anomalies)?.into_iter().find(|a| same(a)) {
            return Ok((known, false));
        }
        // Checked again under the write lock: the start-up check, an invoice's C1h and the
        // web API's confirmations may find the same anomaly side by side; one is journaled.
        let mut earlier = None;
        let appended = self.append(|index| {
            match index.anomalies()?.into_iter().find(|a| same(a)) {
                Some(known) => {
                    earlier = Some(known);
                    // Nothing to journal: the error only leaves the write lock.
                    Err(StoreError::Invalid(
                        "fiscal anomaly journaled already".into(),
                    ))
                }
                None => Ok((Event::FiscalAnomaly(anomaly.clone()), ())),
            }
        });
        if let Some(known) = earlier {
            return Ok((known, false));
        }
        let (record, ()) = appended?;
        let stored = self
            .read(|index| index.anomaly(record.seq))?
            .ok_or_else(|| StoreError::Invalid("fiscal anomaly journaled, not indexed".into()))?;
        Ok((stored, true))
    }

    /// Journals that an administrator acknowledged anomaly `id` (for a register behind its
    /// box, with the missing certifications' `numbers`, which the caller checked).
    /// Acknowledging it again journals nothing and returns it as it is.
    pub fn acknowledge_fiscal_anomaly(
        &self,
        id: u64,
        by: &str,
        note: &str,
        numbers: &[u64],
        rns: &[LostInvoice],
    ) -> Result<AnomalyRecord, StoreError> {
        let lookup = |index: &Index| {
            index
                .anomaly(id)?
                .ok_or_else(|| StoreError::Invalid(format!("no fiscal anomaly {id}")))
        };
        let current = self.read(lookup)?;
        if current.acknowledged.is_some() {
            return Ok(current);
        }
        self.append(|index| {
            lookup(index)?;
            Ok((
                Event::FiscalAnomalyAcknowledged {
                    anomaly: id,
                    by: by.to_owned(),
                    note: note.to_owned(),
                    numbers: numbers.to_vec(),
                    rns: rns.to_vec(),
                },
                (),
            ))
        })?;
        self.read(lookup)
    }
}

impl EmbeddedStore {
    /// The counter number under which `device` certified `rn` before its register lost it:
    /// an acknowledged register behind that box named it (its C1h, or the administrator).
    pub fn lost_rn(&self, device: &str, rn: &str) -> Result<Option<u64>, StoreError> {
        let anomalies = self.read(Index::anomalies)?;
        Ok(anomalies
            .iter()
            .filter(|a| a.anomaly.device == device)
            .filter_map(|a| a.acknowledged.as_ref())
            .flat_map(|ack| &ack.rns)
            .find(|lost| lost.rn == rn)
            .map(|lost| lost.number))
    }

    /// What the register knows of every box, by NIM (`restore` prints it).
    pub fn all_box_counters(&self) -> Result<Vec<BoxCounters>, StoreError> {
        self.read(|index| {
            index
                .tree
                .scan_prefix(b"b")
                .map(|kv| json(&kv?.1))
                .collect()
        })
    }
}
