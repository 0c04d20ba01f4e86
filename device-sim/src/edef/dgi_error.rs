//! The DGI's refusals: an `errorCode` (Benin e-MECeF's numbering, the closest public list)
//! and a French `errorDesc`, answered on HTTP 400 (HTTP 200 under the `errors_on_200` fault).

use mcf_sfe::types::InvoiceType;
use rust_decimal::Decimal;

use super::json::JsonObject;

/// Why the simulated DGI refuses a call; the `errorDesc` is its `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DgiError {
    /// 1: the e-MCF already has its limit of pending requests.
    #[error("trop de demandes en attente: {limit} au maximum, confirmez ou annulez-en une")]
    TooManyPending {
        /// The pending-request limit.
        limit: usize,
    },
    /// 3: `type` is not FV, FT, FA, EV, ET or EA.
    #[error("type de facture invalide: {0:?} (attendu FV, FT, FA, EV, ET ou EA)")]
    BadInvoiceType(String),
    /// 4: a credit note without `reference`.
    #[error("référence de la facture originale manquante pour une facture {0}")]
    ReferenceMissing(InvoiceType),
    /// 5: a credit note whose `reference` is not 24 characters long.
    #[error("la référence {0:?} doit avoir 24 caractères (codeDEFDGI de l'original)")]
    ReferenceLength(String),
    /// 7: a payment whose `name` is not a payment type.
    #[error("type de paiement invalide: {0:?}")]
    BadPaymentType(String),
    /// 8: no item line.
    #[error("la facture n'a aucun article")]
    NoItems,
    /// 9: an item whose `taxGroup` is not A..P (or a TAX item outside L and N).
    #[error("items[{item}]: groupe de taxation invalide: {reason}")]
    BadTaxGroup {
        /// Position of the item, from 0.
        item: usize,
        /// What is wrong.
        reason: String,
    },
    /// 11: the original of a credit note was never finalized here (or is not of a kind it
    /// can credit).
    #[error("facture originale introuvable: {0}")]
    OriginalNotFound(String),
    /// 12: the credit notes of an original would exceed its total.
    #[error(
        "l'avoir ({credit:.2}) dépasse le montant restant de l'original \
         ({remaining:.2} sur {original:.2})"
    )]
    CreditExceedsOriginal {
        /// Total of this credit note.
        credit: Decimal,
        /// What the original's earlier credit notes left.
        remaining: Decimal,
        /// Total of the original.
        original: Decimal,
    },
    /// 20: confirm or cancel of a uid that is not pending (unknown, expired, confirmed or
    /// cancelled).
    #[error("facture inexistante ou déjà finalisée/annulée: {0}")]
    NotPending(String),
    /// 99: any other processing error; the text says which.
    #[error("erreur de traitement: {0}")]
    Processing(String),
}

impl DgiError {
    /// The `errorCode`.
    pub fn code(&self) -> u16 {
        match self {
            DgiError::TooManyPending { .. } => 1,
            DgiError::BadInvoiceType(_) => 3,
            DgiError::ReferenceMissing(_) => 4,
            DgiError::ReferenceLength(_) => 5,
            DgiError::BadPaymentType(_) => 7,
            DgiError::NoItems => 8,
            DgiError::BadTaxGroup { .. } => 9,
            DgiError::OriginalNotFound(_) => 11,
            DgiError::CreditExceedsOriginal { .. } => 12,
            DgiError::NotPending(_) => 20,
            DgiError::Processing(_) => 99,
        }
    }

    /// A processing error (99).
    pub(crate) fn processing(reason: impl Into<String>) -> DgiError {
        DgiError::Processing(reason.into())
    }

    /// The error body: `{"errorCode":"<digits>","errorDesc":"<text>"}`.
    pub(crate) fn body(&self) -> String {
        error_body(&self.code().to_string(), &self.to_string())
    }
}

/// The body of every error answer, DGI refusals and HTTP-level errors (401, 404...) alike:
/// `errorCode` is a string of digits.
pub(crate) fn error_body(code: &str, description: &str) -> String {
    JsonObject::new()
        .text("errorCode", code)
        .text("errorDesc", description)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn codes_follow_the_benin_list() {
        let cases = [
            (DgiError::TooManyPending { limit: 10 }, 1),
            (DgiError::BadInvoiceType("XX".into()), 3),
            (DgiError::ReferenceMissing(InvoiceType::Fa), 4),
            (DgiError::ReferenceLength("ABC".into()), 5),
            (DgiError::BadPaymentType("BITCOIN".into()), 7),
            (DgiError::NoItems, 8),
            (
                DgiError::BadTaxGroup {
                    item: 0,
                    reason: "Z".into(),
                },
                9,
            ),
            (DgiError::OriginalNotFound("X".into()), 11),
            (
                DgiError::CreditExceedsOriginal {
                    credit: dec!(2),
                    remaining: dec!(1),
                    original: dec!(1),
                },
                12,
            ),
            (DgiError::NotPending("u".into()), 20),
            (DgiError::processing("x"), 99),
        ];
        for (error, code) in cases {
            assert_eq!(error.code(), code, "{error}");
        }
    }

    #[test]
    fn the_body_carries_the_code_as_digits_and_the_text() {
        let body: serde_json::Value =
            serde_json::from_str(&DgiError::TooManyPending { limit: 10 }.body()).unwrap();
        assert_eq!(body["errorCode"], "1");
        assert!(body["errorDesc"].as_str().unwrap().contains("10"));
    }
}
