//! Typed host -> device commands and their DATA.
//!
//! One invoice is: C1, C3, C0, 31 x items, 36 x comments, 33, 35 x payments, 38.
//! Every `encode` checks that the DATA fits one frame and fails with a [`FieldError`] that
//! names the field otherwise; nothing is truncated.
//!
//! The command enum, the command bytes and the short commands are here; C3h and C0h (client,
//! open invoice) are in `command/open.rs`, 31h (item line) in `command/item.rs`, and their
//! types are re-exported here.

mod item;
mod open;

pub use item::{Item, PriceChange, SpecificTax};
pub use open::{Client, CreditReference, OpenInvoice, UsdRate};

use rust_decimal::Decimal;

use crate::fields::{self, DataError, FieldError};
use crate::frame::RequestFrame;
use crate::types::{parse_enum, CommentLine, PaymentMethod, TaxpayerKey};
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

    /// A command byte as logs, metrics and reports write it: `C1h`, `38h`.
    pub fn name(cmd: u8) -> String {
        format!("{cmd:02X}h")
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
            Command::SetClient(client) => open::encode_client(client)?,
            Command::OpenInvoice(open) => open::encode_open(open)?,
            Command::Item(item) => item::encode_item(item)?,
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
            code::SET_CLIENT => open::parse_client(data).map(Command::SetClient),
            code::OPEN_INVOICE => open::parse_open(data).map(Command::OpenInvoice),
            code::ITEM => item::parse_item(text(data)?).map(Command::Item),
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
        .find(|&c| !(c.is_ascii_graphic() || c == ' ') || fields::is_escaped(c))
    {
        return Err(FieldError::Invalid {
            field: "rn",
            reason: format!("character {c:?} is not allowed in an invoice number (printable ASCII only, no , & < > ^)"),
        });
    }
    Ok(())
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
