//! Two replicas over one PostgreSQL register and the web API simulator (issue 29;
//! `src/certify/replica.rs`): a replica killed between its intent and its confirm leaves its
//! invoice open; the other, leading, takes it over once the dead replica's lease ran out and
//! the grace (the longest call to the DGI) passed, confirms the request still pending at the
//! DGI and journals it. The client's retry on the live replica gets that certification; the
//! dead replica's state directory started again certifies nothing more: once at the DGI, once
//! in the register.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::pg::{PgServer, SUPERUSER};
use common::{add_org_with_key, post_invoice, Gateway};
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::Value;

/// One replica's configuration: its own state directory, the shared register, the web API
/// with short timeouts (so that the grace before a takeover is short: 1 + 2 + 5 s).
fn replica_config(dir: &Path, api: &RunningEdef, url: &str) -> String {
    let token_file = dir.join("dgi.token");
    std::fs::write(&token_file, "sim-token\n").unwrap();
    format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"edef\"\nurl = {api:?}\ntoken_file = {token_file:?}\nstatus_interval_secs = 1\nconnect_timeout_ms = 1000\nrequest_timeout_ms = 2000\n\n[store]\nurl = {url:?}\n",
        state = dir.join("state"),
        api = api.url(),
    )
}

fn entries_of(gateway: &Gateway, rn: &str) -> Vec<Value> {
    tokio::task::block_in_place(|| common::exported_entries(&gateway.dir, &gateway.config))
        .into_iter()
        .filter(|entry| entry["rn"] == rn)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_before_its_confirm_leaves_the_invoice_to_the_other_certified_once() {
    let Some(server) = PgServer::init("replicas over PostgreSQL") else {
        return;
    };
    server.sql("postgres", "CREATE DATABASE replicas");
    let url = server.socket_url(SUPERUSER, "replicas");
    let api = start_edef("127.0.0.1:0".parse().unwrap(), EdefOptions::default())
        .await
        .expect("the web API simulator starts");
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config_a = replica_config(dir_a.path(), &api, &url);
    let config_b = replica_config(dir_b.path(), &api, &url);

    // B first (it leads), then A, which dies after journaling its intent.
    let b = Gateway::start(dir_b.path(), &config_b);
    let key = add_org_with_key(dir_b.path(), &b.config, "acme", "dgi", None);
    let mut a = Gateway::start_with_env(
        dir_a.path(),
        &config_a,
        &[("EMCF_FAILPOINTS", "after_intent")],
    );
    let lost = common::try_post_invoice(a.addr, &key, &common::invoice("R-1")).await;
    assert!(lost.is_none(), "A aborted before answering: {lost:?}");
    a.kill9();
    assert_eq!(
        api.pending_uids().len(),
        1,
        "A's request is pending at the DGI"
    );

    // The ERP retries on B: in flight (A's) until B took it over and confirmed it, then the
    // certification; the DGI finalized it once.
    let started = Instant::now();
    let answer = loop {
        let answer = post_invoice(b.addr, &key, &common::invoice("R-1")).await;
        if answer.status == 200 {
            break answer;
        }
        assert!(
            answer.status == 409 || answer.status == 503,
            "{} {}",
            answer.status,
            answer.body
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not taken over within 60 s: {}",
            b.log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(
        b.log()
            .contains("open intents of a replica gone are now this replica's"),
        "{}",
        b.log()
    );
    let finalized: Vec<_> = api
        .finalized()
        .into_iter()
        .filter(|f| f.rn == "R-1")
        .collect();
    assert_eq!(finalized.len(), 1, "{finalized:?}");
    assert_eq!(answer.json["codeDEFDGI"], finalized[0].code_def.as_str());
    assert!(api.pending_uids().is_empty());

    // A's state directory started again: nothing left to settle, nothing sent again.
    let a = Gateway::start(dir_a.path(), &config_a);
    a.wait_ready().await;
    let again = post_invoice(a.addr, &key, &common::invoice("R-1")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json["codeDEFDGI"], finalized[0].code_def.as_str());
    assert_eq!(entries_of(&b, "R-1").len(), 1);
    assert_eq!(api.finalized().iter().filter(|f| f.rn == "R-1").count(), 1);
    drop((a, b));
    api.shutdown().await;
}
