//! A valid invoice as the DGI's invoice request (EDEF-API.md §3), and the DGI's calculation
//! checked against the gateway's own computation (no tolerance: a difference names the field
//! and both values, and the request is cancelled), then kept as the intent's totals.

use edef::{
    Calculation, Currency, InvoiceRequest, RequestClient, RequestItem, RequestOperator,
    RequestPayment,
};
use mcf_sfe::types::TaxGroup;
use rust_decimal::Decimal;

use super::settings::CdfCurrency;
use crate::certify::invoice::{Seller, Totals, ValidInvoice};
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
            name: p.method.name().to_owned(),
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
