//! What the DGI answers: a refusal ([`DgiError`], on a 2xx or a 4xx), the calculation of an
//! invoice request, the security elements of a confirmation, the e-MCF's status with its
//! pending requests, and the VAT rates. Each reader returns the anomalies it noted.

use chrono::{DateTime, NaiveDateTime, Utc};
use rust_decimal::Decimal;

use crate::read::{excerpt, Anomaly, Object, ReplyError};
use crate::GROUPS;

/// A refusal, in the DGI's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DgiError {
    /// `errorCode`, as text (it comes as a number or a string).
    pub code: String,
    /// `errorDesc` (empty when absent).
    pub description: String,
}

impl std::fmt::Display for DgiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DGI error {}: {}", self.code, self.description)
    }
}

/// A reply read: what it says (the value, or the DGI's refusal), and what was odd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read<T> {
    /// The value, or the refusal the reply carried.
    pub outcome: Result<T, DgiError>,
    /// What was odd.
    pub anomalies: Vec<Anomaly>,
}

/// The refusal `object` carries, if any: a non-null `errorCode` other than `0`/empty.
fn refusal(object: &mut Object) -> Option<DgiError> {
    let code = match object.optional_string("errorCode") {
        Ok(Some(code)) => code,
        Ok(None) => return None,
        Err(_) => {
            object.note("errorCode", "neither text nor a number");
            "?".to_owned()
        }
    };
    let code = code.trim().to_owned();
    if code.is_empty() || code == "0" {
        if code == "0" {
            object.note("errorCode", "0 on a reply taken as success");
        }
        return None;
    }
    let description = object
        .optional_string("errorDesc")
        .ok()
        .flatten()
        .unwrap_or_default();
    Some(DgiError { code, description })
}

/// The refusal in any body (a 4xx's), or `None` when it carries none or is not JSON.
pub fn refusal_in(body: &[u8]) -> Option<DgiError> {
    refusal(&mut Object::parse(body).ok()?)
}

fn read<T>(
    body: &[u8],
    value: impl FnOnce(&mut Object) -> Result<T, ReplyError>,
) -> Result<Read<T>, ReplyError> {
    let mut object = Object::parse(body)?;
    let outcome = match refusal(&mut object) {
        Some(error) => Err(error),
        None => Ok(value(&mut object)?),
    };
    Ok(Read {
        outcome,
        anomalies: object.into_anomalies(),
    })
}

/// Field names of one per-group series, `A`..`P`.
type Names = [&'static str; 16];
const RATE: Names = [
    "ta", "tb", "tc", "td", "te", "tf", "tg", "th", "ti", "tj", "tk", "tl", "tm", "tn", "to", "tp",
];
const TTC: Names = [
    "taa", "tab", "tac", "tad", "tae", "taf", "tag", "tah", "tai", "taj", "tak", "tal", "tam",
    "tan", "tao", "tap",
];
const HT: Names = [
    "haa", "hab", "hac", "had", "hae", "haf", "hag", "hah", "hai", "haj", "hak", "hal", "ham",
    "han", "hao", "hap",
];
const VAT: Names = [
    "vaa", "vab", "vac", "vad", "vae", "vaf", "vag", "vah", "vai", "vaj", "vak", "val", "vam",
    "van", "vao", "vap",
];

/// One figure per VAT group, `A`..`P`; `None` where the reply had none.
pub type PerGroup = [Option<Decimal>; 16];

fn per_group(object: &mut Object, names: &Names) -> Result<PerGroup, ReplyError> {
    let mut out = [None; 16];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = object.optional_amount(name)?;
    }
    Ok(out)
}

/// A per-group series the gateway only reports: unreadable figures are noted, never fatal.
fn informative_per_group(object: &mut Object, names: &Names) -> PerGroup {
    let mut out = [None; 16];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = object.informative_amount(name);
    }
    out
}

/// The DGI's computation of an invoice request (`POST /api/invoice`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calculation {
    /// The pending request's id, for confirm or cancel.
    pub uid: String,
    /// Rates `ta`..`tp` (reported when they differ from `taxGroups`; never decided on, so an
    /// unreadable one is noted and left out).
    pub rates: PerGroup,
    /// TTC per group, `taa`..`tap`.
    pub group_ttc: PerGroup,
    /// HT per group, `haa`..`hap`.
    pub group_ht: PerGroup,
    /// VAT per group, `vaa`..`vap`.
    pub group_vat: PerGroup,
    /// Specific taxes, `ts`.
    pub specific_tax: Option<Decimal>,
    /// `total` (TTC, specific taxes included): sent back with the confirm.
    pub total: Decimal,
    /// `vtotal` (VAT): sent back with the confirm.
    pub vat_total: Decimal,
}

impl Calculation {
    /// Reads a calculation reply.
    pub fn read(body: &[u8]) -> Result<Read<Calculation>, ReplyError> {
        read(body, |object| {
            Ok(Calculation {
                uid: object.string("uid")?,
                rates: informative_per_group(object, &RATE),
                group_ttc: per_group(object, &TTC)?,
                group_ht: per_group(object, &HT)?,
                group_vat: per_group(object, &VAT)?,
                specific_tax: object.optional_amount("ts")?,
                total: object.amount("total")?,
                vat_total: object.amount("vtotal")?,
            })
        })
    }
}

/// The security elements of a confirmation, kept exactly as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// `codeDEFDGI`.
    pub code_def: String,
    /// `qrCode`.
    pub qr_code: String,
    /// `counters`, e.g. `5/8 FV`.
    pub counters: String,
    /// `nim`.
    pub nim: String,
    /// `dateTime`, as sent (its format is not documented).
    pub date_time: String,
}

impl Confirmation {
    /// Reads a confirmation reply.
    pub fn read(body: &[u8]) -> Result<Read<Confirmation>, ReplyError> {
        read(body, |object| {
            Ok(Confirmation {
                code_def: object.string("codeDEFDGI")?,
                qr_code: object.string("qrCode")?,
                counters: object.string("counters")?,
                nim: object.string("nim")?,
                date_time: object.string("dateTime")?,
            })
        })
    }
}

/// A pending request of the e-MCF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// Its uid.
    pub uid: String,
    /// When it was made, as sent.
    pub date: Option<String>,
}

/// The status of the token's e-MCF (`GET /api/invoice`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmcfStatus {
    /// `status`: the e-MCF can certify.
    pub status: Option<bool>,
    /// The taxpayer's NIF (checked against the organizations; unreadable is noted, never fatal).
    pub nif: Option<String>,
    /// The e-MCF's NIM (reported; unreadable is noted, never fatal).
    pub nim: Option<String>,
    /// When the token expires, if it could be read.
    pub token_valid: Option<DateTime<Utc>>,
    /// `serverDateTime`, as sent (reported; unreadable is noted, never fatal).
    pub server_date_time: Option<String>,
    /// The pending requests; `None` when the reply had no list.
    pub pending: Option<Vec<PendingRequest>>,
}

impl EmcfStatus {
    /// Reads a status reply.
    pub fn read(body: &[u8]) -> Result<Read<EmcfStatus>, ReplyError> {
        read(body, |object| {
            let token_valid = match object.informative_string("tokenValid") {
                Some(text) => {
                    let parsed = date_time(&text);
                    if parsed.is_none() {
                        object.note("tokenValid", &format!("not a date: {}", excerpt(&text)));
                    }
                    parsed
                }
                None => None,
            };
            Ok(EmcfStatus {
                status: object.optional_bool("status"),
                nif: object.informative_string("nif"),
                nim: object.informative_string("nim"),
                token_valid,
                server_date_time: object.informative_string("serverDateTime"),
                pending: pending_list(object)?,
            })
        })
    }
}

fn pending_list(object: &mut Object) -> Result<Option<Vec<PendingRequest>>, ReplyError> {
    let Some(list) = object.array("pendingRequestsList")? else {
        return Ok(None);
    };
    let mut pending = Vec::with_capacity(list.len());
    for raw in list {
        let mut entry =
            Object::parse(raw.get().as_bytes()).map_err(|e| ReplyError::Unreadable {
                field: "pendingRequestsList",
                why: e.to_string(),
            })?;
        pending.push(PendingRequest {
            uid: entry.string("uid")?,
            date: entry.optional_string("date").ok().flatten(),
        });
        for anomaly in entry.into_anomalies() {
            object.note(
                &format!("pendingRequestsList.{}", anomaly.field),
                &anomaly.what,
            );
        }
    }
    Ok(Some(pending))
}

/// The VAT rates (`GET /api/info/taxGroups`): a letter -> rate object, keys in any case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaxRates(pub PerGroup);

impl TaxRates {
    /// Reads a rates reply; a key that is not a group letter is noted and left alone.
    pub fn read(body: &[u8]) -> Result<Read<TaxRates>, ReplyError> {
        let mut object = Object::parse(body)?;
        let mut rates = [None; 16];
        let mut notes = Vec::new();
        for (key, raw) in object.entries() {
            let letter = key.chars().next().map(|c| c.to_ascii_uppercase());
            let slot = match (key.chars().count(), letter) {
                (1, Some(letter)) => GROUPS.iter().position(|g| *g == letter),
                _ => None,
            };
            let Some(slot) = slot else {
                notes.push((key.to_owned(), "not a VAT group".to_owned()));
                continue;
            };
            match crate::number::read(raw) {
                Some((rate, _)) => rates[slot] = Some(rate),
                None => {
                    return Err(ReplyError::Unreadable {
                        field: "taxGroups",
                        why: format!("the rate of {key:?} is {}", excerpt(raw.get())),
                    })
                }
            }
        }
        for (field, what) in notes {
            object.note(&field, &what);
        }
        Ok(Read {
            outcome: Ok(TaxRates(rates)),
            anomalies: object.into_anomalies(),
        })
    }
}

/// A date-time of the API: RFC 3339, or without a zone (taken as UTC), with or without
/// fractions of a second.
pub fn date_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    local_date_time(text).map(|at| at.and_utc())
}

/// A date-time without a zone, in the forms seen: `yyyy-MM-ddTHH:mm:ss[.fff]`,
/// `yyyy-MM-dd HH:mm:ss`, `dd/MM/yyyy HH:mm:ss`; an RFC 3339 time is taken in its own zone.
pub fn local_date_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%d/%m/%Y %H:%M:%S",
        "%Y%m%d%H%M%S",
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Some(at);
        }
    }
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|at| at.naive_local())
}

#[cfg(test)]
mod tests;
