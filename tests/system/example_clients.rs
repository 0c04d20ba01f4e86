//! The integrator kit's clients (`examples/clients/`: Python, JavaScript, PHP, C#) run as an
//! ERP would run them, each a subprocess with `EMCF_URL` and `EMCF_KEY`, against the real
//! gateway: on the bundled simulator (demo mode, the printed key) each certifies an invoice,
//! prints the `OK` line and saves the QR code, and its codeDEFDGI is the register's; run again
//! with the same rn it gets the same certification (a replay); a QR code it cannot save
//! (here its folder is missing) leaves the OK line standing, with exit 4 and no FAIL line,
//! since the invoice is certified. With a box unplugged, each
//! rides out the 503 (`Retry-After`) and certifies once the box is back; with an answer lost
//! (the client's own timeout while the box finalizes), each asks `GET /api/v1/Invoice/{rn}`,
//! retries the same request, and the invoice is certified once. A refused invoice's
//! `errorDesc` on each client's `FAIL` line is French by default (even on a gateway configured
//! in English: the client asks for its user's language) and English with `EMCF_LANG=en` (on a
//! gateway in French).
//!
//! A runtime that is missing is skipped with a note, except under CI (`CI` set), where
//! `.ci/run` installs them all and a missing one fails.
//!
//! `tests/system/example_clients/reverse_proxy.rs`: the nginx example (`examples/reverse-proxy/`) in front of the
//! gateway, TLS and the client's address, with the same rule for a missing nginx.

use crate::common;
mod reverse_proxy;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{
    add_org_with_key, config_with_device, fiscal_invoices, get, needs, start_sim_with_timing,
    Gateway, Sim,
};
use emcf_sim::faults::FaultConfig;
use serde_json::Value;

/// One example client, ready to run: the command line without the rn.
struct Client {
    name: &'static str,
    command: Vec<String>,
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/clients")
}

/// A runtime that is not there: skipped, except under CI.
fn missing(client: &str, what: &str, how: &str) {
    needs::missing(&format!("the {client} example client"), what, how);
}

/// The clients whose runtime is here; the C# one is compiled into `dir` with Mono's `mcs`.
fn clients(dir: &Path) -> Vec<Client> {
    let root = examples();
    let path = |p: &str| root.join(p).to_string_lossy().into_owned();
    let mut found = Vec::new();
    if needs::runs("python3", &["-c", "import urllib.request, json"]) {
        found.push(Client {
            name: "python",
            command: vec!["python3".into(), path("python/emcf_client.py")],
        });
    } else {
        missing(
            "Python",
            "no python3",
            "install Debian's python3; .ci/run does",
        );
    }
    if needs::runs(
        "node",
        &["-e", "process.exit(typeof fetch === 'function' ? 0 : 1)"],
    ) {
        found.push(Client {
            name: "javascript",
            command: vec!["node".into(), path("javascript/emcf-client.mjs")],
        });
    } else {
        missing(
            "JavaScript",
            "no node 18 or newer",
            "install Debian's nodejs; .ci/run does",
        );
    }
    if needs::runs(
        "php",
        &["-r", "exit(function_exists('curl_init') ? 0 : 1);"],
    ) {
        found.push(Client {
            name: "php",
            command: vec!["php".into(), path("php/emcf_client.php")],
        });
    } else {
        missing(
            "PHP",
            "no php with the curl extension",
            "install Debian's php-cli and php-curl; .ci/run does",
        );
    }
    let exe = dir.join("EmcfClient.exe");
    if needs::runs("mono", &["--version"]) && needs::runs("mcs", &["--version"]) {
        let built = Command::new("mcs")
            .args([
                "-r:System.Net.Http.dll",
                "-r:System.Runtime.Serialization.dll",
                &format!("-out:{}", exe.display()),
                &path("csharp/EmcfClient.cs"),
            ])
            .output()
            .expect("mcs runs");
        assert!(
            built.status.success(),
            "the C# client does not compile with mcs:\n{}{}",
            String::from_utf8_lossy(&built.stdout),
            String::from_utf8_lossy(&built.stderr)
        );
        found.push(Client {
            name: "csharp",
            command: vec!["mono".into(), exe.to_string_lossy().into_owned()],
        });
    } else {
        missing(
            "C#",
            "no Mono",
            "install Debian's mono-mcs, mono-runtime, libmono-system-net-http4.0-cil and \
             libmono-system-runtime-serialization4.0-cil; .ci/run does",
        );
    }
    found
}

/// What one run of a client printed.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn of(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The value of `name=` on the final `OK` line (a quoted value without its quotes).
    fn ok_value(&self, name: &str) -> String {
        let line = self
            .stdout
            .lines()
            .last()
            .filter(|line| line.starts_with("OK "))
            .unwrap_or_else(|| panic!("no final OK line:\n{self}"));
        let at = line
            .find(&format!(" {name}="))
            .unwrap_or_else(|| panic!("no {name}= in {line}"))
            + name.len()
            + 2;
        let rest = &line[at..];
        match rest.strip_prefix('"') {
            Some(quoted) => quoted[..quoted.find('"').expect("closing quote")].to_string(),
            None => rest.split(' ').next().unwrap_or_default().to_string(),
        }
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Starts `client` on `rn` against `addr` with `key` in `dir`, with more `env`.
fn spawn(
    client: &Client,
    dir: &Path,
    addr: std::net::SocketAddr,
    key: &str,
    rn: &str,
    env: &[(&str, &str)],
) -> std::process::Child {
    let out = dir.join(client.name);
    std::fs::create_dir_all(&out).expect("output folder");
    Command::new(&client.command[0])
        .args(&client.command[1..])
        .arg(rn)
        .env("EMCF_URL", format!("http://{addr}"))
        .env("EMCF_KEY", key)
        .env("EMCF_OUT", &out)
        // The test's own EMCF_LANG (a developer's CLI language) is not the ERP user's.
        .env_remove("EMCF_LANG")
        .envs(env.iter().copied())
        .current_dir(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} starts: {e}", client.name))
}

/// Waits for `child` without blocking the runtime (the simulator runs in this process).
async fn finish(child: std::process::Child, within: Duration) -> Run {
    let started = Instant::now();
    let pid = child.id();
    let waiter = tokio::task::spawn_blocking(move || child.wait_with_output());
    tokio::pin!(waiter);
    loop {
        tokio::select! {
            output = &mut waiter => return Run::of(output.expect("join").expect("output")),
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                if started.elapsed() > within {
                    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                }
            }
        }
    }
}

/// Asserts a successful run of `rn`: the OK line, the QR code saved as SVG, and the register
/// (`GET /api/v1/Invoice/{rn}`) has the same codeDEFDGI. Returns the codeDEFDGI.
async fn assert_certified(
    run: &Run,
    client: &Client,
    addr: std::net::SocketAddr,
    key: &str,
    rn: &str,
) -> String {
    assert_eq!(run.code, 0, "{}:\n{run}", client.name);
    assert_eq!(run.ok_value("rn"), rn, "{}:\n{run}", client.name);
    let code = run.ok_value("codeDEFDGI");
    assert_eq!(code.len(), 24, "{}:\n{run}", client.name);
    let counters = run.ok_value("counters");
    assert!(counters.ends_with(" FV"), "{}: {counters}", client.name);
    assert!(
        run.ok_value("nim").starts_with("SIM"),
        "{}:\n{run}",
        client.name
    );
    let svg = std::fs::read_to_string(run.ok_value("qrSvg"))
        .unwrap_or_else(|e| panic!("{}: the saved QR code: {e}\n{run}", client.name));
    assert!(svg.contains("<svg"), "{}: {svg}", client.name);
    let stored = get(addr, &format!("/api/v1/Invoice/{rn}"), Some(key)).await;
    assert_eq!(stored.status, 200, "{}: {}", client.name, stored.body);
    assert_eq!(stored.json["codeDEFDGI"], code.as_str(), "{}", client.name);
    assert_eq!(
        stored.json["counters"],
        counters.as_str(),
        "{}",
        client.name
    );
    code
}

/// An invoice number the gateway refuses (a comma is not allowed): a 400 before anything is sent.
const REFUSED_RN: &str = "EX,REFUSED";

/// The gateway's refusal of an invoice numbered [`REFUSED_RN`] when asked in `lang` (none: its
/// configured language): (errorCode, errorDesc).
async fn refusal_in(addr: std::net::SocketAddr, key: &str, lang: Option<&str>) -> (Value, String) {
    let auth = format!("Bearer {key}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    if let Some(lang) = lang {
        headers.push(("Accept-Language", lang));
    }
    let body = serde_json::to_vec(&common::invoice(REFUSED_RN)).expect("json");
    let answer = common::request(addr, "POST", "/api/v1/Invoice", &headers, Some(&body)).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let desc = answer.json["errorDesc"].as_str().expect("errorDesc");
    (answer.json["errorCode"].clone(), desc.to_owned())
}

/// Runs every client on [`REFUSED_RN`] with `env` and asserts that its `FAIL` line carries the
/// gateway's refusal as `expected` says it (errorDesc a JSON string, exit 1).
async fn assert_refusal_shown(
    clients: &[Client],
    dir: &Path,
    addr: std::net::SocketAddr,
    key: &str,
    env: &[(&str, &str)],
    expected: &(Value, String),
) {
    for client in clients {
        let child = spawn(client, dir, addr, key, REFUSED_RN, env);
        let run = finish(child, Duration::from_secs(60)).await;
        assert_eq!(run.code, 1, "{} {env:?}:\n{run}", client.name);
        let line = run
            .stdout
            .lines()
            .find(|line| line.starts_with(&format!("FAIL rn={REFUSED_RN} status=400 ")))
            .unwrap_or_else(|| panic!("{} {env:?}: no FAIL line:\n{run}", client.name));
        assert!(
            line.contains(&format!(" errorCode={} ", expected.0)),
            "{} {env:?}: {line}",
            client.name
        );
        let desc = line
            .split_once(" errorDesc=")
            .and_then(|(_, json)| serde_json::from_str::<String>(json).ok())
            .unwrap_or_else(|| {
                panic!(
                    "{} {env:?}: errorDesc not a JSON string: {line}",
                    client.name
                )
            });
        assert_eq!(desc, expected.1, "{} {env:?}:\n{run}", client.name);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_client_shows_a_refusal_in_french_unless_its_user_reads_english() {
    // A gateway configured in English: a client that did not ask for French would show English.
    let dir = tempfile::tempdir().expect("tempdir");
    let clients = clients(dir.path());
    let sim = start_sim_with_timing(
        dir.path(),
        Duration::from_millis(1),
        Duration::from_millis(20),
        FaultConfig::default(),
    )
    .await;
    let config = format!(
        "language = \"en\"\n{}",
        config_with_device(dir.path(), &sim.link)
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    let french = refusal_in(gateway.addr, &key, Some("fr")).await;
    let english = refusal_in(gateway.addr, &key, Some("en")).await;
    assert_ne!(french.1, english.1);
    assert_eq!(refusal_in(gateway.addr, &key, None).await, english);
    assert_refusal_shown(&clients, dir.path(), gateway.addr, &key, &[], &french).await;
    assert_refusal_shown(
        &clients,
        dir.path(),
        gateway.addr,
        &key,
        &[("EMCF_LANG", "fr")],
        &french,
    )
    .await;
    assert!(fiscal_invoices(&sim).is_empty(), "a refusal sends nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_client_certifies_on_the_demo_gateway_and_replays_the_same_rn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clients = clients(dir.path());
    let gateway = Gateway::start_demo(dir.path());
    let key = gateway
        .banner_value("live key:")
        .expect("a live key is printed");
    gateway.wait_ready().await;
    for client in &clients {
        let rn = format!("EX-{}-1", client.name.to_uppercase());
        let child = spawn(client, dir.path(), gateway.addr, &key, &rn, &[]);
        let run = finish(child, Duration::from_secs(60)).await;
        let code = assert_certified(&run, client, gateway.addr, &key, &rn).await;

        // The same rn again (an ERP that did not record the answer): the same certification.
        let child = spawn(client, dir.path(), gateway.addr, &key, &rn, &[]);
        let again = finish(child, Duration::from_secs(60)).await;
        assert_eq!(
            assert_certified(&again, client, gateway.addr, &key, &rn).await,
            code,
            "{}: a replay",
            client.name
        );
    }
    // A refusal is final: no retry, exit 1 and a FAIL line.
    for client in &clients {
        let child = spawn(
            client,
            dir.path(),
            gateway.addr,
            "mcf_live_nope",
            "EX-BAD-1",
            &[],
        );
        let run = finish(child, Duration::from_secs(60)).await;
        assert_eq!(run.code, 1, "{}:\n{run}", client.name);
        assert!(
            run.stdout.contains("FAIL rn=EX-BAD-1") && run.stdout.contains("status=401"),
            "{}:\n{run}",
            client.name
        );
        assert!(!run.stderr.contains("retrying"), "{}:\n{run}", client.name);
    }
    // A refused invoice, for a user who reads English, on a gateway in French.
    let english = refusal_in(gateway.addr, &key, Some("en")).await;
    assert_ne!(refusal_in(gateway.addr, &key, None).await, english);
    let env = [("EMCF_LANG", "en")];
    assert_refusal_shown(&clients, dir.path(), gateway.addr, &key, &env, &english).await;
    // Certified, but the QR code cannot be saved (its folder is missing): the OK line is printed
    // first and stands, the QR step only warns (exit 4), never FAIL (an ERP would certify the
    // invoice again under a new rn).
    let nowhere = dir.path().join("no-such-folder");
    for client in &clients {
        let rn = format!("EX-{}-NOQR", client.name.to_uppercase());
        let child = spawn(
            client,
            dir.path(),
            gateway.addr,
            &key,
            &rn,
            &[("EMCF_OUT", nowhere.to_str().expect("utf-8 path"))],
        );
        let run = finish(child, Duration::from_secs(60)).await;
        assert_eq!(run.code, 4, "{}:\n{run}", client.name);
        assert!(!run.stdout.contains("FAIL"), "{}:\n{run}", client.name);
        assert_eq!(run.ok_value("rn"), rn, "{}:\n{run}", client.name);
        let code = run.ok_value("codeDEFDGI");
        assert!(
            run.stderr
                .contains(&format!("WARNING rn={rn} certified, QR code not saved")),
            "{}:\n{run}",
            client.name
        );
        assert!(!nowhere.exists(), "{}", client.name);
        let stored = get(gateway.addr, &format!("/api/v1/Invoice/{rn}"), Some(&key)).await;
        assert_eq!(stored.status, 200, "{}: {}", client.name, stored.body);
        assert_eq!(stored.json["codeDEFDGI"], code.as_str(), "{}", client.name);
    }
}

/// A simulator whose 38h of a sale takes `finalize`, a gateway on it and a live key.
async fn box_setup(dir: &Path, finalize: Duration) -> (Sim, Gateway, String) {
    let sim = start_sim_with_timing(
        dir,
        Duration::from_millis(1),
        finalize,
        FaultConfig::default(),
    )
    .await;
    let gateway = Gateway::start(dir, &config_with_device(dir, &sim.link));
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(dir, &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    (sim, gateway, key)
}

fn device_count_of(sim: &Sim, rn: &str) -> usize {
    fiscal_invoices(sim)
        .iter()
        .filter(|invoice| invoice["rn"] == rn)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_client_retries_the_same_request_while_the_box_is_unplugged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clients = clients(dir.path());
    let (mut sim, gateway, key) = box_setup(dir.path(), Duration::from_millis(20)).await;
    for client in &clients {
        let rn = format!("UNPLUGGED-{}", client.name.to_uppercase());
        sim.stop().await;
        common::wait_status(gateway.addr, false, Duration::from_secs(15)).await;
        let child = spawn(
            client,
            dir.path(),
            gateway.addr,
            &key,
            &rn,
            &[("EMCF_MAX_TRIES", "12")],
        );
        // Its first tries get 503 (150) with Retry-After; the box comes back meanwhile.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        sim.restart_with(FaultConfig::default()).await;
        let run = finish(child, Duration::from_secs(90)).await;
        assert!(
            run.stderr.contains("503 errorCode 150") && run.stderr.contains("retrying"),
            "{}: no 503 ridden out:\n{run}",
            client.name
        );
        assert_certified(&run, client, gateway.addr, &key, &rn).await;
        assert_eq!(device_count_of(&sim, &rn), 1, "{}", client.name);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_client_asks_by_rn_after_a_lost_answer_and_certifies_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clients = clients(dir.path());
    // The box takes 1.5 s to finalize; the clients give up waiting for an answer after 0.5 s.
    let (sim, gateway, key) = box_setup(dir.path(), Duration::from_millis(1500)).await;
    for client in &clients {
        let rn = format!("LOST-{}", client.name.to_uppercase());
        let child = spawn(
            client,
            dir.path(),
            gateway.addr,
            &key,
            &rn,
            &[("EMCF_TIMEOUT", "0.5"), ("EMCF_MAX_TRIES", "12")],
        );
        let run = finish(child, Duration::from_secs(90)).await;
        assert!(
            run.stderr
                .contains(&format!("asking GET /api/v1/Invoice/{rn}")),
            "{}: no lookup after the lost answer:\n{run}",
            client.name
        );
        // While the first request runs, its rn is in flight: 409 (111) with Retry-After.
        assert!(
            run.stderr.contains("409 errorCode 111"),
            "{}:\n{run}",
            client.name
        );
        assert_certified(&run, client, gateway.addr, &key, &rn).await;
        assert_eq!(
            device_count_of(&sim, &rn),
            1,
            "{}: certified once",
            client.name
        );
    }
}
