//! Amounts and times for people, per language. Inside, amounts are `Decimal` and times UTC;
//! these functions are for the edges (dashboard, CLI tables, CSV when asked).
//!
//! - Amounts: French `168 040,00 CDF` (CLDR: a narrow no-break space U+202F between thousands,
//!   a decimal comma, a no-break space U+00A0 before the currency), English `168,040.00 CDF`.
//!   Two decimal places at least, more when the amount has them (rates, quantities).
//! - Times: in the organization's zone, with its offset shown: French `23/11/2026 14:05:03
//!   UTC+01:00`, English `2026-11-23 14:05:03 UTC+01:00`.
//! - Texts from outside (an invoice's client, items and comments, a name an administrator
//!   typed): [`visible`] shows the characters that would forge what a person reads around them
//!   ([`is_hidden_effect`]: control characters, bidirectional and line marks) as `⟨LF⟩`,
//!   `⟨U+202E⟩`. The same definition refuses them in new invoices (codes 71, 73) and in names.

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, Utc};
use rust_decimal::Decimal;

use super::Lang;

/// The thousands separator of French amounts (narrow no-break space).
pub const FR_GROUP: char = '\u{202F}';
/// The space before a currency code in French (no-break space).
pub const FR_BEFORE_CURRENCY: char = '\u{00A0}';

/// `value` with its thousands grouped, at least two decimal places.
pub fn number(value: Decimal, lang: Lang) -> String {
    let places = value.scale().max(2);
    let text = format!("{:.*}", places as usize, value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let point = match lang {
        Lang::Fr => ',',
        Lang::En => '.',
    };
    let sign = if value.is_sign_negative() && !value.is_zero() {
        "-"
    } else {
        ""
    };
    format!("{sign}{}{point}{fraction}", grouped(whole, lang))
}

/// An amount as the API writes it whatever the reader's language: exactly 2 decimals, a
/// point, no grouping (`0.03`, `80.00`).
pub fn plain_amount(value: Decimal) -> String {
    let mut value = value;
    value.rescale(2);
    value.to_string()
}

/// A quantity as sent, without padding (`2`, `1,5`, `0,125`; amounts keep two places,
/// quantities do not).
pub fn quantity(value: Decimal, lang: Lang) -> String {
    let text = value.normalize().to_string();
    match lang {
        Lang::Fr => text.replace('.', ","),
        Lang::En => text,
    }
}

/// A count with its thousands grouped: `12 500` / `12,500`.
pub fn integer(value: u64, lang: Lang) -> String {
    grouped(&value.to_string(), lang)
}

/// `digits` with the language's thousands separator every three digits from the right.
fn grouped(digits: &str, lang: Lang) -> String {
    let group = match lang {
        Lang::Fr => FR_GROUP,
        Lang::En => ',',
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(group);
        }
        out.push(digit);
    }
    out
}

/// An amount with its currency: `168 040,00 CDF` / `168,040.00 CDF`.
pub fn amount(value: Decimal, currency: &str, lang: Lang) -> String {
    let space = match lang {
        Lang::Fr => FR_BEFORE_CURRENCY,
        Lang::En => ' ',
    };
    format!("{}{space}{currency}", number(value, lang))
}

/// `UTC+01:00`, `UTC-03:30`, `UTC+00:00`.
pub fn offset(offset: FixedOffset) -> String {
    let seconds = offset.local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("UTC{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// A date and time to the second, as each reader writes it.
fn date_time_pattern(lang: Lang) -> &'static str {
    match lang {
        Lang::Fr => "%d/%m/%Y %H:%M:%S",
        Lang::En => "%Y-%m-%d %H:%M:%S",
    }
}

/// An instant in the zone `zone`, to the second, with the offset shown.
pub fn date_time(at: DateTime<Utc>, zone: FixedOffset, lang: Lang) -> String {
    let local = at.with_timezone(&zone);
    format!("{} {}", local.format(date_time_pattern(lang)), offset(zone))
}

/// A device's own date and time (its clock, no zone), to the second: a certification's
/// `dateTime`, a box's last DGI contact.
pub fn device_date_time(at: &NaiveDateTime, lang: Lang) -> String {
    at.format(date_time_pattern(lang)).to_string()
}

/// A calendar date as each reader writes it.
fn date_pattern(lang: Lang) -> &'static str {
    match lang {
        Lang::Fr => "%d/%m/%Y",
        Lang::En => "%Y-%m-%d",
    }
}

/// The calendar date of an instant in the zone `zone`.
pub fn date(at: DateTime<Utc>, zone: FixedOffset, lang: Lang) -> String {
    let local = at.with_timezone(&zone);
    local.format(date_pattern(lang)).to_string()
}

/// A calendar date given as text in ISO 8601 (`2026-11-20`, or a date-time whose date is
/// taken: an invoice's `curDate`), as the reader writes it (`20/11/2026`); a text that is no
/// such date is shown as it is.
pub fn day(text: &str, lang: Lang) -> String {
    text.get(..10)
        .and_then(|date| NaiveDate::parse_from_str(date, "%Y-%m-%d").ok())
        .map_or_else(
            || text.to_owned(),
            |date| date.format(date_pattern(lang)).to_string(),
        )
}

/// The characters that change the direction or the lines of a text without being control
/// characters: ALM (U+061C), LRM and RLM (U+200E, U+200F), the line and paragraph separators
/// (U+2028, U+2029), the embeddings and overrides LRE RLE PDF LRO RLO (U+202A..U+202E) and
/// the isolates LRI RLI FSI PDI (U+2066..U+2069).
pub fn is_layout_mark(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether `c` would change what a person reads around it instead of being read: a control
/// character (C0 including TAB, CR and LF, DEL, C1) or a [layout mark](is_layout_mark). The
/// one definition: an invoice's texts are refused with one (codes 71, 73), and so is a name
/// an administrator types; [`visible`] shows them in what older releases kept.
pub fn is_hidden_effect(c: char) -> bool {
    c.is_control() || is_layout_mark(c)
}

/// `text` as a person may read it on a terminal, a page or a receipt: each character of
/// [`is_hidden_effect`] shown as what it is (`⟨LF⟩`, `⟨CR⟩`, `⟨TAB⟩`, `⟨ESC⟩`, else its code
/// point: `⟨U+202E⟩`), so that a text kept by an older release cannot forge a line or reorder
/// one. Only for display: the register, the exports (CSV, JSON) and the API keep the exact text.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_effect) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !is_hidden_effect(c) {
            out.push(c);
            continue;
        }
        out.push('⟨');
        match c {
            '\n' => out.push_str("LF"),
            '\r' => out.push_str("CR"),
            '\t' => out.push_str("TAB"),
            '\u{1B}' => out.push_str("ESC"),
            other => out.push_str(&format!("U+{:04X}", u32::from(other))),
        }
        out.push('⟩');
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn hidden_effects_are_shown_as_what_they_are() {
        assert!(matches!(
            visible("Kinshasa Matériaux SARL"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            visible("Nom\r\nHONEST SARL\t\u{1b}[2J"),
            "Nom⟨CR⟩⟨LF⟩HONEST SARL⟨TAB⟩⟨ESC⟩[2J"
        );
        assert_eq!(
            visible("abc\u{202E}fed\u{2066}\u{85}\u{7f}"),
            "abc⟨U+202E⟩fed⟨U+2066⟩⟨U+0085⟩⟨U+007F⟩"
        );
        assert_eq!(visible("a\u{2028}b\u{61C}"), "a⟨U+2028⟩b⟨U+061C⟩");
        // What French typography puts in texts is not a hidden effect.
        assert_eq!(
            visible("«\u{a0}x\u{a0}» 1\u{202F}000"),
            "«\u{a0}x\u{a0}» 1\u{202F}000"
        );
        for c in [
            '\u{200E}', '\u{200F}', '\u{202A}', '\u{2069}', '\0', '\u{9f}',
        ] {
            assert!(is_hidden_effect(c), "{c:?}");
        }
        for c in ['\u{200B}', '\u{2070}', '\u{202F}', 'é', ' '] {
            assert!(!is_hidden_effect(c), "{c:?}");
        }
    }

    #[test]
    fn an_iso_day_as_each_reader_writes_it() {
        assert_eq!(day("2026-11-20", Lang::Fr), "20/11/2026");
        assert_eq!(day("2026-11-20", Lang::En), "2026-11-20");
        assert_eq!(day("2026-11-20T10:00:00", Lang::Fr), "20/11/2026");
        assert_eq!(day("20 nov.", Lang::Fr), "20 nov.");
        assert_eq!(day("-", Lang::Fr), "-");
    }

    #[test]
    fn quantities_keep_their_own_places() {
        assert_eq!(quantity(dec!(2.000), Lang::Fr), "2");
        assert_eq!(quantity(dec!(0.125), Lang::Fr), "0,125");
        assert_eq!(quantity(dec!(1.5), Lang::En), "1.5");
    }

    #[test]
    fn amounts_as_a_french_or_english_reader_writes_them() {
        assert_eq!(
            amount(dec!(168040.00), "CDF", Lang::Fr),
            "168\u{202F}040,00\u{00A0}CDF"
        );
        assert_eq!(amount(dec!(168040), "CDF", Lang::En), "168,040.00 CDF");
        assert_eq!(
            number(dec!(1234567.5), Lang::Fr),
            "1\u{202F}234\u{202F}567,50"
        );
        assert_eq!(number(dec!(999.999), Lang::En), "999.999");
        assert_eq!(number(dec!(-1000), Lang::En), "-1,000.00");
        assert_eq!(number(dec!(0), Lang::Fr), "0,00");
        assert_eq!(number(dec!(-0.00), Lang::Fr), "0,00");
        assert_eq!(number(dec!(100), Lang::En), "100.00");
        assert_eq!(integer(12500, Lang::Fr), "12\u{202F}500");
        assert_eq!(integer(7, Lang::En), "7");
    }

    #[test]
    fn times_in_the_zone_with_the_offset_shown() {
        let at = DateTime::parse_from_rfc3339("2026-11-23T23:30:05Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let kinshasa = FixedOffset::east_opt(3600).unwrap_or(FixedOffset::east_opt(0).unwrap());
        assert_eq!(
            date_time(at, kinshasa, Lang::Fr),
            "24/11/2026 00:30:05 UTC+01:00"
        );
        assert_eq!(
            date_time(at, kinshasa, Lang::En),
            "2026-11-24 00:30:05 UTC+01:00"
        );
        assert_eq!(date(at, kinshasa, Lang::Fr), "24/11/2026");
        let west = FixedOffset::west_opt(12600).unwrap_or(kinshasa);
        assert_eq!(offset(west), "UTC-03:30");
    }
}
