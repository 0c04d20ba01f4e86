//! Interoperability: the real gateway against a DGI web API written independently from the
//! public evidence on it (docs/web-api.md restates it; `interop/edef-python/server.py`: Python,
//! standard library only, written from that evidence alone by an author who had not read this
//! repository's simulator or channel). A gateway whose only device is `kind = "edef"` pointing at it must certify
//! every invoice kind, survive a dropped confirm answer without a duplicate, and show the
//! invoice in doubt to the administrator. Where the two readings of the document differ, this
//! test is where it shows.

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{add_org_with_key, needs, post_invoice, Gateway, SIM_NIF};
use serde_json::{json, Value};

const TOKEN: &str = "interop-token-5f1c";
const NIM: &str = "CD01000001-1";

/// The independent server, a child process on a free port.
struct IndependentApi {
    child: Child,
    addr: SocketAddr,
}

impl IndependentApi {
    fn start() -> IndependentApi {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/edef-python/server.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .args([
                "--listen",
                "127.0.0.1:0",
                "--token",
                TOKEN,
                "--nif",
                SIM_NIF,
                "--nim",
                NIM,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the independent web API");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server prints its address");
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        IndependentApi { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    async fn control(&self, method: &str, what: &str) -> Value {
        let path = format!("/_control/{what}");
        let answer = common::request(self.addr, method, &path, &[], None).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        answer.json
    }

    async fn finalized(&self) -> Vec<Value> {
        self.control("GET", "finalized")
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    async fn pending(&self) -> Vec<Value> {
        self.control("GET", "pending")
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl Drop for IndependentApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_independently_written_web_api_certifies_every_kind_and_a_dropped_answer_is_never_certified_twice(
) {
    let dir = tempfile::tempdir().unwrap();
    if !needs::runs("python3", &["--version"]) {
        return needs::missing(
            "the independent web API (interop/edef-python)",
            "no python3",
            "install Debian's python3; .ci/run does",
        );
    }
    let api = IndependentApi::start();
    let token = dir.path().join("dgi.token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let config = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"edef\"\nurl = {url:?}\ntoken_file = {token:?}\nstatus_interval_secs = 1\nanonymous_client = \"pp\"\n",
        state = dir.path().join("state"),
        url = api.url(),
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key = add_org_with_key(dir.path(), &gateway.config, "acme", "dgi", None);
    gateway.wait_ready().await;

    // This server reads docs/web-api.md's "client ... type required" as "a client is required": an
    // invoice without one needs `anonymous_client = "pp"` (what an integrator facing such a DGI
    // sets; without it the USD sale, which names no client, is refused with the DGI's 99).

    // Every kind: a sale (ttc), a USD sale (ht), FT, EV, ET, and credit notes FA and EA.
    let mut codes = Vec::new();
    let sale = post_invoice(gateway.addr, &key, &common::invoice("I-1")).await;
    assert_eq!(sale.status, 200, "FV: {}", sale.body);
    let sale_code = sale.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    codes.push(sale_code.clone());
    let usd = post_invoice(gateway.addr, &key, &common::usd_invoice("I-2")).await;
    assert_eq!(usd.status, 200, "FV in USD, ht: {}", usd.body);
    codes.push(
        usd.json["codeDEFDGI"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    );
    let mut export_code = String::new();
    for (i, kind) in ["FT", "EV", "ET"].iter().enumerate() {
        let mut invoice = common::invoice(&format!("I-K{i}"));
        invoice["type"] = json!(kind);
        let answer = post_invoice(gateway.addr, &key, &invoice).await;
        assert_eq!(answer.status, 200, "{kind}: {}", answer.body);
        let code = answer.json["codeDEFDGI"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if *kind == "EV" {
            export_code.clone_from(&code);
        }
        codes.push(code);
    }
    for (rn, original, kind) in [("I-N1", &sale_code, "FA"), ("I-N2", &export_code, "EA")] {
        let answer = post_invoice(
            gateway.addr,
            &key,
            &common::credit_note_of(rn, original, kind),
        )
        .await;
        assert_eq!(answer.status, 200, "{kind}: {}", answer.body);
        codes.push(
            answer.json["codeDEFDGI"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    let finalized = api.finalized().await;
    assert_eq!(finalized.len(), 7, "{finalized:?}");
    let on_dgi: Vec<&str> = finalized
        .iter()
        .map(|f| f["codeDEFDGI"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(on_dgi, codes, "the register holds what the DGI finalized");
    assert!(api.pending().await.is_empty(), "nothing left pending");

    // The confirm's answer is dropped after the DGI finalized: in doubt, never sent again.
    api.control("POST", "drop_next_confirm_answer").await;
    let lost = post_invoice(gateway.addr, &key, &common::invoice("I-L")).await;
    common::assert_error(&lost, 409, 111);
    assert_eq!(api.finalized().await.len(), 8, "finalized once by the DGI");
    let retry = post_invoice(gateway.addr, &key, &common::invoice("I-L")).await;
    common::assert_error(&retry, 409, 111);
    assert_eq!(api.finalized().await.len(), 8, "not sent again");

    // The administrator sees it, with the uid to look up on the portal.
    let listed: Value =
        serde_json::from_str(&common::cli_ok(&gateway, &["intent", "list", "--json"]))
            .unwrap_or(Value::Null);
    assert_eq!(listed[0]["rn"], "I-L", "{listed}");
    assert_eq!(listed[0]["state"], "awaiting_administrator");
    let uid = listed[0]["channelRef"].as_str().unwrap_or_default();
    assert_eq!(api.finalized().await[7]["uid"], uid);
    let metrics = common::get(gateway.addr, "/metrics", None).await.body;
    assert!(
        metrics.contains("emcf_invoices_in_doubt{device=\"dgi\"} 1"),
        "{metrics}"
    );
    drop(gateway);
}
