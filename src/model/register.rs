//! LogInvoices entries and the intents that precede them.

use chrono::{DateTime, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::invoice_content::{ContentError, InvoiceContent};
use super::key::KeyId;
use super::org::{Environment, OrgId};

/// An intent's id: the journal sequence number of its `intent` record.
pub type IntentId = u64;

/// Written (fsync'd) just before 38h is sent: "this invoice may be finalized on the device".
/// Resolved by exactly one later `certified` or `abandoned` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// Organization.
    pub org: OrgId,
    /// Environment of the key used.
    pub environment: Environment,
    /// The client's invoice number.
    pub rn: String,
    /// Invoice type (`FV`...).
    pub invoice_type: String,
    /// Key used.
    pub key_id: KeyId,
    /// Device it runs on.
    pub device: String,
    /// SHA-256 (hex) of the canonical request: tells a replay from a different invoice.
    pub request_digest: String,
    /// When the request was received.
    pub received_at: DateTime<Utc>,
    /// The device's totals from 33h, sent again with 38h.
    pub totals: DeviceTotals,
    /// Seller NIF and ISF at the time.
    pub nif: String,
    /// Seller ISF.
    pub isf: String,
    /// The client's `Idempotency-Key` header, if it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The box's total counter (TC) in the C1h read before this invoice: settling an unknown
    /// outcome concludes "not finalized" only if the box certified nothing since. Absent from
    /// intents of 1.0.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_tc: Option<u64>,
    /// The channel's own id of this request: for the DGI's web API, the `uid` its calculation
    /// returned (what a confirm or a status call names). Absent for a box, and from intents
    /// of 1.1.0 and before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_ref: Option<String>,
    /// The invoice as it was certified: the canonical form of the validated request
    /// (docs/error-codes.md, "Request digest"), whose SHA-256 is `request_digest`, so that the
    /// register alone says what the invoice said. Read it with [`Intent::content`]. Absent
    /// from intents of 1.4.0 and before (they kept the digest only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoice: Option<String>,
}

impl Intent {
    /// Whether it is a credit note (FA, EA).
    pub fn is_credit_note(&self) -> bool {
        super::invoice_content::is_credit_note_type(&self.invoice_type)
    }

    /// What the kept invoice says: `None` when this intent kept no content (1.4.0 and
    /// before), else the content read back, or why it cannot be trusted.
    pub fn content(&self) -> Option<Result<InvoiceContent, ContentError>> {
        self.invoice
            .as_deref()
            .map(|text| InvoiceContent::read(text, &self.request_digest))
    }
}

/// What an `Idempotency-Key` is bound to: the request it first came with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdempotencyBinding {
    /// The intent that carried it.
    pub intent: IntentId,
    /// That request's invoice number.
    pub rn: String,
    /// That request's digest.
    pub request_digest: String,
}

/// The device's totals of one invoice (from its 33h subtotal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceTotals {
    /// Total TTC (MV).
    pub total: Decimal,
    /// Total VAT.
    pub vat: Decimal,
    /// TTC per tax group that has any, keyed by letter.
    pub group_ttc: Vec<(char, Decimal)>,
    /// VAT per tax group that has any.
    pub group_vat: Vec<(char, Decimal)>,
    /// Specific taxes.
    pub specific_tax: Decimal,
    /// USD equivalent, if the invoice had a USD rate: its total at that rate, rounded to the
    /// cent (PROTOCOL.md §8; the box's MCUR when the gateway could not compute it).
    pub usd_equivalent: Option<Decimal>,
    /// MCUR exactly as the box sent it in 33h, when it sent one (information: some boxes send
    /// `0.00` for a CDF invoice, or for every invoice). Absent from entries of 1.0.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcur: Option<String>,
}

/// The currency of every amount a channel computes (the DRC's fiscal currency): totals,
/// groups and specific taxes are in it, whatever the invoice's `curCode`.
pub const FISCAL_CURRENCY: &str = "CDF";

/// One tax group's amounts of an invoice: HT, VAT and TTC (HT = TTC - VAT, the device's
/// own split; specific taxes are outside every group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupAmounts {
    /// The group's letter.
    pub group: char,
    /// Amount before VAT.
    pub ht: Decimal,
    /// VAT.
    pub vat: Decimal,
    /// Amount with VAT.
    pub ttc: Decimal,
}

impl DeviceTotals {
    /// The amounts of each group that has any, in letter order.
    pub fn groups(&self) -> Vec<GroupAmounts> {
        let mut letters: Vec<char> = self
            .group_ttc
            .iter()
            .chain(&self.group_vat)
            .map(|(g, _)| *g)
            .collect();
        letters.sort_unstable();
        letters.dedup();
        let find = |list: &[(char, Decimal)], g: char| {
            list.iter()
                .find(|(l, _)| *l == g)
                .map_or(Decimal::ZERO, |(_, v)| *v)
        };
        letters
            .into_iter()
            .map(|group| {
                let (ttc, vat) = (find(&self.group_ttc, group), find(&self.group_vat, group));
                GroupAmounts {
                    group,
                    ht: ttc.saturating_sub(vat),
                    vat,
                    ttc,
                }
            })
            .collect()
    }

    /// Total before VAT and specific taxes: TTC - VAT - specific taxes.
    pub fn ht(&self) -> Decimal {
        self.total
            .saturating_sub(self.vat)
            .saturating_sub(self.specific_tax)
    }
}

/// The security elements a certification returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityElements {
    /// The signature (SIG).
    #[serde(rename = "codeDEFDGI")]
    pub code_def: String,
    /// `RDCDEF01;{MID};{SIG};{NIF};{DT}`.
    #[serde(rename = "qrCode")]
    pub qr_code: String,
    /// `"{FC}/{TC} {FT}"`.
    pub counters: String,
    /// Machine id.
    pub nim: String,
    /// Device date-time of certification.
    #[serde(rename = "dateTime")]
    pub date_time: NaiveDateTime,
    /// `dateTime` exactly as the channel sent it, when its text differs from the form above
    /// (the DGI's web API: its format is not documented). Absent from entries of 1.1.0.
    #[serde(
        rename = "dateTimeAsSent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub date_time_as_sent: Option<String>,
}

/// One LogInvoices entry: an invoice the device certified. Immutable once journaled. Read
/// back through `entry_wire.rs` (the flattened request without serde's intermediate copy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "super::entry_wire::EntryWire")]
pub struct RegisterEntry {
    /// Position in the register of its environment: 1, 2, 3... with no gap.
    pub sequence: u64,
    /// The intent it resolves.
    pub intent: IntentId,
    /// Organization, environment, rn, type, key, device, digest, received time, totals, NIF, ISF.
    #[serde(flatten)]
    pub request: Intent,
    /// When the gateway recorded it (UTC).
    pub certified_at: DateTime<Utc>,
    /// What the device returned.
    pub security: SecurityElements,
    /// How it was learnt: `finalize` (38h reply) or `reconciled` (C1h after an unknown outcome).
    pub source: String,
    /// The quota year it counts in (calendar year of the certification in the configured time
    /// zone); counted against the organization's quota for Production entries only.
    pub quota_year: i32,
}
