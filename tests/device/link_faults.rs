//! A bad cable between the gateway and the box (PROTOCOL.md §3, docs/design.md §4 and §9): the real
//! gateway binary opens the pty of a fault relay (`emcf_sim::relay`), which forwards to the
//! simulator's pty while flipping bits, losing bytes and frames, repeating replies, sending
//! garbage and stale frames, or being unplugged. What must hold: every invoice is answered
//! 200 (or 503, and the same request retried ends 200), the register equals the device's
//! fiscal memory (each rn once, counters consecutive, each answer the device's own for that
//! rn), a lost finalize reply is settled from C1h, and an unplugged line neither spins nor
//! leaks.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{
    add_org_with_key, assert_register_matches_device, config_with_device_timing, context_switches,
    cpu_share, fiscal_invoices, get, invoice, journal_event_count, open_fds, post_invoice,
    quota_used, relay_link, start_relay, start_sim_with_timing, try_post_invoice, wait_status,
    Gateway, Response, Sim,
};
use emcf_sim::faults::FaultConfig;
use emcf_sim::relay::{DirectionFaults, RelayFaults, RelayHandle};
use serde_json::Value;

const ORG: &str = "line-org";

/// CMD of the finalization (38h).
const FINALIZE: u8 = 0x38;

fn config_path(dir: &Path) -> PathBuf {
    dir.join("config.toml")
}

/// A gateway on the relay's pty (device timing keys in `timing`), ready, with an
/// organization and its live key.
async fn gateway_on_relay(dir: &Path, timing: &[(&str, u64)]) -> (Gateway, String) {
    let config = config_with_device_timing(dir, &relay_link(dir), timing);
    let gateway = Gateway::start(dir, &config);
    gateway.wait_ready().await;
    // A quota no run reaches (EMCF_NOISY_FRAMES may ask for many invoices).
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir, &gateway.config, ORG, "shop", Some(1_000_000))
    });
    (gateway, key)
}

fn code_of(response: &Response) -> String {
    response.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_else(|| panic!("no codeDEFDGI in {}", response.body))
        .to_string()
}

/// What one invoice went through before its 200.
#[derive(Debug, Default)]
struct Attempts {
    unavailable: u32,
    in_flight: u32,
}

/// Posts `body` until 200, retrying the same body on 503 (device unavailable, outcome
/// unknown) and on 409 code 111 (being settled); any other answer fails the test.
async fn post_until_200(
    gateway: &Gateway,
    key: &str,
    body: &Value,
    within: Duration,
) -> (Response, Attempts) {
    let started = Instant::now();
    let mut attempts = Attempts::default();
    loop {
        let response = post_invoice(gateway.addr, key, body).await;
        match (response.status, response.json["errorCode"].as_u64()) {
            (200, _) => return (response, attempts),
            (503, Some(150..=152)) => attempts.unavailable += 1,
            (409, Some(111)) => attempts.in_flight += 1,
            _ => panic!(
                "{}: unexpected answer {} {}\n{}",
                body["rn"],
                response.status,
                response.body,
                gateway.log()
            ),
        }
        assert!(
            response.header("Retry-After").is_some(),
            "{} without Retry-After: {}",
            response.status,
            response.body
        );
        assert!(
            started.elapsed() < within,
            "{}: no 200 within {within:?}, last {} {}\n{}",
            body["rn"],
            response.status,
            response.body,
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `GET /Invoice/{rn}` while it answers 409 (being settled).
async fn lookup_when_settled(gateway: &Gateway, key: &str, rn: &str, within: Duration) -> Response {
    let started = Instant::now();
    loop {
        let response = get(gateway.addr, &format!("/api/v1/Invoice/{rn}"), Some(key)).await;
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

/// The device's committed invoices by rn; fails on an rn committed twice and on counters
/// that are not 1, 2, 3... in commit order.
fn device_by_rn(sim: &Sim) -> HashMap<String, Value> {
    let device = fiscal_invoices(sim);
    let mut by_rn = HashMap::new();
    for (i, committed) in device.iter().enumerate() {
        let expected = i as u64 + 1;
        assert_eq!(
            (committed["tc"].as_u64(), committed["fc"].as_u64()),
            (Some(expected), Some(expected)),
            "counters not consecutive at position {i}: {committed}"
        );
        let rn = committed["rn"].as_str().expect("rn").to_string();
        if let Some(first) = by_rn.insert(rn.clone(), committed.clone()) {
            panic!("{rn} finalized twice on the device: {first} and {committed}");
        }
    }
    by_rn
}

/// Frames of the noisy-line run: `EMCF_NOISY_FRAMES`, default 10 000 (both directions,
/// counted by the relay; about 14 per invoice).
fn noisy_frames() -> u64 {
    std::env::var("EMCF_NOISY_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// A small invoice whose amounts depend on `n` (2 x a price from 500.00 to 596.00, TTC), so
/// that a reply taken for another invoice's (a 33h subtotal, a 38h) cannot look right.
fn priced_invoice(rn: &str, n: u64) -> Value {
    let price = 500 + n % 97;
    let mut body = invoice(rn);
    body["items"][0]["price"] = format!("{price}.00").into();
    body["payments"][0]["amount"] = format!("{}.00", 2 * price).into();
    body
}

/// The gateway's reply window in the noisy run, in milliseconds.
const NOISY_WINDOW_MS: u64 = 250;

/// The line of the noisy run: per byte 1e-4 flips and 2e-5 losses; per frame 0.5 % lost,
/// 0.5 % garbage before it; towards the gateway also 0.5 % duplicated, 0.5 % preceded by a
/// stale reply, 0.2 % late by 200 ms.
fn noisy_line() -> RelayFaults {
    let both = DirectionFaults {
        flip_bit: 1e-4,
        drop_byte: 2e-5,
        drop_frame: 0.005,
        garbage: 0.005,
        ..DirectionFaults::default()
    };
    RelayFaults {
        to_device: both.clone(),
        to_host: DirectionFaults {
            duplicate_frame: 0.005,
            stale_frame: 0.005,
            delay_frame: 0.002,
            delay_for: Duration::from_millis(200),
            ..both
        },
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn thousands_of_frames_on_a_noisy_line_certify_every_invoice_once() {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let sim = Sim::start(dir).await;
    let relay = Arc::new(start_relay(dir, &sim, noisy_line(), 2026).await);
    // The simulator answers within 20 ms: a 250 ms window (instead of 500) halves the time
    // each lost or broken frame costs, and the recovery under test is the same. A 38h whose
    // frame or reply is lost is never sent again: it is listened to until its budget, then
    // settled from C1h; a short budget keeps that quick.
    let (gateway, key) = gateway_on_relay(
        dir,
        &[("window_ms", NOISY_WINDOW_MS), ("finalize_budget_ms", 1500)],
    )
    .await;
    let gateway = Arc::new(gateway);
    let target = noisy_frames();

    let next = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (gateway, relay, next, key) =
            (gateway.clone(), relay.clone(), next.clone(), key.clone());
        clients.push(tokio::spawn(async move {
            let mut answered = Vec::new();
            while relay.stats().frames() < target {
                let n = next.fetch_add(1, Ordering::SeqCst) + 1;
                let rn = format!("NOISY-{n:05}");
                let body = priced_invoice(&rn, n);
                let (response, attempts) =
                    post_until_200(&gateway, &key, &body, Duration::from_secs(60)).await;
                let total = body["payments"][0]["amount"].clone();
                answered.push((rn, total, response, attempts));
            }
            answered
        }));
    }
    let mut answered = Vec::new();
    for client in clients {
        answered.extend(client.await.expect("client task"));
    }
    let posting = started.elapsed();
    let stats = relay.stats();

    // The device's truth: each rn once, counters 1..N.
    let device = device_by_rn(&sim);
    assert_eq!(
        device.len(),
        answered.len(),
        "the device committed {} invoices for {} answered",
        device.len(),
        answered.len()
    );
    // Every answer is the device's own for that rn (no reply taken for another invoice).
    let mut retried = 0;
    for (rn, total, response, attempts) in &answered {
        assert_eq!(response.json["rn"], rn.as_str(), "{}", response.body);
        assert_eq!(
            &response.json["total"], total,
            "{rn}: total is not this invoice's"
        );
        let committed = device
            .get(rn)
            .unwrap_or_else(|| panic!("{rn} answered 200 but not on the device"));
        assert_eq!(
            response.json["codeDEFDGI"], committed["code_def"],
            "{rn}: codeDEFDGI is not the device's"
        );
        assert_eq!(
            response.json["counters"],
            format!("{}/{} FV", committed["fc"], committed["tc"]),
            "{rn}: counters are not the device's"
        );
        if attempts.unavailable + attempts.in_flight > 0 {
            retried += 1;
        }
    }
    let entries = assert_register_matches_device(dir, &sim);
    let config = config_path(dir);
    assert_eq!(
        tokio::task::block_in_place(|| quota_used(dir, &config, ORG)),
        entries.len() as u64
    );
    assert_eq!(journal_event_count(dir, "certified"), entries.len());
    let sources: BTreeMap<String, usize> = entries.iter().fold(BTreeMap::new(), |mut m, e| {
        *m.entry(e["source"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
        m
    });

    // The line really was noisy, in every way configured.
    assert!(stats.frames() >= target, "{stats:?}");
    let (up, down) = (&stats.to_device.faults, &stats.to_host.faults);
    assert!(up.flipped_bits + down.flipped_bits > 0, "{stats:?}");
    assert!(
        up.dropped_frames > 0 && down.dropped_frames > 0,
        "{stats:?}"
    );
    assert!(up.garbage_bursts + down.garbage_bursts > 0, "{stats:?}");
    assert!(down.duplicated_frames > 0, "{stats:?}");
    assert!(down.stale_frames > 0, "{stats:?}");
    eprintln!(
        "noisy line: {} invoices, {} frames ({} to the device, {} to the gateway) in {posting:?}; \
         faults to the device {up:?}, to the gateway {down:?}; {retried} invoices needed a retry; \
         register sources {sources:?}; intents {}, abandoned {}",
        answered.len(),
        stats.frames(),
        stats.to_device.frames,
        stats.to_host.frames,
        journal_event_count(dir, "intent"),
        journal_event_count(dir, "abandoned"),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finalize_reply_lost_after_the_device_committed_is_settled_from_c1h_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let sim = Sim::start(dir).await;
    let relay = start_relay(dir, &sim, RelayFaults::default(), 1).await;
    // A short finalize budget: the gateway listens, without sending again, until it ends.
    let (gateway, key) = gateway_on_relay(dir, &[("finalize_budget_ms", 3000)]).await;

    let (first, _) =
        post_until_200(&gateway, &key, &invoice("LOST-0"), Duration::from_secs(10)).await;
    assert_eq!(first.json["counters"], "1/1 FV");

    // The reply to the 38h never arrives.
    let sent_before = relay
        .stats()
        .to_device
        .by_cmd
        .get(&FINALIZE)
        .copied()
        .unwrap_or(0);
    relay
        .drop_next_replies(FINALIZE, 1)
        .await
        .expect("rule armed");
    let body = invoice("LOST-1");
    let started = Instant::now();
    let (response, attempts) = post_until_200(&gateway, &key, &body, Duration::from_secs(20)).await;
    let took = started.elapsed();
    assert_eq!(
        relay.armed().await.expect("relay"),
        0,
        "the reply was dropped"
    );
    let stats = relay.stats();
    let sent = stats.to_device.by_cmd.get(&FINALIZE).copied().unwrap_or(0) - sent_before;
    assert_eq!(
        sent, 1,
        "38h is never sent again after silence, only listened to (PROTOCOL.md 3.3)"
    );
    assert_eq!(stats.to_host.faults.dropped_frames, 1);

    // Once on the device, once in the register, settled from C1h, answered with the
    // device's own elements.
    let device = device_by_rn(&sim);
    assert_eq!(device.len(), 2, "{device:?}");
    let committed = &device["LOST-1"];
    assert_eq!(response.json["codeDEFDGI"], committed["code_def"]);
    assert_eq!(response.json["counters"], "2/2 FV");
    let entries = assert_register_matches_device(dir, &sim);
    assert_eq!(entries[1]["rn"], "LOST-1");
    assert_eq!(entries[1]["source"], "reconciled", "{}", entries[1]);
    if attempts.unavailable + attempts.in_flight > 0 {
        // The retry got the stored result, not a second certification.
        assert_eq!(response.header("Idempotent-Replayed"), Some("true"));
    }
    let found = lookup_when_settled(&gateway, &key, "LOST-1", Duration::from_secs(5)).await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(code_of(&found), code_of(&response));

    // The line is usable again at once.
    let (next, next_attempts) =
        post_until_200(&gateway, &key, &invoice("LOST-2"), Duration::from_secs(10)).await;
    assert_eq!(next.json["counters"], "3/3 FV");
    assert_eq!(
        (next_attempts.unavailable, next_attempts.in_flight),
        (0, 0),
        "the device took no new invoice after LOST-1 was settled"
    );
    assert_register_matches_device(dir, &sim);
    eprintln!(
        "lost 38h reply: answered in {took:?} after {attempts:?}; journal: {} intents, {} certified",
        journal_event_count(dir, "intent"),
        journal_event_count(dir, "certified")
    );
}

/// Context switches of the whole gateway in 2 s of a cut line, at most (an idle gateway with
/// its reconnection backoff: about 40).
const MAX_WAKEUPS_WHILE_CUT: u64 = 400;

/// Cuts the relay and waits until the gateway says so.
async fn unplug(relay: &RelayHandle, gateway: &Gateway, within: Duration) -> Duration {
    relay.cut().await.expect("cut");
    wait_status(gateway.addr, false, within).await
}

/// Restores the relay and waits until the gateway is ready again.
async fn replug(relay: &RelayHandle, gateway: &Gateway, within: Duration) -> Duration {
    relay.restore().await.expect("restore");
    wait_status(gateway.addr, true, within).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_line_unplugged_and_replugged_recovers_without_spinning_or_leaking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let sim = Sim::start(dir).await;
    let relay = start_relay(dir, &sim, RelayFaults::default(), 1).await;
    let (gateway, key) = gateway_on_relay(dir, &[]).await;
    let pid = gateway.pid();
    let (first, _) =
        post_until_200(&gateway, &key, &invoice("PLUG-1"), Duration::from_secs(10)).await;
    assert_eq!(first.json["counters"], "1/1 FV");

    let down = unplug(&relay, &gateway, Duration::from_secs(2)).await;
    let refused = post_invoice(gateway.addr, &key, &invoice("PLUG-DOWN")).await;
    assert_eq!(
        (refused.status, refused.json["errorCode"].as_u64()),
        (503, Some(150)),
        "{}",
        refused.body
    );
    let switches = context_switches(pid);
    let busy = cpu_share(pid, Duration::from_secs(2)).await;
    let wakeups = context_switches(pid).saturating_sub(switches);
    assert!(
        busy < 0.10,
        "the gateway used {:.0} % of a core while the line was cut",
        busy * 100.0
    );
    // A reopen loop without its backoff stays under 10 % (the timer wheel paces it to about
    // a millisecond) but wakes the process more than a thousand times in 2 s.
    assert!(
        wakeups < MAX_WAKEUPS_WHILE_CUT,
        "the gateway woke up {wakeups} times in 2 s while the line was cut"
    );
    let up = replug(&relay, &gateway, Duration::from_secs(5)).await;
    let (second, _) =
        post_until_200(&gateway, &key, &invoice("PLUG-2"), Duration::from_secs(10)).await;
    assert_eq!(second.json["counters"], "2/2 FV");

    // Five more cycles: no descriptor left behind.
    let fds_before = open_fds(pid);
    let mut cycles = Vec::new();
    for _ in 0..5 {
        let down = unplug(&relay, &gateway, Duration::from_secs(2)).await;
        let up = replug(&relay, &gateway, Duration::from_secs(5)).await;
        cycles.push((down, up));
    }
    let fds_after = open_fds(pid);
    assert!(
        fds_after <= fds_before + 2,
        "file descriptors grew from {fds_before} to {fds_after} over 5 cut/restore cycles"
    );
    let (third, _) =
        post_until_200(&gateway, &key, &invoice("PLUG-3"), Duration::from_secs(10)).await;
    assert_eq!(third.json["counters"], "3/3 FV");
    assert_eq!(relay.stats().cuts, 6);
    assert_register_matches_device(dir, &sim);
    eprintln!(
        "idle unplug: status false after {down:?}, CPU {:.1} % and {wakeups} context switches \
         in 2 s while cut, true {up:?} after restore; cycles (down, up) {cycles:?}; fds \
         {fds_before} -> {fds_after}",
        busy * 100.0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_cut_during_a_slow_finalize_is_settled_after_replug_never_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let sim = start_sim_with_timing(
        dir,
        Duration::from_millis(1),
        Duration::from_millis(1500),
        FaultConfig::default(),
    )
    .await;
    let relay = start_relay(dir, &sim, RelayFaults::default(), 1).await;
    let (gateway, key) = gateway_on_relay(dir, &[]).await;
    let pid = gateway.pid();
    let body = invoice("MID-1");

    let (addr, post_key, post_body) = (gateway.addr, key.clone(), body.clone());
    let posted = tokio::spawn(async move { try_post_invoice(addr, &post_key, &post_body).await });
    // Cut while the box works on the 38h (it takes 1.5 s, sending SYN meanwhile).
    let started = Instant::now();
    while !relay.stats().to_device.by_cmd.contains_key(&FINALIZE) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "38h never sent: {}",
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    relay.cut().await.expect("cut");
    let cut_at = Instant::now();

    let answer = posted
        .await
        .expect("client task")
        .expect("the gateway answers");
    let answered_in = cut_at.elapsed();
    match (answer.status, answer.json["errorCode"].as_u64()) {
        (200, _) => {}
        (503, Some(150 | 152)) => assert!(answer.header("Retry-After").is_some()),
        _ => panic!(
            "unexpected answer to a cut: {}\n{}",
            answer.body,
            gateway.log()
        ),
    }
    wait_status(gateway.addr, false, Duration::from_secs(2)).await;

    // While the line is cut and the outcome unknown: the rn is never said to be absent,
    // the same request does not certify, and the gateway does not spin.
    if answer.status != 200 {
        let pending = get(gateway.addr, "/api/v1/Invoice/MID-1", Some(&key)).await;
        assert_eq!(
            (pending.status, pending.json["errorCode"].as_u64()),
            (409, Some(111)),
            "an rn in doubt must not read as unknown: {}",
            pending.body
        );
        let again = post_invoice(gateway.addr, &key, &body).await;
        assert_eq!(again.status, 409, "{}", again.body);
    }
    let switches = context_switches(pid);
    let busy = cpu_share(pid, Duration::from_secs(2)).await;
    let wakeups = context_switches(pid).saturating_sub(switches);
    assert!(
        busy < 0.10,
        "the gateway used {:.0} % of a core while the line was cut mid-invoice",
        busy * 100.0
    );
    assert!(
        wakeups < MAX_WAKEUPS_WHILE_CUT,
        "the gateway woke up {wakeups} times in 2 s while the line was cut mid-invoice"
    );
    // The box finished its 1.5 s and committed; its reply went nowhere.
    let committed_by = Instant::now() + Duration::from_secs(3);
    while fiscal_invoices(&sim).is_empty() {
        assert!(
            Instant::now() < committed_by,
            "the box never committed MID-1"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    replug(&relay, &gateway, Duration::from_secs(8)).await;
    let found = lookup_when_settled(&gateway, &key, "MID-1", Duration::from_secs(15)).await;
    let device = device_by_rn(&sim);
    assert_eq!(device.len(), 1, "{device:?}");
    let committed = &device["MID-1"];
    assert_eq!(found.status, 200, "{}\n{}", found.body, gateway.log());
    assert_eq!(found.json["codeDEFDGI"], committed["code_def"]);
    if answer.status == 200 {
        assert_eq!(answer.json["codeDEFDGI"], committed["code_def"]);
    }
    let (replayed, _) = post_until_200(&gateway, &key, &body, Duration::from_secs(10)).await;
    assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(replayed.json["codeDEFDGI"], committed["code_def"]);

    let (next, _) =
        post_until_200(&gateway, &key, &invoice("MID-2"), Duration::from_secs(15)).await;
    assert_eq!(next.json["counters"], "2/2 FV");
    let entries = assert_register_matches_device(dir, &sim);
    let source = entries[0]["source"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if answer.status != 200 {
        assert_eq!(source, "reconciled");
    }
    eprintln!(
        "cut mid-finalize: answered {} {} {answered_in:?} after the cut; CPU {:.1} % and \
         {wakeups} context switches in 2 s while cut; register source {source}",
        answer.status,
        answer.json["errorCode"],
        busy * 100.0
    );
}
