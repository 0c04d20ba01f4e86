//! One register entry as an auditor reads it: the entry, the invoice it certified (kept since
//! 1.5.0), its amounts per tax group, and the credit notes that reduce it or the invoice it
//! reduces. What `log show` and the dashboard's invoice page show.

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Admin, AdminError};
use crate::model::{Environment, GroupAmounts, InvoiceContent, RegisterEntry};
use crate::msg;

/// Certification days, inclusive, read in the configured time zone: what a search and an
/// export by period keep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Period {
    /// First day, if any.
    pub from: Option<NaiveDate>,
    /// Last day, if any.
    pub to: Option<NaiveDate>,
}

impl Period {
    /// The days from `from` to `to`; `None` when `from` is after `to`.
    pub fn new(from: Option<NaiveDate>, to: Option<NaiveDate>) -> Option<Period> {
        match (from, to) {
            (Some(from), Some(to)) if from > to => None,
            _ => Some(Period { from, to }),
        }
    }

    /// Whether `entry` was certified on one of these days in `zone`.
    pub fn holds(&self, entry: &RegisterEntry, zone: FixedOffset) -> bool {
        let day = entry.certified_at.with_timezone(&zone).date_naive();
        self.from.is_none_or(|from| day >= from) && self.to.is_none_or(|to| day <= to)
    }
}

/// What the register kept of the invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KeptInvoice {
    /// The invoice as certified (its text hashes to the entry's request digest).
    Kept {
        /// What it said.
        invoice: Box<InvoiceContent>,
    },
    /// Certified by 1.4.0 or before: only the request digest was kept.
    NotKept,
    /// Kept, but it cannot be shown as the certified invoice (see `log verify`).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// Another entry, named from this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryLink {
    /// Its sequence in the same register.
    pub sequence: u64,
    /// Its invoice number.
    pub rn: String,
    /// Its type.
    pub invoice_type: String,
    /// Its total TTC.
    pub total: Decimal,
    /// Its codeDEFDGI.
    pub code_def: String,
    /// When it was certified.
    pub certified_at: DateTime<Utc>,
}

impl EntryLink {
    fn of(entry: &RegisterEntry) -> EntryLink {
        EntryLink {
            sequence: entry.sequence,
            rn: entry.request.rn.clone(),
            invoice_type: entry.request.invoice_type.clone(),
            total: entry.request.totals.total,
            code_def: entry.security.code_def.clone(),
            certified_at: entry.certified_at,
        }
    }
}

/// One entry with what it certified and its links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvoiceRecord {
    /// The register entry, exactly as journaled.
    #[serde(flatten)]
    pub entry: RegisterEntry,
    /// The invoice it certified.
    pub certified_invoice: KeptInvoice,
    /// HT, VAT and TTC of each tax group that has any (from the channel's totals).
    pub groups: Vec<GroupAmounts>,
    /// For a credit note: the invoice it names, when this register holds it.
    pub original: Option<EntryLink>,
    /// The credit notes that name this invoice, in register order.
    pub credit_notes: Vec<EntryLink>,
}

/// One line of a JSON export (CLI and dashboard): the entry exactly as journaled, the
/// invoice it certified, its amounts per group.
#[derive(Debug, Serialize)]
pub struct ExportedEntry<'a> {
    /// The entry.
    #[serde(flatten)]
    pub entry: &'a RegisterEntry,
    /// The invoice it certified.
    pub certified_invoice: KeptInvoice,
    /// HT, VAT and TTC per group.
    pub groups: Vec<GroupAmounts>,
}

impl<'a> ExportedEntry<'a> {
    /// The export line of `entry`.
    pub fn of(entry: &'a RegisterEntry) -> ExportedEntry<'a> {
        ExportedEntry {
            entry,
            certified_invoice: kept_invoice(entry),
            groups: entry.request.totals.groups(),
        }
    }
}

/// What the register kept of `entry`'s invoice.
pub fn kept_invoice(entry: &RegisterEntry) -> KeptInvoice {
    match entry.request.content() {
        None => KeptInvoice::NotKept,
        Some(Ok(invoice)) => KeptInvoice::Kept {
            invoice: Box::new(invoice),
        },
        Some(Err(error)) => KeptInvoice::Unreadable {
            reason: error.to_string(),
        },
    }
}

impl Admin {
    /// `entry` with what it certified and its links.
    pub fn invoice_record(&self, entry: RegisterEntry) -> Result<InvoiceRecord, AdminError> {
        let (original, credit_notes) = self.store.credit_links(&entry)?;
        Ok(InvoiceRecord {
            certified_invoice: kept_invoice(&entry),
            groups: entry.request.totals.groups(),
            original: original.as_ref().map(EntryLink::of),
            credit_notes: credit_notes.iter().map(EntryLink::of).collect(),
            entry,
        })
    }

    /// Entry `sequence` of the `environment` register, for an auditor.
    pub fn log_invoice(
        &self,
        environment: Environment,
        sequence: u64,
    ) -> Result<InvoiceRecord, AdminError> {
        let entry = self.log_show(environment, sequence)?;
        self.invoice_record(entry)
    }

    /// `org`'s invoice `rn` in the `environment` register, for an auditor.
    pub fn log_invoice_by_rn(
        &self,
        org: &str,
        environment: Environment,
        rn: &str,
    ) -> Result<InvoiceRecord, AdminError> {
        if self.store.organization(org)?.is_none() {
            return Err(AdminError::NotFound(msg!(
                "admin-no-organization",
                id = org
            )));
        }
        let entry = self
            .store
            .entry_by_rn(org, environment, rn)?
            .ok_or_else(|| {
                AdminError::NotFound(msg!(
                    "admin-no-entry-rn",
                    environment = environment.as_str(),
                    rn = rn,
                    org = org
                ))
            })?;
        self.invoice_record(entry)
    }

    /// Entry `sequence` of `org`'s `environment` register, for its dashboard.
    pub fn org_log_invoice(
        &self,
        org: &str,
        environment: Environment,
        sequence: u64,
    ) -> Result<InvoiceRecord, AdminError> {
        let entry = self.org_log_show(org, environment, sequence)?;
        self.invoice_record(entry)
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::Period;
    use crate::store::tests::{certified_entry, intent};

    #[test]
    fn a_period_is_read_in_the_configured_zone_and_refuses_reversed_days() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 3, d);
        assert_eq!(Period::new(day(4), day(3)), None);
        // Certified 2026-03-03 10:00 UTC: still the 3rd at UTC+1, the 4th at UTC+14.
        let entry = certified_entry(1, 1, intent("demo", "F-1"));
        let third = Period::new(day(3), day(3)).expect("period");
        let plus_one = chrono::FixedOffset::east_opt(3600).expect("zone");
        let plus_14 = chrono::FixedOffset::east_opt(14 * 3600).expect("zone");
        assert!(third.holds(&entry, plus_one));
        assert!(!third.holds(&entry, plus_14));
        assert!(Period::default().holds(&entry, plus_14));
    }
}
