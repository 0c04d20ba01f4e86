//! The gateway against a model of itself, under random operations (issue 6, item 2).
//!
//! The model is what an integrator and an auditor may rely on: the set of certified rns of
//! each environment (with the body, codeDEFDGI and counters of each), the annual quota and
//! what is used of it, the device's counters, whether the API key is enabled. Proptest draws
//! a quota and a sequence of operations: certify a new rn (live or sandbox), retry an rn with
//! the same body or another one, invalid bodies, lookups, credit notes (of a certified
//! invoice, or of one the device does not know), disable and enable the key, restart the
//! gateway, and device faults through the fault relay (`emcf_sim::relay`: lost replies of a
//! command, lost finalize replies, an unplugged line) or the simulator's `FaultConfig` (a
//! power cut right after the box committed, a refused command). Each operation runs against
//! the real binary on the relay's pty, in front of the simulator, and its answer must be the
//! one the model predicts; after each operation `GET /api/v1/Invoice/{rn}` of every rn and
//! the quota of `org show` must equal the model, and at the end of a case the register
//! (`log export`) and the device's fiscal memory must hold exactly the model's invoices.
//!
//! 8 cases of 12 operations by default; `PROPTEST_CASES` raises the number of cases,
//! `MODEL_OPS` the longest sequence.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{
    add_org_with_key, cli, config_with_device_timing, device_triples, exported_entries, get,
    issue_key, post_invoice, post_raw, register_triples, relay_link, start_relay, wait_status,
    Gateway, Response, Sim,
};
use emcf_sim::faults::FaultConfig;
use emcf_sim::relay::{RelayFaults, RelayHandle};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{json, Value};

const ORG: &str = "acme";
const FINALIZE: u8 = 0x38;

/// Device timing: short, so a lost reply costs well under a second. The request timeout
/// must stay above the longest budget.
const TIMING: &[(&str, u64)] = &[
    ("window_ms", 300),
    ("command_budget_ms", 2000),
    ("poll_interval_ms", 100),
    ("finalize_budget_ms", 2000),
    ("credit_note_budget_ms", 2500),
];

// ---------------------------------------------------------------------------------------
// Operations.

/// One operation. Indices (`pick`) choose among what exists when the operation runs
/// (modulo), so every sequence is valid, also once shrunk.
#[derive(Debug, Clone)]
enum Op {
    /// A new rn, `variant` of the sale body.
    Certify { variant: u8, sandbox: bool },
    /// A certified rn again, same body: the stored result.
    Replay { pick: usize, sandbox: bool },
    /// A certified rn with another body: 409.
    Conflict { pick: usize, variant: u8 },
    /// An invalid body (kind `kind`), for a new rn or a certified one.
    Invalid { kind: usize, pick: Option<usize> },
    /// `GET` of a certified rn (with the live key, or the sandbox key for a live rn) or of
    /// an unknown one.
    Lookup { pick: usize, unknown: bool },
    /// A credit note of a certified sale (or, with none, of a codeDEFDGI the box never
    /// issued: refused by the box).
    CreditNote { pick: usize },
    /// `key disable` / `key enable` of the live key.
    SetKey { enabled: bool },
    /// The next `times` finalize replies are lost, then a new rn.
    LoseFinalizeReplies { times: u32, variant: u8 },
    /// The next `times` replies to command `cmd` are lost, then a new rn.
    LoseReplies { cmd: u8, times: u32, variant: u8 },
    /// The line is unplugged; a new rn; plugged back.
    Unplug { variant: u8 },
    /// The box loses power right after committing the next invoice (a new rn); it comes
    /// back.
    PowerCut { variant: u8 },
    /// The box refuses the next command (the new rn's first).
    Refuse { variant: u8 },
    /// An rn that failed before (device down, refused) is certified now.
    RetryFailed { pick: usize },
    /// SIGTERM, start again on the same state.
    RestartGateway,
}

fn op() -> impl Strategy<Value = Op> {
    let variant = 0u8..8;
    prop_oneof![
        10 => (variant.clone(), prop::bool::weighted(0.2))
            .prop_map(|(variant, sandbox)| Op::Certify { variant, sandbox }),
        4 => (any::<usize>(), prop::bool::weighted(0.2))
            .prop_map(|(pick, sandbox)| Op::Replay { pick, sandbox }),
        2 => (any::<usize>(), variant.clone()).prop_map(|(pick, variant)| Op::Conflict { pick, variant }),
        3 => (0..INVALID.len(), prop::option::of(any::<usize>()))
            .prop_map(|(kind, pick)| Op::Invalid { kind, pick }),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(pick, unknown)| Op::Lookup { pick, unknown }),
        2 => any::<usize>().prop_map(|pick| Op::CreditNote { pick }),
        2 => any::<bool>().prop_map(|enabled| Op::SetKey { enabled }),
        // 38h is sent once and never again after silence: one reply to lose.
        1 => variant.clone().prop_map(|variant| Op::LoseFinalizeReplies { times: 1, variant }),
        1 => (prop::sample::select(vec![0xC1u8, 0xC0, 0x31, 0x33, 0x35]), 1u32..=3, variant.clone())
            .prop_map(|(cmd, times, variant)| Op::LoseReplies { cmd, times, variant }),
        1 => variant.clone().prop_map(|variant| Op::Unplug { variant }),
        1 => variant.clone().prop_map(|variant| Op::PowerCut { variant }),
        1 => variant.clone().prop_map(|variant| Op::Refuse { variant }),
        1 => any::<usize>().prop_map(|pick| Op::RetryFailed { pick }),
        1 => Just(Op::RestartGateway),
    ]
}

/// A case: the organization's annual quota and the operations.
#[derive(Debug, Clone)]
struct Case {
    quota: u64,
    ops: Vec<Op>,
}

fn case(max_ops: usize) -> impl Strategy<Value = Case> {
    (
        2u64..=6,
        prop::collection::vec(op(), max_ops.min(4)..=max_ops),
    )
        .prop_map(|(quota, ops)| Case { quota, ops })
}

// ---------------------------------------------------------------------------------------
// Bodies.

/// Sale `variant`: FV or FT, one line of a price that depends on the variant, no payments
/// (the gateway pays the device total in cash).
fn sale(rn: &str, variant: u8) -> Value {
    json!({
        "rn": rn,
        "mode": "ttc",
        "type": if variant.is_multiple_of(2) { "FV" } else { "FT" },
        "items": [{"name": "ARTICLE", "type": "BIE", "price": format!("{}.00", 100 + u32::from(variant) * 25),
                   "quantity": "2", "taxGroup": "B"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}

/// A credit note of the sale with codeDEFDGI `reference` (its one line).
fn credit_note(rn: &str, reference: &str) -> Value {
    json!({
        "rn": rn,
        "mode": "ttc",
        "type": "FA",
        "reference": reference,
        "referenceType": "COR",
        "items": [{"name": "RETOUR", "type": "BIE", "price": "100.00", "quantity": "1", "taxGroup": "B"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}

/// Invalid bodies: (label, body of rn, errorCode).
const INVALID: &[(&str, u64)] = &[
    ("malformed JSON", 1),
    ("nested 40 deep", 2),
    ("unknown field", 3),
    ("rn empty", 31),
    ("mode in capitals", 11),
    ("no items", 40),
    ("negative price", 44),
    ("another seller NIF", 13),
    ("payment of 0", 61),
];

fn invalid_body(kind: usize, rn: &str) -> Vec<u8> {
    let mut body = sale(rn, 0);
    match INVALID[kind].0 {
        "malformed JSON" => return format!(r#"{{"rn":"{rn}","#).into_bytes(),
        "nested 40 deep" => {
            return format!(
                r#"{{"rn":"{rn}","items":{}{}}}"#,
                "[".repeat(40),
                "]".repeat(40)
            )
            .into_bytes()
        }
        "unknown field" => body["items"][0]["pricee"] = json!("1"),
        "rn empty" => body["rn"] = json!(""),
        "mode in capitals" => body["mode"] = json!("TTC"),
        "no items" => body["items"] = json!([]),
        "negative price" => body["items"][0]["price"] = json!("-1.00"),
        "another seller NIF" => body["nif"] = json!("B7654321Z"),
        "payment of 0" => body["payments"] = json!([{"name": "ESPECES", "amount": "0"}]),
        other => unreachable!("{other}"),
    }
    serde_json::to_vec(&body).expect("json")
}

// ---------------------------------------------------------------------------------------
// The model.

/// A certified invoice as the model knows it.
#[derive(Debug, Clone)]
struct Cert {
    body: Value,
    code_def: String,
    counters: String,
    sale: bool,
}

/// The counters of one device.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    tc: u64,
    fvc: u64,
    frc: u64,
}

impl Counters {
    /// The counters string of the next invoice of `kind`, and the counters after it.
    fn next(self, kind: &str) -> (String, Counters) {
        let mut after = self;
        after.tc += 1;
        let fc = if kind == "FA" || kind == "EA" {
            after.frc += 1;
            after.frc
        } else {
            after.fvc += 1;
            after.fvc
        };
        (format!("{fc}/{} {kind}", after.tc), after)
    }
}

#[derive(Debug, Default)]
struct Model {
    quota: u64,
    key_enabled: bool,
    live: BTreeMap<String, Cert>,
    sandbox: BTreeMap<String, Cert>,
    live_device: Counters,
    sandbox_device: Counters,
    /// rns that were refused or failed before the device committed, with their body and
    /// whether the same body can be certified later (not a credit note of an unknown
    /// invoice).
    failed: Vec<(String, Value, bool)>,
    next_rn: u32,
}

impl Model {
    fn fresh_rn(&mut self) -> String {
        self.next_rn += 1;
        format!("M-{}", self.next_rn)
    }

    /// Records an rn refused or failed before the device committed it.
    fn fail(&mut self, rn: String, body: Value, retryable: bool) {
        self.failed.retain(|(failed, _, _)| *failed != rn);
        self.failed.push((rn, body, retryable));
    }

    fn used(&self) -> u64 {
        self.live.len() as u64
    }

    fn pick(map: &BTreeMap<String, Cert>, pick: usize) -> Option<(String, Cert)> {
        if map.is_empty() {
            return None;
        }
        map.iter()
            .nth(pick % map.len())
            .map(|(rn, cert)| (rn.clone(), cert.clone()))
    }

    /// What a new certification of `kind` must be answered, before the device: 401 (key
    /// disabled, live only), 429 (quota), or `None` (it goes to the device).
    fn refused_before_device(&self, sandbox: bool) -> Option<(u16, u64)> {
        if sandbox {
            None
        } else if !self.key_enabled {
            Some((401, 102))
        } else if self.used() >= self.quota {
            Some((429, 130))
        } else {
            None
        }
    }

    /// Records a certification answered 200.
    fn certified(&mut self, rn: &str, body: &Value, sandbox: bool, response: &Response) {
        let cert = Cert {
            body: body.clone(),
            code_def: response.json["codeDEFDGI"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            counters: response.json["counters"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            sale: body["type"] != "FA",
        };
        let kind = body["type"].as_str().unwrap_or("FV");
        let device = if sandbox {
            &mut self.sandbox_device
        } else {
            &mut self.live_device
        };
        let (_, after) = device.next(kind);
        *device = after;
        self.failed.retain(|(failed, _, _)| failed != rn);
        if sandbox {
            self.sandbox.insert(rn.to_string(), cert);
        } else {
            self.live.insert(rn.to_string(), cert);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The world: simulator, relay, gateway, keys.

struct World {
    dir: tempfile::TempDir,
    sim: Sim,
    relay: RelayHandle,
    gateway: Gateway,
    /// The live key that operations disable and enable.
    key: String,
    /// Another live key of the organization, always enabled: lookups for the checks.
    auditor: String,
    sandbox: String,
    /// What the operations saw, for the failure message.
    trace: std::cell::RefCell<Vec<String>>,
}

fn config_path(dir: &Path) -> PathBuf {
    dir.join("config.toml")
}

fn config_text(dir: &Path) -> String {
    format!(
        "request_timeout_secs = 5\n{}",
        config_with_device_timing(dir, &relay_link(dir), TIMING)
    )
}

impl World {
    async fn start(quota: u64, seed: u64) -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = Sim::start(dir.path()).await;
        let relay = start_relay(dir.path(), &sim, RelayFaults::default(), seed).await;
        let gateway = Gateway::start(dir.path(), &config_text(dir.path()));
        gateway.wait_ready().await;
        let config = config_path(dir.path());
        let key = add_org_with_key(dir.path(), &config, ORG, "shop", Some(quota));
        let auditor = issue_key(dir.path(), &config, ORG, false);
        let sandbox = issue_key(dir.path(), &config, ORG, true);
        World {
            dir,
            sim,
            relay,
            gateway,
            key,
            auditor,
            sandbox,
            trace: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Notes something for the failure message and the case summary.
    fn trace_note(&self, note: String) {
        self.trace.borrow_mut().push(note);
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn cli_ok(&self, args: &[&str]) -> String {
        let out = cli(self.path(), &config_path(self.path()), args);
        assert!(
            out.status.success(),
            "emcf-gateway {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn key_for(&self, sandbox: bool) -> &str {
        if sandbox {
            &self.sandbox
        } else {
            &self.key
        }
    }

    async fn post(&self, body: &Value, sandbox: bool) -> Response {
        post_invoice(self.gateway.addr, self.key_for(sandbox), body).await
    }

    async fn lookup(&self, rn: &str, key: &str) -> Response {
        get(
            self.gateway.addr,
            &format!("/api/v1/Invoice/{rn}"),
            Some(key),
        )
        .await
    }

    /// Waits until the gateway says its device is ready again.
    async fn wait_ready(&self) {
        wait_status(self.gateway.addr, true, Duration::from_secs(10)).await;
    }

    /// Waits until the relay has (re)opened the simulator's port `opens` times.
    async fn wait_device_opens(&self, opens: u64) {
        let started = Instant::now();
        while !(self.relay.stats().device_connected && self.relay.stats().device_opens >= opens) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the relay did not reopen the simulator's port"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Restarts the simulator (same fiscal memory) with `faults`, behind the same relay.
    async fn restart_sim(&mut self, faults: FaultConfig) {
        let opens = self.relay.stats().device_opens;
        self.sim.stop().await;
        self.sim.restart_with(faults).await;
        self.wait_device_opens(opens + 1).await;
    }

    /// Posts `body` until 200, riding out 503 (150, 152) and 409 (111) within `within`.
    async fn post_until_200(&self, body: &Value, within: Duration) -> (Response, u32) {
        let started = Instant::now();
        let mut retries = 0;
        loop {
            let response = self.post(body, false).await;
            match (response.status, response.json["errorCode"].as_u64()) {
                (200, _) => return (response, retries),
                (503, Some(150..=152)) | (409, Some(111)) => retries += 1,
                _ => panic!(
                    "{}: {} {} while settling",
                    body["rn"], response.status, response.body
                ),
            }
            assert!(
                started.elapsed() < within,
                "{}: no 200 within {within:?}, last {} {}",
                body["rn"],
                response.status,
                response.body
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `(status, errorCode)` of a response.
fn outcome(response: &Response) -> (u16, Option<u64>) {
    (response.status, response.json["errorCode"].as_u64())
}

/// Asserts a 200 certification with the `counters` expected.
#[track_caller]
fn assert_certified(response: &Response, counters: &str, what: &str) {
    assert_eq!(
        (response.status, response.json["counters"].as_str()),
        (200, Some(counters)),
        "{what}: {}",
        response.body
    );
    assert_eq!(
        response.json["codeDEFDGI"].as_str().map(str::len),
        Some(24),
        "{what}: {}",
        response.body
    );
}

// ---------------------------------------------------------------------------------------
// Running an operation.

/// Certifies a new sale that the model says reaches the device, and checks its answer.
async fn certify_new(world: &mut World, model: &mut Model, body: Value, sandbox: bool) {
    let rn = body["rn"].as_str().expect("rn").to_string();
    let response = world.post(&body, sandbox).await;
    match model.refused_before_device(sandbox) {
        Some(expected) => {
            assert_eq!(
                outcome(&response),
                (expected.0, Some(expected.1)),
                "{}",
                response.body
            );
            model.fail(rn, body, true);
        }
        None => {
            let device = if sandbox {
                model.sandbox_device
            } else {
                model.live_device
            };
            let (counters, _) = device.next(body["type"].as_str().expect("type"));
            let response = settled(world, &body, sandbox, response).await;
            assert_certified(&response, &counters, &rn);
            model.certified(&rn, &body, sandbox, &response);
        }
    }
}

/// The final answer to a certification that reached the device: `first` if it was not 503
/// "outcome unknown" (152), else the same request retried until settled. A slow box (a
/// loaded machine: the box fsyncs its fiscal memory before it answers) may take longer than
/// the finalize budget, and then 152 is the right answer; what is certified in the end must
/// still be what the model says.
async fn settled(world: &World, body: &Value, sandbox: bool, first: Response) -> Response {
    if outcome(&first) != (503, Some(152)) {
        assert!(
            first.header("Idempotent-Replayed").is_none(),
            "a first request answered as a replay: {:?}",
            first.headers
        );
        return first;
    }
    assert!(first.header("Retry-After").is_some());
    world.trace_note(format!("{}: 503 152 (slow box), settling", body["rn"]));
    let started = Instant::now();
    loop {
        let response = world.post(body, sandbox).await;
        match outcome(&response) {
            (200, _) => {
                assert_eq!(response.header("Idempotent-Replayed"), Some("true"));
                return response;
            }
            (503, Some(150..=152)) | (409, Some(111)) => {}
            _ => panic!("{}: {} while settling", body["rn"], response.body),
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{}: not settled within 20 s: {}",
            body["rn"],
            response.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a fault operation would reach the device (else it is skipped: an armed fault
/// would be left for a later operation).
fn reaches_device(model: &Model) -> bool {
    model.refused_before_device(false).is_none()
}

async fn run_op(world: &mut World, model: &mut Model, op: &Op) {
    match op {
        Op::Certify { variant, sandbox } => {
            let rn = model.fresh_rn();
            certify_new(world, model, sale(&rn, *variant), *sandbox).await;
        }
        Op::Replay { pick, sandbox } => {
            let map = if *sandbox {
                &model.sandbox
            } else {
                &model.live
            };
            let Some((rn, cert)) = Model::pick(map, *pick) else {
                return;
            };
            let response = world.post(&cert.body, *sandbox).await;
            if !*sandbox && !model.key_enabled {
                assert_eq!(outcome(&response), (401, Some(102)), "{}", response.body);
                return;
            }
            assert_certified(&response, &cert.counters, &format!("replay of {rn}"));
            assert_eq!(response.json["codeDEFDGI"], cert.code_def.as_str());
            assert_eq!(
                response.header("Idempotent-Replayed"),
                Some("true"),
                "replay of {rn}"
            );
        }
        Op::Conflict { pick, variant } => {
            let Some((rn, cert)) = Model::pick(&model.live, *pick) else {
                return;
            };
            let mut body = sale(&rn, *variant);
            if body == cert.body {
                body = sale(&rn, variant.wrapping_add(1) % 8);
            }
            let response = world.post(&body, false).await;
            let expected = if model.key_enabled {
                (409, 110)
            } else {
                (401, 102)
            };
            assert_eq!(
                outcome(&response),
                (expected.0, Some(expected.1)),
                "{}",
                response.body
            );
        }
        Op::Invalid { kind, pick } => {
            let rn = match pick.and_then(|p| Model::pick(&model.live, p)) {
                Some((rn, _)) => rn,
                None => model.fresh_rn(),
            };
            let body = invalid_body(*kind, &rn);
            let response = post_raw(
                world.gateway.addr,
                &world.key,
                Some("application/json"),
                &body,
            )
            .await;
            let expected = if model.key_enabled {
                (400, INVALID[*kind].1)
            } else {
                (401, 102)
            };
            assert_eq!(
                outcome(&response),
                (expected.0, Some(expected.1)),
                "{}: {}",
                INVALID[*kind].0,
                response.body
            );
        }
        Op::Lookup { pick, unknown } => {
            if *unknown {
                let response = world.lookup("NEVER-SEEN", &world.auditor).await;
                assert_eq!(outcome(&response), (404, Some(170)), "{}", response.body);
                return;
            }
            // A live rn is not found with the sandbox key, and the other way round.
            if let Some((rn, _)) = Model::pick(&model.live, *pick) {
                if !model.sandbox.contains_key(&rn) {
                    let response = world.lookup(&rn, &world.sandbox).await;
                    assert_eq!(outcome(&response), (404, Some(170)), "{}", response.body);
                }
            }
            if let Some((rn, _)) = Model::pick(&model.sandbox, *pick) {
                if !model.live.contains_key(&rn) {
                    let response = world.lookup(&rn, &world.auditor).await;
                    assert_eq!(outcome(&response), (404, Some(170)), "{}", response.body);
                }
            }
        }
        Op::CreditNote { pick } => {
            let sales: BTreeMap<String, Cert> = model
                .live
                .iter()
                .filter(|(_, c)| c.sale)
                .map(|(rn, c)| (rn.clone(), c.clone()))
                .collect();
            let rn = model.fresh_rn();
            match Model::pick(&sales, *pick) {
                Some((_, original)) => {
                    certify_new(world, model, credit_note(&rn, &original.code_def), false).await;
                }
                None => {
                    let body = credit_note(&rn, "ABCDEFGHIJKLMNOPQRSTUVWX");
                    let response = world.post(&body, false).await;
                    let expected = model.refused_before_device(false).unwrap_or((422, 140));
                    assert_eq!(
                        outcome(&response),
                        (expected.0, Some(expected.1)),
                        "{}",
                        response.body
                    );
                    model.fail(rn, body, false);
                }
            }
        }
        Op::SetKey { enabled } => {
            let id = world.key[9..21].to_string();
            world.cli_ok(&["key", if *enabled { "enable" } else { "disable" }, &id]);
            model.key_enabled = *enabled;
        }
        Op::LoseFinalizeReplies { times, variant } => {
            if !reaches_device(model) {
                return;
            }
            world
                .relay
                .drop_next_replies(FINALIZE, *times)
                .await
                .expect("relay");
            let rn = model.fresh_rn();
            let body = sale(&rn, *variant);
            let (counters, _) = model.live_device.next(body["type"].as_str().expect("type"));
            // 38h is never sent again after silence: its lost reply makes the outcome
            // unknown, settled from C1h at once (200) or later (503 152, then the same
            // request answers the stored result).
            let first = world.post(&body, false).await;
            let response = settled(world, &body, false, first).await;
            assert_certified(&response, &counters, &rn);
            assert_eq!(world.relay.armed().await.expect("relay"), 0, "rule used up");
            model.certified(&rn, &body, false, &response);
        }
        Op::LoseReplies {
            cmd,
            times,
            variant,
        } => {
            if !reaches_device(model) {
                return;
            }
            world
                .relay
                .drop_next_replies(*cmd, *times)
                .await
                .expect("relay");
            let rn = model.fresh_rn();
            let body = sale(&rn, *variant);
            let response = world.post(&body, false).await;
            if *times < 3 {
                let (counters, _) = model.live_device.next(body["type"].as_str().expect("type"));
                let response = settled(world, &body, false, response).await;
                assert_certified(&response, &counters, &rn);
                model.certified(&rn, &body, false, &response);
            } else {
                // Three tries lost before 38h: the link is down, nothing was committed.
                assert_eq!(outcome(&response), (503, Some(150)), "{}", response.body);
                assert!(response.header("Retry-After").is_some());
                model.fail(rn, body, true);
                world.wait_ready().await;
            }
            assert_eq!(world.relay.armed().await.expect("relay"), 0, "rule used up");
        }
        Op::Unplug { variant } => {
            world.relay.cut().await.expect("cut");
            wait_status(world.gateway.addr, false, Duration::from_secs(5)).await;
            let rn = model.fresh_rn();
            let body = sale(&rn, *variant);
            let response = world.post(&body, false).await;
            let expected = model.refused_before_device(false).unwrap_or((503, 150));
            assert_eq!(
                outcome(&response),
                (expected.0, Some(expected.1)),
                "{}",
                response.body
            );
            model.fail(rn, body, true);
            world.relay.restore().await.expect("restore");
            world.wait_ready().await;
        }
        Op::PowerCut { variant } => {
            if !reaches_device(model) {
                return;
            }
            world
                .restart_sim(FaultConfig {
                    power_cut_at_finalize: Some(1),
                    ..FaultConfig::default()
                })
                .await;
            let rn = model.fresh_rn();
            let body = sale(&rn, *variant);
            let (counters, _) = model.live_device.next(body["type"].as_str().expect("type"));
            let first = world.post(&body, false).await;
            assert!(
                matches!(outcome(&first), (503, Some(150 | 152))),
                "power cut after commit: {}",
                first.body
            );
            world.sim.wait_finished(Duration::from_secs(5)).await;
            world.restart_sim(FaultConfig::default()).await;
            let (response, _) = world.post_until_200(&body, Duration::from_secs(20)).await;
            assert_certified(&response, &counters, &rn);
            assert_eq!(response.header("Idempotent-Replayed"), Some("true"));
            model.certified(&rn, &body, false, &response);
        }
        Op::Refuse { variant } => {
            if !reaches_device(model) {
                return;
            }
            world
                .restart_sim(FaultConfig {
                    // The invoice's opening (C0h): the C1h before it is read as usual.
                    refuse_next: 1,
                    refuse_only: Some(0xC0),
                    ..FaultConfig::default()
                })
                .await;
            let rn = model.fresh_rn();
            let body = sale(&rn, *variant);
            let response = world.post(&body, false).await;
            assert_eq!(outcome(&response), (422, Some(140)), "{}", response.body);
            model.fail(rn, body, true);
        }
        Op::RetryFailed { pick } => {
            let retryable: Vec<(String, Value)> = model
                .failed
                .iter()
                .filter(|(_, _, retryable)| *retryable)
                .map(|(rn, body, _)| (rn.clone(), body.clone()))
                .collect();
            if retryable.is_empty() {
                return;
            }
            let (_, body) = retryable[pick % retryable.len()].clone();
            certify_new(world, model, body, false).await;
        }
        Op::RestartGateway => {
            assert!(
                world.gateway.terminate(),
                "gateway exits cleanly on SIGTERM"
            );
            world.gateway = Gateway::start(world.path(), &config_text(world.path()));
            world.gateway.wait_ready().await;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Checks.

/// After each operation: every certified rn looks up to the model's result, and the quota
/// used is the model's.
async fn check_state(world: &World, model: &Model) {
    for (map, key, env) in [
        (&model.live, &world.auditor, "live"),
        (&model.sandbox, &world.sandbox, "sandbox"),
    ] {
        for (rn, cert) in map {
            let response = world.lookup(rn, key).await;
            assert_eq!(
                (response.status, response.json["codeDEFDGI"].as_str()),
                (200, Some(cert.code_def.as_str())),
                "GET {rn} ({env}): {}",
                response.body
            );
            assert_eq!(
                response.json["counters"],
                cert.counters.as_str(),
                "GET {rn}"
            );
        }
    }
    for (rn, _, _) in &model.failed {
        if !model.live.contains_key(rn) {
            let response = world.lookup(rn, &world.auditor).await;
            assert_eq!(
                outcome(&response),
                (404, Some(170)),
                "{rn} failed, yet: {}",
                response.body
            );
        }
    }
    let text = world.cli_ok(&["org", "show", ORG, "--json"]);
    let shown: Value = serde_json::from_str(&text).expect("org show prints JSON");
    assert_eq!(
        (
            shown["quota"]["used"].as_u64(),
            shown["quota"]["quota"].as_u64()
        ),
        (Some(model.used()), Some(model.quota)),
        "quota: {}",
        shown["quota"]
    );
}

/// At the end of a case: the register holds exactly what the device committed, in its
/// order (rn, codeDEFDGI, counters), each rn once, and that is the model's live set.
fn check_register_and_device(world: &World, model: &Model) {
    let entries = exported_entries(world.path(), &config_path(world.path()));
    let register = register_triples(&entries);
    let committed = device_triples(&world.sim);
    assert_eq!(register, committed, "register vs device fiscal memory");
    let mut expected: Vec<(String, String, String)> = model
        .live
        .iter()
        .map(|(rn, c)| (rn.clone(), c.code_def.clone(), c.counters.clone()))
        .collect();
    let mut sorted = register.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected, "register vs model");
}

async fn run_case(case: &Case, seed: u64) -> Result<(), TestCaseError> {
    let mut world = World::start(case.quota, seed).await;
    let mut model = Model {
        quota: case.quota,
        key_enabled: true,
        ..Model::default()
    };
    for (i, op) in case.ops.iter().enumerate() {
        let started = Instant::now();
        let result = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(async {
            run_op(&mut world, &mut model, op).await;
            check_state(&world, &model).await;
        }))
        .await;
        world.trace_note(format!("{i}: {op:?} ({:?})", started.elapsed()));
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let log = world.gateway.log();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            return Err(TestCaseError::fail(format!(
                "operation {i} {op:?} failed: {message}\nops so far:\n{}\ngateway log (last \
                 lines, newest first):\n{}",
                world.trace.borrow().join("\n"),
                tail.join("\n")
            )));
        }
    }
    check_register_and_device(&world, &model);
    eprintln!(
        "case quota {}: {} live + {} sandbox certified, {} failed; {}",
        case.quota,
        model.live.len(),
        model.sandbox.len(),
        model.failed.len(),
        world.trace.borrow().join("; ")
    );
    Ok(())
}

#[test]
fn the_gateway_behaves_like_its_model_under_random_operations_and_faults() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let max_ops = std::env::var("MODEL_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = Config {
        cases,
        // Each case runs the real binary: shrink a little, not for ever.
        max_shrink_iters: 32,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let started = Instant::now();
    let seed = std::sync::atomic::AtomicU64::new(0);
    let result = runner.run(&case(max_ops), |case| {
        let seed = seed.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        runtime.block_on(run_case(&case, seed))
    });
    match result {
        Ok(()) => eprintln!(
            "{cases} cases of up to {max_ops} operations in {:.1} s",
            started.elapsed().as_secs_f64()
        ),
        Err(TestError::Fail(reason, case)) => {
            panic!("the gateway left its model: {reason}\nminimal case: {case:#?}")
        }
        Err(error) => panic!("{error}"),
    }
}
