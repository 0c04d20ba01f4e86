//! The names a person reads for the gateway's codes, one message each, used everywhere they
//! are shown (CLI, dashboard, receipts): an environment (`production`, `sandbox`) and an
//! invoice type (the seed's type table: `FV` "Facture de vente" ... `EA` "Facture d'avoir à
//! l'exportation"). Codes themselves (JSON values, CSV cells, URLs) never change with the
//! language.
//!
//! And the currencies around an amount: every amount of an invoice is in CDF (the seed's
//! currency rules: a seller whose system is in USD still sends CDF amounts, with `curCode`,
//! `curRate` in CDF per USD and `curDate`), so an invoice's or a payment's `curCode` is said as
//! the currency it was made or paid in, never as the amounts' ([`invoice_currency`],
//! [`payment_currency`]).

use rust_decimal::{Decimal, RoundingStrategy};

use super::{format, Lang, Message};
use crate::model::{
    Environment, FiscalAnomalyKind, InvoiceContent, PaymentContent, FISCAL_CURRENCY,
};
use crate::msg;

/// An environment's name in the reader's language ("production", "bac à sable").
pub fn environment(env: Environment) -> Message {
    match env {
        Environment::Production => msg!("environment-production"),
        Environment::Sandbox => msg!("environment-sandbox"),
    }
}

/// A fiscal anomaly in words: rendered in the reader's language, English (`Display`) in logs.
pub fn anomaly(kind: FiscalAnomalyKind) -> Message {
    match kind {
        FiscalAnomalyKind::CounterWentBack => msg!("anomaly-counter-went-back"),
        FiscalAnomalyKind::NifChanged => msg!("anomaly-nif-changed"),
        FiscalAnomalyKind::RegisterBehind => msg!("anomaly-register-behind"),
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

/// An invoice type as a person reads it beside others: its document's name and its code
/// ("Facture d'avoir (FA)").
pub fn document_and_code(invoice_type: &str, lang: Lang) -> String {
    format!("{} ({invoice_type})", document(invoice_type).render(lang))
}

/// Who recorded a register entry (its `source`), in plain words: the device as it certified
/// the invoice (`finalize`), the device read back after an interruption (`reconciled`), or an
/// administrator who settled it (`administrator: NAME; NOTE`, with the dashboard's `dashboard
/// of ORG; ` before a note typed there). Anything else is shown as it is. The dashboard's
/// invoice page and `log show` say it with this (label: `recorded-by`).
pub fn recorded_by(source: &str) -> Message {
    match source {
        "finalize" => msg!("recorded-by-device"),
        "reconciled" => msg!("recorded-by-reconciled"),
        _ => {
            let Some(rest) = source.strip_prefix("administrator: ") else {
                return msg!("recorded-by-other", source = source);
            };
            let (name, note) = rest.split_once("; ").unwrap_or((rest, ""));
            let (dashboard, note) = match note.strip_prefix("dashboard of ") {
                Some(after) => (true, after.split_once("; ").map_or("", |(_, n)| n)),
                None => (false, note),
            };
            let who = msg!(
                "recorded-by-administrator",
                name = name.trim(),
                dashboard = if dashboard { "yes" } else { "no" }
            );
            if note.trim().is_empty() {
                who
            } else {
                msg!("recorded-by-with-note", who = who, note = note.trim())
            }
        }
    }
}

/// A rate as a person reads it: `1 USD = 2 850,00 CDF`.
pub fn rate(currency: &str, rate: Decimal, lang: Lang) -> String {
    let space = match lang {
        Lang::Fr => format::FR_BEFORE_CURRENCY,
        Lang::En => ' ',
    };
    format!(
        "1{space}{currency} = {}",
        format::amount(rate, FISCAL_CURRENCY, lang)
    )
}

/// The invoice's currency as a person reads it: `CDF`, or for an invoice made in another
/// currency, that its amounts are in CDF at its rate ("USD (montants en CDF ; 1 USD =
/// 2 850,00 CDF, cours du 20/11/2026)").
pub fn invoice_currency(invoice: &InvoiceContent, lang: Lang) -> String {
    match invoice.cur_rate {
        Some(value) if invoice.cur_code != FISCAL_CURRENCY => msg!(
            "invoice-currency-converted",
            currency = invoice.cur_code.as_str(),
            rate = rate(&invoice.cur_code, value, lang),
            date = invoice
                .cur_date
                .as_deref()
                .map_or_else(|| "-".to_owned(), |day| format::day(day, lang))
        )
        .render(lang),
        _ => invoice.cur_code.clone(),
    }
}

/// What follows a payment's amount (always in CDF) when it was paid in another currency: that
/// currency, and what the amount was worth in it at the payment's rate (else the invoice's),
/// rounded to the cent ("payé en USD : 200,00 USD").
pub fn payment_currency(
    payment: &PaymentContent,
    invoice: &InvoiceContent,
    lang: Lang,
) -> Option<String> {
    let currency = payment
        .cur_code
        .as_deref()
        .filter(|c| *c != FISCAL_CURRENCY)?;
    let worth = payment
        .cur_rate
        .or(invoice.cur_rate)
        .filter(|r| *r > Decimal::ZERO)
        .and_then(|r| payment.amount.checked_div(r))
        .map(|v| v.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero));
    Some(
        match worth {
            Some(worth) => msg!(
                "payment-paid-in-worth",
                currency = currency,
                worth = format::amount(worth, currency, lang)
            ),
            None => msg!("payment-paid-in", currency = currency),
        }
        .render(lang),
    )
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
    }

    #[test]
    fn who_recorded_an_entry_is_said_in_plain_words() {
        let said = |source: &str, lang| recorded_by(source).render(lang);
        assert_eq!(
            said("finalize", Lang::Fr),
            "l'appareil, en certifiant la facture"
        );
        assert_eq!(
            said("reconciled", Lang::En),
            "the device, read back after an interruption (restart or power cut)"
        );
        assert_eq!(
            said(
                "administrator: Marie K.; dashboard of acme; lu sur le portail",
                Lang::Fr
            ),
            crate::i18n::nbsp("Marie K. (administrateur), d'après le portail de la DGI, depuis le tableau de bord : lu sur le portail")
        );
        assert_eq!(
            said("administrator: Jean; ", Lang::En),
            "Jean (administrator), from the DGI's portal"
        );
        assert_eq!(said("something new", Lang::Fr), "something new");
    }

    #[test]
    fn a_usd_invoice_and_payment_say_their_amounts_are_cdf() {
        let text = r#"{"canon":"1","curCode":"USD","curRate":"2850","curDate":"2026-11-20","items":[],"mode":"ttc","operator":{"name":"A"},"payments":[{"amount":"570000","curCode":"USD","name":"ESPECES"},{"amount":"1000","curCode":"CDF","name":"VIREMENT"}],"rn":"F-1","type":"FV"}"#;
        let invoice: InvoiceContent = serde_json::from_str(text).expect("content");
        assert_eq!(
            invoice_currency(&invoice, Lang::Fr),
            "USD (montants en CDF\u{a0}; 1\u{a0}USD = 2\u{202f}850,00\u{a0}CDF, cours du 20/11/2026)"
        );
        assert_eq!(
            invoice_currency(&invoice, Lang::En),
            "USD (amounts in CDF; 1 USD = 2,850.00 CDF, rate of 2026-11-20)"
        );
        let (usd, cdf) = (&invoice.payments[0], &invoice.payments[1]);
        assert_eq!(
            payment_currency(usd, &invoice, Lang::Fr).as_deref(),
            Some("payé en USD\u{a0}: 200,00\u{a0}USD")
        );
        assert_eq!(
            payment_currency(usd, &invoice, Lang::En).as_deref(),
            Some("paid in USD: 200.00 USD")
        );
        assert_eq!(payment_currency(cdf, &invoice, Lang::Fr), None);
        assert_eq!(
            environment(Environment::Sandbox).render(Lang::Fr),
            "bac à sable"
        );
    }
}
