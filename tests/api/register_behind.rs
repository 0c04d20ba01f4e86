//! A box found ahead of its register at an invoice (docs/design.md, "A register behind its
//! box"): another host certified on the box while it was away from the gateway, so its
//! counter runs ahead of what the register holds. The invoice's own C1h shows it; the check is
//! made against what the register held, read with the invoice's intent. The ERP hears 171 and
//! nothing is used: no quota unit, no intent left open, the box's counter unchanged. Run on
//! both stores (`on_postgres.rs`).

use std::time::Duration;

use chrono::NaiveDate;
use emcf_sim::faults::FaultConfig;
use emcf_sim::fiscal::{FiscalMemory, NewInvoice};
use mcf_sfe::types::InvoiceType;
use rust_decimal::Decimal;
use serde_json::Value;

use crate::common::{
    assert_error, fiscal_invoices, invoice, journal_event_count, post_invoice, store, wait_status,
    ApiSetup, Sim,
};

/// Another host certifies an invoice on the box while the gateway is away from it (the
/// simulator stopped, its fiscal memory written, started again).
async fn certified_elsewhere(sim: &mut Sim) {
    sim.stop().await;
    let mut memory = FiscalMemory::open(Some(&sim.state), "", "", 1_000_000)
        .expect("the box's fiscal memory opens");
    let at = NaiveDate::from_ymd_opt(2026, 11, 27)
        .and_then(|day| day.and_hms_opt(9, 0, 0))
        .expect("a date");
    let elsewhere = NewInvoice {
        invoice_type: InvoiceType::Fv,
        rn: "OTHER-TILL-1".to_owned(),
        at,
        total: Decimal::new(1000, 0),
        vat: Decimal::ZERO,
        reference: None,
        usd_rate: None,
    };
    memory
        .commit(elsewhere, "emcf-sim-demo-key")
        .expect("certified by another host");
    drop(memory);
    sim.restart_with(FaultConfig::default()).await;
}

/// `intent list --json`: the open intents.
fn open_intents(api: &ApiSetup) -> Value {
    serde_json::from_str(&api.cli_ok(&["intent", "list", "--json"])).expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_box_found_ahead_at_an_invoice_is_refused_with_no_quota_used_and_nothing_open() {
    let mut api = ApiSetup::start(None).await;
    let first = post_invoice(api.addr(), &api.key, &invoice("AH-1")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.json["counters"], "1/1 FV");
    assert_eq!(api.quota_used(), 1);

    // The gateway is away from the box while another till certifies no. 2 on it; then the box
    // is back, its counter at 2, the register's at 1.
    certified_elsewhere(&mut api.sim).await;
    wait_status(api.addr(), true, Duration::from_secs(15)).await;
    assert_eq!(fiscal_invoices(&api.sim).len(), 2);

    let refused = post_invoice(api.addr(), &api.key, &invoice("AH-2")).await;
    assert_error(&refused, 503, 171);
    let desc = refused.json["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.contains("n° 2") || desc.contains("n°\u{a0}2"),
        "{desc}"
    );
    // Nothing used: the invoice opened on the box was cancelled (its counter did not move),
    // its intent abandoned (on PostgreSQL, with the quota unit it claimed).
    assert_eq!(
        fiscal_invoices(&api.sim).len(),
        2,
        "the box's counter moved"
    );
    assert_eq!(api.quota_used(), 1, "a quota unit was used");
    let open = open_intents(&api);
    assert_eq!(
        open.as_array().map(Vec::len),
        Some(0),
        "an intent was left open: {open}"
    );
    // The intent was journaled (the view read with it showed the box ahead), then abandoned:
    // an existing record, the journal's format unchanged.
    let dir = api.dir.path();
    match store::dump(dir) {
        Some(dump) => {
            let dump = String::from_utf8_lossy(&dump);
            assert!(
                dump.contains("\tabandoned\t"),
                "no intent abandoned: {dump}"
            );
        }
        None => {
            assert_eq!(journal_event_count(dir, "intent"), 2);
            assert_eq!(journal_event_count(dir, "abandoned"), 1);
        }
    }
    let anomalies: Value =
        serde_json::from_str(&api.cli_ok(&["device", "anomalies", "list", "--json"]))
            .expect("json");
    let list = anomalies.as_array().expect("a list");
    assert_eq!(list.len(), 1, "journaled once: {anomalies}");
    assert_eq!(list[0]["anomaly"]["kind"], "register_behind");
    assert_eq!(list[0]["anomaly"]["missing"], serde_json::json!([2]));
    assert_eq!(list[0]["anomaly"]["seen_in"], "C1h");
    assert_eq!(list[0]["anomaly"]["last"]["rn"], "OTHER-TILL-1");

    // The box is stopped: the next invoice is refused before any quota is reserved.
    let again = post_invoice(api.addr(), &api.key, &invoice("AH-3")).await;
    assert_error(&again, 503, 171);
    assert_eq!(fiscal_invoices(&api.sim).len(), 2);
    assert_eq!(api.quota_used(), 1);
    assert_eq!(open_intents(&api).as_array().map(Vec::len), Some(0));
}
