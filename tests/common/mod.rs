//! Harness for the end-to-end tests: the real `emcf-gateway` binary as a child process, the
//! simulator serving a real pty in this test process (bytes through tokio-serial, with a
//! stable symlink path so it can vanish and come back), and a small HTTP/1.1 client on a
//! real socket.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use emcf_sim::faults::FaultConfig;
use emcf_sim::{start_on_pty, RunningSim, SimOptions};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The NIF the simulator is personalized for by default.
pub const SIM_NIF: &str = "A1234567B";

/// A simulated e-MCF box on a pty reachable at `link` (a symlink), restartable.
pub struct Sim {
    pub link: PathBuf,
    pub state: PathBuf,
    running: Option<RunningSim>,
    custom: Option<SimChange>,
}

/// A change to the usual simulator options, applied at every (re)start.
type SimChange = std::sync::Arc<dyn Fn(&mut SimOptions) + Send + Sync>;

impl Sim {
    /// Options with short processing times and the fiscal memory in `state`.
    pub fn options(state: &Path) -> SimOptions {
        let mut options = SimOptions::default();
        options.device.state_file = Some(state.to_path_buf());
        options.device.timing.command = Duration::from_millis(1);
        options.device.timing.finalize = Duration::from_millis(20);
        options.device.timing.credit_note = Duration::from_millis(40);
        options
    }

    /// Starts a simulator in `dir` (fiscal memory `dir/sim.json`, port `dir/ttyEMCF`).
    pub async fn start(dir: &Path) -> Sim {
        Sim::start_with(dir, FaultConfig::default()).await
    }

    /// Same, with injected faults.
    pub async fn start_with(dir: &Path, faults: FaultConfig) -> Sim {
        let mut sim = Sim {
            link: dir.join("ttyEMCF"),
            state: dir.join("sim.json"),
            running: None,
            custom: None,
        };
        sim.restart_with(faults).await;
        sim
    }

    /// Starts a simulator in `dir` whose usual options are changed by `change` (at every
    /// restart too): a firmware profile, a small fiscal memory...
    pub async fn start_custom(
        dir: &Path,
        change: impl Fn(&mut SimOptions) + Send + Sync + 'static,
    ) -> Sim {
        let mut sim = Sim {
            link: dir.join("ttyEMCF"),
            state: dir.join("sim.json"),
            running: None,
            custom: Some(std::sync::Arc::new(change)),
        };
        sim.restart_with(FaultConfig::default()).await;
        sim
    }

    /// Starts it again (same fiscal memory, same path) after a stop.
    pub async fn restart_with(&mut self, faults: FaultConfig) {
        let mut options = Sim::options(&self.state);
        options.faults = faults;
        if let Some(change) = &self.custom {
            change(&mut options);
        }
        let _ = std::fs::remove_file(&self.link);
        let running = start_on_pty(options, Some(&self.link))
            .await
            .expect("simulator starts");
        self.running = Some(running);
    }

    /// Unplugs it: the pty and its symlink go away.
    pub async fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = running.stop().await;
        }
    }

    /// Waits until the simulator's link ended by itself (a power-cut or vanish fault).
    pub async fn wait_finished(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        while let Some(running) = &self.running {
            if running.is_finished() {
                self.stop().await;
                return;
            }
            assert!(
                Instant::now() < deadline,
                "simulator did not stop by itself"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The gateway binary running `serve`.
pub struct Gateway {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub addr: SocketAddr,
    /// What it printed on stdout before it was ready (keys in demo mode).
    pub banner: Vec<String>,
    child: Child,
}

/// A French text as the catalogue writes it: a no-break space (U+00A0) before `:`, `;`, `!`,
/// `?` and `»`, and after `«` (the catalogue's typography, held by its tests), so that an
/// expected text can be written with plain spaces.
#[allow(dead_code)]
pub fn nbsp(text: &str) -> String {
    let mut out = text.replace("« ", "«\u{a0}");
    for mark in [":", ";", "!", "?", "»"] {
        out = out.replace(&format!(" {mark}"), &format!("\u{a0}{mark}"));
    }
    out
}

/// The path of the binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_emcf-gateway")
}

/// A configuration with one device named `shop` at `device` (state in `dir/state`), every
/// device key at its default: for a box of unknown behaviour (the firmware matrix).
pub fn config_with_box(dir: &Path, device: &Path) -> String {
    format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"shop\"\npath = {device:?}\n",
        state = dir.join("state"),
        device = device,
    )
}

/// The device keys that suit the bundled simulator, which answers within milliseconds (the
/// tests' 38h within 20 ms) and writes PROTOCOL.md's escapes: the tests of faults count on a
/// short window to resend, and on a short wait for a 38h whose reply was lost.
pub const SIMULATOR_KEYS: &[(&str, &str)] = &[
    ("window_ms", "500"),
    ("command_budget_ms", "5000"),
    ("finalize_budget_ms", "3000"),
    ("seq_replay", "true"),
    ("line_breaks", "\"protocol\""),
];

/// A configuration with one device named `shop` at `device` (state in `dir/state`) set for
/// the bundled simulator ([`SIMULATOR_KEYS`]).
pub fn config_with_device(dir: &Path, device: &Path) -> String {
    config_with_device_timing(dir, device, &[])
}

impl Gateway {
    /// Writes `config` to `dir/config.toml` and starts `serve`; returns once it listens.
    pub fn start(dir: &Path, config: &str) -> Gateway {
        Gateway::start_with_env(dir, config, &[])
    }

    /// [`Gateway::start`] with more environment variables.
    pub fn start_with_env(dir: &Path, config: &str, env: &[(&str, &str)]) -> Gateway {
        let config_path = dir.join("config.toml");
        let config = store::with_store(dir, config);
        std::fs::write(&config_path, config).expect("config written");
        let text = path_str(&config_path).to_string();
        Gateway::start_with_args(dir, &["--config", &text, "serve"], config_path, env)
    }

    /// Starts `serve` with no configuration file (demo mode) in `dir`.
    pub fn start_demo(dir: &Path) -> Gateway {
        let state = dir.join("state");
        Gateway::start_with_args(
            dir,
            &[
                "--state-dir",
                path_str(&state),
                "serve",
                "--listen",
                "127.0.0.1:0",
            ],
            PathBuf::new(),
            &[],
        )
    }

    fn start_with_args(
        dir: &Path,
        args: &[&str],
        config: PathBuf,
        env: &[(&str, &str)],
    ) -> Gateway {
        pty::release_exclusive_mode();
        let mut child = Command::new(binary())
            .args(args)
            .env("EMCF_CONFIG", "")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(dir.join("gateway.log"))
                    .expect("log file"),
            ))
            .spawn()
            .expect("gateway starts");
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut banner = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match rx.recv_timeout(left) {
                Ok(line) => line,
                Err(_) => {
                    let _ = child.kill();
                    let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default();
                    panic!("gateway did not start; log:\n{log}");
                }
            };
            if let Some(rest) = line.strip_prefix("emcf-gateway listening on http://") {
                break rest.parse().expect("address");
            }
            banner.push(line);
        };
        // The demo banner follows the listening line.
        while let Ok(line) = rx.recv_timeout(Duration::from_millis(300)) {
            banner.push(line);
        }
        // Its output is not a terminal: the demo keys are in the file it names, not in the
        // banner. Read as the banner's lines, where tests look for `live key:`.
        let keys_file = banner
            .iter()
            .map(|line| line.trim())
            .find(|line| line.ends_with("/demo-keys.txt"))
            .map(PathBuf::from);
        if let Some(file) = keys_file {
            let keys = std::fs::read_to_string(&file).expect("the demo keys file is readable");
            banner.extend(keys.lines().map(str::to_owned));
        }
        Gateway {
            dir: dir.to_path_buf(),
            config,
            addr,
            banner,
            child,
        }
    }

    /// A line of the banner starting with `prefix`, without the prefix.
    pub fn banner_value(&self, prefix: &str) -> Option<String> {
        self.banner
            .iter()
            .find_map(|line| line.strip_prefix(prefix).map(|v| v.trim().to_string()))
    }

    /// Runs the CLI against this gateway's configuration (through its admin socket).
    pub fn cli(&self, args: &[&str]) -> Output {
        cli(&self.dir, &self.config, args)
    }

    /// `kill -9`.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the exit; returns whether it exited successfully.
    pub fn terminate(&mut self) -> bool {
        sigterm(self.child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            if Instant::now() > deadline {
                self.kill9();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The gateway's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("gateway.log")).unwrap_or_default()
    }

    /// Waits until `GET /status` says `status: true`.
    pub async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let response = get(self.addr, "/api/v1/status", None).await;
            if response.json["status"] == Value::Bool(true) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "gateway not ready: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Runs the CLI with `config` (or none) in `dir`.
pub fn cli(dir: &Path, config: &Path, args: &[&str]) -> Output {
    pty::release_exclusive_mode();
    let mut command = Command::new(binary());
    if !config.as_os_str().is_empty() {
        command.args(["--config", path_str(config)]);
    } else {
        command.args(["--state-dir", path_str(&dir.join("state"))]);
    }
    command
        .args(args)
        .env("EMCF_CONFIG", "")
        .current_dir(dir)
        .output()
        .expect("cli runs")
}

/// `org add` (NIF [`SIM_NIF`]) then `key issue`; returns the key. Works with or without a
/// running gateway.
pub fn add_org_with_key(
    dir: &Path,
    config: &Path,
    id: &str,
    device: &str,
    quota: Option<u64>,
) -> String {
    add_org(dir, config, id, device, SIM_NIF, quota)
}

/// [`add_org_with_key`] with the organization's NIF.
pub fn add_org_with_key_nif(
    dir: &Path,
    config: &Path,
    id: &str,
    device: &str,
    nif: &str,
) -> String {
    add_org(dir, config, id, device, nif, None)
}

fn add_org(
    dir: &Path,
    config: &Path,
    id: &str,
    device: &str,
    nif: &str,
    quota: Option<u64>,
) -> String {
    let mut args = vec![
        "org",
        "add",
        "--id",
        id,
        "--name",
        "Test shop",
        "--nif",
        nif,
        "--isf",
        "ISF-1",
        "--device",
        device,
    ];
    let quota_text = quota.map(|q| q.to_string());
    if let Some(q) = &quota_text {
        args.extend(["--quota", q.as_str()]);
    }
    let out = cli(dir, config, &args);
    assert!(
        out.status.success(),
        "org add: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    issue_key(dir, config, id, false)
}

/// `org add` of the organization `acme` (NIF [`SIM_NIF`], ISF-1, on the device `shop`) named
/// `name`, with `extra` options (`--quota`, `--admin-email`...); its output, for the caller to
/// check.
pub fn org_add_acme(dir: &Path, config: &Path, name: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "org", "add", "--id", "acme", "--name", name, "--nif", SIM_NIF, "--isf", "ISF-1",
        "--device", "shop",
    ];
    args.extend_from_slice(extra);
    cli(dir, config, &args)
}

/// `key issue`; returns the key.
pub fn issue_key(dir: &Path, config: &Path, org: &str, sandbox: bool) -> String {
    let mut args = vec!["key", "issue", "--org", org];
    if sandbox {
        args.push("--sandbox");
    }
    let out = cli(dir, config, &args);
    assert!(
        out.status.success(),
        "key issue: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[path = "../support/http.rs"]
pub mod http;
#[path = "../support/invoice.rs"]
mod invoice;
pub mod needs;
#[path = "../support/pg.rs"]
pub mod pg;
#[path = "../support/pty.rs"]
mod pty;
pub mod store;

pub use http::Response;

/// Sends one request (Connection: close) and reads the whole response (panics if none came
/// within 150 s).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Response {
    http::try_request(addr, method, path, headers, body, Duration::from_secs(150))
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

fn parse_response(raw: &[u8]) -> Response {
    http::parse_response(raw).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(raw)))
}

/// `GET path`, with a Bearer key if given.
pub async fn get(addr: SocketAddr, path: &str, key: Option<&str>) -> Response {
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut headers = vec![("Accept", "application/json")];
    if let Some(auth) = &auth {
        headers.push(("Authorization", auth.as_str()));
    }
    request(addr, "GET", path, &headers, None).await
}

/// `POST /api/v1/Invoice` with `body` as JSON and the Bearer `key`.
pub async fn post_invoice(addr: SocketAddr, key: &str, body: &Value) -> Response {
    let auth = format!("Bearer {key}");
    let bytes = serde_json::to_vec(body).expect("json");
    request(
        addr,
        "POST",
        "/api/v1/Invoice",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        Some(&bytes),
    )
    .await
}

/// A small valid invoice: two items of group B in `ttc` mode, CDF, every scalar a string
/// (1200.00 CDF, paid in cash).
pub fn invoice(rn: &str) -> Value {
    invoice::invoice_of(rn, 2)
}

/// A sale in USD, `ht` mode, paid by transfer in CDF (groups B and E).
pub fn usd_invoice(rn: &str) -> Value {
    serde_json::json!({
        "rn": rn, "mode": "ht", "type": "FV", "curCode": "USD", "curRate": "2850.00",
        "curDate": "2026-11-20",
        "items": [{"name": "Ciment", "type": "BIE", "price": "10000.00", "quantity": "3", "taxGroup": "B"},
                  {"name": "Transport", "type": "SER", "price": "5000.00", "quantity": "1", "taxGroup": "E"}],
        "payments": [{"name": "VIREMENT", "amount": "39800.00", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "2", "name": "Caisse 2"}
    })
}

/// A credit note of `kind` (FA, EA) refunding the invoice whose codeDEFDGI is `original`.
pub fn credit_note_of(rn: &str, original: &str, kind: &str) -> Value {
    let mut note = invoice(rn);
    note["type"] = serde_json::json!(kind);
    note["reference"] = serde_json::json!(original);
    note["referenceType"] = serde_json::json!("RAM");
    note
}

// ---- api tests helpers ----
// Used by tests/api/invoices.rs, tests/api/errors.rs and tests/api/quota_keys.rs.

/// A simulator on a pty, the gateway on it, and the organization `acme` (NIF [`SIM_NIF`],
/// ISF `ISF-1`, device `shop`) with one live key. Fields drop in order: gateway first.
pub struct ApiSetup {
    pub gateway: Gateway,
    pub sim: Sim,
    pub key: String,
    pub dir: tempfile::TempDir,
}

impl ApiSetup {
    /// Starts everything; `quota` overrides the plan's annual quota.
    pub async fn start(quota: Option<u64>) -> ApiSetup {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = Sim::start(dir.path()).await;
        let gateway = Gateway::start(dir.path(), &config_with_device(dir.path(), &sim.link));
        let key = tokio::task::block_in_place(|| {
            add_org_with_key(dir.path(), &gateway.config, "acme", "shop", quota)
        });
        gateway.wait_ready().await;
        ApiSetup {
            gateway,
            sim,
            key,
            dir,
        }
    }

    /// The gateway's address.
    pub fn addr(&self) -> SocketAddr {
        self.gateway.addr
    }

    /// Runs the CLI, asserts success, returns stdout.
    pub fn cli_ok(&self, args: &[&str]) -> String {
        cli_ok(&self.gateway, args)
    }

    /// `org show acme`: the quota used this year.
    pub fn quota_used(&self) -> u64 {
        quota_of(&self.gateway, "acme")["used"]
            .as_u64()
            .expect("quota.used")
    }

    /// Issues another key of `acme` (`sandbox`: a `mcf_test_` key).
    pub fn issue_key(&self, sandbox: bool) -> String {
        tokio::task::block_in_place(|| {
            issue_key(self.dir.path(), &self.gateway.config, "acme", sandbox)
        })
    }

    /// Stops the gateway (SIGTERM, clean exit asserted) and starts it again on the same
    /// directory and configuration; waits until it is ready.
    pub async fn restart_gateway(&mut self) {
        assert!(self.gateway.terminate(), "gateway exits cleanly on SIGTERM");
        let config = std::fs::read_to_string(&self.gateway.config).expect("config");
        self.gateway = Gateway::start(self.dir.path(), &config);
        self.gateway.wait_ready().await;
    }
}

/// Runs the CLI against `gateway` (off the async worker), asserts success, returns stdout.
pub fn cli_ok(gateway: &Gateway, args: &[&str]) -> String {
    let out = tokio::task::block_in_place(|| gateway.cli(args));
    assert!(
        out.status.success(),
        "emcf-gateway {}: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `org show <org>`: its `quota` object (`year`, `used`, `quota`, `remaining`).
pub fn quota_of(gateway: &Gateway, org: &str) -> Value {
    let text = cli_ok(gateway, &["org", "show", org, "--json"]);
    let value: Value = serde_json::from_str(&text).expect("org show prints JSON");
    value["quota"].clone()
}

/// `POST /api/v1/Invoice` with raw body bytes, a Bearer `key` and an optional content type.
pub async fn post_raw(
    addr: SocketAddr,
    key: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> Response {
    let auth = format!("Bearer {key}");
    let mut headers = vec![("Authorization", auth.as_str())];
    if let Some(content_type) = content_type {
        headers.push(("Content-Type", content_type));
    }
    request(addr, "POST", "/api/v1/Invoice", &headers, Some(body)).await
}

/// Writes `head` then `body` while reading the answer at the same time; tolerates the server
/// answering (and closing) before the body is fully sent, as it does for a body too large.
/// `head` must end with the blank line.
pub async fn exchange_streaming(addr: SocketAddr, head: String, body: Vec<u8>) -> Response {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let sender = tokio::spawn(async move {
        if writer.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for piece in body.chunks(8 * 1024) {
            if writer.write_all(piece).await.is_err() {
                return;
            }
        }
        let _ = writer.flush().await;
        // Keep the write half open until the answer is read.
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    let mut raw = Vec::new();
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(30), reader.read(&mut buffer)).await {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buffer[..n]),
            // A reset after the answer (unread body on the server side) ends the exchange.
            Ok(Err(_)) => break,
            Err(_) => panic!(
                "no answer within 30 s; got so far: {:?}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    sender.abort();
    assert!(!raw.is_empty(), "the server closed without answering");
    parse_response(&raw)
}

/// `body` as an HTTP/1.1 chunked body of `chunk`-byte chunks, with the final empty chunk.
pub fn chunked(body: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / chunk * 12 + 8);
    for piece in body.chunks(chunk) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// `counters` of a certification (`"12/14 FV"`) as (kind counter, total counter, type).
pub fn counters_of(response: &Response) -> (u64, u64, String) {
    let text = response.json["counters"]
        .as_str()
        .unwrap_or_else(|| panic!("no counters in {}", response.body));
    let (numbers, kind) = text
        .split_once(' ')
        .unwrap_or_else(|| panic!("counters {text:?} are not \"n/m TYPE\""));
    let (fc, tc) = numbers
        .split_once('/')
        .unwrap_or_else(|| panic!("counters {text:?} are not \"n/m TYPE\""));
    (
        fc.parse().unwrap_or_else(|_| panic!("counters {text:?}")),
        tc.parse().unwrap_or_else(|_| panic!("counters {text:?}")),
        kind.to_string(),
    )
}

/// Asserts an error response: `status`, a JSON body with numeric `errorCode` == `code` and a
/// non-empty string `errorDesc`; returns the body.
#[track_caller]
pub fn assert_error(response: &Response, status: u16, code: u64) -> &Value {
    assert_eq!(
        response.status, status,
        "expected HTTP {status} (code {code}), got: {} {}",
        response.status, response.body
    );
    assert!(
        response
            .header("content-type")
            .is_some_and(|v| v.starts_with("application/json")),
        "error without a JSON content type: {:?}",
        response.headers
    );
    assert!(
        response.json["errorCode"].is_u64(),
        "errorCode is not a number: {}",
        response.body
    );
    assert_eq!(
        response.json["errorCode"].as_u64(),
        Some(code),
        "wrong errorCode: {}",
        response.body
    );
    let desc = response.json["errorDesc"].as_str();
    assert!(
        desc.is_some_and(|d| !d.trim().is_empty()),
        "errorDesc is not a non-empty string: {}",
        response.body
    );
    &response.json
}

// ---- durability tests helpers ----

/// `config_with_device` plus device timing keys (`window_ms`, `tries`...) under its
/// `[[devices]]` block.
pub fn config_with_device_timing(dir: &Path, device: &Path, timing: &[(&str, u64)]) -> String {
    let mut text = config_with_box(dir, device);
    for (key, value) in timing {
        text.push_str(&format!("{key} = {value}\n"));
    }
    for (key, value) in SIMULATOR_KEYS {
        if !timing.iter().any(|(given, _)| given == key) {
            text.push_str(&format!("{key} = {value}\n"));
        }
    }
    text
}

/// Runs the CLI, asserts that it succeeded and returns its stdout.
pub fn cli_success(dir: &Path, config: &Path, args: &[&str]) -> String {
    let out = cli(dir, config, args);
    assert!(
        out.status.success(),
        "`{}` failed: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The quota used this year by `org`, as `org show` prints it.
pub fn quota_used(dir: &Path, config: &Path, org: &str) -> u64 {
    let text = cli_success(dir, config, &["org", "show", org, "--json"]);
    let value: Value = serde_json::from_str(&text).expect("org show prints JSON");
    value["quota"]["used"]
        .as_u64()
        .unwrap_or_else(|| panic!("no quota.used in {text}"))
}

/// The production register as `log export --format json` prints it (one entry a line).
pub fn exported_entries(dir: &Path, config: &Path) -> Vec<Value> {
    cli_success(dir, config, &["log", "export", "--format", "json"])
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("one JSON entry per line"))
        .collect()
}

/// (rn, codeDEFDGI, counters) of register entries as `log export --format json` gives them.
pub fn register_triples(entries: &[Value]) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    entries
        .iter()
        .map(|e| {
            (
                text(&e["rn"]),
                text(&e["security"]["codeDEFDGI"]),
                text(&e["security"]["counters"]),
            )
        })
        .collect()
}

/// (rn, codeDEFDGI, counters) of every invoice in the simulator's fiscal memory, in order.
pub fn device_triples(sim: &Sim) -> Vec<(String, String, String)> {
    fiscal_invoices(sim)
        .iter()
        .map(|d| {
            (
                d["rn"].as_str().unwrap_or_default().to_string(),
                d["code_def"].as_str().unwrap_or_default().to_string(),
                format!(
                    "{}/{} {}",
                    d["fc"],
                    d["tc"],
                    d["type"].as_str().unwrap_or_default()
                ),
            )
        })
        .collect()
}

/// The register of the gateway configured by `dir/config.toml` equals the device's fiscal
/// memory (same invoices, same order, no duplicate codeDEFDGI); returns the entries. Call it
/// from a multi-thread runtime (the CLI runs in `block_in_place`).
pub fn assert_register_matches_device(dir: &Path, sim: &Sim) -> Vec<Value> {
    let config = dir.join("config.toml");
    let entries = tokio::task::block_in_place(|| exported_entries(dir, &config));
    let register = register_triples(&entries);
    assert_eq!(
        register,
        device_triples(sim),
        "the register must hold exactly what the device committed"
    );
    let codes: std::collections::HashSet<&str> =
        register.iter().map(|(_, c, _)| c.as_str()).collect();
    assert_eq!(codes.len(), register.len(), "duplicate codeDEFDGI");
    entries
}

/// The invoices committed to the simulator's fiscal memory file (the device's truth), in
/// order: objects with `tc`, `fc`, `type`, `rn`, `code_def`...
pub fn fiscal_invoices(sim: &Sim) -> Vec<Value> {
    let bytes = std::fs::read(&sim.state).expect("fiscal memory file");
    let value: Value = serde_json::from_slice(&bytes).expect("fiscal memory is JSON");
    value["invoices"].as_array().cloned().unwrap_or_default()
}

/// Starts a simulator in `dir` like [`Sim::start_with`], but whose every command takes
/// `command` and whose 38h of a sale takes `finalize` (sending SYN meanwhile). A later
/// `restart_with` uses the usual short timing.
pub async fn start_sim_with_timing(
    dir: &Path,
    command: Duration,
    finalize: Duration,
    faults: FaultConfig,
) -> Sim {
    let mut sim = Sim {
        link: dir.join("ttyEMCF"),
        state: dir.join("sim.json"),
        running: None,
        custom: None,
    };
    let mut options = Sim::options(&sim.state);
    options.device.timing.command = command;
    options.device.timing.finalize = finalize;
    options.faults = faults;
    let _ = std::fs::remove_file(&sim.link);
    let running = start_on_pty(options, Some(&sim.link))
        .await
        .expect("simulator starts");
    sim.running = Some(running);
    sim
}

/// Runs `serve` with `config` and expects it to exit by itself within `within` (a refusal to
/// start); returns its exit status and what it printed (stdout then stderr). Panics if it is
/// still running by then (it started: killed first).
pub fn serve_expecting_exit(
    dir: &Path,
    config: &Path,
    within: Duration,
) -> (std::process::ExitStatus, String) {
    let out_path = dir.join("refused-serve.out");
    let err_path = dir.join("refused-serve.err");
    let mut child = Command::new(binary())
        .args(["--config", path_str(config), "serve"])
        .env("EMCF_CONFIG", "")
        .env("RUST_LOG", "info")
        .current_dir(dir)
        .stdout(Stdio::from(
            std::fs::File::create(&out_path).expect("stdout file"),
        ))
        .stderr(Stdio::from(
            std::fs::File::create(&err_path).expect("stderr file"),
        ))
        .spawn()
        .expect("gateway starts");
    let deadline = Instant::now() + within;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "serve did not refuse to start; stdout:\n{}\nstderr:\n{}",
                std::fs::read_to_string(&out_path).unwrap_or_default(),
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!(
        "{}{}",
        std::fs::read_to_string(&out_path).unwrap_or_default(),
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    (status, text)
}

/// Waits until `GET /status` says `status: wanted`; returns how long it took.
pub async fn wait_status(addr: SocketAddr, wanted: bool, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let response = get(addr, "/api/v1/status", None).await;
        if response.json["status"] == Value::Bool(wanted) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "status did not become {wanted} within {within:?}: {}",
            response.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `POST /api/v1/Invoice` that tolerates the server dying mid-request: `None` when no
/// complete response came back.
pub async fn try_post_invoice(addr: SocketAddr, key: &str, body: &Value) -> Option<Response> {
    let auth = format!("Bearer {key}");
    let bytes = serde_json::to_vec(body).expect("json");
    let mut stream = TcpStream::connect(addr).await.ok()?;
    let head = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: {auth}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        bytes.len()
    );
    stream.write_all(head.as_bytes()).await.ok()?;
    stream.write_all(&bytes).await.ok()?;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(150), stream.read_to_end(&mut raw))
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&raw);
    if !text.contains("\r\n\r\n") {
        return None;
    }
    Some(parse_response(&raw))
}

/// Counts the journal records of each event type (`"type":"intent"`...) in the raw journal.
pub fn journal_event_count(dir: &Path, event_type: &str) -> usize {
    let bytes =
        std::fs::read(dir.join("state").join("journal").join("journal.log")).expect("journal file");
    let needle = format!("\"type\":\"{event_type}\"");
    String::from_utf8_lossy(&bytes).matches(&needle).count()
}

// ---- link fault helpers ----
// Used by tests/device/link_faults.rs: the fault relay of `emcf_sim::relay` between the gateway and
// the simulator, and what /proc says about the gateway process.

impl Gateway {
    /// The gateway's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The relay's host side (the path the gateway is configured with) in `dir`.
pub fn relay_link(dir: &Path) -> PathBuf {
    dir.join("ttyRELAY")
}

/// Starts a fault relay in front of `sim`, serving [`relay_link`]`(dir)`; returns once it
/// has the simulator's port open.
pub async fn start_relay(
    dir: &Path,
    sim: &Sim,
    faults: emcf_sim::relay::RelayFaults,
    seed: u64,
) -> emcf_sim::relay::RelayHandle {
    let mut config = emcf_sim::relay::RelayConfig::new(relay_link(dir), &sim.link);
    config.faults = faults;
    config.seed = seed;
    let relay = emcf_sim::relay::Relay::start(config).expect("relay starts");
    let started = Instant::now();
    while !relay.stats().device_connected {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the relay did not open the simulator's port"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    relay
}

/// Clock ticks per second of /proc times (`getconf CLK_TCK`, 100 if unknown).
pub fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .filter(|ticks| *ticks > 0)
        .unwrap_or(100)
}

/// CPU time (user + system) a process has used so far, from `/proc/<pid>/stat`.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // The command name is in parentheses and may hold spaces: count fields after it.
    let after = &stat[stat.rfind(')').expect("comm field") + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After the name: state is field 3 of the line, utime 14 and stime 15.
    let utime: u64 = fields[11].parse().expect("utime");
    let stime: u64 = fields[12].parse().expect("stime");
    Duration::from_secs_f64((utime + stime) as f64 / clock_ticks() as f64)
}

/// Share of one core a process used during `window` (sampled from /proc).
pub async fn cpu_share(pid: u32, window: Duration) -> f64 {
    let before = cpu_time(pid);
    let started = Instant::now();
    tokio::time::sleep(window).await;
    let used = cpu_time(pid).saturating_sub(before);
    used.as_secs_f64() / started.elapsed().as_secs_f64()
}

/// Open file descriptors of a process (`/proc/<pid>/fd`).
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc/<pid>/fd")
        .count()
}

// ---- dashboard helpers ----
// Used by tests/operations/dashboard.rs and tests/system/browser.rs.

/// `dashboard-token issue --org <org>`: the token printed once on stdout.
pub fn issue_dashboard_token(gateway: &Gateway, org: &str) -> String {
    let token = cli_ok(
        gateway,
        &[
            "dashboard-token",
            "issue",
            "--org",
            org,
            "--label",
            "test admin",
        ],
    )
    .trim()
    .to_string();
    assert!(
        token.starts_with("mcf_dash_"),
        "not a dashboard token: {token:?}"
    );
    token
}

/// The value of cookie `name` set by `response` (its first `Set-Cookie` of that name), and
/// the whole header.
pub fn set_cookie<'a>(response: &'a Response, name: &str) -> Option<(&'a str, &'a str)> {
    response
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.as_str())
        .find_map(|v| {
            let (pair, _) = v.split_once(';').unwrap_or((v, ""));
            let (n, value) = pair.split_once('=')?;
            (n.trim() == name).then_some((value.trim(), v))
        })
}

/// The value of the first hidden `csrf` field of a page.
pub fn csrf_field(body: &str) -> Option<String> {
    let at = body.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    let end = body[at..].find('"')?;
    Some(body[at..at + end].to_string())
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub fn form_body(pairs: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        text.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(n, v)| format!("{}={}", encode(n), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `GET path` with the dashboard session cookie `session` (if any).
pub async fn dashboard_get(addr: SocketAddr, session: Option<&str>, path: &str) -> Response {
    let cookie = session.map(|s| format!("emcf_session={s}"));
    let mut headers = vec![];
    if let Some(cookie) = &cookie {
        headers.push(("Cookie", cookie.as_str()));
    }
    request(addr, "GET", path, &headers, None).await
}

/// `POST path` with a form, the `Cookie` header `cookie` (if any) and `extra` headers. The
/// `Origin` is this server's unless `extra` names one; a header of `extra` with an empty
/// value is not sent (`("Origin", "")`: no `Origin` at all).
pub async fn dashboard_post(
    addr: SocketAddr,
    cookie: Option<&str>,
    path: &str,
    form: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> Response {
    let origin = format!("http://{addr}");
    let body = form_body(form);
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    if !extra.iter().any(|(n, _)| n.eq_ignore_ascii_case("origin")) {
        headers.push(("Origin", origin.as_str()));
    }
    if let Some(cookie) = cookie {
        headers.push(("Cookie", cookie));
    }
    headers.extend(extra.iter().filter(|(_, v)| !v.is_empty()));
    request(addr, "POST", path, &headers, Some(body.as_bytes())).await
}

/// Signs in with `token` like a browser (sign-in page, then its form); returns the answer to
/// the form (303 on success) without following it.
pub async fn dashboard_sign_in_response(
    addr: SocketAddr,
    token: &str,
    extra: &[(&str, &str)],
) -> Response {
    let page = request(addr, "GET", "/dashboard/login", &[], None).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let (nonce, _) = set_cookie(&page, "emcf_signin").expect("sign-in cookie");
    let csrf = csrf_field(&page.body).expect("sign-in form's csrf field");
    let cookie = format!("emcf_signin={nonce}");
    dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/login",
        &[("csrf", &csrf), ("token", token)],
        extra,
    )
    .await
}

/// Signs in with `token`; returns the session cookie's value and the CSRF token of its pages.
pub async fn dashboard_sign_in(addr: SocketAddr, token: &str) -> (String, String) {
    let response = dashboard_sign_in_response(addr, token, &[]).await;
    assert_eq!(response.status, 303, "sign-in refused: {}", response.body);
    let (session, _) = set_cookie(&response, "emcf_session").expect("session cookie");
    let session = session.to_string();
    let page = dashboard_get(addr, Some(&session), "/dashboard/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let csrf = csrf_field(&page.body).expect("csrf field on the overview");
    (session, csrf)
}

/// Context switches of all the threads of a process so far (`/proc/<pid>/task/*/status`):
/// how often it woke up. A thread that ended no longer counts.
pub fn context_switches(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|task| task.ok())
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|line| line.contains("ctxt_switches:"))
                .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// A second box for a second organization (one NIF, one organization per device): starts a
/// simulator (NIM `SIM0000002`) in `dir/second-shop`, adds it to `gateway`'s configuration as device `shop2`,
/// restarts the gateway on it (SIGTERM, clean exit asserted) and adds organization `id` on it
/// with a key; returns the simulator and the key.
pub async fn second_shop(gateway: &mut Gateway, id: &str) -> (Sim, String) {
    let sim = second_box(gateway).await;
    let root = gateway.dir.clone();
    let key =
        tokio::task::block_in_place(|| add_org_with_key(&root, &gateway.config, id, "shop2", None));
    (sim, key)
}

/// [`second_shop`] without an organization: the box `shop2` (NIM `SIM0000002`, the same
/// NIF) in `gateway`'s configuration, the gateway restarted on it.
pub async fn second_box(gateway: &mut Gateway) -> Sim {
    let dir = gateway.dir.join("second-shop");
    std::fs::create_dir_all(&dir).expect("second shop folder");
    // A box of its own: its own NIM (same NIF: one NIF may certify on several devices).
    let sim = Sim::start_custom(&dir, |options| options.device.nim = "SIM0000002".into()).await;
    let mut config = std::fs::read_to_string(&gateway.config).expect("config");
    config.push_str(&format!(
        "\n[[devices]]\nname = \"shop2\"\npath = {:?}\n",
        sim.link
    ));
    for (key, value) in SIMULATOR_KEYS {
        config.push_str(&format!("{key} = {value}\n"));
    }
    assert!(gateway.terminate(), "gateway exits cleanly on SIGTERM");
    let root = gateway.dir.clone();
    *gateway = Gateway::start(&root, &config);
    gateway.wait_ready().await;
    sim
}

/// Sends SIGTERM to `pid` (no `kill` program needed: Debian's procps may be missing).
pub fn sigterm(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) only sends a signal; `pid` is a child this test started.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}
