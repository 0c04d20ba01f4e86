//! The cluster the replica tests run: one PostgreSQL server and its database `register`, the
//! DGI web API simulator, N `emcf-gateway serve` replicas (`Replicas`: each its own folder,
//! `state_dir` and port, the same `[store] url` and the same `[[devices]]` entry), and HAProxy
//! in front of them (`proxy.rs`). A replica can be stopped (SIGTERM), killed (`kill -9`) and
//! started again on its port and state directory; its log is its folder's `gateway.log`.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};
use serde_json::Value;

use super::proxy::{self, Proxy};
use crate::common::{self, Gateway};
use crate::pg::{PgServer, SUPERUSER};

/// The database every replica names.
pub const DATABASE: &str = "register";
/// The organization, and the web API device it certifies through.
pub const ORG: &str = "acme";
pub const DEVICE: &str = "dgi";

/// A port of 127.0.0.1 free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// The replicas of a cluster, by index (0..N), each on a port fixed for its life.
pub struct Replicas {
    root: PathBuf,
    /// Every replica's configuration but its `state_dir` and `listen`.
    shared_config: String,
    ports: Vec<u16>,
    running: Vec<Option<Gateway>>,
}

impl Replicas {
    fn new(root: &Path, shared_config: String, count: usize) -> Replicas {
        Replicas {
            root: root.to_path_buf(),
            shared_config,
            ports: (0..count).map(|_| free_port()).collect(),
            running: (0..count).map(|_| None).collect(),
        }
    }

    /// How many there are (running or not).
    pub fn count(&self) -> usize {
        self.ports.len()
    }

    /// Every replica started, one after the other, each ready before the next; the
    /// organization [`ORG`] (with `quota`, if given) and a key added through the first: the key.
    pub async fn start_all(&mut self, quota: Option<u64>) -> String {
        let mut key = String::new();
        for i in 0..self.count() {
            self.start(i);
            if i == 0 {
                let dir = self.dir(0);
                key = tokio::task::block_in_place(|| {
                    common::add_org_with_key(&dir, &dir.join("config.toml"), ORG, DEVICE, quota)
                });
            }
            self.wait_ready(i).await;
        }
        key
    }

    /// Replica `i`'s folder: its `config.toml`, `gateway.log` and `state/`.
    pub fn dir(&self, i: usize) -> PathBuf {
        self.root.join(format!("replica{}", i + 1))
    }

    /// Replica `i`'s name in HAProxy's configuration and log.
    pub fn name(i: usize) -> String {
        format!("r{}", i + 1)
    }

    /// Its address.
    pub fn addr(&self, i: usize) -> SocketAddr {
        ([127, 0, 0, 1], self.ports[i]).into()
    }

    /// Every replica as HAProxy's servers.
    pub fn backends(&self) -> Vec<(String, SocketAddr)> {
        (0..self.count())
            .map(|i| (Replicas::name(i), self.addr(i)))
            .collect()
    }

    /// Starts replica `i` (again), on its port and state directory; returns once it listens.
    pub fn start(&mut self, i: usize) {
        assert!(self.running[i].is_none(), "replica {i} already runs");
        let dir = self.dir(i);
        std::fs::create_dir_all(&dir).expect("replica folder");
        let config = format!(
            "state_dir = {state:?}\nlisten = \"127.0.0.1:{port}\"\n{shared}",
            state = dir.join("state"),
            port = self.ports[i],
            shared = self.shared_config,
        );
        let gateway = tokio::task::block_in_place(|| Gateway::start(&dir, &config));
        self.running[i] = Some(gateway);
    }

    /// Waits until replica `i` says it can certify (`status` true).
    pub async fn wait_ready(&self, i: usize) {
        self.gateway(i).wait_ready().await;
    }

    /// SIGTERM to replica `i`, then waits for its exit: whether it exited cleanly.
    pub async fn stop(&mut self, i: usize) -> bool {
        let mut gateway = self.running[i].take().expect("replica runs");
        tokio::task::spawn_blocking(move || gateway.terminate())
            .await
            .expect("SIGTERM and wait")
    }

    /// `kill -9` of replica `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut gateway) = self.running[i].take() {
            tokio::task::block_in_place(|| gateway.kill9());
        }
    }

    /// Replica `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.running[i].as_ref().map(Gateway::pid)
    }

    /// Whether replica `i` runs.
    pub fn is_running(&self, i: usize) -> bool {
        self.running[i].is_some()
    }

    /// Replica `i`'s log (also once stopped).
    pub fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir(i).join("gateway.log")).unwrap_or_default()
    }

    /// Every replica's log, each under its name.
    pub fn logs(&self) -> String {
        (0..self.count())
            .map(|i| format!("---- {} ----\n{}", Replicas::name(i), self.log(i)))
            .collect()
    }

    /// The CLI against replica `i`'s configuration (its admin socket, its store).
    pub fn cli(&self, i: usize, args: &[&str]) -> Output {
        let dir = self.dir(i);
        tokio::task::block_in_place(|| common::cli(&dir, &dir.join("config.toml"), args))
    }

    /// [`Replicas::cli`], asserting success; its stdout.
    pub fn cli_ok(&self, i: usize, args: &[&str]) -> String {
        let out = self.cli(i, args);
        assert!(
            out.status.success(),
            "{args:?} on {}: {}",
            Replicas::name(i),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn gateway(&self, i: usize) -> &Gateway {
        self.running[i].as_ref().expect("replica runs")
    }
}

/// A running cluster. Dropped in this order: HAProxy, the replicas, the simulator, PostgreSQL,
/// the folder.
pub struct Cluster {
    pub proxy: Proxy,
    pub replicas: Replicas,
    pub api: RunningEdef,
    pub pg: PgServer,
    /// A live key of [`ORG`].
    pub key: String,
    root: tempfile::TempDir,
}

impl Cluster {
    /// `count` replicas started one after the other (each ready before the next starts; the
    /// organization, with `quota` if given, and its key added through the first), then HAProxy;
    /// returns once HAProxy has every replica in service. The web API answers after
    /// `latency`. `None` (a skip, or a failure under CI) without HAProxy or PostgreSQL.
    pub async fn start(
        subject: &str,
        count: usize,
        quota: Option<u64>,
        latency: Duration,
    ) -> Option<Cluster> {
        Cluster::start_with(subject, count, quota, latency, "").await
    }

    /// [`Cluster::start`] with `extra` at the end of every replica's configuration (its own
    /// tables: `[smtp]`...).
    pub async fn start_with(
        subject: &str,
        count: usize,
        quota: Option<u64>,
        latency: Duration,
        extra: &str,
    ) -> Option<Cluster> {
        let program = proxy::program(subject)?;
        if !PgServer::installed(subject) {
            return None;
        }
        let pg = tokio::task::block_in_place(|| PgServer::init(subject))?;
        pg.sql("postgres", &format!("CREATE DATABASE {DATABASE}"));
        let root = tempfile::tempdir().expect("temporary folder");
        let mut options = EdefOptions::default();
        options.faults.latency_ms = latency.as_millis() as u64;
        let api = start_edef(([127, 0, 0, 1], 0).into(), options)
            .await
            .expect("the web API simulator starts");
        let token = root.path().join("dgi.token");
        std::fs::write(&token, "sim-token\n").expect("token file");
        let shared_config = format!(
            "\n[http]\nmax_connections_per_peer = 256\ntrusted_proxies = [\"127.0.0.1\"]\n\n\
             [[devices]]\nname = \"{DEVICE}\"\nkind = \"web_api\"\nurl = {url:?}\n\
             token_file = {token:?}\nstatus_interval_secs = 1\n\n\
             [store]\nurl = \"{store}\"\n{extra}",
            url = api.url(),
            store = pg.socket_url(SUPERUSER, DATABASE),
        );
        let mut replicas = Replicas::new(root.path(), shared_config, count);
        let key = replicas.start_all(quota).await;
        let proxy = tokio::task::block_in_place(|| {
            Proxy::start(&program, root.path(), &replicas.backends())
        });
        let cluster = Cluster {
            proxy,
            replicas,
            api,
            pg,
            key,
            root,
        };
        cluster.until_every_replica_serves().await;
        Some(cluster)
    }

    /// The cluster's folder.
    #[allow(dead_code)] // for the partition test to come (issue 29)
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Waits until HAProxy sends requests to every running replica: each has answered a
    /// status check of its own (HAProxy's checks come every second).
    async fn until_every_replica_serves(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let status = common::get(self.proxy.addr, "/api/v1/status", None).await;
            let log = self.proxy.log();
            let down = (0..self.replicas.count())
                .filter(|i| self.replicas.is_running(*i))
                .filter(|i| !in_service(&log, &Replicas::name(*i)))
                .count();
            if status.json["status"] == Value::Bool(true) && down == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "HAProxy does not serve every replica: {}\n{}",
                status.body,
                self.proxy.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Every production register entry's rn, in the register's order (SQL on the database
    /// every replica writes).
    pub fn register_rns(&self) -> Vec<String> {
        let rows = self.pg.sql(
            DATABASE,
            "SELECT rn FROM register_entries WHERE environment = 'production' ORDER BY sequence",
        );
        rows.lines().map(str::to_owned).collect()
    }

    /// The running replica that holds the `leader` lease now, by the database's clock (its
    /// holder's name is `host/pid/random`).
    pub fn leader(&self) -> Option<usize> {
        let holder = self.pg.sql(
            DATABASE,
            "SELECT holder FROM leases WHERE name = 'leader' AND held_until > now()",
        );
        let pid: u32 = holder.trim().split('/').nth(1)?.parse().ok()?;
        (0..self.replicas.count()).find(|i| self.replicas.pid(*i) == Some(pid))
    }

    /// Intents neither certified nor abandoned (an invoice in doubt).
    pub fn open_intents(&self) -> usize {
        self.pg
            .sql(
                DATABASE,
                "SELECT count(*) FROM intents WHERE state = 'open'",
            )
            .parse()
            .expect("a count")
    }

    /// Every rn the simulator confirmed (its finalized invoices), in its order.
    pub fn confirmed_rns(&self) -> Vec<String> {
        self.api.finalized().into_iter().map(|i| i.rn).collect()
    }

    /// Asserts that every rn of `certified` (answered 200) is in the register exactly once and
    /// confirmed exactly once at the DGI, that neither holds any other, that no invoice is in
    /// doubt, and that `log verify` passes on a replica's CLI.
    pub fn assert_each_once(&self, certified: &std::collections::BTreeSet<String>) {
        let context = || format!("{}\n{}", self.replicas.logs(), self.proxy.log());
        for (what, rns) in [
            ("the register", self.register_rns()),
            ("the DGI's confirmed list", self.confirmed_rns()),
        ] {
            let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
            for rn in &rns {
                *seen.entry(rn).or_default() += 1;
            }
            let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
            assert!(twice.is_empty(), "{what} holds twice: {twice:?}");
            let missing: Vec<_> = certified
                .iter()
                .filter(|rn| !seen.contains_key(rn.as_str()))
                .collect();
            assert!(
                missing.is_empty(),
                "answered 200, not in {what}: {missing:?}\n{}",
                context()
            );
            let extra: Vec<_> = seen.keys().filter(|rn| !certified.contains(**rn)).collect();
            assert!(
                extra.is_empty(),
                "in {what}, never answered 200: {extra:?}\n{}",
                context()
            );
        }
        assert_eq!(self.open_intents(), 0, "an invoice in doubt\n{}", context());
        let running = (0..self.replicas.count())
            .find(|i| self.replicas.is_running(*i))
            .expect("a replica runs");
        self.replicas.cli_ok(running, &["log", "verify"]);
    }
}

/// Whether HAProxy's log says server `name` of the backend is in service: not said down
/// since it was last said up (it starts in service).
fn in_service(log: &str, name: &str) -> bool {
    let server = format!("replicas/{name} is ");
    let last = log
        .lines()
        .rev()
        .find_map(|line| line.split_once(&server).map(|(_, rest)| rest));
    last.is_none_or(|state| state.starts_with("UP"))
}

// A replica cut off by a network namespace (`harness/outsider.rs`), for the partition test.
mod outsider;
pub use outsider::{Netns, Outsider};

/// The NIM of the web API simulator's e-MCF (its default).
const NIM: &str = "CD01000001-1";

/// `intent resolve` of intent `id` (request `uid`) as an administrator types it, from what
/// the DGI's portal (the simulator's finalized list) shows: certified with its elements, or
/// not; whether the DGI had finalized it.
pub fn resolve_args(api: &RunningEdef, id: &str, uid: &str, by: &str) -> (Vec<String>, bool) {
    let mut args: Vec<String> = ["intent", "resolve", id].map(String::from).to_vec();
    let now = chrono::Utc::now();
    let on_portal = api.finalized().into_iter().find(|f| f.uid == uid);
    let finalized = on_portal.is_some();
    match on_portal {
        Some(invoice) => args.extend([
            "--certified".to_owned(),
            "--code-def".to_owned(),
            invoice.code_def.clone(),
            "--qr-code".to_owned(),
            format!(
                "DGI-RDC;{NIM};{};{};{}",
                invoice.code_def,
                common::SIM_NIF,
                now.format("%Y%m%d%H%M%S")
            ),
            "--counters".to_owned(),
            invoice.counters.clone(),
            "--nim".to_owned(),
            NIM.to_owned(),
            "--date-time".to_owned(),
            now.format("%Y-%m-%dT%H:%M:%S").to_string(),
        ]),
        None => args.push("--not-certified".to_owned()),
    }
    args.extend(["--by".to_owned(), by.to_owned()]);
    (args, finalized)
}
