//! One register entry as an auditor reads it: the entry, the invoice it certified (kept since
//! 1.5.0), its amounts per tax group, and the credit notes that reduce it or the invoice it
//! reduces. What `log show` and the dashboard's invoice page show.

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Admin, AdminError};
use crate::model::{
    DeviceTotals, Environment, GroupAmounts, InvoiceContent, RegisterEntry, FISCAL_CURRENCY,
};
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

/// One line of a JSON export (CLI and dashboard): the entry as journaled, with its amounts as
/// every export writes them ([`exported_totals`]: a credit note's are negative) and its
/// `environment` as the API writes it; the invoice it certified (exactly as certified); its
/// amounts per group (signed likewise); the sign and the currency of those amounts.
#[derive(Debug, Serialize)]
pub struct ExportedEntry {
    /// The entry, its totals signed.
    #[serde(flatten)]
    pub entry: RegisterEntry,
    /// The invoice it certified.
    pub certified_invoice: KeptInvoice,
    /// HT, VAT and TTC per group, signed.
    pub groups: Vec<GroupAmounts>,
    /// -1 for a credit note (its amounts are the device's figures negated), else 1.
    pub amount_sign: i8,
    /// The currency of every amount but the USD equivalent: CDF.
    pub amount_currency: &'static str,
}

impl ExportedEntry {
    /// The export line of `entry`.
    pub fn of(entry: &RegisterEntry) -> ExportedEntry {
        let mut signed = entry.clone();
        signed.request.totals = exported_totals(entry);
        ExportedEntry {
            groups: signed.request.totals.groups(),
            certified_invoice: kept_invoice(entry),
            amount_sign: amount_sign(entry),
            amount_currency: FISCAL_CURRENCY,
            entry: signed,
        }
    }

    /// The line's JSON text (one line), its `environment` as the API writes it.
    pub fn line(&self) -> Result<String, serde_json::Error> {
        let mut value = serde_json::to_value(self)?;
        api_environment(&mut value);
        serde_json::to_string(&value)
    }
}

/// The sign of `entry`'s amounts in the exports: -1 for a credit note (FA, EA), which reduces
/// the turnover, 1 for every other invoice.
pub fn amount_sign(entry: &RegisterEntry) -> i8 {
    if entry.request.is_credit_note() {
        -1
    } else {
        1
    }
}

/// `entry`'s totals as the exports (CSV and JSON) write them: a credit note's total, VAT,
/// groups, specific taxes and USD equivalent negated, so that a sum of the totals of a
/// period is its net turnover; any other invoice's as the device gave them. `mcur` stays the
/// text the box sent. The register and the API keep the device's figures.
pub fn exported_totals(entry: &RegisterEntry) -> DeviceTotals {
    let totals = &entry.request.totals;
    if !entry.request.is_credit_note() {
        return totals.clone();
    }
    // A zero stays 0.00, not -0.00.
    let minus = |v: Decimal| if v.is_zero() { v } else { -v };
    let each = |list: &[(char, Decimal)]| list.iter().map(|(g, v)| (*g, minus(*v))).collect();
    DeviceTotals {
        total: minus(totals.total),
        vat: minus(totals.vat),
        group_ttc: each(&totals.group_ttc),
        group_vat: each(&totals.group_vat),
        specific_tax: minus(totals.specific_tax),
        usd_equivalent: totals.usd_equivalent.map(minus),
        mcur: totals.mcur.clone(),
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

/// `value`, a record or a list of records serialized from the journal's types (register
/// entries, API keys), with each one's `environment` written as the API, the CSV and the
/// dashboard's URLs write it (`production`, `sandbox`) instead of the journal's own spelling
/// (`Production`, `Sandbox`, which the journal keeps): what every JSON the CLI prints and every
/// JSON export says.
pub fn api_environment(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(api_environment),
        Value::Object(fields) => {
            let env = fields
                .get("environment")
                .and_then(|v| serde_json::from_value::<Environment>(v.clone()).ok());
            if let Some(env) = env {
                fields.insert("environment".into(), Value::from(env.as_str()));
            }
        }
        _ => {}
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
    use rust_decimal_macros::dec;

    use super::{exported_totals, ExportedEntry, Period};
    use crate::store::tests::{certified_entry, intent};

    #[test]
    fn a_credit_note_s_amounts_are_negative_in_exports_and_nothing_else_is() {
        let mut note = intent("demo", "FA-1");
        note.invoice_type = "EA".into();
        note.totals.group_ttc.push(('E', dec!(50.00)));
        note.totals.group_vat.push(('E', dec!(0.00)));
        note.totals.total = dec!(166.00);
        note.totals.usd_equivalent = Some(dec!(0.06));
        note.totals.mcur = Some("0.06".into());
        let entry = certified_entry(2, 5, note);
        let signed = exported_totals(&entry);
        assert_eq!((signed.total, signed.vat), (dec!(-166.00), dec!(-16.00)));
        assert_eq!(
            signed.group_ttc,
            [('B', dec!(-116.00)), ('E', dec!(-50.00))]
        );
        assert_eq!(signed.usd_equivalent, Some(dec!(-0.06)));
        assert_eq!(signed.mcur.as_deref(), Some("0.06"), "as the box sent it");
        let line: serde_json::Value =
            serde_json::from_str(&ExportedEntry::of(&entry).line().expect("JSON")).expect("JSON");
        assert_eq!(line["totals"]["total"], "-166.00");
        assert_eq!(line["groups"][1]["ttc"], "-50.00");
        assert_eq!(line["groups"][1]["vat"], "0.00", "a zero stays 0.00");
        assert_eq!(line["groups"][0]["ht"], "-100.00");
        assert_eq!(
            (line["amount_sign"].clone(), line["amount_currency"].clone()),
            (serde_json::json!(-1), serde_json::json!("CDF"))
        );
        assert_eq!(line["environment"], "production");
        // The register's entry is untouched; a sale is exported as the device gave it.
        assert_eq!(entry.request.totals.total, dec!(166.00));
        let sale = certified_entry(1, 4, intent("demo", "FV-1"));
        assert_eq!(exported_totals(&sale), sale.request.totals);
    }

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
