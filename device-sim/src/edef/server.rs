//! The HTTP/1.1 server: accepts connections (TLS when configured), reads each request, and
//! applies the transport faults around the [`Api`]: latency, 503 without doing anything,
//! and connections closed without an answer.
//!
//! Closing without an answer: the service never completes its response; it cancels the
//! connection's token instead, and the connection task drops the hyper connection, which
//! closes the socket. The client sees EOF (or a reset), never an HTTP status.

use std::convert::Infallible;
use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::answer::Answer;
use super::api::{Api, Call};
use super::control;

/// Largest request body read.
const MAX_BODY: usize = 1024 * 1024;

/// How long a client has to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections on `listener` and serves each on its own task until `stop`.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    api: Arc<Api>,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    debug!(%peer, "connection");
                    let api = Arc::clone(&api);
                    let tls = tls.clone();
                    let stop = stop.clone();
                    connections.spawn(async move {
                        connection(stream, api, tls, stop).await;
                    });
                }
                Err(error) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    connections.shutdown().await;
}

/// One connection, plain or TLS.
async fn connection(
    stream: TcpStream,
    api: Arc<Api>,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    match tls {
        None => serve(stream, api, stop).await,
        Some(acceptor) => {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => serve(stream, api, stop).await,
                Ok(Err(error)) => debug!(%error, "TLS handshake failed"),
                Err(_) => debug!("TLS handshake timed out"),
            }
        }
    }
}

/// Serves HTTP/1.1 on `io` until the client closes, a fault drops the connection, or `stop`.
async fn serve<IO>(io: IO, api: Arc<Api>, stop: CancellationToken)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let abort = CancellationToken::new();
    let service_abort = abort.clone();
    let service = service_fn(move |request| {
        let api = Arc::clone(&api);
        let abort = service_abort.clone();
        async move { Ok::<_, Infallible>(respond(request, &api, &abort).await) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        result = connection => {
            if let Err(error) = result {
                debug!(%error, "connection ended");
            }
        }
        () = abort.cancelled() => debug!("connection closed without an answer (fault)"),
        () = stop.cancelled() => {}
    }
}

/// The response to one request; never returns when the connection is to be dropped.
async fn respond(
    request: Request<Incoming>,
    api: &Api,
    abort: &CancellationToken,
) -> Response<Full<Bytes>> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if api.options.control && path.starts_with(control::PREFIX) {
        let answer = match read_body(request).await {
            Ok(body) => control::handle(api, &method, &path, &body),
            Err(answer) => answer,
        };
        return response(answer);
    }
    let latency = api.faults.get().latency();
    let answer = if api.faults.take_reset() {
        info!(%method, %path, "fault: connection closed, nothing done");
        Answer::dropped()
    } else if api.faults.take_5xx() {
        info!(%method, %path, "fault: 503, nothing done");
        Answer::unavailable()
    } else if is_confirm(&path) && api.faults.take_confirm_5xx() {
        info!(%method, %path, "fault: 503 to a confirm, nothing done");
        Answer::unavailable()
    } else {
        let authorization = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        match read_body(request).await {
            Ok(body) => api.handle(Call {
                method: &method,
                path: &path,
                authorization: authorization.as_deref(),
                body: &body,
            }),
            Err(answer) => answer,
        }
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if answer.drop_connection {
        info!(%method, %path, "answer dropped: closing the connection");
        abort.cancel();
        return pending().await;
    }
    info!(%method, %path, status = answer.status.as_u16(), "answered");
    response(answer)
}

/// The body, at most [`MAX_BODY`] bytes; 413 or 400 when it cannot be read.
async fn read_body(request: Request<Incoming>) -> Result<Bytes, Answer> {
    match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(Answer::http_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("corps trop long (plus de {MAX_BODY} octets)"),
        )),
        Err(error) => Err(Answer::http_error(
            StatusCode::BAD_REQUEST,
            &format!("corps illisible: {error}"),
        )),
    }
}

/// The HTTP response of `answer`.
fn response(answer: Answer) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() = answer.status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(answer.content_type));
    response
}

/// Whether `path` is a confirm (`.../confirm`, any case).
fn is_confirm(path: &str) -> bool {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .is_some_and(|word| word.eq_ignore_ascii_case("confirm"))
}
