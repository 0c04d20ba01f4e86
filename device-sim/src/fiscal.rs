//! The fiscal memory: counters and every finalized invoice, persisted as JSON.
//!
//! The file is rewritten atomically and durably on every commit (write `<file>.tmp`, fsync,
//! rename, fsync the directory) before the certification reply exists. The open invoice is
//! never persisted: a power cut loses it, as on a real box. An existing file keeps its NIM
//! and NIF whatever the configuration says (a box keeps its identity) and its counters go on.

mod file;
mod signature;

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, NaiveDateTime};
use mcf_sfe::command::UsdRate;
use mcf_sfe::types::InvoiceType;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::error::SimError;

pub use signature::{code_def, CODE_DEF_LEN};

/// Version of the file layout this simulator writes.
const FORMAT: u32 = 1;

/// One finalized invoice in the fiscal memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiscalRecord {
    /// Total counter of this invoice (TC).
    pub tc: u64,
    /// Counter of its kind (FVC for FV/FT/EV/ET, FRC for FA/EA).
    pub fc: u64,
    /// Invoice type.
    #[serde(rename = "type", with = "invoice_type_text")]
    pub invoice_type: InvoiceType,
    /// The client's invoice number (FN).
    pub rn: String,
    /// When it was finalized (device clock, whole seconds).
    pub at: NaiveDateTime,
    /// Total TTC (MV).
    pub total: Decimal,
    /// Total VAT (MT).
    pub vat: Decimal,
    /// Its signature, codeDEFDGI.
    pub code_def: String,
    /// The original invoice's codeDEFDGI, for FA and EA.
    pub reference: Option<String>,
    /// The USD rate of the invoice, if it had one.
    #[serde(default)]
    pub usd_rate: Option<StoredRate>,
}

/// A USD rate as the fiscal memory stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRate {
    /// CDF per USD.
    pub rate: Decimal,
    /// Date of the rate.
    pub date: NaiveDate,
}

impl From<UsdRate> for StoredRate {
    fn from(usd: UsdRate) -> Self {
        StoredRate {
            rate: usd.rate,
            date: usd.date,
        }
    }
}

/// An invoice the state machine has closed, to be committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvoice {
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// The client's invoice number (FN).
    pub rn: String,
    /// Device clock at finalization.
    pub at: NaiveDateTime,
    /// Total TTC (MV).
    pub total: Decimal,
    /// Total VAT (MT).
    pub vat: Decimal,
    /// The original invoice's codeDEFDGI, for FA and EA.
    pub reference: Option<String>,
    /// The invoice's USD rate, if any.
    pub usd_rate: Option<UsdRate>,
}

/// What the file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FiscalState {
    format: u32,
    nim: String,
    nif: String,
    tc: u64,
    fvc: u64,
    frc: u64,
    /// The USD rate of the last invoice that had one.
    currency: Option<StoredRate>,
    invoices: Vec<FiscalRecord>,
}

/// The fiscal memory of one device.
#[derive(Debug)]
pub struct FiscalMemory {
    state: FiscalState,
    path: Option<PathBuf>,
    capacity: u64,
    /// codeDEFDGI -> position in `state.invoices`.
    by_code: HashMap<String, usize>,
    /// Exclusive lock on `<state file>.lock`, held while this memory is open: two simulators
    /// on one file would both number invoice N and one of them would be lost.
    _lock: Option<fs::File>,
}

impl FiscalMemory {
    /// Loads the fiscal memory from `path`, or creates it there (with `nim` and `nif`) when
    /// the file does not exist; `None` keeps it in memory only.
    pub fn open(
        path: Option<&Path>,
        nim: &str,
        nif: &str,
        capacity: u64,
    ) -> Result<FiscalMemory, SimError> {
        let fresh = FiscalState {
            format: FORMAT,
            nim: nim.to_owned(),
            nif: nif.to_owned(),
            tc: 0,
            fvc: 0,
            frc: 0,
            currency: None,
            invoices: Vec::new(),
        };
        let Some(path) = path else {
            return Ok(FiscalMemory::new(fresh, None, capacity));
        };
        let lock = file::lock(path)?;
        match fs::read(path) {
            Ok(bytes) => {
                let state = file::load(&bytes).map_err(|reason| SimError::CorruptState {
                    path: path.to_owned(),
                    reason,
                })?;
                let mut memory = FiscalMemory::new(state, Some(path.to_owned()), capacity);
                memory._lock = Some(lock);
                Ok(memory)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let mut memory = FiscalMemory::new(fresh, Some(path.to_owned()), capacity);
                memory._lock = Some(lock);
                memory.save()?;
                Ok(memory)
            }
            Err(source) => Err(SimError::StateFile {
                path: path.to_owned(),
                source,
            }),
        }
    }

    fn new(state: FiscalState, path: Option<PathBuf>, capacity: u64) -> FiscalMemory {
        let by_code = state
            .invoices
            .iter()
            .enumerate()
            .map(|(i, r)| (r.code_def.clone(), i))
            .collect();
        FiscalMemory {
            state,
            path,
            capacity,
            by_code,
            _lock: None,
        }
    }

    /// Machine id (NIM).
    pub fn nim(&self) -> &str {
        &self.state.nim
    }

    /// Taxpayer NIF.
    pub fn nif(&self) -> &str {
        &self.state.nif
    }

    /// Total invoices finalized (TC).
    pub fn tc(&self) -> u64 {
        self.state.tc
    }

    /// Sales invoices finalized (FVC: FV, FT, EV, ET).
    pub fn fvc(&self) -> u64 {
        self.state.fvc
    }

    /// Credit notes finalized (FRC: FA, EA).
    pub fn frc(&self) -> u64 {
        self.state.frc
    }

    /// Every finalized invoice, oldest first.
    pub fn invoices(&self) -> &[FiscalRecord] {
        &self.state.invoices
    }

    /// The last finalized invoice.
    pub fn last(&self) -> Option<&FiscalRecord> {
        self.state.invoices.last()
    }

    /// The USD rate of the last finalized invoice that had one.
    pub fn currency(&self) -> Option<StoredRate> {
        self.state.currency
    }

    /// The finalized invoice whose codeDEFDGI is `code_def`.
    pub fn find(&self, code_def: &str) -> Option<&FiscalRecord> {
        self.by_code
            .get(code_def)
            .and_then(|&i| self.state.invoices.get(i))
    }

    /// How many invoices the memory holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// No invoice can be committed any more.
    pub fn is_full(&self) -> bool {
        self.state.tc >= self.capacity
    }

    /// At least 95 % of the capacity is used.
    pub fn is_nearly_full(&self) -> bool {
        u128::from(self.state.tc) * 100 >= u128::from(self.capacity) * 95
    }

    /// The fiscal memory file, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Counts, signs and stores `invoice`, then writes the file durably. On any error the
    /// memory is left exactly as it was and nothing is committed.
    pub fn commit(
        &mut self,
        invoice: NewInvoice,
        signing_key: &str,
    ) -> Result<FiscalRecord, SimError> {
        if self.is_full() {
            return Err(SimError::MemoryFull {
                capacity: self.capacity,
            });
        }
        let credit = invoice.invoice_type.is_credit_note();
        // Neither overflows: fvc, frc <= tc < capacity <= u64::MAX.
        let tc = self.state.tc + 1;
        let fc = 1 + if credit {
            self.state.frc
        } else {
            self.state.fvc
        };
        let code = code_def(signing_key, &self.state.nim, tc, &invoice);
        let record = FiscalRecord {
            tc,
            fc,
            invoice_type: invoice.invoice_type,
            rn: invoice.rn,
            at: invoice.at,
            total: invoice.total,
            vat: invoice.vat,
            code_def: code,
            reference: invoice.reference,
            usd_rate: invoice.usd_rate.map(StoredRate::from),
        };
        let before = (self.state.fvc, self.state.frc, self.state.currency);
        self.state.tc = tc;
        if credit {
            self.state.frc = fc;
        } else {
            self.state.fvc = fc;
        }
        if record.usd_rate.is_some() {
            self.state.currency = record.usd_rate;
        }
        self.state.invoices.push(record.clone());
        if let Err(e) = self.save() {
            self.state.invoices.pop();
            self.state.tc = tc - 1;
            (self.state.fvc, self.state.frc, self.state.currency) = before;
            return Err(e);
        }
        self.by_code
            .insert(record.code_def.clone(), self.state.invoices.len() - 1);
        Ok(record)
    }

    /// Writes the whole memory to its file, atomically and durably.
    ///
    /// Fails, with the file unchanged, unless the new content replaced the old one. Once the
    /// rename is done the file holds the new content, so the memory must follow it: a failure
    /// of the final directory fsync (the rename might not survive a power cut) is logged,
    /// not returned, rather than refusing an invoice the file already holds.
    fn save(&self) -> Result<(), SimError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let bytes = serde_json::to_vec_pretty(&self.state).map_err(|e| SimError::StateFile {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        file::replace(path, &bytes)?;
        if let Err(error) = file::sync_dir(path) {
            tracing::error!(%error, "fiscal memory written but its directory could not be synced");
        }
        Ok(())
    }
}

/// Serializes [`InvoiceType`] as its wire text (`FV`, `FA`...).
mod invoice_type_text {
    use mcf_sfe::types::InvoiceType;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &InvoiceType, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(value.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<InvoiceType, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
