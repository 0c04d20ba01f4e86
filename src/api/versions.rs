//! The API versions served side by side, in one place: `/api/{version}/...` goes to the
//! routes of a served version ([`SERVED_VERSIONS`]: `v1` today; a `v2` is added here next to
//! it), any other `/api/vN` is a JSON 404 (code 120) that lists those served. While a change
//! notice retires a version, every answer under it carries `Deprecation` (RFC 9745),
//! `Sunset` (RFC 8594) and `Link` to the notice's public page ([`deprecate`]), which
//! [`notice_page`] serves at `/notices/{id}` without authentication.

use hyper::header::{HeaderName, HeaderValue};
use hyper::Response;

use super::landing;
use super::reply::Body;
use crate::i18n::{format, Lang};
use crate::markup::escape;
use crate::msg;
use crate::notices::Notices;

/// The API versions this gateway serves, oldest first.
pub const SERVED_VERSIONS: &[&str] = &["v1"];

/// Where a path under `/api/` goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Versioned<'a> {
    /// A served version, and the rest of the path (`""`, `/`, `/status`...).
    Served(&'static str, &'a str),
    /// `/api/vN` with a version not served.
    Unknown,
    /// Not a versioned path.
    Other,
}

/// Which version `path` asks for.
pub(super) fn of(path: &str) -> Versioned<'_> {
    let Some(after) = path.strip_prefix("/api/") else {
        return Versioned::Other;
    };
    let (version, rest) = after.find('/').map_or((after, ""), |i| after.split_at(i));
    if let Some(served) = SERVED_VERSIONS.iter().find(|v| **v == version) {
        return Versioned::Served(served, rest);
    }
    let numbered = version
        .strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if numbered {
        Versioned::Unknown
    } else {
        Versioned::Other
    }
}

/// The served versions as the 404 lists them: `/api/v1`.
pub(super) fn served_list() -> String {
    SERVED_VERSIONS
        .iter()
        .map(|v| format!("/api/{v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Adds the `Deprecation`, `Sunset` and `Link` headers of the notice retiring `version`, if
/// any, to `response`.
pub(super) fn deprecate(
    response: &mut Response<Body>,
    version: &str,
    notices: &Notices,
    public_url: Option<&str>,
) {
    let Some(notice) = notices.deprecation(version) else {
        return;
    };
    let headers = response.headers_mut();
    for (name, value) in [
        ("deprecation", notice.deprecation.clone()),
        ("sunset", notice.sunset.clone()),
        ("link", notice.link(public_url)),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
}

/// The public page of notice `id` (`/notices/{id}`), in the reader's language; `None` when
/// there is no such notice.
pub(super) fn notice_page(notices: &Notices, id: &str, lang: Lang) -> Option<Response<Body>> {
    let notice = notices.get(id.parse().ok()?)?;
    let text = |message: crate::i18n::Message| escape(&message.render(lang));
    let date = format::day(&notice.notice.effective.to_string(), lang);
    let retires = notice.notice.retires.as_deref().map_or(String::new(), |v| {
        format!(
            "<p id=\"retires\">{}</p>",
            text(msg!(
                "notice-page-retires",
                version = v,
                date = date.as_str()
            ))
        )
    });
    let subject = escape(&format::visible(&notice.notice.subject));
    let main = format!(
        "<p class=\"small\">{kind}</p><h1>{subject}</h1><p id=\"effective\">{effective}</p>{retires}\
<div id=\"body\">{body}</div>\
<p class=\"small\">{published} · <a href=\"?lang=fr\" hreflang=\"fr\">FR</a> · \
<a href=\"?lang=en\" hreflang=\"en\">EN</a></p>",
        kind = text(msg!("notice-page-kind")),
        effective = text(msg!("notice-page-effective", date = date.as_str())),
        body = escape(&notice.notice.body),
        published = text(msg!(
            "notice-page-published",
            date = format::day(&notice.published_at.date_naive().to_string(), lang)
        )),
    );
    Some(landing::html_page(lang, &subject, STYLE, &main, "no-cache"))
}

/// A notice page's style, after the public pages' common one (`landing.rs`).
const STYLE: &str = "#effective,#retires{padding:.6em .8em;border-radius:4px;background:#fff4d6}\
#body{white-space:pre-wrap}.small{font-size:.85em;color:#555}a{color:#0b5cad}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_place_knows_the_versions() {
        assert_eq!(of("/api/v1"), Versioned::Served("v1", ""));
        assert_eq!(of("/api/v1/status"), Versioned::Served("v1", "/status"));
        assert_eq!(of("/api/v2/status"), Versioned::Unknown);
        assert_eq!(of("/api/v10"), Versioned::Unknown);
        assert_eq!(of("/api/vx/status"), Versioned::Other);
        assert_eq!(of("/api/v"), Versioned::Other);
        assert_eq!(of("/api/v1x"), Versioned::Other);
        assert_eq!(of("/dashboard/"), Versioned::Other);
        assert_eq!(served_list(), "/api/v1");
    }
}
