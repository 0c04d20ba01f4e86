//! A replica the partition test cuts off (`partition.rs`): a network namespace with a veth
//! pair to this one ([`Netns`]), a replica running in it ([`Outsider`]), and the cluster
//! started with it ([`Cluster::start_with_outsider`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use emcf_sim::edef::{start_edef, EdefOptions};
use serde_json::Value;

use super::{in_service, Cluster, Replicas, DATABASE, DEVICE};
use crate::common;
use crate::pg::{PgServer, SUPERUSER};
use crate::replicas::proxy::{self, Proxy};

/// A network namespace joined to this one by a veth pair (`ip`, iproute2; root only), for a
/// replica that a test cuts off: the host's end `10.213.N.1/30`, the namespace's end
/// `10.213.N.2/30`, names unique per test process. The link is taken down and up from the
/// host's end (the namespace's end then has no carrier either). Dropped, the namespace and the
/// pair are deleted, also when the test failed (kill the processes inside first).
pub struct Netns {
    /// The `ip` program.
    ip: &'static str,
    name: String,
    host_if: String,
    third: u8,
}

impl Netns {
    /// Makes the namespace and its link, up; `None` (a skip outside CI, a failure under
    /// `CI=true`) when `ip` is missing or this process may not make a namespace (not root,
    /// or a container without `CAP_NET_ADMIN`).
    pub fn create(subject: &str) -> Option<Netns> {
        let Some(ip) = ["/usr/sbin/ip", "/sbin/ip", "ip"]
            .into_iter()
            .find(|ip| common::needs::runs(ip, &["-V"]))
        else {
            common::needs::missing(
                subject,
                "`ip` (iproute2) is not installed",
                "apt-get install iproute2; .ci/run does",
            );
            return None;
        };
        let pid = std::process::id();
        // A /30 of 10.213.0.0/16 per test process.
        let netns = Netns {
            ip,
            name: format!("emcf-part-{pid}"),
            host_if: format!("emp{pid}h"),
            third: u8::try_from(pid % 250).unwrap_or(0) + 1,
        };
        if !common::needs::is_root() || !common::needs::runs(ip, &["netns", "add", &netns.name]) {
            common::needs::missing(
                subject,
                "this process cannot make a network namespace (it needs root with \
                 CAP_NET_ADMIN)",
                "run the tests as root, outside an unprivileged container; .ci/run does",
            );
            return None;
        }
        let peer = netns.peer_if();
        let host = format!("{}/30", netns.host_ip());
        let inside = format!("{}/30", netns.ns_ip());
        netns.run(&[
            "link",
            "add",
            &netns.host_if,
            "type",
            "veth",
            "peer",
            "name",
            &peer,
        ]);
        netns.run(&["link", "set", &peer, "netns", &netns.name]);
        netns.run(&["addr", "add", &host, "dev", &netns.host_if]);
        netns.run(&["link", "set", &netns.host_if, "up"]);
        for args in [
            vec!["addr", "add", &inside, "dev", &peer],
            vec!["link", "set", &peer, "up"],
            vec!["link", "set", "lo", "up"],
        ] {
            let mut all = vec!["netns", "exec", &netns.name, ip];
            all.extend(args);
            netns.run(&all);
        }
        Some(netns)
    }

    fn peer_if(&self) -> String {
        self.host_if.replace('h', "n")
    }

    /// The host's address on the link.
    pub fn host_ip(&self) -> std::net::Ipv4Addr {
        std::net::Ipv4Addr::new(10, 213, self.third, 1)
    }

    /// The namespace's address on the link.
    pub fn ns_ip(&self) -> std::net::Ipv4Addr {
        std::net::Ipv4Addr::new(10, 213, self.third, 2)
    }

    /// The link's /30, as `pg_hba.conf` writes it.
    pub fn subnet(&self) -> String {
        format!("10.213.{}.0/30", self.third)
    }

    /// Takes the link down (`false`) or up again (`true`), from the host's end.
    pub fn set_link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        self.run(&["link", "set", &self.host_if, state]);
    }

    /// `program args` run inside the namespace (`ip netns exec`, which execs it: the child's
    /// pid is the program's).
    pub fn command(&self, program: &str) -> std::process::Command {
        let mut command = std::process::Command::new(self.ip);
        command.args(["netns", "exec", &self.name, program]);
        command
    }

    fn run(&self, args: &[&str]) {
        let output = std::process::Command::new(self.ip)
            .args(args)
            .output()
            .expect("ip runs");
        assert!(
            output.status.success(),
            "ip {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and so the pair.
        let _ = std::process::Command::new(self.ip)
            .args(["netns", "del", &self.name])
            .output();
        let _ = std::process::Command::new(self.ip)
            .args(["link", "del", &self.host_if])
            .output();
    }
}

/// A replica running inside a [`Netns`]: the register reached over TCP at the host's end of
/// the link (with a password), the web API simulator too, HAProxy reaching it at the
/// namespace's address. Killed when dropped.
pub struct Outsider {
    pub dir: PathBuf,
    /// Where it listens, in the namespace.
    pub addr: SocketAddr,
    child: std::process::Child,
}

impl Outsider {
    /// Its name in HAProxy's configuration and log.
    pub const NAME: &'static str = "outsider";

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("gateway.log")).unwrap_or_default()
    }

    /// Its replica name (`state/replica`).
    pub fn replica(&self) -> String {
        std::fs::read_to_string(self.dir.join("state/replica"))
            .map(|name| name.trim().to_owned())
            .unwrap_or_default()
    }

    /// Waits up to `within` for it to exit by itself: its status, or `None` if it still runs.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn start(ns: &Netns, dir: &Path, config: &str, env: &[(&str, &str)]) -> Outsider {
        use std::io::BufRead;
        std::fs::create_dir_all(dir).expect("outsider folder");
        let config_path = dir.join("config.toml");
        std::fs::write(&config_path, config).expect("config written");
        let log = std::fs::File::create(dir.join("gateway.log")).expect("log file");
        let mut child = ns
            .command(common::binary())
            .arg("--config")
            .arg(&config_path)
            .arg("serve")
            .env("EMCF_CONFIG", "")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .current_dir(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::from(log))
            .spawn()
            .expect("the outsider starts");
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default();
                panic!("the outsider did not start; log:\n{log}");
            };
            if let Some(rest) = line.strip_prefix("emcf-gateway listening on http://") {
                break rest.parse().expect("address");
            }
        };
        Outsider {
            dir: dir.to_path_buf(),
            addr,
            child,
        }
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Cluster {
    /// [`Cluster::start`] with `count` replicas on this host and one more, the [`Outsider`],
    /// in `ns`, started last with `env` (after the organization and its key exist): PostgreSQL
    /// listens on the link's host end too and takes passwords from its /30, and the web API
    /// simulator listens on every address. `device_keys` are added to the web API device's
    /// entry of every replica (the same for all). PostgreSQL's server ends a transaction left
    /// idle more than 3 s and notices a dead client within seconds: a replica cut off in the
    /// middle of a transaction would otherwise keep its share lock on its lease (and so stall
    /// the fence that lets another take its work over) until the server's TCP keepalive, two
    /// hours by default.
    pub async fn start_with_outsider(
        subject: &str,
        count: usize,
        latency: Duration,
        device_keys: &str,
        ns: &Netns,
        env: &[(&str, &str)],
    ) -> Option<(Cluster, Outsider)> {
        let program = proxy::program(subject)?;
        if !PgServer::installed(subject) {
            return None;
        }
        let mut pg = tokio::task::block_in_place(|| PgServer::init(subject))?;
        pg.configure(&format!(
            "listen_addresses = '127.0.0.1,{host}'\n\
             idle_in_transaction_session_timeout = '3s'\n\
             tcp_keepalives_idle = 2\ntcp_keepalives_interval = 1\ntcp_keepalives_count = 2\n\
             tcp_user_timeout = 3000",
            host = ns.host_ip()
        ));
        {
            use std::io::Write;
            let mut hba = std::fs::OpenOptions::new()
                .append(true)
                .open(pg.socket_dir().join("data/pg_hba.conf"))
                .expect("pg_hba.conf");
            writeln!(hba, "host all all {} scram-sha-256", ns.subnet()).expect("pg_hba.conf");
        }
        tokio::task::block_in_place(|| pg.restart());
        pg.sql("postgres", &format!("CREATE DATABASE {DATABASE}"));
        let root = tempfile::tempdir().expect("temporary folder");
        let mut options = EdefOptions::default();
        options.faults.latency_ms = latency.as_millis() as u64;
        let api = start_edef(([0, 0, 0, 0], 0).into(), options)
            .await
            .expect("the web API simulator starts");
        let token = root.path().join("dgi.token");
        std::fs::write(&token, "sim-token\n").expect("token file");
        let device = |url: &str| {
            format!(
                "[[devices]]\nname = \"{DEVICE}\"\nkind = \"web_api\"\nurl = {url:?}\n\
                 token_file = {token:?}\nstatus_interval_secs = 1\n{device_keys}\n"
            )
        };
        let http = |proxy: &str| {
            format!("\n[http]\nmax_connections_per_peer = 256\ntrusted_proxies = [\"{proxy}\"]\n\n")
        };
        let shared_config = format!(
            "{http}{device}\n[store]\nurl = \"{store}\"\n",
            http = http("127.0.0.1"),
            device = device(&api.url()),
            store = pg.socket_url(SUPERUSER, DATABASE),
        );
        let mut replicas = Replicas::new(root.path(), shared_config, count);
        let key = replicas.start_all(None).await;
        let dir = root.path().join(Outsider::NAME);
        let password = root.path().join("pg.password");
        std::fs::write(&password, pg.password()).expect("password file");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600))
                .expect("chmod 600");
        }
        let config = format!(
            "state_dir = {state:?}\nlisten = \"{ip}:0\"\n{http}{device}\n[store]\n\
             url = \"postgresql://{SUPERUSER}@{host}:{port}/{DATABASE}\"\n\
             password_file = {password:?}\nsslmode = \"disable\"\n",
            state = dir.join("state"),
            ip = ns.ns_ip(),
            http = http(&ns.host_ip().to_string()),
            device = device(&format!(
                "http://{}:{}",
                ns.host_ip(),
                api.local_addr().port()
            )),
            host = ns.host_ip(),
            port = pg.port(),
        );
        let outsider = tokio::task::block_in_place(|| Outsider::start(ns, &dir, &config, env));
        let deadline = Instant::now() + Duration::from_secs(15);
        while common::get(outsider.addr, "/api/v1/status", None)
            .await
            .json["status"]
            != Value::Bool(true)
        {
            assert!(
                Instant::now() < deadline,
                "the outsider is not ready:\n{}",
                outsider.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut backends = replicas.backends();
        backends.push((Outsider::NAME.to_owned(), outsider.addr));
        let proxy = tokio::task::block_in_place(|| Proxy::start(&program, root.path(), &backends));
        let cluster = Cluster {
            proxy,
            replicas,
            api,
            pg,
            key,
            root,
        };
        cluster.until_every_replica_serves().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !in_service(&cluster.proxy.log(), Outsider::NAME) {
            assert!(
                Instant::now() < deadline,
                "HAProxy does not serve the outsider"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Some((cluster, outsider))
    }
}
