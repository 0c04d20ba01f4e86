//! The invoice as it was certified, read back from the canonical form an intent keeps
//! (`Intent::invoice`, since 1.5.0): what an auditor reads on `log show` and the dashboard,
//! and what the exports take the client and the reference from.
//!
//! The reader is tolerant in one direction only: a field a later form adds is ignored, but
//! the text must hash to the entry's `request_digest`, else it is not what was certified and
//! it is not shown as such ([`ContentError::DigestMismatch`]).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a kept invoice cannot be shown as the certified one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentError {
    /// The text does not hash to the entry's digest.
    #[error("the kept invoice does not match the entry's request digest")]
    DigestMismatch,
    /// The text is not a form this release reads.
    #[error("the kept invoice cannot be read: {0}")]
    Unreadable(String),
}

/// The invoice's client (every field optional, as the API takes it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientContent {
    /// Client NIF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nif: Option<String>,
    /// Client type (PP, PM, PC, PL, AO).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub client_type: Option<String>,
    /// Free description of the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_desc: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
    /// Address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// E-mail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// RCCM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rccm: Option<String>,
}

/// One item line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemContent {
    /// Item code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Label.
    pub name: String,
    /// BIE, SER or TAX.
    #[serde(rename = "type")]
    pub item_type: String,
    /// Unit price (HT or TTC, as the invoice's mode says).
    pub price: Decimal,
    /// Quantity.
    pub quantity: Decimal,
    /// VAT group letter.
    pub tax_group: String,
    /// Specific tax rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_specific_value: Option<Decimal>,
    /// Specific tax amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_specific_amount: Option<Decimal>,
    /// Price before a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_price: Option<Decimal>,
    /// Why the price changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_modification: Option<String>,
}

impl ItemContent {
    /// price x quantity rounded half away from zero to the cent, as the device computes it.
    pub fn line_amount(&self) -> Option<Decimal> {
        self.price.checked_mul(self.quantity).map(|v| {
            v.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
        })
    }
}

/// One payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentContent {
    /// Method (ESPECES, VIREMENT...).
    pub name: String,
    /// Amount.
    pub amount: Decimal,
    /// Currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cur_code: Option<String>,
    /// Rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cur_rate: Option<Decimal>,
}

/// The operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorContent {
    /// Operator id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Operator name.
    #[serde(default)]
    pub name: String,
}

/// The invoice as certified: the validated request under the seed's field names, with the
/// defaults applied (`docs/error-codes.md`, "Request digest").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceContent {
    /// The form's version (`"1"`).
    pub canon: String,
    /// Invoice number.
    pub rn: String,
    /// FV, FT, FA, EV, ET, EA.
    #[serde(rename = "type")]
    pub invoice_type: String,
    /// `ht` or `ttc`.
    pub mode: String,
    /// CDF or USD.
    pub cur_code: String,
    /// USD rate (CDF per USD), USD invoices only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cur_rate: Option<Decimal>,
    /// Date of the USD rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cur_date: Option<String>,
    /// The client, when the invoice named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientContent>,
    /// The operator.
    #[serde(default)]
    pub operator: OperatorContent,
    /// Item lines.
    pub items: Vec<ItemContent>,
    /// Payments as sent (none: one ESPECES payment of the total was made).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payments: Vec<PaymentContent>,
    /// A credit note's original invoice: its codeDEFDGI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// COR, RAN, RAM, RRR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_type: Option<String>,
    /// Comment line A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmta: Option<String>,
    /// Comment line B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmtb: Option<String>,
    /// Comment line C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmtc: Option<String>,
    /// Comment line D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmtd: Option<String>,
    /// Comment line E.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmte: Option<String>,
    /// Comment line F.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmtf: Option<String>,
    /// Comment line G.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmtg: Option<String>,
    /// Comment line H.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmth: Option<String>,
}

impl InvoiceContent {
    /// Reads `text`, the canonical form kept with an intent, after checking that its SHA-256
    /// is `digest`.
    pub fn read(text: &str, digest: &str) -> Result<InvoiceContent, ContentError> {
        if hex::encode(Sha256::digest(text.as_bytes())) != digest {
            return Err(ContentError::DigestMismatch);
        }
        serde_json::from_str(text).map_err(|e| ContentError::Unreadable(e.to_string()))
    }

    /// The comment lines that are present, in order A..H.
    pub fn comments(&self) -> Vec<&str> {
        [
            &self.cmta, &self.cmtb, &self.cmtc, &self.cmtd, &self.cmte, &self.cmtf, &self.cmtg,
            &self.cmth,
        ]
        .into_iter()
        .filter_map(|c| c.as_deref())
        .collect()
    }

    /// Whether this is a credit note (FA, EA).
    pub fn is_credit_note(&self) -> bool {
        is_credit_note_type(&self.invoice_type)
    }
}

/// Whether the invoice type `code` is a credit note's: `FA` or `EA`.
pub fn is_credit_note_type(code: &str) -> bool {
    matches!(code, "FA" | "EA")
}

/// Only the credit note's reference, read without the rest (the index reads it on every
/// certified record it applies).
#[derive(Deserialize)]
struct ReferenceOnly {
    #[serde(default)]
    reference: Option<String>,
}

/// The codeDEFDGI a kept invoice names as its original (credit notes only), if any; `None`
/// too when the text cannot be read (the index then links nothing, it never fails).
pub fn reference_of(text: &str) -> Option<String> {
    serde_json::from_str::<ReferenceOnly>(text)
        .ok()
        .and_then(|r| r.reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &str = r#"{"canon":"1","client":{"name":"Kinshasa SARL","nif":"A7654321Z","type":"PM"},"curCode":"CDF","items":[{"name":"Sac de ciment","price":"14500","quantity":"2","taxGroup":"B","type":"BIE"}],"mode":"ttc","operator":{"id":"7","name":"Amani"},"payments":[{"amount":"29000","curCode":"CDF","name":"ESPECES"}],"reference":"XN56YAPV37MZLNZLX6MOC3A5","referenceType":"COR","rn":"FA-1","type":"FA","cmta":"Retour"}"#;

    fn digest(text: &str) -> String {
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    #[test]
    fn a_kept_form_reads_back_with_its_client_items_and_reference() {
        let content = InvoiceContent::read(FORM, &digest(FORM)).expect("read");
        assert_eq!(content.rn, "FA-1");
        assert!(content.is_credit_note());
        assert_eq!(
            content.client.as_ref().and_then(|c| c.name.as_deref()),
            Some("Kinshasa SARL")
        );
        assert_eq!(content.items[0].line_amount(), Some(Decimal::from(29000)));
        assert_eq!(
            content.reference.as_deref(),
            Some("XN56YAPV37MZLNZLX6MOC3A5")
        );
        assert_eq!(content.comments(), ["Retour"]);
        assert_eq!(
            reference_of(FORM).as_deref(),
            Some("XN56YAPV37MZLNZLX6MOC3A5")
        );
    }

    #[test]
    fn a_form_that_does_not_hash_to_the_digest_is_not_shown_as_certified() {
        let changed = FORM.replace("14500", "1450");
        assert_eq!(
            InvoiceContent::read(&changed, &digest(FORM)),
            Err(ContentError::DigestMismatch)
        );
    }

    #[test]
    fn a_field_a_later_form_adds_is_ignored() {
        let later = FORM.replace(r#""canon":"1""#, r#""canon":"2","newField":[1,2]"#);
        let content = InvoiceContent::read(&later, &digest(&later)).expect("read");
        assert_eq!(content.canon, "2");
        assert_eq!(reference_of("not json"), None);
    }
}
