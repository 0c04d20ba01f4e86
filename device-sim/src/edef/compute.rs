//! From a JSON invoice request to the DGI's computation, with the device's arithmetic
//! ([`crate::totals`]): per group TTC, HT and VAT, specific taxes, totals, and the answer
//! `{"uid", "ta".."tp", "taa".."tap", "haa".."hap", "vaa".."vap", "ts", "total", "vtotal"}`.

use mcf_sfe::types::{InvoiceType, TaxGroup};
use rust_decimal::Decimal;

use super::dgi_error::DgiError;
use super::json::{JsonObject, NumberStyle};
use super::lenient::{decimal, text};
use super::request::{parse_body, InvoiceRequest};
use super::state::EmcfState;
use super::validate;
use crate::config::Rates;
use crate::totals::{round_amount, LineSums, OutOfRange};

/// What an invoice request is checked against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checks<'a> {
    /// The e-MCF's NIF.
    pub nif: &'a str,
    /// The VAT rates (`taxGroups`).
    pub rates: &'a Rates,
    /// The e-MCF's memory (originals of credit notes).
    pub state: &'a EmcfState,
}

/// The DGI's computation of one invoice request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Calculation {
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// The client's invoice number.
    pub rn: String,
    /// The original's codeDEFDGI, for a credit note.
    pub reference: Option<String>,
    /// Rate of each group A..P in percent (0 for a group without VAT).
    pub rates: [Decimal; TaxGroup::COUNT],
    /// TTC of each group.
    pub ttc: [Decimal; TaxGroup::COUNT],
    /// HT of each group.
    pub ht: [Decimal; TaxGroup::COUNT],
    /// VAT of each group.
    pub vat: [Decimal; TaxGroup::COUNT],
    /// Specific taxes (outside the groups).
    pub specific_tax: Decimal,
    /// TTC total, specific taxes included.
    pub total: Decimal,
    /// VAT total.
    pub vat_total: Decimal,
    /// The total in the foreign currency (`curTotal`), when `curRate` is positive and
    /// `curCode` is not CDF.
    pub foreign_total: Option<Decimal>,
}

/// Checks and computes the invoice request `body`.
pub(crate) fn calculate(body: &[u8], checks: &Checks<'_>) -> Result<Calculation, DgiError> {
    let request: InvoiceRequest = parse_body(body)?;
    validate::check_nif(&request, checks.nif)?;
    let invoice_type = validate::invoice_type(&request)?;
    let mode = validate::price_mode(&request)?;
    let rn = validate::invoice_number(&request)?;
    let items = validate::items(&request, checks.rates)?;
    validate::check_payments(&request)?;
    validate::check_client(request.client.as_ref())?;
    let original = validate::credit_note_original(&request, invoice_type, checks.state)?;

    let sums = items
        .iter()
        .try_fold(LineSums::default(), |sums, item| sums.with_item(item))
        .map_err(out_of_range)?;
    let subtotal = sums
        .subtotal(mode, checks.rates, None)
        .map_err(out_of_range)?;
    let mut ht = [Decimal::ZERO; TaxGroup::COUNT];
    for (i, ht) in ht.iter_mut().enumerate() {
        *ht = subtotal.group_ttc[i]
            .checked_sub(subtotal.group_vat[i])
            .ok_or_else(|| out_of_range(OutOfRange))?;
    }
    if let Some(original) = original {
        let remaining = original
            .total
            .saturating_sub(checks.state.credited(&original.code_def));
        if subtotal.total > remaining {
            return Err(DgiError::CreditExceedsOriginal {
                credit: subtotal.total,
                remaining,
                original: original.total,
            });
        }
    }
    Ok(Calculation {
        invoice_type,
        rn,
        reference: original.map(|o| o.code_def.clone()),
        rates: checks.rates.map(|rate| rate.unwrap_or(Decimal::ZERO)),
        ttc: subtotal.group_ttc,
        ht,
        vat: subtotal.group_vat,
        specific_tax: subtotal.specific_tax,
        total: subtotal.total,
        // `LineSums::subtotal` has checked that this sum is in range.
        vat_total: subtotal.vat(),
        foreign_total: foreign_total(&request, subtotal.total)?,
    })
}

/// `curTotal`: the total divided by `curRate`, rounded to 2 places, for a positive rate of
/// a currency other than CDF. A CDF invoice may leave the block out or send -1, 0 or 1.
fn foreign_total(request: &InvoiceRequest, total: Decimal) -> Result<Option<Decimal>, DgiError> {
    let rate = decimal("curRate", &request.cur_rate)?;
    let code = text("curCode", &request.cur_code)?;
    let foreign = code.is_some_and(|code| !code.eq_ignore_ascii_case("CDF"));
    match rate {
        Some(rate) if foreign && rate > Decimal::ZERO => total
            .checked_div(rate)
            .map(|value| Some(round_amount(value)))
            .ok_or_else(|| out_of_range(OutOfRange)),
        _ => Ok(None),
    }
}

fn out_of_range(_: OutOfRange) -> DgiError {
    DgiError::processing("montant hors limites")
}

impl Calculation {
    /// The success answer of `POST /api/invoice` for request `uid`.
    pub(crate) fn answer(&self, uid: &str, style: NumberStyle) -> String {
        let mut json = JsonObject::new().text("uid", uid);
        for group in TaxGroup::all() {
            json = json.decimal(&key("t", group), self.rates[group.index()], style);
        }
        for (prefix, amounts) in [("ta", &self.ttc), ("ha", &self.ht), ("va", &self.vat)] {
            for group in TaxGroup::all() {
                json = json.amount(&key(prefix, group), amounts[group.index()], style);
            }
        }
        json = json
            .amount("ts", self.specific_tax, style)
            .amount("total", self.total, style)
            .amount("vtotal", self.vat_total, style);
        if let Some(foreign) = self.foreign_total {
            json = json.amount("curTotal", foreign, style);
        }
        json.null("errorCode").null("errorDesc").finish()
    }
}

/// `prefix` followed by the group's lowercase letter: `ta`, `tab`, `hap`...
fn key(prefix: &str, group: TaxGroup) -> String {
    format!("{prefix}{}", group.letter().to_ascii_lowercase())
}

#[cfg(test)]
mod tests;
