//! The routes of the v1 API and their handlers:
//! `GET /api/v1/status` and `GET /api/v1/openapi.yaml` (public), `POST /api/v1/Invoice`,
//! `GET /api/v1/Invoice/{rn}`, and under it `qr.svg`, `qr.png` (`?scale=`), `receipt.html`
//! (`?layout=a4|80mm|58mm`) and `receipt.escpos` (`?width=58|80`), the last two in `?lang=`
//! or `Accept-Language` (Bearer); `/dashboard...` goes to the dashboard. Unknown paths and methods get JSON 404/405. The language of an error's
//! `errorDesc` is read once per request from `Accept-Language` ([`Lang::negotiate`], the
//! configuration's `language` by default) and handed to every answer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{SecondsFormat, Utc};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LANGUAGE, CONTENT_TYPE, VARY};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;
use tracing::{debug, info, Instrument};

use super::invoice_get::{get_invoice, get_view, View};
use super::reply::{
    certification_response, certify_error, http_error, json_response, Body, HttpError,
};
use super::{landing, versions, App, Service};
use crate::certify::{CertifyError, Turn};
use crate::http_body::{self, BodyError, BodyLimits};
use crate::http_request::header;
use crate::i18n::{self, Lang};

/// The version the status report shows ("major.minor").
pub const API_VERSION: &str = "1.0";

const PREFIX: &str = "/api/v1";

/// Handles one request; never fails (errors are JSON responses).
pub(crate) async fn handle(
    request: Request<Incoming>,
    app: Arc<App>,
    peer: SocketAddr,
    place: Option<Turn>,
) -> Response<Body> {
    // A place taken when the connection was accepted serves an invoice only; any other request
    // gives it up at once, so that no invoice waits for it.
    let place = place.filter(|_| is_invoice_post(request.method(), request.uri().path()));
    let request_id = request_id();
    // Probes (`GET` of the status, the metrics, the OpenAPI document) are polled by monitoring
    // every few seconds: they are logged at `debug`, so that the log at `info` (the systemd
    // unit's level) shows the requests that matter, and a probe costs no log write.
    let probe = is_probe(request.method(), request.uri().path());
    let span = if probe {
        tracing::debug_span!(
            "request",
            id = %request_id,
            method = %request.method(),
            path = %request.uri().path(),
            %peer
        )
    } else {
        tracing::info_span!(
            "request",
            id = %request_id,
            method = %request.method(),
            path = %request.uri().path(),
            %peer
        )
    };
    let version = match versions::of(request.uri().path()) {
        versions::Versioned::Served(version, _) => Some(version),
        _ => None,
    };
    async move {
        let mut response = route(request, &app, peer, place).await;
        if let (
            Some(version),
            Service::Ready {
                notices: Some(notices),
                ..
            },
        ) = (version, &app.service)
        {
            versions::deprecate(
                &mut response,
                version,
                notices,
                app.settings.public_url.as_deref(),
            );
        }
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert("x-request-id", value);
        }
        let status = response.status().as_u16();
        if probe && response.status().is_success() {
            debug!(status, "answered");
        } else {
            info!(status, "answered");
        }
        response
    }
    .instrument(span)
    .await
}

/// Whether a request is a monitoring probe (see [`handle`]).
pub(super) fn is_probe(method: &Method, path: &str) -> bool {
    *method == Method::GET
        && (path == "/metrics"
            || path.strip_prefix(PREFIX).is_some_and(|rest| {
                rest == "/status" || rest == "/status/replica" || rest == "/openapi.yaml"
            }))
}

/// Whether a request is `POST /api/v1/Invoice` (it keeps the place its connection took).
fn is_invoice_post(method: &Method, path: &str) -> bool {
    *method == Method::POST && path.strip_prefix(PREFIX) == Some("/Invoice")
}

async fn route(
    request: Request<Incoming>,
    app: &App,
    peer: SocketAddr,
    place: Option<Turn>,
) -> Response<Body> {
    let path = request.uri().path().to_string();
    let lang = Lang::negotiate(header(&request, "accept-language"), i18n::default_lang());
    if path == "/dashboard" || path.starts_with("/dashboard/") {
        return match &app.service {
            Service::Ready {
                dashboard: Some(dashboard),
                ..
            } => with_timeout(app, lang, dashboard.handle(request, peer)).await,
            Service::Ready { .. } => http_error(&HttpError::NotFound, lang),
            // A person opens the dashboard: the landing page says why nothing works.
            Service::Halted { reason } => landing::halted_page(
                &reason.message().render(lang),
                env!("CARGO_PKG_VERSION"),
                lang,
            ),
        };
    }
    if path == "/" || path == PREFIX || path == format!("{PREFIX}/") {
        return match *request.method() {
            Method::GET | Method::HEAD => root(app, &path, request.uri().query(), lang),
            _ => http_error(&HttpError::MethodNotAllowed("GET, HEAD"), lang),
        };
    }
    if path == "/metrics" {
        return match *request.method() {
            Method::GET => metrics(app).await,
            _ => http_error(&HttpError::MethodNotAllowed("GET"), lang),
        };
    }
    if let Some(id) = path.strip_prefix("/notices/") {
        let page = match &app.service {
            Service::Ready {
                notices: Some(notices),
                ..
            } => versions::notice_page(
                notices,
                id,
                landing::query_lang(request.uri().query()).unwrap_or(lang),
            ),
            _ => None,
        };
        return match (request.method().clone(), page) {
            (Method::GET | Method::HEAD, Some(page)) => page,
            (Method::GET | Method::HEAD, None) => http_error(&HttpError::NotFound, lang),
            _ => http_error(&HttpError::MethodNotAllowed("GET, HEAD"), lang),
        };
    }
    // One place knows the versions served side by side (`versions`); v1's routes follow.
    let rest = match versions::of(&path) {
        versions::Versioned::Served("v1", rest) => rest,
        versions::Versioned::Unknown => {
            return http_error(&HttpError::UnknownVersion(versions::served_list()), lang)
        }
        _ => return http_error(&HttpError::NotFound, lang),
    };
    let not_allowed = |allowed| http_error(&HttpError::MethodNotAllowed(allowed), lang);
    match rest {
        "/openapi.yaml" => match *request.method() {
            Method::GET | Method::HEAD => openapi(),
            _ => not_allowed("GET, HEAD"),
        },
        "/status" => match *request.method() {
            Method::GET | Method::HEAD => status(app, lang),
            _ => not_allowed("GET, HEAD"),
        },
        "/status/replica" => match *request.method() {
            Method::GET | Method::HEAD => replica_status(app, lang),
            _ => not_allowed("GET, HEAD"),
        },
        "/Invoice" => match *request.method() {
            Method::POST => with_timeout(app, lang, post_invoice(request, app, lang, place)).await,
            _ => not_allowed("POST"),
        },
        _ => match rest.strip_prefix("/Invoice/") {
            Some(encoded) if !encoded.is_empty() && !encoded.contains('/') => {
                match *request.method() {
                    Method::GET => get_invoice(&request, app, encoded, None, lang).await,
                    _ => not_allowed("GET"),
                }
            }
            Some(tail) => match View::of(tail) {
                Some((encoded, view)) if !encoded.is_empty() && !encoded.contains('/') => {
                    match *request.method() {
                        Method::GET => get_view(&request, app, encoded, view, lang).await,
                        _ => not_allowed("GET"),
                    }
                }
                _ => http_error(&HttpError::NotFound, lang),
            },
            _ => http_error(&HttpError::NotFound, lang),
        },
    }
}

/// `/` (a page for people) and `/api/v1` (the same for clients).
fn root(app: &App, path: &str, query: Option<&str>, lang: Lang) -> Response<Body> {
    if path == "/" {
        let lang = landing::query_lang(query).unwrap_or(lang);
        let reason = halt_reason(app).map(|reason| reason.render(lang));
        landing::page(
            ready(app),
            reason.as_deref(),
            env!("CARGO_PKG_VERSION"),
            lang,
        )
    } else {
        landing::index(ready(app), API_VERSION)
    }
}

fn ready(app: &App) -> bool {
    match &app.service {
        Service::Ready { certifier, .. } => {
            certifier.status().ready && !app.stopping.is_cancelled()
        }
        Service::Halted { .. } => false,
    }
}

/// Why the whole service certifies nothing, when it is halted.
fn halt_reason(app: &App) -> Option<crate::i18n::Message> {
    match &app.service {
        Service::Ready { .. } => None,
        Service::Halted { reason } => Some(reason.message()),
    }
}

/// Whether this process takes requests, for a load balancer: 200 `{"ready":true}` while it
/// runs, is not stopping, can write its register and (over PostgreSQL) holds its replica
/// lease; else 503 with why and `Retry-After`. Short whatever the number of devices, and
/// blind to them: one organization's device that does not answer is that organization's 503,
/// not a reason to send every organization elsewhere.
fn replica_status(app: &App, lang: Lang) -> Response<Body> {
    let reason = match &app.service {
        Service::Halted { reason } => Some(reason.message()),
        Service::Ready { .. } if app.stopping.is_cancelled() => {
            Some(crate::msg!("status-stopping"))
        }
        Service::Ready { certifier, .. } => match certifier.status().storage_fault.as_ref() {
            Some(fault) => Some(fault.reason()),
            None => (!certifier.may_take_requests()).then(|| crate::msg!("reason-replica-lease")),
        },
    };
    let Some(reason) = reason else {
        let mut response = Response::new(Body::new(Bytes::from_static(b"{\"ready\":true}")));
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        return response;
    };
    let body = json!({"ready": false, "reason": reason.render(lang)}).to_string();
    let mut response = Response::new(Body::new(Bytes::from(body)));
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
    headers.insert(VARY, HeaderValue::from_static("accept-language"));
    headers.insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// The seed's three fields, then `devices`: each configured channel for monitoring
/// (`certify::status::DeviceHealth`; no sandbox, no organization), and `reason` when the whole
/// service is halted (no device configured, a damaged register), in the reader's language.
/// A running service's answer is the status it keeps (`certify/status/board.rs`), its
/// devices rendered once per change: only the time is written per request.
fn status(app: &App, lang: Lang) -> Response<Body> {
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
    let certifier = match &app.service {
        Service::Ready { certifier, .. } => certifier,
        Service::Halted { .. } => return halted_status(app, lang, &now),
    };
    let status = certifier.status();
    // The keys in the order `serde_json` writes a map's (sorted), as `halted_status` does.
    // A service that is stopping (SIGTERM: the invoices in progress finish) certifies nothing
    // new: false, so that a load balancer sends elsewhere.
    let stopping = app.stopping.is_cancelled();
    let ready = if status.ready && !stopping {
        "true"
    } else {
        "false"
    };
    let mut body = String::with_capacity(status.monitored_json.len() + 96);
    body.push_str("{\"devices\":");
    body.push_str(&status.monitored_json);
    // Why it certifies nothing, in the reader's language (as a halted service's): stopping,
    // or a register that cannot be written.
    let reason = if stopping {
        Some(crate::msg!("status-stopping"))
    } else {
        status.storage_fault.as_ref().map(|fault| fault.reason())
    };
    if let Some(reason) = &reason {
        body.push_str(",\"reason\":");
        body.push_str(&json!(reason.render(lang)).to_string());
    }
    body.push_str(",\"serverDateTime\":\"");
    body.push_str(&now);
    body.push_str("\",\"status\":");
    body.push_str(ready);
    body.push_str(",\"version\":\"");
    body.push_str(API_VERSION);
    body.push_str("\"}");
    let mut response = Response::new(Body::new(Bytes::from(body)));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    if reason.is_some() {
        headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
        headers.insert(VARY, HeaderValue::from_static("accept-language"));
    }
    response
}

/// The status of a halted service: no devices, and why, in the reader's language.
fn halted_status(app: &App, lang: Lang, now: &str) -> Response<Body> {
    let mut body = json!({
        "status": false,
        "version": API_VERSION,
        "serverDateTime": now,
        "devices": [],
    });
    let reason = halt_reason(app);
    if let (Some(reason), Some(fields)) = (&reason, body.as_object_mut()) {
        fields.insert("reason".into(), json!(reason.render(lang)));
    }
    let mut response = json_response(StatusCode::OK, &body);
    if reason.is_some() {
        let headers = response.headers_mut();
        headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
        headers.insert(VARY, HeaderValue::from_static("accept-language"));
    }
    response
}

async fn with_timeout(
    app: &App,
    lang: Lang,
    work: impl std::future::Future<Output = Response<Body>>,
) -> Response<Body> {
    match tokio::time::timeout(app.settings.request_timeout, work).await {
        Ok(response) => response,
        Err(_) => http_error(&HttpError::Timeout, lang),
    }
}

async fn post_invoice(
    request: Request<Incoming>,
    app: &App,
    lang: Lang,
    place: Option<Turn>,
) -> Response<Body> {
    let limit = app.settings.body.limit;
    let certifier = match &app.service {
        Service::Ready { certifier, .. } => certifier,
        Service::Halted { reason } => {
            return unread(
                request,
                limit,
                http_error(&HttpError::Halted(reason.clone()), lang),
            )
            .await
        }
    };
    // Its place in the arrival order first (its connection's, taken when it was accepted, for
    // a first request): the key check and the body read may wait.
    let place = place.unwrap_or_else(|| certifier.take_place());
    // A key that matched before is remembered (no read): certifying confirms it, and every
    // refusal before that asks whether the key is still good (a key disabled since hears 401).
    let principal = match certifier
        .authenticate_invoice(authorization(&request).as_deref())
        .await
    {
        Ok(principal) => principal,
        Err(error) => {
            // Refused: its place is given up before its body is read and dropped.
            drop(place);
            return unread(request, limit, certify_error(&error, lang)).await;
        }
    };
    if !is_json(header(&request, CONTENT_TYPE.as_str())) {
        drop(place);
        let refused = match certifier.key_refused(&principal).await {
            Some(error) => certify_error(&error, lang),
            None => http_error(&HttpError::UnsupportedMediaType, lang),
        };
        return unread(request, limit, refused).await;
    }
    let idempotency_key = header(&request, "idempotency-key").map(str::to_string);
    let body = match read_body(request, &app.settings.body).await {
        Ok(body) => body,
        Err(error) => {
            drop(place);
            return match certifier.key_refused(&principal).await {
                Some(refused) => certify_error(&refused, lang),
                None => http_error(&error, lang),
            };
        }
    };
    match certifier
        .certify(&principal, &body, idempotency_key.as_deref(), place)
        .await
    {
        Ok(done) => {
            let mut response = certification_response(&done.entry, &done.warnings, lang);
            if done.replayed {
                response
                    .headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("true"));
            }
            response
        }
        Err(error) => {
            if !matches!(error, CertifyError::Validation(_)) {
                info!(code = error.code(), %error, "certification not done");
            }
            certify_error(&error, lang)
        }
    }
}

/// Prometheus text (public, like `/status`: no secret in it, and no organization's name
/// unless `metrics_per_organization` is set).
async fn metrics(app: &App) -> Response<Body> {
    let gauges = match &app.service {
        Service::Ready { certifier, .. } => certifier
            .off_workers(|certifier| certifier.gauges())
            .await
            .unwrap_or_default(),
        Service::Halted { .. } => crate::metrics::Gauges::default(),
    };
    let mut response = Response::new(Body::new(Bytes::from(crate::metrics::render(
        &gauges,
        app.settings.metrics_per_organization,
    ))));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// The OpenAPI description of this API, as served.
fn openapi() -> Response<Body> {
    let mut response = Response::new(Body::new(Bytes::from_static(OPENAPI.as_bytes())));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/yaml; charset=utf-8"),
    );
    response
}

const OPENAPI: &str = include_str!("../../protocols/http-v1/openapi.yaml");

/// The `Authorization` header's value, bytes that are not UTF-8 replaced: a Bearer value with
/// characters a key never has is a wrong key (101), never a missing one (100).
pub(super) fn authorization(request: &Request<Incoming>) -> Option<String> {
    request
        .headers()
        .get(AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// `application/json`, with or without parameters (`; charset=utf-8`), any case.
fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// How long a refused request's body is read before the answer (see `http_body::discard`).
const REFUSED_BODY_WAIT: Duration = Duration::from_millis(500);

/// `response`, to a request refused before its body was wanted: what the client is already
/// sending is read and dropped first (up to the body limit, for at most
/// [`REFUSED_BODY_WAIT`]); if more was coming, the connection closes after the answer.
pub(super) async fn unread(
    request: Request<Incoming>,
    limit: usize,
    mut response: Response<Body>,
) -> Response<Body> {
    if !http_body::discard(request, limit, REFUSED_BODY_WAIT).await {
        response
            .headers_mut()
            .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads the whole body under the server's limits (`crate::http_body`).
async fn read_body(request: Request<Incoming>, limits: &BodyLimits) -> Result<Bytes, HttpError> {
    http_body::read(request, limits)
        .await
        .map_err(|error| match error {
            BodyError::TooLarge { limit, drained } => HttpError::TooLarge { limit, drained },
            BodyError::TooSlow => {
                crate::metrics::connection_refused("body_too_slow");
                HttpError::TooSlow(limits.min_rate)
            }
            BodyError::Unreadable(reason) => HttpError::BadBody(reason),
        })
}

/// A request id: 16 hex digits, random.
fn request_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

#[cfg(test)]
mod tests;
