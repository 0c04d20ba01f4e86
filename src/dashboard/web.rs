//! HTTP plumbing of the dashboard: forms (decoded by `http_request`), cookies, the same-origin check,
//! and responses with the security headers every dashboard answer carries.

use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{
    HeaderMap, HeaderValue, CACHE_CONTROL, CONTENT_TYPE, COOKIE, HOST, LOCATION, SET_COOKIE,
};
use hyper::{Request, Response, StatusCode};

use crate::http_body::{self, BodyError, BodyLimits};
use crate::http_request::{header, parse_urlencoded};

/// `overview.rs` reads its query through these names (to be dropped once it names
/// `crate::http_request` itself).
pub use crate::http_request::{field, query};

/// The body of every dashboard response.
pub type Body = Full<Bytes>;

/// Largest form body accepted from a signed-in admin.
pub const FORM_LIMIT: usize = 16 * 1024;
/// Largest sign-in form accepted: a token and the form's value fit in well under 1 KiB; a
/// request nobody has authenticated yet gets no more (issue 14).
pub const SIGN_IN_LIMIT: usize = 4 * 1024;

/// `Content-Security-Policy` of every page: no script at all, styles from the dashboard's own
/// stylesheet, forms posting only to this origin, never framed.
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The value of cookie `name`, from every `Cookie` header.
pub fn cookie(request: &Request<Incoming>, name: &str) -> Option<String> {
    request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim().to_string())
}

/// Who sent a request, as the dashboard sees it (set on the request when it arrives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The connection comes from a configured reverse proxy (`[http] trusted_proxies`): its
    /// `X-Forwarded-Host`, `X-Forwarded-Proto` and `X-Forwarded-For` are believed.
    pub via_proxy: bool,
    /// The client's address, what the sign-in's protections count by (its failures, its form
    /// values): the connection's, or behind a trusted proxy the address that proxy appended
    /// to `X-Forwarded-For` ([`forwarded_for`]), so that one client's wrong tokens or form
    /// loads are not everyone's.
    pub client: IpAddr,
}

impl Peer {
    /// What a request from `peer` with `headers` says of its client; `via_proxy` when `peer`
    /// is one of `[http] trusted_proxies`.
    pub fn new(headers: &HeaderMap, peer: IpAddr, via_proxy: bool) -> Peer {
        let client = via_proxy
            .then(|| forwarded_for(headers))
            .flatten()
            .unwrap_or(peer);
        Peer { via_proxy, client }
    }
}

/// The client's address behind a trusted proxy: the right-most entry of `X-Forwarded-For`,
/// the one the proxy appended (the entries before it are what the client claimed), read as
/// an IP address; `None` when there is none or it is not one.
fn forwarded_for(headers: &HeaderMap) -> Option<IpAddr> {
    last_element(headers, "x-forwarded-for")?
        .parse::<IpAddr>()
        .ok()
        .map(|ip| ip.to_canonical())
}

/// The last comma-separated element of the last `name` header: what the nearest proxy wrote
/// when it appends to a list (Apache's `X-Forwarded-Host: client-sent, proxy-set`), and the
/// whole value when it sets one (nginx's `proxy_set_header`).
fn last_element<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get_all(name).iter().next_back()?.to_str().ok()?;
    let last = value.rsplit(',').next().unwrap_or(value).trim();
    (!last.is_empty()).then_some(last)
}

/// A forwarding header of `request`, only if it came from a trusted proxy (else anyone could
/// claim another host or TLS): its [last element](last_element), the trusted proxy's own.
fn forwarded<'a>(request: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    let trusted = request
        .extensions()
        .get::<Peer>()
        .is_some_and(|peer| peer.via_proxy);
    trusted
        .then(|| last_element(request.headers(), name))
        .flatten()
}

/// The address the sign-in's protections count `request` by: [`Peer::client`], or the
/// connection's when the request was not marked (it always is, in `Dashboard::handle`).
pub fn client_ip(request: &Request<Incoming>, peer: SocketAddr) -> IpAddr {
    request
        .extensions()
        .get::<Peer>()
        .map_or(peer.ip(), |p| p.client)
}

/// Whether the request came through a trusted TLS-terminating proxy (`X-Forwarded-Proto:
/// https` from a peer of `[http] trusted_proxies`).
pub fn behind_tls(request: &Request<Incoming>) -> bool {
    forwarded(request, "x-forwarded-proto").is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// The same-origin check of a POST: `Origin` (or, without it, `Referer`) must name the host
/// the request was sent to (`Host`, or `X-Forwarded-Host` from a trusted proxy). A request
/// with neither header passes here (some clients send none) and still needs its CSRF token.
pub fn same_origin(request: &Request<Incoming>) -> bool {
    let hosts: Vec<&str> = [
        header(request, HOST.as_str()),
        forwarded(request, "x-forwarded-host"),
    ]
    .into_iter()
    .flatten()
    .map(str::trim)
    .collect();
    let claimed = match (header(request, "origin"), header(request, "referer")) {
        (Some(origin), _) => origin.trim(),
        (None, Some(referer)) => referer.trim(),
        (None, None) => return true,
    };
    origin_matches(claimed, &hosts)
}

/// Whether `url` (`scheme://authority[/...]`) has the authority of one of `hosts`.
fn origin_matches(url: &str, hosts: &[&str]) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false; // "null" and other opaque origins
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    !authority.is_empty() && hosts.iter().any(|h| h.eq_ignore_ascii_case(authority))
}

/// Why a form body was not read.
#[derive(Debug)]
pub enum FormError {
    /// Not `application/x-www-form-urlencoded`.
    ContentType,
    /// Above the limit.
    TooLarge,
    /// Below the minimum rate.
    TooSlow,
    /// Cut off.
    Body,
}

/// Reads and decodes an urlencoded form body under `limits`.
pub async fn read_form(
    request: Request<Incoming>,
    limits: &BodyLimits,
) -> Result<Vec<(String, String)>, FormError> {
    let urlencoded = header(&request, CONTENT_TYPE.as_str())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            m.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !urlencoded {
        return Err(FormError::ContentType);
    }
    let bytes = http_body::read(request, limits)
        .await
        .map_err(|error| match error {
            BodyError::TooLarge { .. } => FormError::TooLarge,
            BodyError::TooSlow => FormError::TooSlow,
            BodyError::Unreadable(_) => FormError::Body,
        })?;
    Ok(parse_urlencoded(&String::from_utf8_lossy(&bytes)))
}

/// `response` with `Connection: close`: the request's body was not read to its end, so the
/// connection cannot carry another request.
pub fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A response with the dashboard's security headers (no caching, no sniffing, no framing,
/// the CSP, no referrer to other sites).
pub fn response(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    headers.insert("content-security-policy", HeaderValue::from_static(CSP));
    response
}

/// An HTML page.
pub fn html(status: StatusCode, page: String) -> Response<Body> {
    response(status, "text/html; charset=utf-8", page)
}

/// `303 See Other` to `location` (a path of this dashboard).
pub fn redirect(location: &str) -> Response<Body> {
    let mut response = response(StatusCode::SEE_OTHER, "text/plain; charset=utf-8", "");
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// Adds a `Set-Cookie` header (ignored if the text is not a valid header value).
pub fn set_cookie(response: &mut Response<Body>, text: &str) {
    if let Ok(value) = HeaderValue::from_str(text) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}

/// `name=value` for the dashboard's paths: HttpOnly, SameSite=Strict, `Secure` when asked,
/// `Max-Age` when given (0 deletes it).
pub fn cookie_text(name: &str, value: &str, max_age: Option<u64>, secure: bool) -> String {
    let mut text = format!("{name}={value}; Path=/dashboard; HttpOnly; SameSite=Strict");
    if let Some(age) = max_age {
        text.push_str(&format!("; Max-Age={age}"));
    }
    if secure {
        text.push_str("; Secure");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_must_name_the_requested_host() {
        let hosts = ["127.0.0.1:8080"];
        assert!(origin_matches("http://127.0.0.1:8080", &hosts));
        assert!(origin_matches(
            "https://127.0.0.1:8080/dashboard/keys?x",
            &hosts
        ));
        assert!(!origin_matches("http://127.0.0.1:8081", &hosts));
        assert!(!origin_matches(
            "http://127.0.0.1:8080.evil.example",
            &hosts
        ));
        assert!(!origin_matches(
            "http://evil.example/127.0.0.1:8080",
            &hosts
        ));
        assert!(!origin_matches("null", &hosts));
        assert!(!origin_matches("file:///127.0.0.1:8080", &hosts));
        assert!(!origin_matches("http://", &[""]));
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn the_trusted_proxy_s_own_element_is_the_last_one() {
        let appended = headers(&[("x-forwarded-host", "evil.example, shop.example")]);
        assert_eq!(
            last_element(&appended, "x-forwarded-host"),
            Some("shop.example")
        );
        let lines = headers(&[
            ("x-forwarded-proto", "http"),
            ("x-forwarded-proto", "https ,https"),
        ]);
        assert_eq!(last_element(&lines, "x-forwarded-proto"), Some("https"));
        assert_eq!(
            last_element(&headers(&[("x-forwarded-host", "a, ")]), "x-forwarded-host"),
            None
        );
        assert_eq!(last_element(&HeaderMap::new(), "x-forwarded-host"), None);
    }

    #[test]
    fn the_client_is_the_address_the_trusted_proxy_appended() {
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let list = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7")]);
        let client = |headers: &HeaderMap, trusted| Peer::new(headers, proxy, trusted).client;
        assert_eq!(
            client(&list, true),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        assert_eq!(client(&list, false), proxy, "never from an untrusted peer");
        let v6 = headers(&[("x-forwarded-for", "2001:db8::7")]);
        assert_eq!(client(&v6, true), "2001:db8::7".parse::<IpAddr>().unwrap());
        let mapped = headers(&[("x-forwarded-for", "::ffff:198.51.100.7")]);
        assert_eq!(
            client(&mapped, true),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        for unreadable in ["unknown", "198.51.100.7:4711", "", "203.0.113.9, _hidden"] {
            let header = headers(&[("x-forwarded-for", unreadable)]);
            assert_eq!(client(&header, true), proxy, "{unreadable:?}");
        }
        assert_eq!(client(&HeaderMap::new(), true), proxy, "absent");
    }

    #[test]
    fn cookies_are_http_only_and_strict() {
        let text = cookie_text("s", "v", None, false);
        assert_eq!(text, "s=v; Path=/dashboard; HttpOnly; SameSite=Strict");
        assert!(cookie_text("s", "", Some(0), true).ends_with("; Max-Age=0; Secure"));
    }
}
