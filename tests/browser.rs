//! The dashboard in a real headless Chromium: starts the gateway on a simulator (harness),
//! issues a dashboard token and an API key through the CLI, then runs
//! `tests/browser/dashboard_test.py` (selenium) against it and expects exit status 0: every
//! page at phone size (390x844) and desktop size (1280x800), in French and in English, fits
//! the screen and says its language; Disable asks for confirmation; amounts and times as each
//! reader writes them. One browser session, resized (about 10 s).
//!
//! Needs `scripts/setup-browser` (Debian chromium + chromium-driver, selenium in `.venv`).
//! The Python is `$EMCF_TEST_PYTHON`, else `.venv/bin/python` if it exists, else `python3`.
//! `EMCF_SKIP_BROWSER_TESTS=1` skips it explicitly (it never skips silently).

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_in_headless_chromium() {
    if std::env::var("EMCF_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: EMCF_SKIP_BROWSER_TESTS=1");
        return;
    }
    // The project's own set-up (idempotent; installs Debian's chromium as root if missing).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = tokio::task::block_in_place(|| {
        std::process::Command::new(root.join("scripts/setup-browser"))
            .current_dir(root)
            .output()
            .expect("scripts/setup-browser runs")
    });
    assert!(
        setup.status.success(),
        "scripts/setup-browser failed:\n{}{}",
        String::from_utf8_lossy(&setup.stdout),
        String::from_utf8_lossy(&setup.stderr)
    );
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: run scripts/setup-browser (or set EMCF_SKIP_BROWSER_TESTS=1)"
        );
    }
    let python = python();
    let has_selenium = std::process::Command::new(&python)
        .args(["-c", "import selenium"])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        has_selenium,
        "{} cannot import selenium: run scripts/setup-browser (or set EMCF_TEST_PYTHON)",
        python.display()
    );

    let setup = ApiSetup::start(None).await;
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let api_key = setup.issue_key(false);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/dashboard_test.py");
    let screenshots = setup.dir.path().join("screenshots");
    let base = format!("http://{}", setup.addr());
    let started = Instant::now();
    let mut child = tokio::process::Command::new(&python)
        .arg(&script)
        .args(["--base", &base, "--token", &token, "--api-key", &api_key])
        .args(["--rn", "WEB-1", "--org-name", "Test shop"])
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
        setup.gateway.log()
    );
    assert!(out.contains("all checks passed"), "{out}");
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
    if std::env::var("EMCF_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: EMCF_SKIP_BROWSER_TESTS=1");
        return;
    }
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: run scripts/setup-browser (or set EMCF_SKIP_BROWSER_TESTS=1)"
        );
    }
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
    let mut command = std::process::Command::new(python());
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
