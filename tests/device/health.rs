//! Status is the truth, counter continuity, and field diagnostics: the real binary against the
//! simulator on a pty.
//! - a box personalized for another NIF makes `status` false with the reason (log, `/metrics`,
//!   dashboard) and invoices get 153;
//! - a full fiscal memory makes `status` false with its reason;
//! - a box whose counter went back is a fiscal anomaly: journaled once, shown, certification
//!   goes on, acknowledged with the CLI;
//! - `device probe` on the port (service stopped, with a wire capture) and through the
//!   running service;
//! - `config check`, which reaches a box the same two ways (`tests/device/health/config_check.rs`).

use crate::common;
mod config_check;
use crate::smtp;

use std::path::Path;
use std::time::Duration;

use common::{
    add_org_with_key, cli, cli_ok, config_with_device, dashboard_get, dashboard_sign_in, get,
    invoice, issue_dashboard_token, issue_key, journal_event_count, post_invoice, wait_status,
    Gateway, Sim, SIM_NIF,
};

async fn metrics(gateway: &Gateway) -> String {
    get(gateway.addr, "/metrics", None).await.body
}

/// Waits until `/metrics` has a line containing `needle`.
async fn wait_metric(gateway: &Gateway, needle: &str) -> String {
    for _ in 0..200 {
        let text = metrics(gateway).await;
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("/metrics never had {needle:?}: {}", metrics(gateway).await)
}

/// The gateway on `sim` with organization `acme` (the simulator's NIF) and its live key.
async fn shop_on(dir: &Path, sim: &Sim) -> (Gateway, String) {
    let gateway = Gateway::start(dir, &config_with_device(dir, &sim.link));
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir, &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    (gateway, key)
}

fn org_add(gateway: &Gateway, id: &str, nif: &str) {
    cli_ok(
        gateway,
        &[
            "org", "add", "--id", id, "--name", "Shop", "--nif", nif, "--isf", "ISF-1", "--device",
            "shop",
        ],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_box_of_another_taxpayer_makes_status_false_and_answers_153() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    // Set up while the service is stopped: `org add` cannot ask the box, says so, and saves
    // (with the service running it would refuse this NIF at once).
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_with_device(dir.path(), &sim.link)).expect("config");
    let added = common::cli(
        dir.path(),
        &config,
        &[
            "--lang",
            "en",
            "org",
            "add",
            "--id",
            "acme",
            "--name",
            "Shop",
            "--nif",
            "B9999999Z",
            "--isf",
            "ISF-1",
            "--device",
            "shop",
        ],
    );
    assert!(added.status.success(), "{added:?}");
    assert!(
        String::from_utf8_lossy(&added.stderr).contains("the NIF could not be checked"),
        "{added:?}"
    );
    let gateway = Gateway::start(dir.path(), &config_with_device(dir.path(), &sim.link));
    let key = tokio::task::block_in_place(|| issue_key(dir.path(), &gateway.config, "acme", false));

    wait_status(gateway.addr, false, Duration::from_secs(10)).await;
    let text = wait_metric(&gateway, "emcf_device_ready{device=\"shop\"} 0").await;
    assert!(
        text.contains("emcf_device_not_ready{device=\"shop\",reason=\"nif_mismatch\"} 1"),
        "{text}"
    );
    assert!(
        gateway.log().contains(
            "personalized for NIF A1234567B, not the NIF of organization acme (B9999999Z)"
        ),
        "{}",
        gateway.log()
    );
    let refused = post_invoice(gateway.addr, &key, &invoice("NIF-1")).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json["errorCode"], 153);
    // The binding must be fixed by a person: no Retry-After for an ERP to loop on.
    assert!(
        refused.header("retry-after").is_none(),
        "{:?}",
        refused.headers
    );
    let token = issue_dashboard_token(&gateway, "acme");
    let (session, _) = dashboard_sign_in(gateway.addr, &token).await;
    let page = dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(
        page.body.contains("id=\"device-not-ready\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("B9999999Z"), "{}", page.body);
    assert!(gateway
        .log()
        .contains("status false: this device cannot certify now"));
    // Another organization on the same box, with the right NIF: its dashboard names no other
    // organization and says nothing stops its invoices.
    org_add(&gateway, "other", SIM_NIF);
    let token = issue_dashboard_token(&gateway, "other");
    let (other, _) = dashboard_sign_in(gateway.addr, &token).await;
    let page = dashboard_get(gateway.addr, Some(&other), "/dashboard/").await;
    assert!(!page.body.contains("B9999999Z"), "{}", page.body);
    assert!(!page.body.contains("device-not-ready"), "{}", page.body);

    // The box is now "other"'s: acme cannot take its NIF too (one NIF, one organization per
    // device), and a NIF the box is not personalized for is refused at once while the
    // service runs.
    for (nif, said) in [
        (
            SIM_NIF,
            "already certifies NIF A1234567B on device \"shop\"",
        ),
        ("C7777777Y", "personalized for NIF A1234567B, not C7777777Y"),
    ] {
        let refused = common::cli(
            dir.path(),
            &gateway.config,
            &["--lang", "en", "org", "update", "acme", "--nif", nif],
        );
        assert!(!refused.status.success());
        let text = String::from_utf8_lossy(&refused.stderr);
        assert!(text.contains(said), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_fiscal_memory_makes_status_false_with_its_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start_custom(dir.path(), |options| options.device.memory_capacity = 2).await;
    let (gateway, key) = shop_on(dir.path(), &sim).await;
    for rn in ["FULL-1", "FULL-2"] {
        let response = post_invoice(gateway.addr, &key, &invoice(rn)).await;
        assert_eq!(response.status, 200, "{rn}: {}", response.body);
    }
    // The last reply's status bytes say the memory is full (S2.1).
    wait_status(gateway.addr, false, Duration::from_secs(10)).await;
    let text = wait_metric(&gateway, "emcf_device_ready{device=\"shop\"} 0").await;
    assert!(
        text.contains("emcf_device_not_ready{device=\"shop\",reason=\"box_blocked\"} 1"),
        "{text}"
    );
    assert!(
        gateway
            .log()
            .contains("its fiscal memory is full (status bit S2.1)"),
        "{}",
        gateway.log()
    );
    let refused = post_invoice(gateway.addr, &key, &invoice("FULL-3")).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.json["errorCode"], 140, "the box itself refuses");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_counter_that_goes_back_is_a_fiscal_anomaly_until_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut sim = Sim::start(dir.path()).await;
    let (gateway, key) = shop_on(dir.path(), &sim).await;
    for rn in ["CC-1", "CC-2"] {
        let response = post_invoice(gateway.addr, &key, &invoice(rn)).await;
        assert_eq!(response.status, 200, "{rn}: {}", response.body);
    }
    // The box comes back with a new fiscal memory: same NIM, counters from 0.
    sim.stop().await;
    std::fs::remove_file(&sim.state).expect("fiscal memory removed");
    sim.restart_with(Default::default()).await;
    gateway.wait_ready().await;

    let after = post_invoice(gateway.addr, &key, &invoice("CC-3")).await;
    assert_eq!(after.status, 200, "certification goes on: {}", after.body);
    assert_eq!(after.json["counters"], "1/1 FV");
    assert_eq!(
        journal_event_count(dir.path(), "fiscal_anomaly"),
        1,
        "seen at C1h and at the certification: one anomaly"
    );
    assert!(
        gateway.log().contains("FISCAL ANOMALY"),
        "{}",
        gateway.log()
    );
    wait_metric(&gateway, "emcf_fiscal_anomalies_open{device=\"shop\"} 1").await;
    let token = issue_dashboard_token(&gateway, "acme");
    let (session, _) = dashboard_sign_in(gateway.addr, &token).await;
    let page = dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(
        page.body.contains("id=\"fiscal-anomalies\""),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("son compteur de factures a reculé"),
        "{}",
        page.body
    );

    let list = cli_ok(&gateway, &["device", "anomalies", "list"]);
    assert!(
        list.contains("SIM0000001") && list.contains("TC 2") && list.contains("no"),
        "{list}"
    );
    let id = list
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().next())
        .expect("an anomaly id")
        .to_string();
    let refused = tokio::task::block_in_place(|| {
        gateway.cli(&[
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            " ",
            "--note",
            "x",
        ])
    });
    assert!(!refused.status.success(), "who acknowledges must be said");
    let acked = cli_ok(
        &gateway,
        &[
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            "DGI technician",
            "--note",
            "fiscal memory replaced, report 2026-114",
        ],
    );
    assert!(
        acked.contains("prise en compte par DGI technician"),
        "{acked}"
    );
    assert_eq!(
        journal_event_count(dir.path(), "fiscal_anomaly_acknowledged"),
        1
    );
    assert!(!metrics(&gateway)
        .await
        .contains("emcf_fiscal_anomalies_open{device=\"shop\"} 1"));
    let page = dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(!page.body.contains("id=\"fiscal-anomalies\""));
    // Later invoices follow the register again: no new anomaly.
    let next = post_invoice(gateway.addr, &key, &invoice("CC-4")).await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(journal_event_count(dir.path(), "fiscal_anomaly"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn device_probe_reads_the_box_on_its_port_or_through_the_service() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let config_text = config_with_device(dir.path(), &sim.link);
    let config = dir.path().join("config.toml");
    std::fs::write(&config, &config_text).expect("config");
    let capture = dir.path().join("wire.txt");
    let capture_arg = capture.to_string_lossy().to_string();

    // Service stopped: the CLI opens the port itself. In French unless asked otherwise.
    let probe = |args: &[&str]| {
        let out = tokio::task::block_in_place(|| cli(dir.path(), &config, args));
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One value per line, after its label.
        text.lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let french = probe(&["device", "probe", "--capture", &capture_arg]);
    let english = probe(&["device", "probe", "--lang", "en"]);
    for (lines, expected) in [
        (&french, "identifiant machine (NIM) SIM0000001"),
        (&french, "NIF du contribuable A1234567B"),
        (&french, "compteurs 0 facture (0 vente, 0 avoir)"),
        (&french, "dernière facture aucune pour l'instant"),
        (&french, "peut certifier maintenant oui"),
        (&french, "contribuable I0 SIMULATEUR e-MCF SARL"),
        (&english, "machine id (NIM) SIM0000001"),
        (&english, "counters 0 invoices (0 sales, 0 credit notes)"),
        (&english, "can certify now yes"),
        (&english, "last invoice none yet"),
    ] {
        assert!(
            lines.iter().any(|line| line == expected),
            "{expected:?} not in\n{}",
            lines.join("\n")
        );
    }
    assert!(
        french
            .iter()
            .any(|line| line.starts_with("taux de TVA") && line.contains("B 16.00 %")),
        "{french:?}"
    );
    let wire = std::fs::read_to_string(&capture).expect("capture written");
    let parsed = mcf_sfe::capture::parse(&wire).expect("a capture in the documented format");
    let (to_box, from_box) = parsed.streams("shop");
    assert!(to_box.len() > 10 && from_box.len() > 100, "{wire}");

    // Service running: through its admin socket.
    let gateway = Gateway::start(dir.path(), &config_text);
    gateway.wait_ready().await;
    let json = cli_ok(&gateway, &["device", "probe", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON report");
    assert_eq!(report["nim"], "SIM0000001");
    assert_eq!(report["device"], "shop");
    // The JSON keeps the English words scripts read before 1.6.0.
    assert_eq!(report["last_invoice"], "none yet", "{json}");
    assert!(
        report["anomalies"].as_array().is_some_and(Vec::is_empty),
        "{json}"
    );

    // After one invoice: counts in the singular, its date as each reader writes it, its total
    // with its currency.
    let key =
        tokio::task::block_in_place(|| add_org_with_key(dir.path(), &config, "acme", "shop", None));
    let sale = post_invoice(gateway.addr, &key, &invoice("PROBE-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let through = |lang: &str| {
        let text = cli_ok(&gateway, &["device", "probe", "--lang", lang]);
        text.lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let (french, english) = (through("fr"), through("en"));
    let line_of = |lines: &[String], label: &str| {
        lines
            .iter()
            .find_map(|line| line.strip_prefix(label).map(str::to_owned))
            .unwrap_or_else(|| panic!("{label:?} not in\n{}", lines.join("\n")))
    };
    assert_eq!(
        line_of(&english, "counters "),
        "1 invoice (1 sale, 0 credit notes)"
    );
    assert_eq!(
        line_of(&french, "compteurs "),
        "1 facture (1 vente, 0 avoir)"
    );
    let clock = line_of(&french, "horloge du boîtier ");
    assert!(
        chrono::NaiveDateTime::parse_from_str(&clock, "%d/%m/%Y %H:%M:%S").is_ok(),
        "{clock}"
    );
    let last = line_of(&french, "dernière facture ");
    assert!(
        last.starts_with("FV PROBE-1 certifiée le ")
            && last.contains(", code DEF/DGI ")
            && last.ends_with(", total 1 200,00 CDF"),
        "{last}"
    );
    let last = line_of(&english, "last invoice ");
    assert!(
        last.starts_with("FV PROBE-1 certified on ")
            && last.contains(", DEF/DGI code ")
            && last.ends_with(", total 1,200.00 CDF"),
        "{last}"
    );
    let _ = Path::new("");
}
