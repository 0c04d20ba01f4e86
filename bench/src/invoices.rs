//! The invoices the bench certifies: realistic sales (FV, TTC, CDF) with `items` lines.

use serde_json::{json, Value};

/// A sales invoice with `items` lines (groups B 16 %, C 5 %, E 0 % in turn), a client and
/// no `payments` (one ESPECES payment of the device's total is used).
pub fn invoice(rn: &str, items: usize) -> Value {
    const NAMES: [&str; 8] = [
        "STYLO BIC bleu pointe fine",
        "CAHIER 96 PAGES grands carreaux",
        "RAMETTE PAPIER A4 80g",
        "AGRAFEUSE metal 24/6",
        "CLASSEUR A4 dos 80 mm",
        "MARQUEUR permanent noir",
        "CALCULATRICE solaire 12 chiffres",
        "ENVELOPPES C5 x50",
    ];
    let lines: Vec<Value> = (0..items)
        .map(|i| {
            let group = ["B", "C", "E"][i % 3];
            let price = 250 + (i as u64 * 137) % 9_000;
            json!({
                "code": format!("ART-{:04}", i + 1),
                "name": NAMES[i % NAMES.len()],
                "type": "BIE",
                "price": format!("{price}.00"),
                "quantity": format!("{}", 1 + i % 4),
                "taxGroup": group,
            })
        })
        .collect();
    json!({
        "rn": rn,
        "mode": "ttc",
        "type": "FV",
        "curCode": "CDF",
        "curRate": "-1",
        "items": lines,
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL",
                   "contact": "+243 810 000 001", "address": "Gombe, Kinshasa"},
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}
