//! A register behind its box (docs/design.md, "A register behind its box"), as an operator
//! meets it: the register loses its last records (the journal cut back to an earlier record,
//! the index deleted; or an older backup restored) while the box keeps its certifications.
//! The gateway must notice at start, say so (status, `/metrics`, `device anomalies list`),
//! refuse the retry of the lost rn with 503 171 rather than certify it a second time, and
//! certify again only once an administrator acknowledges the missing numbers.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::smtp::SmtpSink;
use common::{
    add_org_with_key, cli, cli_ok, config_with_device, dashboard_get, dashboard_sign_in,
    fiscal_invoices, get, invoice, issue_dashboard_token, issue_key, journal_event_count,
    org_add_acme, post_invoice, quota_used, wait_status, Gateway, Sim,
};
use serde_json::Value;

const ORG: &str = "acme";

fn journal(dir: &Path) -> std::path::PathBuf {
    dir.join("state").join("journal").join("journal.log")
}

/// A box simulator in `dir` and a gateway on it, ready, with [`ORG`] and its key; the
/// configuration's text (to start it again).
async fn on_a_box(dir: &Path) -> (Sim, Gateway, String, String) {
    let sim = Sim::start(dir).await;
    let config_text = config_with_device(dir, &sim.link);
    let gateway = Gateway::start(dir, &config_text);
    let key =
        tokio::task::block_in_place(|| add_org_with_key(dir, &gateway.config, ORG, "shop", None));
    gateway.wait_ready().await;
    (sim, gateway, config_text, key)
}

/// The journal's length now: where [`cut_register`] cuts it back to.
fn journal_len(dir: &Path) -> u64 {
    std::fs::metadata(journal(dir)).expect("journal").len()
}

/// The register loses its last records, the box keeps them: the journal cut back to `len`
/// (a record boundary, from [`journal_len`]), the index deleted (rebuilt at start).
fn cut_register(dir: &Path, len: u64) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(journal(dir))
        .expect("journal");
    file.set_len(len).expect("journal cut back");
    drop(file);
    std::fs::remove_dir_all(dir.join("state").join("index.sled")).expect("index");
}

/// A refused retry moved nothing: the box still holds `invoices` invoices and the
/// organization's quota used is still `used`.
fn nothing_moved(sim: &Sim, dir: &Path, config: &Path, invoices: usize, used: u64) {
    assert_eq!(
        fiscal_invoices(sim).len(),
        invoices,
        "the box's counter did not move"
    );
    assert_eq!(
        tokio::task::block_in_place(|| quota_used(dir, config, ORG)),
        used,
        "no quota used"
    );
}

/// `device anomalies list --json`.
fn anomalies(gateway: &Gateway) -> Value {
    serde_json::from_str(&cli_ok(gateway, &["device", "anomalies", "list", "--json"]))
        .expect("json")
}

/// Waits until `GET /status` names `problem` for the device `shop`; returns the status.
async fn wait_problem(gateway: &Gateway, problem: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let status = get(gateway.addr, "/api/v1/status", None).await.json;
        if status["devices"][0]["problem"] == problem {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "status never said {problem}: {status}\n{}",
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn certified(gateway: &Gateway, key: &str, rn: &str) -> Value {
    let response = post_invoice(gateway.addr, key, &invoice(rn)).await;
    assert_eq!(
        response.status,
        200,
        "{rn}: {}\n{}",
        response.body,
        gateway.log()
    );
    response.json
}

#[tokio::test(flavor = "multi_thread")]
async fn a_register_cut_behind_its_box_stops_it_until_the_missing_number_is_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sink = SmtpSink::start().await;
    let sim = Sim::start(dir.path()).await;
    let config_text = format!(
        "{}\n[smtp]\nhost = \"127.0.0.1\"\nport = {}\nfrom = \"alertes@passerelle.cd\"\ntls = \"none\"\n",
        config_with_device(dir.path(), &sim.link),
        sink.addr.port()
    );
    let mut gateway = Gateway::start(dir.path(), &config_text);
    let key = tokio::task::block_in_place(|| {
        let extra = ["--admin-email", "admin@acme.cd"];
        let out = org_add_acme(dir.path(), &gateway.config, "Acme", &extra);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        issue_key(dir.path(), &gateway.config, ORG, false)
    });
    gateway.wait_ready().await;
    certified(&gateway, &key, "RB-1").await;
    certified(&gateway, &key, "RB-2").await;
    let cut = journal_len(dir.path());
    let third = certified(&gateway, &key, "RB-3").await;
    assert_eq!(third["counters"], "3/3 FV");
    assert!(gateway.terminate(), "{}", gateway.log());

    // The register loses its last record (RB-3): the journal cut back to the record boundary
    // after RB-2, the index deleted and rebuilt at start. The box keeps TC 3.
    cut_register(dir.path(), cut);
    let config = dir.path().join("config.toml");
    assert_eq!(
        tokio::task::block_in_place(|| quota_used(dir.path(), &config, ORG)),
        2
    );

    gateway = Gateway::start(dir.path(), &config_text);
    let status = wait_problem(&gateway, "register_behind").await;
    assert_eq!(status["status"], false, "{status}");
    assert_eq!(fiscal_invoices(&sim).len(), 3);

    // The ERP retries the rn it did not hear back: refused, never a second certification.
    for _ in 0..2 {
        let retry = post_invoice(gateway.addr, &key, &invoice("RB-3")).await;
        assert_eq!(retry.status, 503, "{}", retry.body);
        assert_eq!(retry.json["errorCode"], 171, "{}", retry.body);
        assert!(retry.header("Retry-After").is_some(), "{:?}", retry.headers);
        let desc = retry.json["errorDesc"].as_str().unwrap_or_default();
        assert!(desc.contains("n° 3"), "{desc}");
    }
    nothing_moved(&sim, dir.path(), &config, 3, 2);
    assert_eq!(journal_event_count(dir.path(), "fiscal_anomaly"), 1);
    assert_eq!(
        journal_event_count(dir.path(), "intent"),
        2,
        "nothing started"
    );
    assert!(
        gateway.log().contains("FISCAL ANOMALY"),
        "{}",
        gateway.log()
    );
    let metrics = get(gateway.addr, "/metrics", None).await.body;
    assert!(
        metrics.contains("emcf_device_not_ready{device=\"shop\",reason=\"register_behind\"} 1")
            && metrics.contains("emcf_fiscal_anomalies_open{device=\"shop\"} 1"),
        "{metrics}"
    );

    // The organization's administrator is told by e-mail, and the dashboard says why.
    let mails = sink.wait_for(1, Duration::from_secs(20)).await;
    let mail = mails[0].strict();
    let subject = mail["headers"]["subject"].as_str().unwrap_or_default();
    assert!(subject.contains("le registre est en retard"), "{mail}");
    let body = mail["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(
        body.contains("n° 3") || body.contains("n°\u{a0}3"),
        "{body}"
    );
    let token = issue_dashboard_token(&gateway, ORG);
    let (session, _) = dashboard_sign_in(gateway.addr, &token).await;
    let page = dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(
        page.body.contains("id=\"fiscal-anomalies\"")
            && page
                .body
                .contains("Plus rien n&#39;est certifié sur cet appareil"),
        "{}",
        page.body
    );
    // The whole ack command, ready to copy (ASCII quotes, --by and --note included).
    let said = &page.body[page.body.find("Plus rien n&#39;est").unwrap_or(0)..];
    assert!(
        said.contains("anomalies ack") && said.contains("--by") && said.contains("--note"),
        "{said}"
    );
    assert!(!said.contains("--numbers «"), "{said}");

    let list = anomalies(&gateway);
    let anomaly = &list[0];
    assert_eq!(anomaly["anomaly"]["kind"], "register_behind", "{list}");
    assert_eq!(anomaly["anomaly"]["missing"], serde_json::json!([3]));
    assert_eq!(anomaly["anomaly"]["known"]["tc"], 2);
    assert_eq!(anomaly["anomaly"]["seen_tc"], 3);
    assert_eq!(
        anomaly["anomaly"]["last"]["rn"], "RB-3",
        "what the box's C1h says of its last invoice is kept: {list}"
    );
    assert_eq!(anomaly["anomaly"]["last"]["number"], 3);
    let id = anomaly["id"].as_u64().expect("id").to_string();
    let text = cli_ok(&gateway, &["--lang", "en", "device", "anomalies", "list"]);
    assert!(
        text.contains("missing from the register: 3"),
        "the list says which numbers: {text}"
    );

    // Acknowledged only with exactly the missing numbers.
    for numbers in [None, Some("2"), Some("3-4")] {
        let mut args = vec![
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            "Ana",
            "--note",
            "RB-3 lost",
        ];
        if let Some(numbers) = numbers {
            args.extend(["--numbers", numbers]);
        }
        let refused = tokio::task::block_in_place(|| gateway.cli(&args));
        assert!(!refused.status.success(), "{numbers:?} must be refused");
    }
    assert_eq!(fiscal_invoices(&sim).len(), 3);
    let acked = cli_ok(
        &gateway,
        &[
            "--lang",
            "en",
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            "Ana Mbuyi",
            "--note",
            "RB-3 checked on the DGI portal",
            "--numbers",
            "3",
        ],
    );
    assert!(
        acked.contains("acknowledged by Ana Mbuyi") && acked.contains("no. 3"),
        "{acked}"
    );
    assert!(
        acked.contains("never certified again") && acked.contains("3 = RB-3"),
        "the lost rn named: {acked}"
    );
    let raw = std::fs::read(journal(dir.path())).expect("journal");
    let raw = String::from_utf8_lossy(&raw);
    assert!(raw.contains("\"numbers\":[3]"), "the numbers are journaled");
    assert!(raw.contains("\"rn\":\"RB-3\""), "with the lost rn");

    wait_status(gateway.addr, true, Duration::from_secs(10)).await;
    // The ERP retries the rn it never heard back once more: the box certified it, the
    // register lost it: refused for good, never certified a second time.
    let retry = post_invoice(gateway.addr, &key, &invoice("RB-3")).await;
    assert_eq!(retry.status, 409, "{}", retry.body);
    assert_eq!(retry.json["errorCode"], 173, "{}", retry.body);
    let desc = retry.json["errorDesc"].as_str().unwrap_or_default();
    assert!(desc.contains("RB-3") && desc.contains("portail"), "{desc}");
    nothing_moved(&sim, dir.path(), &config, 3, 2);
    let next = certified(&gateway, &key, "RB-4").await;
    assert_eq!(next["counters"], "4/4 FV", "{next}");
    assert_eq!(fiscal_invoices(&sim).len(), 4);
    assert_eq!(
        journal_event_count(dir.path(), "fiscal_anomaly"),
        1,
        "the box follows its acknowledged counter: no new anomaly"
    );
    assert!(gateway.terminate(), "{}", gateway.log());
    let verify = tokio::task::block_in_place(|| cli(dir.path(), &config, &["log", "verify"]));
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    // A restart keeps it settled (the baseline is in the journal, rebuilt with the index).
    std::fs::remove_dir_all(dir.path().join("state").join("index.sled")).expect("index");
    gateway = Gateway::start(dir.path(), &config_text);
    gateway.wait_ready().await;
    certified(&gateway, &key, "RB-5").await;
    assert_eq!(journal_event_count(dir.path(), "fiscal_anomaly"), 1);
    let again = post_invoice(gateway.addr, &key, &invoice("RB-3")).await;
    assert_eq!(
        again.json["errorCode"], 173,
        "after a rebuild: {}",
        again.body
    );
    assert_eq!(fiscal_invoices(&sim).len(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rns_an_administrator_gives_for_lost_numbers_are_never_certified_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sim, mut gateway, config_text, key) = on_a_box(dir.path()).await;
    certified(&gateway, &key, "RN-1").await;
    let cut = journal_len(dir.path());
    certified(&gateway, &key, "RN-2").await;
    certified(&gateway, &key, "RN-3").await;
    assert!(gateway.terminate(), "{}", gateway.log());
    cut_register(dir.path(), cut);

    gateway = Gateway::start(dir.path(), &config_text);
    wait_problem(&gateway, "register_behind").await;
    let list = anomalies(&gateway);
    assert_eq!(list[0]["anomaly"]["missing"], serde_json::json!([2, 3]));
    assert_eq!(list[0]["anomaly"]["last"]["rn"], "RN-3", "{list}");
    let id = list[0]["id"].as_u64().expect("id").to_string();
    let ack = |rn: &str| {
        let args = [
            "--lang",
            "en",
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            "Ana",
            "--note",
            "RN-2 and RN-3 on the DGI portal",
            "--numbers",
            "2-3",
            "--rn",
            rn,
        ];
        tokio::task::block_in_place(|| gateway.cli(&args))
    };
    // Not a missing number, another rn than the box's own for no. 3, not NUMBER=RN.
    for bad in ["4=RN-4", "3=OTHER", "RN-2", "2="] {
        let refused = ack(bad);
        assert!(!refused.status.success(), "--rn {bad} must be refused");
    }
    assert_eq!(
        journal_event_count(dir.path(), "fiscal_anomaly_acknowledged"),
        0
    );
    let done = ack("2=RN-2");
    let said = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(said.contains("2 = RN-2, 3 = RN-3"), "{said}");
    assert!(
        !String::from_utf8_lossy(&done.stderr).contains("WARNING"),
        "every lost rn is known: no warning"
    );
    wait_status(gateway.addr, true, Duration::from_secs(10)).await;
    for rn in ["RN-2", "RN-3"] {
        let retry = post_invoice(gateway.addr, &key, &invoice(rn)).await;
        assert_eq!(retry.status, 409, "{rn}: {}", retry.body);
        assert_eq!(retry.json["errorCode"], 173, "{rn}: {}", retry.body);
    }
    assert_eq!(
        fiscal_invoices(&sim).len(),
        3,
        "the box's counter did not move"
    );
    let next = certified(&gateway, &key, "RN-4").await;
    assert_eq!(next["counters"], "4/4 FV", "{next}");
}

/// `backup` succeeded: the copy's folder it printed.
fn backup(dir: &Path, config: &Path, dest: &Path) -> String {
    let dest = dest.to_str().expect("utf-8").to_string();
    let out = cli(dir, config, &["backup", &dest]);
    assert!(
        out.status.success(),
        "backup failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `restore COPY --force`, in English: what it said on stderr.
fn restore(dir: &Path, config: &Path, copy: &str) -> String {
    let out = cli(dir, config, &["--lang", "en", "restore", copy, "--force"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "restore failed: {said}");
    said
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_says_the_box_is_ahead_and_a_newer_copy_settles_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sim, mut gateway, config_text, key) = on_a_box(dir.path()).await;
    let config = gateway.config.clone();
    certified(&gateway, &key, "RS-1").await;
    certified(&gateway, &key, "RS-2").await;
    let older = tokio::task::block_in_place(|| backup(dir.path(), &config, &dir.path().join("a")));
    certified(&gateway, &key, "RS-3").await;
    let newer = tokio::task::block_in_place(|| backup(dir.path(), &config, &dir.path().join("b")));
    assert!(gateway.terminate(), "{}", gateway.log());

    // The older copy: restore prints its counters and reads the box on its free port.
    let said = tokio::task::block_in_place(|| restore(dir.path(), &config, &older));
    assert!(
        said.contains("NIM SIM0000001: counter 2"),
        "the restored register's counters: {said}"
    );
    assert!(
        said.contains("is at counter 3, the restored register at 2")
            && said.contains("certifications no. 3 are missing"),
        "the box read on its port: {said}"
    );
    assert!(said.contains("At start, the service compares"), "{said}");
    gateway = Gateway::start(dir.path(), &config_text);
    wait_problem(&gateway, "register_behind").await;
    let retry = post_invoice(gateway.addr, &key, &invoice("RS-3")).await;
    assert_eq!(retry.status, 503, "{}", retry.body);
    assert_eq!(retry.json["errorCode"], 171, "{}", retry.body);
    assert_eq!(fiscal_invoices(&sim).len(), 3);
    assert!(gateway.terminate(), "{}", gateway.log());

    // A newer copy settles it: the box follows that register, nothing to acknowledge (at
    // once: a second restore within the same second keeps names of its own).
    let said = tokio::task::block_in_place(|| restore(dir.path(), &config, &newer));
    assert!(
        said.contains("NIM SIM0000001: counter 3") && said.contains("is not ahead"),
        "{said}"
    );
    gateway = Gateway::start(dir.path(), &config_text);
    gateway.wait_ready().await;
    let replayed = post_invoice(gateway.addr, &key, &invoice("RS-3")).await;
    assert_eq!(replayed.status, 200, "{}", replayed.body);
    assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
    let next = certified(&gateway, &key, "RS-4").await;
    assert_eq!(next["counters"], "4/4 FV", "{next}");
    assert_eq!(journal_event_count(dir.path(), "fiscal_anomaly"), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_web_api_e_mcf_ahead_of_its_register_stops_after_the_confirmation_that_shows_it() {
    use crate::web_api::{gateway_on, web_api};
    let dir = tempfile::tempdir().expect("tempdir");
    let api = web_api(Default::default()).await;
    let (mut gateway, key) = tokio::task::block_in_place(|| gateway_on(dir.path(), &api, ""));
    let config_text = std::fs::read_to_string(&gateway.config).expect("config");
    gateway.wait_ready().await;
    certified(&gateway, &key, "WB-1").await;
    let cut = journal_len(dir.path());
    let second = certified(&gateway, &key, "WB-2").await;
    assert_eq!(second["counters"], "2/2 FV");
    assert!(gateway.terminate(), "{}", gateway.log());
    cut_register(dir.path(), cut);

    // The web API gives no counters before a confirmation: the first invoice is certified
    // (the DGI did), and its counters show number 2 missing from the register.
    gateway = Gateway::start(dir.path(), &config_text);
    gateway.wait_ready().await;
    let third = certified(&gateway, &key, "WB-3").await;
    assert_eq!(third["counters"], "3/3 FV", "{third}");
    let status = wait_problem(&gateway, "register_behind").await;
    assert_eq!(status["status"], false);
    let next = post_invoice(gateway.addr, &key, &invoice("WB-4")).await;
    assert_eq!(next.status, 503, "{}", next.body);
    assert_eq!(next.json["errorCode"], 172, "{}", next.body);
    let list = anomalies(&gateway);
    assert_eq!(list[0]["anomaly"]["kind"], "register_behind", "{list}");
    assert_eq!(list[0]["anomaly"]["missing"], serde_json::json!([2]));
    assert_eq!(list[0]["anomaly"]["seen_in"], "confirm");
    let id = list[0]["id"].as_u64().expect("id").to_string();
    // The web API names no rn for a lost number: acknowledged, with a warning that a
    // retry of that invoice under its old rn would be certified again.
    let acked = tokio::task::block_in_place(|| {
        gateway.cli(&[
            "--lang",
            "en",
            "device",
            "anomalies",
            "ack",
            &id,
            "--by",
            "Ana",
            "--note",
            "WB-2 on the portal",
            "--numbers",
            "2",
        ])
    });
    let warned = String::from_utf8_lossy(&acked.stderr);
    assert!(acked.status.success(), "{warned}");
    assert!(
        warned.contains("the rn of no. 2 is not known")
            && warned.contains("would be certified a second time"),
        "{warned}"
    );
    wait_status(gateway.addr, true, Duration::from_secs(10)).await;
    let after = certified(&gateway, &key, "WB-4").await;
    assert_eq!(after["counters"], "4/4 FV", "{after}");
    assert_eq!(journal_event_count(dir.path(), "fiscal_anomaly"), 1);
}
