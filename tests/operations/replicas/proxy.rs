//! HAProxy running the configuration shipped in `docs/haproxy.cfg`: the file is read and only
//! its `bind` port, its `server` lines and its `log` target are replaced, so that what the
//! tests hold is what an operator installs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::needs;

/// The shipped configuration.
pub fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/haproxy.cfg")
}

/// The `haproxy` program (Debian puts it in /usr/sbin, not on every user's PATH), or `None`
/// with a skip line outside CI and a failure under `CI=true`.
pub fn program(subject: &str) -> Option<PathBuf> {
    for candidate in ["haproxy", "/usr/sbin/haproxy"] {
        if needs::runs(candidate, &["-v"]) {
            return Some(PathBuf::from(candidate));
        }
    }
    needs::missing(
        subject,
        "haproxy is not installed",
        "apt-get install haproxy; .ci/run does",
    );
    None
}

/// `docs/haproxy.cfg` with its frontend on `127.0.0.1:port`, the servers `backends` (name,
/// address) instead of its examples, its log on stderr, and its statistics on the socket
/// `stats` (the test reads what each server has in progress).
pub fn configuration(
    shipped: &str,
    port: u16,
    backends: &[(String, SocketAddr)],
    stats: &Path,
) -> String {
    let mut out = String::new();
    let mut servers_written = false;
    for line in shipped.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("global") => {
                out.push_str(line);
                out.push('\n');
                out.push_str(&format!("    stats socket {} mode 600\n", stats.display()));
            }
            Some("bind") => out.push_str(&format!("    bind 127.0.0.1:{port}\n")),
            Some("log") if words.get(1) != Some(&"global") => {
                out.push_str("    log stderr format raw local0 info\n");
            }
            Some("server") => {
                if !servers_written {
                    for (name, addr) in backends {
                        out.push_str(&format!("    server {name} {addr} check\n"));
                    }
                    servers_written = true;
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    assert!(
        servers_written,
        "docs/haproxy.cfg has no `server` line to replace"
    );
    out
}

/// A running HAProxy (`haproxy -f CFG -db`), its log in `dir/haproxy.log`; killed when dropped.
pub struct Proxy {
    pub addr: SocketAddr,
    dir: PathBuf,
    stats: PathBuf,
    child: Child,
}

impl Proxy {
    /// Writes the configuration for `backends` in `dir`, checks it (`haproxy -c`) and starts
    /// HAProxy; returns once its frontend accepts connections.
    pub fn start(program: &Path, dir: &Path, backends: &[(String, SocketAddr)]) -> Proxy {
        let shipped = std::fs::read_to_string(shipped()).expect("docs/haproxy.cfg");
        let port = super::harness::free_port();
        let config = dir.join("haproxy.cfg");
        let stats = dir.join("haproxy.sock");
        let text = configuration(&shipped, port, backends, &stats);
        std::fs::write(&config, text).expect("haproxy.cfg");
        let checked = Command::new(program)
            .args(["-c", "-q", "-f"])
            .arg(&config)
            .output()
            .expect("haproxy -c runs");
        assert!(
            checked.status.success(),
            "haproxy refuses docs/haproxy.cfg: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
        let log = std::fs::File::create(dir.join("haproxy.log")).expect("haproxy.log");
        let child = Command::new(program)
            .arg("-f")
            .arg(&config)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().expect("log")))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("haproxy starts");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let proxy = Proxy {
            addr,
            dir: dir.to_path_buf(),
            stats,
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "haproxy did not listen: {}",
                proxy.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }

    /// The requests server `name` of the backend has in progress now, as HAProxy counts
    /// them (`show stat`, its `scur`).
    pub fn in_progress(&self, name: &str) -> usize {
        use std::io::{Read, Write};
        let mut socket =
            std::os::unix::net::UnixStream::connect(&self.stats).expect("HAProxy's stats socket");
        socket.write_all(b"show stat\n").expect("show stat");
        let mut csv = String::new();
        socket.read_to_string(&mut csv).expect("show stat's answer");
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let column = |field: &str| header.iter().position(|h| *h == field);
        let (server, current) = (column("svname"), column("scur"));
        let (Some(server), Some(current)) = (server, current) else {
            panic!("show stat without svname or scur: {csv}");
        };
        lines
            .map(|line| line.split(',').collect::<Vec<_>>())
            .find(|row| row.first() == Some(&"replicas") && row.get(server) == Some(&name))
            .and_then(|row| row.get(current)?.parse().ok())
            .unwrap_or_else(|| panic!("no server {name} in show stat: {csv}"))
    }

    /// What HAProxy logged (one line per request, and its servers going down and up).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("haproxy.log")).unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_shipped_configuration_is_the_one_run_with_the_servers_replaced() {
    let shipped = std::fs::read_to_string(shipped()).expect("docs/haproxy.cfg");
    let backends = vec![
        ("r1".to_string(), "127.0.0.1:4001".parse().unwrap()),
        ("r2".to_string(), "127.0.0.1:4002".parse().unwrap()),
    ];
    let run = configuration(&shipped, 5000, &backends, Path::new("/run/test.sock"));
    // What an operator relies on is kept word for word.
    for kept in [
        "http-check send meth GET uri /api/v1/status/replica",
        "http-check expect status 200",
        "option redispatch",
        "retry-on conn-failure",
        "option http-server-close",
        "timeout server 130s",
        "http-error status 503",
        "hdr Retry-After",
    ] {
        assert!(shipped.contains(kept), "docs/haproxy.cfg lost {kept:?}");
        assert!(run.contains(kept), "the run lost {kept:?}");
    }
    assert!(run.contains("bind 127.0.0.1:5000"), "{run}");
    assert!(run.contains("server r1 127.0.0.1:4001 check"), "{run}");
    assert!(run.contains("server r2 127.0.0.1:4002 check"), "{run}");
    assert!(
        !run.contains("10.0.0.11"),
        "the examples are replaced: {run}"
    );
    // Retries on anything but a failed connection would send a POST twice.
    let retry_on: Vec<&str> = shipped
        .lines()
        .filter(|l| l.trim_start().starts_with("retry-on"))
        .collect();
    assert_eq!(retry_on, ["    retry-on conn-failure"], "{retry_on:?}");
}
