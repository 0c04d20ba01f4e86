//! A valid invoice as the DGI's invoice request (docs/web-api.md §3, §4), and the DGI's calculation
//! checked against the gateway's own computation, [`Totals`] (no tolerance: a difference
//! names the field and both values, and the request is cancelled), then kept as the
//! intent's totals.

use edef::{
    Calculation, Currency, InvoiceRequest, RequestClient, RequestItem, RequestOperator,
    RequestPayment,
};
use rust_decimal::Decimal;

use super::settings::CdfCurrency;
use crate::certify::invoice::{Seller, TaxGroup, Totals, ValidInvoice};
use crate::certify::CertifyError;
use crate::model::DeviceTotals;

/// The rates of groups A..P (`None`: not charged).
pub(super) type Rates = [Option<Decimal>; TaxGroup::COUNT];

/// The request body of `invoice` for `seller`; an invoice without a client names an
/// anonymous natural person (`{"type": "PP"}`) when `anonymous_client` is set.
pub(super) fn request_of(
    invoice: &ValidInvoice,
    seller: &Seller,
    cdf_currency: CdfCurrency,
    anonymous_client: bool,
) -> InvoiceRequest {
    let items = invoice
        .items
        .iter()
        .map(|item| RequestItem {
            code: item.code.clone().unwrap_or_default(),
            item_type: item.item_type.to_string(),
            name: item.name.clone(),
            price: item.price,
            quantity: item.quantity,
            tax_group: item.group.letter().to_string(),
            tax_specific_value: item.specific_tax.and_then(|tax| tax.rate),
            tax_specific_amount: item.specific_tax.map(|tax| tax.amount),
            original_price: item.price_change.as_ref().map(|c| c.original_price),
            price_modification: item
                .price_change
                .as_ref()
                .map(|c| c.description.clone())
                .filter(|d| !d.is_empty()),
        })
        .collect();
    let client = if invoice.has_client() {
        Some(RequestClient {
            nif: invoice.client.nif.clone(),
            name: invoice.client.name.clone(),
            contact: invoice.client.contact.clone(),
            address: invoice.client.address.clone(),
            client_type: invoice.client.client_type.clone(),
            type_desc: None,
        })
    } else {
        anonymous_client.then(|| RequestClient {
            nif: String::new(),
            name: String::new(),
            contact: String::new(),
            address: String::new(),
            client_type: "PP".to_owned(),
            type_desc: None,
        })
    };
    let payment = invoice
        .payments
        .iter()
        .map(|p| RequestPayment {
            name: p.method.as_str().to_owned(),
            amount: p.amount,
            currency_code: "CDF".to_owned(),
            currency_rate: Decimal::ONE,
        })
        .collect();
    let currency = match (&invoice.usd_rate, cdf_currency) {
        (Some(usd), _) => Some(Currency {
            code: invoice.currency_code.clone(),
            date: Some(usd.date.format("%Y-%m-%dT00:00:00").to_string()),
            rate: usd.rate,
        }),
        (None, CdfCurrency::Omit) => None,
        (None, CdfCurrency::Rate(rate)) => Some(Currency {
            code: "CDF".to_owned(),
            date: None,
            rate,
        }),
    };
    InvoiceRequest {
        nif: seller.nif.clone(),
        rn: invoice.rn.clone(),
        mode: invoice.price_mode.to_string().to_ascii_lowercase(),
        isf: seller.isf.clone(),
        invoice_type: invoice.invoice_type.to_string(),
        items,
        client,
        operator: RequestOperator {
            id: invoice.operator_id.clone(),
            name: invoice.operator_name.clone(),
        },
        payment,
        reference: invoice.reference.as_ref().map(|r| r.code_def.clone()),
        reference_type: invoice.reference.as_ref().map(|r| r.kind.to_string()),
        reference_desc: None,
        comments: invoice
            .comments
            .iter()
            .map(|c| {
                (
                    format!("cmt{}", c.line.to_string().to_ascii_lowercase()),
                    c.text.clone(),
                )
            })
            .collect(),
        currency,
    }
}

/// Checks the DGI's calculation against `expected` (the gateway's computation with the
/// DGI's own rates): every figure the DGI gave must be equal.
pub(super) fn check(calculation: &Calculation, expected: &Totals) -> Result<(), CertifyError> {
    let mismatch = |field: String, dgi: Decimal, own: Decimal| CertifyError::TotalsMismatchDgi {
        field,
        dgi: dgi.to_string(),
        expected: own.to_string(),
    };
    if calculation.total != expected.total {
        return Err(mismatch("total".into(), calculation.total, expected.total));
    }
    if calculation.vat_total != expected.vat() {
        return Err(mismatch(
            "vtotal".into(),
            calculation.vat_total,
            expected.vat(),
        ));
    }
    if let Some(ts) = calculation.specific_tax {
        if ts != expected.specific_tax {
            return Err(mismatch("ts".into(), ts, expected.specific_tax));
        }
    }
    for group in TaxGroup::all() {
        let i = group.index();
        let letter = group.letter().to_ascii_lowercase();
        let ttc = expected.group_ttc[i];
        let vat = expected.group_vat[i];
        let figures = [
            ("ta", calculation.group_ttc[i], ttc),
            ("va", calculation.group_vat[i], vat),
            ("ha", calculation.group_ht[i], ttc - vat),
        ];
        for (prefix, dgi, own) in figures {
            if let Some(dgi) = dgi {
                if dgi != own {
                    return Err(mismatch(format!("{prefix}{letter}"), dgi, own));
                }
            }
        }
    }
    Ok(())
}

/// The rates the calculation names that differ from `rates` (the DGI changed them).
pub(super) fn changed_rates(calculation: &Calculation, rates: &Rates) -> Vec<char> {
    TaxGroup::all()
        .filter(|group| {
            let i = group.index();
            match calculation.rates[i] {
                Some(dgi) => dgi != rates[i].unwrap_or(Decimal::ZERO),
                None => false,
            }
        })
        .map(|group| group.letter())
        .collect()
}

/// The DGI's totals, as the intent keeps them (sent again with a confirm when settling).
pub(super) fn totals_of(
    calculation: &Calculation,
    usd_equivalent: Option<Decimal>,
) -> DeviceTotals {
    let pick = |amounts: &[Option<Decimal>; 16]| {
        TaxGroup::all()
            .zip(amounts.iter())
            .filter_map(|(group, amount)| {
                amount.filter(|a| !a.is_zero()).map(|a| (group.letter(), a))
            })
            .collect::<Vec<_>>()
    };
    DeviceTotals {
        total: calculation.total,
        vat: calculation.vat_total,
        group_ttc: pick(&calculation.group_ttc),
        group_vat: pick(&calculation.group_vat),
        specific_tax: calculation.specific_tax.unwrap_or(Decimal::ZERO),
        usd_equivalent,
        mcur: None,
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal_macros::dec;

    use serde_json::json;

    use super::*;
    use crate::certify::invoice::tests::cases::{credit, DEF};
    use crate::certify::invoice::tests::{check_with, no_wire, seller, with_items, REFERENCE};

    fn reference() -> ValidInvoice {
        check_with(REFERENCE.as_bytes(), no_wire).unwrap()
    }

    fn json_of(invoice: &ValidInvoice, cdf: CdfCurrency, anonymous: bool) -> String {
        serde_json::to_string(&request_of(invoice, &seller(), cdf, anonymous)).unwrap()
    }

    /// The web API's bytes are pinned: each field as the DGI reads it.
    #[test]
    fn invoices_as_the_dgi_s_json() {
        assert_eq!(
            json_of(&reference(), CdfCurrency::Omit, false),
            REFERENCE_JSON
        );
        let mut v = crate::certify::invoice::tests::reference();
        credit(&mut v, "EA", DEF, Some("RAM"));
        v["curCode"] = json!("USD");
        v["curRate"] = json!("2850.5");
        v["curDate"] = json!("2026-02-28");
        v["cmtc"] = json!("Merci");
        v["items"][1]["taxSpecificValue"] = json!("10%");
        v["items"][1]["taxSpecificAmount"] = json!("3.00");
        v["items"][1]["originalPrice"] = json!("35");
        v["items"][1]["priceModification"] = json!("remise");
        v["payments"] = json!([{"name": "MOBILEMONEY", "amount": "1233"}]);
        let invoice = check_with(v.to_string().as_bytes(), no_wire).unwrap();
        assert_eq!(
            json_of(&invoice, CdfCurrency::Omit, false),
            CREDIT_NOTE_JSON
        );
        let anonymous = with_items(
            "ht",
            json!([{"name": "X", "type": "TAX", "price": "1", "quantity": "1", "taxGroup": "P"}]),
        );
        let invoice = check_with(anonymous.to_string().as_bytes(), no_wire).unwrap();
        assert_eq!(
            json_of(&invoice, CdfCurrency::Rate(Decimal::ONE), true),
            ANONYMOUS_JSON
        );
    }

    const REFERENCE_JSON: &str = r#"{"nif":"A1234567B","rn":"FC0002","mode":"ttc","isf":"ISF01","type":"FV","items":[{"code":"LR 1515","type":"BIE","name":"STYLO BIC","price":600.00,"quantity":2.0,"taxGroup":"B"},{"code":" ---DEEE","type":"SER","name":"MAIN D'OEUVRE","price":30.00,"quantity":1.0,"taxGroup":"B"}],"client":{"nif":"A000000A","name":"DUPONT","contact":"+330562380000","address":"25 rue du taur 31850 MONTRABE","type":"PM"},"operator":{"id":"01","name":"ADMIN"},"payment":[{"name":"ESPECES","amount":1230.00,"currencyCode":"CDF","currencyRate":1}]}"#;
    const CREDIT_NOTE_JSON: &str = r#"{"nif":"A1234567B","rn":"FC0002","mode":"ttc","isf":"ISF01","type":"EA","items":[{"code":"LR 1515","type":"BIE","name":"STYLO BIC","price":600.00,"quantity":2.0,"taxGroup":"B"},{"code":" ---DEEE","type":"SER","name":"MAIN D'OEUVRE","price":30.00,"quantity":1.0,"taxGroup":"B","taxSpecificValue":10,"taxSpecificAmount":3.00,"originalPrice":35,"priceModification":"remise"}],"client":{"nif":"A000000A","name":"DUPONT","contact":"+330562380000","address":"25 rue du taur 31850 MONTRABE","type":"PM"},"operator":{"id":"01","name":"ADMIN"},"payment":[{"name":"MOBILEMONEY","amount":1233,"currencyCode":"CDF","currencyRate":1}],"reference":"4B2RQ5DXMT4N4AODOS5H4YXR","referenceType":"RAM","cmtc":"Merci","curCode":"USD","curDate":"2026-02-28T00:00:00","curRate":2850.5}"#;
    const ANONYMOUS_JSON: &str = r#"{"nif":"A1234567B","rn":"T-1","mode":"ht","isf":"ISF01","type":"FV","items":[{"code":"","type":"TAX","name":"X","price":1,"quantity":1,"taxGroup":"P"}],"client":{"nif":"","name":"","contact":"","address":"","type":"PP"},"operator":{"id":"","name":"ADMIN"},"payment":[],"curCode":"CDF","curRate":1}"#;

    /// The DGI's calculation of the reference example at 16 % in group B.
    fn calculation() -> Calculation {
        let mut group_ttc = [None; 16];
        let mut group_vat = [None; 16];
        let mut group_ht = [None; 16];
        group_ttc[1] = Some(dec!(1230.00));
        group_vat[1] = Some(dec!(169.66));
        group_ht[1] = Some(dec!(1060.34));
        Calculation {
            uid: "u".into(),
            rates: [None; 16],
            group_ttc,
            group_ht,
            group_vat,
            specific_tax: None,
            total: dec!(1230.00),
            vat_total: dec!(169.66),
        }
    }

    fn dgi_rates() -> Rates {
        let mut rates = [None; TaxGroup::COUNT];
        rates[1] = Some(dec!(16));
        rates
    }

    #[test]
    fn the_dgi_s_calculation_is_checked_figure_by_figure() {
        let expected = reference().expected_totals(&dgi_rates()).unwrap();
        assert!(check(&calculation(), &expected).is_ok());
        let mut off = calculation();
        off.group_vat[1] = Some(dec!(169.65));
        match check(&off, &expected) {
            Err(CertifyError::TotalsMismatchDgi {
                field,
                dgi,
                expected,
            }) => assert_eq!(
                (field.as_str(), dgi.as_str(), expected.as_str()),
                ("vab", "169.65", "169.66")
            ),
            other => panic!("{other:?}"),
        }
        let mut total = calculation();
        total.total = dec!(1230.01);
        assert!(matches!(
            check(&total, &expected),
            Err(CertifyError::TotalsMismatchDgi { field, .. }) if field == "total"
        ));
    }
}
