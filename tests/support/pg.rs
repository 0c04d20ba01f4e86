//! A throwaway PostgreSQL server that a test starts itself: `initdb` in a temporary directory,
//! `pg_ctl` to start and stop it, a Unix socket in that directory and TCP on a free port of
//! 127.0.0.1, `fsync = on` and `synchronous_commit = on` as a provider's server would have.
//! As root (CI), the server runs as the `postgres` user of Debian's package (PostgreSQL refuses
//! root): the directory is given to it and every command runs through `runuser -u postgres`.
//! Dropped, it is stopped and its directory removed, also when the test failed.
//!
//! One server per test, not per test binary: a test stops it, kills it (`stop_immediate`) or
//! restarts it with other settings without disturbing its neighbours, and Rust's test harness
//! has no end-of-binary hook that would stop a shared one (a `static` is never dropped: its
//! postmaster would outlive the run). A start costs about 1.5 s (initdb without its fsyncs
//! about 1.2 s, the start 0.3 s); a test needing several databases makes them on one server.
//!
//! Without PostgreSQL the test is skipped with a note outside CI and fails under `CI=true`
//! (`tests/common/needs.rs`); `.ci/run` installs Debian's `postgresql`.
#![allow(dead_code)]

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::needs;

/// The superuser `initdb` makes; it signs in with [`PgServer::password`] over TCP and without
/// one over the socket (trust, the socket being in a directory only the server's user opens).
pub const SUPERUSER: &str = "emcf_admin";

/// Where Debian keeps each major version's programs (not on PATH).
const DEBIAN_PREFIX: &str = "/usr/lib/postgresql";

/// A running (or stopped) throwaway server.
pub struct PgServer {
    /// The temporary directory: `data/`, the socket, `server.log`, files given to the server.
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    password: String,
    /// The server's user when this runs as root (`postgres`), with its uid and gid.
    owner: Option<(u32, u32)>,
    running: bool,
}

impl PgServer {
    /// Whether PostgreSQL's programs are installed; if not, says so for `subject` (a skip
    /// outside CI, a failure under `CI=true`).
    pub fn installed(subject: &str) -> bool {
        if bindir().is_some() {
            return true;
        }
        needs::missing(
            subject,
            "PostgreSQL's initdb and pg_ctl are not installed",
            "apt-get install postgresql; .ci/run does",
        );
        false
    }

    /// Makes a server for `subject` and starts it; `None` (skipped, or a failure under CI)
    /// when PostgreSQL is not installed.
    pub fn init(subject: &str) -> Option<PgServer> {
        let Some(bin) = bindir() else {
            needs::missing(
                subject,
                "PostgreSQL's initdb and pg_ctl are not installed",
                "apt-get install postgresql; .ci/run does",
            );
            return None;
        };
        let owner = if needs::is_root() {
            let Some(ids) = user_ids("postgres") else {
                needs::missing(
                    subject,
                    "running as root, the server needs the user postgres (PostgreSQL refuses \
                     root)",
                    "apt-get install postgresql creates it; .ci/run does",
                );
                return None;
            };
            Some(ids)
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("emcf-pg-")
            .tempdir()
            .expect("a temporary directory")
            .keep();
        let mut server = PgServer {
            dir,
            bin,
            port: 0,
            password: format!("pw-{:016x}", rand::random::<u64>()),
            owner,
            running: false,
        };
        server.give(&server.dir.clone());
        server.initdb();
        server.start();
        Some(server)
    }

    /// The directory holding the socket (`?host=` of a URL).
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The TCP port on 127.0.0.1 (and the socket's number).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// [`SUPERUSER`]'s password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// A URL to `db` as `user` over the Unix socket (no password needed).
    pub fn socket_url(&self, user: &str, db: &str) -> String {
        format!(
            "postgresql://{user}@/{db}?host={}&port={}",
            self.dir.display(),
            self.port
        )
    }

    /// A URL to `db` as `user` on `host:port` (a password needed; `host` 127.0.0.1 or
    /// localhost).
    pub fn tcp_url(&self, user: &str, host: &str, db: &str) -> String {
        format!("postgresql://{user}@{host}:{}/{db}", self.port)
    }

    /// Runs `sql` in `db` as the superuser over the socket (psql, stopping at the first
    /// error); returns what it printed, unaligned and without headers. Panics on failure.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .arg("-h")
            .arg(&self.dir)
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
            .expect("psql runs");
        assert!(
            output.status.success(),
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// `pg_dump` of `db` as text (every row of every table), as the superuser over the socket.
    pub fn dump(&self, db: &str) -> Vec<u8> {
        let output = Command::new(self.bin.join("pg_dump"))
            .arg("-h")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", SUPERUSER, "-d", db])
            .stdin(Stdio::null())
            .output()
            .expect("pg_dump runs");
        assert!(
            output.status.success(),
            "pg_dump {db} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    }

    /// A new role `name` that logs in with `password`, owning a new database of the same name.
    pub fn create_role_and_database(&self, name: &str, password: &str) {
        self.sql(
            "postgres",
            &format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"),
        );
        self.sql("postgres", &format!("CREATE DATABASE {name} OWNER {name}"));
    }

    /// Appends `lines` to `postgresql.conf`: they take effect at the next start.
    pub fn configure(&self, lines: &str) {
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.join("data/postgresql.conf"))
            .expect("postgresql.conf");
        writeln!(conf, "{lines}").expect("postgresql.conf written");
    }

    /// Copies `from` into the server's directory as `name`, readable by the server's user only
    /// (a key it refuses otherwise); returns its path there.
    pub fn give_file(&self, from: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let to = self.dir.join(name);
        std::fs::copy(from, &to).expect("file copied for the server");
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("0600");
        self.give(&to);
        to
    }

    /// Starts the server (again): `pg_ctl start`, waiting until it accepts connections. The
    /// first start picks a free port, and another if someone took it meanwhile.
    pub fn start(&mut self) {
        assert!(!self.running, "the server already runs");
        let fixed = self.port != 0;
        for _ in 0..5 {
            if !fixed {
                self.port = free_port();
            }
            let log = self.dir.join("server.log");
            let output = self.pg_ctl(&[
                "start",
                "-w",
                "-t",
                "60",
                "-l",
                &log.to_string_lossy(),
                "-o",
                &format!("-p {}", self.port),
            ]);
            if output.status.success() {
                self.running = true;
                return;
            }
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            if fixed || !said.contains("could not bind") {
                panic!(
                    "pg_ctl start failed: {}{}\n{said}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        panic!("no free port for PostgreSQL after 5 tries");
    }

    /// Kills the server as a power cut would (`pg_ctl stop -m immediate`: no checkpoint, the
    /// next start replays its WAL).
    pub fn stop_immediate(&mut self) {
        self.stop("immediate");
    }

    /// Stops it cleanly and starts it again (settings of [`PgServer::configure`] applied).
    pub fn restart(&mut self) {
        self.stop("fast");
        self.start();
    }

    /// `pg_ctl stop -m mode`, waiting until it is down.
    fn stop(&mut self, mode: &str) {
        assert!(self.running, "the server is not running");
        let output = self.pg_ctl(&["stop", "-w", "-t", "60", "-m", mode]);
        assert!(
            output.status.success(),
            "pg_ctl stop -m {mode} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        self.running = false;
    }

    /// `initdb`: UTF-8, no locale, the superuser with its password, trust on the socket and
    /// SCRAM over TCP; then the settings every test server has.
    fn initdb(&self) {
        let pwfile = self.dir.join("superuser.pw");
        std::fs::write(&pwfile, &self.password).expect("password file");
        self.give(&pwfile);
        let output = self
            .as_server(&self.bin.join("initdb"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-U", SUPERUSER, "-E", "UTF8", "--no-locale"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            // The data directory's files are not fsynced once made: the server's own writes
            // (WAL, checkpoints) are, with fsync = on.
            .args(["--no-sync", "--no-instructions"])
            .output()
            .expect("initdb runs");
        assert!(
            output.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let _ = std::fs::remove_file(&pwfile);
        self.configure(&format!(
            "\n# emcf-gateway's test server (tests/support/pg.rs)\n\
             listen_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}'\n\
             fsync = on\n\
             synchronous_commit = on\n\
             full_page_writes = on\n\
             shared_buffers = 16MB\n\
             max_connections = 40\n",
            self.dir.display()
        ));
    }

    /// `pg_ctl` with `args` on this server's data directory, as the server's user.
    fn pg_ctl(&self, args: &[&str]) -> Output {
        self.as_server(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("pg_ctl runs")
    }

    /// A command run as the server's user (through `runuser` when this is root).
    fn as_server(&self, program: &Path) -> Command {
        let mut command = match self.owner {
            Some(_) => {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        command.current_dir(&self.dir);
        command
    }

    /// Gives `path` to the server's user (when this is root).
    fn give(&self, path: &Path) {
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown to postgres");
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.running {
            let stopped = self
                .pg_ctl(&["stop", "-w", "-t", "30", "-m", "immediate"])
                .status
                .success();
            if !stopped {
                // The postmaster's pid is the first line of postmaster.pid.
                let pid = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
                    .ok()
                    .and_then(|text| text.lines().next().map(str::to_owned));
                if let Some(pid) = pid {
                    let _ = Command::new("kill").args(["-KILL", &pid]).status();
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The folder of `initdb` and `pg_ctl`: Debian's newest `/usr/lib/postgresql/<major>/bin`,
/// else the one of `pg_ctl` on PATH.
fn bindir() -> Option<PathBuf> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres", "psql"]
            .iter()
            .all(|program| dir.join(program).is_file())
    };
    let debian = std::fs::read_dir(DEBIAN_PREFIX)
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

/// The uid and gid of `user` (`id`), if it exists.
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

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}
