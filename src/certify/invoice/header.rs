//! Header rules: rn, type, mode, seller ids, currency, credit-note reference, operator, client,
//! comment lines.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

use super::{
    code, quoted, Client, Comment, CommentLine, CreditReference, InvoiceType, PriceMode,
    ReferenceType, Seller, UsdRate, ValidationError, MAX_AMOUNT, MAX_TYPE_DESC,
};
use crate::certify::invoice::request::{InvoiceRequest, COMMENT_FIELDS};
use crate::msg;

/// Length of a codeDEFDGI (docs/design.md §6).
pub(super) const REFERENCE_LEN: usize = 24;

/// Longest `rn`, in bytes (printable ASCII): the box's invoice number (FN) field, the
/// narrowest channel's (`certify/box_channel/commands/translate.rs` checks the two agree).
pub const MAX_RN_LEN: usize = 24;

/// The characters `rn` and `reference` may not hold, `, & < > ^`: the box's protocol escapes
/// them, and an invoice number must read the same on every channel and in every register.
pub fn is_reserved(c: char) -> bool {
    matches!(c, ',' | '&' | '<' | '>' | '^')
}

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
            msg!("err-rn-empty"),
        ));
    }
    let invalid = |message| ValidationError::at(code::RN_INVALID, "rn", message);
    if rn.len() > MAX_RN_LEN {
        return Err(invalid(msg!(
            "err-rn-too-long",
            rn = quoted(rn),
            max = MAX_RN_LEN
        )));
    }
    if let Some(c) = rn
        .chars()
        .find(|&c| !(c.is_ascii_graphic() || c == ' ') || is_reserved(c))
    {
        return Err(invalid(msg!(
            "err-rn-character",
            rn = quoted(rn),
            char = format!("{c:?}")
        )));
    }
    if rn.trim_matches('.').is_empty() {
        // `.` and `..` are path segments that HTTP clients remove: GET /Invoice/{rn} could
        // never reach such an invoice.
        return Err(invalid(msg!("err-rn-dots", rn = quoted(rn))));
    }
    Ok(rn.to_owned())
}

pub(super) fn invoice_type(request: &InvoiceRequest) -> Result<InvoiceType, ValidationError> {
    let text = given(&request.invoice_type).ok_or_else(|| ValidationError::missing("type"))?;
    InvoiceType::from_text(text).ok_or_else(|| {
        ValidationError::at(
            code::TYPE_INVALID,
            "type",
            msg!("err-type-invalid", value = quoted(text)),
        )
    })
}

pub(super) fn price_mode(request: &InvoiceRequest) -> Result<PriceMode, ValidationError> {
    let text = given(&request.mode).ok_or_else(|| ValidationError::missing("mode"))?;
    PriceMode::from_text(text).ok_or_else(|| {
        ValidationError::at(
            code::MODE_INVALID,
            "mode",
            msg!("err-mode-invalid", value = quoted(text)),
        )
    })
}

/// `nif` and `isF` are optional; when sent (not empty) they must be the seller's.
pub(super) fn seller_ids(request: &InvoiceRequest, seller: &Seller) -> Result<(), ValidationError> {
    if let Some(nif) = given(&request.nif).filter(|n| *n != seller.nif) {
        return Err(ValidationError::at(
            code::NIF_MISMATCH,
            "nif",
            msg!("err-nif-mismatch", value = quoted(nif)),
        ));
    }
    if let Some(isf) = given(&request.isf).filter(|i| *i != seller.isf) {
        return Err(ValidationError::at(
            code::ISF_MISMATCH,
            "isF",
            msg!("err-isf-mismatch", value = quoted(isf)),
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
                    msg!("err-cur-date-invalid", value = quoted(text)),
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
                    msg!("err-cdf-rate", rate = rate),
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
                    ValidationError::at(code::USD_RATE_INVALID, "curRate", msg!("err-usd-rate"))
                })?;
            let date = date.ok_or_else(|| {
                ValidationError::at(
                    code::CUR_DATE_INVALID,
                    "curDate",
                    msg!("err-usd-date-missing"),
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
            msg!(
                "err-currency-invalid",
                field = "curCode",
                value = quoted(other)
            ),
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
            msg!(
                "err-reference-not-allowed",
                field = field,
                value = quoted(value),
                invoice_type = invoice_type.to_string()
            ),
        ));
    }
    let reference = reference.ok_or_else(|| {
        ValidationError::at(
            code::REFERENCE_MISSING,
            "reference",
            msg!(
                "err-reference-missing",
                invoice_type = invoice_type.to_string()
            ),
        )
    })?;
    // Capital letters only: a codeDEFDGI is issued in capitals, and the register finds an
    // original (and counts its credit notes, code 180) by its exact code, so a lower-case
    // copy would pass as another invoice's.
    let wire_safe = |c: char| c.is_ascii_graphic() && !is_reserved(c) && !c.is_ascii_lowercase();
    if reference.len() != REFERENCE_LEN || !reference.chars().all(wire_safe) {
        return Err(ValidationError::at(
            code::REFERENCE_INVALID,
            "reference",
            msg!(
                "err-reference-invalid",
                value = quoted(reference),
                length = REFERENCE_LEN
            ),
        ));
    }
    let kind = match kind {
        None => ReferenceType::Cor,
        Some(text) => ReferenceType::from_text(text).ok_or_else(|| {
            ValidationError::at(
                code::REFERENCE_TYPE_INVALID,
                "referenceType",
                msg!("err-reference-type-invalid", value = quoted(text)),
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
            msg!("err-operator-name-empty"),
        ));
    }
    Ok((operator.id.clone().unwrap_or_default(), name.to_owned()))
}

/// The client (all empty without `client`) and `typeDesc`.
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
            msg!(
                "err-type-desc-too-long",
                length = desc.len(),
                max = MAX_TYPE_DESC
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

/// `cmta`..`cmth`: the non-empty ones, as lines A..H. Their length is checked by the wire.
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
