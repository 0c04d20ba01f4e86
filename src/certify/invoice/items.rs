//! Item rules: name, type, group, price, quantity, specific tax, price change.

use rust_decimal::{Decimal, RoundingStrategy};

use super::header::given;
use super::json::parse_decimal;
use super::{
    code, quoted, ItemType, PriceChange, SpecificTax, TaxGroup, ValidItem, ValidationError,
    MAX_AMOUNT,
};
use crate::certify::invoice::request::{InvoiceRequest, ItemRequest};
use crate::msg;

/// `items`: at least one line, each valid.
pub(super) fn items(request: &InvoiceRequest) -> Result<Vec<ValidItem>, ValidationError> {
    let items = request.items.as_deref().unwrap_or_default();
    if items.is_empty() {
        return Err(ValidationError::at(
            code::NO_ITEMS,
            "items",
            msg!("err-no-items"),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, it)| item(it, &format!("items[{i}]")))
        .collect()
}

/// Checks an amount that must be >= 0 with at most `places` decimals and at most
/// [`MAX_AMOUNT`]; `negative` and `precise` are the codes of the first two rules.
pub(super) fn check_amount(
    value: Decimal,
    path: &str,
    places: u32,
    negative: u16,
    precise: u16,
) -> Result<(), ValidationError> {
    if value < Decimal::ZERO {
        return Err(ValidationError::at(
            negative,
            path,
            msg!("err-amount-negative", field = path, value = value),
        ));
    }
    if value.round_dp(places) != value {
        return Err(ValidationError::at(
            precise,
            path,
            msg!(
                "err-too-precise",
                field = path,
                places = places,
                value = value
            ),
        ));
    }
    if value > MAX_AMOUNT {
        return Err(out_of_range(path, value));
    }
    Ok(())
}

fn out_of_range(path: &str, value: Decimal) -> ValidationError {
    ValidationError::at(
        code::AMOUNT_OUT_OF_RANGE,
        path,
        msg!(
            "err-out-of-range",
            field = path,
            value = value,
            max = MAX_AMOUNT
        ),
    )
}

fn item(it: &ItemRequest, path: &str) -> Result<ValidItem, ValidationError> {
    let at = |field: &str| format!("{path}.{field}");
    let name = it.name.as_deref().unwrap_or_default();
    if name.trim().is_empty() {
        return Err(ValidationError::at(
            code::ITEM_NAME_EMPTY,
            &at("name"),
            msg!("err-item-name-empty", field = at("name")),
        ));
    }
    let type_text = given(&it.item_type).ok_or_else(|| ValidationError::missing(&at("type")))?;
    let item_type = ItemType::from_text(type_text).ok_or_else(|| {
        ValidationError::at(
            code::ITEM_TYPE_INVALID,
            &at("type"),
            msg!(
                "err-item-type-invalid",
                field = at("type"),
                value = quoted(type_text)
            ),
        )
    })?;
    let group_text =
        given(&it.tax_group).ok_or_else(|| ValidationError::missing(&at("taxGroup")))?;
    let mut letters = group_text.chars();
    let group = match (letters.next(), letters.next()) {
        (Some(letter), None) => TaxGroup::from_letter(letter),
        _ => None,
    }
    .ok_or_else(|| {
        ValidationError::at(
            code::TAX_GROUP_INVALID,
            &at("taxGroup"),
            msg!(
                "err-tax-group-invalid",
                field = at("taxGroup"),
                value = quoted(group_text)
            ),
        )
    })?;
    let price = it
        .price
        .ok_or_else(|| ValidationError::missing(&at("price")))?;
    check_amount(
        price,
        &at("price"),
        2,
        code::PRICE_NEGATIVE,
        code::PRICE_TOO_PRECISE,
    )?;
    let quantity = quantity(it, &at("quantity"))?;
    let line_amount = line_amount(price, quantity)
        .filter(|amount| *amount <= MAX_AMOUNT)
        .ok_or_else(|| {
            ValidationError::at(
                code::AMOUNT_OUT_OF_RANGE,
                path,
                msg!(
                    "err-line-out-of-range",
                    field = path,
                    price = price,
                    quantity = quantity,
                    max = MAX_AMOUNT
                ),
            )
        })?;
    Ok(ValidItem {
        name: name.to_owned(),
        code: given(&it.code).map(str::to_owned),
        item_type,
        group,
        price,
        quantity,
        line_amount,
        specific_tax: specific_tax(it, line_amount, path)?,
        price_change: price_change(it, price, path)?,
    })
}

/// round(price x quantity), half away from zero to 2 places, as every channel computes it;
/// `None` on overflow.
pub fn line_amount(price: Decimal, quantity: Decimal) -> Option<Decimal> {
    price
        .checked_mul(quantity)
        .map(|v| v.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
}

fn quantity(it: &ItemRequest, path: &str) -> Result<Decimal, ValidationError> {
    let quantity = it.quantity.ok_or_else(|| ValidationError::missing(path))?;
    if quantity <= Decimal::ZERO {
        return Err(ValidationError::at(
            code::QUANTITY_NOT_POSITIVE,
            path,
            msg!("err-must-be-positive", field = path, value = quantity),
        ));
    }
    if quantity.round_dp(3) != quantity {
        return Err(ValidationError::at(
            code::QUANTITY_TOO_PRECISE,
            path,
            msg!(
                "err-too-precise",
                field = path,
                places = 3u32,
                value = quantity
            ),
        ));
    }
    if quantity > MAX_AMOUNT {
        return Err(out_of_range(path, quantity));
    }
    Ok(quantity)
}

/// `taxSpecificValue` (`N[.NN]%`) and `taxSpecificAmount`:
/// - neither, or no value and a zero amount, or `0%` without an amount or with 0: none;
/// - an amount without a value: a specific tax without a rate (`;T,amount`);
/// - a value `r%` > 0: the amount is required and must be round(line amount x r / 100)
///   (half away from zero, 2 places), as in PROTOCOL.md's examples.
fn specific_tax(
    it: &ItemRequest,
    line_amount: Decimal,
    path: &str,
) -> Result<Option<SpecificTax>, ValidationError> {
    let value_path = format!("{path}.taxSpecificValue");
    let amount_path = format!("{path}.taxSpecificAmount");
    let rate = given(&it.tax_specific_value)
        .map(|text| {
            percentage(text).ok_or_else(|| {
                ValidationError::at(
                    code::SPECIFIC_VALUE_INVALID,
                    &value_path,
                    msg!(
                        "err-specific-value-invalid",
                        field = &value_path,
                        value = quoted(text)
                    ),
                )
            })
        })
        .transpose()?;
    if let Some(amount) = it.tax_specific_amount {
        check_amount(
            amount,
            &amount_path,
            2,
            code::SPECIFIC_AMOUNT_INVALID,
            code::SPECIFIC_AMOUNT_INVALID,
        )?;
    }
    match (rate, it.tax_specific_amount) {
        (None, None) => Ok(None),
        (None, Some(amount)) if amount.is_zero() => Ok(None),
        (None, Some(amount)) => Ok(Some(SpecificTax { rate: None, amount })),
        (Some(rate), None) if rate.is_zero() => Ok(None),
        (Some(rate), None) => Err(ValidationError::at(
            code::SPECIFIC_TAX_INCOHERENT,
            &amount_path,
            msg!(
                "err-specific-amount-missing",
                value_field = &value_path,
                rate = rate,
                field = &amount_path
            ),
        )),
        (Some(rate), Some(amount)) => {
            let expected = line_amount
                .checked_mul(rate)
                .and_then(|v| v.checked_div(Decimal::ONE_HUNDRED))
                .map(|v| v.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
                .filter(|v| *v <= MAX_AMOUNT)
                .ok_or_else(|| out_of_range(&amount_path, amount))?;
            if amount != expected {
                return Err(ValidationError::at(
                    code::SPECIFIC_TAX_INCOHERENT,
                    &amount_path,
                    msg!(
                        "err-specific-amount-wrong",
                        field = &amount_path,
                        amount = amount,
                        rate = rate,
                        line_amount = line_amount,
                        expected = expected
                    ),
                ));
            }
            Ok((!rate.is_zero()).then_some(SpecificTax {
                rate: Some(rate),
                amount,
            }))
        }
    }
}

/// `N[.NN]%`, N >= 0.
fn percentage(text: &str) -> Option<Decimal> {
    let rate = parse_decimal(text.strip_suffix('%')?).ok()?;
    (!rate.is_sign_negative() && rate.round_dp(2) == rate && rate <= MAX_AMOUNT).then_some(rate)
}

/// `originalPrice` and `priceModification`: a description needs an original price; an
/// original price that differs from `price` needs a description; an original price equal to
/// `price` with no description is no change.
fn price_change(
    it: &ItemRequest,
    price: Decimal,
    path: &str,
) -> Result<Option<PriceChange>, ValidationError> {
    let original_path = format!("{path}.originalPrice");
    let text_path = format!("{path}.priceModification");
    if let Some(original) = it.original_price {
        check_amount(
            original,
            &original_path,
            2,
            code::ORIGINAL_PRICE_INVALID,
            code::ORIGINAL_PRICE_INVALID,
        )?;
    }
    match (it.original_price, given(&it.price_modification)) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(ValidationError::at(
            code::PRICE_CHANGE_INCOHERENT,
            &original_path,
            msg!(
                "err-price-change-without-original",
                text_field = &text_path,
                field = &original_path
            ),
        )),
        (Some(original), None) if original == price => Ok(None),
        (Some(original), None) => Err(ValidationError::at(
            code::PRICE_CHANGE_INCOHERENT,
            &text_path,
            msg!(
                "err-price-change-unexplained",
                original_field = &original_path,
                original = original,
                price = price,
                field = &text_path
            ),
        )),
        (Some(original), Some(text)) => Ok(Some(PriceChange {
            original_price: original,
            description: text.to_owned(),
        })),
    }
}
