//! `serve`: opens the store, starts the device links (the configured boxes, or the bundled
//! simulator when none is configured) and the sandbox simulator, settles open intents,
//! serves the admin socket and the HTTP API until SIGTERM or Ctrl-C, then stops gracefully:
//! no new requests, the invoices in progress finish and are journaled, then exit.

mod process;
mod replica;
mod state;

use emcf_sim::RunningSim;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use process::{init_logging, listen, spawn_signal_stop, spawn_watchdog, wait_for_signal};
use state::{alert_engine, open_register};

use super::admin_commands::quota_settings;
use super::demo;
use super::embedded;
use super::errors::Say;
use super::state_dir;
use crate::admin::{socket, Admin, AdminRequest};
use crate::alerts::AlertEngine;
use crate::api::{self, Halt, ServerSettings, Service};
use crate::certify::{
    new_box_channel, new_web_api_channel, sandbox_device_name, Certifier, CertifierSettings,
    SandboxFactory, SharedChannel,
};
use crate::config::{Config, DeviceEntry, DeviceKind};
use crate::dashboard::{Dashboard, DashboardOptions};
use crate::device::capture::Capture;
use crate::device::{self, DeviceConfig, DeviceHandle};
use crate::i18n::Localized;
use crate::model::Organization;
use crate::msg;
use crate::notices::Notices;
use crate::notify;
use crate::sync::lock;

use super::demo::EMBEDDED_DEVICE;

pub(super) fn run(config: Config, capture: Option<PathBuf>) -> anyhow::Result<()> {
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .say(|| msg!("cli-runtime-failed"))?;
    let capture = capture
        .map(|path| {
            Capture::create(&path)
                .say(|| msg!("cli-capture-create", path = path.display().to_string()))
        })
        .transpose()?;
    runtime.block_on(serve(config, capture))
}

async fn serve(config: Config, capture: Option<Capture>) -> anyhow::Result<()> {
    // The port first: a start that cannot listen creates nothing (no demo organization whose
    // keys nobody saw).
    let listener = listen(config.listen)?;
    // A wrong [store] (a password file others can read) stops the start before anything is
    // created.
    let database = super::database::settings(&config)?;
    let hosted = database.is_some();
    let state_dir = config.resolved_state_dir().to_path_buf();
    state_dir::prepare(&state_dir)?.warn_if_readable(&state_dir);
    if let Some(refusal) = reserved_device_name(&config) {
        anyhow::bail!(refusal);
    }
    if config.awaits_device() {
        // `demo = false` and no device (a fresh package install): no simulator, no demo
        // organization, the register left closed for the admin CLI; the status says what to do.
        warn!("NO DEVICE CONFIGURED and demo = false: certifying nothing until a [[devices]] block names the fiscal box");
        let config_file = config
            .source
            .as_deref()
            .unwrap_or(std::path::Path::new(crate::config::DEFAULT_CONFIG_FILE))
            .display()
            .to_string();
        return serve_halted(&config, listener, Halt::NoDevice { config_file }).await;
    }
    let store = match database {
        Some(settings) => Arc::new(super::database::open(&settings).await?),
        None => match open_register(&state_dir, &config)? {
            Ok(store) => store,
            Err(damage) => return serve_halted(&config, listener, Halt::Damaged(damage)).await,
        },
    };
    // Bad [smtp] settings (an unreadable password file) stop the start here, before READY.
    let notices = Arc::new(
        Notices::open(&state_dir, config.offset()).map_err(|e| anyhow::anyhow!(e.message()))?,
    );
    let alerts = alert_engine(&config, &state_dir, Arc::clone(&notices))?;

    let simulators: Arc<Mutex<Vec<RunningSim>>> = Arc::default();
    let demo = config.runs_demo();
    let mut channels: Vec<SharedChannel> =
        start_devices(&config, &state_dir, &simulators, &capture)
            .await?
            .into_iter()
            .map(new_box_channel)
            .collect();
    channels.extend(web_api_channels(&config)?);
    let demo_keys = if demo {
        demo::ensure_organization(&store)?
    } else {
        demo::DemoKeys::NotDemo
    };

    let web_devices: BTreeMap<String, DeviceEntry> = config
        .devices
        .iter()
        .filter(|entry| entry.kind == DeviceKind::WebApi)
        .map(|entry| (entry.name.clone(), entry.clone()))
        .collect();
    let sandbox = sandbox_factory(
        state_dir.clone(),
        Arc::clone(&simulators),
        capture.clone(),
        web_devices,
    );
    let certifier = Certifier::new(
        Arc::clone(&store),
        channels,
        certifier_settings(&config),
        Some(sandbox),
    );
    let stop = CancellationToken::new();
    // The devices kept in the store, in service before any invoice or settling.
    certifier
        .spawn_stored_devices(super::stored_devices::key_source(&config)?, stop.clone())
        .await;
    // Over PostgreSQL, one replica among others (`certify/replica.rs`).
    let replica = match hosted {
        true => Some(replica::join(&certifier, &state_dir)?),
        false => None,
    };
    certifier.start_reconciliation()?;
    let watch_stop = CancellationToken::new();
    let watch = replica
        .is_some()
        .then(|| certifier.spawn_replica_watch(stop.clone(), watch_stop.clone()));
    certifier.spawn_status_watch(STATUS_WATCH);
    certifier.spawn_storage_watch(state_dir.clone());

    let admin = Arc::new(Admin::new(Arc::clone(&store), quota_settings(&config)));
    let admin_task = tokio::spawn(socket::serve(
        socket::path_in(&state_dir),
        Arc::clone(&admin),
        Some(service_requests(
            Arc::clone(&certifier),
            Arc::clone(&admin),
            Arc::clone(&notices),
            Arc::clone(&alerts),
        )),
        Some(organizations_changed(Arc::clone(&certifier))),
        stop.clone(),
    ));

    let addr = listener.local_addr()?;
    println!("emcf-gateway listening on http://{addr}");
    demo::print(addr, &demo_keys, &state_dir)?;

    spawn_signal_stop(stop.clone());
    // systemd shows STATUS in `systemctl status`: in the installation's language.
    let status = msg!("cli-status-listening", addr = addr.to_string()).render(config.language);
    if let Err(error) = notify::notify(&format!("READY=1\nSTATUS={status}")) {
        warn!(%error, "could not notify systemd");
    }
    spawn_watchdog(stop.clone());
    let alerts_task = alerts.spawn(Arc::clone(&certifier), Arc::clone(&admin), stop.clone());
    let dashboard = Dashboard::with_options(
        Arc::clone(&admin),
        Arc::clone(&certifier),
        DashboardOptions {
            max_requests: config.http.dashboard_max_requests,
            body: config.body_limits(),
            trusted_proxies: config.trusted_proxies(),
            ..DashboardOptions::default()
        },
    )
    .with_alerts(Arc::clone(&alerts))
    .with_notices(Arc::clone(&notices))
    .with_sessions_in(&state_dir)
    .await;
    let service = Service::Ready {
        certifier: Arc::clone(&certifier),
        dashboard: Some(Arc::new(dashboard)),
        notices: Some(notices),
    };
    api::serve(listener, service, server_settings(&config), stop.clone()).await?;
    certifier.shutdown().await;
    // The watch stopped first: it neither renews the leader lease given back next, nor
    // takes anything over.
    watch_stop.cancel();
    if let Some(watch) = watch {
        let _ = watch.await;
    }
    let fenced = replica.is_some() && !certifier.still_a_replica().await;
    if replica.is_some() {
        certifier.leave_replicas().await;
    }
    stop.cancel();
    let _ = admin_task.await;
    let _ = alerts_task.await;
    stop_simulators(&simulators).await;
    if fenced {
        // Not a clean stop: the service manager starts a new replica.
        anyhow::bail!(msg!("cli-replica-fenced"));
    }
    info!("stopped");
    Ok(())
}

/// Why `serve` refuses the devices' names, if it does: a name the gateway gives its own
/// simulators (`embedded`, `sandbox-...`).
pub(super) fn reserved_device_name(config: &Config) -> Option<crate::i18n::Message> {
    let reserved = config.device(EMBEDDED_DEVICE).is_some()
        || config
            .devices
            .iter()
            .any(|d| d.name.starts_with("sandbox-"));
    reserved.then(|| msg!("cli-reserved-device-name", name = EMBEDDED_DEVICE))
}

fn certifier_settings(config: &Config) -> CertifierSettings {
    CertifierSettings {
        offset: config.offset(),
        quota_start: config.plans.start,
        quota_grow: config.plans.grow,
    }
}

/// Stops the bundled simulators (demo device and sandboxes), each saving its fiscal memory.
async fn stop_simulators(simulators: &Mutex<Vec<RunningSim>>) {
    let simulators: Vec<RunningSim> = lock(simulators).drain(..).collect();
    for sim in simulators {
        let _ = sim.stop().await;
    }
}

/// The device actors: the bundled simulator when no device is configured (demo), else one
/// per `[[devices]]` entry.
async fn start_devices(
    config: &Config,
    state_dir: &std::path::Path,
    simulators: &Arc<Mutex<Vec<RunningSim>>>,
    capture: &Option<Capture>,
) -> anyhow::Result<Vec<DeviceHandle>> {
    if config.runs_demo() {
        warn!("NO DEVICE CONFIGURED: certifying on the bundled SIMULATOR. Nothing is fiscal. Configure [[devices]] for production.");
        let sim = embedded::start(state_dir, EMBEDDED_DEVICE, None).await?;
        let handle = simulator_device(EMBEDDED_DEVICE, &sim, capture.clone());
        lock(simulators).push(sim);
        return Ok(vec![handle]);
    }
    Ok(config
        .devices
        .iter()
        .filter(|entry| entry.kind == DeviceKind::Box)
        .map(|entry| {
            let mut device = entry.device_config();
            device.capture.clone_from(capture);
            device::spawn(device)
        })
        .collect())
}

/// The channels of the `kind = "web_api"` entries: the DGI's web API.
fn web_api_channels(config: &Config) -> anyhow::Result<Vec<SharedChannel>> {
    config
        .devices
        .iter()
        .filter(|entry| entry.kind == DeviceKind::WebApi)
        .map(|entry| {
            let settings = entry.web_api_settings();
            info!(device = %entry.name, url = %settings.url, "certifying through the DGI web API");
            new_web_api_channel(settings)
                .map_err(anyhow::Error::msg)
                .say(|| msg!("cli-web-api-channel", device = entry.name.as_str()))
        })
        .collect()
}

fn server_settings(config: &Config) -> ServerSettings {
    ServerSettings {
        max_connections: config.max_connections,
        max_connections_per_peer: config.http.max_connections_per_peer,
        header_read_timeout: config.header_read_timeout(),
        request_timeout: config.request_timeout(),
        body: config.body_limits(),
        metrics_per_organization: config.http.metrics_per_organization,
        shutdown_grace: config.request_timeout(),
        public_url: config.public_url.clone(),
    }
}

/// Serves the API with certification stopped: `status` false with the reason, 503 (code 160,
/// or 157 without a device) elsewhere. No device is opened and nothing is written.
async fn serve_halted(config: &Config, listener: TcpListener, reason: Halt) -> anyhow::Result<()> {
    println!(
        "emcf-gateway listening on http://{}",
        listener.local_addr()?
    );
    let status = match &reason {
        Halt::Damaged(_) => msg!("cli-status-halted"),
        Halt::NoDevice { .. } => reason.message(),
    }
    .render(config.language);
    let _ = notify::notify(&format!("READY=1\nSTATUS={status}"));
    let stop = CancellationToken::new();
    let signal_stop = stop.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        signal_stop.cancel();
    });
    api::serve(
        listener,
        Service::Halted { reason },
        server_settings(config),
        stop,
    )
    .await?;
    Ok(())
}

fn simulator_device(name: &str, sim: &RunningSim, capture: Option<Capture>) -> DeviceHandle {
    let mut config = DeviceConfig::simulator(name, sim.path());
    config.capture = capture;
    device::spawn(config)
}

/// How often the service's status is computed even when nothing polls it, so that a device
/// that stops being able to certify is logged.
const STATUS_WATCH: std::time::Duration = std::time::Duration::from_secs(5);

/// What only the running service answers on the admin socket: `device probe` (through the
/// channel), the invoices in doubt (`intent list`, `intent resolve`) and the change notices
/// (`notice add`, e-mailed at once by the alert engine; `notice list`).
fn service_requests(
    certifier: Arc<Certifier>,
    admin: Arc<Admin>,
    notices: Arc<Notices>,
    alerts: Arc<AlertEngine>,
) -> socket::ServiceRequests {
    Arc::new(move |request: AdminRequest, lang| {
        let certifier = Arc::clone(&certifier);
        let (admin, notices, alerts) = (
            Arc::clone(&admin),
            Arc::clone(&notices),
            Arc::clone(&alerts),
        );
        Box::pin(async move {
            // The certification layer's texts are rendered in the asker's language.
            let said = |text: String| msg!("admin-service-said", text = text);
            let encoded = |value: Result<serde_json::Value, serde_json::Error>| {
                value.map_err(|e| crate::admin::AdminError::Internal(e.to_string()).message())
            };
            match request {
                AdminRequest::DeviceProbe { device } => {
                    match certifier.probe(device.as_deref(), lang).await {
                        Ok(report) => encoded(serde_json::to_value(report)),
                        Err(error) => Err(said(error.describe(lang))),
                    }
                }
                AdminRequest::DeviceNif { device } => certifier
                    .device_nif(&device)
                    .map(|nif| serde_json::json!({ "nif": nif }))
                    .map_err(|e| said(e.describe(lang))),
                AdminRequest::IntentList => match certifier
                    .off_workers(|certifier| certifier.open_intents())
                    .await
                {
                    Ok(open) => encoded(serde_json::to_value(open)),
                    Err(error) => Err(said(error.describe(lang))),
                },
                AdminRequest::IntentResolve {
                    intent,
                    resolution,
                    by,
                    note,
                } => match certifier
                    .resolve_intent(intent, resolution, &by, &note)
                    .await
                {
                    Ok(entry) => encoded(serde_json::to_value(entry)),
                    Err(error) => Err(said(error.describe(lang))),
                },
                AdminRequest::NoticeAdd { notice } => {
                    // The organizations read and the notice written (fsync'd) off the
                    // runtime's workers; the engine e-mails it once this has returned.
                    let added = tokio::task::spawn_blocking(move || {
                        let orgs = admin.org_list().map_err(|e| e.message())?;
                        let recipients = orgs.into_iter().map(|o| o.id).collect();
                        notices
                            .add(notice, recipients, api::SERVED_VERSIONS)
                            .map_err(|e| e.message())
                    })
                    .await
                    .map_err(|e| crate::admin::AdminError::Internal(e.to_string()).message())?;
                    let added = added?;
                    alerts.wake();
                    encoded(serde_json::to_value(added))
                }
                AdminRequest::NoticeList => encoded(serde_json::to_value(notices.all())),
                other => Err(msg!(
                    "admin-not-a-service-request",
                    op = format!("{other:?}")
                )),
            }
        })
    })
}

/// After an administrator's request (an organization added or changed, a key...), the status
/// reads the organizations again at once rather than at its next round.
fn organizations_changed(certifier: Arc<Certifier>) -> socket::AfterRequest {
    Arc::new(move || certifier.organizations_changed())
}

/// Starts an organization's sandbox device: the bundled simulator, personalized with the
/// organization's NIF, its fiscal memory in `<state>/simulator/sandbox-<org>.fiscal.json`.
/// An organization bound to a web API device (`web_devices`) gets a web API simulator instead,
/// on a local socket, with the organization's NIF (its counters live in memory), or the
/// device's `sandbox_url` (the DGI's test base) when it has one.
fn sandbox_factory(
    state_dir: PathBuf,
    simulators: Arc<Mutex<Vec<RunningSim>>>,
    capture: Option<Capture>,
    web_devices: BTreeMap<String, DeviceEntry>,
) -> SandboxFactory {
    let web_simulators: Arc<Mutex<Vec<emcf_sim::edef::RunningEdef>>> = Arc::default();
    Arc::new(move |org: Organization| {
        let state_dir = state_dir.clone();
        let simulators = Arc::clone(&simulators);
        let capture = capture.clone();
        let web = web_devices.get(&org.device).cloned();
        let web_simulators = Arc::clone(&web_simulators);
        Box::pin(async move {
            let name = sandbox_device_name(&org.id);
            if let Some(settings) = web.as_ref().and_then(|e| e.sandbox_web_api_settings(&name)) {
                info!(device = %name, url = %settings.url, "sandbox certifies through the configured sandbox web API");
                return new_web_api_channel(settings);
            }
            if web.is_some() {
                let (channel, sim) = embedded::start_web_api(&state_dir, &name, &org.nif)
                    .await
                    .map_err(|e| format!("{e:#}"))?;
                info!(device = %name, url = %sim.url(), "sandbox web API simulator started");
                lock(&web_simulators).push(sim);
                return Ok(channel);
            }
            let sim = embedded::start(&state_dir, &name, Some(&org.nif))
                .await
                .map_err(|e| format!("{e:#}"))?;
            info!(device = %name, "sandbox simulator started");
            let handle = simulator_device(&name, &sim, capture);
            lock(&simulators).push(sim);
            // Wait for its link: the first sandbox invoice should not get 503.
            for _ in 0..50 {
                if handle.status().connected {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Ok(new_box_channel(handle))
        })
    })
}
