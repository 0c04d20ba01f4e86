//! An upgrade never strands a register: this release opens, verifies, serves and extends
//! what release 1.0.0 wrote (`tests/fixtures/release-1.0.0/`: its journal, the bundled
//! simulator's fiscal memories, and a configuration with every key it knew), and what 1.2.0
//! wrote through the DGI web API (`tests/fixtures/release-1.2.0/`), and the first register that
//! keeps invoices, written by 1.5.0 (`tests/fixtures/release-1.5.0/`), and the first with an
//! organization's largest invoice total, written by 1.6.0 (`tests/fixtures/release-1.6.0/`),
//! and 1.7.0's notices, last backup and configuration (`tests/fixtures/release-1.7.0/`, in
//! `upgrade/release_1_7_0.rs`).

use crate::common;
mod release_1_7_0;
use crate::smtp;

use std::path::Path;

use common::{cli, get, invoice, post_invoice, Gateway};
use serde_json::{json, Value};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release-1.0.0");
/// The demo organization's live key, printed once by 1.0.0 when it wrote the fixture.
const DEMO_LIVE_KEY: &str = "mcf_live_OUoIFAdY2g6O_37D1dspR5sOYkBhDr8P4ARXr2XY8A0";
const HEAD_1_0_0: &str = "835633d14c98730c65ebb5e69f37d5ff14fb332648bd6b50e3894ff386cc6f93";

/// A state directory holding a copy of the 1.0.0 files (never the fixture itself: opening
/// writes the index and the simulators' lock files).
fn state_from_1_0_0(dir: &Path) {
    let state = dir.join("state");
    std::fs::create_dir_all(state.join("journal")).expect("journal dir");
    std::fs::create_dir_all(state.join("simulator")).expect("simulator dir");
    let from = Path::new(FIXTURE);
    std::fs::copy(from.join("journal.log"), state.join("journal/journal.log"))
        .expect("journal copied");
    for name in ["embedded.fiscal.json", "sandbox-demo.fiscal.json"] {
        std::fs::copy(from.join(name), state.join("simulator").join(name)).expect("fiscal memory");
    }
}

fn cli_json(dir: &Path, args: &[&str]) -> Value {
    let out = cli(dir, Path::new(""), args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let json_part = text.find('{').map_or("", |at| &text[at..]);
    let end = json_part.rfind('}').map_or(0, |at| at + 1);
    serde_json::from_str(&json_part[..end]).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

#[test]
fn the_1_0_0_journal_verifies_and_its_entries_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    state_from_1_0_0(dir.path());
    let report = cli_json(dir.path(), &["log", "verify"]);
    assert_eq!(report["records"], 22, "{report}");
    assert_eq!(report["certified"], 6, "{report}");
    assert_eq!(report["head_sha256"], HEAD_1_0_0, "{report}");

    let out = cli(
        dir.path(),
        Path::new(""),
        &["log", "export", "--format", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one entry per line"))
        .collect();
    let rns: Vec<&str> = entries.iter().filter_map(|e| e["rn"].as_str()).collect();
    assert_eq!(
        rns,
        ["FX-FV-1", "FX-HT-1", "FX-USD-1", "FX-FA-1", "FX-SHOP-1"],
        "{entries:?}"
    );
    assert_eq!(entries[3]["security"]["counters"], "1/4 FA");
    assert_eq!(entries[2]["totals"]["usd_equivalent"], "10.00");

    let shop = cli_json(dir.path(), &["org", "show", "fx-shop", "--json"]);
    assert_eq!(shop["organization"]["plan"], "Grow", "{shop}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_0_0_install_serves_replays_and_certifies_after_the_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    state_from_1_0_0(dir.path());
    let gateway = Gateway::start_demo(dir.path());
    assert!(
        gateway.banner_value("live key:").is_none(),
        "the 1.0.0 demo organization is kept, no new keys: {:?}",
        gateway.banner
    );
    gateway.wait_ready().await;

    let old = get(gateway.addr, "/api/v1/Invoice/FX-FV-1", Some(DEMO_LIVE_KEY)).await;
    assert_eq!(old.status, 200, "{}", old.body);
    assert_eq!(old.json["codeDEFDGI"], "XN56YAPV37MZLNZLX6MOC3A5");
    assert_eq!(old.json["counters"], "1/1 FV");

    // The abandoned intent of 1.0.0 left its rn free.
    let mut lost = invoice("FX-LOST-1");
    lost["items"] = json!([{"name": "Perdu", "type": "BIE", "price": "100.00",
                            "quantity": "1", "taxGroup": "B"}]);
    lost["payments"] = json!([{"name": "ESPECES", "amount": "100.00", "curCode": "CDF",
                               "curRate": "-1"}]);
    let certified = post_invoice(gateway.addr, DEMO_LIVE_KEY, &lost).await;
    assert_eq!(
        certified.status,
        200,
        "{}\n{}",
        certified.body,
        gateway.log()
    );
    assert_eq!(
        certified.json["counters"], "5/6 FV",
        "the box's counters go on"
    );
    assert_eq!(
        certified.json["sequence"], 6,
        "the register's sequence goes on"
    );

    let next = post_invoice(gateway.addr, DEMO_LIVE_KEY, &invoice("UPGRADE-1")).await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(next.json["counters"], "6/7 FV");
}

const FIXTURE_1_2_0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release-1.2.0");
const HEAD_1_2_0: &str = "0b179e14de4ace000e2bd008d480305b899812d2a3aa60265e479cc90d5ed0c3";

/// The register of a web API gateway, as 1.2.0 wrote it (tests/fixtures/release-1.2.0): it
/// verifies, its uids, DGI dates and the administrator's settlement read back, and this
/// release extends it.
#[tokio::test(flavor = "multi_thread")]
async fn the_1_2_0_web_api_journal_verifies_reads_back_and_is_extended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    std::fs::create_dir_all(state.join("journal")).expect("journal dir");
    std::fs::copy(
        Path::new(FIXTURE_1_2_0).join("journal.log"),
        state.join("journal/journal.log"),
    )
    .expect("journal copied");
    // `cli` uses `dir/state`.
    let with_state = |args: &[&str]| -> Value { cli_json(dir.path(), args) };
    let report = with_state(&["log", "verify"]);
    assert_eq!(report["records"], 6, "{report}");
    assert_eq!(report["certified"], 2, "{report}");
    assert_eq!(report["head_sha256"], HEAD_1_2_0, "{report}");

    let first = with_state(&["log", "show", "1", "--json"]);
    assert_eq!(first["rn"], "F-1");
    assert_eq!(first["channel_ref"], "37f012ad-0208-4092-b42e-42ee8627f2ba");
    assert_eq!(first["security"]["dateTimeAsSent"], "23/11/2026 18:55:53");
    assert_eq!(first["security"]["dateTime"], "2026-11-23T18:55:53");
    // 1.2.0 kept the digest only: said so, never invented.
    assert_eq!(first["certified_invoice"]["status"], "not_kept", "{first}");
    let second = with_state(&["log", "show", "2", "--json"]);
    assert_eq!(second["rn"], "F-2");
    assert_eq!(
        second["source"],
        "administrator: Marie K.; read on the DGI portal"
    );
    assert_eq!(second["security"]["codeDEFDGI"], "XGVJW3OZCZ2RV7V2MHKSWV5W");

    // This release serves it and adds to it (demo device: no web API needed to read it).
    let gateway = Gateway::start(
        dir.path(),
        &format!("state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n"),
    );
    let key = common::issue_key(dir.path(), &gateway.config, "shop", false);
    let stored = get(gateway.addr, "/api/v1/Invoice/F-2", Some(&key)).await;
    assert_eq!(stored.status, 200, "{}", stored.body);
    assert_eq!(stored.json["codeDEFDGI"], "XGVJW3OZCZ2RV7V2MHKSWV5W");
    drop(gateway);
    let report = with_state(&["log", "verify"]);
    assert!(report["records"].as_u64().unwrap() > 6, "{report}");
}

/// A state directory holding a copy of a demo fixture of 1.5.0 or later: its journal and the
/// bundled simulator's fiscal memory.
fn state_from_demo_fixture(dir: &Path, fixture: &str) {
    let state = dir.join("state");
    std::fs::create_dir_all(state.join("journal")).expect("journal dir");
    std::fs::create_dir_all(state.join("simulator")).expect("simulator dir");
    let from = Path::new(fixture);
    std::fs::copy(from.join("journal.log"), state.join("journal/journal.log")).expect("journal");
    std::fs::copy(
        from.join("embedded.fiscal.json"),
        state.join("simulator/embedded.fiscal.json"),
    )
    .expect("fiscal memory");
}

const FIXTURE_1_5_0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release-1.5.0");
const HEAD_1_5_0: &str = "f2ecf8a6116161d7694f242f3ba2fd727519626172fa3c2f44aae9d82bb98293";
/// The demo organization's live key, printed by 1.5.0 when it wrote the fixture.
const DEMO_LIVE_KEY_1_5_0: &str = "mcf_live_YpL6uaVWuhOz_0lhEjVlwamt2Fc4Yj7qHbNi63H9tLn";

/// The first register that keeps invoices (tests/fixtures/release-1.5.0): it verifies, each
/// kept invoice reads back with its client, items and credit-note links, and this release
/// serves and extends it.
#[tokio::test(flavor = "multi_thread")]
async fn the_1_5_0_register_keeps_its_invoices_and_links_after_the_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    state_from_demo_fixture(dir.path(), FIXTURE_1_5_0);
    let report = cli_json(dir.path(), &["log", "verify"]);
    assert_eq!(report["records"], 9, "{report}");
    assert_eq!(report["invoices_kept"], 3, "{report}");
    assert_eq!(report["head_sha256"], HEAD_1_5_0, "{report}");

    let original = cli_json(dir.path(), &["log", "show", "1", "--json"]);
    let kept = &original["certified_invoice"];
    assert_eq!(kept["status"], "kept", "{original}");
    assert_eq!(kept["invoice"]["client"]["name"], "Kinshasa Matériaux SARL");
    assert_eq!(kept["invoice"]["items"][0]["code"], "CIM-50");
    assert_eq!(kept["invoice"]["cmta"], "Livré au dépôt de Limete");
    assert_eq!(original["credit_notes"][0]["rn"], "FX15-FA-1", "{original}");
    let note = cli_json(dir.path(), &["log", "show", "2", "--json"]);
    assert_eq!(note["original"]["rn"], "FX15-FV-1", "{note}");
    assert_eq!(note["certified_invoice"]["invoice"]["referenceType"], "RAN");
    let usd = cli_json(dir.path(), &["log", "show", "3", "--json"]);
    assert_eq!(usd["certified_invoice"]["invoice"]["curRate"], "2850");
    assert_eq!(usd["totals"]["usd_equivalent"], "580.00");

    // 1.6.0's exports: the credit note 1.5.0 certified is negative, its sign said.
    let out = cli(
        dir.path(),
        Path::new(""),
        &["log", "export", "--format", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let exported = lines
        .iter()
        .find(|line| line["rn"] == "FX15-FA-1")
        .expect("the credit note exported");
    let note_total = note["totals"]["total"].as_str().expect("total").to_owned();
    assert_eq!(
        exported["totals"]["total"],
        format!("-{note_total}"),
        "{exported}"
    );
    assert_eq!(exported["amount_sign"], -1, "{exported}");
    assert_eq!(exported["environment"], "production", "{exported}");

    let gateway = Gateway::start_demo(dir.path());
    gateway.wait_ready().await;
    let old = get(
        gateway.addr,
        "/api/v1/Invoice/FX15-FA-1",
        Some(DEMO_LIVE_KEY_1_5_0),
    )
    .await;
    assert_eq!(old.status, 200, "{}", old.body);
    assert_eq!(old.json["counters"], "1/2 FA");
    let next = post_invoice(gateway.addr, DEMO_LIVE_KEY_1_5_0, &invoice("UPGRADE-15")).await;
    assert_eq!(next.status, 200, "{}\n{}", next.body, gateway.log());
    assert_eq!(next.json["counters"], "3/4 FV", "the box's counters go on");
    assert_eq!(next.json["sequence"], 4, "the register's sequence goes on");

    // Code 180 counts the credit note 1.5.0 linked to its original: one cent more than what
    // is left of FX15-FV-1 is refused before the box, exactly what is left is certified.
    let cents = |amount: &Value| -> i64 {
        let text = amount.as_str().expect("an amount");
        let (units, cents) = text.split_once('.').expect("two decimals");
        units.parse::<i64>().expect("units") * 100 + cents.parse::<i64>().expect("cents")
    };
    let left = cents(&original["totals"]["total"]) - cents(&note["totals"]["total"]);
    assert!(left > 1, "something is left of FX15-FV-1");
    let code = original["security"]["codeDEFDGI"]
        .as_str()
        .expect("codeDEFDGI");
    let refund = |rn: &str, cents: i64| {
        let price = format!("{}.{:02}", cents / 100, cents % 100);
        json!({
            "rn": rn, "mode": "ttc", "type": "FA", "reference": code, "referenceType": "RAM",
            "curCode": "CDF", "curRate": "-1",
            "items": [{"name": "RETOUR", "type": "BIE", "price": price, "quantity": "1", "taxGroup": "B"}],
            "operator": {"id": "1", "name": "Caisse 1"}
        })
    };
    let over = post_invoice(
        gateway.addr,
        DEMO_LIVE_KEY_1_5_0,
        &refund("UPGRADE-FA-1", left + 1),
    )
    .await;
    assert_eq!(over.status, 422, "{}", over.body);
    assert_eq!(over.json["errorCode"], 180, "{}", over.body);
    let rest = post_invoice(
        gateway.addr,
        DEMO_LIVE_KEY_1_5_0,
        &refund("UPGRADE-FA-2", left),
    )
    .await;
    assert_eq!(rest.status, 200, "{}\n{}", rest.body, gateway.log());
    assert_eq!(rest.json["counters"], "2/5 FA", "the 180 reached no box");
}

const FIXTURE_1_6_0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release-1.6.0");
const HEAD_1_6_0: &str = "004262320a696caddfee5ddd2e4922222403e5a0539f5e4336292aa1142bab56";
/// The demo organization's live key, written by 1.6.0 to its keys file with the fixture.
const DEMO_LIVE_KEY_1_6_0: &str = "mcf_live_aueA3pmzcmlf_GkOiX4ZmvbuS83tSjPYRiD1F0v8QyM";

/// The first register with an organization's largest invoice total
/// (tests/fixtures/release-1.6.0): it verifies, the limit and the credit note's link read
/// back, and both plausibility rules hold on it after the upgrade.
#[tokio::test(flavor = "multi_thread")]
async fn the_1_6_0_register_keeps_its_limit_and_its_refunds_after_the_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    state_from_demo_fixture(dir.path(), FIXTURE_1_6_0);
    let report = cli_json(dir.path(), &["log", "verify"]);
    assert_eq!(report["records"], 8, "{report}");
    assert_eq!(report["invoices_kept"], 2, "{report}");
    assert_eq!(report["head_sha256"], HEAD_1_6_0, "{report}");
    let org = cli_json(dir.path(), &["org", "show", "demo", "--json"]);
    assert_eq!(org["organization"]["max_invoice_total"], "5000000", "{org}");
    let note = cli_json(dir.path(), &["log", "show", "2", "--json"]);
    assert_eq!(note["original"]["rn"], "FX16-FV-1", "{note}");
    assert_eq!(note["totals"]["total"], "64000.00", "{note}");

    let gateway = Gateway::start_demo(dir.path());
    gateway.wait_ready().await;
    let old = get(
        gateway.addr,
        "/api/v1/Invoice/FX16-FA-1",
        Some(DEMO_LIVE_KEY_1_6_0),
    )
    .await;
    assert_eq!(old.status, 200, "{}", old.body);
    assert_eq!(old.json["counters"], "1/2 FA");
    let original = cli_json(dir.path(), &["log", "show", "1", "--json"]);
    let code = original["security"]["codeDEFDGI"]
        .as_str()
        .expect("codeDEFDGI");
    let refund = |rn: &str, price: &str| {
        json!({
            "rn": rn, "mode": "ttc", "type": "FA", "reference": code, "referenceType": "RAM",
            "curCode": "CDF", "curRate": "-1",
            "items": [{"name": "RETOUR", "type": "BIE", "price": price, "quantity": "1", "taxGroup": "B"}],
            "operator": {"id": "1", "name": "Caisse 1"}
        })
    };
    // 271,000.00 is left of FX16-FV-1: one cent more is refused (180), before the box.
    let over = post_invoice(
        gateway.addr,
        DEMO_LIVE_KEY_1_6_0,
        &refund("UP16-FA-1", "271000.01"),
    )
    .await;
    assert_eq!(over.status, 422, "{}", over.body);
    assert_eq!(over.json["errorCode"], 180, "{}", over.body);
    // Above the organization's 5,000,000.00: refused (181), before the box.
    let mut big = invoice("UP16-FV-1");
    big["items"][0]["price"] = json!("2500000.01");
    big.as_object_mut().expect("object").remove("payments");
    let big = post_invoice(gateway.addr, DEMO_LIVE_KEY_1_6_0, &big).await;
    assert_eq!(big.status, 422, "{}", big.body);
    assert_eq!(big.json["errorCode"], 181, "{}", big.body);
    // What is left is certified, and the box's counters go on: neither refusal reached it.
    let rest = post_invoice(
        gateway.addr,
        DEMO_LIVE_KEY_1_6_0,
        &refund("UP16-FA-2", "271000.00"),
    )
    .await;
    assert_eq!(rest.status, 200, "{}\n{}", rest.body, gateway.log());
    assert_eq!(rest.json["counters"], "2/3 FA");
    assert_eq!(rest.json["sequence"], 3, "the register's sequence goes on");
}
