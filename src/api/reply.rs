//! JSON response bodies: the certification result, the status report and the error body
//! `{"errorCode", "errorDesc", "field"?}` with its HTTP status and `Retry-After`. `errorDesc` is
//! in the request's language (`Accept-Language`, see `routes`), said by `Content-Language`;
//! `errorCode` and `field` never depend on it.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderValue, CONTENT_LANGUAGE, CONTENT_TYPE, RETRY_AFTER, VARY, WWW_AUTHENTICATE,
};
use hyper::{Response, StatusCode};
use serde_json::{json, Map, Value};

use crate::certify::warnings::Warning;
use crate::certify::CertifyError;
use crate::i18n::format::plain_amount;
use crate::i18n::{Lang, Message};
use crate::model::RegisterEntry;
use crate::msg;

/// The body type of every response.
pub(crate) type Body = Full<Bytes>;

/// Errors of the HTTP layer itself (codes 120..129).
#[derive(Debug, Clone)]
pub(crate) enum HttpError {
    /// No such path.
    NotFound,
    /// `/api/vN` of a version not served (the served ones, as a list).
    UnknownVersion(String),
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
    /// Certification is stopped for the whole service (a damaged register, no device).
    Halted(super::Halt),
    /// The request head did not come within the header read timeout (408, issue 27).
    HeadTimeout,
    /// The request head could not be parsed (hyper's 400).
    HeadUnreadable,
    /// The request target is too long (hyper's 414).
    UriTooLong,
    /// The request head is too large: too many or too long header fields (hyper's 431).
    HeadTooLarge,
    /// A connection over a cap while every connection it could replace is busy (503).
    OverCap(super::peers::Cap),
    /// A query parameter has a value the path does not take (`field`: its name).
    BadParameter {
        /// The parameter.
        name: &'static str,
        /// Its value, as sent.
        value: String,
        /// The values it takes.
        allowed: &'static str,
    },
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

/// An error response: `{"errorCode", "errorDesc", "field"?}` with `Content-Language` (the
/// language of `desc`) and `Vary: Accept-Language` (another reader may get another text).
fn error_response(
    status: StatusCode,
    code: u16,
    desc: &str,
    field: Option<&str>,
    lang: Lang,
) -> Response<Body> {
    let mut body = Map::new();
    body.insert("errorCode".into(), json!(code));
    body.insert("errorDesc".into(), json!(desc));
    if let Some(field) = field {
        body.insert("field".into(), json!(field));
    }
    let mut response = json_response(status, &Value::Object(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
    headers.insert(VARY, HeaderValue::from_static("accept-language"));
    response
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
        CertifyError::CreditExceedsOriginal(_) | CertifyError::AboveMaxTotal { .. } => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        CertifyError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        CertifyError::DuplicateRn { .. }
        | CertifyError::LostRn { .. }
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
        | CertifyError::DeviceNotConfigured { .. }
        | CertifyError::NoSandbox
        | CertifyError::DeviceUnavailable { .. }
        | CertifyError::QueueFull { .. }
        | CertifyError::OutcomeUnknown { .. }
        | CertifyError::RegisterUnwritable { .. }
        | CertifyError::CertifiedNotRecorded { .. }
        | CertifyError::RegisterBehind { .. }
        | CertifyError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        CertifyError::NotFound { .. } => StatusCode::NOT_FOUND,
        CertifyError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The response of a certification error, its text in `lang`.
pub(crate) fn certify_error(error: &CertifyError, lang: Lang) -> Response<Body> {
    let status = status_of(error);
    let response = error_response(
        status,
        error.code(),
        &error.describe(lang),
        error.field(),
        lang,
    );
    let mut response = with_retry_after(response, error.retry_after());
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

impl HttpError {
    /// Its HTTP status and code.
    fn status_and_code(&self) -> (StatusCode, u16) {
        match self {
            HttpError::NotFound | HttpError::UnknownVersion(_) => (StatusCode::NOT_FOUND, 120),
            HttpError::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, 121),
            HttpError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, 122),
            HttpError::TooSlow(_) => (StatusCode::REQUEST_TIMEOUT, 126),
            HttpError::UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, 123),
            HttpError::BadBody(_) => (StatusCode::BAD_REQUEST, 124),
            HttpError::Timeout => (StatusCode::SERVICE_UNAVAILABLE, 125),
            HttpError::Halted(super::Halt::Damaged(_)) => (StatusCode::SERVICE_UNAVAILABLE, 160),
            HttpError::Halted(super::Halt::NoDevice { .. }) => {
                (StatusCode::SERVICE_UNAVAILABLE, 157)
            }
            HttpError::BadParameter { .. } => (StatusCode::BAD_REQUEST, 128),
            HttpError::HeadTimeout => (StatusCode::REQUEST_TIMEOUT, 190),
            HttpError::HeadUnreadable => (StatusCode::BAD_REQUEST, 191),
            HttpError::UriTooLong => (StatusCode::URI_TOO_LONG, 192),
            HttpError::HeadTooLarge => (StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, 129),
            HttpError::OverCap(cap) => (StatusCode::SERVICE_UNAVAILABLE, cap.code_and_message().0),
        }
    }

    /// Its text for the client (`errorDesc`).
    fn message(&self) -> Message {
        match self {
            HttpError::NotFound => msg!("err-no-such-path"),
            HttpError::UnknownVersion(served) => {
                msg!("err-unknown-api-version", served = served.as_str())
            }
            HttpError::MethodNotAllowed(allowed) => {
                msg!("err-method-not-allowed", allowed = *allowed)
            }
            HttpError::TooLarge { limit, .. } => msg!("err-body-too-large", limit = *limit),
            HttpError::TooSlow(rate) => msg!("err-body-too-slow", rate = *rate),
            HttpError::UnsupportedMediaType => msg!("err-not-json"),
            HttpError::BadBody(detail) => msg!("err-body-unreadable", detail = detail),
            HttpError::Timeout => msg!("err-request-timeout"),
            HttpError::Halted(halt) => halt.message(),
            HttpError::HeadTimeout => msg!("err-head-timeout"),
            HttpError::HeadUnreadable => msg!("err-head-unreadable"),
            HttpError::UriTooLong => msg!("err-uri-too-long"),
            HttpError::HeadTooLarge => msg!("err-head-too-large"),
            HttpError::OverCap(cap) => cap.code_and_message().1,
            HttpError::BadParameter {
                name,
                value,
                allowed,
            } => msg!(
                "err-bad-parameter",
                name = *name,
                value = value.chars().take(40).collect::<String>(),
                allowed = *allowed
            ),
        }
    }
}

/// The response of an HTTP-level error, its text in `lang`.
pub(crate) fn http_error(error: &HttpError, lang: Lang) -> Response<Body> {
    if let HttpError::BadBody(detail) = error {
        // Its words are hyper's, in English: the log has them, `errorDesc` says what happened.
        tracing::info!(detail, "the request body could not be read");
    }
    let (status, code) = error.status_and_code();
    let desc = error.message().render(lang);
    let field = match error {
        HttpError::BadParameter { name, .. } => Some(*name),
        _ => None,
    };
    let mut response = error_response(status, code, &desc, field, lang);
    if let HttpError::MethodNotAllowed(allow) = error {
        response
            .headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static(allow));
    }
    if matches!(
        error,
        HttpError::TooSlow(_)
            | HttpError::TooLarge { drained: false, .. }
            | HttpError::HeadTimeout
            | HttpError::HeadUnreadable
            | HttpError::UriTooLong
            | HttpError::HeadTooLarge
            | HttpError::OverCap(_)
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
        HttpError::OverCap(_) => {
            response = with_retry_after(response, Some(Duration::from_secs(1)))
        }
        _ => {}
    }
    response
}

/// The bytes of an HTTP-level error answer as written on the connection, for the answers
/// written around hyper (`conn_io`): status line, headers (`Connection: close`), JSON body.
pub(crate) fn raw_error(error: &HttpError, lang: Lang) -> Vec<u8> {
    use hyper::body::Body as _;
    let response = http_error(error, lang);
    let status = response.status();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in response.headers() {
        head.push_str(name.as_str());
        head.push_str(": ");
        head.push_str(&String::from_utf8_lossy(value.as_bytes()));
        head.push_str("\r\n");
    }
    // A `Full` body is ready at once: one frame, its bytes.
    let mut body = response.into_body();
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let data = match std::pin::Pin::new(&mut body).poll_frame(&mut context) {
        std::task::Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap_or_default(),
        _ => Bytes::new(),
    };
    head.push_str(&format!("content-length: {}\r\n\r\n", data.len()));
    let mut raw = head.into_bytes();
    raw.extend_from_slice(&data);
    raw
}

/// The 200 answer of a certification (`POST /Invoice`, its replay, `GET /Invoice/{rn}`) with
/// its `warnings` (`Certifier::warnings`): their texts are in `lang`, said by
/// `Content-Language`, and another reader may get another text (`Vary: Accept-Language`), as
/// for errors.
pub(crate) fn certification_response(
    entry: &RegisterEntry,
    warnings: &[Warning],
    lang: Lang,
) -> Response<Body> {
    let body = certification_body(entry, warnings, lang);
    let mut response = json_response(StatusCode::OK, &body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
    headers.insert(VARY, HeaderValue::from_static("accept-language"));
    response
}

/// The certification result: the seed's four security elements, then what an ERP and an
/// auditor need beside them, and `warnings` when there are any (`[{"warningCode",
/// "warningDesc"}]`, `warningDesc` in `lang`; absent when empty: `certify::warnings`).
/// Amounts are JSON strings with 2 decimals (exact).
pub(crate) fn certification_body(entry: &RegisterEntry, warnings: &[Warning], lang: Lang) -> Value {
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
            json!({"total": plain_amount(*ttc), "vat": plain_amount(vat)}),
        );
    }
    let mut body = json!({
        "codeDEFDGI": entry.security.code_def,
        "qrCode": entry.security.qr_code,
        "counters": entry.security.counters,
        "nim": entry.security.nim,
        "dateTime": entry.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string(),
        "rn": entry.request.rn,
        "type": entry.request.invoice_type,
        "total": plain_amount(totals.total),
        "vtotal": plain_amount(totals.vat),
        "specificTax": plain_amount(totals.specific_tax),
        "usdTotal": totals.usd_equivalent.map(plain_amount),
        "groups": Value::Object(groups),
        "environment": entry.request.environment.as_str(),
        "sequence": entry.sequence,
        "certifiedAt": entry.certified_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    let warnings: Vec<Value> = warnings
        .iter()
        .map(|warning| {
            json!({"warningCode": warning.code, "warningDesc": warning.message.render(lang)})
        })
        .collect();
    if !warnings.is_empty() {
        body["warnings"] = Value::Array(warnings);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::invoice::{code, ValidationError};
    use crate::certify::TokenReason;

    fn desc(response: &Response<Body>) -> Option<&HeaderValue> {
        response.headers().get(CONTENT_LANGUAGE)
    }

    #[test]
    fn an_error_says_its_language_and_varies_by_it() {
        let error = CertifyError::Validation(ValidationError::at(
            code::RN_EMPTY,
            "rn",
            msg!("err-rn-empty"),
        ));
        for (lang, code) in [(Lang::Fr, "fr"), (Lang::En, "en")] {
            let response = certify_error(&error, lang);
            assert_eq!(response.status(), StatusCode::BAD_REQUEST);
            assert_eq!(desc(&response).map(|v| v.as_bytes()), Some(code.as_bytes()));
            assert_eq!(
                response.headers().get(VARY).map(|v| v.as_bytes()),
                Some(&b"accept-language"[..])
            );
        }
        let refused = http_error(&HttpError::NotFound, Lang::Fr);
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        assert_eq!(desc(&refused).map(|v| v.as_bytes()), Some(&b"fr"[..]));
        assert_eq!(
            HttpError::MethodNotAllowed("GET, HEAD")
                .message()
                .render(Lang::Fr),
            crate::i18n::nbsp("méthode non permise sur ce chemin ; méthodes permises : GET, HEAD")
        );
    }

    #[test]
    fn setup_errors_are_503_without_retry_after() {
        for error in [
            CertifyError::DeviceNotConfigured {
                device: "shop2".into(),
            },
            CertifyError::WrongDevice {
                device_nif: "B9999999Z".into(),
                org_nif: "A1234567B".into(),
            },
            CertifyError::TokenRejected {
                device: "dgi".into(),
                reason: TokenReason::Rejected { status: 401 },
            },
        ] {
            let response = certify_error(&error, Lang::Fr);
            assert_eq!(
                response.status(),
                StatusCode::SERVICE_UNAVAILABLE,
                "{error}"
            );
            assert!(response.headers().get(RETRY_AFTER).is_none(), "{error}");
        }
        let busy = certify_error(
            &CertifyError::QueueFull {
                retry_after: Duration::from_secs(3),
            },
            Lang::Fr,
        );
        assert_eq!(
            busy.headers().get(RETRY_AFTER).map(|v| v.as_bytes()),
            Some(&b"3"[..])
        );
    }
}
