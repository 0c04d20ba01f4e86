//! The channel-neutral invoice in the box's words: each of its values as the MCF-SFE value
//! that carries it (PROTOCOL.md §4-5), its commands C3h, C0h, 31h, 36h and 35h, and its
//! totals as a 33h reply. The matches are exhaustive: a value the contract gains must be
//! given its box form here. Public as `certify::box_commands` for the fuzz target.

use mcf_sfe::command::{
    Client, Comment, CreditReference, Item, OpenInvoice, Payment, PriceChange, SpecificTax, UsdRate,
};
use mcf_sfe::reply::Subtotal;
use mcf_sfe::types;
use rust_decimal::Decimal;

use crate::certify::invoice::{
    self, CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, Seller,
    TaxGroup, Totals, ValidInvoice, ValidItem,
};

/// The same invoice type.
pub fn invoice_type(value: InvoiceType) -> types::InvoiceType {
    match value {
        InvoiceType::Fv => types::InvoiceType::Fv,
        InvoiceType::Ft => types::InvoiceType::Ft,
        InvoiceType::Fa => types::InvoiceType::Fa,
        InvoiceType::Ev => types::InvoiceType::Ev,
        InvoiceType::Et => types::InvoiceType::Et,
        InvoiceType::Ea => types::InvoiceType::Ea,
    }
}

fn price_mode(value: PriceMode) -> types::PriceMode {
    match value {
        PriceMode::Ht => types::PriceMode::Ht,
        PriceMode::Ttc => types::PriceMode::Ttc,
    }
}

fn reference_type(value: ReferenceType) -> types::ReferenceType {
    match value {
        ReferenceType::Cor => types::ReferenceType::Cor,
        ReferenceType::Ran => types::ReferenceType::Ran,
        ReferenceType::Ram => types::ReferenceType::Ram,
        ReferenceType::Rrr => types::ReferenceType::Rrr,
    }
}

fn item_type(value: ItemType) -> types::ItemType {
    match value {
        ItemType::Bie => types::ItemType::Bie,
        ItemType::Ser => types::ItemType::Ser,
        ItemType::Tax => types::ItemType::Tax,
    }
}

fn payment_method(value: PaymentMethod) -> types::PaymentMethod {
    match value {
        PaymentMethod::Especes => types::PaymentMethod::Especes,
        PaymentMethod::Virement => types::PaymentMethod::Virement,
        PaymentMethod::CarteBancaire => types::PaymentMethod::CarteBancaire,
        PaymentMethod::MobileMoney => types::PaymentMethod::MobileMoney,
        PaymentMethod::Cheques => types::PaymentMethod::Cheques,
        PaymentMethod::Credit => types::PaymentMethod::Credit,
        PaymentMethod::Autre => types::PaymentMethod::Autre,
    }
}

fn comment_line(value: CommentLine) -> types::CommentLine {
    match value {
        CommentLine::A => types::CommentLine::A,
        CommentLine::B => types::CommentLine::B,
        CommentLine::C => types::CommentLine::C,
        CommentLine::D => types::CommentLine::D,
        CommentLine::E => types::CommentLine::E,
        CommentLine::F => types::CommentLine::F,
        CommentLine::G => types::CommentLine::G,
        CommentLine::H => types::CommentLine::H,
    }
}

/// The same group, A..P.
pub fn tax_group(value: TaxGroup) -> types::TaxGroup {
    // Both are A..P in the same order: the index of a group is always one of the box's.
    types::TaxGroup::from_index(value.index())
        .unwrap_or_else(|| unreachable!("group {value} is one of A..P"))
}

/// The gateway's `totals` as the box's 33h reply carries them: every group, and MCUR the
/// USD equivalent as the box writes it (`None` if it cannot be written).
pub fn subtotal_of(totals: &Totals) -> Option<Subtotal> {
    let mcur = match totals.usd_equivalent {
        Some(usd) => mcf_sfe::fields::amount("MCUR", usd).ok()?,
        None => String::new(),
    };
    Some(Subtotal {
        total: totals.total,
        group_ttc: totals.group_ttc,
        group_vat: totals.group_vat,
        specific_tax: totals.specific_tax,
        mcur,
        groups: TaxGroup::COUNT,
    })
}

/// C3h; all fields empty when the invoice has no client.
pub fn client_command(client: &invoice::Client) -> Client {
    Client {
        client_type: client.client_type.clone(),
        nif: client.nif.clone(),
        name: client.name.clone(),
        address: client.address.clone(),
        contact: client.contact.clone(),
        email: client.email.clone(),
        rccm: client.rccm.clone(),
    }
}

/// C0h for `seller`.
pub fn open_command(invoice: &ValidInvoice, seller: &Seller) -> OpenInvoice {
    OpenInvoice {
        operator_id: invoice.operator_id.clone(),
        operator_name: invoice.operator_name.clone(),
        nif: seller.nif.clone(),
        invoice_type: invoice_type(invoice.invoice_type),
        reference: invoice.reference.as_ref().map(|r| CreditReference {
            kind: reference_type(r.kind),
            code_def: r.code_def.clone(),
        }),
        price_mode: price_mode(invoice.price_mode),
        isf: seller.isf.clone(),
        rn: invoice.rn.clone(),
        usd_rate: invoice.usd_rate.map(|u| UsdRate {
            rate: u.rate,
            date: u.date,
        }),
    }
}

/// The 31h command, with the group's `rate` from C1h; `None` (a group that charges no VAT)
/// is sent as `0.00` (PROTOCOL.md §5.6).
pub fn item_command(item: &ValidItem, rate: Option<Decimal>) -> Item {
    Item {
        name: item.name.clone(),
        code: item.code.clone(),
        item_type: item_type(item.item_type),
        group: tax_group(item.group),
        rate: rate.unwrap_or(Decimal::ZERO),
        line_amount: item.line_amount,
        price: item.price,
        quantity: item.quantity,
        specific_tax: item.specific_tax.map(|t| SpecificTax {
            rate: t.rate,
            amount: t.amount,
        }),
        price_change: item.price_change.as_ref().map(|c| PriceChange {
            original_price: c.original_price,
            description: c.description.clone(),
        }),
    }
}

/// A 36h command.
pub fn comment_command(comment: &invoice::Comment) -> Comment {
    Comment {
        line: comment_line(comment.line),
        text: comment.text.clone(),
    }
}

/// A 35h command.
pub fn payment_command(payment: &invoice::Payment) -> Payment {
    Payment {
        method: payment_method(payment.method),
        amount: payment.amount,
    }
}

/// The 35h commands to send once the box's total `total` (33h MV) is known: the client's
/// payments, or one ESPECES payment of `total` when it sent none (docs/design.md §4). Whether
/// they cover `total` is the caller's check.
pub fn payment_commands(invoice: &ValidInvoice, total: Decimal) -> Vec<Payment> {
    if invoice.payments.is_empty() {
        vec![Payment {
            method: types::PaymentMethod::Especes,
            amount: total,
        }]
    } else {
        invoice.payments.iter().map(payment_command).collect()
    }
}

#[cfg(test)]
mod tests {
    use mcf_sfe::command::{self, Command};
    use mcf_sfe::fields::is_escaped;
    use proptest::prelude::*;
    use rust_decimal_macros::dec;
    use serde_json::json;

    use super::*;
    use crate::certify::invoice::tests::cases::{credit, DEF};
    use crate::certify::invoice::tests::{check_with, reference, seller, with_items, REFERENCE};
    use crate::certify::invoice::{is_reserved, line_amount, MAX_RN_LEN};

    fn check_value(value: &serde_json::Value) -> ValidInvoice {
        check_with(value.to_string().as_bytes(), super::super::check_frames).unwrap()
    }

    /// Encodes `command` and reads it back: the box reads what was meant.
    fn sent(command: Command) -> Vec<u8> {
        let data = command.encode().unwrap();
        assert_eq!(Command::parse(command.code(), &data).unwrap(), command);
        data
    }

    #[test]
    fn every_value_has_its_box_form_with_the_same_text() {
        for &t in InvoiceType::ALL {
            assert_eq!(invoice_type(t).as_str(), t.as_str());
            assert_eq!(invoice_type(t).is_credit_note(), t.is_credit_note());
        }
        for &m in PriceMode::ALL {
            assert_eq!(price_mode(m).as_str(), m.as_str());
        }
        for &r in ReferenceType::ALL {
            assert_eq!(reference_type(r).as_str(), r.as_str());
        }
        for &i in ItemType::ALL {
            assert_eq!(item_type(i).as_str(), i.as_str());
        }
        for &p in PaymentMethod::ALL {
            assert_eq!(payment_method(p).name(), p.as_str());
        }
        for &c in CommentLine::ALL {
            assert_eq!(comment_line(c).as_str(), c.as_str());
        }
        for g in TaxGroup::all() {
            assert_eq!(tax_group(g).letter(), g.letter());
        }
        // One for one: as many values on each side.
        assert_eq!(InvoiceType::ALL.len(), types::InvoiceType::ALL.len());
        assert_eq!(PaymentMethod::ALL.len(), types::PaymentMethod::ALL.len());
        assert_eq!(CommentLine::ALL.len(), types::CommentLine::ALL.len());
        assert_eq!(TaxGroup::COUNT, types::TaxGroup::COUNT);
    }

    #[test]
    fn the_invoice_s_rn_rule_is_the_box_s() {
        assert_eq!(MAX_RN_LEN, command::MAX_RN_LEN);
        for c in (0..0x3000).filter_map(char::from_u32) {
            assert_eq!(is_reserved(c), is_escaped(c), "{c:?}");
        }
    }

    #[test]
    fn the_reference_example_as_box_commands() {
        let invoice = check_with(REFERENCE.as_bytes(), super::super::check_frames).unwrap();
        let open = sent(Command::OpenInvoice(open_command(&invoice, &seller())));
        assert_eq!(open, b"01,ADMIN,A1234567B,FV,ttc,ISF01,FC0002");
        let first = &invoice.items[0];
        let item = sent(Command::Item(item_command(first, Some(dec!(16)))));
        assert_eq!(item, b"STYLO BIC\nLR 1515\tBIE,B16.00%1200.00\t600.00*2");
        let untaxed = sent(Command::Item(item_command(first, None)));
        assert!(untaxed.starts_with(b"STYLO BIC\nLR 1515\tBIE,B0.00%1200.00"));
        let payments = payment_commands(&invoice, dec!(1230.00));
        assert_eq!(
            payments,
            [Payment {
                method: types::PaymentMethod::Especes,
                amount: dec!(1230.00)
            }]
        );
    }

    #[test]
    fn optional_parts_as_box_commands() {
        let mut v = reference();
        credit(&mut v, "FA", DEF, None);
        v["curCode"] = json!("USD");
        v["curRate"] = json!(2850.5);
        v["curDate"] = json!("2026-02-28T23:30:00-02:00");
        v["cmtc"] = json!("Merci, a bientot");
        v["items"][1]["originalPrice"] = json!("35.00");
        v["items"][1]["priceModification"] = json!("remise fidelite");
        v["items"][1]["taxSpecificValue"] = json!("");
        v["items"][1]["taxSpecificAmount"] = json!("10.00");
        v.as_object_mut().unwrap().remove("payments");
        let invoice = check_value(&v);
        // No payment sent: one ESPECES payment of the box's total.
        let pay = payment_commands(&invoice, dec!(1270.00));
        assert_eq!(
            (pay.len(), pay[0].method, pay[0].amount),
            (1, types::PaymentMethod::Especes, dec!(1270.00))
        );
        let open = sent(Command::OpenInvoice(open_command(&invoice, &seller())));
        assert_eq!(
            String::from_utf8(open).unwrap(),
            format!("01,ADMIN,A1234567B,FA,COR,{DEF},ttc,ISF01,FC0002,2850.5,20260228")
        );
        let line = sent(Command::Item(item_command(
            &invoice.items[1],
            Some(dec!(16)),
        )));
        assert_eq!(
            line,
            b"MAIN D'OEUVRE\n ---DEEE\tSER,B16.00%30.00\t30.00;T,10.00\t35.00,remise fidelite"
        );
        let comment = sent(Command::Comment(comment_command(&invoice.comments[0])));
        assert_eq!(comment, b"C,Merci^x2c; a bientot");
        let client = sent(Command::SetClient(client_command(&invoice.client)));
        assert_eq!(
            client,
            b"PM,A000000A,DUPONT,25 rue du taur 31850 MONTRABE,+330562380000,,"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn the_line_amount_is_the_box_s(cents in 0i64..100_000_000_000, thousandths in 1i64..10_000_000) {
            let (price, quantity) = (Decimal::new(cents, 2), Decimal::new(thousandths, 3));
            prop_assert_eq!(line_amount(price, quantity), Item::line_amount_of(price, quantity));
        }

        #[test]
        fn every_command_reads_back_as_the_invoice_says(
            lines in prop::collection::vec(
                (
                    prop::sample::select(('A'..='P').collect::<Vec<_>>()),
                    prop::sample::select(ItemType::ALL.to_vec()),
                    0i64..10_000_000,
                    1i64..100_000,
                    prop::option::of(0i64..100_000),
                ),
                1..6,
            ),
            kind in prop::sample::select(InvoiceType::ALL.to_vec()),
            method in prop::sample::select(PaymentMethod::ALL.to_vec()),
            ttc in any::<bool>(),
            rate in prop::option::of(0i64..3_000),
        ) {
            let items: Vec<_> = lines
                .iter()
                .map(|&(group, item_type, cents, thousandths, tax)| {
                    let mut item = json!({
                        "name": "X, & Y", "type": item_type.as_str(), "taxGroup": group.to_string(),
                        "price": Decimal::new(cents, 2).to_string(),
                        "quantity": Decimal::new(thousandths, 3).to_string(),
                    });
                    if let Some(tax) = tax {
                        item["taxSpecificAmount"] = json!(Decimal::new(tax, 2).to_string());
                    }
                    item
                })
                .collect();
            let mut v = with_items(if ttc { "ttc" } else { "ht" }, json!(items));
            v["type"] = json!(kind.as_str());
            if kind.is_credit_note() {
                v["reference"] = json!(DEF);
            }
            v["payments"] = json!([{"name": method.as_str(), "amount": "12.50"}]);
            let invoice = check_value(&v);
            let open = open_command(&invoice, &seller());
            prop_assert_eq!(open.invoice_type.as_str(), kind.as_str());
            prop_assert_eq!(open.price_mode.as_str(), invoice.price_mode.as_str());
            sent(Command::OpenInvoice(open));
            let rate = rate.map(|r| Decimal::new(r, 2));
            for item in &invoice.items {
                let command = item_command(item, rate);
                prop_assert_eq!(command.group.letter(), item.group.letter());
                prop_assert_eq!(command.item_type.as_str(), item.item_type.as_str());
                prop_assert_eq!(command.line_amount, item.line_amount);
                prop_assert_eq!(command.rate, rate.unwrap_or(Decimal::ZERO));
                sent(Command::Item(command));
            }
            for payment in payment_commands(&invoice, dec!(1)) {
                prop_assert_eq!(payment.method.name(), method.as_str());
                prop_assert_eq!(payment.amount, dec!(12.50));
                sent(Command::Payment(payment));
            }
        }
    }
}
