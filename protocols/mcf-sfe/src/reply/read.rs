//! Reading a reply tolerantly: one rule for every reply.
//!
//! - The fields a host needs to certify or to settle an unknown outcome are read strictly: C1h
//!   MID, NIF, TC, FVC, FRC (and, only when a host settles, lastDT, lastType, lastDEF,
//!   lastFN); the rates of C1h one group at a time; 33h MV, the groups' TTC and VAT, MTS; every
//!   field of a 38h `R:`.
//! - A field a host does not need never fails a reply. When it differs from PROTOCOL.md it is
//!   kept as sent and reported as an [`Anomaly`]: the C1h clock, lastAmount and currency
//!   block; every C2h field; the 2Bh key; MCUR; text in an empty reply.
//! - Extra trailing fields are ignored, missing trailing fields a host does not need are
//!   accepted (both reported once as `fields`): C1h from 6 fields (rates from 27, the currency
//!   block from 30), C2h with any count, 33h of boxes with fewer groups (MV, N TTC, N VAT, MTS,
//!   [MCUR]). Not a 38h `R:`: every field is used, so only 7 or 8 fields read (with more,
//!   which one is SIG would be a guess; the outcome is then settled from C1h).
//! - DATA that is not UTF-8 is read as Windows-1252 ([`crate::dialect::decode_text`]).
//! - `R:`, `R :` and no prefix are one thing; `P:` and `P :` too. Only `E:` is a refusal
//!   (nothing else turns a reply into one), and, with [`Dialect::refusal_by_status`], an empty
//!   reply with the refusal status bit.

use crate::command::code;
use crate::dialect::{decode_text, Dialect, LineBreaks};
use crate::fields::{self, DataError};
use crate::types::{parse_enum, DgiLinkState, TaxGroup, TaxpayerKey};
use crate::wire::{Status, StatusFlag};

use super::{
    Certification, CurrencyInfo, DeviceState, GroupRate, Last, LastInvoice, LinkState, Reply,
    Subtotal, TaxpayerValue,
};

/// Something in a reply that differs from PROTOCOL.md but did not stop the reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    /// The field, as PROTOCOL.md names it (`curDate`, `MCUR`, `STA`...), or `fields` (their
    /// count), `prefix`, `DATA` (its encoding, or text where none belongs), `refusal` (a
    /// refusal without `E:`).
    pub field: &'static str,
    /// What was received (unescaped), or the field count.
    pub raw: String,
    /// What PROTOCOL.md describes there.
    pub expected: &'static str,
}

/// A reply read tolerantly, and what was odd in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The reply.
    pub reply: Reply,
    /// What differs from PROTOCOL.md, in reading order.
    pub anomalies: Vec<Anomaly>,
}

/// Field names of C1h's rates, A..P.
pub(super) const RATE_FIELDS: [&str; TaxGroup::COUNT] = [
    "rateA", "rateB", "rateC", "rateD", "rateE", "rateF", "rateG", "rateH", "rateI", "rateJ",
    "rateK", "rateL", "rateM", "rateN", "rateO", "rateP",
];
/// Field names of 33h's TTC per group, A..P.
pub(super) const TTC_FIELDS: [&str; TaxGroup::COUNT] = [
    "MVA", "MVB", "MVC", "MVD", "MVE", "MVF", "MVG", "MVH", "MVI", "MVJ", "MVK", "MVL", "MVM",
    "MVN", "MVO", "MVP",
];
/// Field names of 33h's VAT per group, A..P.
pub(super) const VAT_FIELDS: [&str; TaxGroup::COUNT] = [
    "MTA", "MTB", "MTC", "MTD", "MTE", "MTF", "MTG", "MTH", "MTI", "MTJ", "MTK", "MTL", "MTM",
    "MTN", "MTO", "MTP",
];

struct Reader {
    line_breaks: LineBreaks,
    anomalies: Vec<Anomaly>,
}

impl Reader {
    fn odd(&mut self, field: &'static str, raw: impl Into<String>, expected: &'static str) {
        self.anomalies.push(Anomaly {
            field,
            raw: raw.into(),
            expected,
        });
    }

    fn fields(&self, text: &str) -> Vec<String> {
        fields::split_text(text, self.line_breaks)
    }

    fn count(&mut self, got: usize, expected_count: usize, expected: &'static str) {
        if got != expected_count {
            self.odd("fields", got.to_string(), expected);
        }
    }
}

pub(super) fn read(
    cmd: u8,
    data: &[u8],
    status: Status,
    dialect: &Dialect,
) -> Result<Reading, DataError> {
    let mut reader = Reader {
        line_breaks: dialect.line_breaks,
        anomalies: Vec::new(),
    };
    let (text, not_utf8) = decode_text(data);
    if not_utf8 {
        reader.odd("DATA", excerpt(&text), "UTF-8 text (read as Windows-1252)");
    }
    let reply = read_text(cmd, &text, status, dialect, &mut reader)?;
    Ok(Reading {
        reply,
        anomalies: reader.anomalies,
    })
}

fn read_text(
    cmd: u8,
    text: &str,
    status: Status,
    dialect: &Dialect,
    r: &mut Reader,
) -> Result<Reply, DataError> {
    if let Some(message) = text.strip_prefix("E:") {
        return Ok(Reply::Refused(fields::unescape_with(
            message,
            r.line_breaks,
        )));
    }
    if text.is_empty() && dialect.refusal_by_status && status.has(StatusFlag::CommandRefused) {
        r.odd(
            "refusal",
            "",
            "E:{text}, not an empty reply with the refusal bit",
        );
        return Ok(Reply::Refused(String::new()));
    }
    match cmd {
        code::DEVICE_STATE => device_state(text, r).map(Reply::DeviceState),
        code::LINK_STATE => Ok(Reply::LinkState(link_state(text, r))),
        code::TAXPAYER_FIELD => Ok(Reply::TaxpayerField(taxpayer(text, r))),
        code::SUBTOTAL => subtotal(text, r).map(Reply::Subtotal),
        code::FINALIZE => finalize(text, r),
        code::OPEN_INVOICE | code::SET_CLIENT | code::ITEM | code::PAYMENT | code::COMMENT => {
            if !text.is_empty() {
                r.odd("DATA", excerpt(text), "an empty reply");
            }
            Ok(Reply::Done)
        }
        other => Err(DataError::UnknownCommand(other)),
    }
}

/// The start of a DATA text for an anomaly: enough to recognise it, never a whole reply
/// (which may hold an invoice number or a signature).
fn excerpt(text: &str) -> String {
    const MAX: usize = 24;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}... ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

/// `text` after `letter`, optional spaces and `:`; `None` without that prefix.
fn after_prefix<'a>(text: &'a str, letter: char, r: &mut Reader) -> Option<&'a str> {
    let rest = text.strip_prefix(letter)?;
    let trimmed = rest.trim_start_matches(' ');
    let body = trimmed.strip_prefix(':')?;
    if trimmed.len() != rest.len() {
        let seen = &text[..text.len() - body.len()];
        r.odd("prefix", seen, "R: or P: without a space");
    }
    Some(body)
}

pub(super) fn nif_of_state(data: &[u8], line_breaks: LineBreaks) -> Option<String> {
    let (text, _) = decode_text(data);
    fields::split_text(&text, line_breaks)
        .into_iter()
        .nth(1)
        .filter(|nif| !nif.is_empty())
}

fn device_state(text: &str, r: &mut Reader) -> Result<DeviceState, DataError> {
    let f = r.fields(text);
    if f.len() < 6 {
        return Err(DataError::FieldCount {
            what: "C1h device state",
            expected: "at least 6 (MID, NIF, DT, TC, FVC, FRC)",
            got: f.len(),
        });
    }
    r.count(f.len(), 30, "30 fields (MID .. curDate)");
    if f[0].is_empty() {
        return Err(DataError::BadField {
            field: "MID",
            value: String::new(),
            reason: "the machine id is empty",
        });
    }
    let clock = match fields::parse_datetime("DT", &f[2]) {
        Ok(clock) => Some(clock),
        Err(_) => {
            r.odd("DT", &f[2], "yyyyMMddHHmmss");
            None
        }
    };
    let tc = fields::parse_count("TC", &f[3])?;
    let fvc = fields::parse_count("FVC", &f[4])?;
    let frc = fields::parse_count("FRC", &f[5])?;
    let last = last_invoice(&f, r);
    let rates = (f.len() >= 27).then(|| {
        std::array::from_fn(|i| {
            let text = &f[11 + i];
            if text.is_empty() {
                return GroupRate::NotCharged;
            }
            match fields::parse_decimal(RATE_FIELDS[i], text) {
                Ok(rate)
                    if !rate.is_sign_negative() && rate < rust_decimal::Decimal::ONE_HUNDRED =>
                {
                    GroupRate::Percent(rate)
                }
                _ => {
                    r.odd(RATE_FIELDS[i], text, "a VAT rate in percent, or empty");
                    GroupRate::Unreadable(text.clone())
                }
            }
        })
    });
    let currency = f.get(27..30).and_then(|block| currency(block, r));
    Ok(DeviceState {
        mid: f[0].clone(),
        nif: f[1].clone(),
        clock,
        tc,
        fvc,
        frc,
        last,
        rates,
        currency,
    })
}

/// C1h fields 6-10. Only settling an unknown outcome uses them, so nothing here fails C1h:
/// what cannot be read makes the last invoice [`Last::Unreadable`].
fn last_invoice(f: &[String], r: &mut Reader) -> Last {
    let missing = |what: &str| Last::Unreadable(format!("C1h has {} fields: no {what}", f.len()));
    let Some(code_def) = f.get(8) else {
        return missing("lastDEF (field 8)");
    };
    if f.len() < 10 {
        return missing("lastFN (field 9)");
    }
    if code_def.is_empty() {
        // "No invoice yet" only when the whole block says so: a lastDEF left empty beside a
        // filled lastFN (or date, type) cannot prove that an invoice was not certified.
        if f[6..10].iter().all(String::is_empty) {
            return Last::Nothing;
        }
        r.odd("lastDEF", "", "the codeDEFDGI of the last invoice");
        return Last::Unreadable("lastDEF is empty beside other last-invoice fields".to_owned());
    }
    let rn = &f[9];
    if rn.is_empty() {
        // Without lastFN, "the last invoice is another one" could never be concluded.
        r.odd("lastFN", "", "the FN of the last invoice");
        return Last::Unreadable("lastFN is empty: C1h does not say which invoice".to_owned());
    }
    let at = match fields::parse_datetime("lastDT", &f[6]) {
        Ok(at) => at,
        Err(error) => {
            r.odd("lastDT", &f[6], "yyyyMMddHHmmss");
            return Last::Unreadable(error.to_string());
        }
    };
    let invoice_type = match parse_enum("lastType", &f[7]) {
        Ok(invoice_type) => invoice_type,
        Err(error) => {
            r.odd("lastType", &f[7], "FV, FT, FA, EV, ET or EA");
            return Last::Unreadable(error.to_string());
        }
    };
    let amount = f
        .get(10)
        .and_then(|text| match fields::parse_decimal("lastAmount", text) {
            Ok(amount) => Some(amount),
            Err(_) => {
                r.odd("lastAmount", text, "an amount");
                None
            }
        });
    Last::Invoice(LastInvoice {
        at,
        invoice_type,
        code_def: code_def.clone(),
        rn: rn.clone(),
        amount,
    })
}

/// C1h fields 27-29, kept as sent; `None` when all empty.
fn currency(block: &[String], r: &mut Reader) -> Option<CurrencyInfo> {
    if block.iter().all(String::is_empty) {
        return None;
    }
    let info = CurrencyInfo {
        code: block[0].clone(),
        rate: block[1].clone(),
        date: block[2].clone(),
    };
    if info.code != "USD" {
        r.odd(
            "curCode",
            &info.code,
            "empty, or USD when a USD rate was used",
        );
    }
    if info
        .rate()
        .is_none_or(|rate| rate <= rust_decimal::Decimal::ZERO)
    {
        r.odd("curRate", &info.rate, "the USD rate, or empty");
    }
    if info.date().is_none() {
        r.odd("curDate", &info.date, "yyyyMMdd, or empty");
    }
    Some(info)
}

/// C2h: nothing in it is needed, so it always reads.
fn link_state(text: &str, r: &mut Reader) -> LinkState {
    let f = r.fields(text);
    r.count(f.len(), 5, "5 fields (EC, DC, DT, STA, ER)");
    let mut count = |field: &'static str, i: usize| {
        let text = f.get(i)?;
        match fields::parse_count(field, text) {
            Ok(n) => Some(n),
            Err(_) => {
                r.odd(field, text, "a whole number");
                None
            }
        }
    };
    let sent = count("EC", 0);
    let stored = count("DC", 1);
    let last_contact =
        f.get(2)
            .and_then(|text| match fields::parse_optional_datetime("DT", text) {
                Ok(at) => at,
                Err(_) => {
                    r.odd("DT", text, "yyyyMMddHHmmss, or empty");
                    None
                }
            });
    let state = f.get(3).cloned().unwrap_or_default();
    if !state.is_empty() && state.parse::<DgiLinkState>().is_err() {
        r.odd("STA", &state, "CON, TRA or DIS");
    }
    LinkState {
        sent,
        stored,
        last_contact,
        state,
        error: f.get(4).cloned().unwrap_or_default(),
    }
}

/// 2Bh: `key,value`, or the value alone.
fn taxpayer(text: &str, r: &mut Reader) -> TaxpayerValue {
    let f = r.fields(text);
    if f.len() >= 2 {
        if let Ok(key) = f[0].parse::<TaxpayerKey>() {
            return TaxpayerValue {
                key: Some(key),
                value: f[1..].join(","),
            };
        }
    }
    r.odd("key", text, "key,value");
    TaxpayerValue {
        key: None,
        value: fields::unescape_with(text, r.line_breaks),
    }
}

fn subtotal(text: &str, r: &mut Reader) -> Result<Subtotal, DataError> {
    let f = r.fields(text);
    let n = f.len();
    let (groups, has_mcur) = match n {
        n if n >= 35 => (TaxGroup::COUNT, true),
        n if n >= 4 && n % 2 == 0 => ((n - 2) / 2, false),
        n if n >= 5 => ((n - 3) / 2, true),
        _ => {
            return Err(DataError::FieldCount {
                what: "33h subtotal",
                expected: "35 (MV, 16 TTC, 16 VAT, MTS, MCUR), or MV, N TTC, N VAT, MTS[, MCUR]",
                got: n,
            })
        }
    };
    r.count(n, 35, "35 fields (MV, MVA..MVP, MTA..MTP, MTS, MCUR)");
    let mut group_ttc = [rust_decimal::Decimal::ZERO; TaxGroup::COUNT];
    let mut group_vat = [rust_decimal::Decimal::ZERO; TaxGroup::COUNT];
    for i in 0..groups {
        group_ttc[i] = fields::parse_decimal(TTC_FIELDS[i], &f[1 + i])?;
        group_vat[i] = fields::parse_decimal(VAT_FIELDS[i], &f[1 + groups + i])?;
    }
    let mcur = if has_mcur {
        f[2 + 2 * groups].clone()
    } else {
        String::new()
    };
    if fields::parse_optional_decimal("MCUR", &mcur).is_err() {
        r.odd("MCUR", &mcur, "the USD total, or empty");
    }
    Ok(Subtotal {
        total: fields::parse_decimal("MV", &f[0])?,
        group_ttc,
        group_vat,
        specific_tax: fields::parse_decimal("MTS", &f[1 + 2 * groups])?,
        mcur,
        groups,
    })
}

fn finalize(text: &str, r: &mut Reader) -> Result<Reply, DataError> {
    if let Some(pending) = after_prefix(text, 'P', r) {
        return Ok(Reply::Pending(fields::unescape_with(
            pending,
            r.line_breaks,
        )));
    }
    if text.is_empty() {
        // 38h C (cancel) answers with empty DATA.
        return Ok(Reply::Done);
    }
    let body = after_prefix(text, 'R', r).unwrap_or(text);
    let f = r.fields(body);
    // Every field is used (the security elements), and with more than 8 which one is SIG is
    // a guess: such a reply is unreadable, and the outcome is settled from C1h instead.
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
