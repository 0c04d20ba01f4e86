//! What the gateway sends: the invoice request (`POST /api/invoice`) in the DGI's field names
//! (which differ from the gateway's v1 API: `isf`, `payment`, `curCode`...), and the confirm's
//! body. Amounts are written as JSON numbers with their exact digits; an absent optional
//! field is left out rather than sent as `null`.

use rust_decimal::Decimal;
use serde::Serialize;

use crate::number;

/// An invoice request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvoiceRequest {
    /// The seller's NIF.
    pub nif: String,
    /// The ERP's invoice number.
    pub rn: String,
    /// `ht` or `ttc`.
    pub mode: String,
    /// The seller's ISF.
    pub isf: String,
    /// FV FT FA EV ET EA.
    #[serde(rename = "type")]
    pub invoice_type: String,
    /// The lines.
    pub items: Vec<RequestItem>,
    /// The client, when the invoice names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<RequestClient>,
    /// Who made the invoice.
    pub operator: RequestOperator,
    /// The payments.
    pub payment: Vec<RequestPayment>,
    /// The original invoice's codeDEFDGI (credit notes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// COR, RAN, RAM or RRR (credit notes).
    #[serde(rename = "referenceType", skip_serializing_if = "Option::is_none")]
    pub reference_type: Option<String>,
    /// Why (credit notes).
    #[serde(rename = "referenceDesc", skip_serializing_if = "Option::is_none")]
    pub reference_desc: Option<String>,
    /// Comment lines `cmta`..`cmth`.
    #[serde(flatten)]
    pub comments: std::collections::BTreeMap<String, String>,
    /// The currency block (`curCode`, `curDate`, `curRate`), when sent.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
}

/// The currency block of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Currency {
    /// `curCode`, e.g. `USD`.
    #[serde(rename = "curCode")]
    pub code: String,
    /// `curDate`, formatted by the caller.
    #[serde(rename = "curDate", skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `curRate`: CDF per unit of the currency.
    #[serde(rename = "curRate", serialize_with = "number::write")]
    pub rate: Decimal,
}

/// One line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestItem {
    /// Item code (may be empty).
    pub code: String,
    /// BIE, SER or TAX.
    #[serde(rename = "type")]
    pub item_type: String,
    /// Label.
    pub name: String,
    /// Unit price.
    #[serde(serialize_with = "number::write")]
    pub price: Decimal,
    /// Quantity (absolute: credit notes carry positive quantities).
    #[serde(serialize_with = "number::write")]
    pub quantity: Decimal,
    /// VAT group letter.
    #[serde(rename = "taxGroup")]
    pub tax_group: String,
    /// Specific tax rate, when the line has one.
    #[serde(
        rename = "taxSpecificValue",
        serialize_with = "number::write_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub tax_specific_value: Option<Decimal>,
    /// Specific tax amount, when the line has one.
    #[serde(
        rename = "taxSpecificAmount",
        serialize_with = "number::write_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub tax_specific_amount: Option<Decimal>,
    /// Price before a modification.
    #[serde(
        rename = "originalPrice",
        serialize_with = "number::write_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub original_price: Option<Decimal>,
    /// What the modification was.
    #[serde(rename = "priceModification", skip_serializing_if = "Option::is_none")]
    pub price_modification: Option<String>,
}

/// The client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestClient {
    /// Client NIF (may be empty).
    pub nif: String,
    /// Name.
    pub name: String,
    /// Contact.
    pub contact: String,
    /// Address.
    pub address: String,
    /// PP, PM, PC, PL or AO.
    #[serde(rename = "type")]
    pub client_type: String,
    /// Description of the type.
    #[serde(rename = "typeDesc", skip_serializing_if = "Option::is_none")]
    pub type_desc: Option<String>,
}

/// Who made the invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestOperator {
    /// Operator id (may be empty).
    pub id: String,
    /// Operator name.
    pub name: String,
}

/// One payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestPayment {
    /// ESPECES, VIREMENT...
    pub name: String,
    /// Amount (CDF).
    #[serde(serialize_with = "number::write")]
    pub amount: Decimal,
    /// Currency of the amount.
    #[serde(rename = "currencyCode")]
    pub currency_code: String,
    /// Its rate to CDF.
    #[serde(rename = "currencyRate", serialize_with = "number::write")]
    pub currency_rate: Decimal,
}

/// The confirm's body: the totals the DGI returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConfirmBody {
    /// The calculation's `total`.
    #[serde(serialize_with = "number::write")]
    pub total: Decimal,
    /// The calculation's `vtotal`.
    #[serde(serialize_with = "number::write")]
    pub vtotal: Decimal,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn a_usd_request_is_written_in_the_dgi_names_with_exact_amounts() {
        let request = InvoiceRequest {
            nif: "A1234567B".into(),
            rn: "F-1".into(),
            mode: "ttc".into(),
            isf: "ISF1".into(),
            invoice_type: "FV".into(),
            items: vec![RequestItem {
                code: "P1".into(),
                item_type: "BIE".into(),
                name: "Riz".into(),
                price: dec!(1160.50),
                quantity: dec!(2),
                tax_group: "B".into(),
                tax_specific_value: None,
                tax_specific_amount: None,
                original_price: None,
                price_modification: None,
            }],
            client: None,
            operator: RequestOperator {
                id: "1".into(),
                name: "Caisse".into(),
            },
            payment: vec![RequestPayment {
                name: "ESPECES".into(),
                amount: dec!(2321.00),
                currency_code: "CDF".into(),
                currency_rate: dec!(1),
            }],
            reference: None,
            reference_type: None,
            reference_desc: None,
            comments: [("cmta".to_string(), "Merci".to_string())].into(),
            currency: Some(Currency {
                code: "USD".into(),
                date: Some("2026-11-23T00:00:00".into()),
                rate: dec!(2850.00),
            }),
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            concat!(
                r#"{"nif":"A1234567B","rn":"F-1","mode":"ttc","isf":"ISF1","type":"FV","#,
                r#""items":[{"code":"P1","type":"BIE","name":"Riz","price":1160.50,"quantity":2,"taxGroup":"B"}],"#,
                r#""operator":{"id":"1","name":"Caisse"},"#,
                r#""payment":[{"name":"ESPECES","amount":2321.00,"currencyCode":"CDF","currencyRate":1}],"#,
                r#""cmta":"Merci","curCode":"USD","curDate":"2026-11-23T00:00:00","curRate":2850.00}"#
            )
        );
    }

    #[test]
    fn the_confirm_body_sends_back_the_dgi_totals() {
        let body = ConfirmBody {
            total: dec!(2321.00),
            vtotal: dec!(320.14),
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"total":2321.00,"vtotal":320.14}"#
        );
    }
}
