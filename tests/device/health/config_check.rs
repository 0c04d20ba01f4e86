//! `emcf-gateway config check` through the real binary, in the `health` module of the
//! `device` test binary
//! (it reaches a box the way `device probe` does: on its port while the service is stopped,
//! through the service while it runs):
//! - a right configuration (a box on a pty, the web API simulator with its token file in
//!   0600, the SMTP sink) passes with exit 0, service stopped and running, and `--smtp` logs
//!   in without sending anything;
//! - a missing device path, a token file others can read, a state directory others can
//!   write, a state directory that is a file, an unknown key, a relay that does not speak
//!   the configured TLS, and a relay on a closed port each exit 1 with the French line that
//!   says the fix;
//! - run as `nobody`: a port it may not open (the `dialout` fix) and a state directory it may
//!   not write to.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::Value;

use super::common::{cli, config_with_device, nbsp, Gateway, Sim, SIM_NIF};
use super::smtp::SmtpSink;

/// `config check ARGS` with `config`: its exit status and stdout (stderr kept for failures).
fn check(dir: &Path, config: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["config", "check"];
    all.extend_from_slice(args);
    let out: Output = tokio::task::block_in_place(|| cli(dir, config, &all));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The line of `text` that starts with `level` and contains every one of `parts`.
fn line_with<'a>(text: &'a str, level: &str, parts: &[&str]) -> &'a str {
    text.lines()
        .find(|line| line.starts_with(level) && parts.iter().all(|p| line.contains(p)))
        .unwrap_or_else(|| panic!("no {level} line with {parts:?} in:\n{text}"))
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

async fn web_api() -> RunningEdef {
    start_edef("127.0.0.1:0".parse().expect("addr"), EdefOptions::default())
        .await
        .expect("the web API simulator starts")
}

/// A box named `shop` at `device`, the web API entry `dgi` at `api` with `token`, and
/// `[smtp]` at `relay` (no TLS, no login).
fn config_text(dir: &Path, device: &Path, api: &RunningEdef, token: &Path, relay: u16) -> String {
    format!(
        "{}\n[[devices]]\nname = \"dgi\"\nkind = \"edef\"\nurl = {:?}\ntoken_file = {token:?}\n\n\
         [smtp]\nhost = \"127.0.0.1\"\nport = {relay}\nfrom = \"alertes@shop.cd\"\ntls = \"none\"\n",
        config_with_device(dir, device),
        api.url(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_right_configuration_passes_with_the_service_stopped_and_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let api = web_api().await;
    let sink = SmtpSink::start().await;
    let token = dir.path().join("dgi.token");
    std::fs::write(&token, "sim-token\n").expect("token");
    chmod(&token, 0o600);
    let text = config_text(dir.path(), &sim.link, &api, &token, sink.addr.port());
    let config = dir.path().join("config.toml");
    std::fs::write(&config, &text).expect("config");
    chmod(&config, 0o640);
    std::fs::create_dir(dir.path().join("state")).expect("state");
    chmod(&dir.path().join("state"), 0o700);

    // Service stopped: the box is opened on its port (read-only), the relay tried.
    let (status, out, err) = check(dir.path(), &config, &["--smtp"]);
    assert_eq!(status, Some(0), "{out}\n{err}");
    let link = sim.link.display().to_string();
    let on_port = nbsp(&format!(
        "appareil « shop » (sur {link} à 115200 bauds, en lecture seule) : il répond, NIM SIM0000001, NIF {SIM_NIF}"
    ));
    line_with(&out, "OK", &[&on_port]);
    line_with(&out, "OK", &[&nbsp("appareil « dgi » (API web"), SIM_NIF]);
    line_with(&out, "OK", &["token_file (dgi)", "mode 0600"]);
    line_with(
        &out,
        "OK",
        &["relais SMTP", "NOOP acceptés", "aucun message envoyé"],
    );
    line_with(&out, "info", &["service arrêté"]);
    assert!(out.contains("Tout est en ordre"), "{out}");
    assert!(
        sink.messages().is_empty(),
        "nothing is sent: {:?}",
        sink.messages()
    );

    // Service running: it holds the port, so the box is asked through it.
    let gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let (status, out, err) = check(dir.path(), &config, &["--lang", "en"]);
    assert_eq!(status, Some(0), "{out}\n{err}");
    line_with(
        &out,
        "OK",
        &["device \"shop\" (through the service)", SIM_NIF],
    );
    line_with(&out, "note", &["SMTP relay", "not tried", "--smtp"]);
    let (status, out, err) = check(dir.path(), &config, &["--json"]);
    assert_eq!(status, Some(0), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let shop = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["check"] == "device" && c["subject"] == "shop")
        .expect("shop checked");
    assert_eq!(shop["level"], "ok", "{shop}");
    assert!(
        shop["text"]
            .as_str()
            .is_some_and(|t| t.contains("à travers le service")),
        "{shop}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_problem_exits_1_with_its_fix_in_french() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = web_api().await;
    let sink = SmtpSink::start().await;
    let token = dir.path().join("dgi.token");
    std::fs::write(&token, "sim-token\n").expect("token");
    chmod(&token, 0o600);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("state");
    chmod(&state, 0o700);
    let missing = dir.path().join("by-id").join("usb-box");
    let config = dir.path().join("config.toml");
    let write = |text: &str| {
        std::fs::write(&config, text).expect("config");
        chmod(&config, 0o600);
    };
    let failed = |args: &[&str]| {
        let (status, out, err) = check(dir.path(), &config, args);
        assert_eq!(status, Some(1), "{out}\n{err}");
        assert!(err.starts_with("erreur"), "{err}");
        out
    };

    // The box's path does not exist: said, with where to find its stable name.
    write(&config_text(
        dir.path(),
        &missing,
        &api,
        &token,
        sink.addr.port(),
    ));
    let out = failed(&[]);
    let missing_text = missing.display().to_string();
    line_with(
        &out,
        "ERREUR",
        &[
            &nbsp("appareil « shop » :"),
            &missing_text,
            "n'existe pas",
            "ls -l /dev/serial/by-id/",
        ],
    );
    // What is right is still said: the other device, the token file.
    line_with(&out, "OK", &[&nbsp("appareil « dgi »")]);
    line_with(&out, "OK", &["token_file (dgi)"]);

    // The token file can be read by others: chmod 600.
    chmod(&token, 0o644);
    let out = failed(&[]);
    let token_text = token.display().to_string();
    line_with(
        &out,
        "ERREUR",
        &[
            "token_file (dgi)",
            "mode 0644",
            &format!("chmod 600 {token_text}"),
        ],
    );
    chmod(&token, 0o600);

    // The state directory can be written by others: serve would refuse it.
    chmod(&state, 0o777);
    let out = failed(&[]);
    let state_text = state.display().to_string();
    line_with(
        &out,
        "ERREUR",
        &[&state_text, "mode 0777", &format!("chmod 700 {state_text}")],
    );
    chmod(&state, 0o700);

    // The state directory is a file.
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "").expect("file");
    let on_file = format!(
        "state_dir = {file:?}\n{}",
        config_text(dir.path(), &missing, &api, &token, sink.addr.port())
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n")
    );
    write(&on_file);
    let out = failed(&[]);
    line_with(&out, "ERREUR", &["n'est pas un dossier", "state_dir"]);

    // An unknown key: the parser's refusal, the keys allowed, and nothing else tried.
    write("max_conections = 5\n");
    let out = failed(&[]);
    line_with(
        &out,
        "ERREUR",
        &[&nbsp("clé inconnue « max_conections »"), "max_connections"],
    );
    line_with(&out, "info", &["corrigez d'abord le fichier"]);

    // TLS the relay does not speak: from the first byte, or STARTTLS it does not offer.
    let plain = config_text(dir.path(), &missing, &api, &token, sink.addr.port());
    for tls in ["tls", "starttls"] {
        write(&plain.replace("tls = \"none\"", &format!("tls = \"{tls}\"")));
        let out = failed(&["--smtp"]);
        let said = nbsp(&format!(
            "la connexion chiffrée a échoué avec tls = « {tls} »"
        ));
        line_with(&out, "ERREUR", &["relais SMTP", &said, "port 587"]);
    }
    assert!(sink.messages().is_empty(), "{:?}", sink.messages());

    // The relay on a closed port, with --smtp.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    write(&config_text(dir.path(), &missing, &api, &token, port));
    let out = failed(&["--smtp"]);
    line_with(
        &out,
        "ERREUR",
        &[
            "relais SMTP",
            &format!("127.0.0.1:{port}"),
            "injoignable",
            "smtp.port",
        ],
    );
}

/// What only another account than root meets: a box's port it may not open (the `dialout`
/// fix) and a state directory it may not write to. The check runs as `nobody` (setpriv);
/// skipped with a note when this test does not run as root (a failure under CI, which runs
/// as root), or nobody cannot reach the binary.
#[test]
fn another_account_is_told_what_it_may_not_open_or_write() {
    if !super::common::needs::is_root() {
        return super::common::needs::missing(
            "config check as another account",
            "not root (setpriv needs it)",
            "run the tests as root; .ci/run does",
        );
    }
    let as_nobody = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(super::common::binary())
            .args(args)
            .env("EMCF_CONFIG", "")
            .output()
    };
    // The binary must be reachable by nobody (a checkout under /root is not).
    if !as_nobody(&["--version".as_ref()]).is_ok_and(|out| out.status.success()) {
        eprintln!(
            "SKIPPED: nobody cannot run {} (setpriv)",
            super::common::binary()
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    chmod(dir.path(), 0o755);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("state");
    chmod(&state, 0o755);
    let port = dir.path().join("ttyBOX");
    std::fs::write(&port, "").expect("port");
    chmod(&port, 0o600);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("state_dir = {state:?}\n\n[[devices]]\nname = \"shop\"\npath = {port:?}\n"),
    )
    .expect("config");
    chmod(&config, 0o644);
    let out = as_nobody(&[
        "--config".as_ref(),
        config.as_os_str(),
        "config".as_ref(),
        "check".as_ref(),
    ])
    .expect("setpriv runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state_text = state.display().to_string();
    line_with(
        &text,
        "ERREUR",
        &[
            "ce compte (nobody) ne peut pas écrire",
            &state_text,
            "propriétaire root",
        ],
    );
    let port_text = port.display().to_string();
    line_with(
        &text,
        "ERREUR",
        &[
            "permission refusée sur",
            &port_text,
            "sudo usermod -aG dialout nobody",
        ],
    );
}

/// The packaged `/etc/emcf-gateway/config.toml` as shipped (`demo = false`, the box's block
/// still commented out) passes: exit 0, with the warning that nothing is certified until a
/// box is named, and how.
#[test]
fn the_packaged_configuration_passes_and_says_no_box_is_named_yet() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/systemd/config.toml.example"
    ))
    .expect("the packaged configuration");
    let text = shipped.replace(
        "state_dir = \"/var/lib/emcf-gateway\"",
        &format!("state_dir = {:?}", state.display().to_string()),
    );
    assert_ne!(text, shipped, "the packaged file names its state_dir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, text).expect("config");
    chmod(&config, 0o640);
    let (status, out, err) = check(dir.path(), &config, &[]);
    assert_eq!(status, Some(0), "{out}\n{err}");
    line_with(
        &out,
        "ATTENTION",
        &[
            &nbsp("aucun appareil configuré (demo = false) :"),
            "décommentez et complétez le bloc [[devices]]",
        ],
    );
}
