//! Properties of the frame codecs, the typed commands and replies, and the field escapes.
//! Case counts are kept moderate so that the file runs in a few seconds in debug builds.

mod vectors;

use bytes::BytesMut;
use chrono::{NaiveDate, NaiveDateTime};
use mcf_sfe::command::{
    code, Client, Comment, CreditReference, FinalizeTotals, Item, OpenInvoice, Payment,
    PriceChange, SpecificTax, UsdRate, MAX_RN_LEN,
};
use mcf_sfe::fields::{self, FieldError};
use mcf_sfe::reply::{
    Certification, CurrencyInfo, DeviceState, LastInvoice, LinkState, Subtotal, TaxpayerValue,
};
use mcf_sfe::types::{
    CommentLine, DgiLinkState, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType,
    TaxGroup, TaxpayerKey,
};
use mcf_sfe::wire::{MAX_FRAME_LEN, MAX_REPLY_DATA, MAX_REQUEST_DATA, NAK, SOH, SYN};
use mcf_sfe::{
    Command, DeviceCodec, FromDevice, FromHost, HostCodec, Reply, ReplyFrame, RequestFrame, Seq,
    Status, ToHost,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use rust_decimal::Decimal;
use tokio_util::codec::{Decoder, Encoder};

// ---------------------------------------------------------------------------------------------
// Feeding a decoder

/// Feeds `bytes` to `codec` cut at `cuts`, draining it after each chunk as `Framed` does, then
/// ends the stream. Checks on the way that the buffer never holds a frame's worth of
/// undecided bytes and that every item consumed at least one byte (no endless loop).
fn feed<D: Decoder>(codec: &mut D, bytes: &[u8], cuts: &[Index]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.push(bytes.len());
    points.sort_unstable();
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    let mut start = 0;
    for end in points {
        buf.extend_from_slice(&bytes[start..end]);
        start = end;
        while let Some(item) = codec.decode(&mut buf).expect("decode never fails") {
            items.push(item);
            assert!(items.len() <= bytes.len(), "more items than bytes");
        }
        assert!(
            buf.len() < MAX_FRAME_LEN,
            "decoder waits with {} bytes buffered",
            buf.len()
        );
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("decode_eof never fails") {
        items.push(item);
        assert!(items.len() <= bytes.len() + 1, "more items than bytes");
    }
    assert!(buf.is_empty(), "bytes left after end of stream");
    items
}

fn decode_whole<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    feed(codec, bytes, &[])
}

fn to_device_bytes(items: &[FromDevice]) -> Vec<u8> {
    let mut buf = BytesMut::new();
    for item in items {
        let out = match item {
            FromDevice::Reply(frame) => ToHost::Reply(frame.clone()),
            FromDevice::Nak => ToHost::Nak,
            FromDevice::Syn => ToHost::Syn,
            FromDevice::Malformed(_) => unreachable!("not generated"),
        };
        DeviceCodec.encode(out, &mut buf).unwrap();
    }
    buf.to_vec()
}

// ---------------------------------------------------------------------------------------------
// Frame strategies

fn seq() -> impl Strategy<Value = Seq> {
    (0x20u8..=0xFF).prop_map(|b| Seq::new(b).unwrap())
}

fn request_frame() -> impl Strategy<Value = RequestFrame> {
    (seq(), any::<u8>(), vec(any::<u8>(), 0..=MAX_REQUEST_DATA))
        .prop_map(|(seq, cmd, data)| RequestFrame::new(seq, cmd, data).unwrap())
}

fn reply_frame() -> impl Strategy<Value = ReplyFrame> {
    (
        seq(),
        any::<u8>(),
        vec(any::<u8>(), 0..=MAX_REPLY_DATA),
        any::<[u8; 6]>(),
    )
        .prop_map(|(seq, cmd, data, status)| {
            ReplyFrame::new(seq, cmd, data, Status(status)).unwrap()
        })
}

/// What a device sends: replies and control bytes.
fn device_items() -> impl Strategy<Value = Vec<FromDevice>> {
    vec(
        prop_oneof![
            3 => reply_frame().prop_map(FromDevice::Reply),
            1 => Just(FromDevice::Nak),
            1 => Just(FromDevice::Syn),
        ],
        0..6,
    )
}

/// Bytes that look like pieces of frames more often than uniform bytes would.
fn line_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            3 => any::<u8>(),
            2 => select(vec![SOH, 0x03, 0x04, 0x05, NAK, SYN, 0x20, 0x24, 0x2B, 0x30, 0xFF]),
        ],
        0..max,
    )
}

/// Noise full of false starts: single SOH bytes, and SOH followed by a LEN byte (any, or one
/// that claims the largest frame), between ordinary noise bytes.
fn false_starts(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            3 => line_bytes(4),
            2 => Just(vec![SOH]),
            2 => any::<u8>().prop_map(|len| vec![SOH, len]),
            1 => (0x24u8..=0x30).prop_map(|len| vec![SOH, len]),
            1 => Just(vec![SOH, 0xFF]),
        ],
        0..max,
    )
    .prop_map(|pieces| pieces.concat())
}

fn soh_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == SOH).count()
}

/// The NAK and SYN items that `noise` yields towards the host (its other bytes are dropped).
fn control_items(noise: &[u8]) -> impl Iterator<Item = FromDevice> + '_ {
    noise.iter().filter_map(|&b| match b {
        NAK => Some(FromDevice::Nak),
        SYN => Some(FromDevice::Syn),
        _ => None,
    })
}

fn cuts() -> impl Strategy<Value = Vec<Index>> {
    vec(any::<Index>(), 0..8)
}

// ---------------------------------------------------------------------------------------------
// Frames and codecs

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn request_frames_round_trip(frame in request_frame()) {
        let bytes = frame.to_bytes();
        prop_assert_eq!(bytes.len(), frame.data().len() + 10);
        prop_assert_eq!(usize::from(bytes[1]), 0x20 + 4 + frame.data().len());
        let mut encoded = BytesMut::new();
        HostCodec.encode(&frame, &mut encoded).unwrap();
        prop_assert_eq!(&encoded[..], &bytes[..]);
        prop_assert_eq!(
            decode_whole(&mut DeviceCodec, &bytes),
            vec![FromHost::Request(frame)]
        );
    }

    #[test]
    fn reply_frames_round_trip(frame in reply_frame()) {
        let mut bytes = BytesMut::new();
        DeviceCodec.encode(ToHost::Reply(frame.clone()), &mut bytes).unwrap();
        prop_assert_eq!(&bytes[..], &frame.to_bytes()[..]);
        prop_assert_eq!(bytes.len(), frame.data().len() + 17);
        prop_assert_eq!(usize::from(bytes[1]), 0x20 + 11 + frame.data().len());
        prop_assert_eq!(decode_whole(&mut HostCodec, &bytes), vec![FromDevice::Reply(frame)]);
    }

    /// A device's output cut anywhere (as a serial port delivers it) decodes to the same items.
    #[test]
    fn a_device_stream_cut_anywhere_decodes_the_same(items in device_items(), cuts in cuts()) {
        let bytes = to_device_bytes(&items);
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), items);
    }

    #[test]
    fn a_host_stream_cut_anywhere_decodes_the_same(
        frames in vec(request_frame(), 0..5),
        cuts in cuts(),
    ) {
        let bytes: Vec<u8> = frames.iter().flat_map(RequestFrame::to_bytes).collect();
        let expected: Vec<FromHost> = frames.into_iter().map(FromHost::Request).collect();
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), expected);
    }

    /// With noise on the line too, where the stream is cut does not change what it decodes to,
    /// and every frame comes through, in order: each SOH in the noise is one false start that
    /// gives one Malformed item and drops only itself, so it never swallows a frame behind it.
    #[test]
    fn a_noisy_stream_cut_anywhere_decodes_as_the_whole(
        pieces in vec((line_bytes(40), request_frame(), reply_frame()), 0..4),
        cuts in cuts(),
    ) {
        let mut to_device = Vec::new();
        let mut to_host = Vec::new();
        let mut requests = Vec::new();
        let mut host_items = Vec::new();
        let mut false_starts = 0;
        for (noise, request, reply) in &pieces {
            to_device.extend(noise);
            to_device.extend(request.to_bytes());
            to_host.extend(noise);
            to_host.extend(reply.to_bytes());
            requests.push(FromHost::Request(request.clone()));
            host_items.extend(control_items(noise));
            host_items.push(FromDevice::Reply(reply.clone()));
            false_starts += soh_count(noise);
        }

        let whole = decode_whole(&mut DeviceCodec, &to_device);
        prop_assert_eq!(&feed(&mut DeviceCodec, &to_device, &cuts), &whole);
        let (malformed, good): (Vec<FromHost>, Vec<FromHost>) = whole
            .into_iter()
            .partition(|item| matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(good, requests);
        prop_assert_eq!(malformed.len(), false_starts, "{:?}", malformed);

        let whole = decode_whole(&mut HostCodec, &to_host);
        prop_assert_eq!(&feed(&mut HostCodec, &to_host, &cuts), &whole);
        let (malformed, good): (Vec<FromDevice>, Vec<FromDevice>) = whole
            .into_iter()
            .partition(|item| matches!(item, FromDevice::Malformed(_)));
        prop_assert_eq!(good, host_items);
        prop_assert_eq!(malformed.len(), false_starts, "{:?}", malformed);
    }

    /// Garbage that may hold SOH bytes (false starts, some claiming more bytes than the stream
    /// still has) before a frame: once the stream has ended and the decoder is drained with
    /// `decode_eof`, the frame is the last good item, and each SOH of the garbage gave exactly
    /// one Malformed item.
    #[test]
    fn garbage_with_false_starts_before_a_frame_does_not_hide_it(
        garbage in false_starts(24),
        request in request_frame(),
        reply in reply_frame(),
        cuts in cuts(),
    ) {
        let mut bytes = garbage.clone();
        bytes.extend(request.to_bytes());
        let items = feed(&mut DeviceCodec, &bytes, &cuts);
        let last_good = items.iter().rev().find(|item| !matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(last_good, Some(&FromHost::Request(request)), "{:?}", items);
        let malformed = items.iter().filter(|item| matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(malformed.count(), soh_count(&garbage), "{:?}", items);

        let mut bytes = garbage.clone();
        bytes.extend(reply.to_bytes());
        let items = feed(&mut HostCodec, &bytes, &cuts);
        let last_good = items.iter().rev().find(|item| matches!(item, FromDevice::Reply(_)));
        prop_assert_eq!(last_good, Some(&FromDevice::Reply(reply)), "{:?}", items);
        let malformed = items.iter().filter(|item| matches!(item, FromDevice::Malformed(_)));
        prop_assert_eq!(malformed.count(), soh_count(&garbage), "{:?}", items);
    }

    /// Noise without SOH before a frame is dropped; towards the host, NAK and SYN bytes in it
    /// still count as control bytes, in order.
    #[test]
    fn garbage_without_soh_before_a_frame_is_dropped(
        garbage in vec(any::<u8>().prop_filter("no SOH", |&b| b != SOH), 0..64),
        request in request_frame(),
        reply in reply_frame(),
        cuts in cuts(),
    ) {
        let mut bytes = garbage.clone();
        bytes.extend(request.to_bytes());
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), vec![FromHost::Request(request)]);

        let mut bytes = garbage.clone();
        bytes.extend(reply.to_bytes());
        let mut expected: Vec<FromDevice> = control_items(&garbage).collect();
        expected.push(FromDevice::Reply(reply));
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), expected);
    }

    /// Long noise without SOH (a wrong baud rate, a device babbling) is dropped as it comes:
    /// nothing but its NAK and SYN bytes reaches the host, nothing at all the device, and the
    /// buffer stays bounded (checked inside `feed`).
    #[test]
    fn noise_without_soh_yields_only_its_control_bytes(
        noise in vec(any::<u8>().prop_filter("no SOH", |&b| b != SOH), 0..1500),
        cuts in cuts(),
    ) {
        prop_assert_eq!(feed(&mut DeviceCodec, &noise, &cuts), vec![]);
        let controls: Vec<FromDevice> = control_items(&noise).collect();
        prop_assert_eq!(feed(&mut HostCodec, &noise, &cuts), controls);
    }

    /// Whatever arrives, neither decoder panics, loops or hoards bytes (checked inside `feed`).
    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(bytes in line_bytes(1500), cuts in cuts()) {
        feed(&mut DeviceCodec, &bytes, &cuts);
        feed(&mut HostCodec, &bytes, &cuts);
    }

    /// One changed byte in a frame is never taken for a frame (the BCC catches any single
    /// change in LEN..05; SOH, separator, 05 and ETX are checked by position). When the
    /// changed frame still has exactly one SOH, its first byte, it gives exactly one Malformed
    /// item: the rescan after its SOH finds no other start.
    #[test]
    fn a_single_changed_byte_is_detected(
        request in request_frame(),
        reply in reply_frame(),
        at in any::<Index>(),
        delta in 1u8..=0xFF,
    ) {
        let one_start = |bytes: &[u8]| bytes[0] == SOH && soh_count(bytes) == 1;

        let mut bytes = request.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = bytes[i].wrapping_add(delta);
        let items = decode_whole(&mut DeviceCodec, &bytes);
        prop_assert!(!items.iter().any(|item| matches!(item, FromHost::Request(_))), "{:?}", items);
        if one_start(&bytes) {
            prop_assert!(matches!(&items[..], [FromHost::Malformed(_)]), "{:?}", items);
        }

        let mut bytes = reply.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = bytes[i].wrapping_add(delta);
        let items = decode_whole(&mut HostCodec, &bytes);
        prop_assert!(!items.iter().any(|item| matches!(item, FromDevice::Reply(_))), "{:?}", items);
        if one_start(&bytes) {
            let malformed = items.iter().filter(|item| matches!(item, FromDevice::Malformed(_)));
            prop_assert_eq!(malformed.count(), 1, "{:?}", items);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every golden frame, concatenated in file order, decodes to one good item per vector,
    /// however the stream is cut.
    #[test]
    fn the_golden_streams_cut_anywhere_decode_the_same(cuts in cuts()) {
        let all = vectors::all();
        let stream = |direction| -> (usize, Vec<u8>) {
            let frames: Vec<&vectors::Vector> =
                all.iter().filter(|v| v.direction == direction).collect();
            (frames.len(), frames.iter().flat_map(|v| v.frame.clone()).collect())
        };

        let (count, bytes) = stream(vectors::Direction::HostToDevice);
        let whole = decode_whole(&mut DeviceCodec, &bytes);
        prop_assert_eq!(whole.len(), count);
        prop_assert!(whole.iter().all(|item| matches!(item, FromHost::Request(_))));
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), whole);

        let (count, bytes) = stream(vectors::Direction::DeviceToHost);
        let whole = decode_whole(&mut HostCodec, &bytes);
        prop_assert_eq!(whole.len(), count);
        prop_assert!(!whole.iter().any(|item| matches!(item, FromDevice::Malformed(_))));
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), whole);
    }
}

// ---------------------------------------------------------------------------------------------
// Text and number strategies

/// Text pieces: plain letters, every character that needs an escape, escape look-alikes,
/// multi-byte characters and any non-control character.
fn text_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z0-9 ]{1,4}",
        3 => select(vec!['&', ',', '<', '>', '^', '\r', '\n', ';', '*', '%', ':', '"'])
            .prop_map(String::from),
        1 => select(vec!["^amp;", "^x2c;", "^lt;", "^gt;", "^xa;", "^x41;", "&amp;", "^", "^;"])
            .prop_map(String::from),
        1 => select(vec!['\u{e9}', '\u{c9}', '\u{20ac}', '\u{4e2d}', '\u{1f600}'])
            .prop_map(String::from),
        1 => any::<char>()
            .prop_filter("not a control char", |c| !c.is_control())
            .prop_map(String::from),
    ]
}

/// Text of up to `max` pieces (possibly empty).
fn text(max: usize) -> impl Strategy<Value = String> {
    vec(text_piece(), 0..=max).prop_map(|pieces| pieces.concat())
}

/// Text that is not empty.
fn text1(max: usize) -> impl Strategy<Value = String> {
    vec(text_piece(), 1..=max).prop_map(|pieces| pieces.concat())
}

/// An invoice number as `check_rn` accepts it (printable ASCII without `, & < > ^`).
fn rn() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9/._ #+:;=-]{{1,{MAX_RN_LEN}}}")).unwrap()
}

/// A plain identifier (MID, NIF, codeDEFDGI, currency).
fn ident(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Z0-9]{{1,{max}}}")).unwrap()
}

/// An amount with 2 decimal places, |value| <= max.
fn cents(max: i64) -> impl Strategy<Value = Decimal> {
    (-max * 100..=max * 100).prop_map(|n| Decimal::new(n, 2))
}

/// A rate in percent with 2 places, 0.00..=100.00.
fn rate() -> impl Strategy<Value = Decimal> {
    (0i64..=10_000).prop_map(|n| Decimal::new(n, 2))
}

fn quantity() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        4 => Just(Decimal::ONE),
        12 => (1i64..=1_000_000, 0u32..=3).prop_map(|(n, scale)| Decimal::new(n, scale)),
        1 => Just(Decimal::MAX),
    ]
}

fn day() -> impl Strategy<Value = NaiveDate> {
    (2000i32..=2099, 1u32..=12, 1u32..=28)
        .prop_map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap())
}

fn moment() -> impl Strategy<Value = NaiveDateTime> {
    (day(), 0u32..24, 0u32..60, 0u32..60).prop_map(|(d, h, m, s)| d.and_hms_opt(h, m, s).unwrap())
}

fn group() -> impl Strategy<Value = TaxGroup> {
    (0usize..TaxGroup::COUNT).prop_map(|i| TaxGroup::from_index(i).unwrap())
}

// ---------------------------------------------------------------------------------------------
// Typed command strategies

fn item() -> impl Strategy<Value = Item> {
    (
        (
            text1(6),
            option::of(text(4)),
            select(ItemType::ALL),
            group(),
            rate(),
        ),
        (cents(10_000_000), cents(1_000_000), quantity()),
        option::of((option::of(rate()), cents(100_000))),
        option::of((cents(1_000_000), text(6))),
    )
        .prop_map(
            |(
                (name, code, item_type, group, rate),
                (line_amount, price, quantity),
                tax,
                change,
            )| Item {
                name,
                code,
                item_type,
                group,
                rate,
                line_amount,
                price,
                quantity,
                specific_tax: tax.map(|(rate, amount)| SpecificTax { rate, amount }),
                price_change: change.map(|(original_price, description)| PriceChange {
                    original_price,
                    description,
                }),
            },
        )
}

fn open_invoice() -> impl Strategy<Value = OpenInvoice> {
    (
        (text(4), text(6), text(4), select(InvoiceType::ALL)),
        (select(ReferenceType::ALL), text(6)),
        (select(PriceMode::ALL), text(4), rn()),
        option::of((1i64..=100_000_000, 0u32..=4, day())),
    )
        .prop_map(
            |(
                (operator_id, operator_name, nif, invoice_type),
                (kind, code_def),
                (price_mode, isf, rn),
                usd,
            )| {
                OpenInvoice {
                    operator_id,
                    operator_name,
                    nif,
                    invoice_type,
                    reference: invoice_type
                        .is_credit_note()
                        .then_some(CreditReference { kind, code_def }),
                    price_mode,
                    isf,
                    rn,
                    usd_rate: usd.map(|(n, scale, date)| UsdRate {
                        rate: Decimal::new(n, scale),
                        date,
                    }),
                }
            },
        )
}

fn client() -> impl Strategy<Value = Client> {
    vec(text(4), 7).prop_map(|f| Client {
        client_type: f[0].clone(),
        nif: f[1].clone(),
        name: f[2].clone(),
        address: f[3].clone(),
        contact: f[4].clone(),
        email: f[5].clone(),
        rccm: f[6].clone(),
    })
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        1 => Just(Command::DeviceState),
        1 => Just(Command::LinkState),
        1 => Just(Command::Subtotal),
        1 => Just(Command::Cancel),
        1 => select(TaxpayerKey::ALL).prop_map(Command::TaxpayerField),
        1 => client().prop_map(Command::SetClient),
        3 => open_invoice().prop_map(Command::OpenInvoice),
        4 => item().prop_map(Command::Item),
        1 => (select(CommentLine::ALL), text(12))
            .prop_map(|(line, text)| Command::Comment(Comment { line, text })),
        1 => (select(PaymentMethod::ALL), cents(1_000_000_000))
            .prop_map(|(method, amount)| Command::Payment(Payment { method, amount })),
        1 => (cents(1_000_000_000), cents(1_000_000_000))
            .prop_map(|(total, vat)| Command::Finalize(FinalizeTotals { total, vat })),
    ]
}

// ---------------------------------------------------------------------------------------------
// Typed reply strategies: (command byte, reply)

fn device_state() -> impl Strategy<Value = DeviceState> {
    (
        (
            ident(10),
            ident(10),
            moment(),
            0u64..10_000_000,
            0u64..10_000_000,
            0u64..10_000_000,
        ),
        option::of((
            moment(),
            select(InvoiceType::ALL),
            ident(24),
            rn(),
            cents(1_000_000_000),
        )),
        vec(option::of(rate()), TaxGroup::COUNT),
        option::of((
            "[A-Z]{3}",
            (1i64..=100_000_000, 0u32..=4).prop_map(|(n, s)| Decimal::new(n, s)),
            day(),
        )),
    )
        .prop_map(
            |((mid, nif, clock, tc, fvc, frc), last, rates, currency)| DeviceState {
                mid,
                nif,
                clock,
                tc,
                fvc,
                frc,
                last: last.map(|(at, invoice_type, code_def, rn, amount)| LastInvoice {
                    at,
                    invoice_type,
                    code_def,
                    rn,
                    amount,
                }),
                rates: rates.try_into().unwrap(),
                currency: currency.map(|(code, rate, date)| CurrencyInfo { code, rate, date }),
            },
        )
}

fn subtotal() -> impl Strategy<Value = Subtotal> {
    (
        cents(1_000_000_000),
        vec((group(), cents(100_000), cents(10_000)), 0..=2),
        cents(100_000),
        option::of(cents(1_000_000)),
    )
        .prop_map(|(total, groups, specific_tax, usd_equivalent)| {
            let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
            let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
            for (g, ttc, vat) in groups {
                group_ttc[g.index()] = ttc;
                group_vat[g.index()] = vat;
            }
            Subtotal {
                total,
                group_ttc,
                group_vat,
                specific_tax,
                usd_equivalent,
            }
        })
}

fn certification() -> impl Strategy<Value = Certification> {
    (
        (
            0u64..10_000_000,
            0u64..10_000_000,
            select(InvoiceType::ALL),
            moment(),
        ),
        (text(4), text(4), option::of(rn()), text1(8)),
    )
        .prop_map(
            |((fc, tc, invoice_type, at), (mid, nif, rn, code_def))| Certification {
                fc,
                tc,
                invoice_type,
                at,
                mid,
                nif,
                rn,
                code_def,
            },
        )
}

fn reply() -> impl Strategy<Value = (u8, Reply)> {
    let done_commands = vec![
        code::OPEN_INVOICE,
        code::SET_CLIENT,
        code::ITEM,
        code::PAYMENT,
        code::COMMENT,
        code::FINALIZE,
    ];
    prop_oneof![
        device_state().prop_map(|s| (code::DEVICE_STATE, Reply::DeviceState(s))),
        (
            any::<u32>(),
            any::<u32>(),
            option::of(moment()),
            select(DgiLinkState::ALL),
            text(8)
        )
            .prop_map(|(sent, stored, last_contact, state, error)| {
                (
                    code::LINK_STATE,
                    Reply::LinkState(LinkState {
                        sent: sent.into(),
                        stored: stored.into(),
                        last_contact,
                        state,
                        error,
                    }),
                )
            }),
        (select(TaxpayerKey::ALL), text(12)).prop_map(|(key, value)| {
            (
                code::TAXPAYER_FIELD,
                Reply::TaxpayerField(TaxpayerValue { key, value }),
            )
        }),
        subtotal().prop_map(|s| (code::SUBTOTAL, Reply::Subtotal(s))),
        certification().prop_map(|c| (code::FINALIZE, Reply::Certified(c))),
        text(12).prop_map(|t| (code::FINALIZE, Reply::Pending(t))),
        (any::<u8>(), text(12)).prop_map(|(cmd, t)| (cmd, Reply::Refused(t))),
        select(done_commands).prop_map(|cmd| (cmd, Reply::Done)),
    ]
}

// ---------------------------------------------------------------------------------------------
// Typed values

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A command's DATA parses back to the same command, and so does its frame after the wire;
    /// a command that does not fit is refused with DataTooLong, never cut.
    #[test]
    fn typed_commands_round_trip(command in command(), seq in seq()) {
        match command.encode() {
            Ok(data) => {
                prop_assert!(data.len() <= MAX_REQUEST_DATA);
                prop_assert_eq!(Command::parse(command.code(), &data), Ok(command.clone()));
                let frame = command.to_frame(seq).unwrap();
                prop_assert_eq!(frame.data(), &data[..]);
                let items = decode_whole(&mut DeviceCodec, &frame.to_bytes());
                let [FromHost::Request(decoded)] = &items[..] else {
                    return Err(TestCaseError::fail(format!("decoded {items:?}")));
                };
                prop_assert_eq!(decoded.seq(), seq);
                prop_assert_eq!(Command::from_frame(decoded), Ok(command));
            }
            Err(FieldError::DataTooLong { cmd, len, max }) => {
                prop_assert_eq!(cmd, command.code());
                prop_assert_eq!(max, MAX_REQUEST_DATA);
                prop_assert!(len > max);
                prop_assert!(command.to_frame(seq).is_err());
            }
            Err(other) => prop_assert!(false, "{:?} refused: {}", command, other),
        }
    }

    /// A reply's DATA parses back to the same reply, through a reply frame and the host codec.
    #[test]
    fn typed_replies_round_trip((cmd, reply) in reply(), seq in seq(), status in any::<[u8; 6]>()) {
        match reply.encode(cmd) {
            Ok(data) => {
                prop_assert_eq!(Reply::parse(cmd, &data), Ok(reply.clone()));
                let frame = ReplyFrame::new(seq, cmd, data, Status(status)).unwrap();
                let items = decode_whole(&mut HostCodec, &frame.to_bytes());
                let [FromDevice::Reply(decoded)] = &items[..] else {
                    return Err(TestCaseError::fail(format!("decoded {items:?}")));
                };
                prop_assert_eq!(decoded.status(), Status(status));
                prop_assert_eq!(Reply::parse(decoded.cmd(), decoded.data()), Ok(reply));
            }
            Err(FieldError::DataTooLong { len, max, .. }) => {
                prop_assert_eq!(max, MAX_REPLY_DATA);
                prop_assert!(len > max);
            }
            Err(other) => prop_assert!(false, "{:?} refused: {}", reply, other),
        }
    }

    /// Parsing arbitrary DATA for any command byte never panics.
    #[test]
    fn parsing_arbitrary_data_never_panics(
        cmd in any::<u8>(),
        data in vec(any::<u8>(), 0..80),
        text in text(20),
    ) {
        let _ = Command::parse(cmd, &data);
        let _ = Reply::parse(cmd, &data);
        let _ = Command::parse(cmd, text.as_bytes());
        let _ = Reply::parse(cmd, text.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// Fields

/// The largest decimals are written in full (rust_decimal's `{:.N}` formatting panics on them:
/// a 29-digit value with 3 places, 28 digits with 4).
#[test]
fn the_largest_decimals_are_written_not_a_panic() {
    let max = "79228162514264337593543950335";
    for value in [Decimal::MAX, Decimal::MIN] {
        let sign = if value.is_sign_negative() { "-" } else { "" };
        assert_eq!(fields::amount("a", value), Ok(format!("{sign}{max}.00")));
        assert_eq!(fields::fixed("q", value, 3), Ok(format!("{sign}{max}.000")));
        assert_eq!(
            fields::fixed("r", value, 4),
            Ok(format!("{sign}{max}.0000"))
        );
        assert_eq!(fields::quantity("q", value), Ok(format!("{sign}{max}")));
    }
    let item = Command::Item(Item {
        name: "X".into(),
        code: None,
        item_type: ItemType::Bie,
        group: TaxGroup::from_letter('B').unwrap(),
        rate: Decimal::new(1600, 2),
        line_amount: Decimal::ONE,
        price: Decimal::ONE,
        quantity: Decimal::MAX,
        specific_tax: None,
        price_change: None,
    });
    let data = item.encode().unwrap();
    assert!(data.ends_with(format!("1.00*{max}").as_bytes()));
    assert_eq!(Command::parse(code::ITEM, &data), Ok(item));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// An escaped field carries no separator or markup and unescapes to the original.
    #[test]
    fn escape_then_unescape_is_the_identity(value in text(20)) {
        let escaped = fields::escape("field", &value).unwrap();
        prop_assert!(!escaped.contains([',', '\r', '\n', '&', '<', '>', '\t']), "{:?}", escaped);
        prop_assert_eq!(fields::unescape(&escaped), value);
    }

    /// Escaping refuses exactly the control characters other than CR and LF, naming the first.
    #[test]
    fn escape_refuses_control_characters(value in any::<String>()) {
        let first_bad = value.chars().find(|&c| c.is_control() && c != '\r' && c != '\n');
        match (fields::escape("field", &value), first_bad) {
            (Ok(escaped), None) => prop_assert_eq!(fields::unescape(&escaped), value),
            (Err(FieldError::ControlChar { field, code }), Some(c)) => {
                prop_assert_eq!(field, "field");
                prop_assert_eq!(code, u32::from(c));
            }
            (result, bad) => {
                prop_assert!(false, "{:?} for {:?} (control char {:?})", result, value, bad)
            }
        }
    }

    /// Escaped fields joined with commas split back into the same fields.
    #[test]
    fn escaped_fields_split_back(values in vec(text(6), 1..8)) {
        let escaped: Vec<String> = values.iter().map(|v| fields::escape("f", v).unwrap()).collect();
        prop_assert_eq!(fields::split(&fields::join(&escaped)), Ok(values));
    }

    /// Unescaping never panics, and text without `^` is left alone.
    #[test]
    fn unescape_accepts_anything(value in any::<String>(), plain in "[^^]{0,20}") {
        let _ = fields::unescape(&value);
        prop_assert_eq!(fields::unescape(&plain), plain);
    }

    /// Any decimal, up to the largest, is written with exactly 2 (amounts), 3 or 4 (USD rate)
    /// places and reads back to the same value, or is refused as too precise: never a panic.
    #[test]
    fn fixed_point_fields_take_any_decimal(
        parts in (any::<u32>(), any::<u32>(), any::<u32>(), any::<bool>(), 0u32..=5),
    ) {
        let (lo, mid, hi, negative, scale) = parts;
        let value = Decimal::from_parts(lo, mid, hi, negative, scale);
        for places in [2, 3, 4] {
            match fields::fixed("field", value, places) {
                Ok(text) => {
                    let (_, decimals) = text.split_once('.').expect("a decimal point");
                    prop_assert_eq!(decimals.len(), places as usize, "{}", text);
                    prop_assert_eq!(fields::parse_decimal("field", &text), Ok(value));
                }
                Err(FieldError::TooPrecise { .. }) => {
                    prop_assert!(value.normalize().scale() > places)
                }
                Err(other) => prop_assert!(false, "{}", other),
            }
        }
        prop_assert_eq!(fields::amount("amount", value), fields::fixed("amount", value, 2));
        if let Ok(text) = fields::quantity("quantity", value) {
            prop_assert_eq!(fields::parse_decimal("quantity", &text), Ok(value));
        }
    }
}
