//! Shared module of the `golden_*.rs` tests: what each golden vector means, in this crate's
//! types (`typed`, written by hand from each vector's `meaning:`), the list of every vector name
//! (`NAMES`), and the helpers that look a vector's value up and decode its bytes.
//!
//! Included with `mod meaning;`, after `mod vectors;` (the loader, tests/vectors/mod.rs); each
//! test file uses only part of it.
#![allow(dead_code)]

use bytes::BytesMut;
use chrono::{NaiveDate, NaiveDateTime};
use mcf_sfe::command::{
    Client, Comment, CreditReference, FinalizeTotals, Item, OpenInvoice, Payment, PriceChange,
    SpecificTax, UsdRate,
};
use mcf_sfe::reply::{
    Certification, CurrencyInfo, DeviceState, GroupRate, Last, LastInvoice, LinkState, Subtotal,
    TaxpayerValue,
};
use mcf_sfe::types::{
    CommentLine, DgiLinkState, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType,
    TaxGroup, TaxpayerKey,
};
use mcf_sfe::{Command, Reply, StatusFlag};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use tokio_util::codec::Decoder;

use crate::vectors::Vector;

/// What a vector means, in this crate's types.
#[allow(clippy::large_enum_variant)] // a few test values, built once each
pub enum Typed {
    Command(Command),
    /// The reply and the status flags set (every other bit but the 0x80 filler is clear).
    Reply(Reply, Vec<StatusFlag>),
    /// A reply in a form the crate reads but does not write (older firmware): the reply, its
    /// flags, and the DATA the crate writes for the same value.
    ReadOnlyReply(Reply, Vec<StatusFlag>, &'static str),
    Nak,
    Syn,
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> NaiveDateTime {
    date(y, mo, d).and_hms_opt(h, mi, s).unwrap()
}

fn group(letter: char) -> TaxGroup {
    TaxGroup::from_letter(letter).unwrap()
}

fn cmd(command: Command) -> Option<Typed> {
    Some(Typed::Command(command))
}

fn reply(reply: Reply, flags: &[StatusFlag]) -> Option<Typed> {
    Some(Typed::Reply(reply, flags.to_vec()))
}

fn read_only_reply(reply: Reply, flags: &[StatusFlag], written: &'static str) -> Option<Typed> {
    Some(Typed::ReadOnlyReply(reply, flags.to_vec(), written))
}

/// The certification of the golden session (reply-38-certified), with or without its FN.
fn golden_certification(rn: Option<&str>) -> Reply {
    Reply::Certified(Certification {
        fc: 331,
        tc: 346,
        invoice_type: InvoiceType::Fv,
        at: at(2026, 11, 21, 14, 31, 7),
        mid: "SIM0000001".into(),
        nif: "A1234567B".into(),
        rn: rn.map(String::from),
        code_def: "ZYXWVUTSRQPONMLKJIHGFEDC".into(),
    })
}

pub fn typed(name: &str) -> Option<Typed> {
    use StatusFlag::*;
    match name {
        "cmd-c1-device-state" => cmd(Command::DeviceState),
        "cmd-c2-link-state" => cmd(Command::LinkState),
        "cmd-2b-taxpayer-field" => cmd(Command::TaxpayerField(TaxpayerKey::I0)),
        "cmd-c3-set-client" => cmd(Command::SetClient(Client {
            client_type: "PM".into(),
            nif: "A7654321C".into(),
            name: "Kin Import & Export".into(),
            address: "12, av. du Commerce".into(),
            contact: "+243810000000".into(),
            email: "compta@kin-import.cd".into(),
            rccm: String::new(),
        })),
        "cmd-c0-open-fv" => cmd(Command::OpenInvoice(OpenInvoice {
            operator_id: "1".into(),
            operator_name: "Caissier 1".into(),
            nif: "A1234567B".into(),
            invoice_type: InvoiceType::Fv,
            reference: None,
            price_mode: PriceMode::Ttc,
            isf: "ISF01".into(),
            rn: "F-2026-001".into(),
            usd_rate: None,
        })),
        "cmd-c0-open-fa-reference" => cmd(Command::OpenInvoice(OpenInvoice {
            operator_id: "1".into(),
            operator_name: "Caissier 1".into(),
            nif: "A1234567B".into(),
            invoice_type: InvoiceType::Fa,
            reference: Some(CreditReference {
                kind: ReferenceType::Cor,
                code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
            }),
            price_mode: PriceMode::Ttc,
            isf: "ISF01".into(),
            rn: "AV-2026-001".into(),
            usd_rate: None,
        })),
        "cmd-c0-open-ev-usd" => cmd(Command::OpenInvoice(OpenInvoice {
            operator_id: "7".into(),
            operator_name: "Marie Ngal\u{e9}".into(),
            nif: "A1234567B".into(),
            invoice_type: InvoiceType::Ev,
            reference: None,
            price_mode: PriceMode::Ht,
            isf: "ISF01".into(),
            rn: "EXP/2026/17".into(),
            usd_rate: Some(UsdRate {
                rate: dec!(2850.5),
                date: date(2026, 11, 20),
            }),
        })),
        "cmd-31-item-simple" => cmd(Command::Item(Item {
            name: "Cahier 100 pages".into(),
            code: None,
            item_type: ItemType::Bie,
            group: group('B'),
            rate: dec!(16.00),
            line_amount: dec!(1500.00),
            price: dec!(1500.00),
            quantity: Decimal::ONE,
            specific_tax: None,
            price_change: None,
        })),
        "cmd-31-item-full" => cmd(Command::Item(Item {
            name: "STYLO BIC <bleu>".into(),
            code: Some("LR 1515".into()),
            item_type: ItemType::Bie,
            group: group('B'),
            rate: dec!(16.00),
            line_amount: dec!(1200.00),
            price: dec!(600.00),
            quantity: dec!(2),
            specific_tax: Some(SpecificTax {
                rate: Some(dec!(5.00)),
                amount: dec!(60.00),
            }),
            price_change: Some(PriceChange {
                original_price: dec!(700.00),
                description: "remise, fidelite".into(),
            }),
        })),
        "cmd-31-item-protocol-example" => cmd(Command::Item(Item {
            name: "STYLO BIC".into(),
            code: Some("LR 1515".into()),
            item_type: ItemType::Bie,
            group: group('B'),
            rate: dec!(16.00),
            line_amount: dec!(1200.00),
            price: dec!(600.00),
            quantity: dec!(2),
            specific_tax: None,
            price_change: None,
        })),
        "cmd-36-comment" => cmd(Command::Comment(Comment {
            line: CommentLine::A,
            text: "Livraison: 12, av. du Commerce".into(),
        })),
        "cmd-33-subtotal" => cmd(Command::Subtotal),
        "cmd-35-payment" => cmd(Command::Payment(Payment {
            method: PaymentMethod::MobileMoney,
            amount: dec!(2760.00),
        })),
        "cmd-38-finalize" => cmd(Command::Finalize(FinalizeTotals {
            total: dec!(2760.00),
            vat: dec!(372.41),
        })),
        "cmd-38-cancel" => cmd(Command::Cancel),

        "reply-c1-device-state" => {
            let mut rates = [None; TaxGroup::COUNT];
            for (letter, rate) in [
                ('B', dec!(16.00)),
                ('C', dec!(5.00)),
                ('E', dec!(0.00)),
                ('F', dec!(16.00)),
                ('G', dec!(5.00)),
                ('O', dec!(1.00)),
                ('P', dec!(1.00)),
            ] {
                rates[group(letter).index()] = Some(rate);
            }
            reply(
                Reply::DeviceState(DeviceState {
                    mid: "SIM0000001".into(),
                    nif: "A1234567B".into(),
                    clock: Some(at(2026, 11, 21, 14, 30, 5)),
                    tc: 345,
                    fvc: 330,
                    frc: 15,
                    last: Last::Invoice(LastInvoice {
                        at: at(2026, 11, 21, 12, 0, 0),
                        invoice_type: InvoiceType::Fv,
                        code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
                        rn: "F-2026-000".into(),
                        amount: Some(dec!(1392.00)),
                    }),
                    rates: Some(rates.map(GroupRate::from)),
                    currency: Some(CurrencyInfo::usd(dec!(2850.5), date(2026, 11, 20))),
                }),
                &[],
            )
        }
        "reply-c2-link-state" => reply(
            Reply::LinkState(LinkState {
                sent: Some(12),
                stored: Some(3),
                last_contact: Some(at(2026, 11, 20, 18, 0, 0)),
                state: DgiLinkState::Disconnected.to_string(),
                error: "timeout, retry".into(),
            }),
            &[DgiLinkOverdue],
        ),
        "reply-2b-taxpayer-field" => reply(
            Reply::TaxpayerField(TaxpayerValue {
                key: Some(TaxpayerKey::I0),
                value: "Kin Import & Export".into(),
            }),
            &[],
        ),
        "reply-33-subtotal" => {
            let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
            let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
            group_ttc[group('B').index()] = dec!(2700.00);
            group_vat[group('B').index()] = dec!(372.41);
            reply(
                Reply::Subtotal(Subtotal {
                    total: dec!(2760.00),
                    group_ttc,
                    group_vat,
                    specific_tax: dec!(60.00),
                    mcur: String::new(),
                    groups: TaxGroup::COUNT,
                }),
                &[InvoiceOpen, ClientSet],
            )
        }
        "reply-38-certified" => reply(golden_certification(Some("F-2026-001")), &[]),
        "reply-38-pending" => reply(
            Reply::Pending("verification DGI en cours".into()),
            &[InvoiceOpen, FinalizePending],
        ),
        "reply-38-certified-no-fn" => reply(golden_certification(None), &[]),
        "reply-38-certified-no-r" => read_only_reply(
            golden_certification(Some("F-2026-001")),
            &[],
            "R:331,346,FV,20261121143107,SIM0000001,A1234567B,F-2026-001,ZYXWVUTSRQPONMLKJIHGFEDC",
        ),
        "reply-38-refused" => reply(
            Reply::Refused("totals differ from subtotal: device has 2760.00,372.41".into()),
            &[CommandRefused, InvoiceOpen, ClientSet],
        ),
        "reply-31-refused" => reply(
            Reply::Refused("taux du groupe B: 16.00, pas 18.00".into()),
            &[CommandRefused, InvoiceOpen],
        ),
        "reply-c0-done" => reply(Reply::Done, &[InvoiceOpen]),
        "reply-31-done" => reply(Reply::Done, &[InvoiceOpen, ClientSet]),
        "reply-c3-done" => reply(Reply::Done, &[ClientSet]),
        "reply-36-done" => reply(Reply::Done, &[InvoiceOpen, ClientSet]),
        "reply-35-done" => reply(Reply::Done, &[InvoiceOpen, ClientSet]),
        "reply-38-cancel-done" => reply(Reply::Done, &[]),
        "control-nak" => Some(Typed::Nak),
        "control-syn" => Some(Typed::Syn),
        _ => None,
    }
}

/// Every name `typed` knows. Kept in step with `typed` and with the vector files by
/// `the_vector_files_hold_every_required_vector` (golden_vectors.rs).
pub const NAMES: &[&str] = &[
    "cmd-c1-device-state",
    "cmd-c2-link-state",
    "cmd-2b-taxpayer-field",
    "cmd-c3-set-client",
    "cmd-c0-open-fv",
    "cmd-c0-open-fa-reference",
    "cmd-c0-open-ev-usd",
    "cmd-31-item-simple",
    "cmd-31-item-full",
    "cmd-31-item-protocol-example",
    "cmd-36-comment",
    "cmd-33-subtotal",
    "cmd-35-payment",
    "cmd-38-finalize",
    "cmd-38-cancel",
    "reply-c1-device-state",
    "reply-c2-link-state",
    "reply-2b-taxpayer-field",
    "reply-33-subtotal",
    "reply-38-certified",
    "reply-38-pending",
    "reply-38-certified-no-fn",
    "reply-38-certified-no-r",
    "reply-38-refused",
    "reply-31-refused",
    "reply-c0-done",
    "reply-31-done",
    "reply-c3-done",
    "reply-36-done",
    "reply-35-done",
    "reply-38-cancel-done",
    "control-nak",
    "control-syn",
];

/// DATA as text, for readable failures (every golden DATA is UTF-8).
pub fn text(data: &[u8]) -> &str {
    std::str::from_utf8(data).expect("DATA is UTF-8")
}

pub fn typed_of(vector: &Vector) -> Typed {
    typed(&vector.name).unwrap_or_else(|| panic!("{vector}: no typed value in meaning/mod.rs"))
}

/// The reply a reply vector means and its status flags, whether the crate writes that form
/// or only reads it.
pub fn typed_reply(vector: &Vector) -> (Reply, Vec<StatusFlag>) {
    match typed_of(vector) {
        Typed::Reply(reply, flags) | Typed::ReadOnlyReply(reply, flags, _) => (reply, flags),
        _ => panic!("{vector}: a reply vector must be a reply"),
    }
}

/// Decodes `bytes` as one complete input, as `Framed` would at end of stream.
pub fn decode_all<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut buf = BytesMut::from(bytes);
    let mut items = Vec::new();
    while let Some(item) = codec.decode(&mut buf).unwrap() {
        items.push(item);
    }
    while let Some(item) = codec.decode_eof(&mut buf).unwrap() {
        items.push(item);
    }
    assert!(buf.is_empty(), "bytes left after end of stream: {buf:?}");
    items
}
