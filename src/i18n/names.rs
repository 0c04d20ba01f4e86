//! The names a person reads for the gateway's codes, one message each, used everywhere they
//! are shown (CLI, dashboard, receipts): an environment (`production`, `sandbox`) and an
//! invoice type (the seed's type table: `FV` "Facture de vente" ... `EA` "Facture d'avoir à
//! l'exportation"). Codes themselves (JSON values, CSV cells, URLs) never change with the
//! language.

use super::Message;
use crate::model::Environment;
use crate::msg;

/// An environment's name in the reader's language ("production", "bac à sable").
pub fn environment(env: Environment) -> Message {
    match env {
        Environment::Production => msg!("environment-production"),
        Environment::Sandbox => msg!("environment-sandbox"),
    }
}

/// The name of the document an invoice type makes ("Facture d'avoir" for `FA`); a code the
/// seed does not list is named with the code itself.
pub fn document(invoice_type: &str) -> Message {
    match invoice_type {
        "FV" => msg!("invoice-type-fv"),
        "FT" => msg!("invoice-type-ft"),
        "FA" => msg!("invoice-type-fa"),
        "EV" => msg!("invoice-type-ev"),
        "ET" => msg!("invoice-type-et"),
        "EA" => msg!("invoice-type-ea"),
        other => msg!("invoice-type-other", code = other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    #[test]
    fn every_type_of_the_seed_has_its_name_in_both_languages() {
        let names =
            |lang| ["FV", "FT", "FA", "EV", "ET", "EA"].map(|code| document(code).render(lang));
        assert_eq!(
            names(Lang::Fr),
            [
                "Facture de vente",
                "Facture d'acompte",
                "Facture d'avoir",
                "Facture de vente à l'exportation",
                "Facture d'acompte à l'exportation",
                "Facture d'avoir à l'exportation",
            ]
        );
        assert_eq!(
            names(Lang::En),
            [
                "Sales invoice",
                "Down payment invoice",
                "Credit note",
                "Export sales invoice",
                "Export down payment invoice",
                "Export credit note",
            ]
        );
        assert_eq!(document("XX").render(Lang::Fr), "Facture XX");
        assert_eq!(
            environment(Environment::Sandbox).render(Lang::Fr),
            "bac à sable"
        );
    }
}
