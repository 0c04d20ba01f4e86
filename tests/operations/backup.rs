//! Backups as a shop's IT person runs them (docs/backup.md), through the real binary: a copy
//! taken while ERPs post invoices, restored on a fresh state directory, opened by a gateway,
//! `log verify` passing and every invoice answered 200 before the copy began in it; a restore
//! refused over a register the copy does not hold; the last N copies kept and nothing else
//! touched; a torn journal tail left out of the copy; the `[backup] command` run on each copy,
//! its failure said, its hang killed; a stale backup said by an e-mail (SMTP sink),
//! `/metrics` and the dashboard overview; a restore killed half-way refused by every open
//! until it is run again; a copy taken while the service runs ending on what it fsynced; and
//! `--config-in-place` writing only the paths the configuration names (the restores are in
//! `backup/restore.rs`).
//!
//! A module of its own: backups are one workflow (backup, restore, staleness) that spans the
//! register, the CLI and the alerts, and `durability.rs` and `alerts.rs`, where parts of it
//! would go, are both near the size a file may have here.

use crate::common;
use crate::smtp;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use smtp::SmtpSink;

mod restore;

const ORG: &str = "shop-org";

/// A configuration on the simulator at `device`, backups into `dir/backups` (keep `keep`),
/// with `extra` appended.
fn config(dir: &Path, device: &Path, keep: u32, extra: &str) -> String {
    format!(
        "{}\n[backup]\ndir = {:?}\nkeep = {keep}\n{extra}",
        config_with_device(dir, device),
        dir.join("backups")
    )
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// `backup` succeeded: the copy's folder it printed.
fn backup(dir: &Path, config: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec!["backup"];
    all.extend_from_slice(args);
    let out = cli(dir, config, &all);
    assert!(out.status.success(), "backup failed: {}", stderr_of(&out));
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let copy = PathBuf::from(printed);
    assert!(copy.join("manifest.json").is_file(), "{}", copy.display());
    copy
}

/// A box on a pty, a gateway keeping 14 copies, the organization [`ORG`] with its key, and one
/// invoice `rn` certified: what most tests start from.
async fn certified_once(dir: &Path, rn: &str) -> (Sim, Gateway, String) {
    let sim = Sim::start(dir).await;
    let text = config(dir, &sim.link, 14, "");
    let gateway = Gateway::start(dir, &text);
    gateway.wait_ready().await;
    let key =
        tokio::task::block_in_place(|| add_org_with_key(dir, &gateway.config, ORG, "shop", None));
    let answer = post_invoice(gateway.addr, &key, &invoice(rn)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    (sim, gateway, key)
}

fn manifest(copy: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(copy.join("manifest.json")).expect("manifest"))
        .expect("manifest JSON")
}

/// `log verify`'s JSON.
fn verified(dir: &Path, config: &Path) -> Value {
    serde_json::from_str(&cli_success(dir, config, &["log", "verify"])).expect("verify JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_copy_taken_under_load_restores_every_answered_invoice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    // A password file the configuration names: copied with the configuration, mode kept.
    let password = dir.path().join("smtp-password");
    std::fs::write(&password, "s3cret\n").expect("password");
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600)).expect("mode");
    let smtp = format!(
        "[smtp]\nhost = \"127.0.0.1\"\nport = 9\nfrom = \"gw <gw@example.cd>\"\nusername = \"gw\"\npassword_file = {password:?}\ntls = \"none\"\n"
    );
    let text = config(dir.path(), &sim.link, 14, &smtp);
    let mut gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, ORG, "shop", None)
    });
    for n in 1..=3 {
        let answer = post_invoice(gateway.addr, &key, &invoice(&format!("BEFORE-{n}"))).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }

    // ERPs keep posting while the copy is taken: (rn, when its 200 arrived).
    let answered: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for erp in 0..3 {
        let (answered, stop, key, addr) =
            (answered.clone(), stop.clone(), key.clone(), gateway.addr);
        load.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let rn = format!("LOAD-{erp}-{n}");
                let answer = post_invoice(addr, &key, &invoice(&rn)).await;
                if answer.status == 200 {
                    answered.lock().expect("lock").push((rn, Instant::now()));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let started = Instant::now();
    let copy = tokio::task::block_in_place(|| backup(dir.path(), &gateway.config, &[]));
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await.expect("load task");
    }
    let answered = answered.lock().expect("lock").clone();
    let before: Vec<String> = ["BEFORE-1", "BEFORE-2", "BEFORE-3"]
        .iter()
        .map(|rn| rn.to_string())
        .chain(
            answered
                .iter()
                .filter(|(_, at)| *at < started)
                .map(|(rn, _)| rn.clone()),
        )
        .collect();
    assert!(
        before.len() > 3,
        "invoices were answered under load: {answered:?}"
    );
    assert!(
        answered.iter().any(|(_, at)| *at > started),
        "the load went on during the copy"
    );

    // The copy's manifest and files.
    let manifest = manifest(&copy);
    assert_eq!(manifest["format"], 1);
    let files = manifest["files"].as_array().expect("files");
    let roles: Vec<&str> = files.iter().filter_map(|f| f["role"].as_str()).collect();
    assert_eq!(roles[0], "journal");
    assert!(roles.contains(&"config"), "{roles:?}");
    let secret = files
        .iter()
        .find(|f| f["role"] == "secret")
        .expect("the password file is copied");
    assert_eq!(secret["original"], password.to_str().expect("utf-8"));
    let copied = copy.join(secret["path"].as_str().expect("path"));
    let mode = std::fs::metadata(&copied)
        .expect("secret")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "its mode is kept");
    assert!(!files.iter().any(|f| f["path"]
        .as_str()
        .unwrap_or_default()
        .contains("index.sled")));
    let last: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("state/last-backup.json")).expect("recorded"),
    )
    .expect("JSON");
    assert_eq!(last["head_sha256"], manifest["journal"]["head_sha256"]);
    assert!(gateway.terminate(), "clean exit");

    // Restored on a fresh state directory (no --force needed), opened by a gateway.
    let fresh = tempfile::tempdir().expect("tempdir");
    let fresh_text = config(fresh.path(), &sim.link, 14, "");
    std::fs::write(fresh.path().join("config.toml"), &fresh_text).expect("config");
    let fresh_config = fresh.path().join("config.toml");
    let copy_text = copy.to_str().expect("utf-8").to_string();
    let out = cli(fresh.path(), &fresh_config, &["restore", &copy_text]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = stderr_of(&out);
    assert!(said.contains(&nbsp("rien n'est perdu")), "{said}");
    assert!(
        said.contains("Le boîtier (ses compteurs) ou la DGI peuvent détenir des factures"),
        "{said}"
    );
    assert!(!fresh.path().join("state/index.sled").exists());
    // The register as restored, before a service opens it: the box certified invoices after
    // the copy was taken, so the service journals at start that the register is behind its
    // box (tests/device/register_behind.rs), and the head moves on.
    let report = tokio::task::block_in_place(|| verified(fresh.path(), &fresh_config));
    assert_eq!(report["head_sha256"], manifest["journal"]["head_sha256"]);
    assert_eq!(report["certified"], manifest["journal"]["entries_total"]);
    let gateway = Gateway::start(fresh.path(), &fresh_text);
    let addr = gateway.addr;
    let entries = tokio::task::block_in_place(|| exported_entries(fresh.path(), &gateway.config));
    let rns: Vec<&str> = entries.iter().filter_map(|e| e["rn"].as_str()).collect();
    for rn in &before {
        assert!(
            rns.contains(&rn.as_str()),
            "{rn} answered 200 before the copy: {rns:?}"
        );
    }
    let lookup = get(addr, "/api/v1/Invoice/BEFORE-2", Some(&key)).await;
    assert_eq!(
        lookup.status, 200,
        "the key and the entry are back: {}",
        lookup.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_last_copies_are_kept_and_a_torn_tail_is_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let text = config(dir.path(), &sim.link, 2, "");
    let mut gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, ORG, "shop", None)
    });
    let answer = post_invoice(gateway.addr, &key, &invoice("T-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let config_path = gateway.config.clone();
    assert!(gateway.terminate(), "clean exit");
    let head = verified(dir.path(), &config_path)["head_sha256"].clone();

    // What a crash in the middle of an append leaves: a record header announcing 64 bytes,
    // and only some of them.
    let journal = dir.path().join("state/journal/journal.log");
    let whole = std::fs::metadata(&journal).expect("journal").len();
    let mut torn = vec![64u8, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef];
    torn.extend_from_slice(b"{\"seq\":");
    let mut bytes = std::fs::read(&journal).expect("journal");
    bytes.extend_from_slice(&torn);
    std::fs::write(&journal, &bytes).expect("garbage appended");

    let backups = dir.path().join("backups");
    std::fs::create_dir_all(&backups).expect("backups");
    std::fs::write(backups.join("README.txt"), "not a copy").expect("file");
    std::fs::create_dir(backups.join("emcf-backup-by-hand")).expect("folder");
    // Named by hand, a character of two bytes across the stamp's end: left alone, no panic.
    std::fs::create_dir(backups.join("emcf-backup-202611260200000é")).expect("folder");
    let mut copies = Vec::new();
    for _ in 0..3 {
        copies.push(backup(dir.path(), &config_path, &[]));
    }
    let copy = copies.last().expect("a copy");
    let manifest = manifest(copy);
    assert_eq!(manifest["journal"]["head_sha256"], head);
    assert_eq!(manifest["journal"]["bytes"], whole);
    let copied = std::fs::metadata(copy.join("state/journal/journal.log")).expect("copy");
    assert_eq!(copied.len(), whole, "the torn tail is not copied");
    assert_eq!(
        std::fs::metadata(&journal).expect("journal").len(),
        whole + torn.len() as u64,
        "nor cut from the live journal by the backup"
    );

    let mut names: Vec<String> = std::fs::read_dir(&backups)
        .expect("backups")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let kept: Vec<String> = copies[1..]
        .iter()
        .map(|c| c.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    let mut expected = vec![
        "README.txt".to_string(),
        "emcf-backup-by-hand".to_string(),
        "emcf-backup-202611260200000é".to_string(),
    ];
    expected.extend(kept);
    expected.sort();
    assert_eq!(names, expected, "keep = 2, and nothing else touched");

    // A relative destination: the copy's folder is printed and recorded absolute.
    let elsewhere = backup(dir.path(), &config_path, &["elsewhere"]);
    assert!(elsewhere.is_absolute(), "{}", elsewhere.display());
    assert!(elsewhere.starts_with(dir.path().join("elsewhere")));
    let last: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("state/last-backup.json")).expect("recorded"),
    )
    .expect("JSON");
    assert_eq!(last["path"], elsewhere.to_str().expect("utf-8"));

    // An auditor checks a copy, read-only: its head and counts; exit 1 once a byte changed.
    let copy_text = copy.to_str().expect("utf-8").to_string();
    let out = cli(dir.path(), &config_path, &["backup", "verify", &copy_text]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        said.contains(head.as_str().expect("head")) && said.contains("Copie vérifiée"),
        "{said}"
    );
    let copied = copy.join("state/journal/journal.log");
    let mut bytes = std::fs::read(&copied).expect("copy");
    let last_byte = bytes.len() - 2;
    bytes[last_byte] ^= 1;
    std::fs::write(&copied, &bytes).expect("changed");
    let out = cli(dir.path(), &config_path, &["backup", "verify", &copy_text]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("ne l'utilisez pas"),
        "{}",
        stderr_of(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_backup_is_e_mailed_shown_and_measured() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let smtp = format!(
        "[smtp]\nhost = \"127.0.0.1\"\nport = {}\nfrom = \"emcf-gateway <alertes@passerelle.cd>\"\ntls = \"none\"\n",
        sink.addr.port()
    );
    let text = config(dir.path(), &sim.link, 14, &smtp);
    let gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let key = tokio::task::block_in_place(|| {
        let out = org_add_acme(
            dir.path(),
            &gateway.config,
            "Acme",
            &["--admin-email", "admin@acme.cd"],
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
        issue_key(dir.path(), &gateway.config, "acme", false)
    });
    let answer = post_invoice(gateway.addr, &key, &invoice("S-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    tokio::task::block_in_place(|| backup(dir.path(), &gateway.config, &[]));

    // The copy made three days ago, as the record says it.
    let record = dir.path().join("state/last-backup.json");
    let mut last: Value =
        serde_json::from_slice(&std::fs::read(&record).expect("record")).expect("JSON");
    let old = chrono::Utc::now() - chrono::Duration::days(3);
    last["at"] = Value::String(old.to_rfc3339());
    std::fs::write(&record, serde_json::to_vec(&last).expect("JSON")).expect("record");
    // An answered invoice makes the alerts evaluate within a second.
    let answer = post_invoice(gateway.addr, &key, &invoice("S-2")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mails = sink.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0].from, "alertes@passerelle.cd");
    assert_eq!(mails[0].to, ["admin@acme.cd"]);
    let read = mails[0].strict();
    let subject = read["headers"]["subject"].as_str().unwrap_or_default();
    assert_eq!(
        subject,
        nbsp("[e-MCF] Acme : pas de sauvegarde récente du registre des factures")
    );
    let body = read["parts"][0]["text"].as_str().unwrap_or_default();
    for words in [
        "La dernière sauvegarde réussie du registre des factures (organisation Acme) date du",
        "il y a plus de deux jours",
        "Ce qu'il faut faire : demandez à l'opérateur de la passerelle de lancer une sauvegarde (« emcf-gateway backup »)",
    ] {
        assert!(body.contains(&nbsp(words)), "{words:?} in:\n{body}");
    }

    let metrics = get(gateway.addr, "/metrics", None).await;
    assert!(
        metrics.body.contains(&format!(
            "emcf_backup_last_success_timestamp_seconds {}",
            old.timestamp()
        )),
        "{}",
        metrics.body
    );
    assert!(metrics
        .body
        .contains("emcf_alerts_active{kind=\"backup_old\"} 1"));

    let token = tokio::task::block_in_place(|| issue_dashboard_token(&gateway, "acme"));
    let (session, _) = dashboard_sign_in(gateway.addr, &token).await;
    let page = dashboard_get(gateway.addr, Some(&session), "/dashboard/").await;
    assert!(
        page.body.contains("id=\"alert-backup_old\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("demandez à l&#39;opérateur de la passerelle de lancer une sauvegarde"),
        "{}",
        page.body
    );

    // A new copy clears it.
    tokio::task::block_in_place(|| backup(dir.path(), &gateway.config, &[]));
    let answer = post_invoice(gateway.addr, &key, &invoice("S-3")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = get(gateway.addr, "/metrics", None).await;
        if metrics
            .body
            .contains("emcf_alerts_active{kind=\"backup_old\"} 0")
        {
            break;
        }
        assert!(Instant::now() < deadline, "not cleared: {}", metrics.body);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(sink.messages().len(), 1, "e-mailed once");
}

#[test]
fn the_command_runs_on_each_verified_copy_and_its_failure_is_said() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_path = dir.path().join("config.toml");
    // Checks that {dir} is the verified copy, then copies it "to another machine", and says
    // so on its stdout (which must not mix with the copy's folder on ours).
    let sent = dir.path().join("sent");
    let good = format!(
        "['sh', '-c', 'test -f \"$0/manifest.json\" && cp -r \"$0\" \"{}\" && echo sent', '{{dir}}']",
        sent.display()
    );
    let with_command = |command: &str| {
        config(
            dir.path(),
            Path::new("/dev/null"),
            14,
            &format!("command = {command}\n"),
        )
    };
    std::fs::write(&config_path, with_command(&good)).expect("config");
    add_org_with_key(dir.path(), &config_path, ORG, "shop", None);
    let copy = backup(dir.path(), &config_path, &[]);
    assert!(
        sent.join("manifest.json").is_file(),
        "the command got the copy"
    );

    std::fs::write(&config_path, with_command("[\"false\"]")).expect("config");
    let out = cli(dir.path(), &config_path, &["backup"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let said = stderr_of(&out);
    assert!(said.contains("est bonne et gardée"), "{said}");
    let kept = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        kept.join("manifest.json").is_file() && copy.is_dir(),
        "both copies kept"
    );
    let last: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("state/last-backup.json")).expect("recorded"),
    )
    .expect("JSON");
    assert_eq!(last["path"], kept.to_str().expect("utf-8"));
    assert_eq!(last["command"]["ok"], false, "{last}");

    // A command that hangs is killed after [backup] command_timeout_secs, and failed.
    let hangs = format!(
        "{}command_timeout_secs = 1\n",
        with_command("[\"sleep\", \"60\"]")
    );
    std::fs::write(&config_path, hangs).expect("config");
    let started = Instant::now();
    let out = cli(dir.path(), &config_path, &["backup"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not waited for"
    );
    let last: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("state/last-backup.json")).expect("recorded"),
    )
    .expect("JSON");
    assert_eq!(last["command"]["ok"], false, "{last}");
    assert!(
        last["command"]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("timeout=1s"),
        "{last}"
    );
    assert!(
        stderr_of(&out).contains("command_timeout_secs"),
        "{}",
        stderr_of(&out)
    );
}

/// The journal's records as (frame start, payload).
fn journal_frames(bytes: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let mut frames = Vec::new();
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let end = at + 8 + len as usize;
        let Some(payload) = bytes.get(at + 8..end) else {
            break;
        };
        frames.push((at, payload.to_vec()));
        at = end;
    }
    frames
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_taken_while_the_service_runs_stops_at_what_it_fsynced() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().expect("tempdir");
    let (_sim, mut gateway, _key) = certified_once(dir.path(), "D-1").await;
    let config_path = gateway.config.clone();
    let durable = tokio::task::block_in_place(|| verified(dir.path(), &config_path));

    // A whole, valid record after the last one the service fsynced: what a write whose
    // fsync has not returned (or failed, and is then cut off) leaves in the file.
    let journal = dir.path().join("state/journal/journal.log");
    let bytes = std::fs::read(&journal).expect("journal");
    let (_, last) = journal_frames(&bytes).pop().expect("a record");
    let mut record: Value = serde_json::from_slice(&last).expect("record");
    record["seq"] = Value::from(record["seq"].as_u64().expect("seq") + 1);
    record["prev"] = Value::String(hex::encode(Sha256::digest(&last)));
    let payload = serde_json::to_vec(&record).expect("JSON");
    let mut frame = (payload.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    frame.extend_from_slice(&payload);
    let mut live = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .expect("journal");
    std::io::Write::write_all(&mut live, &frame).expect("appended");
    drop(live);

    let copy = tokio::task::block_in_place(|| backup(dir.path(), &config_path, &[]));
    let manifest = manifest(&copy);
    assert_eq!(
        manifest["journal"]["head_sha256"], durable["head_sha256"],
        "the copy ends on the service's last fsynced record"
    );
    assert_eq!(
        std::fs::metadata(copy.join("state/journal/journal.log"))
            .expect("copy")
            .len(),
        bytes.len() as u64
    );
    assert!(gateway.terminate(), "clean exit");
}
