//! Header rules: rn, type, mode, seller ids, currency, credit-note reference, operator, client,
//! comment lines.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use mcf_sfe::command::{check_rn, Client, Comment, CreditReference, UsdRate};
use mcf_sfe::fields::is_escaped;
use mcf_sfe::types::{CommentLine, InvoiceType, PriceMode, ReferenceType};
use rust_decimal::Decimal;

use super::{code, Seller, ValidationError, MAX_AMOUNT, MAX_TYPE_DESC};
use crate::certify::invoice::request::{InvoiceRequest, COMMENT_FIELDS};

/// Length of a codeDEFDGI (docs/design.md §6).
pub(super) const REFERENCE_LEN: usize = 24;

/// The currency of the invoice, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Currency {
    /// `CDF` (also when `curCode` is absent) or `USD`.
    pub code: String,
    /// USD rate and the calendar date of `curDate`, for USD only.
    pub usd_rate: Option<UsdRate>,
}

/// `Some(text)` unless absent or empty.
pub(super) fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

pub(super) fn rn(request: &InvoiceRequest) -> Result<String, ValidationError> {
    let rn = request.rn.as_deref().unwrap_or_default();
    if rn.trim().is_empty() {
        return Err(ValidationError::at(
            code::RN_EMPTY,
            "rn",
            "the invoice reference (rn) cannot be empty",
        ));
    }
    check_rn(rn).map_err(|e| {
        ValidationError::at(
            code::RN_INVALID,
            "rn",
            format!("rn {rn:?} is not a valid invoice number: {e}"),
        )
    })?;
    if rn.trim_matches('.').is_empty() {
        // `.` and `..` are path segments that HTTP clients remove: GET /Invoice/{rn} could
        // never reach such an invoice.
        return Err(ValidationError::at(
            code::RN_INVALID,
            "rn",
            format!("rn {rn:?} is not a valid invoice number: it must not be only dots"),
        ));
    }
    Ok(rn.to_owned())
}

pub(super) fn invoice_type(request: &InvoiceRequest) -> Result<InvoiceType, ValidationError> {
    let text = given(&request.invoice_type).ok_or_else(|| ValidationError::missing("type"))?;
    text.parse().map_err(|_| {
        ValidationError::at(
            code::TYPE_INVALID,
            "type",
            format!("type {text:?} is not one of FV, FT, FA, EV, ET, EA"),
        )
    })
}

pub(super) fn price_mode(request: &InvoiceRequest) -> Result<PriceMode, ValidationError> {
    let text = given(&request.mode).ok_or_else(|| ValidationError::missing("mode"))?;
    text.parse().map_err(|_| {
        ValidationError::at(
            code::MODE_INVALID,
            "mode",
            format!("mode {text:?} is not ht or ttc"),
        )
    })
}

/// `nif` and `isF` are optional; when sent (not empty) they must be the seller's.
pub(super) fn seller_ids(request: &InvoiceRequest, seller: &Seller) -> Result<(), ValidationError> {
    if let Some(nif) = given(&request.nif).filter(|n| *n != seller.nif) {
        return Err(ValidationError::at(
            code::NIF_MISMATCH,
            "nif",
            format!("nif {nif:?} is not the NIF of this API key's organization; leave it out to use the key's"),
        ));
    }
    if let Some(isf) = given(&request.isf).filter(|i| *i != seller.isf) {
        return Err(ValidationError::at(
            code::ISF_MISMATCH,
            "isF",
            format!("isF {isf:?} is not the ISF of this API key's organization; leave it out to use the key's"),
        ));
    }
    Ok(())
}

pub(super) fn currency(request: &InvoiceRequest) -> Result<Currency, ValidationError> {
    let code = given(&request.cur_code).unwrap_or("CDF");
    let date = given(&request.cur_date)
        .map(|text| {
            iso_date(text).ok_or_else(|| {
                ValidationError::at(
                    code::CUR_DATE_INVALID,
                    "curDate",
                    format!("curDate {text:?} is not an ISO 8601 date (2026-02-28) or date-time (2026-02-28T17:05:06Z)"),
                )
            })
        })
        .transpose()?;
    match code {
        "CDF" => {
            if let Some(rate) = request.cur_rate.filter(|r| *r != -Decimal::ONE) {
                return Err(ValidationError::at(
                    code::CDF_RATE_INVALID,
                    "curRate",
                    format!("a CDF invoice has curRate -1 (or none), not {rate}"),
                ));
            }
            Ok(Currency {
                code: code.to_owned(),
                usd_rate: None,
            })
        }
        "USD" => {
            let rate = request
                .cur_rate
                .filter(|r| *r > Decimal::ZERO && r.round_dp(4) == *r && *r <= MAX_AMOUNT)
                .ok_or_else(|| {
                    ValidationError::at(
                        code::USD_RATE_INVALID,
                        "curRate",
                        "a USD invoice needs curRate, the CDF per USD rate: > 0, at most 4 decimals",
                    )
                })?;
            let date = date.ok_or_else(|| {
                ValidationError::at(
                    code::CUR_DATE_INVALID,
                    "curDate",
                    "a USD invoice needs curDate, the ISO 8601 date of its rate",
                )
            })?;
            Ok(Currency {
                code: code.to_owned(),
                usd_rate: Some(UsdRate { rate, date }),
            })
        }
        other => Err(ValidationError::at(
            code::CURRENCY_INVALID,
            "curCode",
            format!("curCode {other:?} is not CDF or USD"),
        )),
    }
}

/// An ISO 8601 date `YYYY-MM-DD`, or a date-time with or without a zone (`T` separator);
/// a date-time gives its calendar date as written.
pub(super) fn iso_date(text: &str) -> Option<NaiveDate> {
    if text.len() == 10 {
        return NaiveDate::parse_from_str(text, "%Y-%m-%d").ok();
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.date_naive());
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|at| at.date())
}

pub(super) fn reference(
    request: &InvoiceRequest,
    invoice_type: InvoiceType,
) -> Result<Option<CreditReference>, ValidationError> {
    let reference = given(&request.reference);
    let kind = given(&request.reference_type);
    if !invoice_type.is_credit_note() {
        let (field, value) = match (reference, kind) {
            (Some(r), _) => ("reference", r),
            (None, Some(k)) => ("referenceType", k),
            (None, None) => return Ok(None),
        };
        return Err(ValidationError::at(
            code::REFERENCE_NOT_ALLOWED,
            field,
            format!("{field} {value:?} is only for credit notes (FA, EA), not {invoice_type}"),
        ));
    }
    let reference = reference.ok_or_else(|| {
        ValidationError::at(
            code::REFERENCE_MISSING,
            "reference",
            format!("a {invoice_type} needs reference, the codeDEFDGI of the original invoice"),
        )
    })?;
    let wire_safe = |c: char| c.is_ascii_graphic() && !is_escaped(c);
    if reference.len() != REFERENCE_LEN || !reference.chars().all(wire_safe) {
        return Err(ValidationError::at(
            code::REFERENCE_INVALID,
            "reference",
            format!("reference {reference:?} is not a codeDEFDGI: {REFERENCE_LEN} printable ASCII characters, no space and none of , & < > ^"),
        ));
    }
    let kind = match kind {
        None => ReferenceType::Cor,
        Some(text) => text.parse().map_err(|_| {
            ValidationError::at(
                code::REFERENCE_TYPE_INVALID,
                "referenceType",
                format!("referenceType {text:?} is not one of COR, RAN, RAM, RRR"),
            )
        })?,
    };
    Ok(Some(CreditReference {
        kind,
        code_def: reference.to_owned(),
    }))
}

/// `(id, name)`: `operator` is required with a non-blank `name`; `id` may be absent.
pub(super) fn operator(request: &InvoiceRequest) -> Result<(String, String), ValidationError> {
    let operator = request
        .operator
        .as_ref()
        .ok_or_else(|| ValidationError::missing("operator"))?;
    let name = operator.name.as_deref().unwrap_or_default();
    if name.trim().is_empty() {
        return Err(ValidationError::at(
            code::OPERATOR_NAME_EMPTY,
            "operator.name",
            "operator.name cannot be empty",
        ));
    }
    Ok((operator.id.clone().unwrap_or_default(), name.to_owned()))
}

/// The C3h client (all empty without `client`) and `typeDesc`.
pub(super) fn client(
    request: &InvoiceRequest,
) -> Result<(Client, Option<String>), ValidationError> {
    let Some(c) = &request.client else {
        return Ok((Client::default(), None));
    };
    let type_desc = given(&c.type_desc).map(str::to_owned);
    if let Some(desc) = type_desc.as_ref().filter(|d| d.len() > MAX_TYPE_DESC) {
        return Err(ValidationError::at(
            code::TYPE_DESC_TOO_LONG,
            "client.typeDesc",
            format!(
                "client.typeDesc is {} bytes long, at most {MAX_TYPE_DESC} are accepted",
                desc.len()
            ),
        ));
    }
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let client = Client {
        client_type: text(&c.client_type),
        nif: text(&c.nif),
        name: text(&c.name),
        address: text(&c.address),
        contact: text(&c.contact),
        email: text(&c.email),
        rccm: text(&c.rccm),
    };
    Ok((client, type_desc))
}

/// `cmta`..`cmth`: the non-empty ones, as 36h lines A..H. Their length is checked with the
/// frames.
pub(super) fn comments(request: &InvoiceRequest) -> Vec<Comment> {
    debug_assert_eq!(COMMENT_FIELDS.len(), CommentLine::ALL.len());
    request
        .comments
        .iter()
        .zip(CommentLine::ALL)
        .filter_map(|(text, &line)| {
            given(text).map(|t| Comment {
                line,
                text: t.to_owned(),
            })
        })
        .collect()
}
