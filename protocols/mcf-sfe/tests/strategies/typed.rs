//! Proptest strategies for typed values: text with every character that needs an escape,
//! numbers and dates, the typed commands, and the typed replies with their command byte.
//! Part of the shared `strategies` module of the `properties_*.rs` tests.

use chrono::{NaiveDate, NaiveDateTime};
use mcf_sfe::command::{
    code, Client, Comment, CreditReference, FinalizeTotals, Item, OpenInvoice, Payment,
    PriceChange, SpecificTax, UsdRate, MAX_RN_LEN,
};
use mcf_sfe::reply::{
    Certification, CurrencyInfo, DeviceState, GroupRate, Last, LastInvoice, LinkState, Subtotal,
    TaxpayerValue,
};
use mcf_sfe::types::{
    CommentLine, DgiLinkState, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType,
    TaxGroup, TaxpayerKey,
};
use mcf_sfe::{Command, Reply};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use rust_decimal::Decimal;

// ---------------------------------------------------------------------------------------------
// Text and number strategies

/// Text pieces: plain letters, every character that needs an escape, escape look-alikes,
/// multi-byte characters and any non-control character.
pub fn text_piece() -> impl Strategy<Value = String> {
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
pub fn text(max: usize) -> impl Strategy<Value = String> {
    vec(text_piece(), 0..=max).prop_map(|pieces| pieces.concat())
}

/// Text that is not empty.
pub fn text1(max: usize) -> impl Strategy<Value = String> {
    vec(text_piece(), 1..=max).prop_map(|pieces| pieces.concat())
}

/// An invoice number as `check_rn` accepts it (printable ASCII without `, & < > ^`).
pub fn rn() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9/._ #+:;=-]{{1,{MAX_RN_LEN}}}")).unwrap()
}

/// A plain identifier (MID, NIF, codeDEFDGI, currency).
pub fn ident(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Z0-9]{{1,{max}}}")).unwrap()
}

/// An amount with 2 decimal places, |value| <= max.
pub fn cents(max: i64) -> impl Strategy<Value = Decimal> {
    (-max * 100..=max * 100).prop_map(|n| Decimal::new(n, 2))
}

/// A rate in percent with 2 places, 0.00..=100.00.
pub fn rate() -> impl Strategy<Value = Decimal> {
    (0i64..=10_000).prop_map(|n| Decimal::new(n, 2))
}

pub fn quantity() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        4 => Just(Decimal::ONE),
        12 => (1i64..=1_000_000, 0u32..=3).prop_map(|(n, scale)| Decimal::new(n, scale)),
        1 => Just(Decimal::MAX),
    ]
}

pub fn day() -> impl Strategy<Value = NaiveDate> {
    (2000i32..=2099, 1u32..=12, 1u32..=28)
        .prop_map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap())
}

pub fn moment() -> impl Strategy<Value = NaiveDateTime> {
    (day(), 0u32..24, 0u32..60, 0u32..60).prop_map(|(d, h, m, s)| d.and_hms_opt(h, m, s).unwrap())
}

pub fn group() -> impl Strategy<Value = TaxGroup> {
    (0usize..TaxGroup::COUNT).prop_map(|i| TaxGroup::from_index(i).unwrap())
}

// ---------------------------------------------------------------------------------------------
// Typed command strategies

pub fn item() -> impl Strategy<Value = Item> {
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

pub fn open_invoice() -> impl Strategy<Value = OpenInvoice> {
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

pub fn client() -> impl Strategy<Value = Client> {
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

pub fn command() -> impl Strategy<Value = Command> {
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

pub fn device_state() -> impl Strategy<Value = DeviceState> {
    (
        (
            ident(10),
            ident(10),
            option::of(moment()),
            0u64..10_000_000,
            0u64..10_000_000,
            0u64..10_000_000,
        ),
        option::of((
            moment(),
            select(InvoiceType::ALL),
            ident(24),
            rn(),
            option::of(cents(1_000_000_000)),
        )),
        option::of((
            vec(option::of(rate()), TaxGroup::COUNT),
            option::of(("[A-Z]{3}", "[0-9.-]{0,8}", "[0-9]{0,8}")),
        )),
    )
        .prop_map(|((mid, nif, clock, tc, fvc, frc), last, rates)| {
            let (rates, currency) = match rates {
                Some((rates, currency)) => {
                    let rates: Vec<GroupRate> = rates.into_iter().map(GroupRate::from).collect();
                    (Some(rates.try_into().unwrap()), currency)
                }
                None => (None, None),
            };
            DeviceState {
                mid,
                nif,
                clock,
                tc,
                fvc,
                frc,
                last: match last {
                    Some((at, invoice_type, code_def, rn, amount)) => Last::Invoice(LastInvoice {
                        at,
                        invoice_type,
                        code_def,
                        rn,
                        amount,
                    }),
                    None => Last::Nothing,
                },
                rates,
                currency: currency.map(|(code, rate, date)| CurrencyInfo { code, rate, date }),
            }
        })
}

pub fn subtotal() -> impl Strategy<Value = Subtotal> {
    (
        cents(1_000_000_000),
        vec((group(), cents(100_000), cents(10_000)), 0..=2),
        cents(100_000),
        option::of(cents(1_000_000)),
        prop_oneof![4 => Just(TaxGroup::COUNT), 1 => 1..=TaxGroup::COUNT],
    )
        .prop_map(|(total, amounts, specific_tax, usd, groups)| {
            let mut group_ttc = [Decimal::ZERO; TaxGroup::COUNT];
            let mut group_vat = [Decimal::ZERO; TaxGroup::COUNT];
            for (g, ttc, vat) in amounts.into_iter().filter(|(g, _, _)| g.index() < groups) {
                group_ttc[g.index()] = ttc;
                group_vat[g.index()] = vat;
            }
            Subtotal {
                total,
                group_ttc,
                group_vat,
                specific_tax,
                mcur: usd
                    .map(|usd| mcf_sfe::fields::amount("MCUR", usd).unwrap())
                    .unwrap_or_default(),
                groups,
            }
        })
}

pub fn certification() -> impl Strategy<Value = Certification> {
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

pub fn reply() -> impl Strategy<Value = (u8, Reply)> {
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
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(moment()),
            select(DgiLinkState::ALL),
            text(8)
        )
            .prop_map(|(sent, stored, last_contact, state, error)| {
                (
                    code::LINK_STATE,
                    Reply::LinkState(LinkState {
                        sent: sent.map(u64::from),
                        stored: stored.map(u64::from),
                        last_contact,
                        state: state.to_string(),
                        error,
                    }),
                )
            }),
        (option::of(select(TaxpayerKey::ALL)), text(12)).prop_map(|(key, value)| {
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
