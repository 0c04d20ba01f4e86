//! The reference lists of `GET /api/info/...`: `[{type, description}]` for invoice,
//! payment, client, reference and item types, the exchange rates and the VAT rates.

use chrono::{NaiveDate, SecondsFormat};
use mcf_sfe::types::{InvoiceType, ItemType, PaymentMethod, ReferenceType, TaxGroup};
use rust_decimal::Decimal;

use super::json::{self, JsonObject, NumberStyle};
use crate::config::Rates;

/// The client types the DGI knows (`clientTypes`), with their descriptions.
pub(crate) const CLIENT_TYPES: [(&str, &str); 5] = [
    ("PP", "Personne physique"),
    ("PM", "Personne morale"),
    ("PC", "Commerçant"),
    ("PL", "Profession libérale"),
    ("AO", "Ambassade ou organisation internationale"),
];

/// Which `[{type, description}]` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `invoiceTypes`
    Invoice,
    /// `paymentTypes`
    Payment,
    /// `clientTypes`
    Client,
    /// `referenceTypes`
    Reference,
    /// `itemTypes`
    Item,
}

impl ListKind {
    /// The list named by the last path segment (`invoiceTypes`...), any case.
    pub(crate) fn from_segment(segment: &str) -> Option<ListKind> {
        Some(match segment.to_ascii_lowercase().as_str() {
            "invoicetypes" => ListKind::Invoice,
            "paymenttypes" => ListKind::Payment,
            "clienttypes" => ListKind::Client,
            "referencetypes" => ListKind::Reference,
            "itemtypes" => ListKind::Item,
            _ => return None,
        })
    }

    /// The `(type, description)` pairs.
    fn entries(self) -> Vec<(&'static str, &'static str)> {
        match self {
            ListKind::Invoice => InvoiceType::ALL
                .iter()
                .map(|&t| (t.as_str(), invoice_type_description(t)))
                .collect(),
            ListKind::Payment => PaymentMethod::ALL
                .iter()
                .map(|&m| (m.name(), payment_description(m)))
                .collect(),
            ListKind::Client => CLIENT_TYPES.to_vec(),
            ListKind::Reference => ReferenceType::ALL
                .iter()
                .map(|&r| (r.as_str(), reference_type_description(r)))
                .collect(),
            ListKind::Item => ItemType::ALL
                .iter()
                .map(|&i| (i.as_str(), item_type_description(i)))
                .collect(),
        }
    }

    /// The list as a JSON array.
    pub(crate) fn answer(self) -> String {
        json::array(
            self.entries()
                .into_iter()
                .map(|(kind, description)| {
                    JsonObject::new()
                        .text("type", kind)
                        .text("description", description)
                })
                .collect(),
        )
    }
}

fn invoice_type_description(invoice_type: InvoiceType) -> &'static str {
    match invoice_type {
        InvoiceType::Fv => "Facture de vente",
        InvoiceType::Ft => "Facture d'acompte",
        InvoiceType::Fa => "Facture d'avoir",
        InvoiceType::Ev => "Facture de vente à l'exportation",
        InvoiceType::Et => "Facture d'acompte à l'exportation",
        InvoiceType::Ea => "Facture d'avoir à l'exportation",
    }
}

fn payment_description(method: PaymentMethod) -> &'static str {
    match method {
        PaymentMethod::Especes => "Espèces",
        PaymentMethod::Virement => "Virement bancaire",
        PaymentMethod::CarteBancaire => "Carte bancaire",
        PaymentMethod::MobileMoney => "Mobile money",
        PaymentMethod::Cheques => "Chèques",
        PaymentMethod::Credit => "Crédit",
        PaymentMethod::Autre => "Autre",
    }
}

fn reference_type_description(reference_type: ReferenceType) -> &'static str {
    match reference_type {
        ReferenceType::Cor => "Correction",
        ReferenceType::Ran => "Annulation",
        ReferenceType::Ram => "Réduction du montant",
        ReferenceType::Rrr => "Remise, rabais, ristourne",
    }
}

fn item_type_description(item_type: ItemType) -> &'static str {
    match item_type {
        ItemType::Bie => "Bien",
        ItemType::Ser => "Service",
        ItemType::Tax => "Taxe (groupes L et N)",
    }
}

/// `taxGroups`: `{"a": 0, "b": 16, ...}`, every group, 0 for one without VAT.
pub(crate) fn tax_groups(rates: &Rates, upper_case_keys: bool, style: NumberStyle) -> String {
    let mut answer = JsonObject::new();
    for group in TaxGroup::all() {
        let letter = group.letter();
        let key = if upper_case_keys {
            letter
        } else {
            letter.to_ascii_lowercase()
        };
        let rate = rates[group.index()].unwrap_or(Decimal::ZERO);
        answer = answer.decimal(&key.to_string(), rate, style);
    }
    answer.finish()
}

/// `currencyRates`: fixed sandbox rates (CDF per unit), dated `today`.
pub(crate) fn currency_rates(today: NaiveDate, style: NumberStyle) -> String {
    let date = today
        .and_hms_opt(0, 0, 0)
        .map(|midnight| {
            midnight
                .and_utc()
                .to_rfc3339_opts(SecondsFormat::Secs, true)
        })
        .unwrap_or_default();
    let rates = [
        ("USD", "Dollar américain", Decimal::new(2850, 0)),
        ("EUR", "Euro", Decimal::new(3100, 0)),
    ];
    json::array(
        rates
            .into_iter()
            .map(|(code, description, rate)| {
                JsonObject::new()
                    .text("type", code)
                    .text("description", description)
                    .text("date", &date)
                    .decimal("rate", rate, style)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tax_groups_follow_the_configured_rates() {
        let rates = mcf_sfe::types::dgi_rates();
        let answer: serde_json::Value =
            serde_json::from_str(&tax_groups(&rates, false, NumberStyle::Number)).unwrap();
        assert_eq!(answer["a"], 0);
        assert_eq!(answer["b"], 16);
        assert_eq!(answer["c"], 5);
        assert_eq!(answer["p"], 1);
        assert_eq!(answer.as_object().unwrap().len(), 16);
        let upper = tax_groups(&rates, true, NumberStyle::Text);
        assert!(upper.contains(r#""B":"16""#), "{upper}");
    }

    #[test]
    fn every_list_is_type_and_description() {
        for segment in [
            "invoiceTypes",
            "PAYMENTTYPES",
            "clientTypes",
            "referenceTypes",
            "itemTypes",
        ] {
            let kind = ListKind::from_segment(segment).unwrap();
            let list: Vec<serde_json::Value> = serde_json::from_str(&kind.answer()).unwrap();
            assert!(!list.is_empty());
            assert!(list
                .iter()
                .all(|e| e["type"].is_string() && e["description"].is_string()));
        }
        assert!(ListKind::Payment.answer().contains("MOBILEMONEY"));
        assert_eq!(ListKind::from_segment("taxes"), None);
        let today = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        let rates = currency_rates(today, NumberStyle::Number);
        assert!(rates.contains(r#""date":"2026-03-01T00:00:00Z","rate":2850"#));
    }
}
