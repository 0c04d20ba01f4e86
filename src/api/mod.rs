//! The HTTP API v1 on hyper 1.x (HTTP/1.1): accept loop with a connection cap and a cap per
//! peer address that never leave a connection unaccepted (`peers`), the header read timeout
//! and JSON answers to heads hyper refuses (`conn_io`), body limits and rate (`crate::http_body`),
//! graceful shutdown (docs/design.md §6). The routes are in `routes`, the JSON bodies and the
//! error mapping in `reply`, the versions served side by side and the change notices'
//! headers in `versions`. This layer knows the certification service only, never the store.

mod conn_io;
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

use hyper::header::{HeaderValue, CONNECTION};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::certify::{Certifier, Turn};
use crate::dashboard::Dashboard;
use crate::http_body::BodyLimits;
use crate::notices::Notices;
use conn_io::ConnIo;
use peers::{Cap, PeerSlot, Peers};

pub use routes::API_VERSION;
pub use versions::SERVED_VERSIONS;

/// Limits and timeouts of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Connections served at once; over it, the longest-idle one is closed for a new one, or
    /// when every one is busy the new one gets 503 (193) but for the probes (`peers`).
    pub max_connections: usize,
    /// Connections of one peer address at once; the same over it (code 127).
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
    /// Cancelled when the service stops: `/status` says false, answers close their connection.
    pub stopping: CancellationToken,
}

/// Connections over a cap served at once by the overflow path (the probes answered, the rest
/// 503); more get the 503's bytes at once.
const OVERFLOW_CONNECTIONS: usize = 64;

/// How long an overflow connection may take to send its head, and an evicted connection to
/// finish what it was writing.
const SHORT_WAIT: Duration = Duration::from_secs(2);

/// How long a connection accepted just before the service stopped may take to begin its first
/// request before it is closed.
const FIRST_REQUEST_ON_STOP: Duration = Duration::from_millis(250);

/// How long the place in the invoices' arrival order a new connection takes when it is
/// accepted is kept for its first request (src/arrivals.rs): the order of accepts is the order
/// clients connected in, whatever the scheduling of the connections' tasks afterwards. A
/// connection that sends no request by then gives it up, so an idle connection delays an
/// invoice by this much at most.
const EARLY_PLACE: Duration = Duration::from_millis(100);

/// Serves the API on `listener` until `shutdown` is cancelled; then closes the listener at
/// once (a new connection is refused: a load balancer fails over) but serves the connections
/// already made (those in its backlog, and a first request that comes within
/// `FIRST_REQUEST_ON_STOP`: a load balancer cannot send it elsewhere once written), lets the
/// requests in progress finish (within `shutdown_grace`, each answer with `Connection:
/// close`) and returns.
pub async fn serve(
    listener: TcpListener,
    service: Service,
    settings: ServerSettings,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let grace = settings.shutdown_grace;
    let peers = Peers::new(
        settings.max_connections_per_peer,
        settings.max_connections,
        shutdown.clone(),
    );
    let overflow = Arc::new(Semaphore::new(OVERFLOW_CONNECTIONS));
    let app = Arc::new(App {
        service,
        settings,
        stopping: shutdown.clone(),
    });
    info!(addr = ?listener.local_addr().ok(), "HTTP API listening");
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // EMFILE and the like: back off instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        take(stream, peer, &peers, &app, &overflow);
        // Let the new connection read its head before the next is accepted: requests sent a
        // few milliseconds apart take their places in the order they were sent.
        tokio::task::yield_now().await;
    }
    // Connections the kernel completed before the stop wait in its backlog, their request
    // maybe sent already (a load balancer sends it as soon as it is connected): closing the
    // port would reset them, an error a load balancer cannot retry elsewhere. They are taken
    // and served like the others; the port is closed once none is waiting.
    for (stream, peer) in backlog(listener) {
        take(stream, peer, &peers, &app, &overflow);
    }
    info!("HTTP API stops accepting; finishing requests in progress");
    if tokio::time::timeout(grace, peers.all_closed())
        .await
        .is_err()
    {
        warn!("requests still in progress after the shutdown grace period");
    }
    Ok(())
}

/// A connection accepted: served under the caps, else by the overflow path or refused.
fn take(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    peers: &Arc<Peers>,
    app: &Arc<App>,
    overflow: &Arc<Semaphore>,
) {
    match peers.admit(peer.ip()) {
        Ok(slot) => {
            // The order of accepts is the order clients connected in: an invoice sent as
            // the first request of its connection keeps this place (`EARLY_PLACE`).
            let place = match &app.service {
                Service::Ready { certifier, .. } => Some(certifier.take_place()),
                Service::Halted { .. } => None,
            };
            let app = Arc::clone(app);
            tokio::spawn(async move {
                serve_connection(stream, peer, app, &slot, place).await;
                drop(slot);
            });
        }
        Err(cap) => {
            debug!(%peer, ?cap, "connection over a cap, every connection busy");
            crate::metrics::connection_refused(match cap {
                Cap::PerPeer(_) => "per_peer",
                Cap::Server(_) => "max_connections",
            });
            match Arc::clone(overflow).try_acquire_owned() {
                Ok(permit) => {
                    let app = Arc::clone(app);
                    tokio::spawn(async move {
                        serve_over_cap(stream, peer, app, cap).await;
                        drop(permit);
                    });
                }
                Err(_) => {
                    tokio::spawn(refuse(stream, cap));
                }
            }
        }
    }
}

/// Closes `listener` (new connections are refused from then on: a load balancer fails over)
/// once the connections already in its backlog are taken; returns them.
fn backlog(listener: TcpListener) -> Vec<(tokio::net::TcpStream, SocketAddr)> {
    let mut waiting = Vec::new();
    // The std listener is non-blocking (tokio's was): `accept` says `WouldBlock` once the
    // backlog is empty.
    let Ok(listener) = listener.into_std() else {
        return waiting;
    };
    while let Ok((stream, peer)) = listener.accept() {
        let stream = stream
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(stream));
        match stream {
            Ok(stream) => waiting.push((stream, peer)),
            Err(error) => debug!(%peer, %error, "a connection of the backlog was lost"),
        }
    }
    waiting
}

/// Answers a connection over a cap with a short 503 (best effort, 1 s) and closes it.
async fn refuse(mut stream: tokio::net::TcpStream, cap: Cap) {
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
    slot: &PeerSlot,
    place: Option<Turn>,
) {
    let _ = stream.set_nodelay(true);
    let conn = Arc::clone(&slot.conn);
    let io = ConnIo::new(stream, Arc::clone(&conn), app.settings.header_read_timeout);
    let service_app = Arc::clone(&app);
    let service_conn = Arc::clone(&conn);
    let early = Arc::new(std::sync::Mutex::new(place));
    let service_early = Arc::clone(&early);
    let service = service_fn(move |request| {
        let app = Arc::clone(&service_app);
        // Begun, or refused if the connection was evicted first (`peers`): atomically.
        let begun = service_conn.begin();
        let place = crate::sync::lock(&service_early).take();
        async move {
            let (mut response, busy) = match begun {
                Ok(busy) => {
                    let response = routes::handle(request, Arc::clone(&app), peer, place).await;
                    (response, Some(busy))
                }
                Err(cap) => {
                    // Evicted before it began: nothing of it is done but a probe's answer.
                    drop(place);
                    (
                        answer_over_cap(request, Arc::clone(&app), peer, cap).await,
                        None,
                    )
                }
            };
            if app.stopping.is_cancelled() {
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, std::convert::Infallible>(response.map(|body| Tracked { body, _busy: busy }))
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        // The header deadline is `ConnIo`'s, which answers 408.
        .header_read_timeout(None)
        .writev(false)
        .serve_connection(TokioIo::new(io), service);
    let mut connection = std::pin::pin!(connection);
    // The place taken at accept lapses when no request has come by `EARLY_PLACE`.
    let lapse = async {
        tokio::time::sleep(EARLY_PLACE).await;
        drop(crate::sync::lock(&early).take());
        std::future::pending::<()>().await
    };
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = lapse => Ok(()),
        () = conn.close.cancelled() => 'closed: {
            // Stopping, a connection that had no request yet: it was accepted just before,
            // its request maybe on its way (a load balancer's, sent as soon as it connected),
            // and closing it now would reset a request it cannot retry elsewhere. Its first
            // request is read and answered, if it comes within `FIRST_REQUEST_ON_STOP`.
            if !conn.is_evicted() && conn.started() == 0 {
                let first_request = async {
                    while conn.started() == 0 {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                };
                tokio::select! {
                    result = connection.as_mut() => break 'closed result,
                    _ = tokio::time::timeout(FIRST_REQUEST_ON_STOP, first_request) => {}
                }
            }
            // Stopping: the request in progress, if any, finishes first. Evicted: no request
            // was in progress and none can begin (`peers`): what it had answered is written,
            // a head that completes meanwhile gets the over-cap answer, within `SHORT_WAIT`.
            connection.as_mut().graceful_shutdown();
            if conn.is_evicted() {
                tokio::time::timeout(SHORT_WAIT, connection.as_mut())
                    .await
                    .unwrap_or(Ok(()))
            } else {
                connection.as_mut().await
            }
        }
    };
    if let Err(error) = result {
        debug!(%peer, %error, "connection ended with an error");
    }
}

/// A connection over a cap while every connection it could replace is busy: one request,
/// its head within [`SHORT_WAIT`], answered by [`answer_over_cap`].
async fn serve_over_cap(stream: tokio::net::TcpStream, peer: SocketAddr, app: Arc<App>, cap: Cap) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let app = Arc::clone(&app);
        async move { Ok::<_, std::convert::Infallible>(answer_over_cap(request, app, peer, cap).await) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(SHORT_WAIT)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service);
    let _ = tokio::time::timeout(SHORT_WAIT * 2, connection).await;
}

/// The answer to a request on a connection over `cap` (the overflow path's, or one evicted
/// before the request began): the probes (`GET /api/v1/status`, `/metrics`) as usual,
/// anything else the 503 of `cap` in the reader's language, once the body its client is
/// already sending was read and dropped (as for a 401); always with `Connection: close`.
async fn answer_over_cap(
    request: hyper::Request<hyper::body::Incoming>,
    app: Arc<App>,
    peer: SocketAddr,
    cap: Cap,
) -> hyper::Response<reply::Body> {
    let mut response = if routes::is_probe(request.method(), request.uri().path()) {
        routes::handle(request, app, peer, None).await
    } else {
        let lang = crate::i18n::Lang::negotiate(
            crate::http_request::header(&request, "accept-language"),
            crate::i18n::default_lang(),
        );
        let refused = reply::http_error(&reply::HttpError::OverCap(cap), lang);
        routes::unread(request, app.settings.body.limit, refused).await
    };
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A response body that keeps its connection busy until hyper has taken it whole (none for
/// an answer on an evicted connection: no request began on it).
struct Tracked {
    body: reply::Body,
    _busy: Option<peers::Busy>,
}

impl hyper::body::Body for Tracked {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
