//! The HTTP API v1 on hyper 1.x (HTTP/1.1): accept loop with a connection cap and a cap per
//! peer address (`peers`), header read timeout, body limits and rate (`crate::http_body`),
//! graceful shutdown (docs/design.md §6). The routes are in `routes`, the JSON bodies and the
//! error mapping in `reply`, the versions served side by side and the change notices'
//! headers in `versions`. This layer knows the certification service only, never the store.

mod invoice_get;
mod landing;
mod peers;
mod reply;
mod routes;
mod versions;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::certify::Certifier;
use crate::dashboard::Dashboard;
use crate::http_body::BodyLimits;
use crate::notices::Notices;
use peers::Peers;

pub use routes::API_VERSION;
pub use versions::SERVED_VERSIONS;

/// Limits and timeouts of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Connections of one peer address at once; more are answered 503 (127) and closed.
    pub max_connections_per_peer: usize,
    /// Time a client has to send the request headers.
    pub header_read_timeout: Duration,
    /// Longest a request may take; above the longest device budget (a credit note: 90 s).
    pub request_timeout: Duration,
    /// Largest request body accepted, and how fast a body must come.
    pub body: BodyLimits,
    /// How long shutdown waits for requests in progress.
    pub shutdown_grace: Duration,
    /// `/metrics` names each organization (its quota use); else totals only.
    pub metrics_per_organization: bool,
    /// `public_url`: the `Link` to a change notice is built from it (else a path).
    pub public_url: Option<String>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            max_connections: 256,
            max_connections_per_peer: 32,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            body: BodyLimits::default(),
            shutdown_grace: Duration::from_secs(100),
            metrics_per_organization: false,
            public_url: None,
        }
    }
}

/// The service the API is the front of: ready to certify (through the certification service,
/// with the dashboard and notices), or halted for the whole service and saying why.
#[derive(Clone)]
pub enum Service {
    /// The certification service, and the dashboard if it is served.
    Ready {
        /// The certification service.
        certifier: Arc<Certifier>,
        /// The organization dashboard under `/dashboard`.
        dashboard: Option<Arc<Dashboard>>,
        /// The change notices: their pages, and the headers of a version they retire.
        notices: Option<Arc<Notices>>,
    },
    /// Certification is stopped for the whole service: `status` is false with `reason`, the
    /// landing page says it, and every authenticated endpoint answers 503 with `Retry-After`
    /// (code 160 or 157), until an operator acts.
    Halted {
        /// Why.
        reason: Halt,
    },
}

/// Why a service certifies nothing at all (see [`Service::Halted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// The register could not be opened (damaged journal): what is wrong, as the log says it
    /// (code 160).
    Damaged(String),
    /// No device is configured and the configuration says `demo = false` (a fresh package
    /// install): the file where one is to be named (code 157).
    NoDevice {
        /// The configuration file the service read.
        config_file: String,
    },
}

impl Halt {
    /// The reason in a reader's words: what is wrong and the next step.
    pub fn message(&self) -> crate::i18n::Message {
        match self {
            Halt::Damaged(detail) => crate::msg!("err-register-halted", detail = detail.as_str()),
            Halt::NoDevice { config_file } => {
                crate::msg!("err-no-device-configured", file = config_file.as_str())
            }
        }
    }
}

/// What every request handler shares.
pub(crate) struct App {
    pub service: Service,
    pub settings: ServerSettings,
}

/// Serves the API on `listener` until `shutdown` is cancelled, then lets the requests in
/// progress finish (within `shutdown_grace`) and returns.
pub async fn serve(
    listener: TcpListener,
    service: Service,
    settings: ServerSettings,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let max = settings.max_connections.max(1);
    let grace = settings.shutdown_grace;
    let permits = Arc::new(Semaphore::new(max));
    let peers = Peers::new(settings.max_connections_per_peer);
    let per_peer = settings.max_connections_per_peer;
    let app = Arc::new(App { service, settings });
    info!(addr = ?listener.local_addr().ok(), "HTTP API listening");
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = shutdown.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // EMFILE and the like: back off instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let Some(slot) = peers.enter(peer.ip()) else {
            drop(permit);
            crate::metrics::connection_refused("per_peer");
            debug!(%peer, "connection refused: too many from this address");
            tokio::spawn(refuse(stream, per_peer));
            continue;
        };
        let app = Arc::clone(&app);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, app, shutdown).await;
            drop((slot, permit));
        });
    }
    info!("HTTP API stops accepting; finishing requests in progress");
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    if tokio::time::timeout(grace, permits.acquire_many(all))
        .await
        .is_err()
    {
        warn!("requests still in progress after the shutdown grace period");
    }
    Ok(())
}

/// Answers a connection over its peer's cap with a short 503 (best effort, 1 s) and closes it.
async fn refuse(mut stream: tokio::net::TcpStream, cap: usize) {
    let answer = peers::refusal(cap);
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(&answer).await?;
        stream.shutdown().await
    })
    .await;
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Arc<App>,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let service_app = Arc::clone(&app);
    let service = service_fn(move |request| {
        let app = Arc::clone(&service_app);
        async move { Ok::<_, std::convert::Infallible>(routes::handle(request, app, peer).await) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(app.settings.header_read_timeout)
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.as_mut().await
        }
    };
    if let Err(error) = result {
        debug!(%peer, %error, "connection ended with an error");
    }
}
