//! The crash harness (issue: never lose or duplicate a certification), shared by
//! `tests/crash.rs` (the short CI run) and `examples/crash.rs` (long runs, `scripts/crash-test`).
//!
//! The real `emcf-gateway` binary runs `serve` against a simulator that lives in this process
//! and keeps running across gateway kills (`device.rs`): the box on a pty, whose fiscal memory
//! file is the device's truth, or the DGI web API on a socket ([`Settings::channel`]), whose
//! finalized invoices are the truth. On the web API, a confirm whose answer died with the
//! gateway leaves an invoice in doubt: before each check the harness settles those as an
//! administrator would (`administrator.rs`: `intent list`, `intent resolve` from what the DGI
//! shows), so the oracle below holds for both. `C` clients post invoices with distinct rns; each retries its current rn
//! with the same body after an error or a connection reset until it gets a 200 or a definitive
//! 4xx, and now and then replays an rn it already has a 200 for. The gateway dies again and
//! again, each "life" in one of three ways ([`Death`], rotating, see [`plan`]):
//! - `kill -9` at a random moment (seeded) while the clients load it;
//! - `kill -9` at a random moment of its start-up (the reconciliation of open intents);
//! - by itself at a certification step: started with `EMCF_FAILPOINTS=<point>`, it aborts the
//!   first time it reaches the point (the four points of `emcf_gateway::failpoint`, rotating).
//!
//! Replicas mode ([`Settings::replicas`], `replicas.rs`): R replicas over one PostgreSQL
//! through the web API, each request to one of them at random; each death is one replica's
//! while the others serve, and the oracle below runs over the one register once no intent is
//! settling, the invoices in doubt listed by every replica and settled once through any.
//!
//! After every restart, once `GET /api/v1/status` says true (it is false while open intents
//! are settled) and with the clients held back, the ORACLE is checked:
//! - lost: an rn a client got a 200 for that is not in LogInvoices (`log export --format json`
//!   through the admin socket) with the codeDEFDGI of that first 200, or whose later replay
//!   answered another codeDEFDGI. Must be 0.
//! - duplicated: an rn or a codeDEFDGI twice in the register, or an rn twice in the simulator's
//!   fiscal memory. Must be 0.
//! - unexpected: a register entry without a device invoice of the same rn and codeDEFDGI (and
//!   the same counters). Must be 0.
//! - unrecorded: a device invoice missing from the register once the gateway is ready (every
//!   intent settled: the device's fiscal memory and the register must be equal). Must be 0.
//! - quota: `org show` used == the register's Production entries of its year.
//! - recovered (information): entries whose `source` is `reconciled`.
//!
//! After the last death, one more restart: the oracle, `log verify`, `GET /api/v1/Invoice/{rn}`
//! of every acknowledged rn (same codeDEFDGI), and a clean exit on SIGTERM. The run also
//! measures restart-to-ready: ms from spawning the process to `status: true`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use emcf_gateway::failpoint::POINTS;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, OwnedRwLockWriteGuard, RwLock};

mod administrator;
mod client;
mod device;
#[path = "../support/http.rs"]
mod http;
#[path = "../support/invoice.rs"]
mod invoice;
#[path = "../support/pg.rs"]
mod pg;
pub mod postgres;
pub mod power_cut;
#[path = "../support/pty.rs"]
mod pty;
pub mod replicas;
mod report;

use client::{request, run_client};
pub use device::Channel;
use device::Device;
use postgres::Database;
pub use postgres::Store;
pub use report::{ClientStats, Report};

/// The organization the clients certify for.
pub const ORG: &str = "crash-org";
/// The NIF the simulator is personalized for by default.
pub const SIM_NIF: &str = "A1234567B";

/// How long a gateway may take to listen, and then to become ready.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long a gateway armed with a failpoint may take to reach it under load.
const FAILPOINT_LIMIT: Duration = Duration::from_secs(20);
/// Longest wait for one HTTP answer.
const REQUEST_LIMIT: Duration = Duration::from_secs(30);

/// What a run does.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The `emcf-gateway` binary.
    pub binary: PathBuf,
    /// Number of gateway deaths (kills and failpoint aborts).
    pub kills: usize,
    /// Seed of the kill moments and of the clients' choices.
    pub seed: u64,
    /// Concurrent clients.
    pub clients: usize,
    /// A load kill comes after a random 0..this once the clients are let in.
    pub load_kill_max: Duration,
    /// The simulator's 38h processing time for a sale (long enough for kills to land in it).
    pub finalize: Duration,
    /// Print a progress line every this many kills (0: never).
    pub progress_every: usize,
    /// `RUST_LOG` of the gateway (its stderr goes to `<dir>/gateway.log`).
    pub gateway_log: String,
    /// Keep the run's directory (state, journal, fiscal memory, gateway log) when it fails
    /// (always with `CRASH_KEEP=1` in the environment).
    pub keep_on_failure: bool,
    /// The box on a pty, or the DGI web API (whose simulator answers after `finalize`).
    pub channel: Channel,
    /// Each death is a power cut of the file system holding the state directory instead
    /// (`power_cut.rs`, root only): `kills` cuts, each under load a random
    /// 0..`load_kill_max` after the clients are let in, or during the start-up.
    pub power_cuts: bool,
    /// Where the register is: the state directory, or a PostgreSQL server the harness starts
    /// (`postgres.rs`).
    pub store: Store,
    /// Each death is the PostgreSQL server's instead (`pg_ctl stop -m immediate`), under
    /// load, the gateway never restarted (`postgres.rs`; needs [`Store::Postgres`]).
    pub database_kills: bool,
    /// 2 or more: that many replicas over one PostgreSQL, each death one replica's while the
    /// others serve (`replicas.rs`; the web API and [`Store::Postgres`] only). 0 or 1: one
    /// gateway.
    pub replicas: usize,
}

impl Settings {
    /// Defaults for `binary`: 100 kills, 4 clients, seed 1.
    pub fn new(binary: PathBuf) -> Settings {
        Settings {
            binary,
            kills: 100,
            seed: 1,
            clients: 4,
            load_kill_max: Duration::from_millis(400),
            finalize: Duration::from_millis(30),
            progress_every: 50,
            gateway_log: "info".to_string(),
            keep_on_failure: true,
            channel: Channel::Box,
            power_cuts: false,
            store: Store::Embedded,
            database_kills: false,
            replicas: 0,
        }
    }
}

/// How one life of the gateway ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Death {
    /// The clients come in as soon as it listens (and meet the reconciliation of what the
    /// last death left open: 409 and 503, retried), are held back once it is ready for the
    /// oracle, let in again; `kill -9` a random 0..`load_kill_max` later.
    Load,
    /// `kill -9` a random moment after spawning (before it listens, while it reconciles, or
    /// just after), the clients coming in as soon as it listens. No oracle for this life.
    Startup,
    /// Started with `EMCF_FAILPOINTS=<point>`: ready and checked before the clients come in,
    /// then it aborts by itself the first time an invoice reaches the point.
    Failpoint(&'static str),
}

/// The death of life `kill`: a cycle of 8 with every failpoint once, two load kills and two
/// start-up kills, each start-up kill right after a failpoint that leaves an intent open
/// (`after_intent`, `after_finalize`) so that it lands in the reconciliation.
pub fn plan(kill: usize) -> Death {
    match kill % 8 {
        1 => Death::Failpoint(POINTS[0]),
        3 => Death::Failpoint(POINTS[1]),
        4 | 6 => Death::Startup,
        5 => Death::Failpoint(POINTS[2]),
        7 => Death::Failpoint(POINTS[3]),
        _ => Death::Load,
    }
}

/// State shared by the controller and the clients.
struct Shared {
    /// Clients hold it (read) for one request; the controller (write) while the gateway
    /// restarts and the oracle runs.
    gate: Arc<RwLock<()>>,
    /// Where the clients send: the gateway, or every replica that listens (each request to
    /// one of them at random).
    addrs: Mutex<Vec<SocketAddr>>,
    /// Replicas mode: each replica keeps its address across restarts (`replicas.rs`).
    replicas: bool,
    /// rn -> codeDEFDGI of its first 200.
    acks: Mutex<BTreeMap<String, String>>,
    /// rns whose later 200 carried another codeDEFDGI.
    changed: Mutex<BTreeSet<String>>,
    stats: Mutex<ClientStats>,
    anomalies: Mutex<Vec<String>>,
    stop: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn anomaly(&self, text: String) {
        lock(&self.anomalies).push(text);
    }
}

/// Runs the whole harness; `Err` when it could not go on (a gateway that never became ready,
/// a CLI that failed...), with what is known.
pub async fn run(settings: Settings) -> Result<Report, String> {
    let started = Instant::now();
    replicas::refuse_what_cannot_be_shared(&settings)?;
    let dir = tempfile::Builder::new()
        .prefix("emcf-crash-")
        .tempdir()
        .map_err(|e| format!("tempdir: {e}"))?;
    let mut harness = Harness::new(settings.clone(), dir.path()).await?;
    let outcome = if settings.power_cuts {
        harness.run_power_cuts().await
    } else if settings.database_kills {
        harness.run_database_kills().await
    } else if settings.replicas > 1 {
        harness.run_replicas().await
    } else {
        harness.run_all().await
    };
    harness.finish().await;
    let mut report = std::mem::take(&mut harness.report);
    report.elapsed = started.elapsed();
    report
        .anomalies
        .extend(lock(&harness.shared.anomalies).drain(..));
    report.clients = lock(&harness.shared.stats).clone();
    let failed = outcome.is_err() || !report.ok();
    if (failed && settings.keep_on_failure) || std::env::var_os("CRASH_KEEP").is_some() {
        if let Some(database) = &harness.database {
            database.keep_in(dir.path());
        }
        report.kept_dir = Some(dir.keep());
    }
    match outcome {
        Ok(()) => Ok(report),
        Err(error) => Err(format!(
            "{error}\n{}\n{}",
            report.summary_line(),
            report.details()
        )),
    }
}

struct Harness {
    settings: Settings,
    dir: PathBuf,
    /// The configuration the CLI uses: the gateway's, or a running replica's.
    config: PathBuf,
    device: Device,
    shared: Arc<Shared>,
    clients: Vec<tokio::task::JoinHandle<()>>,
    rng: StdRng,
    report: Report,
    key: String,
    /// Held while the clients must wait (restart, oracle).
    held: Option<OwnedRwLockWriteGuard<()>>,
    /// The PostgreSQL server of [`Store::Postgres`] (stopped when the harness goes).
    database: Option<Database>,
}

/// One process of the gateway.
struct Life {
    child: Child,
    spawned: Instant,
    listening: Option<oneshot::Receiver<SocketAddr>>,
    addr: Option<SocketAddr>,
}

impl Harness {
    async fn new(settings: Settings, dir: &Path) -> Result<Harness, String> {
        if !settings.binary.is_file() {
            return Err(format!(
                "no gateway binary at {} (build it first)",
                settings.binary.display()
            ));
        }
        let device = Device::start(settings.channel, dir, settings.finalize).await?;
        let database = match settings.store {
            Store::Embedded => None,
            Store::Postgres => Some(Database::start()?),
        };
        let config = dir.join("config.toml");
        let text = format!(
            "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n{entry}{store}",
            state = dir.join("state"),
            entry = device.config_entry(),
            store = database
                .as_ref()
                .map(Database::store_table)
                .unwrap_or_default(),
        );
        std::fs::write(&config, text).map_err(|e| format!("config: {e}"))?;
        let gate = Arc::new(RwLock::new(()));
        let replicas = settings.replicas > 1;
        Ok(Harness {
            rng: StdRng::seed_from_u64(settings.seed),
            settings,
            dir: dir.to_path_buf(),
            config,
            device,
            shared: Arc::new(Shared {
                gate,
                addrs: Mutex::new(Vec::new()),
                replicas,
                acks: Mutex::new(BTreeMap::new()),
                changed: Mutex::new(BTreeSet::new()),
                stats: Mutex::new(ClientStats::default()),
                anomalies: Mutex::new(Vec::new()),
                stop: AtomicBool::new(false),
            }),
            clients: Vec::new(),
            report: Report::default(),
            key: String::new(),
            held: None,
            database,
        })
    }

    async fn run_all(&mut self) -> Result<(), String> {
        let started = Instant::now();
        self.close().await;
        for kill in 0..self.settings.kills {
            let death = plan(kill);
            let failpoint = match death {
                Death::Failpoint(point) => Some(point),
                _ => None,
            };
            let mut life = self.spawn(failpoint)?;
            match death {
                Death::Startup => {
                    let outcome = self.startup_kill(&mut life, &[]).await;
                    self.close().await;
                    outcome?;
                }
                Death::Load => {
                    let addr = self.checked_under_load(&mut life, kill, false).await?;
                    self.open(addr);
                    let outcome = self.load_kill(&mut life).await;
                    self.close().await;
                    outcome?;
                }
                Death::Failpoint(point) => {
                    // Checked before the clients come in: the first invoice may abort it.
                    let ready = self.until_ready(&mut life).await?;
                    self.record_ready(ready, kill);
                    self.check(&life, false).await?;
                    let addr = life.addr.ok_or("no address")?;
                    self.open(addr);
                    let outcome = self.failpoint_death(&mut life, point).await;
                    self.close().await;
                    outcome?;
                }
            }
            self.report.kills += 1;
            let every = self.settings.progress_every;
            if every > 0 && (kill + 1) % every == 0 {
                self.progress(started);
            }
        }
        self.last_life().await
    }

    /// The last restart: settle, check everything, stop cleanly.
    async fn last_life(&mut self) -> Result<(), String> {
        let mut life = self.spawn(None)?;
        self.checked_under_load(&mut life, self.settings.kills, true)
            .await?;
        self.stop_clients().await;
        if !terminate(&mut life).await {
            self.shared
                .anomaly("the last gateway did not exit cleanly on SIGTERM".to_string());
        }
        Ok(())
    }

    /// Life `kill` of a gateway just spawned: the clients come in as soon as it listens (they
    /// meet the reconciliation of what the last death left open: 409 and 503 to retry), are
    /// held back once it is ready, and the oracle is checked (the first life sets up the
    /// organization and the clients instead; `last`: every final check too). The clients are
    /// held back on return; its address.
    async fn checked_under_load(
        &mut self,
        life: &mut Life,
        kill: usize,
        last: bool,
    ) -> Result<SocketAddr, String> {
        let addr = self.listening(life, START_LIMIT).await?;
        self.open(addr);
        let ready = self.until_ready(life).await;
        self.close().await;
        let ready = ready?;
        self.until_ready(life).await?;
        if kill == 0 {
            self.setup().await?;
        } else {
            self.record_ready(ready, kill);
        }
        self.check(life, last).await?;
        Ok(addr)
    }

    fn record_ready(&mut self, ms: u64, life: usize) {
        self.report.ready_ms.push(ms);
        let before = life
            .checked_sub(1)
            .map_or("none".to_string(), |before| self.death_of(before));
        let slowest = &mut self.report.slowest;
        slowest.push((ms, life, before));
        slowest.sort_by_key(|slow| std::cmp::Reverse(slow.0));
        slowest.truncate(5);
    }

    /// Lets the clients in, on `addr`.
    fn open(&mut self, addr: SocketAddr) {
        self.open_to(vec![addr]);
    }

    /// Lets the clients in, each request to one of `addrs` (the replicas that listen).
    fn open_to(&mut self, addrs: Vec<SocketAddr>) {
        *lock(&self.shared.addrs) = addrs;
        self.held = None;
    }

    /// Holds the clients back; returns once no request is in flight.
    async fn close(&mut self) {
        if self.held.is_none() {
            self.held = Some(Arc::clone(&self.shared.gate).write_owned().await);
        }
    }

    fn progress(&self, started: Instant) {
        let (median, _, max) = self.report.ready_stats();
        println!(
            "[{:>6}/{}] {:>7.1}s certified={} recovered={} lost={} duplicated={} unexpected={} \
             unrecorded={} ready_ms median={median} max={max}",
            self.report.kills,
            self.settings.kills,
            started.elapsed().as_secs_f64(),
            self.report.certified,
            self.report.recovered,
            self.report.lost.len(),
            self.report.duplicated.len(),
            self.report.unexpected.len(),
            self.report.unrecorded.len(),
        );
    }

    /// How life `life` ends, for the log and the report.
    fn death_of(&self, life: usize) -> String {
        if self.settings.power_cuts {
            power_cut::death_of(life).to_string()
        } else if self.settings.database_kills {
            "the gateway lives on; the database is killed under load".to_string()
        } else if self.settings.replicas > 1 {
            format!("{:?} of a replica", replicas::plan(life))
        } else {
            format!("{:?}", plan(life))
        }
    }

    /// Starts `serve`, with `failpoint` armed if given; marks the start in the gateway's log.
    fn spawn(&self, failpoint: Option<&'static str>) -> Result<Life, String> {
        self.spawn_as(&self.config, &self.dir.join("gateway.log"), failpoint)
    }

    /// [`Harness::spawn`] with `config`, logging to `log` (a replica's).
    fn spawn_as(
        &self,
        config: &Path,
        log: &Path,
        failpoint: Option<&'static str>,
    ) -> Result<Life, String> {
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("gateway log: {e}"))?;
        let life = self.report.kills;
        let death = if life < self.settings.kills {
            self.death_of(life)
        } else {
            "the last one".to_string()
        };
        writeln!(log, "=== crash harness: life {life} ({death}) ===")
            .map_err(|e| format!("gateway log: {e}"))?;
        pty::release_exclusive_mode();
        let mut child = Command::new(&self.settings.binary)
            .arg("--config")
            .arg(config)
            .arg("serve")
            .env("EMCF_CONFIG", "")
            .env("EMCF_FAILPOINTS", failpoint.unwrap_or(""))
            .env("RUST_LOG", &self.settings.gateway_log)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", self.settings.binary.display()))?;
        let spawned = Instant::now();
        let stdout = child.stdout.take().ok_or("stdout not piped")?;
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let mut tx = Some(tx);
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(rest) = line.strip_prefix("emcf-gateway listening on http://") {
                    if let (Some(tx), Ok(addr)) = (tx.take(), rest.trim().parse()) {
                        let _ = tx.send(addr);
                    }
                }
            }
        });
        Ok(Life {
            child,
            spawned,
            listening: Some(rx),
            addr: None,
        })
    }

    /// Waits for the listening line, then for `status: true`; returns ms since the spawn.
    async fn until_ready(&self, life: &mut Life) -> Result<u64, String> {
        let addr = self.listening(life, START_LIMIT).await?;
        loop {
            if let Ok(response) = request(addr, "GET", "/api/v1/status", &[], None).await {
                if response.json["status"] == Value::Bool(true) {
                    return Ok(life.spawned.elapsed().as_millis() as u64);
                }
            }
            if life.spawned.elapsed() > START_LIMIT {
                return Err(format!(
                    "gateway not ready {START_LIMIT:?} after its start\n{}",
                    self.log_tail()
                ));
            }
            if let Ok(Some(status)) = life.child.try_wait() {
                return Err(format!(
                    "gateway exited before it was ready: {status}\n{}",
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn listening(&self, life: &mut Life, within: Duration) -> Result<SocketAddr, String> {
        if let Some(addr) = life.addr {
            return Ok(addr);
        }
        let receiver = life.listening.take().ok_or("no listening line expected")?;
        match tokio::time::timeout(within, receiver).await {
            Ok(Ok(addr)) => {
                life.addr = Some(addr);
                Ok(addr)
            }
            Ok(Err(_)) => {
                let status = life.child.wait().await.ok();
                Err(format!(
                    "gateway exited without listening ({status:?})\n{}",
                    self.log_tail()
                ))
            }
            Err(_) => Err(format!(
                "gateway did not listen within {within:?}\n{}",
                self.log_tail()
            )),
        }
    }

    /// The first life: the organization and its key, then the clients (held at the gate).
    async fn setup(&mut self) -> Result<(), String> {
        self.cli(&[
            "org",
            "add",
            "--id",
            ORG,
            "--name",
            "Crash shop",
            "--nif",
            SIM_NIF,
            "--isf",
            "ISF-1",
            "--device",
            "shop",
            "--quota",
            "100000000",
        ])
        .await?;
        self.key = self
            .cli(&["key", "issue", "--org", ORG])
            .await?
            .trim()
            .to_string();
        for id in 0..self.settings.clients {
            let shared = Arc::clone(&self.shared);
            let key = self.key.clone();
            let seed = self
                .settings
                .seed
                .wrapping_add((id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            self.clients
                .push(tokio::spawn(run_client(shared, id, key, seed)));
        }
        Ok(())
    }

    /// A random moment into the start-up: 0 .. a bit more than the median restart-to-ready.
    fn startup_moment(&mut self) -> tokio::time::Instant {
        let (median, _, _) = self.report.ready_stats();
        let window = if median == 0 {
            300
        } else {
            median + median / 2
        };
        let delay = Duration::from_millis(self.rng.gen_range(0..=window));
        tokio::time::Instant::now() + delay
    }

    /// `kill -9` a random moment into the start-up (`startup_moment`); the clients come in
    /// as soon as it listens (and go on to `serving`, the other replicas).
    async fn startup_kill(
        &mut self,
        life: &mut Life,
        serving: &[SocketAddr],
    ) -> Result<(), String> {
        let moment = self.startup_moment();
        let mut before_listening = true;
        if let Some(receiver) = life.listening.as_mut() {
            if let Ok(Ok(addr)) = tokio::time::timeout_at(moment, receiver).await {
                life.listening = None;
                life.addr = Some(addr);
                before_listening = false;
                self.open_to([serving, &[addr]].concat());
            }
        }
        tokio::time::sleep_until(moment).await;
        if let Some(status) = kill9(life).await? {
            return Err(format!(
                "gateway died by itself during its start-up: {status}\n{}",
                self.log_tail()
            ));
        }
        self.report.startup_kills += 1;
        if before_listening {
            self.report.startup_kills_before_listening += 1;
        }
        Ok(())
    }

    /// `kill -9` a random moment after the clients were let in.
    async fn load_kill(&mut self, life: &mut Life) -> Result<(), String> {
        let max = self.settings.load_kill_max.as_millis() as u64;
        let delay = self.rng.gen_range(0..=max);
        tokio::time::sleep(Duration::from_millis(delay)).await;
        if let Some(status) = kill9(life).await? {
            return Err(format!(
                "gateway died by itself under load: {status}\n{}",
                self.log_tail()
            ));
        }
        self.report.load_kills += 1;
        Ok(())
    }

    /// Waits for the gateway to abort at `point`.
    async fn failpoint_death(
        &mut self,
        life: &mut Life,
        point: &'static str,
    ) -> Result<(), String> {
        match tokio::time::timeout(FAILPOINT_LIMIT, life.child.wait()).await {
            Ok(Ok(status)) if status.signal() == Some(6) => {
                *self.report.failpoint_hits.entry(point).or_default() += 1;
                Ok(())
            }
            Ok(Ok(status)) => Err(format!(
                "gateway armed with {point} ended otherwise: {status}\n{}",
                self.log_tail()
            )),
            Ok(Err(error)) => Err(format!("wait: {error}")),
            Err(_) => {
                self.shared.anomaly(format!(
                    "failpoint {point} not reached within {FAILPOINT_LIMIT:?} (killed)"
                ));
                kill9(life).await?;
                Ok(())
            }
        }
    }

    /// The oracle. The clients are held back and the gateway is ready.
    async fn check(&mut self, life: &Life, last: bool) -> Result<(), String> {
        self.report.checks += 1;
        if self.device.is_finished() {
            return Err("the simulator stopped".to_string());
        }
        // Replicas settle through each replica before this (`replicas.rs`).
        if self.settings.channel == Channel::WebApi && self.settings.replicas < 2 {
            self.settle_as_administrator().await?;
        }
        // In this order: a 200 is durable before it is sent, and the device commits before
        // the gateway journals.
        let acks = lock(&self.shared.acks).clone();
        let entries: Vec<Value> = self
            .cli(&["log", "export", "--format", "json"])
            .await?
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).map_err(|e| format!("export line: {e}")))
            .collect::<Result<_, _>>()?;
        let device = self.device.invoices()?;
        let shown: Value = serde_json::from_str(&self.cli(&["org", "show", ORG, "--json"]).await?)
            .map_err(|e| format!("org show: {e}"))?;

        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
        let mut register: HashMap<(String, String), String> = HashMap::new();
        let mut rn_count: HashMap<String, usize> = HashMap::new();
        let mut code_count: HashMap<String, usize> = HashMap::new();
        for entry in &entries {
            let rn = text(&entry["rn"]);
            let code = text(&entry["security"]["codeDEFDGI"]);
            *rn_count.entry(rn.clone()).or_default() += 1;
            *code_count.entry(code.clone()).or_default() += 1;
            register.insert((rn, code), text(&entry["security"]["counters"]));
        }
        let mut on_device: HashMap<(String, String), String> = HashMap::new();
        let mut device_rn_count: HashMap<String, usize> = HashMap::new();
        for invoice in device {
            *device_rn_count.entry(invoice.rn.clone()).or_default() += 1;
            on_device.insert((invoice.rn, invoice.code_def), invoice.counters);
        }
        let report = &mut self.report;
        for (rn, n) in rn_count.iter().filter(|(_, n)| **n > 1) {
            report.duplicated.insert(format!("register rn {rn} x{n}"));
        }
        for (code, n) in code_count.iter().filter(|(_, n)| **n > 1) {
            report
                .duplicated
                .insert(format!("register codeDEFDGI {code} x{n}"));
        }
        for (rn, n) in device_rn_count.iter().filter(|(_, n)| **n > 1) {
            report.duplicated.insert(format!("device rn {rn} x{n}"));
        }
        for ((rn, code), counters) in &register {
            match on_device.get(&(rn.clone(), code.clone())) {
                None => {
                    report
                        .unexpected
                        .insert(format!("{rn} {code}: no such invoice on the device"));
                }
                Some(device_counters) if device_counters != counters => {
                    report.unexpected.insert(format!(
                        "{rn} {code}: counters {counters} in the register, {device_counters} on the device"
                    ));
                }
                Some(_) => {}
            }
        }
        for (rn, code) in on_device.keys() {
            if !register.contains_key(&(rn.clone(), code.clone())) {
                report.unrecorded.insert(format!("{rn} {code}"));
            }
        }
        for (rn, code) in &acks {
            if !register.contains_key(&(rn.clone(), code.clone())) {
                report.lost.insert(rn.clone());
            }
        }
        for rn in lock(&self.shared.changed).iter() {
            report.lost.insert(rn.clone());
        }
        let year = shown["quota"]["year"].as_i64();
        let used = shown["quota"]["used"].as_u64();
        let of_year = entries
            .iter()
            .filter(|e| e["quota_year"].as_i64() == year && e["environment"] != "sandbox")
            .count() as u64;
        if used != Some(of_year) {
            report.quota_mismatches.push(format!(
                "check {}: org show used {used:?}, {of_year} entries of {year:?}",
                report.checks
            ));
        }
        let sequences: Vec<u64> = entries
            .iter()
            .filter_map(|e| e["sequence"].as_u64())
            .collect();
        let expected: Vec<u64> = (1..=entries.len() as u64).collect();
        if sequences != expected {
            report.violations.push(format!(
                "check {}: register sequences are not 1..={}",
                report.checks,
                entries.len()
            ));
        }
        report.recovered = entries
            .iter()
            .filter(|e| e["source"] == "reconciled")
            .count();
        report.certified = entries.len();
        if last {
            self.final_checks(life, &acks).await?;
        }
        Ok(())
    }

    /// At the end: `log verify`, and every acknowledged rn looked up over HTTP.
    async fn final_checks(
        &mut self,
        life: &Life,
        acks: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        match self.cli(&["log", "verify"]).await {
            Ok(_) => {}
            Err(error) => self.report.violations.push(error),
        }
        let addr = life.addr.ok_or("no address")?;
        let auth = format!("Bearer {}", self.key);
        for (rn, code) in acks {
            let path = format!("/api/v1/Invoice/{rn}");
            let response = request(addr, "GET", &path, &[("Authorization", &auth)], None).await?;
            if response.status != 200 || response.json["codeDEFDGI"].as_str() != Some(code) {
                self.report.lost.insert(rn.clone());
                self.report.violations.push(format!(
                    "GET {path}: {} {} (acknowledged {code})",
                    response.status, response.body
                ));
            }
        }
        Ok(())
    }

    async fn stop_clients(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.held = None;
        for client in self.clients.drain(..) {
            if tokio::time::timeout(REQUEST_LIMIT + Duration::from_secs(5), client)
                .await
                .is_err()
            {
                self.shared.anomaly("a client did not stop".to_string());
            }
        }
    }

    async fn finish(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for client in self.clients.drain(..) {
            client.abort();
        }
        self.device.stop().await;
    }

    /// Runs the CLI (through the admin socket of the running gateway); its stdout.
    async fn cli(&self, args: &[&str]) -> Result<String, String> {
        self.cli_as(&self.config, args).await
    }

    /// [`Harness::cli`] with `config` (a replica's: its admin socket).
    async fn cli_as(&self, config: &Path, args: &[&str]) -> Result<String, String> {
        let mut last_error = String::new();
        // The admin socket is bound by a task of its own: give it a moment after a start.
        for _ in 0..3 {
            pty::release_exclusive_mode();
            let out = Command::new(&self.settings.binary)
                .arg("--config")
                .arg(config)
                .args(args)
                .env("EMCF_CONFIG", "")
                .current_dir(&self.dir)
                .stdin(Stdio::null())
                .output()
                .await
                .map_err(|e| format!("cli: {e}"))?;
            if out.status.success() {
                return Ok(String::from_utf8_lossy(&out.stdout).to_string());
            }
            last_error = format!(
                "`emcf-gateway {}` failed ({}): {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(last_error)
    }

    /// The end of the gateway's log, without the line of each HTTP request (a gateway that
    /// never becomes ready answers hundreds of 503s, which would hide why).
    /// In replicas mode, the end of each replica's log.
    fn log_tail(&self) -> String {
        let logs = if self.settings.replicas > 1 {
            replicas::logs(&self.dir, self.settings.replicas)
        } else {
            vec![self.dir.join("gateway.log")]
        };
        let mut tail = String::new();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = text
                .lines()
                .filter(|line| !line.contains(" INFO request{"))
                .collect();
            let from = lines.len().saturating_sub(40);
            tail.push_str(&format!(
                "--- {} (tail) ---\n{}\n",
                log.strip_prefix(&self.dir).unwrap_or(&log).display(),
                lines[from..].join("\n")
            ));
        }
        tail
    }
}

/// `kill -9`; `Some(status)` if it had already exited by itself.
async fn kill9(life: &mut Life) -> Result<Option<ExitStatus>, String> {
    if let Ok(Some(status)) = life.child.try_wait() {
        return Ok(Some(status));
    }
    life.child
        .kill()
        .await
        .map_err(|e| format!("kill -9: {e}"))?;
    Ok(None)
}

/// SIGTERM and wait (kill -9 after 30 s); whether it exited successfully.
async fn terminate(life: &mut Life) -> bool {
    let Some(pid) = life.child.id() else {
        return false;
    };
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) only sends a signal; `pid` is the gateway this harness started (no
        // `kill` program needed: Debian's procps may be missing).
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    match tokio::time::timeout(Duration::from_secs(30), life.child.wait()).await {
        Ok(Ok(status)) => status.success(),
        _ => {
            let _ = life.child.kill().await;
            false
        }
    }
}
