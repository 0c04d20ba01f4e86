//! The DGI web API channel when something goes wrong between two calls: the real gateway
//! binary with one `kind = "edef"` device, against the bundled web API simulator on a real
//! socket. What an ERP and an administrator check: a request the DGI forgot before its
//! confirm is in doubt (never guessed), certifies nothing, is settled by an administrator
//! and certified once when sent again; a new
//! token written into the token file is used without a restart and never logged; requests
//! left pending on the DGI are cancelled at start-up when no invoice of the gateway owns
//! them, and confirmed when one does.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{add_org_with_key, post_invoice, Gateway};
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::Value;

/// The simulator's default token (`EdefOptions::default().token`).
const SIM_TOKEN: &str = "sim-token";

/// What the stray-request watch logs when it cancels one (`certify/web_api_channel/health.rs`).
const STRAY_CANCELLED: &str = "no invoice of this gateway owns";

async fn web_api(options: EdefOptions) -> RunningEdef {
    start_edef("127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("the web API simulator starts")
}

/// The configuration of a gateway whose only device is `dgi`, the web API at `api`, its
/// token in `dir/dgi.token` (written with `token`).
fn config_on(dir: &Path, api: &RunningEdef, token: &str) -> String {
    let token_file = dir.join("dgi.token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token_file:?}\nstatus_interval_secs = 1\n",
        state = dir.join("state"),
        url = api.url(),
    )
}

/// A gateway on `api` with `token`; org `acme` with a live key.
fn gateway_on(dir: &Path, api: &RunningEdef, token: &str) -> (Gateway, String) {
    let gateway = Gateway::start(dir, &config_on(dir, api, token));
    let key = add_org_with_key(dir, &gateway.config, "acme", "dgi", None);
    (gateway, key)
}

/// Waits (up to 30 s) until `done`.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..300 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within 30 s: {what}");
}

/// The register's entries of `rn` (`log export`), through the running gateway.
fn register_entries(gateway: &Gateway, rn: &str) -> Vec<Value> {
    tokio::task::block_in_place(|| common::exported_entries(&gateway.dir, &gateway.config))
        .into_iter()
        .filter(|entry| entry["rn"] == rn)
        .collect()
}

/// The quota `acme` used this year (`org show`).
fn quota_used(gateway: &Gateway) -> u64 {
    tokio::task::block_in_place(|| common::quota_used(&gateway.dir, &gateway.config, "acme"))
}

/// The invoices in doubt (`intent list --json`).
fn open_intents(gateway: &Gateway) -> Vec<Value> {
    let text = common::cli_ok(gateway, &["intent", "list", "--json"]);
    let listed: Value = serde_json::from_str(&text).expect("intent list prints JSON");
    listed.as_array().cloned().unwrap_or_default()
}

/// The lines of the gateway's log that say a request was cancelled as a stray and name `uid`.
fn stray_lines(gateway: &Gateway, uid: &str) -> usize {
    gateway
        .log()
        .lines()
        .filter(|line| line.contains(STRAY_CANCELLED) && line.contains(uid))
        .count()
}

/// Asks the DGI for an invoice straight through its API, as another program holding the same
/// token would: a request left pending that no invoice of the gateway owns. Returns its uid.
async fn stray_request(api: &RunningEdef, rn: &str) -> String {
    let body = serde_json::json!({
        "nif": "A1234567B", "rn": rn, "mode": "ttc", "type": "FV",
        "items": [{"type": "BIE", "name": "Ciment", "price": "600.00", "quantity": "2", "taxGroup": "B"}],
        "payment": [{"name": "ESPECES", "amount": "1200.00"}]
    });
    let bytes = serde_json::to_vec(&body).unwrap();
    let auth = format!("Bearer {SIM_TOKEN}");
    let answer = common::request(
        api.local_addr(),
        "POST",
        "/api/invoice",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        Some(&bytes),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json["uid"]
        .as_str()
        .expect("the DGI's answer has a uid")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_the_dgi_forgets_before_its_confirm_waits_for_an_administrator_and_is_certified_once(
) {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (gateway, key) = gateway_on(dir.path(), &api, SIM_TOKEN);
    gateway.wait_ready().await;

    // The DGI answers the request with its uid, then forgets it before the confirm comes, and
    // refuses the confirm ("missing or already finalized/cancelled"): from the API alone, an
    // expired request and a confirm repeated on the way look the same. Not guessed.
    api.faults().update(|f| f.expire_next_request = 1);
    let expired = post_invoice(gateway.addr, &key, &common::invoice("E-1")).await;
    let body = common::assert_error(&expired, 409, 111);
    let desc = body["errorDesc"].as_str().unwrap_or_default();
    assert!(desc.contains("administrateur"), "{desc}");

    // Nothing certified, nothing counted; the administrator sees why, with the uid to look up.
    assert_eq!(api.finalized_count(), 0, "nothing finalized on the DGI");
    assert!(api.pending_uids().is_empty(), "nothing left pending");
    assert_eq!(quota_used(&gateway), 0, "no quota used");
    assert!(register_entries(&gateway, "E-1").is_empty());
    let open = open_intents(&gateway);
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["rn"], "E-1");
    assert_eq!(open[0]["state"], "awaiting_administrator");
    let reason = open[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("no longer pending") && reason.contains("20"),
        "{reason}"
    );
    assert!(open[0]["channelRef"]
        .as_str()
        .is_some_and(|uid| !uid.is_empty()));

    // The ERP retries: still in doubt, nothing sent to the DGI.
    let again = post_invoice(gateway.addr, &key, &common::invoice("E-1")).await;
    common::assert_error(&again, 409, 111);
    assert_eq!(api.finalized_count(), 0);

    // The DGI's portal shows no such invoice: the administrator says so.
    let intent = open[0]["intent"].to_string();
    let out = gateway.cli(&[
        "intent",
        "resolve",
        &intent,
        "--not-certified",
        "--by",
        "Marie K.",
        "--note",
        "absente du portail de la DGI",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(open_intents(&gateway).is_empty());

    // The ERP sends the same invoice again: certified once.
    let retried = post_invoice(gateway.addr, &key, &common::invoice("E-1")).await;
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(retried.json["counters"], "1/1 FV");
    let finalized = api.finalized();
    assert_eq!(finalized.len(), 1, "the DGI finalized it once");
    assert_eq!(finalized[0].rn, "E-1");
    assert_eq!(retried.json["codeDEFDGI"], finalized[0].code_def.as_str());
    let entries = register_entries(&gateway, "E-1");
    assert_eq!(entries.len(), 1, "once in the register: {entries:?}");
    assert_eq!(
        entries[0]["security"]["codeDEFDGI"],
        finalized[0].code_def.as_str()
    );
    assert_eq!(quota_used(&gateway), 1);
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_written_into_the_token_file_is_used_without_a_restart_and_never_logged() {
    const RIGHT: &str = "tok-Right-7f3a9c";
    const WRONG: &str = "tok-Wrong-55e1d0b2c4";
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions {
        token: RIGHT.to_owned(),
        ..EdefOptions::default()
    })
    .await;
    let (gateway, key) = gateway_on(dir.path(), &api, RIGHT);
    gateway.wait_ready().await;
    let first = post_invoice(gateway.addr, &key, &common::invoice("T-1")).await;
    assert_eq!(first.status, 200, "{}", first.body);

    // A wrong token is installed: the invoice is refused as such, the status says so.
    let token_file = dir.path().join("dgi.token");
    std::fs::write(&token_file, format!("{WRONG}\n")).unwrap();
    let refused = post_invoice(gateway.addr, &key, &common::invoice("T-2")).await;
    let body = common::assert_error(&refused, 503, 155);
    // In French from end to end (the file's path and the system's words stay in the log).
    let desc = body["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.contains("la DGI a refusé le jeton de l'e-MCF (HTTP 401)") && !desc.contains("token"),
        "{desc}"
    );
    // A token to install: a person must act, a retry cannot help.
    assert!(
        refused.header("retry-after").is_none(),
        "{:?}",
        refused.headers
    );
    common::wait_status(gateway.addr, false, Duration::from_secs(30)).await;
    let metrics = common::get(gateway.addr, "/metrics", None).await.body;
    assert!(
        metrics.contains("emcf_device_not_ready{device=\"dgi\",reason=\"token_rejected\"} 1"),
        "{metrics}"
    );
    let log = gateway.log();
    assert!(
        log.lines()
            .any(|line| line.contains("does not accept the token") && line.contains("device=dgi")),
        "an error line naming the device: {log}"
    );
    assert_eq!(api.finalized_count(), 1, "nothing certified with it");

    // The right token is written back: certifying again, no restart.
    std::fs::write(&token_file, format!("{RIGHT}\n")).unwrap();
    common::wait_status(gateway.addr, true, Duration::from_secs(30)).await;
    let again = post_invoice(gateway.addr, &key, &common::invoice("T-2")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json["counters"], "2/2 FV");
    assert_eq!(api.finalized_count(), 2);

    let log = gateway.log();
    assert!(!log.contains(RIGHT), "the token is never logged");
    assert!(!log.contains(WRONG), "nor a rejected one");
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_requests_are_cancelled_at_start_up_only_when_no_invoice_of_the_gateway_owns_them()
{
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;

    // Two requests left pending on the DGI before this gateway ever ran.
    let strays = [
        stray_request(&api, "X-1").await,
        stray_request(&api, "X-2").await,
    ];
    assert_eq!(api.pending_uids(), strays);
    let (mut gateway, key) = gateway_on(dir.path(), &api, SIM_TOKEN);
    wait_until("the strays are cancelled", || api.pending_uids().is_empty()).await;
    for uid in &strays {
        assert_eq!(stray_lines(&gateway, uid), 1, "{uid}: {}", gateway.log());
    }
    let sale = post_invoice(gateway.addr, &key, &common::invoice("S-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let rns: Vec<String> = api.finalized().into_iter().map(|f| f.rn).collect();
    assert_eq!(rns, ["S-1"], "no stray was ever confirmed");
    assert!(gateway.terminate(), "gateway exits cleanly on SIGTERM");

    // The gateway dies after journaling its intent, before the confirm: that request is
    // pending on the DGI and owned by the journal.
    let config = config_on(dir.path(), &api, SIM_TOKEN);
    let mut crashing =
        Gateway::start_with_env(dir.path(), &config, &[("EMCF_FAILPOINTS", "after_intent")]);
    let lost = common::try_post_invoice(crashing.addr, &key, &common::invoice("O-1")).await;
    assert!(
        lost.is_none(),
        "the gateway aborted before answering: {lost:?}"
    );
    crashing.kill9();
    let owned = api.pending_uids();
    assert_eq!(owned.len(), 1, "the intent's request is pending");
    assert_eq!(api.finalized_count(), 1);

    // At restart it is confirmed and journaled, not cancelled.
    let gateway = Gateway::start(dir.path(), &config);
    wait_until("the owned request is confirmed", || {
        api.finalized().iter().any(|f| f.rn == "O-1")
    })
    .await;
    gateway.wait_ready().await;
    assert!(api.pending_uids().is_empty());
    assert_eq!(stray_lines(&gateway, &owned[0]), 0, "{}", gateway.log());
    assert!(
        gateway
            .log()
            .contains("still pending on the DGI: confirmed again and journaled"),
        "{}",
        gateway.log()
    );
    let code = api
        .finalized()
        .into_iter()
        .find(|f| f.rn == "O-1")
        .map(|f| f.code_def)
        .unwrap_or_default();
    let entries = register_entries(&gateway, "O-1");
    assert_eq!(entries.len(), 1, "once in the register: {entries:?}");
    assert_eq!(entries[0]["security"]["codeDEFDGI"], code.as_str());

    // The ERP's retry gets the stored answer; nothing is sent to the DGI again.
    let replay = post_invoice(gateway.addr, &key, &common::invoice("O-1")).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.json["codeDEFDGI"], code.as_str());
    assert_eq!(api.finalized_count(), 2);
    assert!(open_intents(&gateway).is_empty());
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_refused_for_a_full_dgi_window_is_sent_again_and_every_invoice_is_certified_once()
{
    let dir = tempfile::tempdir().unwrap();
    // The DGI takes one pending request at a time and answers after 50 ms; the gateway's
    // window is 10: the DGI refuses the others with error 1 (nothing created) until the
    // request before them is confirmed.
    let mut options = EdefOptions {
        pending_limit: 1,
        ..EdefOptions::default()
    };
    options.faults.latency_ms = 50;
    let api = web_api(options).await;
    let (gateway, key) = gateway_on(dir.path(), &api, SIM_TOKEN);
    gateway.wait_ready().await;

    let posts = (1..=3).map(|n| {
        let key = key.clone();
        let addr = gateway.addr;
        tokio::spawn(
            async move { post_invoice(addr, &key, &common::invoice(&format!("W-{n}"))).await },
        )
    });
    for answer in futures::future::join_all(posts).await {
        let answer = answer.unwrap();
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    let mut rns: Vec<String> = api.finalized().into_iter().map(|f| f.rn).collect();
    rns.sort();
    assert_eq!(rns, ["W-1", "W-2", "W-3"], "each finalized once");
    assert!(api.pending_uids().is_empty());
    // Every web API call is timed, as the box's commands are.
    let metrics = common::get(gateway.addr, "/metrics", None).await.body;
    for call in ["request", "confirm"] {
        assert!(
            metrics.contains(&format!(
                "emcf_device_round_trip_seconds_count{{device=\"dgi\",command=\"{call}\"}}"
            )),
            "{metrics}"
        );
    }
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invoice_in_doubt_is_settled_on_the_dashboard_by_its_own_organization_only() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    // Another organization, on an e-MCF of its own (one NIF, one organization per device).
    let second = web_api(EdefOptions::default()).await;
    let config = format!(
        "{}\n[[devices]]\nname = \"dgi2\"\nkind = \"edef\"\nurl = {:?}\ntoken_file = {:?}\nstatus_interval_secs = 1\n",
        config_on(dir.path(), &api, SIM_TOKEN),
        second.url(),
        dir.path().join("dgi.token"),
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key = add_org_with_key(dir.path(), &gateway.config, "acme", "dgi", None);
    let _other_key = add_org_with_key(dir.path(), &gateway.config, "beta", "dgi2", None);
    gateway.wait_ready().await;
    api.faults().update(|f| f.drop_next_confirm_answer = 1);
    let lost = post_invoice(gateway.addr, &key, &common::invoice("D-1")).await;
    common::assert_error(&lost, 409, 111);
    let intent = open_intents(&gateway)[0]["intent"].to_string();

    // The shop's manager sees it on the overview, with a form to settle it.
    let token = common::issue_dashboard_token(&gateway, "acme");
    let (session, csrf) = common::dashboard_sign_in(gateway.addr, &token).await;
    let cookie = format!("emcf_session={session}");
    let overview = common::dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(
        overview.body.contains("id=\"in-doubt\""),
        "{}",
        overview.body
    );
    assert!(
        overview.body.contains("Régler la facture n° D-1"),
        "{}",
        overview.body
    );
    // The alerts raise their banner too (evaluated within a second of the answer).
    let mut banner = false;
    for _ in 0..100 {
        let page = common::dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
        banner = page.body.contains("id=\"alert-in_doubt\"");
        if banner {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(banner, "no in-doubt banner within 10 s");

    // Another organization cannot name it.
    let beta = common::issue_dashboard_token(&gateway, "beta");
    let (beta_session, beta_csrf) = common::dashboard_sign_in(gateway.addr, &beta).await;
    let beta_cookie = format!("emcf_session={beta_session}");
    let settle = |csrf: &str, outcome: &str, counters: &str| {
        vec![
            ("csrf".to_owned(), csrf.to_owned()),
            ("intent".to_owned(), intent.clone()),
            ("outcome".to_owned(), outcome.to_owned()),
            ("code_def".to_owned(), String::new()),
            ("qr_code".to_owned(), "DGI-RDC;CD01000001-1;X".to_owned()),
            ("counters".to_owned(), counters.to_owned()),
            ("nim".to_owned(), "CD01000001-1".to_owned()),
            ("date_time".to_owned(), "2026-11-23T10:00".to_owned()),
            ("by".to_owned(), "Marie K.".to_owned()),
            ("note".to_owned(), "lu sur le portail".to_owned()),
        ]
    };
    let post = |cookie: String, form: Vec<(String, String)>| async move {
        let pairs: Vec<(&str, &str)> = form.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        common::dashboard_post(
            gateway.addr,
            Some(&cookie),
            "/dashboard/in-doubt/resolve",
            &pairs,
            &[],
        )
        .await
    };
    let foreign = post(beta_cookie, settle(&beta_csrf, "not_certified", "")).await;
    assert_eq!(foreign.status, 400, "{}", foreign.body);
    assert!(
        foreign
            .body
            .contains("pas en doute pour votre organisation"),
        "{}",
        foreign.body
    );

    // Elements typed wrong: said, nothing settled.
    let certified = api.finalized().into_iter().find(|f| f.rn == "D-1").unwrap();
    let mut form = settle(&csrf, "certified", "1-1 FV");
    form[3].1 = certified.code_def.clone();
    form[4].1 = format!(
        "DGI-RDC;CD01000001-1;{};{};20261123100000",
        certified.code_def,
        common::SIM_NIF
    );
    let wrong = post(cookie.clone(), form.clone()).await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.body.contains("12/345 FV"), "{}", wrong.body);
    assert_eq!(open_intents(&gateway).len(), 1);

    // Right: settled, journaled with the name and where it came from; the ERP's retry answers.
    form[5].1 = certified.counters.clone();
    let done = post(cookie.clone(), form).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(
        done.header("location"),
        Some("/dashboard/?settled=certified")
    );
    let after = common::dashboard_get(
        gateway.addr,
        Some(&session),
        "/dashboard/?settled=certified",
    )
    .await;
    assert!(
        after.body.contains("réglée comme certifiée"),
        "{}",
        after.body
    );
    assert!(!after.body.contains("id=\"in-doubt\""), "{}", after.body);
    // The banners agree: "settled", and no "an invoice is in doubt" any more.
    assert!(
        !after.body.contains("id=\"alert-in_doubt\""),
        "{}",
        after.body
    );
    assert!(open_intents(&gateway).is_empty());
    let retry = post_invoice(gateway.addr, &key, &common::invoice("D-1")).await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.json["codeDEFDGI"], certified.code_def.as_str());
    let entries = register_entries(&gateway, "D-1");
    assert_eq!(entries.len(), 1);
    let source = entries[0]["source"].as_str().unwrap_or_default();
    assert!(
        source.contains("Marie K.") && source.contains("dashboard of acme"),
        "{source}"
    );
    assert_eq!(api.finalized_count(), 1, "nothing certified twice");
    drop(gateway);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_organization_whose_nif_is_not_the_e_mcf_s_is_refused_before_anything_reaches_the_dgi() {
    let dir = tempfile::tempdir().unwrap();
    let api = web_api(EdefOptions::default()).await;
    let (mut gateway, key) = gateway_on(dir.path(), &api, SIM_TOKEN);
    gateway.wait_ready().await;
    let ok = post_invoice(gateway.addr, &key, &common::invoice("N-1")).await;
    assert_eq!(ok.status, 200, "{}", ok.body);

    // Bound to the same e-MCF by mistake, while the service was stopped (with it running,
    // `org add` refuses a NIF the e-MCF is not for): another taxpayer's NIF.
    assert!(gateway.terminate(), "the gateway stops cleanly");
    let config = gateway.config.clone();
    let other = common::add_org_with_key_nif(dir.path(), &config, "other", "dgi", "B7654321C");
    let gateway = Gateway::start(dir.path(), &std::fs::read_to_string(&config).unwrap());
    common::wait_status(gateway.addr, false, Duration::from_secs(10)).await;

    let refused = post_invoice(gateway.addr, &other, &common::invoice("N-2")).await;
    let body = common::assert_error(&refused, 503, 153);
    let desc = body["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.contains("B7654321C") && desc.contains("A1234567B"),
        "{desc}"
    );
    // The binding must be fixed by a person: no Retry-After for the ERP to loop on.
    assert!(
        refused.header("retry-after").is_none(),
        "{:?}",
        refused.headers
    );
    assert_eq!(api.finalized_count(), 1, "nothing certified for it");
    assert!(api.pending_uids().is_empty(), "nothing requested for it");
    drop(gateway);
    api.shutdown().await;
}
