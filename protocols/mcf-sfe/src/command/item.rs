//! 31h: one item line, its optional parts, and its DATA.

use rust_decimal::{Decimal, RoundingStrategy};

use crate::fields::{self, DataError, FieldError};
use crate::types::{parse_enum, ItemType, TaxGroup};

/// A specific tax on an item line (outside the VAT base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecificTax {
    /// Rate in percent, if the tax is a rate.
    pub rate: Option<Decimal>,
    /// Amount of the tax for the line.
    pub amount: Decimal,
}

/// A price modification on an item line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceChange {
    /// Price before the modification.
    pub original_price: Decimal,
    /// What the modification was.
    pub description: String,
}

/// 31h: one item line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Label.
    pub name: String,
    /// Item code, if any.
    pub code: Option<String>,
    /// Kind.
    pub item_type: ItemType,
    /// VAT group.
    pub group: TaxGroup,
    /// The group's rate in percent, as the device reported it in C1h.
    pub rate: Decimal,
    /// Line amount: price x quantity (HT in `ht` mode, TTC in `ttc` mode), 2 decimals.
    pub line_amount: Decimal,
    /// Unit price, 2 decimals.
    pub price: Decimal,
    /// Quantity, up to 3 decimals.
    pub quantity: Decimal,
    /// Specific tax, if any.
    pub specific_tax: Option<SpecificTax>,
    /// Price modification, if any.
    pub price_change: Option<PriceChange>,
}

impl Item {
    /// A plain line (no code, specific tax or price change) whose line amount is computed
    /// from `price` and `quantity`; `None` when the product is beyond `Decimal`'s range.
    pub fn new(
        name: impl Into<String>,
        item_type: ItemType,
        group: TaxGroup,
        rate: Decimal,
        price: Decimal,
        quantity: Decimal,
    ) -> Option<Item> {
        Some(Item {
            name: name.into(),
            code: None,
            item_type,
            group,
            rate,
            line_amount: Item::line_amount_of(price, quantity)?,
            price,
            quantity,
            specific_tax: None,
            price_change: None,
        })
    }

    /// The line amount the device expects: price x quantity rounded half away from zero to
    /// 2 places; `None` when the product is beyond `Decimal`'s range.
    pub fn line_amount_of(price: Decimal, quantity: Decimal) -> Option<Decimal> {
        price
            .checked_mul(quantity)
            .map(|v| v.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
    }
}

pub(super) fn encode_item(item: &Item) -> Result<String, FieldError> {
    if item.name.is_empty() {
        return Err(FieldError::Empty { field: "item name" });
    }
    let mut out = fields::escape("item name", &item.name)?;
    if let Some(code) = &item.code {
        out.push('\n');
        out.push_str(&fields::escape("item code", code)?);
    }
    out.push('\t');
    out.push_str(&format!(
        "{},{}{}%{}",
        item.item_type,
        item.group,
        fields::amount("tax rate", item.rate)?,
        fields::amount("line amount", item.line_amount)?
    ));
    out.push('\t');
    out.push_str(&fields::amount("price", item.price)?);
    if item.quantity != Decimal::ONE {
        out.push('*');
        out.push_str(&fields::quantity("quantity", item.quantity)?);
    }
    if let Some(tax) = &item.specific_tax {
        out.push_str(";T");
        if let Some(rate) = tax.rate {
            out.push_str(&fields::amount("specific tax rate", rate)?);
            out.push('%');
        }
        out.push(',');
        out.push_str(&fields::amount("specific tax amount", tax.amount)?);
    }
    if let Some(change) = &item.price_change {
        out.push('\t');
        out.push_str(&fields::amount("original price", change.original_price)?);
        out.push(',');
        out.push_str(&fields::escape("price modification", &change.description)?);
    }
    Ok(out)
}

fn bad(field: &'static str, value: &str, reason: &'static str) -> DataError {
    DataError::BadField {
        field,
        value: value.to_owned(),
        reason,
    }
}

pub(super) fn parse_item(text: &str) -> Result<Item, DataError> {
    let parts: Vec<&str> = text.split('\t').collect();
    if !(3..=4).contains(&parts.len()) {
        return Err(DataError::FieldCount {
            what: "31h item (TAB-separated parts)",
            expected: "3 or 4",
            got: parts.len(),
        });
    }
    let (name, code) = match parts[0].split_once('\n') {
        Some((name, code)) => (fields::unescape(name), Some(fields::unescape(code))),
        None => (fields::unescape(parts[0]), None),
    };
    let (item_type, tax) = parts[1]
        .split_once(',')
        .ok_or_else(|| bad("item tax", parts[1], "expected ITYPE,{G}{rate}%{amount}"))?;
    let mut chars = tax.chars();
    let group = chars
        .next()
        .and_then(TaxGroup::from_letter)
        .ok_or_else(|| bad("tax group", tax, "expected a letter A to P"))?;
    let (rate, line_amount) = chars
        .as_str()
        .split_once('%')
        .ok_or_else(|| bad("item tax", tax, "expected {G}{rate}%{amount}"))?;
    let (price_qty, specific) = match parts[2].split_once(';') {
        Some((pq, ts)) => (pq, Some(ts)),
        None => (parts[2], None),
    };
    let (price, quantity) = match price_qty.split_once('*') {
        Some((p, q)) => (p, fields::parse_decimal("quantity", q)?),
        None => (price_qty, Decimal::ONE),
    };
    let specific_tax = specific.map(parse_specific_tax).transpose()?;
    let price_change = match parts.get(3) {
        Some(change) => {
            let (orig, desc) = change
                .split_once(',')
                .ok_or_else(|| bad("price modification", change, "expected ORIGPRICE,DESC"))?;
            Some(PriceChange {
                original_price: fields::parse_decimal("original price", orig)?,
                description: fields::unescape(desc),
            })
        }
        None => None,
    };
    Ok(Item {
        name,
        code,
        item_type: parse_enum("item type", item_type)?,
        group,
        rate: fields::parse_decimal("tax rate", rate)?,
        line_amount: fields::parse_decimal("line amount", line_amount)?,
        price: fields::parse_decimal("price", price)?,
        quantity,
        specific_tax,
        price_change,
    })
}

fn parse_specific_tax(text: &str) -> Result<SpecificTax, DataError> {
    let body = text
        .strip_prefix('T')
        .ok_or_else(|| bad("specific tax", text, "expected T[rate%],amount"))?;
    let (rate, amount) = body
        .split_once(',')
        .ok_or_else(|| bad("specific tax", text, "expected T[rate%],amount"))?;
    let rate = match rate {
        "" => None,
        r => Some(fields::parse_decimal(
            "specific tax rate",
            r.strip_suffix('%')
                .ok_or_else(|| bad("specific tax rate", r, "expected a rate ending in %"))?,
        )?),
    };
    Ok(SpecificTax {
        rate,
        amount: fields::parse_decimal("specific tax amount", amount)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{code, Command};
    use rust_decimal_macros::dec;

    fn stylo() -> Item {
        Item {
            name: "STYLO BIC".into(),
            code: Some("LR 1515".into()),
            item_type: ItemType::Bie,
            group: TaxGroup::from_letter('B').unwrap(),
            rate: dec!(16),
            line_amount: dec!(1200),
            price: dec!(600),
            quantity: dec!(2),
            specific_tax: None,
            price_change: None,
        }
    }

    #[test]
    fn item_matches_the_design_example() {
        let data = Command::Item(stylo()).encode().unwrap();
        assert_eq!(data, b"STYLO BIC\nLR 1515\tBIE,B16.00%1200.00\t600.00*2");
    }

    #[test]
    fn item_with_every_option_round_trips() {
        let mut item = stylo();
        item.name = "Caf\u{e9}, noir & fort".into();
        item.quantity = dec!(1.5);
        item.line_amount = dec!(900);
        item.specific_tax = Some(SpecificTax {
            rate: Some(dec!(5)),
            amount: dec!(45),
        });
        item.price_change = Some(PriceChange {
            original_price: dec!(700),
            description: "remise, 100".into(),
        });
        let command = Command::Item(item);
        let data = command.encode().unwrap();
        assert_eq!(Command::parse(code::ITEM, &data).unwrap(), command);
    }

    #[test]
    fn a_name_too_long_for_a_frame_is_refused_not_cut() {
        let mut item = stylo();
        item.name = "X".repeat(200);
        assert!(matches!(
            Command::Item(item).encode(),
            Err(FieldError::DataTooLong {
                cmd: 0x31,
                max: 219,
                ..
            })
        ));
    }
}
