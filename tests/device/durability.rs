//! Durability of the register (docs/design.md §5), as a shop's IT person and a tax auditor
//! check it: what was answered 200 survives `kill -9`, a restart keeps the register and the
//! quota, the sled index can be deleted and is rebuilt, tampering with the journal is detected
//! (and never silently "repaired" by re-initialising), and the register exports in order.

use crate::common;

use std::path::{Path, PathBuf};

use common::{
    add_org_with_key, cli, cli_success, config_with_device, exported_entries, get, invoice,
    post_invoice, quota_used, Gateway, Response, Sim,
};
use serde_json::Value;

const ORG: &str = "shop-org";

/// A simulator, a gateway on it, an organization and its live key.
struct Setup {
    dir: tempfile::TempDir,
    /// Kept alive for the whole test.
    _sim: Sim,
    config: String,
    gateway: Gateway,
    key: String,
}

impl Setup {
    async fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = Sim::start(dir.path()).await;
        let config = config_with_device(dir.path(), &sim.link);
        let gateway = Gateway::start(dir.path(), &config);
        gateway.wait_ready().await;
        let key = add_org_with_key(dir.path(), &gateway.config, ORG, "shop", None);
        Setup {
            dir,
            _sim: sim,
            config,
            gateway,
            key,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn config_path(&self) -> PathBuf {
        self.path().join("config.toml")
    }

    fn journal(&self) -> PathBuf {
        self.path()
            .join("state")
            .join("journal")
            .join("journal.log")
    }

    /// Starts the gateway again on the same state directory and waits until it is ready.
    async fn restart(&mut self) {
        self.gateway = Gateway::start(self.dir.path(), &self.config);
        self.gateway.wait_ready().await;
    }

    /// Certifies `rn`; returns the 200 response.
    async fn certify(&self, rn: &str) -> Response {
        let response = post_invoice(self.gateway.addr, &self.key, &invoice(rn)).await;
        assert_eq!(
            response.status,
            200,
            "{rn}: {}\n{}",
            response.body,
            self.gateway.log()
        );
        response
    }

    async fn lookup(&self, rn: &str) -> Response {
        get(
            self.gateway.addr,
            &format!("/api/v1/Invoice/{rn}"),
            Some(&self.key),
        )
        .await
    }
}

fn code_of(response: &Response) -> String {
    response.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_else(|| panic!("no codeDEFDGI in {}", response.body))
        .to_string()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invoice_answered_200_is_in_the_register_after_kill_9() {
    let mut setup = Setup::new().await;
    let body = invoice("KILL-1");
    let answered = post_invoice(setup.gateway.addr, &setup.key, &body).await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    // The power goes the instant the ERP has its answer.
    setup.gateway.kill9();
    let code = code_of(&answered);

    // The service is dead: the CLI opens the store itself.
    let config = setup.config_path();
    let verify = cli(setup.path(), &config, &["log", "verify"]);
    assert!(
        verify.status.success(),
        "log verify after kill -9: {}",
        stderr_of(&verify)
    );
    let report: Value = serde_json::from_slice(&verify.stdout).expect("verify report is JSON");
    assert_eq!(report["certified"], 1, "{report}");
    let shown: Value = serde_json::from_str(&cli_success(
        setup.path(),
        &config,
        &["log", "show", "1", "--json"],
    ))
    .expect("log show prints JSON");
    assert_eq!(shown["rn"], "KILL-1", "{shown}");
    assert_eq!(shown["security"]["codeDEFDGI"], code.as_str(), "{shown}");
    assert_eq!(shown["security"]["counters"], "1/1 FV", "{shown}");

    setup.restart().await;
    let found = setup.lookup("KILL-1").await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(code_of(&found), code);
    assert_eq!(found.json["counters"], answered.json["counters"]);
    assert_eq!(found.json["qrCode"], answered.json["qrCode"]);

    let replayed = post_invoice(setup.gateway.addr, &setup.key, &body).await;
    assert_eq!(replayed.status, 200, "{}", replayed.body);
    assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(code_of(&replayed), code);
    assert_eq!(quota_used(setup.path(), &config, ORG), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_keeps_the_register_and_the_quota() {
    let mut setup = Setup::new().await;
    let first = setup.certify("KEEP-1").await;
    let second = setup.certify("KEEP-2").await;
    assert_eq!(first.json["counters"], "1/1 FV");
    assert_eq!(second.json["counters"], "2/2 FV");
    assert!(
        setup.gateway.terminate(),
        "SIGTERM must stop the gateway with exit status 0: {}",
        setup.gateway.log()
    );

    setup.restart().await;
    let config = setup.config_path();
    assert_eq!(quota_used(setup.path(), &config, ORG), 2);
    let third = setup.certify("KEEP-3").await;
    assert_eq!(third.json["counters"], "3/3 FV", "{}", third.body);
    assert_eq!(third.json["sequence"], 3, "{}", third.body);
    assert_eq!(quota_used(setup.path(), &config, ORG), 3);
    let entries = exported_entries(setup.path(), &config);
    let rns: Vec<&str> = entries.iter().filter_map(|e| e["rn"].as_str()).collect();
    assert_eq!(rns, ["KEEP-1", "KEEP-2", "KEEP-3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_index_is_rebuilt_from_the_journal() {
    let mut setup = Setup::new().await;
    let first = setup.certify("IDX-1").await;
    let second = setup.certify("IDX-2").await;
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());

    let index = setup.path().join("state").join("index.sled");
    assert!(index.is_dir(), "the index lives in {}", index.display());
    std::fs::remove_dir_all(&index).expect("index deleted");

    // Organizations and keys live in the index too: the old key must still work.
    setup.restart().await;
    for (rn, answered) in [("IDX-1", &first), ("IDX-2", &second)] {
        let found = setup.lookup(rn).await;
        assert_eq!(found.status, 200, "{rn}: {}", found.body);
        assert_eq!(code_of(&found), code_of(answered));
        assert_eq!(found.json["counters"], answered.json["counters"]);
    }
    let replayed = post_invoice(setup.gateway.addr, &setup.key, &invoice("IDX-1")).await;
    assert_eq!(replayed.status, 200, "{}", replayed.body);
    assert_eq!(replayed.header("Idempotent-Replayed"), Some("true"));
    let config = setup.config_path();
    assert_eq!(quota_used(setup.path(), &config, ORG), 2);
    // The rebuilt index must not hand out a sequence number again.
    let third = setup.certify("IDX-3").await;
    assert_eq!(third.json["sequence"], 3, "{}", third.body);
    assert_eq!(third.json["counters"], "3/3 FV");
    let verify = cli(setup.path(), &config, &["log", "verify"]);
    assert!(verify.status.success(), "{}", stderr_of(&verify));
}

/// Flips one bit of the byte at `at` of `path`; returns the bytes now on disk.
fn flip(path: &Path, at: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(path).expect("journal read");
    bytes[at] ^= 0x04;
    std::fs::write(path, &bytes).expect("journal written");
    bytes
}

/// `log verify` fails and `serve` refuses to start, both saying the journal is damaged, and
/// neither touches the journal.
/// A damaged journal: `log verify` fails and says so; `serve` starts fail-closed (status
/// false, every invoice call 503 code 160, a loud log line) and modifies nothing.
async fn assert_refused_as_damaged(setup: &Setup, what: &str) {
    let config = setup.config_path();
    let before = std::fs::read(setup.journal()).expect("journal read");
    let verify = cli(setup.path(), &config, &["log", "verify"]);
    assert!(
        !verify.status.success(),
        "log verify passed a journal with {what}: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    assert!(
        stderr_of(&verify).contains("endommagé"),
        "log verify should say the journal is damaged ({what}): {}",
        stderr_of(&verify)
    );
    let halted_dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(&config).expect("config");
    let mut gateway = Gateway::start(halted_dir.path(), &text);
    let status = get(gateway.addr, "/api/v1/status", None).await;
    assert_eq!(status.json["status"], false, "{what}: {}", status.body);
    let response = post_invoice(gateway.addr, &setup.key, &invoice("AFTER-DAMAGE")).await;
    assert_eq!(response.status, 503, "{what}: {}", response.body);
    assert_eq!(response.json["errorCode"], 160, "{what}: {}", response.body);
    assert!(response.header("retry-after").is_some());
    let found = get(gateway.addr, "/api/v1/Invoice/TAMPER-1", Some(&setup.key)).await;
    assert_eq!(found.status, 503, "{what}: {}", found.body);
    assert!(
        gateway.log().contains("REGISTER IS DAMAGED"),
        "serve should log the damage loudly ({what}): {}",
        gateway.log()
    );
    assert!(gateway.terminate(), "a halted gateway stops cleanly");
    assert!(
        std::fs::read(setup.journal()).expect("journal read") == before,
        "the damaged journal was modified ({what})"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tampered_journal_is_detected_and_never_reinitialised() {
    let mut setup = Setup::new().await;
    let mut codes = Vec::new();
    for rn in ["TAMPER-1", "TAMPER-2", "TAMPER-3"] {
        codes.push(code_of(&setup.certify(rn).await));
    }
    let journal = setup.journal();
    let original = std::fs::read(&journal).expect("journal read");
    let middle = original.len() / 2;

    // While the service runs, `log verify` (through the service) re-reads the journal.
    flip(&journal, middle);
    let verify = setup.gateway.cli(&["log", "verify"]);
    assert!(
        !verify.status.success(),
        "log verify passed a tampered journal while the service runs: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    std::fs::write(&journal, &original).expect("journal restored");
    let verify = setup.gateway.cli(&["log", "verify"]);
    assert!(verify.status.success(), "{}", stderr_of(&verify));
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());

    // Stopped: one byte in the middle of the journal.
    flip(&journal, middle);
    assert_refused_as_damaged(&setup, "a byte changed in its middle").await;

    // Put the byte back: everything is there, nothing was re-initialised.
    std::fs::write(&journal, &original).expect("journal restored");
    setup.restart().await;
    for (rn, code) in ["TAMPER-1", "TAMPER-2", "TAMPER-3"].iter().zip(&codes) {
        let found = setup.lookup(rn).await;
        assert_eq!(found.status, 200, "{rn}: {}", found.body);
        assert_eq!(&code_of(&found), code);
    }
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());

    // The last record (a certification already acknowledged, and applied to the index) is
    // not a torn tail to cut off: it is damage too.
    let len = std::fs::read(&journal).expect("journal read").len();
    flip(&journal, len - 3);
    assert_refused_as_damaged(&setup, "a byte changed in its last record").await;
}

/// A large register (`EMCF_BACKGROUND_CHECK_ABOVE_BYTES=0` makes every register large) opens
/// from the index's checkpoint and has its history checked in the background: intact, it
/// certifies at once; damaged before the checkpoint, certification stops once the check finds
/// it (status false, 503 code 160, the loud log line), lookups still answer, and the journal
/// is left as it is.
#[tokio::test(flavor = "multi_thread")]
async fn damage_found_by_the_background_check_stops_certification() {
    const LARGE: (&str, &str) = ("EMCF_BACKGROUND_CHECK_ABOVE_BYTES", "0");
    let mut setup = Setup::new().await;
    for rn in ["BG-1", "BG-2", "BG-3"] {
        setup.certify(rn).await;
    }
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());

    setup.gateway = Gateway::start_with_env(setup.path(), &setup.config, &[LARGE]);
    setup.gateway.wait_ready().await;
    setup.certify("BG-4").await;
    let checked = "journal history checked in the background: intact";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !setup.gateway.log().contains(checked) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            setup.gateway.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());

    let journal = setup.journal();
    let len = std::fs::read(&journal).expect("journal read").len();
    let damaged = flip(&journal, len / 3);
    setup.gateway = Gateway::start_with_env(setup.path(), &setup.config, &[LARGE]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let status = get(setup.gateway.addr, "/api/v1/status", None).await;
        if status.json["status"] == false && setup.gateway.log().contains("REGISTER IS DAMAGED") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            setup.gateway.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let refused = post_invoice(setup.gateway.addr, &setup.key, &invoice("BG-5")).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json["errorCode"], 160, "{}", refused.body);
    assert!(refused.header("retry-after").is_some());
    let found = setup.lookup("BG-4").await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());
    assert!(
        std::fs::read(&journal).expect("journal read") == damaged,
        "the damaged journal was modified"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_register_exports_every_entry_in_order_as_csv_and_json() {
    let mut setup = Setup::new().await;
    let rns = ["EXP-1", "EXP-2", "EXP-3"];
    let mut codes = Vec::new();
    for rn in rns {
        codes.push(code_of(&setup.certify(rn).await));
    }
    let config = setup.config_path();

    let csv = cli_success(setup.path(), &config, &["log", "export", "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no column {name} in the CSV header {header:?}"))
    };
    let (seq_col, rn_col, code_col, counters_col) = (
        column("sequence"),
        column("rn"),
        column("codeDEFDGI"),
        column("counters"),
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), header.len(), "row {i}: {csv}");
        assert_eq!(row[seq_col], (i + 1).to_string(), "{csv}");
        assert_eq!(row[rn_col], rns[i], "{csv}");
        assert_eq!(row[code_col], codes[i], "{csv}");
        assert_eq!(row[counters_col], format!("{n}/{n} FV", n = i + 1), "{csv}");
    }

    let entries = exported_entries(setup.path(), &config);
    assert_eq!(entries.len(), 3, "{entries:?}");
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(entry["sequence"], i as u64 + 1, "{entry}");
        assert_eq!(entry["rn"], rns[i], "{entry}");
        assert_eq!(
            entry["security"]["codeDEFDGI"],
            codes[i].as_str(),
            "{entry}"
        );
    }

    // An auditor exports the same register with the service stopped.
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());
    let offline = cli_success(setup.path(), &config, &["log", "export", "--format", "csv"]);
    assert_eq!(offline, csv);
}
