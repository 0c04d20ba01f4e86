//! The dashboard in a real headless Chromium: starts the gateway on a simulator (harness),
//! issues a dashboard token and an API key through the CLI, then runs
//! `tests/browser/dashboard_test.py` (selenium) against it and expects exit status 0: every
//! page at phone size (390x844) and desktop size (1280x800), in French and in English, fits
//! the screen and says its language; Disable asks for confirmation; amounts and times as each
//! reader writes them; the overview in plain words (no protocol word outside its collapsed
//! technical details, a grey badge for a sandbox not used yet). One browser session, resized
//! (about 10 s). A second run settles an invoice in doubt on a gateway on the web API
//! simulator: the banners agree afterwards.
//!
//! Needs Debian's chromium and chromium-driver, and selenium in `.venv`: `scripts/setup-browser`
//! installs them (`.ci/run` runs it); missing, the tests are skipped with a note, except under
//! CI (`CI=true`), where they fail.
//! The Python is `$EMCF_TEST_PYTHON`, else `.venv/bin/python` if it exists, else `python3`.
//! `EMCF_SKIP_BROWSER_TESTS=1` skips it explicitly (it never skips silently).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use emcf_sim::edef::{start_edef, EdefOptions};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("EMCF_TEST_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(python);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Whether the browser tests run (`EMCF_SKIP_BROWSER_TESTS=1` skips them, said on stderr);
/// when they do, Chromium, chromedriver and selenium are there (else skipped with a note
/// outside CI, failed under CI: `scripts/setup-browser` installs them, and `.ci/run` runs it),
/// and the Python to run the script is returned.
fn browser_ready() -> Option<PathBuf> {
    if std::env::var("EMCF_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: EMCF_SKIP_BROWSER_TESTS=1");
        return None;
    }
    const SUBJECT: &str = "the dashboard in Chromium";
    const SETUP: &str = "run scripts/setup-browser (Debian's chromium and chromium-driver, \
                         selenium in .venv); .ci/run does";
    for tool in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(tool).exists() {
            needs::missing(SUBJECT, &format!("no {tool}"), SETUP);
            return None;
        }
    }
    let python = python();
    if !needs::runs(&python, &["-c", "import selenium"]) {
        let what = format!("{} cannot import selenium", python.display());
        needs::missing(SUBJECT, &what, SETUP);
        return None;
    }
    Some(python)
}

/// Runs `tests/browser/dashboard_test.py` with `args` against `gateway` (screenshots in
/// `dir/screenshots`); asserts it passed (else its output, the screenshots kept in
/// `$TMPDIR/emcf-browser-screenshots` and the gateway's log); returns its output.
async fn run_script(python: &Path, gateway: &Gateway, dir: &Path, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/dashboard_test.py");
    let screenshots = dir.join("screenshots");
    let base = format!("http://{}", gateway.addr);
    let started = Instant::now();
    let mut child = tokio::process::Command::new(python)
        .arg(&script)
        .args(["--base", &base])
        .args(args)
        .args(["--chromium", CHROMIUM, "--chromedriver", CHROMEDRIVER])
        .arg("--screenshots")
        .arg(&screenshots)
        .env("SE_OFFLINE", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let read = |mut pipe: Box<dyn tokio::io::AsyncRead + Unpin + Send>| {
        tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut text).await;
            text
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let status = match tokio::time::timeout(Duration::from_secs(180), child.wait()).await {
        Ok(status) => status.expect("python runs"),
        Err(_) => {
            let _ = child.kill().await;
            panic!("the browser test did not finish within 180 s");
        }
    };
    let (out, err) = (out.await.unwrap_or_default(), err.await.unwrap_or_default());
    println!("{out}");
    eprintln!("{err}");
    assert!(
        status.success(),
        "browser test failed ({status}) after {:?}; screenshots kept in {}\n{out}\n{err}\ngateway log:\n{}",
        started.elapsed(),
        {
            let kept = std::env::temp_dir().join("emcf-browser-screenshots");
            let _ = std::fs::create_dir_all(&kept);
            for entry in std::fs::read_dir(&screenshots).into_iter().flatten().flatten() {
                let _ = std::fs::copy(entry.path(), kept.join(entry.file_name()));
            }
            kept.display().to_string()
        },
        gateway.log()
    );
    assert!(out.contains("all checks passed"), "{out}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_in_headless_chromium() {
    let Some(python) = browser_ready() else {
        return;
    };
    let setup = ApiSetup::start(None).await;
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let api_key = setup.issue_key(false);
    let out = run_script(
        &python,
        &setup.gateway,
        setup.dir.path(),
        &[
            "--token",
            &token,
            "--api-key",
            &api_key,
            "--rn",
            "WEB-1",
            "--org-name",
            "Test shop",
        ],
    )
    .await;
    assert!(
        out.contains("24 page views checked"),
        "6 pages x 2 sizes x 2 languages: {out}"
    );
    let log = setup.gateway.log();
    assert!(
        !log.contains(&token[21..]),
        "the dashboard token is in the log"
    );
    assert!(!log.contains(&api_key[22..]), "the API key is in the log");
}

/// Issue 24, point 5: the printable fiscal block (the API's `receipt.html` in its three
/// layouts, the dashboard's print) fits a phone (390 px) and a desktop (1280 px) without a
/// horizontal scroll, and the A4 layout still prints as the A4 block
/// (`tests/browser/receipt_test.py`). A USD credit note, whose block is the longest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipt_pages_fit_a_phone_in_headless_chromium() {
    let Some(python) = browser_ready() else {
        return;
    };
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let sale = post_invoice(addr, &setup.key, &usd_invoice("PHONE-FV-2026/000001")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let mut note = credit_note_of(
        "PHONE-FA-2026/000001",
        sale.json["codeDEFDGI"].as_str().expect("code"),
        "FA",
    );
    note["curCode"] = "USD".into();
    note["curRate"] = "2850.1234".into();
    note["curDate"] = "2026-11-21T10:00:00+01:00".into();
    let note = post_invoice(addr, &setup.key, &note).await;
    assert_eq!(note.status, 200, "{}", note.body);
    let sequence = note.json["sequence"].as_u64().expect("sequence");
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let api = "/api/v1/Invoice/PHONE-FA-2026%2F000001/receipt.html";
    let dashboard = format!("/dashboard/invoices/production/{sequence}/receipt");
    let paths = [
        format!("{api}?layout=a4"),
        format!("{api}?layout=80mm&lang=en"),
        format!("{api}?layout=58mm"),
        format!("{dashboard}?layout=a4"),
        format!("{dashboard}?layout=80mm"),
    ];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/receipt_test.py");
    let mut command = std::process::Command::new(&python);
    command
        .arg(&script)
        .args(["--base", &format!("http://{addr}"), "--api-key", &setup.key])
        .args(["--session", &session])
        .args(["--chromium", CHROMIUM, "--chromedriver", CHROMEDRIVER])
        .env("SE_OFFLINE", "true");
    for path in &paths {
        command.args(["--path", path]);
    }
    let out = tokio::task::block_in_place(|| command.output().expect("python runs"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("10 receipt views checked"), "{stdout}");
}

/// Issue 24: an invoice in doubt (a web API confirm whose answer was lost) on the overview, at
/// both sizes and in both languages, with its section and the alert's banner; settled with
/// its form on a phone; then the green "settled" and neither the banner nor the section.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoice_in_doubt_settled_in_headless_chromium() {
    let Some(python) = browser_ready() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let api = start_edef(
        "127.0.0.1:0".parse().expect("address"),
        EdefOptions::default(),
    )
    .await
    .expect("the web API simulator starts");
    let token_file = dir.path().join("dgi.token");
    std::fs::write(&token_file, "sim-token\n").expect("token file");
    let config = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\n\
         kind = \"edef\"\nurl = {url:?}\ntoken_file = {token_file:?}\nstatus_interval_secs = 1\n",
        state = dir.path().join("state"),
        url = api.url(),
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "dgi", None)
    });
    gateway.wait_ready().await;
    api.faults().update(|f| f.drop_next_confirm_answer = 1);
    let lost = post_invoice(gateway.addr, &key, &invoice("D-1")).await;
    assert_error(&lost, 409, 111);
    let token = issue_dashboard_token(&gateway, "acme");
    let out = run_script(
        &python,
        &gateway,
        dir.path(),
        &["--scenario", "settlement", "--token", &token],
    )
    .await;
    assert!(
        out.contains("8 page views checked"),
        "2 pages (in doubt, settled) x 2 sizes x 2 languages: {out}"
    );
    drop(gateway);
    api.shutdown().await;
}
