use super::*;
use crate::config::Timing;
use chrono::NaiveDate;
use mcf_sfe::command::{
    code, Client, Comment, CreditReference, Item, OpenInvoice, Payment, UsdRate,
};
use mcf_sfe::types::{
    CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup,
};
use mcf_sfe::wire::MAX_REPLY_DATA;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

mod credit_notes;
mod firmware;
mod memory;
mod robustness;
mod sales;

fn clock() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 21)
        .and_then(|d| d.and_hms_milli_opt(14, 30, 5, 250))
        .unwrap()
}

fn config() -> DeviceConfig {
    DeviceConfig::default()
}

/// Sends `command` as the host would (encoded DATA) at monotonic time `now`.
fn send_at(engine: &mut Engine, command: &Command, now: Instant) -> (Reply, Handled) {
    let data = command.encode().unwrap();
    let handled = engine.handle(command.code(), &data, clock(), now);
    assert!(handled.reply.len() <= MAX_REPLY_DATA);
    let reply = Reply::parse(command.code(), &handled.reply).unwrap();
    (reply, handled)
}

fn send(engine: &mut Engine, command: &Command) -> Reply {
    send_at(engine, command, Instant::now()).0
}

fn refused(engine: &mut Engine, command: &Command) -> String {
    match send(engine, command) {
        Reply::Refused(text) => text,
        other => panic!("{command:?} accepted: {other:?}"),
    }
}

fn open(invoice_type: InvoiceType, mode: PriceMode, rn: &str) -> Command {
    Command::OpenInvoice(OpenInvoice {
        operator_id: "1".into(),
        operator_name: "Caisse 1".into(),
        nif: "A1234567B".into(),
        invoice_type,
        reference: None,
        price_mode: mode,
        isf: "ISF01".into(),
        rn: rn.into(),
        usd_rate: None,
    })
}

fn credit(invoice_type: InvoiceType, rn: &str, original: &str) -> Command {
    let Command::OpenInvoice(mut header) = open(invoice_type, PriceMode::Ttc, rn) else {
        unreachable!()
    };
    header.reference = Some(CreditReference {
        kind: ReferenceType::Cor,
        code_def: original.into(),
    });
    Command::OpenInvoice(header)
}

fn item(name: &str, group: char, rate: Decimal, price: Decimal, quantity: Decimal) -> Command {
    Command::Item(
        Item::new(
            name,
            ItemType::Bie,
            TaxGroup::from_letter(group).unwrap(),
            rate,
            price,
            quantity,
        )
        .unwrap(),
    )
}

fn stylo() -> Command {
    item("STYLO BIC", 'B', dec!(16.00), dec!(600.00), dec!(2))
}

fn pay(amount: Decimal) -> Command {
    Command::Payment(Payment {
        method: PaymentMethod::Especes,
        amount,
    })
}

fn finalize(total: Decimal, vat: Decimal) -> Command {
    Command::Finalize(FinalizeTotals { total, vat })
}

fn subtotal(engine: &mut Engine) -> mcf_sfe::reply::Subtotal {
    match send(engine, &Command::Subtotal) {
        Reply::Subtotal(s) => s,
        other => panic!("33h answered {other:?}"),
    }
}

fn group(letter: char) -> usize {
    TaxGroup::from_letter(letter).unwrap().index()
}

fn certified(reply: Reply) -> Certification {
    match reply {
        Reply::Certified(c) => c,
        other => panic!("38h answered {other:?}"),
    }
}

/// One STYLO BIC FV (ttc, 1200.00 / 165.52), certified.
fn sell(engine: &mut Engine, rn: &str) -> Certification {
    for command in [
        open(InvoiceType::Fv, PriceMode::Ttc, rn),
        stylo(),
        Command::Subtotal,
    ] {
        assert!(!matches!(send(engine, &command), Reply::Refused(_)));
    }
    send(engine, &pay(dec!(1200.00)));
    certified(send(engine, &finalize(dec!(1200.00), dec!(165.52))))
}

fn device_state(engine: &mut Engine) -> DeviceState {
    match send(engine, &Command::DeviceState) {
        Reply::DeviceState(state) => state,
        other => panic!("C1h answered {other:?}"),
    }
}

/// 16 comma-separated amounts: `b_value` in group B, 0.00 elsewhere.
fn groups(b_value: &str) -> String {
    let mut all = vec!["0.00"; 16];
    all[group('B')] = b_value;
    all.join(",")
}

fn credit_note_engine(reply: SlowReply) -> (Engine, Command) {
    let config = DeviceConfig {
        timing: Timing {
            credit_note_reply: reply,
            ..Timing::default()
        },
        ..config()
    };
    let mut engine = Engine::open(config).unwrap();
    let original = sell(&mut engine, "F-1");
    send(
        &mut engine,
        &credit(InvoiceType::Fa, "A-1", &original.code_def),
    );
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    send(&mut engine, &pay(dec!(1200.00)));
    (engine, finalize(dec!(1200.00), dec!(165.52)))
}
