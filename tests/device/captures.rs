//! Wire captures as golden exchanges (`tests/captures/*.cap`, the format of
//! `mcf_sfe::capture`, written by `serve --capture` or `device probe --capture`).
//!
//! Two checks for every capture:
//! 1. Read: every reply of the box reads with the gateway's tolerant reader (with the dialect
//!    the capture's header names), and the `# expect` lines hold:
//!    - `# expect anomaly <CMD> <field>`: the reader reports that difference (e.g. `C1h curCode`);
//!    - `# expect no-anomaly`: it reports none;
//!    - `# expect certified <FC/TC FT> <codeDEFDGI>`: a 38h reply certified with these elements.
//! 2. Replay: the real binary, configured as the header says, certifies the capture's invoices
//!    (its `# <device> invoice {json}` lines, written by `serve --capture`) against a box that
//!    answers with the recorded bytes (`emcf_sim::replay`), and gets the recorded elements.
//!
//! To turn a capture from a shop into a regression test: copy it here as `<name>.cap`, add the
//! `# expect` lines the box's answers justify, run `cargo test --test device captures::`.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{add_org_with_key_nif, config_with_box, post_invoice, Gateway};
use emcf_sim::replay::{self, ReplayEnd, Script};
use mcf_sfe::capture::{self, Capture};
use mcf_sfe::reply::Reading;
use mcf_sfe::{Dialect, FromDevice, LineBreaks, Reply};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/captures");

fn captures() -> Vec<(PathBuf, Capture)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("tests/captures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cap"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no capture in {DIR}");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("capture");
            let parsed =
                capture::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, parsed)
        })
        .collect()
}

/// The device header line `device <name> <path> ... line breaks X, status map Y, SEQ replay Z`.
struct Header {
    line_breaks: LineBreaks,
    status_map: String,
    seq_replay: bool,
}

fn header(capture: &Capture, device: &str) -> Header {
    let line = capture
        .comments
        .iter()
        .find(|c| c.starts_with(&format!("device {device} ")))
        .unwrap_or_else(|| panic!("no `device {device}` header line"));
    let value = |key: &str| {
        line.split(", ")
            .find_map(|part| part.split_once(key).map(|(_, v)| v.trim().to_string()))
            .unwrap_or_default()
    };
    Header {
        line_breaks: LineBreaks::from_name(&value("line breaks ")).unwrap_or_default(),
        status_map: value("status map "),
        seq_replay: value("SEQ replay ") != "false",
    }
}

/// Every reply of `device`, read with the header's dialect, with its command byte.
fn readings(capture: &Capture, device: &str) -> Vec<(u8, Result<Reading, String>)> {
    let head = header(capture, device);
    let dialect = Dialect {
        line_breaks: head.line_breaks,
        refusal_by_status: head.status_map != "none",
    };
    let script = Script::from_capture(capture, device).expect("requests");
    let mut out = Vec::new();
    for step in &script.steps {
        for (_, item) in &step.answer {
            if let FromDevice::Reply(reply) = item {
                if reply.answers(&step.request) {
                    let read = Reply::read(reply.cmd(), reply.data(), reply.status(), &dialect)
                        .map_err(|e| e.to_string());
                    out.push((reply.cmd(), read));
                }
            }
        }
    }
    out
}

#[test]
fn every_capture_reads_as_its_expectations_say() {
    for (path, capture) in captures() {
        let name = path.display();
        for device in capture.devices() {
            let readings = readings(&capture, &device);
            assert!(!readings.is_empty(), "{name}: no reply");
            let mut anomalies = Vec::new();
            let mut certified = Vec::new();
            for (cmd, read) in &readings {
                let reading = read
                    .as_ref()
                    .unwrap_or_else(|e| panic!("{name}: an unreadable {cmd:02X}h reply: {e}"));
                for a in &reading.anomalies {
                    anomalies.push(format!("{cmd:02X}h {}", a.field));
                }
                if let Reply::Certified(cert) = &reading.reply {
                    certified.push(format!("{} {}", cert.counters(), cert.code_def));
                }
            }
            for expectation in capture.expectations() {
                if let Some(what) = expectation.strip_prefix("anomaly ") {
                    assert!(
                        anomalies.iter().any(|a| a == what),
                        "{name}: no {what} in {anomalies:?}"
                    );
                } else if expectation == "no-anomaly" {
                    assert!(anomalies.is_empty(), "{name}: {anomalies:?}");
                } else if let Some(what) = expectation.strip_prefix("certified ") {
                    assert!(
                        certified.iter().any(|c| c == what),
                        "{name}: {what} not in {certified:?}"
                    );
                } else {
                    panic!("{name}: unknown expectation {expectation:?}");
                }
            }
        }
    }
}

/// The invoices a `serve` capture noted for `device`, in order.
fn invoices(capture: &Capture, device: &str) -> Vec<Value> {
    let prefix = format!("{device} invoice ");
    capture
        .comments
        .iter()
        .filter_map(|c| c.strip_prefix(&prefix))
        .map(|json| serde_json::from_str(json).expect("an invoice line is JSON"))
        .collect()
}

/// The NIF the box reported in the capture's first C1h.
fn box_nif(capture: &Capture, device: &str) -> String {
    readings(capture, device)
        .into_iter()
        .find_map(|(_, read)| match read.ok()?.reply {
            Reply::DeviceState(state) => Some(state.nif),
            _ => None,
        })
        .expect("a C1h in the capture")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_serve_capture_replays_through_the_real_binary() {
    let mut replayed = 0;
    for (path, capture) in captures() {
        for device in capture.devices() {
            let invoices = invoices(&capture, &device);
            if invoices.is_empty() {
                continue;
            }
            replay_one(&path, &capture, &device, &invoices).await;
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no capture with invoices to replay");
}

async fn replay_one(path: &Path, capture: &Capture, device: &str, invoices: &[Value]) {
    let name = path.display();
    let dir = tempfile::tempdir().expect("tempdir");
    let script = Script::from_capture(capture, device).expect("requests");
    let mut pty = emcf_sim::port::Pty::open(None).expect("pty");
    let port = pty.path().to_path_buf();
    let master = pty.take_master().expect("pty master");
    let stop = CancellationToken::new();
    let server_stop = stop.clone();
    // Silences and SYN at a tenth of their recorded length: the host's rules are the same.
    let server =
        tokio::spawn(async move { replay::serve(master, &script, 10, &server_stop).await });

    let head = header(capture, device);
    let mut config = config_with_box(dir.path(), &port)
        .replace("name = \"shop\"", &format!("name = {device:?}"));
    config.push_str(&format!(
        "line_breaks = {:?}\nstatus_map = {:?}\nseq_replay = {}\nhealth_interval_secs = 0\n",
        head.line_breaks.as_str(),
        if head.status_map.is_empty() {
            "simulator"
        } else {
            head.status_map.as_str()
        },
        head.seq_replay,
    ));
    let gateway = Gateway::start(dir.path(), &config);
    let nif = box_nif(capture, device);
    let key = tokio::task::block_in_place(|| {
        add_org_with_key_nif(dir.path(), &gateway.config, "replay", device, &nif)
    });
    let expected: Vec<String> = capture
        .expectations()
        .into_iter()
        .filter_map(|e| e.strip_prefix("certified ").map(str::to_string))
        .collect();
    for (i, invoice) in invoices.iter().enumerate() {
        let response = post_invoice(gateway.addr, &key, invoice).await;
        if response.status != 200 && server.is_finished() {
            let end = server.await.expect("replay task");
            panic!(
                "{name}: invoice {i}: the replay stopped: {end:?}\n{}",
                gateway.log()
            );
        }
        assert_eq!(
            response.status,
            200,
            "{name}: invoice {i}: {}\n{}",
            response.body,
            gateway.log()
        );
        let got = format!(
            "{} {}",
            response.json["counters"].as_str().unwrap_or_default(),
            response.json["codeDEFDGI"].as_str().unwrap_or_default()
        );
        if let Some(want) = expected.get(i) {
            assert_eq!(&got, want, "{name}: invoice {i}");
        }
    }
    drop(gateway);
    stop.cancel();
    let end = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("replay ends")
        .expect("replay task");
    match end {
        Ok(ReplayEnd::Done | ReplayEnd::Stopped(_) | ReplayEnd::HostClosed(_)) => {}
        Err(error) => panic!("{name}: the gateway no longer talks as recorded: {error}"),
    }
    drop(pty);
}
