//! The invoice the end-to-end tests and the crash harness post: one item of group B
//! (600.00 CDF each) in `ttc` mode, a client, one cash payment of the total, every scalar a
//! string. Included with `#[path]` like `http.rs`.

use serde_json::{json, Value};

/// The invoice `rn` with `quantity` items of 600.00 CDF, paid in full.
pub fn invoice_of(rn: &str, quantity: u64) -> Value {
    json!({
        "rn": rn,
        "mode": "ttc",
        "type": "FV",
        "curCode": "CDF",
        "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00",
             "quantity": quantity.to_string(), "taxGroup": "B"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL",
                   "contact": "+243 810 000 001", "address": "Gombe, Kinshasa"},
        "payments": [{"name": "ESPECES", "amount": format!("{}.00", 600 * quantity),
                      "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}
