//! What release 1.7.0 wrote (`tests/fixtures/release-1.7.0/`, its README says how): besides
//! its register, the first state files that are no journal (`notices.json`: a change notice
//! and the e-mail already sent for it; `last-backup.json`: the last good backup) and a
//! configuration with every key 1.7.0 added (`demo`, `[backup]`). This release must read
//! them all: the register verifies, the configuration is accepted, the notice is still
//! published, said in the v1 headers and never e-mailed again, the backup's time is in
//! `/metrics`, and the register goes on.

use std::path::Path;
use std::time::Duration;

use chrono::{Duration as Days, FixedOffset, Utc};

use super::smtp::SmtpSink;
use super::*;

const FIXTURE_1_7_0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release-1.7.0");
const HEAD_1_7_0: &str = "7b547d0a068bb6f9afa530c0cbc0119ed93ea53d1414647bd0f21bf378f56663";
/// The demo organization's live key, written by 1.7.0 to its keys file with the fixture.
const DEMO_LIVE_KEY_1_7_0: &str = "mcf_live_0ACG4jugtnfJ_ffjhM1vwGgYeOtO6heiUQTew2Zm03D";
/// When 1.7.0's `backup` took its copy (`last-backup.json`), Unix time.
const BACKUP_AT_1_7_0: i64 = 1_795_730_215;
/// When 1.7.0 published its notice (`notices.json`), Unix time: the `Deprecation` header.
const NOTICE_PUBLISHED_1_7_0: i64 = 1_795_730_214;

/// A state directory holding a copy of the 1.7.0 files, and its configuration with this
/// machine's paths and the SMTP sink's port in place of the fixture's placeholders
/// (`@STATE@`, `@BACKUP_DIR@`, `@SMTP_PORT@`). Returns the configuration's text.
fn state_from_1_7_0(dir: &Path, smtp_port: u16) -> String {
    state_from_demo_fixture(dir, FIXTURE_1_7_0);
    let from = Path::new(FIXTURE_1_7_0);
    for name in ["notices.json", "last-backup.json"] {
        std::fs::copy(from.join(name), dir.join("state").join(name)).expect("state file");
    }
    let backups = dir.join("backups");
    std::fs::create_dir_all(&backups).expect("backup dir");
    let text = std::fs::read_to_string(from.join("config.toml")).expect("config.toml");
    let text = text
        .replace("@STATE@", dir.join("state").to_str().expect("utf-8"))
        .replace("@BACKUP_DIR@", backups.to_str().expect("utf-8"))
        .replace("@SMTP_PORT@", &smtp_port.to_string());
    std::fs::write(dir.join("config.toml"), &text).expect("config written");
    text
}

fn notices(dir: &Path) -> Value {
    let out = tokio::task::block_in_place(|| {
        cli(dir, &dir.join("config.toml"), &["notice", "list", "--json"])
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("notice list --json")
}

/// The `Message-ID`s of the notice e-mails the sink received (`<notice.{id}.…>`).
fn notice_mails(sink: &SmtpSink) -> Vec<String> {
    sink.messages()
        .iter()
        .map(|mail| {
            mail.strict()["message_id"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .filter(|id| id.starts_with("<notice."))
        .collect()
}

/// A 1.7.0 install after the upgrade: its register verifies, its configuration is accepted,
/// its notice is still published and said in the v1 headers but not e-mailed again, its last
/// backup is in `/metrics`, and it certifies on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_7_0_install_keeps_its_notice_backup_and_configuration_after_the_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sink = SmtpSink::start().await;
    let text = state_from_1_7_0(dir.path(), sink.addr.port());
    let config = dir.path().join("config.toml");

    let report = tokio::task::block_in_place(|| cli_json(dir.path(), &["log", "verify"]));
    assert_eq!(report["records"], 8, "{report}");
    assert_eq!(report["invoices_kept"], 2, "{report}");
    assert_eq!(report["head_sha256"], HEAD_1_7_0, "{report}");

    // The configuration 1.7.0 wrote, with `demo`, `[backup]`, `[smtp]`, is accepted.
    let checked = tokio::task::block_in_place(|| cli(dir.path(), &config, &["config", "check"]));
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // The notice, its e-mail to the demo organization already sent.
    let listed = notices(dir.path());
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], 1, "{listed}");
    assert_eq!(
        listed[0]["subject"], "Fin de la version 1 de l'API",
        "{listed}"
    );
    assert_eq!(listed[0]["effective"], "2027-02-01", "{listed}");
    assert_eq!(listed[0]["retires"], "v1", "{listed}");
    assert!(listed[0]["sent"]["demo"].is_string(), "{listed}");

    let gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let addr = gateway.addr;

    // v1 is still being retired: its answers say when and where to read why.
    let status = get(addr, "/api/v1/status", None).await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(
        status.header("deprecation"),
        Some(format!("@{NOTICE_PUBLISHED_1_7_0}").as_str()),
        "{:?}",
        status.headers
    );
    // 1 February 2027 at midnight in Kinshasa (+01:00).
    assert_eq!(
        status.header("sunset"),
        Some("Sun, 31 Jan 2027 23:00:00 GMT"),
        "{:?}",
        status.headers
    );
    let link = status.header("link").unwrap_or_default();
    assert!(
        link.contains("<https://factures.example.cd/notices/1>; rel=\"deprecation\""),
        "{link}"
    );

    // Its public page, where the `Link` leads, shows what 1.7.0's operator wrote.
    let page = get(addr, "/notices/1", None).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains("Passez vos caisses à /api/v2 avant le 1er février 2027."),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Prend effet le 01/02/2027"),
        "{}",
        page.body
    );

    // The last good backup 1.7.0 recorded.
    let metrics = get(addr, "/metrics", None).await;
    let line = format!("emcf_backup_last_success_timestamp_seconds {BACKUP_AT_1_7_0}\n");
    assert!(metrics.body.contains(&line), "{}", metrics.body);

    // The register and the box's counters go on, with the key 1.7.0 issued.
    let next = post_invoice(addr, DEMO_LIVE_KEY_1_7_0, &invoice("UP17-FV-1")).await;
    assert_eq!(next.status, 200, "{}\n{}", next.body, gateway.log());
    assert_eq!(next.json["counters"], "3/3 FV", "the box's counters go on");
    assert_eq!(next.json["sequence"], 3, "the register's sequence goes on");

    // A notice published now is e-mailed in the engine's next round, and notice 1 is not
    // e-mailed again with it, nor later: 1.7.0 recorded it sent.
    std::fs::write(dir.path().join("body.txt"), "Maintenance du relais.\n").expect("body");
    let effective = Utc::now().with_timezone(&FixedOffset::east_opt(3600).expect("zone"));
    let effective = (effective.date_naive() + Days::days(45)).to_string();
    let body = dir.path().join("body.txt");
    let out = tokio::task::block_in_place(|| {
        cli(
            dir.path(),
            &config,
            &[
                "notice",
                "add",
                "--effective",
                &effective,
                "--subject",
                "Maintenance",
                "--body-file",
                body.to_str().expect("utf-8"),
            ],
        )
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while notice_mails(&sink).is_empty() {
        assert!(std::time::Instant::now() < deadline, "{}", gateway.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let sent = notice_mails(&sink);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].starts_with("<notice.2."), "{sent:?}");
    let mail = sink
        .messages()
        .into_iter()
        .find(|mail| mail.data.contains("Message-ID: <notice.2."))
        .expect("notice 2's e-mail");
    assert_eq!(mail.to, ["admin@demo.example.cd"], "1.7.0's administrator");
    assert_eq!(
        mail.strict()["headers"]["subject"],
        "[e-MCF] Avis de changement\u{a0}: Maintenance"
    );
    let listed = notices(dir.path());
    assert!(listed[1]["sent"]["demo"].is_string(), "{listed}");
    assert_eq!(
        listed[0]["sent"]["demo"],
        notices_sent_at_1_7_0(),
        "notice 1's record unchanged"
    );
}

/// When 1.7.0 recorded notice 1's e-mail to the demo organization as sent, as the fixture
/// holds it.
fn notices_sent_at_1_7_0() -> Value {
    let text =
        std::fs::read_to_string(Path::new(FIXTURE_1_7_0).join("notices.json")).expect("notices");
    let file: Value = serde_json::from_str(&text).expect("notices.json");
    file["notices"][0]["sent"]["demo"].clone()
}
