//! JSON response bodies: the certification result, the status report and the error body
//! `{"errorCode", "errorDesc", "field"?}` with its HTTP status and `Retry-After`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use crate::certify::CertifyError;
use crate::model::RegisterEntry;

/// The body type of every response.
pub(crate) type Body = Full<Bytes>;

/// Errors of the HTTP layer itself (codes 120..129).
#[derive(Debug, Clone)]
pub(crate) enum HttpError {
    /// No such path.
    NotFound,
    /// The path exists, not with this method.
    MethodNotAllowed(&'static str),
    /// Body above the limit; `drained`: the rest was read (else the connection closes).
    TooLarge {
        /// The limit in bytes.
        limit: usize,
        /// Whether the whole body was read.
        drained: bool,
    },
    /// The body did not keep up the minimum rate (bytes per second).
    TooSlow(u64),
    /// Not `application/json`.
    UnsupportedMediaType,
    /// The body could not be read.
    BadBody(String),
    /// The request took longer than the request timeout.
    Timeout,
    /// The register is damaged: certification is stopped.
    Halted(String),
}

/// A JSON response with `status`.
pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(Full::new(Bytes::from(bytes)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

fn error_body(code: u16, desc: &str, field: Option<&str>) -> Value {
    let mut body = Map::new();
    body.insert("errorCode".into(), json!(code));
    body.insert("errorDesc".into(), json!(desc));
    if let Some(field) = field {
        body.insert("field".into(), json!(field));
    }
    Value::Object(body)
}

fn with_retry_after(mut response: Response<Body>, retry_after: Option<Duration>) -> Response<Body> {
    if let Some(delay) = retry_after {
        let seconds = delay.as_secs() + u64::from(delay.subsec_nanos() > 0);
        if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
    }
    response
}

/// The HTTP status of a certification error.
pub(crate) fn status_of(error: &CertifyError) -> StatusCode {
    match error {
        CertifyError::Validation(_)
        | CertifyError::PaymentsShort { .. }
        | CertifyError::ZeroTotal
        | CertifyError::BadIdempotencyKey => StatusCode::BAD_REQUEST,
        CertifyError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        CertifyError::DuplicateRn { .. }
        | CertifyError::InFlight { .. }
        | CertifyError::AwaitingAdministrator { .. } => StatusCode::CONFLICT,
        CertifyError::QuotaExhausted { .. } => StatusCode::TOO_MANY_REQUESTS,
        CertifyError::DeviceRefused { .. }
        | CertifyError::TotalsMismatch { .. }
        | CertifyError::TotalsMismatchDgi { .. }
        | CertifyError::DgiRefused { .. }
        | CertifyError::TotalsTooLarge
        | CertifyError::IdempotencyKeyReused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        CertifyError::WrongDevice { .. }
        | CertifyError::DeviceNotReady { .. }
        | CertifyError::TokenRejected { .. }
        | CertifyError::DeviceUnavailable { .. }
        | CertifyError::QueueFull { .. }
        | CertifyError::OutcomeUnknown { .. }
        | CertifyError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        CertifyError::NotFound { .. } => StatusCode::NOT_FOUND,
        CertifyError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The response of a certification error.
pub(crate) fn certify_error(error: &CertifyError) -> Response<Body> {
    let status = status_of(error);
    let response = json_response(
        status,
        &error_body(error.code(), &error.to_string(), error.field()),
    );
    let mut response = with_retry_after(response, error.retry_after());
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The response of an HTTP-level error.
pub(crate) fn http_error(error: &HttpError) -> Response<Body> {
    let (status, code, desc) = match error {
        HttpError::NotFound => (StatusCode::NOT_FOUND, 120, "no such path; the API is under /api/v1".to_string()),
        HttpError::MethodNotAllowed(allow) => (
            StatusCode::METHOD_NOT_ALLOWED,
            121,
            format!("method not allowed on this path; allowed: {allow}"),
        ),
        HttpError::TooLarge { limit, .. } => (
            StatusCode::PAYLOAD_TOO_LARGE,
            122,
            format!("request body larger than {limit} bytes"),
        ),
        HttpError::TooSlow(rate) => (
            StatusCode::REQUEST_TIMEOUT,
            126,
            format!("the request body arrived too slowly (under {rate} bytes per second); send the whole body at once"),
        ),
        HttpError::UnsupportedMediaType => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            123,
            "the body must be JSON: send 'Content-Type: application/json'".to_string(),
        ),
        HttpError::BadBody(reason) => (
            StatusCode::BAD_REQUEST,
            124,
            format!("the request body could not be read: {reason}"),
        ),
        HttpError::Timeout => (
            StatusCode::SERVICE_UNAVAILABLE,
            125,
            "the request took too long; if it was an invoice, GET /api/v1/Invoice/{rn} or retry the same request later to get its result".to_string(),
        ),
        HttpError::Halted(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            160,
            format!("the invoice register is damaged and certification is stopped until an operator restores it: {reason}"),
        ),
    };
    let mut response = json_response(status, &error_body(code, &desc, None));
    if let HttpError::MethodNotAllowed(allow) = error {
        response
            .headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static(allow));
    }
    if matches!(
        error,
        HttpError::TooSlow(_) | HttpError::TooLarge { drained: false, .. }
    ) {
        // The rest of the body was not read: the connection cannot carry another request.
        response
            .headers_mut()
            .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    match error {
        HttpError::Timeout => response = with_retry_after(response, Some(Duration::from_secs(5))),
        HttpError::Halted(_) => {
            response = with_retry_after(response, Some(Duration::from_secs(60)))
        }
        _ => {}
    }
    response
}

/// An amount as the API writes it: a string with exactly 2 decimals.
fn amount(value: Decimal) -> String {
    let mut value = value;
    value.rescale(2);
    value.to_string()
}

/// The certification result: the seed's four security elements, then what an ERP and an
/// auditor need beside them. Amounts are JSON strings with 2 decimals (exact).
pub(crate) fn certification_body(entry: &RegisterEntry) -> Value {
    let totals = &entry.request.totals;
    let mut groups = Map::new();
    for (letter, ttc) in &totals.group_ttc {
        let vat = totals
            .group_vat
            .iter()
            .find(|(g, _)| g == letter)
            .map(|(_, v)| *v)
            .unwrap_or_default();
        groups.insert(
            letter.to_string(),
            json!({"total": amount(*ttc), "vat": amount(vat)}),
        );
    }
    json!({
        "codeDEFDGI": entry.security.code_def,
        "qrCode": entry.security.qr_code,
        "counters": entry.security.counters,
        "nim": entry.security.nim,
        "dateTime": entry.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string(),
        "rn": entry.request.rn,
        "type": entry.request.invoice_type,
        "total": amount(totals.total),
        "vtotal": amount(totals.vat),
        "specificTax": amount(totals.specific_tax),
        "usdTotal": totals.usd_equivalent.map(amount),
        "groups": Value::Object(groups),
        "environment": entry.request.environment.as_str(),
        "sequence": entry.sequence,
        "certifiedAt": entry.certified_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}
