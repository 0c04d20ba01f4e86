//! Replicas mode (issue 29; `scripts/crash-test replicas`): `R` replicas of the real binary
//! (`serve`, each with a state directory of its own, all on one `[store] url`, the PostgreSQL
//! server of `postgres.rs`) certify through one DGI web API simulator (`device.rs`; a box is
//! plugged into one machine and cannot be shared, the embedded store belongs to one process:
//! both refused). The clients of `client.rs` send each request to one live replica at random,
//! so a retry after a reset or a 503 often reaches another replica than its first try
//! (`retried_elsewhere` in the report; each replica keeps its port across restarts): that
//! retry must never certify twice.
//!
//! No load balancer: the harness picks the replica itself, from the seed, and knows at once
//! which one died (it killed it). HAProxy in front of replicas, its health checks and its
//! redispatch, are tested by `tests/operations/replicas/`; here the point is what the replicas
//! do, and a balancer would only hide which replica answered.
//!
//! Each death is one replica's, the others serving meanwhile ([`plan`]): `kill -9` of a
//! replica chosen at random (seeded) under load, `kill -9` during its start-up, or an abort at
//! a certification step (`EMCF_FAILPOINTS`: the replica restarted last is started armed). The
//! dead replica comes back on its own state directory, as a service manager restarts it on
//! its machine: the new process fences its predecessor at once and takes its open intents
//! over before it says ready (docs/design.md §12). One death in eight (the abort after an
//! intent, which leaves that intent open) it comes back on a new machine instead (a fresh
//! state directory): the others carry the load until the leader has
//! taken its predecessor's intents over, which it does only once that lease ran out and the
//! takeover grace passed (the device's timeouts are short here so that the grace is 10 s:
//! about 15 s in all), then the new machine joins.
//!
//! After each restart, the clients held back, the oracle of `mod.rs` over the one register
//! (read through a running replica's CLI) against the invoices the DGI finalized, once no
//! intent is still settling: what waits for an administrator is listed through every running
//! replica (each must list the same invoices, each once), settled through one of them at
//! random as `administrator.rs` does, and never surfaces again once settled.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use emcf_gateway::failpoint::POINTS;
use rand::Rng;
use serde_json::Value;

use super::administrator::{intent_id, on_portal, resolution};
use super::{Channel, Death, Harness, Life, Settings, Store};

/// How long the open intents may take to be settled (or handed to an administrator) before
/// an oracle: a replica gone on a new machine waits for its lease and the grace.
const SETTLE_LIMIT: Duration = Duration::from_secs(60);

/// The device's settings every replica shares (the same `[[devices]]` entry): short
/// timeouts, so that the takeover grace of a replica gone (the longest call and 5 s) is
/// 10 s, and a request a killed replica sent without its intent (a stray, which keeps its
/// place of the shared window) is cancelled by the leader after 10 s.
const DEVICE_SETTINGS: &str =
    "connect_timeout_ms = 1000\nrequest_timeout_ms = 4000\nhold_secs = 10\n";

/// The death of `kill` in replicas mode: a cycle of 8 with every failpoint once (the one the
/// web API's in-doubt path starts from first), two load kills of a replica chosen at random,
/// two start-up kills, each right after a failpoint that leaves an intent open so that it
/// lands in the takeover of the predecessor's intents. A failpoint or start-up death is the
/// replica restarted last (started armed, or killed during that start).
pub fn plan(kill: usize) -> Death {
    match kill % 8 {
        1 => Death::Failpoint(POINTS[2]),
        3 => Death::Failpoint(POINTS[1]),
        2 | 6 => Death::Startup,
        5 => Death::Failpoint(POINTS[0]),
        7 => Death::Failpoint(POINTS[3]),
        _ => Death::Load,
    }
}

/// Whether the replica dead at `kill` comes back on a new machine (a fresh state directory)
/// rather than on its own: its abort after an intent in each cycle of [`plan`], which leaves
/// that intent open for the leader to take over.
pub fn on_a_new_machine(kill: usize) -> bool {
    kill % 8 == 3
}

/// `Err` when `settings` asks replicas of what cannot be shared.
pub(super) fn refuse_what_cannot_be_shared(settings: &Settings) -> Result<(), String> {
    if settings.replicas < 2 {
        return Ok(());
    }
    if settings.channel == Channel::Box {
        return Err(
            "replicas mode certifies through the DGI web API only: a box is plugged \
                    into one machine, its serial port cannot be shared by replicas"
                .to_string(),
        );
    }
    if settings.store != Store::Postgres {
        return Err(
            "replicas mode needs the register in PostgreSQL: the embedded store \
                    belongs to one process"
                .to_string(),
        );
    }
    if settings.power_cuts || settings.database_kills {
        return Err("replicas mode kills replicas: not with power cuts or database kills".into());
    }
    Ok(())
}

/// Replica `i`'s folder.
fn folder(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("r{}", i + 1))
}

/// Every replica's log.
pub(super) fn logs(dir: &Path, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|i| folder(dir, i).join("gateway.log"))
        .collect()
}

/// One replica: its configuration (rewritten when it moves to a new machine), its log, and
/// its process while it runs.
struct Replica {
    config: PathBuf,
    log: PathBuf,
    machine: usize,
    /// Its port, kept across restarts (a new machine takes another): the clients tell the
    /// replicas apart by their address.
    port: u16,
    life: Option<Life>,
}

impl Harness {
    /// The replicas run: every replica started, then `kills` deaths of one of them.
    pub(super) async fn run_replicas(&mut self) -> Result<(), String> {
        let started = Instant::now();
        let count = self.settings.replicas;
        let mut fleet = Vec::with_capacity(count);
        for i in 0..count {
            let folder = folder(&self.dir, i);
            std::fs::create_dir_all(&folder).map_err(|e| format!("replica folder: {e}"))?;
            let replica = Replica {
                config: folder.join("config.toml"),
                log: folder.join("gateway.log"),
                machine: 0,
                port: free_port()?,
                life: None,
            };
            self.write_config(&replica)?;
            fleet.push(replica);
        }
        self.report.deaths_per_replica = vec![0; count];
        self.close().await;
        // One after the other, each ready before the next; the organization through the first.
        for i in 0..count {
            let mut life = self.spawn_as(&fleet[i].config, &fleet[i].log, None)?;
            self.until_ready(&mut life).await?;
            fleet[i].life = Some(life);
            if i == 0 {
                self.config = fleet[0].config.clone();
                self.setup().await?;
            }
        }
        let kills = self.settings.kills;
        self.check_replicas(&mut fleet, kills == 0).await?;
        let mut victim = 0;
        for kill in 0..kills {
            let death = plan(kill);
            if death == Death::Load {
                victim = self.rng.gen_range(0..count);
            }
            let mut life = fleet[victim].life.take().ok_or("the victim does not run")?;
            let others = serving(&fleet);
            let outcome = match death {
                Death::Load => {
                    self.open_to([others, life.addr.into_iter().collect()].concat());
                    self.load_kill(&mut life).await
                }
                Death::Failpoint(point) => {
                    self.open_to([others, life.addr.into_iter().collect()].concat());
                    self.failpoint_death(&mut life, point).await
                }
                Death::Startup => {
                    self.open_to(others.clone());
                    self.startup_kill(&mut life, &others).await
                }
            };
            self.close().await;
            outcome?;
            drop(life);
            self.report.kills += 1;
            self.report.deaths_per_replica[victim] += 1;
            if on_a_new_machine(kill) {
                // Its machine is gone: the others carry the load until the leader has taken
                // its invoices over, then a new machine joins.
                self.open_to(serving(&fleet));
                let taken = self.until_taken_over(&fleet[victim]).await;
                self.close().await;
                taken?;
                fleet[victim].machine += 1;
                fleet[victim].port = free_port()?;
                self.write_config(&fleet[victim])?;
                self.report.new_machines += 1;
            }
            // Back, armed for the next death if it is a failpoint; killed in its start-up if
            // it is a start-up death.
            let next = (kill + 1 < kills).then(|| plan(kill + 1));
            let failpoint = match next {
                Some(Death::Failpoint(point)) => Some(point),
                _ => None,
            };
            let replica = &fleet[victim];
            let mut life = self.spawn_as(&replica.config, &replica.log, failpoint)?;
            match next {
                Some(Death::Startup) => {}
                Some(Death::Failpoint(_)) => {
                    // Ready and checked before the clients come in: its first invoice may
                    // abort it.
                    let ready = self.until_ready(&mut life).await?;
                    self.record_ready(ready, kill + 1);
                }
                _ => {
                    let addr = self.listening(&mut life, super::START_LIMIT).await?;
                    self.open_to([serving(&fleet), vec![addr]].concat());
                    let ready = self.until_ready(&mut life).await;
                    self.close().await;
                    let ready = ready?;
                    self.record_ready(ready, kill + 1);
                }
            }
            fleet[victim].life = Some(life);
            if next != Some(Death::Startup) {
                self.check_replicas(&mut fleet, next.is_none()).await?;
            }
            let every = self.settings.progress_every;
            if every > 0 && (kill + 1) % every == 0 {
                self.progress(started);
            }
        }
        self.stop_clients().await;
        for (i, replica) in fleet.iter_mut().enumerate() {
            if let Some(mut life) = replica.life.take() {
                if !super::terminate(&mut life).await {
                    self.shared.anomaly(format!(
                        "replica r{} did not exit cleanly on SIGTERM",
                        i + 1
                    ));
                }
            }
        }
        Ok(())
    }

    /// Writes `replica`'s configuration: its state directory on its machine, its port, the
    /// shared device and store.
    fn write_config(&self, replica: &Replica) -> Result<(), String> {
        let text = format!(
            "state_dir = {state:?}\nlisten = \"127.0.0.1:{port}\"\n\n{entry}{DEVICE_SETTINGS}{store}",
            state = replica_state_dir(replica)?,
            port = replica.port,
            entry = self.device.config_entry(),
            store = self
                .database
                .as_ref()
                .map(super::Database::store_table)
                .unwrap_or_default(),
        );
        std::fs::write(&replica.config, text).map_err(|e| format!("replica config: {e}"))
    }

    /// Waits, the clients in, until the open intents of `replica`'s last process (gone with
    /// its machine) are another's: the leader fences it and takes them over once its lease
    /// ran out and the grace passed (read from the database's `intents.owner`).
    async fn until_taken_over(&mut self, replica: &Replica) -> Result<(), String> {
        let state = replica_state_dir(replica)?;
        let gone = std::fs::read_to_string(state.join("replica"))
            .map_err(|e| format!("{}: {e}", state.join("replica").display()))?;
        let gone = gone.trim();
        let database = self.database.as_ref().ok_or("replicas need PostgreSQL")?;
        let left = database.open_intents_of(gone)?;
        let since = Instant::now();
        while database.open_intents_of(gone)? > 0 {
            if since.elapsed() > SETTLE_LIMIT {
                return Err(format!(
                    "the open intents of {gone} not taken over within {SETTLE_LIMIT:?}\n{}",
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if left > 0 {
            self.report.taken_over_by_leader += left as usize;
            self.report
                .takeover_ms
                .push(since.elapsed().as_millis() as u64);
        }
        Ok(())
    }

    /// The oracle over the replicas (the clients held back, every replica that runs ready):
    /// once no intent is settling, the invoices in doubt settled through the replicas, then
    /// the oracle of `mod.rs` through one of them (`last`: every final check too).
    async fn check_replicas(&mut self, fleet: &mut [Replica], last: bool) -> Result<(), String> {
        let running: Vec<usize> = (0..fleet.len())
            .filter(|i| fleet[*i].life.is_some())
            .collect();
        for &i in &running {
            if let Some(life) = fleet[i].life.as_mut() {
                if let Ok(Some(status)) = life.child.try_wait() {
                    return Err(format!(
                        "replica r{} exited by itself: {status}\n{}",
                        i + 1,
                        self.log_tail()
                    ));
                }
            }
        }
        if running.is_empty() {
            return Err("no replica runs".to_string());
        }
        let through = running[self.rng.gen_range(0..running.len())];
        self.config = fleet[through].config.clone();
        self.until_settled().await?;
        self.settle_through_replicas(fleet, &running).await?;
        let life = fleet[through].life.as_ref().ok_or("no replica runs")?;
        self.check(life, last).await
    }

    /// Waits until every open intent waits for an administrator (none settling), as
    /// `intent list --json` shows them through the replica the CLI uses.
    async fn until_settled(&self) -> Result<(), String> {
        let since = Instant::now();
        loop {
            let open = self.open_intents(&self.config).await?;
            if open.iter().all(|i| i["state"] == "awaiting_administrator") {
                return Ok(());
            }
            if since.elapsed() > SETTLE_LIMIT {
                return Err(format!(
                    "intents still settling {SETTLE_LIMIT:?} after the restart: {open:?}\n{}",
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `intent list --json` through the replica of `config`.
    async fn open_intents(&self, config: &Path) -> Result<Vec<Value>, String> {
        let listed = self.cli_as(config, &["intent", "list", "--json"]).await?;
        serde_json::from_str(&listed).map_err(|e| format!("intent list --json: {e}"))
    }

    /// Every invoice waiting for an administrator, listed by every running replica (the
    /// same, each once), settled through one of them at random from what the DGI shows; an
    /// invoice settled before must not surface again.
    async fn settle_through_replicas(
        &mut self,
        fleet: &[Replica],
        running: &[usize],
    ) -> Result<(), String> {
        let mut listed: Option<(usize, BTreeSet<String>)> = None;
        let mut awaiting = Vec::new();
        for &i in running {
            let open = self.open_intents(&fleet[i].config).await?;
            let mut ids = BTreeSet::new();
            for intent in open
                .into_iter()
                .filter(|i| i["state"] == "awaiting_administrator")
            {
                let id = intent_id(&intent);
                if !ids.insert(id.clone()) {
                    self.report
                        .violations
                        .push(format!("r{} lists intent {id} twice", i + 1));
                }
                if listed.is_none() {
                    awaiting.push((id, intent));
                }
            }
            match &listed {
                None => listed = Some((i, ids)),
                Some((first, first_ids)) if *first_ids != ids => {
                    self.report.violations.push(format!(
                        "in doubt: r{} lists {first_ids:?}, r{} lists {ids:?}",
                        first + 1,
                        i + 1
                    ));
                }
                Some(_) => {}
            }
        }
        let finalized = self.device.invoices()?;
        for (id, intent) in awaiting {
            if !self.report.in_doubt_settled.insert(id.clone()) {
                self.report.violations.push(format!(
                    "intent {id} ({}) waits for an administrator again after it was settled",
                    intent["rn"]
                ));
                continue;
            }
            let on_portal = on_portal(&intent, &finalized);
            let args = resolution(&id, on_portal);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let through = running[self.rng.gen_range(0..running.len())];
            self.cli_as(&fleet[through].config, &args).await?;
            self.report.settled_by_administrator += 1;
            if on_portal.is_none() {
                self.report.settled_not_certified += 1;
            }
        }
        Ok(())
    }
}

/// The state directory `replica` runs on now.
fn replica_state_dir(replica: &Replica) -> Result<PathBuf, String> {
    let folder = replica.config.parent().ok_or("replica folder")?;
    Ok(folder.join(format!("state-{}", replica.machine)))
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| format!("a free port: {e}"))
}

/// The addresses of the replicas that run and listen.
fn serving(fleet: &[Replica]) -> Vec<SocketAddr> {
    fleet
        .iter()
        .filter_map(|replica| replica.life.as_ref().and_then(|life| life.addr))
        .collect()
}
