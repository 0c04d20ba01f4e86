//! C3h (the client of the next invoice) and C0h (open an invoice): their types and DATA.

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::check_rn;
use crate::fields::{self, DataError, FieldError};
use crate::types::{parse_enum, InvoiceType, PriceMode, ReferenceType};

/// C3h: the client of the next invoice. Empty strings mean "none".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// Client type code (e.g. `PM`).
    pub client_type: String,
    /// Client NIF.
    pub nif: String,
    /// Name.
    pub name: String,
    /// Postal address.
    pub address: String,
    /// Telephone or other contact.
    pub contact: String,
    /// E-mail.
    pub email: String,
    /// RCCM (trade register number).
    pub rccm: String,
}

/// The original invoice a credit note (FA, EA) refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditReference {
    /// Why.
    pub kind: ReferenceType,
    /// The original invoice's codeDEFDGI.
    pub code_def: String,
}

/// USD exchange rate and its date, for invoices whose source is in USD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsdRate {
    /// CDF per USD.
    pub rate: Decimal,
    /// Date of the rate.
    pub date: NaiveDate,
}

/// C0h: open an invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenInvoice {
    /// Operator id.
    pub operator_id: String,
    /// Operator name.
    pub operator_name: String,
    /// Seller NIF.
    pub nif: String,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// Original invoice; required for FA and EA, refused otherwise.
    pub reference: Option<CreditReference>,
    /// Price mode of the items.
    pub price_mode: PriceMode,
    /// ISF identifier.
    pub isf: String,
    /// The client's invoice number (`rn`), non-empty.
    pub rn: String,
    /// USD rate, when the invoice's source currency is USD.
    pub usd_rate: Option<UsdRate>,
}

pub(super) fn encode_client(client: &Client) -> Result<String, FieldError> {
    let parts = [
        fields::escape("client type", &client.client_type)?,
        fields::escape("client nif", &client.nif)?,
        fields::escape("client name", &client.name)?,
        fields::escape("client address", &client.address)?,
        fields::escape("client contact", &client.contact)?,
        fields::escape("client email", &client.email)?,
        fields::escape("client rccm", &client.rccm)?,
    ];
    Ok(parts.join(","))
}

pub(super) fn parse_client(data: &[u8]) -> Result<Client, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("C3h client", &f, &[7], "7")?;
    let mut f = f.into_iter();
    let mut next = || f.next().unwrap_or_default();
    Ok(Client {
        client_type: next(),
        nif: next(),
        name: next(),
        address: next(),
        contact: next(),
        email: next(),
        rccm: next(),
    })
}

pub(super) fn encode_open(open: &OpenInvoice) -> Result<String, FieldError> {
    check_rn(&open.rn)?;
    let mut parts = vec![
        fields::escape("operator id", &open.operator_id)?,
        fields::escape("operator name", &open.operator_name)?,
        fields::escape("nif", &open.nif)?,
        open.invoice_type.to_string(),
    ];
    match (&open.reference, open.invoice_type.is_credit_note()) {
        (Some(reference), true) => {
            parts.push(reference.kind.to_string());
            parts.push(fields::escape("reference", &reference.code_def)?);
        }
        (None, false) => {}
        (None, true) => {
            return Err(FieldError::Invalid {
                field: "reference",
                reason: format!("a {} needs the original codeDEFDGI", open.invoice_type),
            })
        }
        (Some(_), false) => {
            return Err(FieldError::Invalid {
                field: "reference",
                reason: format!(
                    "only FA and EA carry a reference, not {}",
                    open.invoice_type
                ),
            })
        }
    }
    parts.push(open.price_mode.to_string());
    parts.push(fields::escape("isf", &open.isf)?);
    parts.push(fields::escape("rn", &open.rn)?);
    if let Some(usd) = &open.usd_rate {
        fields::fixed("usd rate", usd.rate, 4)?;
        parts.push(usd.rate.normalize().to_string());
        parts.push(fields::date(usd.date));
    }
    Ok(parts.join(","))
}

pub(super) fn parse_open(data: &[u8]) -> Result<OpenInvoice, DataError> {
    let f = fields::split(data)?;
    let invoice_type: InvoiceType =
        parse_enum("invoice type", f.get(3).map_or("", String::as_str))?;
    let base = if invoice_type.is_credit_note() { 9 } else { 7 };
    let expected = if invoice_type.is_credit_note() {
        "9 or 11"
    } else {
        "7 or 9"
    };
    fields::expect_count("C0h open invoice", &f, &[base, base + 2], expected)?;
    let (reference, rest) = if invoice_type.is_credit_note() {
        let reference = CreditReference {
            kind: parse_enum("reference type", &f[4])?,
            code_def: f[5].clone(),
        };
        (Some(reference), &f[6..])
    } else {
        (None, &f[4..])
    };
    let usd_rate = if rest.len() == 5 {
        Some(UsdRate {
            rate: fields::parse_decimal("usd rate", &rest[3])?,
            date: fields::parse_date("usd date", &rest[4])?,
        })
    } else {
        None
    };
    Ok(OpenInvoice {
        operator_id: f[0].clone(),
        operator_name: f[1].clone(),
        nif: f[2].clone(),
        invoice_type,
        reference,
        price_mode: parse_enum("price mode", &rest[0])?,
        isf: rest[1].clone(),
        rn: rest[2].clone(),
        usd_rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;

    #[test]
    fn credit_note_needs_a_reference_and_empty_rn_is_refused() {
        let mut open = OpenInvoice {
            operator_id: "1".into(),
            operator_name: "Caisse".into(),
            nif: "A1234567B".into(),
            invoice_type: InvoiceType::Fa,
            reference: None,
            price_mode: PriceMode::Ttc,
            isf: "ISF01".into(),
            rn: "F-1".into(),
            usd_rate: None,
        };
        assert!(matches!(
            Command::OpenInvoice(open.clone()).encode(),
            Err(FieldError::Invalid {
                field: "reference",
                ..
            })
        ));
        open.invoice_type = InvoiceType::Fv;
        open.rn.clear();
        assert_eq!(
            Command::OpenInvoice(open).encode(),
            Err(FieldError::Empty { field: "rn" })
        );
    }
}
