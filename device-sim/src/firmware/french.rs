//! The refusal texts of a French-speaking firmware. Real boxes answer in French or English
//! with free texts ("NO REFUND", "INCOHÉRENT"): a host must show them, never parse them. The
//! values a text carries (NIF, group, rates, amounts, FN, codeDEFDGI) are kept as in English,
//! and the accents too, so that a host's text handling (UTF-8 or Windows-1252) is exercised.

use super::Text;
use crate::invoice::Refusal;

/// `text` in French.
pub(super) fn text(text: Text<'_>) -> String {
    match text {
        Text::Refusal(refusal) => refusal_text(refusal),
        Text::Syntax(message) => format!("erreur de syntaxe : {message}"),
        Text::UnknownCommand(code) => format!("commande inconnue 0x{code:02X}"),
        Text::FaultInjected => "défaut injecté : commande non exécutée".to_owned(),
        Text::ReplyTooLong => "réponse trop longue".to_owned(),
        Text::CannotSend(why) => format!("réponse impossible à envoyer : {why}"),
        Text::MemoryWriteFailed(why) => {
            format!("écriture de la mémoire fiscale impossible : {why}")
        }
    }
}

fn refusal_text(refusal: &Refusal) -> String {
    match refusal {
        Refusal::InvoiceAlreadyOpen => "facture déjà ouverte".to_owned(),
        Refusal::NoOpenInvoice => "aucune facture ouverte".to_owned(),
        Refusal::NifMismatch { given, device } => {
            format!("le NIF {given} n'est pas celui du boîtier {device}")
        }
        Refusal::InvalidRn(why) => format!("FN invalide : {why}"),
        Refusal::MemoryFull => "mémoire fiscale pleine".to_owned(),
        Refusal::OriginalNotFound(code) => format!("facture d'origine introuvable : {code}"),
        Refusal::InvalidUsdRate(rate) => {
            format!("taux USD {rate} invalide : positif avec 4 décimales au plus")
        }
        Refusal::RateMismatch {
            group,
            device: Some(rate),
        } => format!("écart de taux pour le groupe {group} : le boîtier a {rate:.2}"),
        Refusal::RateMismatch {
            group,
            device: None,
        } => format!("écart de taux pour le groupe {group} : le boîtier n'y applique pas de TVA"),
        Refusal::LineAmountMismatch { given, expected } => format!(
            "montant de ligne INCOHÉRENT : {given:.2} donné, prix x quantité = {expected:.2}"
        ),
        Refusal::EmptyItemName => "le nom de l'article est vide".to_owned(),
        Refusal::QuantityNotPositive => "la quantité doit être positive".to_owned(),
        Refusal::Negative(field) => format!("{} : valeur négative interdite", field_name(field)),
        Refusal::TooPrecise { field, places } => {
            format!("{} : plus de {places} décimales", field_name(field))
        }
        Refusal::OutOfRange => "montant hors limites".to_owned(),
        Refusal::ItemsClosed => "plus aucun article après le sous-total".to_owned(),
        Refusal::CommentsClosed => "commentaires seulement avant le sous-total".to_owned(),
        Refusal::NoItem => "aucun article".to_owned(),
        Refusal::PaymentsStarted => "paiements déjà commencés".to_owned(),
        Refusal::NoSubtotal => "sous-total (33h) d'abord".to_owned(),
        Refusal::PaymentNotPositive => "le montant du paiement doit être positif".to_owned(),
        Refusal::TotalsDiffer { total, vat } => {
            format!("totaux INCOHÉRENTS avec le sous-total : le boîtier a {total:.2},{vat:.2}")
        }
        Refusal::NoPayment => "aucun paiement".to_owned(),
        Refusal::Shortfall { paid, total } => {
            format!("paiement insuffisant : {paid:.2} payé sur {total:.2}")
        }
        Refusal::FinalizePending => "finalisation en cours".to_owned(),
    }
}

/// The French name of a value the state machine names in English.
fn field_name(field: &str) -> &str {
    match field {
        "price" => "prix",
        "quantity" => "quantité",
        "specific tax" => "taxe spécifique",
        "payment amount" => "montant du paiement",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcf_sfe::types::TaxGroup;
    use rust_decimal_macros::dec;

    #[test]
    fn refusals_keep_their_values_and_accents() {
        let b = TaxGroup::from_letter('B').unwrap();
        let cases = [
            (Refusal::InvoiceAlreadyOpen, "facture déjà ouverte"),
            (Refusal::NoOpenInvoice, "aucune facture ouverte"),
            (
                Refusal::RateMismatch {
                    group: b,
                    device: Some(dec!(16)),
                },
                "écart de taux pour le groupe B : le boîtier a 16.00",
            ),
            (
                Refusal::RateMismatch {
                    group: b,
                    device: None,
                },
                "écart de taux pour le groupe B : le boîtier n'y applique pas de TVA",
            ),
            (
                Refusal::TotalsDiffer {
                    total: dec!(1392),
                    vat: dec!(192),
                },
                "totaux INCOHÉRENTS avec le sous-total : le boîtier a 1392.00,192.00",
            ),
            (
                Refusal::NifMismatch {
                    given: "X1".into(),
                    device: "A1234567B".into(),
                },
                "le NIF X1 n'est pas celui du boîtier A1234567B",
            ),
            (
                Refusal::Negative("price"),
                "prix : valeur négative interdite",
            ),
            (
                Refusal::TooPrecise {
                    field: "quantity",
                    places: 3,
                },
                "quantité : plus de 3 décimales",
            ),
        ];
        for (refusal, french) in cases {
            assert_eq!(text(Text::Refusal(&refusal)), french);
        }
        assert_eq!(text(Text::UnknownCommand(0xAB)), "commande inconnue 0xAB");
        assert_eq!(text(Text::Syntax("bad")), "erreur de syntaxe : bad");
    }
}
