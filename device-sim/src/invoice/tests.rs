use super::*;
use crate::config::DeviceConfig;
use crate::fiscal::NewInvoice;
use chrono::NaiveDate;
use mcf_sfe::command::{CreditReference, UsdRate};
use mcf_sfe::types::{ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup};
use rust_decimal_macros::dec;

mod checks;

const NIF: &str = "A1234567B";

fn memory(capacity: u64) -> FiscalMemory {
    FiscalMemory::open(None, "SIM0000001", NIF, capacity).unwrap()
}

fn rates() -> Rates {
    DeviceConfig::default().rates
}

fn header(invoice_type: InvoiceType, mode: PriceMode) -> OpenInvoice {
    OpenInvoice {
        operator_id: "1".into(),
        operator_name: "Caisse 1".into(),
        nif: NIF.into(),
        invoice_type,
        reference: None,
        price_mode: mode,
        isf: "ISF01".into(),
        rn: "F-2026-001".into(),
        usd_rate: None,
    }
}

fn item(group: char, rate: Decimal, price: Decimal, quantity: Decimal) -> Item {
    Item {
        code: Some("LR 1515".into()),
        ..Item::new(
            "STYLO BIC",
            ItemType::Bie,
            TaxGroup::from_letter(group).unwrap(),
            rate,
            price,
            quantity,
        )
        .unwrap()
    }
}

fn stylo() -> Item {
    item('B', dec!(16.00), dec!(600.00), dec!(2))
}

fn cash(amount: Decimal) -> Payment {
    Payment {
        method: PaymentMethod::Especes,
        amount,
    }
}

fn totals(total: Decimal, vat: Decimal) -> FinalizeTotals {
    FinalizeTotals { total, vat }
}

/// A machine with one STYLO BIC line (ttc, 1200.00 / VAT 165.52), in the given phase.
fn machine_at(phase: Phase, memory: &FiscalMemory) -> InvoiceMachine {
    let rates = rates();
    let checks = Checks {
        nif: NIF,
        rates: &rates,
        memory,
    };
    let mut m = InvoiceMachine::new();
    let steps = [
        Phase::ClientSet,
        Phase::Open,
        Phase::Items,
        Phase::Subtotal,
        Phase::Payments,
    ];
    for step in steps {
        if m.phase() == phase {
            break;
        }
        match step {
            Phase::ClientSet => m.set_client(Client::default()).unwrap(),
            Phase::Open => m
                .open(header(InvoiceType::Fv, PriceMode::Ttc), &checks)
                .unwrap(),
            Phase::Items => m.add_item(&stylo(), &checks).unwrap(),
            Phase::Subtotal => drop(m.take_subtotal().unwrap()),
            _ => m.add_payment(cash(dec!(1000.00))).unwrap(),
        }
    }
    assert_eq!(m.phase(), phase);
    m
}

#[test]
fn a_full_invoice_walks_through_every_phase() {
    let memory = memory(10);
    let m = machine_at(Phase::Payments, &memory);
    let mut m = m;
    m.add_payment(cash(dec!(200.00))).unwrap();
    let invoice = m
        .check_finalize(totals(dec!(1200.00), dec!(165.52)))
        .unwrap();
    assert_eq!(invoice.item_count(), 1);
    assert_eq!(invoice.paid(), dec!(1200.00));
    assert_eq!(invoice.subtotal().total, dec!(1200.00));
    assert!(m.close().is_some());
    assert_eq!(m.phase(), Phase::Idle);
    assert_eq!(m.client(), None);
}

#[test]
fn out_of_order_commands_are_refused_and_change_nothing() {
    let memory = memory(10);
    let rates = rates();
    let checks = Checks {
        nif: NIF,
        rates: &rates,
        memory: &memory,
    };
    let some_totals = totals(dec!(1200.00), dec!(165.52));
    let comment = || Comment {
        line: CommentLine::A,
        text: "merci".into(),
    };
    type Step = fn(&mut InvoiceMachine, &Checks<'_>) -> Result<(), Refusal>;
    let cases: Vec<(Phase, &str, Step, Refusal)> = vec![
        (
            Phase::Idle,
            "31",
            |m, c| m.add_item(&stylo(), c),
            Refusal::NoOpenInvoice,
        ),
        (
            Phase::Idle,
            "33",
            |m, _| m.take_subtotal().map(drop),
            Refusal::NoOpenInvoice,
        ),
        (
            Phase::Idle,
            "35",
            |m, _| m.add_payment(cash(dec!(1))),
            Refusal::NoOpenInvoice,
        ),
        (
            Phase::Idle,
            "38C",
            |m, _| m.cancel(),
            Refusal::NoOpenInvoice,
        ),
        (
            Phase::ClientSet,
            "31",
            |m, c| m.add_item(&stylo(), c),
            Refusal::NoOpenInvoice,
        ),
        (
            Phase::Open,
            "C0",
            |m, c| m.open(header(InvoiceType::Fv, PriceMode::Ht), c),
            Refusal::InvoiceAlreadyOpen,
        ),
        (
            Phase::Open,
            "C3",
            |m, _| m.set_client(Client::default()),
            Refusal::InvoiceAlreadyOpen,
        ),
        (
            Phase::Open,
            "33",
            |m, _| m.take_subtotal().map(drop),
            Refusal::NoItem,
        ),
        (
            Phase::Items,
            "35",
            |m, _| m.add_payment(cash(dec!(1))),
            Refusal::NoSubtotal,
        ),
        (
            Phase::Subtotal,
            "31",
            |m, c| m.add_item(&stylo(), c),
            Refusal::ItemsClosed,
        ),
        (
            Phase::Payments,
            "33",
            |m, _| m.take_subtotal().map(drop),
            Refusal::PaymentsStarted,
        ),
    ];
    for (phase, what, step, refusal) in cases {
        let mut m = machine_at(phase, &memory);
        let before = m.clone();
        assert_eq!(step(&mut m, &checks), Err(refusal), "{what} in {phase:?}");
        assert_eq!(m, before, "{what} in {phase:?} changed the state");
    }
    let mut m = machine_at(Phase::Idle, &memory);
    assert_eq!(
        m.check_finalize(some_totals).err(),
        Some(Refusal::NoOpenInvoice)
    );
    let mut m2 = machine_at(Phase::Items, &memory);
    assert_eq!(
        m2.check_finalize(some_totals).err(),
        Some(Refusal::NoSubtotal)
    );
    assert_eq!(m.add_comment(comment()), Err(Refusal::NoOpenInvoice));
    let mut m3 = machine_at(Phase::Subtotal, &memory);
    assert_eq!(m3.add_comment(comment()), Err(Refusal::CommentsClosed));
    m2.add_comment(comment()).unwrap();
    assert_eq!(m2.phase(), Phase::Items);
}

#[test]
fn subtotal_can_be_asked_again_until_the_first_payment() {
    let memory = memory(10);
    let mut m = machine_at(Phase::Subtotal, &memory);
    let again = m.take_subtotal().unwrap();
    assert_eq!(again.total, dec!(1200.00));
    assert_eq!(again.vat(), dec!(165.52));
    assert_eq!(m.phase(), Phase::Subtotal);
}

#[test]
fn finalize_checks_totals_then_payments() {
    let memory = memory(10);
    let m = machine_at(Phase::Subtotal, &memory);
    let mismatch = m.check_finalize(totals(dec!(1200.00), dec!(165.51))).err();
    assert_eq!(
        mismatch.map(|r| r.to_string()).as_deref(),
        Some("totals differ from subtotal: device has 1200.00,165.52")
    );
    let right = totals(dec!(1200), dec!(165.520));
    assert_eq!(m.check_finalize(right).err(), Some(Refusal::NoPayment));
    let m = machine_at(Phase::Payments, &memory); // 1000.00 paid
    let shortfall = m.check_finalize(right).err().map(|r| r.to_string());
    assert_eq!(
        shortfall.as_deref(),
        Some("payment shortfall: paid 1000.00 of 1200.00")
    );
    let mut m = m;
    m.add_payment(cash(dec!(500.00))).unwrap(); // change is given back: overpaying is fine
    assert!(m.check_finalize(right).is_ok());
    assert_eq!(
        m.add_payment(cash(dec!(0))),
        Err(Refusal::PaymentNotPositive)
    );
    assert_eq!(
        m.add_payment(cash(dec!(-5))),
        Err(Refusal::PaymentNotPositive)
    );
}

#[test]
fn cancel_returns_to_idle_from_any_phase_but_idle() {
    let memory = memory(10);
    for phase in [
        Phase::ClientSet,
        Phase::Open,
        Phase::Items,
        Phase::Subtotal,
        Phase::Payments,
    ] {
        let mut m = machine_at(phase, &memory);
        m.cancel().unwrap();
        assert_eq!(m.phase(), Phase::Idle, "cancel from {phase:?}");
        assert_eq!(m.client(), None);
    }
}

#[test]
fn a_pending_finalization_blocks_everything_but_38() {
    let memory = memory(10);
    let mut m = machine_at(Phase::Payments, &memory);
    m.add_payment(cash(dec!(200.00))).unwrap();
    m.mark_pending(Instant::now());
    assert_eq!(m.phase(), Phase::Pending);
    assert_eq!(m.add_payment(cash(dec!(1))), Err(Refusal::FinalizePending));
    assert_eq!(m.take_subtotal().err(), Some(Refusal::FinalizePending));
    assert!(m
        .check_finalize(totals(dec!(1200.00), dec!(165.52)))
        .is_ok());
    m.cancel().unwrap();
    assert_eq!(m.phase(), Phase::Idle);
}
