//! Typed device -> host reply DATA.
//!
//! A reply DATA starting `E:` is a refusal with the device's text, whatever the command.
//! 38h also answers `P:` (still working: ask again) or `R:` with the security elements;
//! older firmware omits `R:` and/or the FN field, and both forms are accepted.

use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

use crate::command::{code, FinalizeTotals};
use crate::fields::{self, DataError, FieldError};
use crate::types::{parse_enum, DgiLinkState, InvoiceType, TaxGroup, TaxpayerKey};
use crate::wire::MAX_REPLY_DATA;

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
    /// Its total.
    pub amount: Decimal,
}

/// The currency rate the device last used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrencyInfo {
    /// Currency code.
    pub code: String,
    /// Rate to CDF.
    pub rate: Decimal,
    /// Date of the rate.
    pub date: NaiveDate,
}

/// C1h reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceState {
    /// Machine id (the NIM).
    pub mid: String,
    /// Taxpayer NIF the device is personalized for.
    pub nif: String,
    /// Device clock.
    pub clock: NaiveDateTime,
    /// Total invoices finalized.
    pub tc: u64,
    /// Sales invoices (FV, FT, EV, ET) finalized.
    pub fvc: u64,
    /// Credit notes (FA, EA) finalized.
    pub frc: u64,
    /// The last finalized invoice, if any.
    pub last: Option<LastInvoice>,
    /// VAT rate in percent per group A..P; `None` for a group that charges no VAT.
    pub rates: [Option<Decimal>; TaxGroup::COUNT],
    /// Currency rate, if one was set.
    pub currency: Option<CurrencyInfo>,
}

impl DeviceState {
    /// The rate of `group`, `None` when the group charges no VAT.
    pub fn rate(&self, group: TaxGroup) -> Option<Decimal> {
        self.rates[group.index()]
    }
}

/// C2h reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    /// Invoices sent to the DGI server.
    pub sent: u64,
    /// Invoices stored, not yet sent.
    pub stored: u64,
    /// Last contact with the server.
    pub last_contact: Option<NaiveDateTime>,
    /// Link state.
    pub state: DgiLinkState,
    /// Last error text, empty if none.
    pub error: String,
}

/// 2Bh reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxpayerValue {
    /// The field asked for.
    pub key: TaxpayerKey,
    /// Its value.
    pub value: String,
}

/// 33h reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtotal {
    /// Total TTC (MV), specific taxes included.
    pub total: Decimal,
    /// TTC per group A..P (MVA..MVP).
    pub group_ttc: [Decimal; TaxGroup::COUNT],
    /// VAT per group A..P (MTA..MTP).
    pub group_vat: [Decimal; TaxGroup::COUNT],
    /// Specific taxes (MTS).
    pub specific_tax: Decimal,
    /// Total in USD, when the invoice has a USD rate (MCUR).
    pub usd_equivalent: Option<Decimal>,
}

impl Subtotal {
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
    /// Reads the DATA of a reply to command `cmd`.
    pub fn parse(cmd: u8, data: &[u8]) -> Result<Reply, DataError> {
        let text = std::str::from_utf8(data).map_err(|_| DataError::NotUtf8)?;
        if let Some(message) = text.strip_prefix("E:") {
            return Ok(Reply::Refused(fields::unescape(message)));
        }
        match cmd {
            code::DEVICE_STATE => parse_device_state(data).map(Reply::DeviceState),
            code::LINK_STATE => parse_link_state(data).map(Reply::LinkState),
            code::TAXPAYER_FIELD => parse_taxpayer(data).map(Reply::TaxpayerField),
            code::SUBTOTAL => parse_subtotal(data).map(Reply::Subtotal),
            code::FINALIZE => parse_finalize(text),
            code::OPEN_INVOICE | code::SET_CLIENT | code::ITEM | code::PAYMENT | code::COMMENT => {
                Ok(Reply::Done)
            }
            other => Err(DataError::UnknownCommand(other)),
        }
    }

    /// The DATA of this reply, checked to fit a reply frame.
    pub fn encode(&self, cmd: u8) -> Result<Vec<u8>, FieldError> {
        let text = match self {
            Reply::DeviceState(state) => encode_device_state(state)?,
            Reply::LinkState(link) => encode_link_state(link)?,
            Reply::TaxpayerField(value) => format!(
                "{},{}",
                value.key,
                fields::escape("taxpayer value", &value.value)?
            ),
            Reply::Subtotal(subtotal) => encode_subtotal(subtotal)?,
            Reply::Certified(cert) => format!("R:{}", encode_certification(cert)?),
            Reply::Pending(text) => format!("P:{}", fields::escape("pending", text)?),
            Reply::Done => String::new(),
            Reply::Refused(text) => format!("E:{}", fields::escape("refusal", text)?),
        };
        fields::fit(cmd, text.into_bytes(), MAX_REPLY_DATA)
    }
}

fn parse_device_state(data: &[u8]) -> Result<DeviceState, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("C1h device state", &f, &[30], "30")?;
    let last = if f[8].is_empty() {
        None
    } else {
        Some(LastInvoice {
            at: fields::parse_datetime("lastDT", &f[6])?,
            invoice_type: parse_enum("lastType", &f[7])?,
            code_def: f[8].clone(),
            rn: f[9].clone(),
            amount: fields::parse_decimal("lastAmount", &f[10])?,
        })
    };
    let mut rates = [None; TaxGroup::COUNT];
    for (rate, text) in rates.iter_mut().zip(&f[11..27]) {
        *rate = fields::parse_optional_decimal("rate", text)?;
    }
    let currency = if f[27].is_empty() {
        None
    } else {
        Some(CurrencyInfo {
            code: f[27].clone(),
            rate: fields::parse_decimal("curRate", &f[28])?,
            date: fields::parse_date("curDate", &f[29])?,
        })
    };
    Ok(DeviceState {
        mid: f[0].clone(),
        nif: f[1].clone(),
        clock: fields::parse_datetime("DT", &f[2])?,
        tc: fields::parse_count("TC", &f[3])?,
        fvc: fields::parse_count("FVC", &f[4])?,
        frc: fields::parse_count("FRC", &f[5])?,
        last,
        rates,
        currency,
    })
}

fn encode_device_state(state: &DeviceState) -> Result<String, FieldError> {
    let mut parts = vec![
        fields::escape("MID", &state.mid)?,
        fields::escape("NIF", &state.nif)?,
        fields::datetime(state.clock),
        state.tc.to_string(),
        state.fvc.to_string(),
        state.frc.to_string(),
    ];
    match &state.last {
        Some(last) => parts.extend([
            fields::datetime(last.at),
            last.invoice_type.to_string(),
            fields::escape("lastDEF", &last.code_def)?,
            fields::escape("lastFN", &last.rn)?,
            fields::amount("lastAmount", last.amount)?,
        ]),
        None => parts.extend(std::iter::repeat_n(String::new(), 5)),
    }
    for rate in &state.rates {
        parts.push(match rate {
            Some(rate) => fields::amount("rate", *rate)?,
            None => String::new(),
        });
    }
    match &state.currency {
        Some(cur) => parts.extend([
            fields::escape("curCode", &cur.code)?,
            cur.rate.normalize().to_string(),
            fields::date(cur.date),
        ]),
        None => parts.extend(std::iter::repeat_n(String::new(), 3)),
    }
    Ok(parts.join(","))
}

fn parse_link_state(data: &[u8]) -> Result<LinkState, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("C2h link state", &f, &[5], "5")?;
    Ok(LinkState {
        sent: fields::parse_count("EC", &f[0])?,
        stored: fields::parse_count("DC", &f[1])?,
        last_contact: fields::parse_optional_datetime("DT", &f[2])?,
        state: parse_enum("STA", &f[3])?,
        error: f[4].clone(),
    })
}

fn encode_link_state(link: &LinkState) -> Result<String, FieldError> {
    Ok([
        link.sent.to_string(),
        link.stored.to_string(),
        link.last_contact.map(fields::datetime).unwrap_or_default(),
        link.state.to_string(),
        fields::escape("ER", &link.error)?,
    ]
    .join(","))
}

fn parse_taxpayer(data: &[u8]) -> Result<TaxpayerValue, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("2Bh taxpayer field", &f, &[2], "2")?;
    Ok(TaxpayerValue {
        key: parse_enum("taxpayer key", &f[0])?,
        value: f[1].clone(),
    })
}

fn parse_subtotal(data: &[u8]) -> Result<Subtotal, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("33h subtotal", &f, &[35], "35")?;
    let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
    let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
    for (value, text) in group_ttc.iter_mut().zip(&f[1..17]) {
        *value = fields::parse_decimal("MVx", text)?;
    }
    for (value, text) in group_vat.iter_mut().zip(&f[17..33]) {
        *value = fields::parse_decimal("MTx", text)?;
    }
    Ok(Subtotal {
        total: fields::parse_decimal("MV", &f[0])?,
        group_ttc,
        group_vat,
        specific_tax: fields::parse_decimal("MTS", &f[33])?,
        usd_equivalent: fields::parse_optional_decimal("MCUR", &f[34])?,
    })
}

fn encode_subtotal(subtotal: &Subtotal) -> Result<String, FieldError> {
    let mut parts = vec![fields::amount("MV", subtotal.total)?];
    for value in subtotal.group_ttc.iter().chain(&subtotal.group_vat) {
        parts.push(fields::amount("group amount", *value)?);
    }
    parts.push(fields::amount("MTS", subtotal.specific_tax)?);
    parts.push(match subtotal.usd_equivalent {
        Some(usd) => fields::amount("MCUR", usd)?,
        None => String::new(),
    });
    Ok(parts.join(","))
}

fn parse_finalize(text: &str) -> Result<Reply, DataError> {
    if let Some(pending) = text.strip_prefix("P:") {
        return Ok(Reply::Pending(fields::unescape(pending)));
    }
    if text.is_empty() {
        // 38h C (cancel) answers with empty DATA.
        return Ok(Reply::Done);
    }
    let body = text.strip_prefix("R:").unwrap_or(text);
    let f = fields::split(body.as_bytes())?;
    fields::expect_count("38h certification", &f, &[7, 8], "7 or 8")?;
    let (rn, sig) = if f.len() == 8 {
        (fields::non_empty(f[6].clone()), &f[7])
    } else {
        (None, &f[6])
    };
    if sig.is_empty() {
        return Err(DataError::BadField {
            field: "SIG",
            value: String::new(),
            reason: "the signature is empty",
        });
    }
    Ok(Reply::Certified(Certification {
        fc: fields::parse_count("FC", &f[0])?,
        tc: fields::parse_count("TC", &f[1])?,
        invoice_type: parse_enum("FT", &f[2])?,
        at: fields::parse_datetime("DT", &f[3])?,
        mid: f[4].clone(),
        nif: f[5].clone(),
        rn,
        code_def: sig.clone(),
    }))
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
