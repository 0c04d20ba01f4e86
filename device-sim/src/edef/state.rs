//! What the simulated e-MCF remembers: its pending requests (computed, not yet confirmed or
//! cancelled; they expire), its counters and every invoice it finalized. In memory only: a
//! restart starts over, as a sandbox should.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, NaiveDateTime, Utc};
use mcf_sfe::types::InvoiceType;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use super::compute::Calculation;
use super::dgi_error::DgiError;
use crate::fiscal::{code_def, NewInvoice};

/// Locks `mutex`, going on with the data if a panicking thread poisoned it (every change
/// under these locks is complete before anything can panic).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A computed invoice waiting for its confirmation.
#[derive(Debug, Clone)]
pub(crate) struct PendingRequest {
    /// Its uid (lowercase).
    pub uid: String,
    /// When it was requested.
    pub created_at: DateTime<Utc>,
    /// When it expires.
    expires: Instant,
    /// The DGI's computation.
    pub calculation: Calculation,
}

/// A finalized invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedInvoice {
    /// The uid of its request.
    pub uid: String,
    /// The client's invoice number.
    pub rn: String,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// TTC total, specific taxes included.
    pub total: Decimal,
    /// VAT total.
    pub vat: Decimal,
    /// Its codeDEFDGI.
    pub code_def: String,
    /// `"<FC>/<TC> <type>"`.
    pub counters: String,
    /// The original's codeDEFDGI, for a credit note.
    pub reference: Option<String>,
    /// When it was finalized (DGI clock, whole seconds).
    pub at: NaiveDateTime,
}

/// Who signs: the e-MCF's identity and secret.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signer<'a> {
    /// The e-MCF's NIM.
    pub nim: &'a str,
    /// Secret mixed into every codeDEFDGI.
    pub signing_key: &'a str,
}

/// The e-MCF's memory. Its counters are not stored: the total counter (TC) is how many
/// invoices were finalized, the counter of a type (FC) how many of that type.
#[derive(Debug, Default)]
pub(crate) struct EmcfState {
    pending: Vec<PendingRequest>,
    finalized: Vec<FinalizedInvoice>,
    /// How many uids were handed out.
    uids_issued: u64,
    /// How many requests were refused because the window of pending requests was full.
    refused_full: u64,
}

impl EmcfState {
    /// Forgets the requests that expired before `now`.
    pub(crate) fn purge_expired(&mut self, now: Instant) {
        self.pending.retain(|request| request.expires > now);
    }

    /// Forgets every pending request at once (the `expire_all_pending` fault).
    pub(crate) fn expire_all(&mut self) {
        self.pending.clear();
    }

    /// Counts a request refused because the window was full.
    pub(crate) fn refuse_full(&mut self) {
        self.refused_full += 1;
    }

    /// How many requests were refused because the window was full.
    pub(crate) fn refused_full(&self) -> u64 {
        self.refused_full
    }

    /// The pending requests, oldest first.
    pub(crate) fn pending(&self) -> &[PendingRequest] {
        &self.pending
    }

    /// Every finalized invoice, in order.
    pub(crate) fn finalized(&self) -> &[FinalizedInvoice] {
        &self.finalized
    }

    /// The finalized invoice whose codeDEFDGI is `code`.
    pub(crate) fn original(&self, code: &str) -> Option<&FinalizedInvoice> {
        self.finalized
            .iter()
            .find(|invoice| invoice.code_def == code)
    }

    /// Sum of the finalized credit notes that refer to `code`.
    pub(crate) fn credited(&self, code: &str) -> Decimal {
        self.finalized
            .iter()
            .filter(|invoice| invoice.reference.as_deref() == Some(code))
            .fold(Decimal::ZERO, |sum, invoice| {
                sum.saturating_add(invoice.total)
            })
    }

    /// Makes `calculation` pending until `now + expiry`; returns its new uid.
    pub(crate) fn add_pending(
        &mut self,
        calculation: Calculation,
        now: Instant,
        expiry: Duration,
        salt: &str,
    ) -> String {
        let uid = self.new_uid(salt);
        self.pending.push(PendingRequest {
            uid: uid.clone(),
            created_at: Utc::now(),
            expires: now.checked_add(expiry).unwrap_or(now),
            calculation,
        });
        uid
    }

    /// Removes the pending request `uid` (any case).
    pub(crate) fn cancel(&mut self, uid: &str) -> Result<(), DgiError> {
        let index = self.position(uid)?;
        self.pending.remove(index);
        Ok(())
    }

    /// The computation of the pending request `uid` (any case).
    pub(crate) fn pending_calculation(&self, uid: &str) -> Result<&Calculation, DgiError> {
        let index = self.position(uid)?;
        Ok(&self.pending[index].calculation)
    }

    /// Finalizes the pending request `uid` at `at`: counts it, signs it and remembers it.
    /// The caller has checked the totals.
    pub(crate) fn finalize(
        &mut self,
        uid: &str,
        signer: Signer<'_>,
        at: NaiveDateTime,
    ) -> Result<FinalizedInvoice, DgiError> {
        let index = self.position(uid)?;
        let PendingRequest {
            uid: stored_uid,
            calculation,
            ..
        } = self.pending.remove(index);
        let invoice_type = calculation.invoice_type;
        let total_counter = self.finalized.len() as u64 + 1;
        let type_counter = self
            .finalized
            .iter()
            .filter(|invoice| invoice.invoice_type == invoice_type)
            .count() as u64
            + 1;
        let new_invoice = NewInvoice {
            invoice_type,
            rn: calculation.rn,
            at,
            total: calculation.total,
            vat: calculation.vat_total,
            reference: calculation.reference,
            usd_rate: None,
        };
        let code = code_def(signer.signing_key, signer.nim, total_counter, &new_invoice);
        let invoice = FinalizedInvoice {
            uid: stored_uid,
            rn: new_invoice.rn,
            invoice_type,
            total: new_invoice.total,
            vat: new_invoice.vat,
            code_def: code,
            counters: format!("{type_counter}/{total_counter} {invoice_type}"),
            reference: new_invoice.reference,
            at,
        };
        self.finalized.push(invoice.clone());
        Ok(invoice)
    }

    /// Where the pending request `uid` is; error 20 when it is not pending.
    fn position(&self, uid: &str) -> Result<usize, DgiError> {
        self.pending
            .iter()
            .position(|request| request.uid.eq_ignore_ascii_case(uid))
            .ok_or_else(|| DgiError::NotPending(uid.to_owned()))
    }

    /// A new uuid-like uid (`8-4-4-4-12` lowercase hex, version 4 layout), unique within
    /// this simulator and unlikely to repeat across runs.
    fn new_uid(&mut self, salt: &str) -> String {
        self.uids_issued += 1;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let digest = Sha256::digest(format!("{salt}|{}|{nanos}", self.uids_issued));
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        bytes[6] = (bytes[6] & 0x0F) | 0x40;
        bytes[8] = (bytes[8] & 0x3F) | 0x80;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }
}

#[cfg(test)]
mod tests;
