//! The replicas' set-up: one database on the bench's PostgreSQL server, one web API simulator
//! per organization (its own NIF and NIM, answering after the DGI's latency), every e-MCF kept
//! as data in the store (`device add`, its token sealed with `[store] secret_key_file`: how a
//! hosted service onboards a shop, no `[[devices]]` in any replica's file), one organization
//! on each with a live key, and `serve` replicas started one by one, each with its own folder,
//! `state_dir` and port and the same `[store]`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use emcf_sim::edef::{start_edef, EdefOptions, RunningEdef};

use crate::pg::PgServer;
use crate::rig::{self, Gateway};
use crate::sections::Ctx;

/// The key that seals the e-MCFs' tokens in the store (a bench's, not a secret).
const SEALING_KEY: &str = "0b5e7c1a9d3f4e2b8a6c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a";
/// The token every simulator expects (its default).
const TOKEN: &str = "sim-token";
/// CLI set-up commands run at once (each opens the store).
const SETUP_THREADS: usize = 4;

/// The organization `org` (0-based): its id, its e-MCF's device name, NIF and NIM.
pub struct Names {
    pub org: String,
    pub device: String,
    pub nif: String,
    pub nim: String,
}

pub fn names(org: usize) -> Names {
    let n = org + 1;
    Names {
        org: format!("org-{n}"),
        device: format!("dgi-{n}"),
        nif: format!("A{n:07}R"),
        nim: format!("CD01{n:06}-1"),
    }
}

/// The simulators (on a runtime of their own), the organizations' keys, the replicas.
pub struct Cluster {
    runtime: Option<tokio::runtime::Runtime>,
    apis: Vec<RunningEdef>,
    /// The `[store]` table every replica has.
    store: String,
    /// Connections each replica accepts.
    max_connections: usize,
    /// The running replicas, in start order.
    pub replicas: Vec<Gateway>,
    /// The live key of each organization.
    pub keys: Vec<String>,
    pub dir: tempfile::TempDir,
}

impl Cluster {
    /// Database `db` on `server`, `orgs` simulators answering after `latency`, each e-MCF and
    /// its organization added through the CLI (no replica running yet); room for `clients`
    /// clients on each replica.
    pub async fn prepare(
        ctx: &Ctx,
        server: &PgServer,
        db: &str,
        (orgs, clients): (usize, usize),
        latency: Duration,
    ) -> anyhow::Result<Cluster> {
        let dir = ctx.tempdir("replicas-")?;
        let token = private_file(dir.path(), "dgi.token", &format!("{TOKEN}\n"))?;
        let key = private_file(dir.path(), "store.key", &format!("{SEALING_KEY}\n"))?;
        let store = format!(
            "{}\nsecret_key_file = {key:?}\n",
            server.database(db)?.trim_end()
        ) + "\n";
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("edef-sim")
            .enable_all()
            .build()?;
        // Made before the simulators: dropped, it shuts their runtime down (never from a
        // worker of the bench's runtime).
        let mut cluster = Cluster {
            runtime: Some(runtime),
            apis: Vec::new(),
            store,
            max_connections: (clients + 64).max(256),
            replicas: Vec::new(),
            keys: Vec::new(),
            dir,
        };
        for org in 0..orgs {
            let names = names(org);
            let mut options = EdefOptions {
                nif: names.nif,
                nim: names.nim,
                token: TOKEN.to_owned(),
                ..EdefOptions::default()
            };
            options.faults.latency_ms = latency.as_millis() as u64;
            options.control = false;
            let runtime = cluster
                .runtime
                .as_ref()
                .context("the simulators' runtime")?;
            let api = runtime
                .spawn(async move { start_edef(([127, 0, 0, 1], 0).into(), options).await })
                .await?
                .context("starting a web API simulator")?;
            cluster.apis.push(api);
        }
        let config = cluster.write_config(0)?;
        let urls: Vec<String> = cluster.apis.iter().map(RunningEdef::url).collect();
        cluster.keys = add_orgs(&ctx.bin, &config, &token, &urls)?;
        Ok(cluster)
    }

    /// Replica `i`'s folder (its `config.toml`, `gateway.log` and `state/`).
    fn replica_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("r{}", i + 1))
    }

    /// Writes replica `i`'s configuration (as the packaged file, `demo = false`: no bundled
    /// simulator beside the devices kept in the store); its path.
    fn write_config(&self, i: usize) -> anyhow::Result<PathBuf> {
        let dir = self.replica_dir(i);
        std::fs::create_dir_all(&dir)?;
        let text = format!(
            "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\ndemo = false\nmax_connections = {connections}\n\n{http}{store}",
            state = dir.join("state"),
            connections = self.max_connections,
            http = rig::HTTP_TABLE,
            store = self.store,
        );
        let config = dir.join("config.toml");
        std::fs::write(&config, text)?;
        Ok(config)
    }

    /// Starts one more replica and waits until it says it can certify.
    pub async fn start_replica(&mut self, ctx: &Ctx) -> anyhow::Result<()> {
        let i = self.replicas.len();
        let config = self.write_config(i)?;
        let gateway = Gateway::spawn(&ctx.bin, &self.replica_dir(i), &config, "info")?;
        gateway
            .wait_ready(Duration::from_secs(60), Duration::from_millis(50))
            .await?;
        self.replicas.push(gateway);
        Ok(())
    }

    /// Requests the simulators refused for a full pending window (the DGI's error 1).
    pub fn refused_full(&self) -> u64 {
        self.apis.iter().map(RunningEdef::refused_full_count).sum()
    }

    /// Invoices the simulators finalized.
    pub fn finalized(&self) -> usize {
        self.apis.iter().map(RunningEdef::finalized_count).sum()
    }

    /// Stops the replicas (the last started first), then the simulators.
    pub async fn stop(mut self) {
        while let Some(gateway) = self.replicas.pop() {
            gateway.terminate();
        }
        if let Some(runtime) = self.runtime.take() {
            for api in std::mem::take(&mut self.apis) {
                let _ = runtime.spawn(api.shutdown()).await;
            }
            runtime.shutdown_background();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `name` in `dir`, readable by this user only (as the gateway demands of secrets).
fn private_file(dir: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(path)
}

/// For each simulator at `urls[i]`: `device add`, `org add --device`, `key issue`, a few
/// organizations at once; the keys, in order.
fn add_orgs(
    bin: &Path,
    config: &Path,
    token: &Path,
    urls: &[String],
) -> anyhow::Result<Vec<String>> {
    let token = token.to_string_lossy().into_owned();
    let mut keys: Vec<Option<String>> = vec![None; urls.len()];
    std::thread::scope(|scope| {
        let chunk = urls.len().div_ceil(SETUP_THREADS).max(1);
        let handles: Vec<_> = keys
            .chunks_mut(chunk)
            .enumerate()
            .map(|(part, slots)| {
                let token = &token;
                scope.spawn(move || -> anyhow::Result<()> {
                    for (k, slot) in slots.iter_mut().enumerate() {
                        let org = part * chunk + k;
                        *slot = Some(add_org(bin, config, token, &urls[org], org)?);
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| anyhow::anyhow!("a set-up thread panicked"))?
        })
    })?;
    Ok(keys.into_iter().flatten().collect())
}

fn add_org(
    bin: &Path,
    config: &Path,
    token: &str,
    url: &str,
    org: usize,
) -> anyhow::Result<String> {
    let names = names(org);
    let device = names.device.as_str();
    rig::cli_ok(
        bin,
        config,
        &[
            "device",
            "add",
            device,
            "--kind",
            "web_api",
            "--url",
            url,
            "--token-file",
            token,
        ],
    )?;
    rig::add_org_with_nif(bin, config, &names.org, device, &names.nif)
}
