//! Typed host -> device commands and their DATA.
//!
//! One invoice is: C1, C3, C0, 31 x items, 36 x comments, 33, 35 x payments, 38.
//! Every `encode` checks that the DATA fits one frame and fails with a [`FieldError`] that
//! names the field otherwise; nothing is truncated.

use chrono::NaiveDate;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::fields::{self, DataError, FieldError};
use crate::frame::RequestFrame;
use crate::types::{
    parse_enum, CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType,
    TaxGroup, TaxpayerKey,
};
use crate::wire::{Seq, MAX_REQUEST_DATA};

/// Command bytes.
pub mod code {
    /// Open an invoice.
    pub const OPEN_INVOICE: u8 = 0xC0;
    /// Device state.
    pub const DEVICE_STATE: u8 = 0xC1;
    /// DGI link state.
    pub const LINK_STATE: u8 = 0xC2;
    /// Client of the next invoice.
    pub const SET_CLIENT: u8 = 0xC3;
    /// Taxpayer field.
    pub const TAXPAYER_FIELD: u8 = 0x2B;
    /// Item line.
    pub const ITEM: u8 = 0x31;
    /// Subtotal.
    pub const SUBTOTAL: u8 = 0x33;
    /// Payment.
    pub const PAYMENT: u8 = 0x35;
    /// Comment line.
    pub const COMMENT: u8 = 0x36;
    /// Finalize or cancel.
    pub const FINALIZE: u8 = 0x38;
}

/// C3h: the client of the next invoice. Empty strings mean "none".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// Client type code (e.g. `PM`).
    pub client_type: String,
    /// Client NIF.
    pub nif: String,
    /// Name.
    pub name: String,
    /// Postal address.
    pub address: String,
    /// Telephone or other contact.
    pub contact: String,
    /// E-mail.
    pub email: String,
    /// RCCM (trade register number).
    pub rccm: String,
}

/// The original invoice a credit note (FA, EA) refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditReference {
    /// Why.
    pub kind: ReferenceType,
    /// The original invoice's codeDEFDGI.
    pub code_def: String,
}

/// USD exchange rate and its date, for invoices whose source is in USD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsdRate {
    /// CDF per USD.
    pub rate: Decimal,
    /// Date of the rate.
    pub date: NaiveDate,
}

/// C0h: open an invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenInvoice {
    /// Operator id.
    pub operator_id: String,
    /// Operator name.
    pub operator_name: String,
    /// Seller NIF.
    pub nif: String,
    /// Invoice type.
    pub invoice_type: InvoiceType,
    /// Original invoice; required for FA and EA, refused otherwise.
    pub reference: Option<CreditReference>,
    /// Price mode of the items.
    pub price_mode: PriceMode,
    /// ISF identifier.
    pub isf: String,
    /// The client's invoice number (`rn`), non-empty.
    pub rn: String,
    /// USD rate, when the invoice's source currency is USD.
    pub usd_rate: Option<UsdRate>,
}

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

/// 36h: a comment line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// Slot A..H.
    pub line: CommentLine,
    /// Text.
    pub text: String,
}

/// 35h: a payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payment {
    /// Method.
    pub method: PaymentMethod,
    /// Amount, 2 decimals.
    pub amount: Decimal,
}

/// 38h: the totals that confirm a finalization; they must equal the 33h subtotal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinalizeTotals {
    /// Total TTC (MV).
    pub total: Decimal,
    /// Total VAT (sum of MTA..MTP).
    pub vat: Decimal,
}

/// A host -> device command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// C1h.
    DeviceState,
    /// C2h.
    LinkState,
    /// 2Bh.
    TaxpayerField(TaxpayerKey),
    /// C3h.
    SetClient(Client),
    /// C0h.
    OpenInvoice(OpenInvoice),
    /// 31h.
    Item(Item),
    /// 36h.
    Comment(Comment),
    /// 33h.
    Subtotal,
    /// 35h.
    Payment(Payment),
    /// 38h with totals.
    Finalize(FinalizeTotals),
    /// 38h `C`: cancel the open invoice.
    Cancel,
}

impl Command {
    /// The command byte.
    pub fn code(&self) -> u8 {
        match self {
            Command::DeviceState => code::DEVICE_STATE,
            Command::LinkState => code::LINK_STATE,
            Command::TaxpayerField(_) => code::TAXPAYER_FIELD,
            Command::SetClient(_) => code::SET_CLIENT,
            Command::OpenInvoice(_) => code::OPEN_INVOICE,
            Command::Item(_) => code::ITEM,
            Command::Comment(_) => code::COMMENT,
            Command::Subtotal => code::SUBTOTAL,
            Command::Payment(_) => code::PAYMENT,
            Command::Finalize(_) | Command::Cancel => code::FINALIZE,
        }
    }

    /// The DATA bytes, checked to fit one frame.
    pub fn encode(&self) -> Result<Vec<u8>, FieldError> {
        let text = match self {
            Command::DeviceState | Command::LinkState | Command::Subtotal => String::new(),
            Command::TaxpayerField(key) => key.as_str().to_owned(),
            Command::SetClient(client) => encode_client(client)?,
            Command::OpenInvoice(open) => encode_open(open)?,
            Command::Item(item) => encode_item(item)?,
            Command::Comment(comment) => format!(
                "{},{}",
                comment.line,
                fields::escape("comment", &comment.text)?
            ),
            Command::Payment(payment) => format!(
                "{}{}",
                payment.method,
                fields::amount("payment amount", payment.amount)?
            ),
            Command::Finalize(totals) => format!(
                "{},{}",
                fields::amount("total", totals.total)?,
                fields::amount("vat", totals.vat)?
            ),
            Command::Cancel => "C".to_owned(),
        };
        fields::fit(self.code(), text.into_bytes(), MAX_REQUEST_DATA)
    }

    /// The command as a frame with sequence number `seq`.
    pub fn to_frame(&self, seq: Seq) -> Result<RequestFrame, FieldError> {
        let data = self.encode()?;
        RequestFrame::new(seq, self.code(), data).map_err(|e| FieldError::DataTooLong {
            cmd: e.cmd,
            len: e.len,
            max: e.max,
        })
    }

    /// Reads a command from its byte and DATA (the device's side).
    pub fn parse(cmd: u8, data: &[u8]) -> Result<Command, DataError> {
        match cmd {
            code::DEVICE_STATE => expect_empty(data, Command::DeviceState),
            code::LINK_STATE => expect_empty(data, Command::LinkState),
            code::SUBTOTAL => expect_empty(data, Command::Subtotal),
            code::TAXPAYER_FIELD => Ok(Command::TaxpayerField(parse_enum(
                "taxpayer key",
                text(data)?,
            )?)),
            code::SET_CLIENT => parse_client(data).map(Command::SetClient),
            code::OPEN_INVOICE => parse_open(data).map(Command::OpenInvoice),
            code::ITEM => parse_item(text(data)?).map(Command::Item),
            code::COMMENT => parse_comment(data).map(Command::Comment),
            code::PAYMENT => parse_payment(text(data)?).map(Command::Payment),
            code::FINALIZE => parse_finalize(data),
            other => Err(DataError::UnknownCommand(other)),
        }
    }

    /// Reads a command from a frame.
    pub fn from_frame(frame: &RequestFrame) -> Result<Command, DataError> {
        Command::parse(frame.cmd(), frame.data())
    }
}

fn text(data: &[u8]) -> Result<&str, DataError> {
    std::str::from_utf8(data).map_err(|_| DataError::NotUtf8)
}

fn expect_empty(data: &[u8], command: Command) -> Result<Command, DataError> {
    if data.is_empty() {
        Ok(command)
    } else {
        Err(DataError::FieldCount {
            what: "command without DATA",
            expected: "0",
            got: fields::split(data)?.len(),
        })
    }
}

fn encode_client(client: &Client) -> Result<String, FieldError> {
    let parts = [
        fields::escape("client type", &client.client_type)?,
        fields::escape("client nif", &client.nif)?,
        fields::escape("client name", &client.name)?,
        fields::escape("client address", &client.address)?,
        fields::escape("client contact", &client.contact)?,
        fields::escape("client email", &client.email)?,
        fields::escape("client rccm", &client.rccm)?,
    ];
    Ok(parts.join(","))
}

fn parse_client(data: &[u8]) -> Result<Client, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("C3h client", &f, &[7], "7")?;
    let mut f = f.into_iter();
    let mut next = || f.next().unwrap_or_default();
    Ok(Client {
        client_type: next(),
        nif: next(),
        name: next(),
        address: next(),
        contact: next(),
        email: next(),
        rccm: next(),
    })
}

fn encode_open(open: &OpenInvoice) -> Result<String, FieldError> {
    check_rn(&open.rn)?;
    let mut parts = vec![
        fields::escape("operator id", &open.operator_id)?,
        fields::escape("operator name", &open.operator_name)?,
        fields::escape("nif", &open.nif)?,
        open.invoice_type.to_string(),
    ];
    match (&open.reference, open.invoice_type.is_credit_note()) {
        (Some(reference), true) => {
            parts.push(reference.kind.to_string());
            parts.push(fields::escape("reference", &reference.code_def)?);
        }
        (None, false) => {}
        (None, true) => {
            return Err(FieldError::Invalid {
                field: "reference",
                reason: format!("a {} needs the original codeDEFDGI", open.invoice_type),
            })
        }
        (Some(_), false) => {
            return Err(FieldError::Invalid {
                field: "reference",
                reason: format!(
                    "only FA and EA carry a reference, not {}",
                    open.invoice_type
                ),
            })
        }
    }
    parts.push(open.price_mode.to_string());
    parts.push(fields::escape("isf", &open.isf)?);
    parts.push(fields::escape("rn", &open.rn)?);
    if let Some(usd) = &open.usd_rate {
        fields::fixed("usd rate", usd.rate, 4)?;
        parts.push(usd.rate.normalize().to_string());
        parts.push(fields::date(usd.date));
    }
    Ok(parts.join(","))
}

/// Longest `rn` (FN) this protocol carries, in bytes. The C1h reply repeats it (lastFN) and
/// must still fit one 212-byte reply with 8-digit counters, a 12-digit amount and a USD rate:
/// 24 is the most that leaves room (assumed limit, see PROTOCOL.md).
pub const MAX_RN_LEN: usize = 24;

/// Checks an invoice number: 1 to [`MAX_RN_LEN`] printable ASCII characters, none of which
/// needs an escape (`, & < > ^`), so that its wire form is exactly its text.
pub fn check_rn(rn: &str) -> Result<(), FieldError> {
    if rn.is_empty() {
        return Err(FieldError::Empty { field: "rn" });
    }
    if rn.len() > MAX_RN_LEN {
        return Err(FieldError::Invalid {
            field: "rn",
            reason: format!("at most {MAX_RN_LEN} characters"),
        });
    }
    if let Some(c) = rn
        .chars()
        .find(|c| !c.is_ascii_graphic() && *c != ' ' || matches!(c, ',' | '&' | '<' | '>' | '^'))
    {
        return Err(FieldError::Invalid {
            field: "rn",
            reason: format!("character {c:?} is not allowed in an invoice number (printable ASCII only, no , & < > ^)"),
        });
    }
    Ok(())
}

fn parse_open(data: &[u8]) -> Result<OpenInvoice, DataError> {
    let f = fields::split(data)?;
    let invoice_type: InvoiceType =
        parse_enum("invoice type", f.get(3).map_or("", String::as_str))?;
    let base = if invoice_type.is_credit_note() { 9 } else { 7 };
    let expected = if invoice_type.is_credit_note() {
        "9 or 11"
    } else {
        "7 or 9"
    };
    fields::expect_count("C0h open invoice", &f, &[base, base + 2], expected)?;
    let (reference, rest) = if invoice_type.is_credit_note() {
        let reference = CreditReference {
            kind: parse_enum("reference type", &f[4])?,
            code_def: f[5].clone(),
        };
        (Some(reference), &f[6..])
    } else {
        (None, &f[4..])
    };
    let usd_rate = if rest.len() == 5 {
        Some(UsdRate {
            rate: fields::parse_decimal("usd rate", &rest[3])?,
            date: fields::parse_date("usd date", &rest[4])?,
        })
    } else {
        None
    };
    Ok(OpenInvoice {
        operator_id: f[0].clone(),
        operator_name: f[1].clone(),
        nif: f[2].clone(),
        invoice_type,
        reference,
        price_mode: parse_enum("price mode", &rest[0])?,
        isf: rest[1].clone(),
        rn: rest[2].clone(),
        usd_rate,
    })
}

fn encode_item(item: &Item) -> Result<String, FieldError> {
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

fn parse_item(text: &str) -> Result<Item, DataError> {
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

fn parse_comment(data: &[u8]) -> Result<Comment, DataError> {
    let f = fields::split(data)?;
    fields::expect_count("36h comment", &f, &[2], "2")?;
    Ok(Comment {
        line: parse_enum("comment line", &f[0])?,
        text: f[1].clone(),
    })
}

fn parse_payment(text: &str) -> Result<Payment, DataError> {
    let mut chars = text.chars();
    let letter = chars.next().map(String::from).unwrap_or_default();
    Ok(Payment {
        method: parse_enum("payment method", &letter)?,
        amount: fields::parse_decimal("payment amount", chars.as_str())?,
    })
}

fn parse_finalize(data: &[u8]) -> Result<Command, DataError> {
    if data == b"C" {
        return Ok(Command::Cancel);
    }
    let f = fields::split(data)?;
    fields::expect_count("38h finalize", &f, &[2], "2, or C")?;
    Ok(Command::Finalize(FinalizeTotals {
        total: fields::parse_decimal("total", &f[0])?,
        vat: fields::parse_decimal("vat", &f[1])?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn credit_note_needs_a_reference_and_empty_rn_is_refused() {
        let mut open = OpenInvoice {
            operator_id: "1".into(),
            operator_name: "Caisse".into(),
            nif: "A1234567B".into(),
            invoice_type: InvoiceType::Fa,
            reference: None,
            price_mode: PriceMode::Ttc,
            isf: "ISF01".into(),
            rn: "F-1".into(),
            usd_rate: None,
        };
        assert!(matches!(
            Command::OpenInvoice(open.clone()).encode(),
            Err(FieldError::Invalid {
                field: "reference",
                ..
            })
        ));
        open.invoice_type = InvoiceType::Fv;
        open.rn.clear();
        assert_eq!(
            Command::OpenInvoice(open).encode(),
            Err(FieldError::Empty { field: "rn" })
        );
    }

    #[test]
    fn cancel_and_finalize_share_38h() {
        assert_eq!(Command::parse(0x38, b"C"), Ok(Command::Cancel));
        assert_eq!(
            Command::parse(0x38, b"1392.00,192.00"),
            Ok(Command::Finalize(FinalizeTotals {
                total: dec!(1392.00),
                vat: dec!(192.00)
            }))
        );
        assert!(Command::parse(0x38, b"1392.00").is_err());
        assert_eq!(
            Command::parse(0x99, b""),
            Err(DataError::UnknownCommand(0x99))
        );
    }
}
