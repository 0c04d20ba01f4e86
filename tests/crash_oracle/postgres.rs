//! The register in PostgreSQL (issue 28): the same harness with [`Store::Postgres`], and
//! PostgreSQL itself killed under load.
//!
//! With [`Store::Postgres`] the harness starts a throwaway PostgreSQL server of its own
//! (`tests/support/pg.rs`: `initdb` in a temporary directory, `fsync` and `synchronous_commit`
//! on), makes one database for the run and appends its `[store]` table to the gateway's
//! configuration; everything else is the same harness: the gateway killed at random moments
//! and at every failpoint, and the oracle of `mod.rs` read through the CLI, which acts on the
//! database directly. A run that fails keeps the database's rows (`register.sql`, a `pg_dump`)
//! and the server's log (`postgresql.log`) in the run's directory.
//!
//! [`Settings::database_kills`](super::Settings::database_kills): each death is the database
//! server's instead (`pg_ctl stop -m immediate`, as a power cut of its machine: no checkpoint,
//! its WAL replayed at the next start), a seeded random 0..`load_kill_max` after the clients
//! are let in; it stays down a seeded random [`DOWN_MIN`]..[`DOWN_MAX`] while the clients keep
//! posting (and must meet 503 with code 165, never a 500), then starts again. The gateway is
//! never restarted: it must see the database come back by itself (`status` true again), then
//! the oracle is checked with the clients held back, and certification must go on (a new 200)
//! before the next kill.

use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::Value;

use super::client::request;
use super::pg::{PgServer, SUPERUSER};
use super::{lock, Harness};

/// The database of a run.
const DATABASE: &str = "register";
/// The shortest and longest outage of the database.
pub const DOWN_MIN: Duration = Duration::from_millis(200);
pub const DOWN_MAX: Duration = Duration::from_millis(1200);
/// How long the gateway may take to see the database back (its probe runs once a second).
const RESUME_LIMIT: Duration = Duration::from_secs(30);
/// The code of a register database that does not answer (docs/error-codes.md).
pub const DATABASE_FAULT: u64 = 165;

/// Where the gateway keeps its register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// The journal and its index in the state directory (the default).
    Embedded,
    /// A PostgreSQL server the harness starts (`[store] url`).
    Postgres,
}

/// Whether PostgreSQL's programs are here; if not, says so for `subject` (a skip outside CI, a
/// failure under `CI=true`).
pub fn installed(subject: &str) -> bool {
    PgServer::installed(subject)
}

/// The harness's PostgreSQL server and the run's database.
pub struct Database {
    server: PgServer,
}

impl Database {
    /// Starts a server and makes the run's database.
    pub fn start() -> Result<Database, String> {
        let server = tokio::task::block_in_place(|| PgServer::init("the crash harness"))
            .ok_or("PostgreSQL is not installed (apt-get install postgresql)")?;
        server.sql("postgres", &format!("CREATE DATABASE {DATABASE}"));
        Ok(Database { server })
    }

    /// The `[store]` table of the gateway's configuration (over the server's socket).
    pub fn store_table(&self) -> String {
        format!(
            "\n[store]\nurl = \"{}\"\n",
            self.server.socket_url(SUPERUSER, DATABASE)
        )
    }

    /// The open intents replica `owner` holds (replicas mode: those of a replica gone that
    /// the leader has not taken over yet).
    pub fn open_intents_of(&self, owner: &str) -> Result<u64, String> {
        let owner = owner.replace('\'', "''");
        let count = tokio::task::block_in_place(|| {
            self.server.sql(
                DATABASE,
                &format!("SELECT count(*) FROM intents WHERE state = 'open' AND owner = '{owner}'"),
            )
        });
        count
            .parse()
            .map_err(|e| format!("open intents of {owner}: {e}"))
    }

    /// `pg_ctl stop -m immediate`.
    fn kill(&mut self) {
        tokio::task::block_in_place(|| self.server.stop_immediate());
    }

    /// `pg_ctl start` (the same port), once it accepts connections.
    fn start_again(&mut self) {
        tokio::task::block_in_place(|| self.server.start());
    }

    /// Keeps the database's rows and the server's log in `dir` (a failed run's directory).
    pub fn keep_in(&self, dir: &std::path::Path) {
        let dump = tokio::task::block_in_place(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.server.dump(DATABASE)))
        });
        if let Ok(rows) = dump {
            let _ = std::fs::write(dir.join("register.sql"), rows);
        }
        let _ = std::fs::copy(
            self.server.socket_dir().join("server.log"),
            dir.join("postgresql.log"),
        );
    }
}

impl Harness {
    /// The database-kill run: one gateway for the whole run, the database killed `kills`
    /// times under load.
    pub(super) async fn run_database_kills(&mut self) -> Result<(), String> {
        let started = Instant::now();
        self.close().await;
        let mut life = self.spawn(None)?;
        let addr = self.checked_under_load(&mut life, 0, false).await?;
        for kill in 0..self.settings.kills {
            self.open(addr);
            if kill > 0 {
                // Certification goes on with the same gateway: a new 200 first.
                self.certifies_again(&mut life).await?;
            }
            let max = self.settings.load_kill_max.as_millis() as u64;
            let load = Duration::from_millis(self.rng.gen_range(0..=max));
            let down = Duration::from_millis(
                self.rng
                    .gen_range(DOWN_MIN.as_millis() as u64..=DOWN_MAX.as_millis() as u64),
            );
            tokio::time::sleep(load).await;
            self.gateway_alive(&mut life, "before the database was killed")?;
            let met_before = self.database_faults_met();
            self.database()?.kill();
            tokio::time::sleep(down).await;
            self.database()?.start_again();
            let resumed = self.until_ready_again(&mut life, addr).await;
            if self.database_faults_met() > met_before {
                self.report.outages_met += 1;
            }
            self.close().await;
            let resumed = resumed?;
            self.report.database_kills += 1;
            self.report.kills += 1;
            self.report.resume_ms.push(resumed);
            // The oracle, with the same gateway: still the one spawned at the start.
            self.until_ready(&mut life).await?;
            self.check(&life, false).await?;
            let every = self.settings.progress_every;
            if every > 0 && (kill + 1) % every == 0 {
                self.progress(started);
            }
        }
        // Certification goes on after the last restart of the database too.
        self.open(addr);
        let certified = self.certifies_again(&mut life).await;
        self.close().await;
        certified?;
        self.until_ready(&mut life).await?;
        self.check(&life, true).await?;
        self.stop_clients().await;
        if !super::terminate(&mut life).await {
            self.shared
                .anomaly("the gateway did not exit cleanly on SIGTERM".to_string());
        }
        Ok(())
    }

    fn database(&mut self) -> Result<&mut Database, String> {
        self.database
            .as_mut()
            .ok_or_else(|| "database kills need the register in PostgreSQL".to_string())
    }

    /// Waits, the clients let in, for a new invoice certified (a 200 that is not a replay)
    /// by the same gateway, and counts it.
    async fn certifies_again(&mut self, life: &mut super::Life) -> Result<(), String> {
        let before = lock(&self.shared.stats).ok_new;
        let since = Instant::now();
        while lock(&self.shared.stats).ok_new == before {
            self.gateway_alive(life, "after the database came back")?;
            if since.elapsed() > RESUME_LIMIT {
                return Err(format!(
                    "no new invoice certified within {RESUME_LIMIT:?} of the resume\n{}",
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.report.resumed_then_certified += 1;
        Ok(())
    }

    /// 503s with the database's code the clients met so far.
    fn database_faults_met(&self) -> u64 {
        lock(&self.shared.stats)
            .codes
            .get(&(503, DATABASE_FAULT))
            .copied()
            .unwrap_or(0)
    }

    /// `Err` when the gateway is no longer running (`when`: at which moment).
    fn gateway_alive(&self, life: &mut super::Life, when: &str) -> Result<(), String> {
        match life.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "the gateway exited {when}: {status}\n{}",
                self.log_tail()
            )),
            Err(error) => Err(format!("wait: {error}")),
        }
    }

    /// Waits until the same gateway says `status: true` again, the clients still posting;
    /// ms since the database accepts connections again.
    async fn until_ready_again(
        &self,
        life: &mut super::Life,
        addr: std::net::SocketAddr,
    ) -> Result<u64, String> {
        let back = Instant::now();
        loop {
            self.gateway_alive(life, "while the database was down or coming back")?;
            if let Ok(response) = request(addr, "GET", "/api/v1/status", &[], None).await {
                if response.json["status"] == Value::Bool(true) {
                    return Ok(back.elapsed().as_millis() as u64);
                }
            }
            if back.elapsed() > RESUME_LIMIT {
                return Err(format!(
                    "the gateway did not resume within {RESUME_LIMIT:?} of the database's \
                     restart\n{}",
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
