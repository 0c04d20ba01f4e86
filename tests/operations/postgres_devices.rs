//! Web API e-MCFs kept as data in PostgreSQL (issue 29, `src/certify/stored_devices.rs`),
//! through the real binary: `device add` then `org add --device` on a running gateway, and an
//! invoice certified through the new device within seconds, no restart; its token sealed in
//! the database (never in clear there, never in `device list`); `store rotate-key` to a new
//! key, after which a gateway with only the new key certifies; a gateway with a wrong key
//! refuses that device's invoices clearly (503, code 150), never showing the token; a device
//! in use is not removed; the embedded store refuses `device add` saying where its devices
//! are. Starts its own PostgreSQL server (skipped without one outside CI).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::Value;

use crate::common::{
    add_org_with_key, cli, config_with_device, invoice, post_invoice, Gateway, Sim,
};
use crate::pg::PgServer;

const ROLE: &str = "emcf_devices";
/// The stored device's token: must never be seen in the database, a listing or a log.
const TOKEN: &str = "eyJ.stored-device-secret-token.Zq9";
const KEY_1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const KEY_2: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const KEY_3: &str = "3333333333333333333333333333333333333333333333333333333333333333";

async fn web_api(token: &str) -> RunningEdef {
    let options = EdefOptions {
        token: token.to_owned(),
        ..EdefOptions::default()
    };
    start_edef("127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("the web API simulator starts")
}

/// Writes the key file (mode 600) with `keys`, one per line.
fn keys(path: &Path, keys: &[&str]) {
    std::fs::write(path, format!("{}\n", keys.join("\n"))).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn ok(dir: &Path, config: &Path, args: &[&str]) -> String {
    let out = cli(dir, config, args);
    assert!(out.status.success(), "{args:?}: {}", said(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A configuration on `server`'s database with no `[[devices]]` block, `extra` lines before
/// `[store]`, and the key file `secret.keys` (holding [`KEY_1`]) written in `dir`.
fn no_devices_block(server: &PgServer, dir: &Path, extra: &str) -> String {
    let key_file = dir.join("secret.keys");
    keys(&key_file, &[KEY_1]);
    format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n{extra}\n[store]\nurl = {store:?}\nsecret_key_file = {key_file:?}\n",
        state = dir.join("state"),
        store = server.socket_url(ROLE, ROLE),
    )
}

/// Posts invoices until one is certified (200), for at most `within`; the last answer.
async fn certified_within(gateway: &Gateway, key: &str, rn: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let response = post_invoice(gateway.addr, key, &invoice(rn)).await;
        if response.status == 200 {
            return response.json;
        }
        assert!(
            Instant::now() < deadline,
            "not certified within {within:?}: {} {}\n{}",
            response.status,
            response.json,
            gateway.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_added_as_data_certifies_at_once_its_token_sealed_and_its_key_rotated() {
    let Some(server) = PgServer::init("devices kept in PostgreSQL") else {
        return;
    };
    server.create_role_and_database(ROLE, "devices-secret-1");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // This replica's own device in its file, and the shop's e-MCF that is added as data.
    let (file_api, stored_api) = (web_api("file-token").await, web_api(TOKEN).await);
    let file_token = dir.join("dgi.token");
    std::fs::write(&file_token, "file-token\n").unwrap();
    let key_file = dir.join("secret.keys");
    keys(&key_file, &[KEY_1]);
    let config = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"web_api\"\nurl = {url:?}\ntoken_file = {file_token:?}\nstatus_interval_secs = 1\n\n[store]\nurl = {store:?}\nsecret_key_file = {key_file:?}\n",
        state = dir.join("state"),
        url = file_api.url(),
        store = server.socket_url(ROLE, ROLE),
    );
    let mut gateway = Gateway::start(dir, &config);
    let config_path = gateway.config.clone();

    // Added while the gateway runs; an organization on it at once; certified within seconds.
    let token_file = dir.join("shop.token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let token_path = token_file.display().to_string();
    let added = ok(
        dir,
        &config_path,
        &[
            "device",
            "add",
            "shop-2",
            "--kind",
            "web_api",
            "--url",
            &stored_api.url(),
            "--token-file",
            &token_path,
        ],
    );
    assert!(added.contains("shop-2"), "{added}");
    let key = add_org_with_key(dir, &config_path, "shop", "shop-2", None);
    let added_at = Instant::now();
    let answer = certified_within(&gateway, &key, "FV-1", Duration::from_secs(10)).await;
    assert!(added_at.elapsed() < Duration::from_secs(10));
    assert!(answer["codeDEFDGI"].is_string(), "{answer}");
    assert_eq!(stored_api.finalized_count(), 1, "through the device added");
    assert_eq!(file_api.finalized_count(), 0);

    // Changed while the gateway runs: a new URL and token, used by the next invoices.
    let moved_api = web_api("eyJ.moved-token").await;
    let moved_token = dir.join("moved.token");
    std::fs::write(&moved_token, "eyJ.moved-token\n").unwrap();
    let updated = ok(
        dir,
        &config_path,
        &[
            "device",
            "update",
            "shop-2",
            "--url",
            &moved_api.url(),
            "--token-file",
            moved_token.to_str().unwrap(),
        ],
    );
    assert!(updated.contains("shop-2"), "{updated}");
    // Each replica sees it at its next look (every second): until then, the old settings.
    let changed_at = Instant::now();
    let mut n = 0;
    while moved_api.finalized_count() == 0 {
        assert!(
            changed_at.elapsed() < Duration::from_secs(10),
            "the change is not used within 10 s: {}",
            gateway.log()
        );
        n += 1;
        certified_within(
            &gateway,
            &key,
            &format!("FV-1-{n}"),
            Duration::from_secs(10),
        )
        .await;
    }
    assert_eq!(
        moved_api.finalized_count(),
        1,
        "through the new URL and token"
    );
    let before_change = stored_api.finalized_count();

    // A name of the file, or one taken, is refused.
    for (name, why) in [
        ("dgi", "dgi"),
        ("shop-2", "shop-2"),
        ("sandbox-x", "sandbox-"),
    ] {
        let out = cli(
            dir,
            &config_path,
            &[
                "device",
                "add",
                name,
                "--url",
                "http://127.0.0.1:9",
                "--token-file",
                &token_path,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {}", said(&out));
        assert!(said(&out).contains(why), "{name}: {}", said(&out));
    }

    // Sealed at rest: neither the row, nor a dump, nor the listing shows the token.
    let row = server.sql(ROLE, "SELECT row_to_json(d)::text FROM devices d");
    assert!(row.contains("shop-2") && row.contains("v1:"), "{row}");
    assert!(
        !row.contains(TOKEN) && !row.contains("stored-device-secret"),
        "{row}"
    );
    let dump = String::from_utf8_lossy(&server.dump(ROLE)).into_owned();
    assert!(!dump.contains("stored-device-secret"));
    let listed = ok(dir, &config_path, &["device", "list"]);
    let listed_json = ok(dir, &config_path, &["device", "list", "--json"]);
    for shown in [&listed, &listed_json] {
        assert!(shown.contains("shop-2"), "{shown}");
        assert!(
            !shown.contains("stored-device-secret") && !shown.contains("v1:"),
            "{shown}"
        );
    }
    let key_1_id = row
        .split("\"key_id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    assert!(listed.contains(&key_1_id), "{listed}");

    // In use: not removed, the organization named.
    let refused = cli(dir, &config_path, &["device", "remove", "shop-2"]);
    assert_eq!(refused.status.code(), Some(1), "{}", said(&refused));
    assert!(said(&refused).contains("shop"), "{}", said(&refused));

    // Rotation: the new key first, rotate-key, then the old line removed; a gateway started
    // with the new key alone certifies.
    keys(&key_file, &[KEY_2, KEY_1]);
    let rotated = ok(dir, &config_path, &["store", "rotate-key"]);
    assert!(rotated.contains('1'), "{rotated}");
    let key_2_row = server.sql(ROLE, "SELECT key_id FROM devices WHERE name = 'shop-2'");
    assert_ne!(key_2_row, key_1_id);
    assert!(rotated.contains(&key_2_row), "{rotated}");
    assert!(ok(dir, &config_path, &["store", "rotate-key"]).contains('0'));
    keys(&key_file, &[KEY_2]);
    assert!(gateway.terminate());
    let gateway = Gateway::start(dir, &config);
    certified_within(&gateway, &key, "FV-2", Duration::from_secs(10)).await;
    assert_eq!(moved_api.finalized_count(), 2);
    assert_eq!(
        stored_api.finalized_count(),
        before_change,
        "never the old settings again"
    );
    drop(gateway);

    // A wrong key: the device's invoices refused as such (503, 150, Retry-After), never a
    // panic, never the token; the file's device still certifies.
    keys(&key_file, &[KEY_3]);
    let gateway = Gateway::start(dir, &config);
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let response = post_invoice(gateway.addr, &key, &invoice("FV-3")).await;
        if response.json["errorCode"] == 150 || Instant::now() > deadline {
            break response;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(refused.status, 503, "{}", refused.json);
    assert_eq!(refused.json["errorCode"], 150, "{}", refused.json);
    assert!(refused.header("retry-after").is_some());
    let log = gateway.log();
    assert!(log.contains("cannot be used by this replica"), "{log}");
    assert!(
        !log.contains("stored-device-secret") && !log.contains(KEY_3),
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(moved_api.finalized_count(), 2);
    let dgi_key = add_org_with_key(dir, &config_path, "other", "dgi", None);
    certified_within(&gateway, &dgi_key, "FV-9", Duration::from_secs(10)).await;

    // A device no organization uses is removed, and listed no more.
    let file_token_path = file_token.display().to_string();
    ok(
        dir,
        &config_path,
        &[
            "device",
            "add",
            "spare",
            "--url",
            &file_api.url(),
            "--token-file",
            &file_token_path,
        ],
    );
    ok(dir, &config_path, &["device", "remove", "spare"]);
    let listed = ok(dir, &config_path, &["device", "list", "--json"]);
    assert!(
        !listed.contains("spare") && listed.contains("shop-2"),
        "{listed}"
    );
    let again = cli(dir, &config_path, &["device", "remove", "spare"]);
    assert_eq!(again.status.code(), Some(1), "{}", said(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_gateway_with_no_devices_block_serves_the_stored_ones_alone() {
    let Some(server) = PgServer::init("a hosted gateway with stored devices only") else {
        return;
    };
    server.create_role_and_database(ROLE, "devices-secret-2");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let api = web_api(TOKEN).await;
    // `demo = false`, no [[devices]], a key file: neither the bundled simulator nor a halted
    // service (without the key file: halted, waiting for a box, as on the embedded store).
    let config = no_devices_block(&server, dir, "demo = false\n");
    let gateway = Gateway::start(dir, &config);
    let token_file = dir.join("shop.token");
    std::fs::write(&token_file, TOKEN).unwrap();
    ok(
        dir,
        &gateway.config,
        &[
            "device",
            "add",
            "shop-1",
            "--url",
            &api.url(),
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    let key = add_org_with_key(dir, &gateway.config, "shop", "shop-1", None);
    certified_within(&gateway, &key, "FV-1", Duration::from_secs(10)).await;
    assert_eq!(api.finalized_count(), 1);
    let orgs = ok(dir, &gateway.config, &["org", "list", "--json"]);
    assert!(!orgs.contains("demo"), "no demo organization: {orgs}");
    // `config check` reads the key file as `serve` does: its keys' ids, never a key.
    let checked = said(&cli(dir, &gateway.config, &["config", "check"]));
    let line = checked
        .lines()
        .find(|line| line.contains("secret.keys"))
        .unwrap_or_else(|| panic!("{checked}"));
    assert!(line.starts_with("OK") && line.contains(" k"), "{line}");
    assert!(!checked.contains(KEY_1), "{checked}");
    // No `[[devices]]` but an e-MCF kept in the database: named, not "no device configured".
    assert!(
        checked.contains("gardé dans la base certifie\u{a0}: shop-1"),
        "{checked}"
    );
    assert!(!checked.contains("aucun appareil configuré"), "{checked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_s_invoice_reaching_another_replica_is_refused_never_forwarded() {
    let Some(server) = PgServer::init("a box on one replica of two") else {
        return;
    };
    server.create_role_and_database(ROLE, "devices-secret-3");
    let root = tempfile::tempdir().unwrap();
    let (with_box, without) = (root.path().join("a"), root.path().join("b"));
    std::fs::create_dir_all(&with_box).unwrap();
    std::fs::create_dir_all(&without).unwrap();
    let store = format!("\n[store]\nurl = {:?}\n", server.socket_url(ROLE, ROLE));
    // Replica A has the box `shop` plugged in; replica B, on the same database, has none.
    let sim = Sim::start(&with_box).await;
    let a = Gateway::start(
        &with_box,
        &format!("{}{store}", config_with_device(&with_box, &sim.link)),
    );
    let key_file = without.join("secret.keys");
    keys(&key_file, &[KEY_1]);
    let b = Gateway::start(
        &without,
        &format!(
            "state_dir = {:?}\nlisten = \"127.0.0.1:0\"\ndemo = false\n{store}secret_key_file = {key_file:?}\n",
            without.join("state")
        ),
    );
    a.wait_ready().await;
    let key = add_org_with_key(&with_box, &a.config, "acme", "shop", None);

    let refused = post_invoice(b.addr, &key, &invoice("B-1")).await;
    assert_eq!(refused.status, 503, "{}", refused.json);
    assert_eq!(refused.json["errorCode"], 156, "{}", refused.json);
    assert!(refused.header("retry-after").is_none(), "a person must act");
    let desc = refused.json["errorDesc"].as_str().unwrap_or_default();
    assert!(desc.contains("shop") && desc.contains("réplique"), "{desc}");
    // Nothing written by the refusal: the same invoice certifies once, on A.
    let certified = post_invoice(a.addr, &key, &invoice("B-1")).await;
    assert_eq!(certified.status, 200, "{}", certified.json);
    let entries = server.sql(ROLE, "SELECT count(*) FROM register_entries");
    assert_eq!(entries, "1");
}

#[test]
fn the_embedded_store_refuses_device_add_saying_its_devices_are_the_file_s() {
    let dir = tempfile::tempdir().unwrap();
    let config: PathBuf = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("state_dir = {:?}\n", dir.path().join("state")),
    )
    .unwrap();
    let token = dir.path().join("t");
    std::fs::write(&token, "x").unwrap();
    let out = cli(
        dir.path(),
        &config,
        &[
            "device",
            "add",
            "shop-2",
            "--url",
            "http://127.0.0.1:9",
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let text = said(&out);
    assert!(
        text.contains("[[devices]]") && text.contains("[store] url"),
        "{text}"
    );
    assert!(!dir.path().join("state").exists() || !dir.path().join("state/journal").exists());
}

/// `org add --device <kept device>` while no replica runs, `demo` left at its default: the NIF
/// cannot be asked of the e-MCF, so the organization is saved with the warning that it will be
/// checked at the first invoice, never compared with the bundled simulator's NIF.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn org_add_on_a_kept_device_with_the_service_stopped_warns_and_saves() {
    let Some(server) = PgServer::init("org add on a kept device, service stopped") else {
        return;
    };
    server.create_role_and_database(ROLE, "devices-secret-3");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let api = web_api(TOKEN).await;
    let config = no_devices_block(&server, dir, "");
    let mut gateway = Gateway::start(dir, &config);
    let config_path = gateway.config.clone();
    assert!(gateway.terminate(), "the gateway stops cleanly");
    let token_file = dir.join("shop.token");
    std::fs::write(&token_file, TOKEN).unwrap();
    ok(
        dir,
        &config_path,
        &[
            "device",
            "add",
            "shop-3",
            "--url",
            &api.url(),
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    let args = [
        "org",
        "add",
        "--id",
        "shop3",
        "--name",
        "Boutique",
        "--nif",
        "A9999999Z",
        "--isf",
        "ISF-1",
        "--device",
        "shop-3",
    ];
    let out = cli(dir, &config_path, &args);
    let text = said(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("n'a pas pu être vérifié") && text.contains("shop-3"),
        "{text}"
    );
    assert!(!text.contains("personnalisé pour le NIF"), "{text}");
    let orgs = ok(dir, &config_path, &["org", "list", "--json"]);
    assert!(orgs.contains("A9999999Z"), "{orgs}");
}
