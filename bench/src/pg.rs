//! A throwaway PostgreSQL server for the `postgres` section, made the way the tests make
//! theirs (`tests/support/pg.rs`): `initdb` in a directory of the bench (same file system as
//! the embedded store's state directories, so both pay the same fsync), `pg_ctl` to start and
//! stop it, `fsync`, `synchronous_commit` and `full_page_writes` on as a provider's server has
//! them. Only a Unix socket in that directory (no TCP), trust on it. `pg_stat_statements` is
//! loaded, to say which statements an invoice costs. As root the server runs as Debian's
//! `postgres` user (PostgreSQL refuses root). Dropped, it is stopped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{bail, Context};
use tempfile::TempDir;

/// The superuser `initdb` makes (the bench's own queries).
const SUPERUSER: &str = "emcf_admin";
/// The role the gateway signs in as: it owns its databases, no other privilege.
pub const ROLE: &str = "emcf";

pub struct PgServer {
    bin: PathBuf,
    port: u16,
    owner: Option<(u32, u32)>,
    running: bool,
    /// Last field: removed after `Drop` stopped the server.
    dir: TempDir,
}

impl PgServer {
    /// `initdb` in `dir`, then starts the server (about 2 s).
    pub fn start(dir: TempDir) -> anyhow::Result<PgServer> {
        let bin = bindir().context(
            "PostgreSQL's initdb, pg_ctl and psql are not installed (apt-get install postgresql)",
        )?;
        // SAFETY: geteuid(2) reads this process's effective user id; it cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let owner = if root {
            Some(user_ids("postgres").context(
                "running as root, PostgreSQL needs the user postgres (apt-get install postgresql)",
            )?)
        } else {
            None
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut server = PgServer {
            bin,
            port,
            owner,
            running: false,
            dir,
        };
        server.give(server.dir.path())?;
        let data = server.dir.path().join("data");
        let output = server
            .as_server("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", SUPERUSER, "-E", "UTF8", "--no-locale", "--auth=trust"])
            .args(["--no-sync", "--no-instructions"])
            .output()?;
        ensure_ran("initdb", &output)?;
        let settings = format!(
            "\n# emcf-bench (bench/src/pg.rs)\nlisten_addresses = ''\nunix_socket_directories = '{}'\n\
             fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n\
             shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track_utility = on\n",
            server.dir.path().display()
        );
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf)?;
        text.push_str(&settings);
        std::fs::write(&conf, text)?;
        let log = server.dir.path().join("server.log");
        let output = server
            .as_server("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["start", "-w", "-t", "60", "-l"])
            .arg(&log)
            .args(["-o", &format!("-p {}", server.port)])
            .stdin(Stdio::null())
            .output()?;
        if !output.status.success() {
            bail!(
                "pg_ctl start failed: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        server.running = true;
        server.sql("postgres", &format!("CREATE ROLE {ROLE} LOGIN"))?;
        server.sql("postgres", "CREATE EXTENSION pg_stat_statements")?;
        Ok(server)
    }

    /// A new database `name` owned by [`ROLE`]; the `[store]` table that puts a gateway's
    /// register in it (over the socket).
    pub fn database(&self, name: &str) -> anyhow::Result<String> {
        self.sql("postgres", &format!("CREATE DATABASE {name} OWNER {ROLE}"))?;
        Ok(format!(
            "\n[store]\nurl = \"postgresql://{ROLE}@/{name}?host={}&port={}\"\n",
            self.dir.path().display(),
            self.port
        ))
    }

    /// Runs `sql` in `db` as the superuser (psql, unaligned, no headers); what it printed.
    pub fn sql(&self, db: &str, sql: &str) -> anyhow::Result<String> {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.dir.path())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                SUPERUSER,
                "-d",
                db,
                "-c",
                sql,
            ])
            .stdin(Stdio::null())
            .output()
            .context("running psql")?;
        ensure_ran(&format!("psql {sql:?}"), &output)?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// The server's version, as `SHOW server_version` says it.
    pub fn version(&self) -> anyhow::Result<String> {
        self.sql("postgres", "SHOW server_version")
    }

    /// The postmaster's process id (the first line of `postmaster.pid`); its children are
    /// the server's backends and workers.
    pub fn postmaster_pid(&self) -> anyhow::Result<u32> {
        let text = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid"))?;
        let first = text.lines().next().unwrap_or_default().trim();
        first
            .parse()
            .with_context(|| format!("postmaster.pid starts with {first:?}"))
    }

    /// A PostgreSQL program run as the server's user (through `runuser` as root).
    fn as_server(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        let mut command = match self.owner {
            Some(_) => {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        command.current_dir(self.dir.path());
        command
    }

    /// Gives `path` to the server's user (as root).
    fn give(&self, path: &Path) -> anyhow::Result<()> {
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))?;
        }
        Ok(())
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.running {
            let _ = self
                .as_server("pg_ctl")
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .args(["stop", "-w", "-t", "30", "-m", "fast"])
                .stdin(Stdio::null())
                .output();
        }
    }
}

fn ensure_ran(what: &str, output: &Output) -> anyhow::Result<()> {
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(())
}

/// Debian's newest `/usr/lib/postgresql/<major>/bin`, else the folder of `pg_ctl` on PATH.
fn bindir() -> Option<PathBuf> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres", "psql"]
            .iter()
            .all(|program| dir.join(program).is_file())
    };
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let major: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .filter(|(_, bin)| complete(bin))
        .max_by_key(|(major, _)| *major)
        .map(|(_, bin)| bin);
    debian.or_else(|| {
        std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).find(|dir| complete(dir)))
    })
}

/// The uid and gid of `user`.
fn user_ids(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| {
        let output = Command::new("id").args([flag, user]).output().ok()?;
        if !output.status.success() {
            return None;
        }
        String::from_utf8_lossy(&output.stdout).trim().parse().ok()
    };
    Some((id("-u")?, id("-g")?))
}
