//! Golden vectors: every vector in `vectors/` is the exact wire form of a typed command, reply
//! or control byte, in both directions (the value encodes to the bytes, the bytes decode to the
//! value). The typed values below are written by hand from each vector's `meaning:`.

mod vectors;

use std::collections::BTreeSet;

use bytes::BytesMut;
use chrono::{NaiveDate, NaiveDateTime};
use mcf_sfe::command::{
    Client, Comment, CreditReference, FinalizeTotals, Item, OpenInvoice, Payment, PriceChange,
    SpecificTax, UsdRate,
};
use mcf_sfe::reply::{
    Certification, CurrencyInfo, DeviceState, LastInvoice, LinkState, Subtotal, TaxpayerValue,
};
use mcf_sfe::types::{
    CommentLine, DgiLinkState, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType,
    TaxGroup, TaxpayerKey,
};
use mcf_sfe::{
    Command, DeviceCodec, FrameError, FromDevice, FromHost, HostCodec, Reply, ReplyFrame, Seq,
    Status, StatusFlag, ToHost,
};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use tokio_util::codec::{Decoder, Encoder};
use vectors::{hex, Body, Direction, Vector};

/// What a vector means, in this crate's types.
#[allow(clippy::large_enum_variant)] // a few test values, built once each
enum Typed {
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

fn typed(name: &str) -> Option<Typed> {
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
                    clock: at(2026, 11, 21, 14, 30, 5),
                    tc: 345,
                    fvc: 330,
                    frc: 15,
                    last: Some(LastInvoice {
                        at: at(2026, 11, 21, 12, 0, 0),
                        invoice_type: InvoiceType::Fv,
                        code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
                        rn: "F-2026-000".into(),
                        amount: dec!(1392.00),
                    }),
                    rates,
                    currency: Some(CurrencyInfo {
                        code: "USD".into(),
                        rate: dec!(2850.5),
                        date: date(2026, 11, 20),
                    }),
                }),
                &[],
            )
        }
        "reply-c2-link-state" => reply(
            Reply::LinkState(LinkState {
                sent: 12,
                stored: 3,
                last_contact: Some(at(2026, 11, 20, 18, 0, 0)),
                state: DgiLinkState::Disconnected,
                error: "timeout, retry".into(),
            }),
            &[DgiLinkOverdue],
        ),
        "reply-2b-taxpayer-field" => reply(
            Reply::TaxpayerField(TaxpayerValue {
                key: TaxpayerKey::I0,
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
                    usd_equivalent: None,
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

/// Every name `typed` knows. Kept in step with `typed` by `every_vector_has_a_typed_value`.
const NAMES: &[&str] = &[
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
fn text(data: &[u8]) -> &str {
    std::str::from_utf8(data).expect("DATA is UTF-8")
}

fn typed_of(vector: &Vector) -> Typed {
    typed(&vector.name).unwrap_or_else(|| panic!("{vector}: no typed value in golden.rs"))
}

/// The reply a reply vector means and its status flags, whether the crate writes that form
/// or only reads it.
fn typed_reply(vector: &Vector) -> (Reply, Vec<StatusFlag>) {
    match typed_of(vector) {
        Typed::Reply(reply, flags) | Typed::ReadOnlyReply(reply, flags, _) => (reply, flags),
        _ => panic!("{vector}: a reply vector must be a reply"),
    }
}

/// Decodes `bytes` as one complete input, as `Framed` would at end of stream.
fn decode_all<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
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

#[test]
fn the_vector_files_hold_every_required_vector() {
    let names: BTreeSet<String> = vectors::all().into_iter().map(|v| v.name).collect();
    let known: BTreeSet<String> = NAMES.iter().map(|n| n.to_string()).collect();
    assert_eq!(names, known, "vector files and golden.rs disagree");
    for name in NAMES {
        assert!(
            typed(name).is_some(),
            "{name} is in NAMES but not in typed()"
        );
    }
}

/// The bytes agree with the vector's own seq/cmd/data/status lines, and LEN and BCC are right
/// by the protocol's arithmetic (recomputed here, independently of the crate).
#[test]
fn every_vector_is_self_consistent() {
    for v in vectors::all() {
        let f = &v.frame;
        let (seq, cmd, data, status) = match &v.body {
            Body::Control => {
                assert_eq!(v.direction, Direction::DeviceToHost, "{v}");
                assert!(f == &[0x15] || f == &[0x16], "{v}: not NAK or SYN");
                continue;
            }
            Body::Request { seq, cmd, data } => (*seq, *cmd, data, None),
            Body::Reply {
                seq,
                cmd,
                data,
                status,
            } => (*seq, *cmd, data, Some(status)),
        };
        let tail = if status.is_some() { 1 + 6 } else { 0 };
        assert!(std::str::from_utf8(data).is_ok(), "{v}: DATA is not UTF-8");
        assert_eq!(
            f.len(),
            1 + 3 + data.len() + tail + 1 + 4 + 1,
            "{v}: frame length"
        );
        assert_eq!(f[0], 0x01, "{v}: SOH");
        assert_eq!(usize::from(f[1]), 0x20 + 4 + data.len() + tail, "{v}: LEN");
        assert_eq!((f[2], f[3]), (seq, cmd), "{v}: SEQ, CMD");
        assert_eq!(&f[4..4 + data.len()], &data[..], "{v}: DATA");
        let mut at = 4 + data.len();
        if let Some(status) = status {
            assert_eq!(f[at], 0x04, "{v}: separator");
            assert_eq!(&f[at + 1..at + 7], status, "{v}: STATUS");
            at += 7;
        }
        assert_eq!(f[at], 0x05, "{v}: POSTAMBLE");
        let sum: u32 = f[1..=at].iter().map(|&b| u32::from(b)).sum();
        let nibbles: Vec<u8> = [12, 8, 4, 0]
            .iter()
            .map(|shift| 0x30 + ((sum >> shift) & 0xF) as u8)
            .collect();
        assert_eq!(
            &f[at + 1..at + 5],
            &nibbles[..],
            "{v}: BCC of sum {sum:#06x} should be {}",
            hex(&nibbles)
        );
        assert_eq!(f[at + 5], 0x03, "{v}: ETX");
    }
}

#[test]
fn commands_encode_to_the_golden_bytes() {
    let mut checked = 0;
    for v in vectors::all() {
        let Body::Request { seq, cmd, data } = &v.body else {
            continue;
        };
        let Typed::Command(command) = typed_of(&v) else {
            panic!("{v}: a host->device vector must be a command");
        };
        assert_eq!(command.code(), *cmd, "{v}: command byte");
        assert_eq!(text(&command.encode().unwrap()), text(data), "{v}: DATA");
        let frame = command.to_frame(Seq::new(*seq).unwrap()).unwrap();
        let bytes = frame.to_bytes();
        assert_eq!(
            hex(&bytes),
            hex(&v.frame),
            "{v}: Command::to_frame(..).to_bytes()"
        );
        let mut via_codec = BytesMut::new();
        HostCodec.encode(&frame, &mut via_codec).unwrap();
        assert_eq!(&via_codec[..], &v.frame[..], "{v}: HostCodec encoder");
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn command_frames_decode_to_the_typed_command() {
    for v in vectors::all() {
        let Body::Request { seq, .. } = &v.body else {
            continue;
        };
        let Typed::Command(command) = typed_of(&v) else {
            unreachable!()
        };
        let items = decode_all(&mut DeviceCodec, &v.frame);
        let [FromHost::Request(frame)] = &items[..] else {
            panic!("{v}: DeviceCodec decoded {items:?}");
        };
        assert_eq!(frame.seq().get(), *seq, "{v}: SEQ");
        assert_eq!(frame.cmd(), command.code(), "{v}: CMD");
        assert_eq!(Command::from_frame(frame).as_ref(), Ok(&command), "{v}");
    }
}

#[test]
fn replies_encode_to_the_golden_bytes() {
    let mut checked = 0;
    let mut read_only = 0;
    for v in vectors::all() {
        let Body::Reply {
            seq,
            cmd,
            data,
            status,
        } = &v.body
        else {
            continue;
        };
        let (reply, flags, written) = match typed_of(&v) {
            Typed::Reply(reply, flags) => (reply, flags, None),
            Typed::ReadOnlyReply(reply, flags, written) => (reply, flags, Some(written)),
            _ => panic!("{v}: a reply vector must be a reply"),
        };
        assert_eq!(Status::with(&flags).0, *status, "{v}: status flags");
        let encoded = reply.encode(*cmd).unwrap();
        match written {
            None => assert_eq!(text(&encoded), text(data), "{v}: DATA"),
            Some(written) => {
                // An older form: the crate writes the current form of the same value.
                assert_ne!(written.as_bytes(), &data[..], "{v}: not a read-only form");
                assert_eq!(text(&encoded), written, "{v}: DATA the crate writes");
                assert_eq!(Reply::parse(*cmd, &encoded).as_ref(), Ok(&reply), "{v}");
                read_only += 1;
            }
        }
        let frame =
            ReplyFrame::new(Seq::new(*seq).unwrap(), *cmd, data.clone(), Status(*status)).unwrap();
        assert_eq!(
            hex(&frame.to_bytes()),
            hex(&v.frame),
            "{v}: ReplyFrame bytes"
        );
        let mut via_codec = BytesMut::new();
        DeviceCodec
            .encode(ToHost::Reply(frame), &mut via_codec)
            .unwrap();
        assert_eq!(&via_codec[..], &v.frame[..], "{v}: DeviceCodec encoder");
        checked += 1;
    }
    assert_eq!((checked, read_only), (16, 1));
}

#[test]
fn reply_frames_decode_to_the_typed_reply() {
    for v in vectors::all() {
        let Body::Reply { seq, cmd, .. } = &v.body else {
            continue;
        };
        let (reply, flags) = typed_reply(&v);
        let items = decode_all(&mut HostCodec, &v.frame);
        let [FromDevice::Reply(frame)] = &items[..] else {
            panic!("{v}: HostCodec decoded {items:?}");
        };
        assert_eq!((frame.seq().get(), frame.cmd()), (*seq, *cmd), "{v}");
        for flag in StatusFlag::ALL {
            assert_eq!(
                frame.status().has(flag),
                flags.contains(&flag),
                "{v}: {flag:?}"
            );
        }
        assert_eq!(
            Reply::parse(frame.cmd(), frame.data()).as_ref(),
            Ok(&reply),
            "{v}"
        );
    }
}

#[test]
fn control_bytes_encode_and_decode() {
    for v in vectors::all() {
        if v.body != Body::Control {
            continue;
        }
        let (item, expected) = match typed_of(&v) {
            Typed::Nak => (ToHost::Nak, FromDevice::Nak),
            Typed::Syn => (ToHost::Syn, FromDevice::Syn),
            _ => panic!("{v}: a control vector must be NAK or SYN"),
        };
        let mut bytes = BytesMut::new();
        DeviceCodec.encode(item, &mut bytes).unwrap();
        assert_eq!(&bytes[..], &v.frame[..], "{v}");
        assert_eq!(decode_all(&mut HostCodec, &v.frame), vec![expected], "{v}");
        // Towards the device a lone control byte is line noise, not an item.
        assert_eq!(decode_all(&mut DeviceCodec, &v.frame), vec![], "{v}");
    }
}

/// The whole device -> host file as one byte stream (as a host would read a session) decodes
/// to the vectors' items in order, and so does the host -> device file.
#[test]
fn each_file_decodes_as_one_stream() {
    let all = vectors::all();
    let host_bytes: Vec<u8> = all
        .iter()
        .filter(|v| v.direction == Direction::HostToDevice)
        .flat_map(|v| v.frame.clone())
        .collect();
    let commands: Vec<Command> = decode_all(&mut DeviceCodec, &host_bytes)
        .into_iter()
        .map(|item| match item {
            FromHost::Request(frame) => Command::from_frame(&frame).unwrap(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected: Vec<Command> = all
        .iter()
        .filter_map(|v| match typed_of(v) {
            Typed::Command(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(commands, expected);

    let device_bytes: Vec<u8> = all
        .iter()
        .filter(|v| v.direction == Direction::DeviceToHost)
        .flat_map(|v| v.frame.clone())
        .collect();
    let items = decode_all(&mut HostCodec, &device_bytes);
    let device_vectors: Vec<&Vector> = all
        .iter()
        .filter(|v| v.direction == Direction::DeviceToHost)
        .collect();
    assert_eq!(items.len(), device_vectors.len());
    for (item, v) in items.iter().zip(device_vectors) {
        match (item, typed_of(v)) {
            (
                FromDevice::Reply(frame),
                Typed::Reply(reply, _) | Typed::ReadOnlyReply(reply, ..),
            ) => {
                assert_eq!(Reply::parse(frame.cmd(), frame.data()), Ok(reply), "{v}")
            }
            (FromDevice::Nak, Typed::Nak) | (FromDevice::Syn, Typed::Syn) => {}
            (item, _) => panic!("{v}: decoded as {item:?}"),
        }
    }
}

/// The golden session is coherent the way the gateway uses it: 38h repeats the 33h totals,
/// the credit note refers to a codeDEFDGI, and the certification gives the security elements.
#[test]
fn the_golden_session_gives_the_expected_security_elements() {
    let Some(Typed::Reply(Reply::Subtotal(subtotal), _)) = typed("reply-33-subtotal") else {
        unreachable!()
    };
    let Some(Typed::Command(Command::Finalize(totals))) = typed("cmd-38-finalize") else {
        unreachable!()
    };
    assert_eq!(subtotal.finalize_totals(), totals);
    assert_eq!(subtotal.vat(), dec!(372.41));

    let v = vectors::get("reply-38-certified");
    let items = decode_all(&mut HostCodec, &v.frame);
    let [FromDevice::Reply(frame)] = &items[..] else {
        panic!("{items:?}")
    };
    let Ok(Reply::Certified(cert)) = Reply::parse(frame.cmd(), frame.data()) else {
        panic!("not a certification")
    };
    assert_eq!(cert.code_def, "ZYXWVUTSRQPONMLKJIHGFEDC");
    assert_eq!(cert.counters(), "331/346 FV");
    assert_eq!(
        cert.qr_code(),
        "RDCDEF01;SIM0000001;ZYXWVUTSRQPONMLKJIHGFEDC;A1234567B;20261121143107"
    );
    assert_eq!(cert.rn.as_deref(), Some("F-2026-001"));

    // The older forms carry the same security elements (FN aside).
    for name in ["reply-38-certified-no-fn", "reply-38-certified-no-r"] {
        let v = vectors::get(name);
        let items = decode_all(&mut HostCodec, &v.frame);
        let [FromDevice::Reply(frame)] = &items[..] else {
            panic!("{v}: {items:?}")
        };
        let Ok(Reply::Certified(old)) = Reply::parse(frame.cmd(), frame.data()) else {
            panic!("{v}: not a certification")
        };
        assert_eq!(old.code_def, cert.code_def, "{v}");
        assert_eq!(old.counters(), cert.counters(), "{v}");
        assert_eq!(old.qr_code(), cert.qr_code(), "{v}");
    }
}

/// A two-byte false start `01 26` before the golden C1h frame: its LEN puts the 05 and 03 it
/// expects on those of the real frame, so only the BCC tells it is no frame. The decoder drops
/// only its SOH, and the C1h frame behind it still comes through.
#[test]
fn a_false_start_before_the_golden_c1h_frame_does_not_hide_it() {
    let v = vectors::get("cmd-c1-device-state");
    let mut bytes = vec![0x01, 0x26];
    bytes.extend(&v.frame);
    let items = decode_all(&mut DeviceCodec, &bytes);
    let [FromHost::Malformed(FrameError::BadChecksum { .. }), FromHost::Request(frame)] =
        &items[..]
    else {
        panic!("{v}: decoded {items:?}");
    };
    assert_eq!(frame.to_bytes(), v.frame);
    assert_eq!(Command::from_frame(frame), Ok(Command::DeviceState));
}

/// One changed byte anywhere in a golden frame is never taken for a frame. Unless the change
/// hits the SOH or makes a second one, the broken frame is exactly one Malformed item: its
/// other bytes hold no SOH, so the rescan after its SOH skips them.
#[test]
fn any_single_byte_change_in_a_golden_frame_is_detected() {
    for v in vectors::all() {
        if v.body == Body::Control {
            continue;
        }
        assert_eq!(v.frame.iter().filter(|&&b| b == 0x01).count(), 1, "{v}");
        for index in 0..v.frame.len() {
            for delta in [0x01u8, 0x10, 0x80, 0xFF] {
                let mut bytes = v.frame.clone();
                bytes[index] = bytes[index].wrapping_add(delta);
                let (good, malformed) = match v.direction {
                    Direction::HostToDevice => {
                        let items = decode_all(&mut DeviceCodec, &bytes);
                        (
                            items.iter().any(|i| matches!(i, FromHost::Request(_))),
                            items
                                .iter()
                                .filter(|i| matches!(i, FromHost::Malformed(_)))
                                .count(),
                        )
                    }
                    Direction::DeviceToHost => {
                        let items = decode_all(&mut HostCodec, &bytes);
                        (
                            items.iter().any(|i| matches!(i, FromDevice::Reply(_))),
                            items
                                .iter()
                                .filter(|i| matches!(i, FromDevice::Malformed(_)))
                                .count(),
                        )
                    }
                };
                let change = format!("{v}: byte {index} + {delta:#04x}");
                assert!(!good, "{change} still decodes as a frame");
                if index != 0 && bytes[index] != 0x01 {
                    assert_eq!(malformed, 1, "{change}: one broken frame, one report");
                }
            }
        }
    }
}

/// The loader itself: every key, the DATA notation, and its errors.
#[test]
fn the_vector_loader_reads_every_key_and_rejects_mistakes() {
    let text = "# comment\n\
        vector: one\n\
        dir: device->host\n\
        meaning: a reply\n\
        meaning: on two lines\n\
        seq: 20\n\
        cmd: C1\n\
        status: 80 80 80 80 80 81\n\
        data: \"a\\tb\\n\\\\ \\\"q\\\" \u{e9}\"\n\
        frame:\n  01 2B  # SOH LEN\n  # a comment line\n  FF\n\n\
        vector: two\n\
        dir: device->host\n\
        meaning: NAK\n\
        frame: 15\n";
    let parsed = vectors::parse("inline", text).unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].name, "one");
    assert_eq!(parsed[0].meaning, "a reply on two lines");
    assert_eq!(
        parsed[0].body,
        Body::Reply {
            seq: 0x20,
            cmd: 0xC1,
            data: "a\tb\n\\ \"q\" \u{e9}".as_bytes().to_vec(),
            status: [0x80, 0x80, 0x80, 0x80, 0x80, 0x81],
        }
    );
    assert_eq!(parsed[0].frame, [0x01, 0x2B, 0xFF]);
    assert_eq!(parsed[0].line, 2);
    assert_eq!(parsed[1].body, Body::Control);
    assert_eq!(parsed[1].frame, [0x15]);

    let error = |text: &str| vectors::parse("inline", text).unwrap_err();
    assert!(error("dir: host->device\n").contains("before the first"));
    assert!(error("vector: x\ndir: sideways\n").contains("dir must be"));
    assert!(error("vector: x\nseq: 2\n").contains("two-digit"));
    assert!(error("vector: x\ndir: host->device\nmeaning: m\nframe: 01\n").contains("needs seq"));
    assert!(error("vector: x\ndir: device->host\nmeaning: m\nframe: 15 16\n").contains("one byte"));
    assert!(error("vector: x\ndata: \"\\q\"\n").contains("unknown escape"));
    assert!(error("vector: x\nseq: 20\nseq: 21\n").contains("twice"));
    assert!(error("vector: x\nframe:\n\n  01\n").contains("outside a frame"));
    assert!(error("vector: x\nfoo: 1\n").contains("unknown key"));
}
