//! The request bodies as the client wrote them (docs/web-api.md §3): every value stays raw until
//! [`super::validate`] or [`super::compute`] reads it (with [`super::lenient`]), so that
//! numbers are read exactly and errors name the member.
//! Unknown members (`isf`, `operator`, `cmta`..`cmth`, `curDate`, `referenceDesc`...) are
//! ignored.

use serde::Deserialize;

use super::dgi_error::DgiError;
use super::lenient::Raw;

/// `POST /api/invoice`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InvoiceRequest {
    /// Seller NIF: must be the e-MCF's.
    #[serde(default)]
    pub nif: Raw,
    /// The client's invoice number.
    #[serde(default)]
    pub rn: Raw,
    /// `ht` or `ttc`.
    #[serde(default)]
    pub mode: Raw,
    /// FV FT FA EV ET EA.
    #[serde(default, rename = "type")]
    pub invoice_type: Raw,
    /// Item lines.
    #[serde(default)]
    pub items: Option<Vec<ItemRequest>>,
    /// The buyer.
    #[serde(default)]
    pub client: Option<ClientRequest>,
    /// Payment lines.
    #[serde(default)]
    pub payment: Option<Vec<PaymentRequest>>,
    /// The original's codeDEFDGI, for FA and EA.
    #[serde(default)]
    pub reference: Raw,
    /// COR, RAN, RAM or RRR, for FA and EA.
    #[serde(default)]
    pub reference_type: Raw,
    /// Foreign currency code.
    #[serde(default)]
    pub cur_code: Raw,
    /// CDF per unit of the foreign currency.
    #[serde(default)]
    pub cur_rate: Raw,
}

/// One item line.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemRequest {
    /// Item code.
    #[serde(default)]
    pub code: Raw,
    /// BIE, SER or TAX.
    #[serde(default, rename = "type")]
    pub item_type: Raw,
    /// Label.
    #[serde(default)]
    pub name: Raw,
    /// Unit price (HT or TTC, as `mode` says).
    #[serde(default)]
    pub price: Raw,
    /// Quantity.
    #[serde(default)]
    pub quantity: Raw,
    /// A..P, any case.
    #[serde(default)]
    pub tax_group: Raw,
    /// Rate or unit value of the specific tax.
    #[serde(default)]
    pub tax_specific_value: Raw,
    /// Specific tax of the line (outside every VAT group).
    #[serde(default)]
    pub tax_specific_amount: Raw,
    /// Price before a modification.
    #[serde(default)]
    pub original_price: Raw,
    /// What the modification was.
    #[serde(default)]
    pub price_modification: Raw,
}

/// The buyer.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientRequest {
    /// PP, PM, PC, PL or AO.
    #[serde(default, rename = "type")]
    pub client_type: Raw,
}

/// One payment line.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaymentRequest {
    /// ESPECES, VIREMENT, CARTEBANCAIRE, MOBILEMONEY, CHEQUES, CREDIT or AUTRE.
    #[serde(default)]
    pub name: Raw,
    /// Amount paid.
    #[serde(default)]
    pub amount: Raw,
    /// Rate of the payment's currency.
    #[serde(default)]
    pub currency_rate: Raw,
}

/// `PUT /api/invoice/{uid}/confirm`: the totals the DGI computed.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ConfirmRequest {
    /// TTC total, specific taxes included.
    #[serde(default)]
    pub total: Raw,
    /// VAT total.
    #[serde(default)]
    pub vtotal: Raw,
}

/// Parses a JSON body; an empty body reads as `{}`.
pub(crate) fn parse_body<'a, T: Deserialize<'a> + Default>(body: &'a [u8]) -> Result<T, DgiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body)
        .map_err(|e| DgiError::processing(format!("corps JSON invalide: {e}")))
}
