//! The fiscal box misbehaving (docs/design.md §4, steps 6 and 7): unplugged, power cut
//! right after it committed an invoice, the gateway killed while the box finalizes, a refusal,
//! a noisy line. What a shop's IT person and a tax auditor check: clear retryable errors, no
//! quota used by failures, the box never left blocked, and the register always equal to what
//! the device committed: no lost certification, never a second one.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{
    add_org_with_key, assert_register_matches_device, cli_success, config_with_device,
    fiscal_invoices, get, invoice, journal_event_count, nbsp, post_invoice, quota_used,
    start_sim_with_timing, try_post_invoice, wait_status, Gateway, Response, Sim,
};
use emcf_sim::faults::FaultConfig;
use serde_json::Value;

const ORG: &str = "shop-org";

/// A gateway on `sim`, ready, with an organization and its live key.
async fn gateway_on(dir: &Path, sim: &Sim) -> (Gateway, String) {
    let gateway = Gateway::start(dir, &config_with_device(dir, &sim.link));
    gateway.wait_ready().await;
    let key = add_org_with_key(dir, &gateway.config, ORG, "shop", None);
    (gateway, key)
}

fn config_path(dir: &Path) -> PathBuf {
    dir.join("config.toml")
}

fn code_of(response: &Response) -> String {
    response.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_else(|| panic!("no codeDEFDGI in {}", response.body))
        .to_string()
}

/// The `Retry-After` of a response, in seconds (must be there and at least 1).
fn retry_after(response: &Response) -> u64 {
    let value = response
        .header("Retry-After")
        .unwrap_or_else(|| panic!("no Retry-After on {} {}", response.status, response.body));
    let secs: u64 = value.parse().expect("Retry-After in seconds");
    assert!(secs >= 1, "Retry-After {secs}");
    secs
}

fn assert_error(response: &Response, status: u16, code: u64, log: &str) {
    assert_eq!(
        (response.status, response.json["errorCode"].as_u64()),
        (status, Some(code)),
        "{}\n{log}",
        response.body
    );
}

async fn lookup(gateway: &Gateway, key: &str, rn: &str) -> Response {
    get(gateway.addr, &format!("/api/v1/Invoice/{rn}"), Some(key)).await
}

/// Polls `GET /Invoice/{rn}` while it answers 409 (being settled); returns the first other
/// answer, or panics after `within`.
async fn lookup_when_settled(gateway: &Gateway, key: &str, rn: &str, within: Duration) -> Response {
    let started = Instant::now();
    loop {
        let response = lookup(gateway, key, rn).await;
        if response.status != 409 {
            return response;
        }
        assert!(
            started.elapsed() < within,
            "{rn} still being settled after {within:?}: {}\n{}",
            response.body,
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Posts `body` until it is accepted (200) within `within`, riding out 503s; returns the
/// accepted response and the first 503, if there was one (the device should take invoices
/// again as soon as nothing is left to settle).
async fn post_until_accepted(
    gateway: &Gateway,
    key: &str,
    body: &Value,
    within: Duration,
) -> (Response, Option<Response>) {
    let started = Instant::now();
    let mut refused = None;
    loop {
        let response = post_invoice(gateway.addr, key, body).await;
        if response.status != 503 {
            return (response, refused);
        }
        assert!(
            started.elapsed() < within,
            "still 503 after {within:?}: {}\n{}",
            response.body,
            gateway.log()
        );
        refused.get_or_insert(response);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Fails if the device refused a new invoice after the gateway had settled the open one.
fn assert_not_refused_after_settling(refused: Option<Response>) {
    if let Some(refused) = refused {
        panic!(
            "the invoice was settled (GET answered 200) but a new invoice was refused: {}",
            refused.body
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unplugged_device_answers_503_then_recovers_when_plugged_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let mut sim = Sim::start(dir).await;
    let (gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);

    sim.stop().await;
    let down = post_invoice(gateway.addr, &key, &invoice("DOWN-1")).await;
    assert_error(&down, 503, 150, &gateway.log());
    retry_after(&down);
    wait_status(gateway.addr, false, Duration::from_secs(3)).await;
    let again = post_invoice(gateway.addr, &key, &invoice("DOWN-2")).await;
    assert_error(&again, 503, 150, &gateway.log());
    retry_after(&again);
    // Nothing was recorded for the failed attempts, and no quota used.
    let missing = lookup(&gateway, &key, "DOWN-1").await;
    assert_error(&missing, 404, 170, &gateway.log());
    assert_eq!(quota_used(dir, &config, ORG), 0);
    assert_eq!(journal_event_count(dir, "intent"), 0);

    // Plugged back after a second and a half, at the same path.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    sim.restart_with(FaultConfig::default()).await;
    let took = wait_status(gateway.addr, true, Duration::from_secs(8)).await;
    assert!(
        took <= Duration::from_secs(6),
        "the link took {took:?} to come back"
    );
    let certified = post_invoice(gateway.addr, &key, &invoice("DOWN-1")).await;
    assert_eq!(
        certified.status,
        200,
        "{}\n{}",
        certified.body,
        gateway.log()
    );
    assert_eq!(certified.header("Idempotent-Replayed"), None);
    assert_eq!(certified.json["counters"], "1/1 FV");
    assert_eq!(quota_used(dir, &config, ORG), 1);
    assert_register_matches_device(dir, &sim);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_power_cut_after_finalize_is_reconciled_from_the_device_never_certified_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let faults = FaultConfig {
        power_cut_at_finalize: Some(1),
        ..FaultConfig::default()
    };
    let mut sim = Sim::start_with(dir, faults).await;
    let (gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);
    let body = invoice("CUT-1");

    let first = post_invoice(gateway.addr, &key, &body).await;
    // The box committed the invoice and died before answering.
    sim.wait_finished(Duration::from_secs(5)).await;
    let device = fiscal_invoices(&sim);
    assert_eq!(device.len(), 1, "{device:?}");
    assert_eq!(device[0]["rn"], "CUT-1");
    let committed = device[0]["code_def"]
        .as_str()
        .expect("code_def")
        .to_string();

    match first.status {
        200 => assert_eq!(code_of(&first), committed),
        503 => {
            let code = first.json["errorCode"].as_u64();
            assert!(
                matches!(code, Some(150 | 152)),
                "{}\n{}",
                first.body,
                gateway.log()
            );
            retry_after(&first);
            // While the box is unreachable: the same rn is in flight, another rn waits.
            let same = post_invoice(gateway.addr, &key, &body).await;
            assert_error(&same, 409, 111, &gateway.log());
            retry_after(&same);
            let pending = lookup(&gateway, &key, "CUT-1").await;
            assert_error(&pending, 409, 111, &gateway.log());
            let other = post_invoice(gateway.addr, &key, &invoice("CUT-OTHER")).await;
            assert_error(&other, 503, 150, &gateway.log());
            retry_after(&other);
            assert_eq!(quota_used(dir, &config, ORG), 0);
        }
        _ => panic!(
            "unexpected answer to a power cut: {}\n{}",
            first.body,
            gateway.log()
        ),
    }

    sim.restart_with(FaultConfig::default()).await;
    let found = lookup_when_settled(&gateway, &key, "CUT-1", Duration::from_secs(10)).await;
    assert_eq!(found.status, 200, "{}\n{}", found.body, gateway.log());
    assert_eq!(code_of(&found), committed);
    assert_eq!(found.json["counters"], "1/1 FV");
    let listed = cli_success(dir, &config, &["log", "list"]);
    assert_eq!(listed.matches(&committed).count(), 1, "{listed}");

    let replayed = post_invoice(gateway.addr, &key, &body).await;
    assert_eq!(replayed.status, 200, "{}", replayed.body);
    assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(code_of(&replayed), committed);
    let (next, refused) =
        post_until_accepted(&gateway, &key, &invoice("CUT-2"), Duration::from_secs(10)).await;
    assert_eq!(next.status, 200, "{}\n{}", next.body, gateway.log());
    assert_eq!(next.json["counters"], "2/2 FV");
    assert_eq!(quota_used(dir, &config, ORG), 2);
    let entries = assert_register_matches_device(dir, &sim);
    assert_eq!(entries[0]["source"], "reconciled");
    assert_not_refused_after_settling(refused);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_killed_while_the_device_finalizes_settles_it_at_start_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let sim = start_sim_with_timing(
        dir,
        Duration::from_millis(1),
        Duration::from_secs(2),
        FaultConfig::default(),
    )
    .await;
    let (mut gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);
    let body = invoice("KILLED-1");

    let addr = gateway.addr;
    let post_key = key.clone();
    let post_body = body.clone();
    let posted = tokio::spawn(async move { try_post_invoice(addr, &post_key, &post_body).await });
    // Kill once the intent is journaled: 38h is then on the wire and the box works for 2 s.
    let started = Instant::now();
    while journal_event_count(dir, "intent") == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "no intent journaled: {}",
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    gateway.kill9();
    let answer = posted.await.expect("client task");
    assert!(
        answer.as_ref().is_none_or(|r| r.status != 200),
        "answered 200 before the device finalized: {answer:?}"
    );
    assert_eq!(journal_event_count(dir, "certified"), 0);

    let gateway = Gateway::start(dir, &config_with_device(dir, &sim.link));
    let found = lookup_when_settled(&gateway, &key, "KILLED-1", Duration::from_secs(15)).await;
    let device = fiscal_invoices(&sim);
    let on_device = device.iter().find(|d| d["rn"] == "KILLED-1");
    match on_device {
        Some(committed) => {
            assert_eq!(found.status, 200, "{}\n{}", found.body, gateway.log());
            assert_eq!(found.json["codeDEFDGI"], committed["code_def"]);
            let replayed = post_invoice(gateway.addr, &key, &body).await;
            assert_eq!(replayed.status, 200, "{}", replayed.body);
            assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
        }
        None => assert_eq!(found.status, 404, "{}\n{}", found.body, gateway.log()),
    }
    gateway.wait_ready().await;
    let (next, refused) = post_until_accepted(
        &gateway,
        &key,
        &invoice("KILLED-2"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(next.status, 200, "{}\n{}", next.body, gateway.log());
    let entries = assert_register_matches_device(dir, &sim);
    // The device's counter (from the next invoice's counters) is the register's size.
    let counters = next.json["counters"].as_str().expect("counters");
    assert_eq!(
        counters,
        format!("{n}/{n} FV", n = entries.len()),
        "{entries:?}"
    );
    assert_eq!(quota_used(dir, &config, ORG), entries.len() as u64);
    assert_not_refused_after_settling(refused);
}

#[tokio::test(flavor = "multi_thread")]
async fn device_refusals_use_no_quota_and_leave_the_box_usable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    // The first commands refused are the gateway's throwaway C2h and the C1h it reads once
    // connected, the third the first invoice's C1h: a box that will not give its state is not
    // the invoice's fault (503, 154), and the box is usable once it answers again.
    let faults = FaultConfig {
        refuse_next: 3,
        ..FaultConfig::default()
    };
    let sim = Sim::start_with(dir, faults).await;
    let (gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);

    let refused = post_invoice(gateway.addr, &key, &invoice("REF-1")).await;
    assert_error(&refused, 503, 154, &gateway.log());
    let desc = refused.json["errorDesc"].as_str().unwrap_or_default();
    // French by default; the box's own text is passed on as it came, said to be its own.
    assert!(
        desc.contains(&nbsp(
            "il a refusé de donner son état (C1h), avec ces mots à lui, cités tels quels : « fault injected: command not executed »"
        )),
        "{desc}"
    );
    assert_eq!(quota_used(dir, &config, ORG), 0);

    // A refusal in the middle of an invoice (C0h of a credit note whose original the box
    // does not know): the gateway must cancel so that the box is not left blocked.
    let mut credit_note = invoice("REF-2");
    credit_note["type"] = "FA".into();
    credit_note["reference"] = "ABCDEFGHIJKLMNOPQRSTUVWX".into();
    credit_note["referenceType"] = "COR".into();
    let refused = post_invoice(gateway.addr, &key, &credit_note).await;
    assert_error(&refused, 422, 140, &gateway.log());
    let desc = refused.json["errorDesc"].as_str().unwrap_or_default();
    assert!(desc.contains("original invoice not found"), "{desc}");
    assert_eq!(quota_used(dir, &config, ORG), 0);

    let certified = post_invoice(gateway.addr, &key, &invoice("REF-3")).await;
    assert_eq!(
        certified.status,
        200,
        "{}\n{}",
        certified.body,
        gateway.log()
    );
    assert_eq!(certified.json["counters"], "1/1 FV");
    assert_eq!(quota_used(dir, &config, ORG), 1);
    // A refused rn is not burnt: it can be certified once fixed.
    let retried = post_invoice(gateway.addr, &key, &invoice("REF-1")).await;
    assert_eq!(retried.status, 200, "{}\n{}", retried.body, gateway.log());
    assert_eq!(retried.json["counters"], "2/2 FV");
    assert_register_matches_device(dir, &sim);
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_invoices_on_a_noisy_line_are_each_certified_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let faults = FaultConfig {
        seed: 20_26,
        corrupt_reply: 0.05,
        drop_reply: 0.02,
        garbage_burst: 0.05,
        ..FaultConfig::default()
    };
    let sim = Sim::start_with(dir, faults).await;
    let (gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);

    let mut codes = HashSet::new();
    for i in 1..=20 {
        let rn = format!("NOISE-{i}");
        let response = post_invoice(gateway.addr, &key, &invoice(&rn)).await;
        assert_eq!(
            response.status,
            200,
            "{rn}: {}\n{}",
            response.body,
            gateway.log()
        );
        assert_eq!(response.json["counters"], format!("{i}/{i} FV"), "{rn}");
        assert!(codes.insert(code_of(&response)), "{rn}: codeDEFDGI reused");
    }
    let entries = assert_register_matches_device(dir, &sim);
    assert_eq!(entries.len(), 20);
    assert_eq!(quota_used(dir, &config, ORG), 20);
    assert_eq!(journal_event_count(dir, "intent"), 20);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invoice_left_open_on_the_box_by_a_killed_gateway_is_cancelled_not_certified() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    // Every command takes 200 ms: C0 is done at about 0.6 s, and C1 C3 C0 31 33 35 come
    // before the intent, about 1.2 s.
    let sim = start_sim_with_timing(
        dir,
        Duration::from_millis(200),
        Duration::from_millis(200),
        FaultConfig::default(),
    )
    .await;
    let (mut gateway, key) = gateway_on(dir, &sim).await;
    let config = config_path(dir);

    let addr = gateway.addr;
    let post_key = key.clone();
    let posted =
        tokio::spawn(async move { try_post_invoice(addr, &post_key, &invoice("OPEN-1")).await });
    // Killed after C0 opened the invoice on the box, before the intent and 38h.
    tokio::time::sleep(Duration::from_millis(850)).await;
    gateway.kill9();
    let answer = posted.await.expect("client task");
    assert!(answer.is_none(), "answered before being killed: {answer:?}");
    assert_eq!(
        journal_event_count(dir, "intent"),
        0,
        "killed too late: the intent was already journaled"
    );

    let gateway = Gateway::start(dir, &config_with_device(dir, &sim.link));
    gateway.wait_ready().await;
    let next = post_invoice(gateway.addr, &key, &invoice("OPEN-2")).await;
    assert_eq!(next.status, 200, "{}\n{}", next.body, gateway.log());
    assert_eq!(next.json["counters"], "1/1 FV");
    assert!(
        gateway.log().contains("left open on the device"),
        "the scenario needs an invoice open on the box at restart: {}",
        gateway.log()
    );
    let missing = lookup(&gateway, &key, "OPEN-1").await;
    assert_error(&missing, 404, 170, &gateway.log());
    // The killed invoice was never certified: the ERP can simply send it again.
    let retried = post_invoice(gateway.addr, &key, &invoice("OPEN-1")).await;
    assert_eq!(retried.status, 200, "{}\n{}", retried.body, gateway.log());
    assert_eq!(retried.json["counters"], "2/2 FV");
    assert_eq!(quota_used(dir, &config, ORG), 2);
    assert_register_matches_device(dir, &sim);
}
