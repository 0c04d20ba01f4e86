//! What a person or a client finds at the server's root: `GET /` is a small HTML page (what
//! this is, whether it can certify now, where the dashboard, the API description and the
//! docs are), in the reader's language; `GET /api/v1` is the same as JSON for a client.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_LANGUAGE, CONTENT_TYPE, VARY};
use hyper::{Response, StatusCode};
use serde_json::json;

use super::reply::{json_response, Body};
use crate::http_request::{field, query_pairs};
use crate::i18n::Lang;
use crate::markup::escape;
use crate::msg;

/// The page at `/dashboard` of a halted service (no device configured, a damaged register):
/// the landing page with `reason`, answered 503 with `Retry-After` as the API's outages are.
pub(super) fn halted_page(reason: &str, version: &str, lang: Lang) -> Response<Body> {
    let mut response = page(false, Some(reason), version, lang);
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
        .headers_mut()
        .insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("60"));
    response
}

/// The HTML page at `/`; `reason`: why the whole service certifies nothing, if it is halted.
pub(super) fn page(ready: bool, reason: Option<&str>, version: &str, lang: Lang) -> Response<Body> {
    let text = |message: crate::i18n::Message| escape(&message.render(lang));
    let (state_class, state) = if ready {
        ("ready", text(msg!("landing-ready")))
    } else {
        ("not-ready", text(msg!("landing-not-ready")))
    };
    let reason = reason
        .map(|reason| format!("<p id=\"reason\">{}</p>", escape(reason)))
        .unwrap_or_default();
    let main = format!(
        "<h1>{title}</h1><p>{what}</p>\
<p id=\"status\" class=\"{state_class}\">{state}</p>{reason}\
<ul>\
<li><a href=\"/dashboard/\">{dashboard}</a></li>\
<li><a href=\"/api/v1/openapi.yaml\">{openapi}</a></li>\
<li><a href=\"/api/v1/status\">{status}</a></li>\
</ul><p>{docs}</p><p class=\"small\">emcf-gateway {version} · \
<a href=\"/?lang=fr\" hreflang=\"fr\">FR</a> · <a href=\"/?lang=en\" hreflang=\"en\">EN</a></p>",
        title = text(msg!("landing-title")),
        what = text(msg!("landing-what")),
        dashboard = text(msg!("landing-dashboard")),
        openapi = text(msg!("landing-openapi")),
        status = text(msg!("landing-status")),
        docs = text(msg!("landing-docs")),
        version = escape(version),
    );
    html_page(lang, &text(msg!("landing-title")), STYLE, &main, "no-store")
}

/// A public HTML page of the API (the landing page, a notice's page): `main` inside the
/// document every such page shares, in `lang`, with `style` after the common one;
/// `Cache-Control: cache`, and `Vary: Accept-Language` (the language follows the reader's).
pub(super) fn html_page(
    lang: Lang,
    title: &str,
    style: &str,
    main: &str,
    cache: &'static str,
) -> Response<Body> {
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"{code}\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title}</title><style>{BASE_STYLE}{style}</style></head><body><main>{main}</main>\
</body></html>\n",
        code = lang.code(),
    );
    let mut response = Response::new(Full::new(Bytes::from(html)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(VARY, HeaderValue::from_static("Accept-Language"));
    if let Ok(value) = HeaderValue::from_str(lang.code()) {
        headers.insert(CONTENT_LANGUAGE, value);
    }
    response
}

/// The JSON index at `/api/v1`.
pub(super) fn index(ready: bool, api_version: &str) -> Response<Body> {
    json_response(
        StatusCode::OK,
        &json!({
            "name": "emcf-gateway",
            "version": api_version,
            "status": ready,
            "links": {
                "status": "/api/v1/status",
                "invoice": "/api/v1/Invoice",
                "openapi": "/api/v1/openapi.yaml",
                "dashboard": "/dashboard/",
            },
        }),
    )
}

/// The language a `?lang=` query asks for, if any.
pub(super) fn query_lang(query: Option<&str>) -> Option<Lang> {
    field(&query_pairs(query), "lang").and_then(Lang::parse)
}

/// The style every public page starts with.
const BASE_STYLE: &str =
    "body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b;background:#f6f6f4}\
main{max-width:40em;margin:0 auto;padding:1.5em 1em}h1{font-size:1.4em}";

/// The landing page's own.
const STYLE: &str = "#status{padding:.6em .8em;border-radius:4px}.ready{background:#e3f4e1}.not-ready{background:#fde8e4}\
li{margin:.4em 0}a{color:#0b5cad}.small{font-size:.85em;color:#555}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_of_a_query() {
        assert_eq!(query_lang(Some("lang=en")), Some(Lang::En));
        assert_eq!(query_lang(Some("x=1&lang=fr-CD")), Some(Lang::Fr));
        assert_eq!(query_lang(Some("lang=xx")), None);
        assert_eq!(query_lang(None), None);
    }
}
