//! The checks of an invoice request's parts, each failing with the Benin error code the
//! DGI would answer (docs/web-api.md §7): the header (3, 99), the items (8, 9, 99), the payments
//! (7, 99), the client (99) and a credit note's reference (4, 5, 11).

use mcf_sfe::command::{Item, PriceChange, SpecificTax};
use mcf_sfe::types::{InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup};
use rust_decimal::Decimal;

use super::dgi_error::DgiError;
use super::lenient::{decimal, required_decimal, text};
use super::reference::CLIENT_TYPES;
use super::request::{ClientRequest, InvoiceRequest, ItemRequest, PaymentRequest};
use super::state::{EmcfState, FinalizedInvoice};
use crate::config::Rates;
use crate::fiscal::CODE_DEF_LEN;
use crate::totals::round_amount;

/// The groups a `TAX` item may use.
const TAX_ITEM_GROUPS: [char; 2] = ['L', 'N'];

/// `nif`, which must be the e-MCF's.
pub(crate) fn check_nif(request: &InvoiceRequest, expected: &str) -> Result<(), DgiError> {
    match text("nif", &request.nif)? {
        Some(nif) if nif == expected => Ok(()),
        Some(nif) => Err(DgiError::processing(format!(
            "le NIF {nif} n'est pas celui de l'e-MCF ({expected})"
        ))),
        None => Err(DgiError::processing("nif manquant")),
    }
}

/// `type`, any case (error 3).
pub(crate) fn invoice_type(request: &InvoiceRequest) -> Result<InvoiceType, DgiError> {
    let given = text("type", &request.invoice_type)?.unwrap_or_default();
    given
        .to_ascii_uppercase()
        .parse()
        .map_err(|_| DgiError::BadInvoiceType(given))
}

/// `mode`: `ht` or `ttc`, any case.
pub(crate) fn price_mode(request: &InvoiceRequest) -> Result<PriceMode, DgiError> {
    let given = text("mode", &request.mode)?.unwrap_or_default();
    given
        .to_ascii_lowercase()
        .parse()
        .map_err(|_| DgiError::processing(format!("mode invalide: {given:?} (ht ou ttc)")))
}

/// `rn`, required.
pub(crate) fn invoice_number(request: &InvoiceRequest) -> Result<String, DgiError> {
    text("rn", &request.rn)?.ok_or_else(|| DgiError::processing("rn manquant"))
}

/// The item lines, as the device arithmetic takes them (error 8 when there is none).
pub(crate) fn items(request: &InvoiceRequest, rates: &Rates) -> Result<Vec<Item>, DgiError> {
    let lines = request.items.as_deref().unwrap_or_default();
    if lines.is_empty() {
        return Err(DgiError::NoItems);
    }
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| item(index, line, rates))
        .collect()
}

/// One item line.
fn item(index: usize, line: &ItemRequest, rates: &Rates) -> Result<Item, DgiError> {
    let field = |name: &str| format!("items[{index}].{name}");
    let name = text(&field("name"), &line.name)?
        .ok_or_else(|| DgiError::processing(format!("{} manquant", field("name"))))?;
    let kind_text = text(&field("type"), &line.item_type)?.unwrap_or_default();
    let kind: ItemType = kind_text.to_ascii_uppercase().parse().map_err(|_| {
        DgiError::processing(format!(
            "{}: {kind_text:?} n'est pas BIE, SER ou TAX",
            field("type")
        ))
    })?;
    let group = tax_group(index, line)?;
    if kind == ItemType::Tax && !TAX_ITEM_GROUPS.contains(&group.letter()) {
        return Err(DgiError::BadTaxGroup {
            item: index,
            reason: format!("un article TAX est en groupe L ou N, pas {group}"),
        });
    }
    let price = required_decimal(&field("price"), &line.price)?;
    if price < Decimal::ZERO {
        return Err(DgiError::processing(format!(
            "{}: le prix {price} est négatif",
            field("price")
        )));
    }
    let quantity = required_decimal(&field("quantity"), &line.quantity)?;
    if quantity <= Decimal::ZERO {
        return Err(DgiError::processing(format!(
            "{}: la quantité {quantity} doit être positive (un avoir porte des valeurs absolues)",
            field("quantity")
        )));
    }
    let rate = rates[group.index()].unwrap_or(Decimal::ZERO);
    let mut item = Item::new(name, kind, group, rate, price, quantity)
        .ok_or_else(|| DgiError::processing(format!("items[{index}]: montant hors limites")))?;
    item.code = text(&field("code"), &line.code)?;
    let specific_rate = decimal(&field("taxSpecificValue"), &line.tax_specific_value)?;
    if let Some(amount) = decimal(&field("taxSpecificAmount"), &line.tax_specific_amount)? {
        if amount < Decimal::ZERO {
            return Err(DgiError::processing(format!(
                "{}: la taxe spécifique {amount} est négative",
                field("taxSpecificAmount")
            )));
        }
        item.specific_tax = Some(SpecificTax {
            rate: specific_rate,
            amount: round_amount(amount),
        });
    }
    if let Some(original_price) = decimal(&field("originalPrice"), &line.original_price)? {
        item.price_change = Some(PriceChange {
            original_price,
            description: text(&field("priceModification"), &line.price_modification)?
                .unwrap_or_default(),
        });
    }
    Ok(item)
}

/// `taxGroup`, one letter A..P in any case (error 9).
fn tax_group(index: usize, line: &ItemRequest) -> Result<TaxGroup, DgiError> {
    let given = text(&format!("items[{index}].taxGroup"), &line.tax_group)?.unwrap_or_default();
    let mut letters = given.chars();
    let group = match (letters.next(), letters.next()) {
        (Some(letter), None) => TaxGroup::from_letter(letter.to_ascii_uppercase()),
        _ => None,
    };
    group.ok_or_else(|| DgiError::BadTaxGroup {
        item: index,
        reason: format!("{given:?} n'est pas une lettre de A à P"),
    })
}

/// The payment lines: each `name` a payment type (error 7), each amount a number (99).
pub(crate) fn check_payments(request: &InvoiceRequest) -> Result<(), DgiError> {
    let lines: &[PaymentRequest] = request.payment.as_deref().unwrap_or_default();
    for (index, line) in lines.iter().enumerate() {
        let name = text(&format!("payment[{index}].name"), &line.name)?.unwrap_or_default();
        if PaymentMethod::from_name(&name.to_ascii_uppercase()).is_none() {
            return Err(DgiError::BadPaymentType(name));
        }
        let field = format!("payment[{index}].amount");
        if let Some(amount) = decimal(&field, &line.amount)? {
            if amount < Decimal::ZERO {
                return Err(DgiError::processing(format!(
                    "{field}: le montant {amount} est négatif"
                )));
            }
        }
        decimal(
            &format!("payment[{index}].currencyRate"),
            &line.currency_rate,
        )?;
    }
    Ok(())
}

/// The client, when given: its `type` is required and one of [`CLIENT_TYPES`] (99).
pub(crate) fn check_client(client: Option<&ClientRequest>) -> Result<(), DgiError> {
    let Some(client) = client else {
        return Ok(());
    };
    let given = text("client.type", &client.client_type)?
        .ok_or_else(|| DgiError::processing("client.type manquant"))?;
    let upper = given.to_ascii_uppercase();
    if CLIENT_TYPES.iter().any(|&(code, _)| code == upper) {
        Ok(())
    } else {
        Err(DgiError::processing(format!(
            "client.type invalide: {given:?} (PP, PM, PC, PL ou AO)"
        )))
    }
}

/// A credit note's original: `reference` required (4), 24 characters (5), an invoice this
/// e-MCF finalized of a kind the credit note can refer to (11), `referenceType` COR, RAN,
/// RAM or RRR when given (99). `None` for the other types, whose `reference` is ignored.
pub(crate) fn credit_note_original<'s>(
    request: &InvoiceRequest,
    invoice_type: InvoiceType,
    state: &'s EmcfState,
) -> Result<Option<&'s FinalizedInvoice>, DgiError> {
    if !invoice_type.is_credit_note() {
        return Ok(None);
    }
    let reference =
        text("reference", &request.reference)?.ok_or(DgiError::ReferenceMissing(invoice_type))?;
    if reference.chars().count() != CODE_DEF_LEN {
        return Err(DgiError::ReferenceLength(reference));
    }
    if let Some(given) = text("referenceType", &request.reference_type)? {
        if given.to_ascii_uppercase().parse::<ReferenceType>().is_err() {
            return Err(DgiError::processing(format!(
                "referenceType invalide: {given:?} (COR, RAN, RAM ou RRR)"
            )));
        }
    }
    let original = state
        .original(&reference.to_ascii_uppercase())
        .filter(|original| credits(invoice_type, original.invoice_type))
        .ok_or(DgiError::OriginalNotFound(reference))?;
    Ok(Some(original))
}

/// FA credits FV/FT, EA credits EV/ET.
fn credits(credit_note: InvoiceType, original: InvoiceType) -> bool {
    use InvoiceType::{Ea, Et, Ev, Fa, Ft, Fv};
    matches!(
        (credit_note, original),
        (Fa, Fv) | (Fa, Ft) | (Ea, Ev) | (Ea, Et)
    )
}
