//! The DGI web API channel end to end: the real gateway binary configured with one
//! `kind = "edef"` device, against the bundled web API simulator on a real socket (HTTP, and
//! HTTPS with the simulator's own certificate). What an ERP and an administrator check: every
//! answer, the DGI's elements kept as sent, no invoice certified twice when an answer is lost,
//! the invoice in doubt shown and settled by a person, the token problem said as such.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{add_org_with_key, nbsp, post_invoice, Gateway, SIM_NIF};
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::{json, Value};

pub(crate) async fn web_api(options: EdefOptions) -> RunningEdef {
    start_edef("127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("the web API simulator starts")
}

/// A gateway whose only device is `dgi`, the web API at `api`; org `acme` with a live key.
pub(crate) fn gateway_on(dir: &Path, api: &RunningEdef, extra: &str) -> (Gateway, String) {
    let token = dir.join("dgi.token");
    std::fs::write(&token, "sim-token\n").unwrap();
    let mut config = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token:?}\nstatus_interval_secs = 1\n{extra}",
        state = dir.join("state"),
        url = api.url(),
    );
    if let Some(pem) = api.ca_pem() {
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, pem).unwrap();
        config.push_str(&format!("ca_file = {ca:?}\n"));
    }
    let gateway = Gateway::start(dir, &config);
    let key = add_org_with_key(dir, &gateway.config, "acme", "dgi", None);
    (gateway, key)
}

/// `intent resolve INTENT --certified` with the elements read on the DGI's portal, by
/// Marie K. on 2026-11-23 at 10:00, and an optional note.
fn resolve_certified(
    gateway: &Gateway,
    intent: &str,
    (code_def, qr_code, counters, nim): (&str, &str, &str, &str),
    note: Option<&str>,
) -> std::process::Output {
    let mut args = vec![
        "intent",
        "resolve",
        intent,
        "--certified",
        "--code-def",
        code_def,
        "--qr-code",
        qr_code,
        "--counters",
        counters,
        "--nim",
        nim,
        "--date-time",
        "2026-11-23T10:00:00",
        "--by",
        "Marie K.",
    ];
    if let Some(note) = note {
        args.extend(["--note", note]);
    }
    tokio::task::block_in_place(|| gateway.cli(&args))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_kind_is_certified_through_the_web_api_with_the_dgi_elements_as_sent() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, key) = gateway_on(dir.path(), &api, "");

    let sale = post_invoice(gateway.addr, &key, &common::invoice("W-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    // Monitoring sees a web API device (public status, no organization named).
    let status = common::get(gateway.addr, "/api/v1/status", None).await;
    let devices = status.json["devices"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        devices
            .iter()
            .any(|d| d["kind"] == "web_api" && d["ready"] == true),
        "{}",
        status.body
    );
    assert!(!status.body.contains("acme"), "{}", status.body);
    let body = &sale.json;
    assert_eq!(body["counters"], "1/1 FV");
    assert_eq!(body["nim"], "CD01000001-1");
    let code = body["codeDEFDGI"].as_str().unwrap().to_string();
    assert_eq!(code.len(), 24);
    let finalized = api.finalized();
    assert_eq!(finalized.len(), 1);
    assert!(body["qrCode"]
        .as_str()
        .unwrap()
        .starts_with("DGI-RDC;CD01000001-1;"));
    assert_eq!(body["total"], "1200.00", "{body}");

    // The same request again: the stored answer, nothing sent to the DGI.
    let again = post_invoice(gateway.addr, &key, &common::invoice("W-1")).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json["codeDEFDGI"], code.as_str());
    assert_eq!(api.finalized_count(), 1);

    // A USD invoice in ht mode, and a credit note of the first sale.
    let usd = post_invoice(gateway.addr, &key, &common::usd_invoice("W-2")).await;
    assert_eq!(usd.status, 200, "{}", usd.body);
    assert_eq!(usd.json["counters"], "2/2 FV");
    let note = post_invoice(
        gateway.addr,
        &key,
        &common::credit_note_of("W-3", &code, "FA"),
    )
    .await;
    assert_eq!(note.status, 200, "{}", note.body);
    assert_eq!(note.json["counters"], "1/3 FA");
    assert_eq!(api.finalized_count(), 3);

    // The other kinds: FT, EV, ET, and an EA of the EV.
    let mut export_code = String::new();
    for (i, kind) in ["FT", "EV", "ET"].iter().enumerate() {
        let mut invoice = common::invoice(&format!("K-{i}"));
        invoice["type"] = json!(kind);
        let answer = post_invoice(gateway.addr, &key, &invoice).await;
        assert_eq!(answer.status, 200, "{kind}: {}", answer.body);
        assert!(
            answer.json["counters"].as_str().unwrap().ends_with(kind),
            "{}",
            answer.body
        );
        if *kind == "EV" {
            export_code = answer.json["codeDEFDGI"].as_str().unwrap().to_string();
        }
    }
    let export_note = common::credit_note_of("K-9", &export_code, "EA");
    let answer = post_invoice(gateway.addr, &key, &export_note).await;
    assert_eq!(answer.status, 200, "EA: {}", answer.body);
    assert_eq!(api.finalized_count(), 7);

    // A credit note of an invoice the DGI never certified: its refusal, in its words.
    let bogus = post_invoice(
        gateway.addr,
        &key,
        &common::credit_note_of("W-4", "ABCDEFGHIJKLMNOPQRSTUVWX", "FA"),
    )
    .await;
    assert_eq!(bogus.status, 422, "{}", bogus.body);
    assert_eq!(bogus.json["errorCode"], 145);
    assert!(bogus.json["errorDesc"]
        .as_str()
        .unwrap()
        .contains("erreur DGI 11"));
    assert!(api.pending_uids().is_empty(), "nothing left pending");

    // The register keeps the DGI's dateTime exactly as sent.
    let shown = common::cli_ok(&gateway, &["log", "show", "1", "--json"]);
    let shown: Value = serde_json::from_str(&shown).unwrap_or(Value::Null);
    let as_sent = shown["security"]["dateTimeAsSent"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        as_sent.contains('/'),
        "the Benin form dd/MM/yyyy, kept: {shown}"
    );
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_confirm_answer_is_never_certified_twice_and_an_administrator_settles_it() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, key) = gateway_on(dir.path(), &api, "");
    api.faults().update(|f| f.drop_next_confirm_answer = 1);

    let lost = post_invoice(gateway.addr, &key, &common::invoice("L-1")).await;
    assert_eq!(lost.status, 409, "{}", lost.body);
    assert_eq!(lost.json["errorCode"], 111);
    assert!(lost.json["errorDesc"]
        .as_str()
        .unwrap()
        .contains("Un administrateur doit régler son sort"));
    assert_eq!(api.finalized_count(), 1, "the DGI certified it once");

    // The ERP retries: still 409, nothing sent again.
    let retry = post_invoice(gateway.addr, &key, &common::invoice("L-1")).await;
    assert_eq!(retry.status, 409);
    assert_eq!(api.finalized_count(), 1);

    // Other invoices go on.
    let other = post_invoice(gateway.addr, &key, &common::invoice("L-2")).await;
    assert_eq!(other.status, 200, "{}", other.body);

    // The administrator sees it, reads the DGI's portal, and settles it.
    let listed = common::cli_ok(&gateway, &["intent", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let open = &listed[0];
    assert_eq!(open["rn"], "L-1");
    assert_eq!(open["state"], "awaiting_administrator");
    // For a person, a table in the installation's language (French).
    let table = common::cli_ok(&gateway, &["intent", "list"]);
    assert!(
        table.contains("attend un administrateur") && table.contains("L-1"),
        "{table}"
    );
    let metrics = common::get(gateway.addr, "/metrics", None).await.body;
    assert!(
        metrics.contains("emcf_invoices_in_doubt{device=\"dgi\"} 1"),
        "{metrics}"
    );
    let certified = api.finalized().into_iter().find(|f| f.rn == "L-1").unwrap();
    let intent = open["intent"].to_string();
    // What is typed becomes the register's security elements: each is checked against the
    // form the web API gives, and a wrong one is named with the form expected; nothing is
    // settled.
    let good_qr = format!(
        "DGI-RDC;CD01000001-1;{};{SIM_NIF};20261123100000",
        certified.code_def
    );
    let short_code = &certified.code_def[..23];
    let other_nim_qr = good_qr.replace("CD01000001-1", "CD01000002-1");
    for (code_def, qr_code, counters, nim, field, said) in [
        (
            short_code,
            good_qr.as_str(),
            certified.counters.as_str(),
            "CD01000001-1",
            "codeDEFDGI",
            "(23 caractères) : un codeDEFDGI fait 24 caractères",
        ),
        (
            certified.code_def.as_str(),
            good_qr.as_str(),
            certified.counters.as_str(),
            "CD0100001",
            "nim",
            "« CD01002923-1 »",
        ),
        (
            certified.code_def.as_str(),
            good_qr.as_str(),
            "1/1 FA",
            "CD01000001-1",
            "compteurs",
            "« FC/TC FV »",
        ),
        (
            certified.code_def.as_str(),
            other_nim_qr.as_str(),
            certified.counters.as_str(),
            "CD01000001-1",
            "qrCode",
            "son NIM « CD01000002-1 » n'est pas le NIM saisi",
        ),
    ] {
        let out = resolve_certified(&gateway, &intent, (code_def, qr_code, counters, nim), None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{field}: settled with a wrong element"
        );
        assert!(
            stderr.contains(field) && stderr.contains(&nbsp(said)),
            "{field}: {stderr}"
        );
        let listed = common::cli_ok(&gateway, &["intent", "list", "--json"]);
        assert!(
            listed.contains("awaiting_administrator"),
            "{field}: {listed}"
        );
    }
    let out = resolve_certified(
        &gateway,
        &intent,
        (
            &certified.code_def,
            &good_qr,
            &certified.counters,
            "CD01000001-1",
        ),
        Some("read on the DGI portal"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("réglée comme certifiée"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let settled = post_invoice(gateway.addr, &key, &common::invoice("L-1")).await;
    assert_eq!(settled.status, 200, "{}", settled.body);
    assert_eq!(settled.json["codeDEFDGI"], certified.code_def.as_str());
    assert_eq!(api.finalized_count(), 2, "no invoice certified twice");
    drop(gateway);
    api.shutdown().await;
}

/// A credit note whose confirm answer was lost waits for an administrator: until then it may
/// be certified, so it keeps its share of the original (a second credit note of the whole is
/// refused by the gateway, 180, nothing sent), and it cannot be settled with its original's
/// codeDEFDGI.
#[tokio::test(flavor = "multi_thread")]
async fn a_credit_note_in_doubt_keeps_its_share_of_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, key) = gateway_on(dir.path(), &api, "");
    let sale = post_invoice(gateway.addr, &key, &common::invoice("S-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let original = sale.json["codeDEFDGI"].as_str().unwrap().to_owned();

    api.faults().update(|f| f.drop_next_confirm_answer = 1);
    let lost = post_invoice(
        gateway.addr,
        &key,
        &common::credit_note_of("S-AV-1", &original, "FA"),
    )
    .await;
    assert_eq!(lost.status, 409, "{}", lost.body);
    assert_eq!(lost.json["errorCode"], 111);
    assert_eq!(
        api.finalized_count(),
        2,
        "the DGI certified the credit note"
    );

    // The whole of the original again: refused by the gateway, before the DGI.
    let second = post_invoice(
        gateway.addr,
        &key,
        &common::credit_note_of("S-AV-2", &original, "FA"),
    )
    .await;
    assert_eq!(second.status, 422, "{}", second.body);
    assert_eq!(second.json["errorCode"], 180, "{}", second.body);
    assert_eq!(api.finalized_count(), 2, "nothing sent");

    // Settled with the original's elements (pasted from the wrong line): refused, naming the
    // field; with its own: settled.
    let listed = common::cli_ok(&gateway, &["intent", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let intent = listed[0]["intent"].to_string();
    let note = api
        .finalized()
        .into_iter()
        .find(|f| f.rn == "S-AV-1")
        .unwrap();
    let resolve = |code: &str| {
        let qr_code = format!("DGI-RDC;CD01000001-1;{code};{SIM_NIF};20261123100000");
        let elements = (
            code,
            qr_code.as_str(),
            note.counters.as_str(),
            "CD01000001-1",
        );
        resolve_certified(&gateway, &intent, elements, None)
    };
    let out = resolve(&original);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "settled with the original's code");
    assert!(
        stderr.contains("codeDEFDGI")
            && stderr.contains(&nbsp("déjà celui d'une facture du registre")),
        "{stderr}"
    );
    let out = resolve(&note.code_def);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let retried = post_invoice(
        gateway.addr,
        &key,
        &common::credit_note_of("S-AV-1", &original, "FA"),
    )
    .await;
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(retried.json["codeDEFDGI"], note.code_def.as_str());
    assert_eq!(api.finalized_count(), 2, "nothing certified twice");
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_token_is_said_as_such_and_https_with_the_given_ca_works() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions {
        tls: true,
        ..EdefOptions::default()
    })
    .await;
    assert!(api.url().starts_with("https://"));
    let (gateway, key) = gateway_on(dir.path(), &api, "");
    let first = post_invoice(gateway.addr, &key, &common::invoice("T-1")).await;
    assert_eq!(first.status, 200, "{}", first.body);

    api.faults().update(|f| f.token_expired = true);
    let refused = post_invoice(gateway.addr, &key, &common::invoice("T-2")).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json["errorCode"], 155);
    // A token to install: a person must act, no Retry-After for an ERP to loop on.
    assert!(
        refused.header("retry-after").is_none(),
        "{:?}",
        refused.headers
    );
    let log = gateway.log();
    assert!(
        log.contains("does not accept the token") && log.contains("dgi"),
        "{log}"
    );
    assert!(!log.contains("sim-token"), "the token is never logged");

    // A new token is installed: the gateway certifies again without a restart.
    api.faults().update(|f| f.token_expired = false);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let again = post_invoice(gateway.addr, &key, &common::invoice("T-2")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    drop(gateway);
    api.shutdown().await;
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within 10 s: {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn when_the_network_lies_nothing_is_certified_twice_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, key) = gateway_on(dir.path(), &api, "");
    let warm = post_invoice(gateway.addr, &key, &common::invoice("N-0")).await;
    assert_eq!(warm.status, 200, "{}", warm.body);

    // A 5xx to the confirm (sent, not done): the uid is still pending, confirmed again.
    api.faults().update(|f| f.fail_next_confirm_5xx = 1);
    let again = post_invoice(gateway.addr, &key, &common::invoice("N-1")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(api.finalized_count(), 2);

    // A 5xx or a reset to the request: nothing certified, 503 with Retry-After, then a retry.
    for fault in ["5xx", "reset"] {
        api.faults().update(|f| match fault {
            "5xx" => f.fail_next_5xx = 1,
            _ => f.reset_next = 1,
        });
        let failed = post_invoice(gateway.addr, &key, &common::invoice("N-2")).await;
        assert_eq!(failed.status, 503, "{fault}: {}", failed.body);
        assert_eq!(failed.json["errorCode"], 150);
        assert!(failed.header("retry-after").is_some());
        assert_eq!(api.finalized_count(), 2, "{fault}");
    }

    // The request's answer lost: the DGI keeps a pending request nobody owns; the gateway
    // cancels it (it eats the window), and the retry certifies once.
    api.faults().update(|f| f.drop_next_request_answer = 1);
    let lost = post_invoice(gateway.addr, &key, &common::invoice("N-2")).await;
    assert_eq!(lost.status, 503, "{}", lost.body);
    assert_eq!(api.pending_uids().len(), 1);
    wait_until("the stray request is cancelled", || {
        api.pending_uids().is_empty()
    })
    .await;
    assert!(gateway.log().contains("no invoice of this gateway owns"));
    let retried = post_invoice(gateway.addr, &key, &common::invoice("N-2")).await;
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(api.finalized_count(), 3);

    // The register holds each once, and the DGI finalized each once.
    let rns: Vec<String> = api.finalized().into_iter().map(|f| f.rn).collect();
    assert_eq!(rns, ["N-0", "N-1", "N-2"]);
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sandbox_keys_of_a_web_api_organization_certify_on_the_bundled_web_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, _live) = gateway_on(dir.path(), &api, "");
    let test_key = common::issue_key(dir.path(), &gateway.config, "acme", true);
    let answer = post_invoice(gateway.addr, &test_key, &common::invoice("S-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json["counters"], "1/1 FV");
    assert!(answer.json["qrCode"].as_str().unwrap().contains(SIM_NIF));
    assert_eq!(
        api.finalized_count(),
        0,
        "nothing reached the configured web API"
    );
    assert!(gateway.log().contains("sandbox web API simulator started"));
    let token =
        std::fs::read_to_string(dir.path().join("state/simulator/sandbox-acme.token")).unwrap();
    assert!(
        !gateway.log().contains(token.trim()),
        "the sandbox token is never logged"
    );
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sandbox_keys_certify_through_a_configured_sandbox_url_when_one_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    // The DGI's test base, with the test e-MCF's own token.
    let test_base = web_api(EdefOptions {
        token: "test-base-token".into(),
        ..EdefOptions::default()
    })
    .await;
    let sandbox_token = dir.path().join("dgi-test.token");
    std::fs::write(&sandbox_token, "test-base-token\n").unwrap();
    let extra = format!(
        "sandbox_url = {:?}\nsandbox_token_file = {sandbox_token:?}\n",
        test_base.url()
    );
    let (gateway, live) = gateway_on(dir.path(), &api, &extra);
    let test_key = common::issue_key(dir.path(), &gateway.config, "acme", true);
    let answer = post_invoice(gateway.addr, &test_key, &common::invoice("S-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(test_base.finalized_count(), 1, "certified on the test base");
    assert_eq!(api.finalized_count(), 0, "not on the production API");
    assert!(gateway
        .log()
        .contains("sandbox certifies through the configured sandbox web API"));
    assert!(!gateway.log().contains("sandbox web API simulator started"));
    // Live keys still certify on the production API.
    let live_answer = post_invoice(gateway.addr, &live, &common::invoice("P-1")).await;
    assert_eq!(live_answer.status, 200, "{}", live_answer.body);
    assert_eq!(api.finalized_count(), 1);
    assert!(!gateway.log().contains("test-base-token"));
    drop(gateway);
    api.shutdown().await;
    test_base.shutdown().await;
}
