//! Reading request values the way the DGI tolerates them: a number may come as a JSON number
//! (`12.5`, `1.25e1`) or as a string (`"12.50"`), and is read exactly into a [`Decimal`] from
//! its text, never through `f64`. A text field may come as a string or as a bare number.

use rust_decimal::Decimal;
use serde_json::value::RawValue;

use super::dgi_error::DgiError;

/// The value of a request member, still as the client wrote it.
pub(crate) type Raw = Option<Box<RawValue>>;

/// The decimal in `raw`, or `None` when it is absent, `null` or an empty string. `field`
/// names the member in the error (e.g. `items[2].price`).
pub(crate) fn decimal(field: &str, raw: &Raw) -> Result<Option<Decimal>, DgiError> {
    let Some(text) = text(field, raw)? else {
        return Ok(None);
    };
    parse_decimal(&text).map(Some).ok_or_else(|| {
        DgiError::processing(format!("{field}: {text:?} n'est pas un nombre valide"))
    })
}

/// Like [`decimal`], but an absent value is an error.
pub(crate) fn required_decimal(field: &str, raw: &Raw) -> Result<Decimal, DgiError> {
    decimal(field, raw)?.ok_or_else(|| DgiError::processing(format!("{field} manquant")))
}

/// The trimmed text in `raw` (a string, or a number's digits), or `None` when it is absent,
/// `null` or empty after trimming. An object, an array or a boolean is an error (99).
pub(crate) fn text(field: &str, raw: &Raw) -> Result<Option<String>, DgiError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let json = raw.get().trim();
    let text = if json.starts_with('"') {
        serde_json::from_str::<String>(json)
            .map_err(|e| DgiError::processing(format!("{field}: chaîne invalide ({e})")))?
    } else if json == "null" {
        return Ok(None);
    } else if json.starts_with(['{', '[']) || json == "true" || json == "false" {
        return Err(DgiError::processing(format!(
            "{field}: une valeur simple est attendue, pas {json}"
        )));
    } else {
        json.to_owned()
    };
    let trimmed = text.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// A decimal from plain (`-12.50`) or scientific (`1.25e1`) notation; anything else
/// (underscores, spaces, commas) is not a number the DGI reads.
fn parse_decimal(text: &str) -> Option<Decimal> {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-');
    if plain {
        Decimal::from_str_exact(text).ok()
    } else if text.contains(['e', 'E']) {
        Decimal::from_scientific(text).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn raw(json: &str) -> Raw {
        Some(RawValue::from_string(json.to_owned()).unwrap())
    }

    #[test]
    fn numbers_and_strings_read_exactly() {
        assert_eq!(decimal("p", &raw("12.50")).unwrap(), Some(dec!(12.50)));
        assert_eq!(decimal("p", &raw("\"12.50\"")).unwrap(), Some(dec!(12.50)));
        assert_eq!(decimal("p", &raw("\" 7 \"")).unwrap(), Some(dec!(7)));
        assert_eq!(decimal("p", &raw("0.1")).unwrap(), Some(dec!(0.1)));
        assert_eq!(decimal("p", &raw("-3")).unwrap(), Some(dec!(-3)));
        assert_eq!(decimal("p", &raw("1.25e1")).unwrap(), Some(dec!(12.5)));
        assert_eq!(decimal("p", &raw("1E2")).unwrap(), Some(dec!(100)));
        // 0.1 + 0.2 in f64 is not 0.3; in Decimal it is.
        let sum = decimal("a", &raw("0.1")).unwrap().unwrap()
            + decimal("b", &raw("\"0.2\"")).unwrap().unwrap();
        assert_eq!(sum, dec!(0.3));
    }

    #[test]
    fn absent_null_and_blank_are_none() {
        assert_eq!(decimal("p", &None).unwrap(), None);
        assert_eq!(decimal("p", &raw("null")).unwrap(), None);
        assert_eq!(decimal("p", &raw("\"\"")).unwrap(), None);
        assert!(required_decimal("p", &raw("null")).is_err());
    }

    #[test]
    fn what_is_not_a_number_is_error_99_naming_the_field() {
        for bad in [
            "\"12,50\"",
            "\"abc\"",
            "\"1_000\"",
            "true",
            "[1]",
            "{}",
            "\"--1\"",
        ] {
            let error = decimal("items[0].price", &raw(bad)).unwrap_err();
            assert_eq!(error.code(), 99, "{bad}");
            assert!(error.to_string().contains("items[0].price"), "{error}");
        }
    }

    #[test]
    fn text_accepts_strings_and_bare_numbers() {
        assert_eq!(
            text("rn", &raw("\" F-1 \"")).unwrap().as_deref(),
            Some("F-1")
        );
        assert_eq!(text("rn", &raw("123")).unwrap().as_deref(), Some("123"));
        assert_eq!(text("rn", &raw("\"  \"")).unwrap(), None);
        assert!(text("rn", &raw("{}")).is_err());
    }
}
