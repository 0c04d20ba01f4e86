//! Typed device -> host reply DATA.
//!
//! A reply DATA starting `E:` is a refusal with the device's text, whatever the command.
//! 38h also answers `P:` (still working: ask again) or `R:` with the security elements;
//! older firmware omits `R:` and/or the FN field, and both forms are accepted.
//!
//! Real boxes differ from PROTOCOL.md in the fields a host does not need (field counts, the
//! currency block, MCUR, C2h and 2Bh layouts, text encodings): [`Reply::read`] reads those
//! tolerantly and reports what it found odd (`reply/read.rs`); the types keep such fields as
//! the box sent them.

mod read;

use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

use crate::command::FinalizeTotals;
use crate::dialect::Dialect;
use crate::fields::{self, DataError, FieldError};
use crate::types::{DgiLinkState, InvoiceType, TaxGroup, TaxpayerKey};
use crate::wire::{Status, MAX_REPLY_DATA};

pub use read::{Anomaly, Reading};

/// The last finalized invoice, as C1h reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastInvoice {
    /// When it was finalized (device clock).
    pub at: NaiveDateTime,
    /// Its type.
    pub invoice_type: InvoiceType,
    /// Its codeDEFDGI.
    pub code_def: String,
    /// Its FN (the client's `rn`).
    pub rn: String,
    /// Its total; `None` when the box does not report it (a 10-field C1h) or it is unreadable.
    pub amount: Option<Decimal>,
}

/// What C1h says of the last finalized invoice (used only to settle an unknown outcome).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Last {
    /// None finalized yet: lastDT, lastType, lastDEF and lastFN are all empty.
    Nothing,
    /// The last finalized invoice.
    Invoice(LastInvoice),
    /// The box reports one, but a field that settling needs (lastDT, lastType, lastDEF,
    /// lastFN) is missing, empty beside the others, or cannot be read: nothing can be
    /// concluded from it.
    Unreadable(String),
}

impl Last {
    /// The invoice, when it is known.
    pub fn invoice(&self) -> Option<&LastInvoice> {
        match self {
            Last::Invoice(last) => Some(last),
            Last::Nothing | Last::Unreadable(_) => None,
        }
    }
}

/// One group's VAT rate as C1h reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupRate {
    /// An empty field: the group charges no VAT.
    NotCharged,
    /// The rate in percent.
    Percent(Decimal),
    /// A field that is not a rate, kept as the box sent it: an invoice using this group
    /// cannot be certified.
    Unreadable(String),
}

impl GroupRate {
    /// `Some(rate)`, `None` for a group without VAT, or the raw text of an unreadable field.
    pub fn percent(&self) -> Result<Option<Decimal>, &str> {
        match self {
            GroupRate::NotCharged => Ok(None),
            GroupRate::Percent(rate) => Ok(Some(*rate)),
            GroupRate::Unreadable(raw) => Err(raw),
        }
    }
}

impl From<Option<Decimal>> for GroupRate {
    fn from(rate: Option<Decimal>) -> Self {
        rate.map_or(GroupRate::NotCharged, GroupRate::Percent)
    }
}

/// The currency block of C1h (curCode, curRate, curDate), kept as the box sent it: the
/// gateway does not use it, and real boxes fill it in several ways (`CDF,-1,`, a USD rate
/// with 2 decimals, nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrencyInfo {
    /// Currency code as sent.
    pub code: String,
    /// Rate as sent.
    pub rate: String,
    /// Date as sent.
    pub date: String,
}

impl CurrencyInfo {
    /// The block PROTOCOL.md describes for a USD rate: `USD`, the rate with at most 4
    /// decimals (trailing zeros dropped), `yyyyMMdd`.
    pub fn usd(rate: Decimal, date: NaiveDate) -> CurrencyInfo {
        CurrencyInfo {
            code: "USD".to_owned(),
            rate: rate.normalize().to_string(),
            date: fields::date(date),
        }
    }

    /// The rate, when it reads as a decimal.
    pub fn rate(&self) -> Option<Decimal> {
        fields::parse_decimal("curRate", &self.rate).ok()
    }

    /// The date, when it reads as `yyyyMMdd`.
    pub fn date(&self) -> Option<NaiveDate> {
        fields::parse_date("curDate", &self.date).ok()
    }
}

/// C1h reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceState {
    /// Machine id (the NIM).
    pub mid: String,
    /// Taxpayer NIF the device is personalized for.
    pub nif: String,
    /// Device clock; `None` when unreadable (the gateway does not need it).
    pub clock: Option<NaiveDateTime>,
    /// Total invoices finalized.
    pub tc: u64,
    /// Sales invoices (FV, FT, EV, ET) finalized.
    pub fvc: u64,
    /// Credit notes (FA, EA) finalized.
    pub frc: u64,
    /// The last finalized invoice.
    pub last: Last,
    /// VAT rates of groups A..P; `None` when the box's C1h does not carry them (fewer than
    /// 27 fields: the host takes them from elsewhere).
    pub rates: Option<[GroupRate; TaxGroup::COUNT]>,
    /// The currency block, `None` when absent or all empty.
    pub currency: Option<CurrencyInfo>,
}

impl DeviceState {
    /// The NIF of a C1h reply that cannot be read as a whole (it is the second field), so
    /// that a host can still tell a box of another taxpayer; `None` when empty or absent.
    pub fn nif_in(data: &[u8], dialect: &Dialect) -> Option<String> {
        read::nif_of_state(data, dialect.line_breaks)
    }

    /// The rate of `group` as reported, `None` when the box reports no rates.
    pub fn rate(&self, group: TaxGroup) -> Option<&GroupRate> {
        self.rates.as_ref().map(|rates| &rates[group.index()])
    }
}

/// C2h reply. Nothing in it is needed to certify; every field is kept as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    /// EC: invoices sent to the DGI server (`None` when unreadable).
    pub sent: Option<u64>,
    /// DC: a count whose meaning differs between firmware (invoices not yet sent, or the
    /// same as C1h's TC); `None` when unreadable.
    pub stored: Option<u64>,
    /// Last contact with the server.
    pub last_contact: Option<NaiveDateTime>,
    /// STA as sent: `CON`, `TRA`, `DIS` (the normal idle state on some firmware), `RES`...
    pub state: String,
    /// Last error text, empty if none.
    pub error: String,
}

impl LinkState {
    /// STA, when it is one of the known codes.
    pub fn known_state(&self) -> Option<DgiLinkState> {
        self.state.parse().ok()
    }
}

/// 2Bh reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxpayerValue {
    /// The key, when the box repeats it (`key,value`); some firmware sends the value alone.
    pub key: Option<TaxpayerKey>,
    /// Its value.
    pub value: String,
}

/// 33h reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtotal {
    /// Total TTC (MV), specific taxes included.
    pub total: Decimal,
    /// TTC per group A..P (MVA..MVP); 0 for a group the reply does not carry.
    pub group_ttc: [Decimal; TaxGroup::COUNT],
    /// VAT per group A..P (MTA..MTP); 0 for a group the reply does not carry.
    pub group_vat: [Decimal; TaxGroup::COUNT],
    /// Specific taxes (MTS).
    pub specific_tax: Decimal,
    /// MCUR (the USD total) exactly as the box sent it; empty when it sent none.
    pub mcur: String,
    /// How many groups (A, B, ...) the reply carries: 16 by PROTOCOL.md; a box with fewer
    /// groups sends MV, its groups' TTC, their VAT, MTS, MCUR.
    pub groups: usize,
}

impl Subtotal {
    /// The names of MVA..MVP, by group index.
    pub const TTC_FIELDS: [&'static str; TaxGroup::COUNT] = read::TTC_FIELDS;
    /// The names of MTA..MTP, by group index.
    pub const VAT_FIELDS: [&'static str; TaxGroup::COUNT] = read::VAT_FIELDS;

    /// Sum of the group VAT amounts (saturating: a hostile reply cannot make it panic, and a
    /// saturated sum never equals what the device computed).
    pub fn vat(&self) -> Decimal {
        self.group_vat
            .iter()
            .fold(Decimal::ZERO, |sum, v| sum.saturating_add(*v))
    }

    /// The totals 38h must repeat to finalize this invoice.
    pub fn finalize_totals(&self) -> FinalizeTotals {
        FinalizeTotals {
            total: self.total,
            vat: self.vat(),
        }
    }

    /// MCUR as a decimal, when it is one.
    pub fn usd_equivalent(&self) -> Option<Decimal> {
        fields::parse_optional_decimal("MCUR", &self.mcur)
            .ok()
            .flatten()
    }
}

/// 38h `R:` reply: the security elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certification {
    /// Counter of this invoice's kind (FVC for sales, FRC for credit notes).
    pub fc: u64,
    /// Total counter.
    pub tc: u64,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// Date-time of certification (device clock).
    pub at: NaiveDateTime,
    /// Machine id (NIM).
    pub mid: String,
    /// Seller NIF.
    pub nif: String,
    /// FN (the client's `rn`); `None` from older firmware.
    pub rn: Option<String>,
    /// The signature: codeDEFDGI.
    pub code_def: String,
}

impl Certification {
    /// The `counters` security element: `"{FC}/{TC} {FT}"`.
    pub fn counters(&self) -> String {
        format!("{}/{} {}", self.fc, self.tc, self.invoice_type)
    }

    /// The `qrCode` security element: `RDCDEF01;{MID};{SIG};{NIF};{DT}`.
    pub fn qr_code(&self) -> String {
        format!(
            "RDCDEF01;{};{};{};{}",
            self.mid,
            self.code_def,
            self.nif,
            fields::datetime(self.at)
        )
    }
}

/// A reply, typed by the command it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// C1h.
    DeviceState(DeviceState),
    /// C2h.
    LinkState(LinkState),
    /// 2Bh.
    TaxpayerField(TaxpayerValue),
    /// 33h.
    Subtotal(Subtotal),
    /// 38h `R:`.
    Certified(Certification),
    /// 38h `P:`: still working, ask again with the same totals.
    Pending(String),
    /// Accepted, nothing to report (C0h, C3h, 31h, 35h, 36h, 38h `C`).
    Done,
    /// `E:` refusal with the device's text.
    Refused(String),
}

impl Reply {
    /// Reads the DATA of a reply to command `cmd` with this crate's reference dialect and a
    /// status without flags, and drops what [`Reply::read`] reports as odd.
    pub fn parse(cmd: u8, data: &[u8]) -> Result<Reply, DataError> {
        read::read(cmd, data, Status::default(), &Dialect::default()).map(|r| r.reply)
    }

    /// Reads a reply tolerantly (see [`read`]): the fields a host needs are read strictly,
    /// every other field is kept as sent and, when it differs from PROTOCOL.md, reported as
    /// an [`Anomaly`].
    pub fn read(
        cmd: u8,
        data: &[u8],
        status: Status,
        dialect: &Dialect,
    ) -> Result<Reading, DataError> {
        read::read(cmd, data, status, dialect)
    }

    /// The DATA of this reply, checked to fit a reply frame.
    pub fn encode(&self, cmd: u8) -> Result<Vec<u8>, FieldError> {
        let text = match self {
            Reply::DeviceState(state) => encode_device_state(state)?,
            Reply::LinkState(link) => encode_link_state(link)?,
            Reply::TaxpayerField(value) => {
                let text = fields::escape("taxpayer value", &value.value)?;
                match value.key {
                    Some(key) => format!("{key},{text}"),
                    None => text,
                }
            }
            Reply::Subtotal(subtotal) => encode_subtotal(subtotal)?,
            Reply::Certified(cert) => format!("R:{}", encode_certification(cert)?),
            Reply::Pending(text) => format!("P:{}", fields::escape("pending", text)?),
            Reply::Done => String::new(),
            Reply::Refused(text) => format!("E:{}", fields::escape("refusal", text)?),
        };
        fields::fit(cmd, text.into_bytes(), MAX_REPLY_DATA)
    }
}

fn encode_device_state(state: &DeviceState) -> Result<String, FieldError> {
    let mut parts = vec![
        fields::escape("MID", &state.mid)?,
        fields::escape("NIF", &state.nif)?,
        state.clock.map(fields::datetime).unwrap_or_default(),
        state.tc.to_string(),
        state.fvc.to_string(),
        state.frc.to_string(),
    ];
    match &state.last {
        Last::Invoice(last) => parts.extend([
            fields::datetime(last.at),
            last.invoice_type.to_string(),
            fields::escape("lastDEF", &last.code_def)?,
            fields::escape("lastFN", &last.rn)?,
            match last.amount {
                Some(amount) => fields::amount("lastAmount", amount)?,
                None => String::new(),
            },
        ]),
        Last::Nothing => parts.extend(std::iter::repeat_n(String::new(), 5)),
        Last::Unreadable(why) => {
            return Err(FieldError::Invalid {
                field: "last invoice",
                reason: format!("an unreadable last invoice cannot be sent: {why}"),
            })
        }
    }
    let Some(rates) = &state.rates else {
        return Ok(parts.join(","));
    };
    for rate in rates {
        parts.push(match rate {
            GroupRate::Percent(rate) => fields::amount("rate", *rate)?,
            GroupRate::NotCharged => String::new(),
            GroupRate::Unreadable(raw) => fields::escape("rate", raw)?,
        });
    }
    match &state.currency {
        Some(cur) => parts.extend([
            fields::escape("curCode", &cur.code)?,
            fields::escape("curRate", &cur.rate)?,
            fields::escape("curDate", &cur.date)?,
        ]),
        None => parts.extend(std::iter::repeat_n(String::new(), 3)),
    }
    Ok(parts.join(","))
}

fn encode_link_state(link: &LinkState) -> Result<String, FieldError> {
    let count = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
    Ok([
        count(link.sent),
        count(link.stored),
        link.last_contact.map(fields::datetime).unwrap_or_default(),
        fields::escape("STA", &link.state)?,
        fields::escape("ER", &link.error)?,
    ]
    .join(","))
}

fn encode_subtotal(subtotal: &Subtotal) -> Result<String, FieldError> {
    let groups = subtotal.groups.min(TaxGroup::COUNT);
    let mut parts = vec![fields::amount("MV", subtotal.total)?];
    for value in subtotal.group_ttc[..groups]
        .iter()
        .chain(&subtotal.group_vat[..groups])
    {
        parts.push(fields::amount("group amount", *value)?);
    }
    parts.push(fields::amount("MTS", subtotal.specific_tax)?);
    parts.push(fields::escape("MCUR", &subtotal.mcur)?);
    Ok(parts.join(","))
}

fn encode_certification(cert: &Certification) -> Result<String, FieldError> {
    let mut parts = vec![
        cert.fc.to_string(),
        cert.tc.to_string(),
        cert.invoice_type.to_string(),
        fields::datetime(cert.at),
        fields::escape("MID", &cert.mid)?,
        fields::escape("NIF", &cert.nif)?,
    ];
    if let Some(rn) = &cert.rn {
        parts.push(fields::escape("FN", rn)?);
    }
    parts.push(fields::escape("SIG", &cert.code_def)?);
    Ok(parts.join(","))
}

#[cfg(test)]
mod tests;
