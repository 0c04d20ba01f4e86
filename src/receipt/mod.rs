//! The printable fiscal block of a certified invoice: what the seed obliges every client to
//! print on the customer's document (a QR code of `qrCode`, the codeDEFDGI in clear, the
//! counters and the nim), with the date-time of the certification, the invoice's number, the
//! seller's NIF and ISF and the certified totals.
//!
//! Drawn from a register entry alone (no I/O): [`html`] a self-contained page (inline CSS, the
//! QR code as inline SVG, nothing fetched) in three [`Layout`]s; [`escpos`] the bytes for a
//! 58 or 80 mm receipt printer ([`PaperWidth`]), the QR code printed by the printer's own
//! `GS ( k` command. The API serves them under `GET /api/v1/Invoice/{rn}/receipt.html` and
//! `.../receipt.escpos`, the dashboard under `/dashboard/invoices/{env}/{seq}/receipt`.
//!
//! The heading names the document by its type ("Facture d'avoir"); a credit note's block
//! names the invoice it reduces ([`Original`], given by the caller).
//!
//! What is printed ([`block`]) is the same in both formats, in the reader's language (texts of
//! `locales/<lang>/receipt.ftl`; amounts with [`crate::i18n::format::amount`]). The date-time is
//! the device's clock as the device sent it (no time zone: the box has none), written as the
//! reader writes dates. Amounts are the device's totals, in CDF whatever the invoice's
//! currency; the USD equivalent is named as such, and an invoice made in USD shows its rate.
//!
//! Every text of the entry is printed through [`format::visible`]: a security element an
//! older release let an administrator type with a bidirectional override, or a rate date with
//! a line feed, shows as `⟨U+202E⟩` (`<U+202E>` on ESC/POS), never as what it would do. The
//! QR code encodes the exact `qrCode`.
//!
//! The golden files of both formats are in `tests/golden/receipt/` (see the tests below:
//! `UPDATE_GOLDEN=1 cargo test --lib receipt` writes them again).

pub mod escpos;
pub mod html;

use rust_decimal::Decimal;

use crate::i18n::{format, names, Lang};
use crate::model::{reference_of, RegisterEntry};
use crate::msg;

use crate::model::FISCAL_CURRENCY;

/// How the HTML block is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// A block 190 mm wide for the bottom of an A4 invoice (the default).
    #[default]
    A4,
    /// A thermal receipt of 80 mm (72 mm printable).
    Mm80,
    /// A thermal receipt of 58 mm (48 mm printable).
    Mm58,
}

impl Layout {
    /// The values `?layout=` takes, for error messages and the OpenAPI file.
    pub const ALLOWED: &'static str = "a4, 80mm, 58mm";

    /// Every layout, the default first.
    pub const ALL: [Layout; 3] = [Layout::A4, Layout::Mm80, Layout::Mm58];

    /// `a4`, `80mm`, `58mm` (any case) to a layout.
    pub fn parse(text: &str) -> Option<Layout> {
        Layout::ALL
            .into_iter()
            .find(|layout| layout.as_str().eq_ignore_ascii_case(text))
    }

    /// Its name in a query string.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::A4 => "a4",
            Layout::Mm80 => "80mm",
            Layout::Mm58 => "58mm",
        }
    }
}

/// The paper of an ESC/POS receipt printer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaperWidth {
    /// 58 mm paper: 32 characters a line in font A, QR modules of 4 dots.
    Mm58,
    /// 80 mm paper: 48 characters a line in font A, QR modules of 6 dots (the default).
    #[default]
    Mm80,
}

impl PaperWidth {
    /// The values `?width=` takes.
    pub const ALLOWED: &'static str = "58, 80";

    /// `58` or `80` to a width.
    pub fn parse(text: &str) -> Option<PaperWidth> {
        match text {
            "58" => Some(PaperWidth::Mm58),
            "80" => Some(PaperWidth::Mm80),
            _ => None,
        }
    }

    /// Characters a line in font A (12 x 24 dots: 384 and 576 printable dots).
    pub fn columns(self) -> usize {
        match self {
            PaperWidth::Mm58 => 32,
            PaperWidth::Mm80 => 48,
        }
    }

    /// The QR code's module size in dots (`GS ( k` function 167).
    pub fn qr_module(self) -> u8 {
        match self {
            PaperWidth::Mm58 => 4,
            PaperWidth::Mm80 => 6,
        }
    }
}

/// One line of the block: its label and value (plain text), and the HTML id of the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// What the value is, in the reader's language.
    pub label: String,
    /// The value, as printed.
    pub value: String,
    /// The value's element id in the HTML (`codeDEFDGI`, `counters`, `group-B-ttc`...).
    pub id: String,
}

/// What the fiscal block says, in one language, ready to be laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The heading.
    pub title: String,
    /// The page's title (names the invoice).
    pub page_title: String,
    /// The QR code's accessible name.
    pub qr_label: String,
    /// The `qrCode` string the QR code encodes.
    pub qr_code: String,
    /// The label of the codeDEFDGI, printed in clear under the QR code.
    pub code_label: String,
    /// The codeDEFDGI.
    pub code: String,
    /// A credit note's original: its codeDEFDGI and rn (none for another invoice).
    pub original: Vec<Line>,
    /// The invoice and its certification: rn, type, seller NIF and ISF, date-time, counters,
    /// nim.
    pub security: Vec<Line>,
    /// The certified totals: TTC, per tax group TTC and VAT, VAT, specific tax, USD equivalent.
    pub totals: Vec<Line>,
}

/// The invoice a credit note reduces, as its caller found it in the register: the same
/// organization's entry in the same register, through the credit-note links (`admin`,
/// `certify`). The receipt never reads the store: it prints what it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Original<'a> {
    /// The original's invoice number.
    pub rn: &'a str,
    /// The original's codeDEFDGI.
    pub code_def: &'a str,
}

impl<'a> Original<'a> {
    /// The original `entry`.
    pub fn of(entry: &'a RegisterEntry) -> Original<'a> {
        Original {
            rn: &entry.request.rn,
            code_def: &entry.security.code_def,
        }
    }
}

/// The fiscal block of `entry` in `lang`; for a credit note, `original` is the invoice it
/// reduces when the register holds it (else the block prints the codeDEFDGI the credit note
/// named, saying it is not in this register).
pub fn block(entry: &RegisterEntry, original: Option<Original<'_>>, lang: Lang) -> Block {
    let (request, security) = (&entry.request, &entry.security);
    let text = |message: crate::i18n::Message| message.render(lang);
    let line = |label: String, value: String, id: &str| Line {
        label,
        value: format::visible(&value).into_owned(),
        id: id.to_owned(),
    };
    let money = |value: Decimal| format::amount(value, FISCAL_CURRENCY, lang);
    let mut original_lines = Vec::new();
    if request.is_credit_note() {
        let named = request.invoice.as_deref().and_then(reference_of);
        let (code, rn) = match (original, named) {
            (Some(original), _) => (original.code_def.to_owned(), original.rn.to_owned()),
            (None, Some(code)) => (code, text(msg!("receipt-original-not-found"))),
            // Kept by 1.4.0 or before: the reference is not known.
            (None, None) => (String::new(), String::new()),
        };
        if !code.is_empty() {
            original_lines.push(line(
                text(msg!("receipt-original-code")),
                code,
                "originalCodeDEFDGI",
            ));
            original_lines.push(line(text(msg!("receipt-original-rn")), rn, "originalRn"));
        }
    }
    let security_lines = vec![
        line(text(msg!("receipt-rn")), request.rn.clone(), "rn"),
        line(
            text(msg!("receipt-type")),
            request.invoice_type.clone(),
            "type",
        ),
        line(text(msg!("receipt-seller-nif")), request.nif.clone(), "nif"),
        line(text(msg!("receipt-seller-isf")), request.isf.clone(), "isf"),
        line(
            text(msg!("receipt-date-time")),
            device_time(&security.date_time, lang),
            "dateTime",
        ),
        line(
            text(msg!("receipt-counters")),
            security.counters.clone(),
            "counters",
        ),
        line(text(msg!("receipt-nim")), security.nim.clone(), "nim"),
    ];
    let totals = &request.totals;
    let mut total_lines = vec![line(
        text(msg!("receipt-total")),
        money(totals.total),
        "total",
    )];
    for (group, ttc) in &totals.group_ttc {
        let vat = totals
            .group_vat
            .iter()
            .find(|(g, _)| g == group)
            .map(|(_, v)| *v)
            .unwrap_or_default();
        let name = group.to_string();
        total_lines.push(line(
            text(msg!("receipt-group-ttc", group = &name)),
            money(*ttc),
            &format!("group-{name}-ttc"),
        ));
        total_lines.push(line(
            text(msg!("receipt-group-vat", group = &name)),
            money(vat),
            &format!("group-{name}-vat"),
        ));
    }
    total_lines.push(line(text(msg!("receipt-vat")), money(totals.vat), "vtotal"));
    if !totals.specific_tax.is_zero() {
        total_lines.push(line(
            text(msg!("receipt-specific-tax")),
            money(totals.specific_tax),
            "specificTax",
        ));
    }
    if let Some(usd) = totals.usd_equivalent {
        total_lines.push(line(
            text(msg!("receipt-usd")),
            format::amount(usd, "USD", lang),
            "usdTotal",
        ));
    }
    // An invoice made in another currency: its rate (its amounts above are in CDF).
    let content = request.content().and_then(Result::ok);
    if let Some(invoice) = content.filter(|c| c.cur_code != FISCAL_CURRENCY) {
        if let Some(rate) = invoice.cur_rate {
            total_lines.push(line(
                text(msg!(
                    "receipt-rate",
                    currency = format::visible(&invoice.cur_code).into_owned(),
                    date = invoice.cur_date.as_deref().map_or_else(
                        || "-".to_owned(),
                        |day| format::visible(&format::day(day, lang)).into_owned()
                    )
                )),
                names::rate(&invoice.cur_code, rate, lang),
                "rate",
            ));
        }
    }
    Block {
        title: text(msg!(
            "receipt-title",
            document = names::document(&request.invoice_type).render(lang)
        )),
        page_title: text(msg!("receipt-page-title", rn = &request.rn)),
        qr_label: text(msg!("receipt-qr-label", rn = &request.rn)),
        qr_code: security.qr_code.clone(),
        code_label: text(msg!("receipt-code")),
        code: format::visible(&security.code_def).into_owned(),
        original: original_lines,
        security: security_lines,
        totals: total_lines,
    }
}

use crate::i18n::format::device_date_time as device_time;

#[cfg(test)]
mod golden;
