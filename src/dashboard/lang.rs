//! The reader's language: French by default (the installation's [`i18n::default_lang`]),
//! English when the browser's `Accept-Language` prefers it, and a choice made with the FR / EN
//! switch of every page (`GET /dashboard/lang?to=en&back=/dashboard/keys`: the cookie
//! [`LANG_COOKIE`], which wins over `Accept-Language`). No script: the switch is two links.

use hyper::body::Incoming;
use hyper::header::ACCEPT_LANGUAGE;
use hyper::{Method, Request};

use super::web::{self, Body};
use crate::http_request;
use crate::i18n::{self, Lang};

/// The cookie that keeps the language chosen with the switch.
pub const LANG_COOKIE: &str = "emcf_lang";
/// How long the choice is kept: a year.
const LANG_COOKIE_AGE: u64 = 365 * 24 * 3600;

/// Who reads an answer: in which language, and the page to come back to after switching it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The page's language.
    pub lang: Lang,
    /// This page's path and query (a dashboard path), for the switch's `back`.
    pub here: String,
}

impl Reader {
    /// The reader of `request`: the cookie's choice, else `Accept-Language`, else the
    /// installation's default.
    pub fn of(request: &Request<Incoming>) -> Reader {
        let cookie = web::cookie(request, LANG_COOKIE);
        let accept = http_request::header(request, ACCEPT_LANGUAGE.as_str());
        let path = request.uri().path();
        let here = if request.method() == Method::GET || request.method() == Method::HEAD {
            request
                .uri()
                .path_and_query()
                .map_or(path, |p| p.as_str())
                .to_string()
        } else {
            // After a form, the switch leads to the page the form came from.
            match path {
                "/dashboard/login" => "/dashboard/login",
                p if p.starts_with("/dashboard/keys") => "/dashboard/keys",
                _ => "/dashboard/",
            }
            .to_string()
        };
        Reader {
            lang: choose(cookie.as_deref(), accept, i18n::default_lang()),
            here: safe_back(Some(&here)).to_string(),
        }
    }

    /// The switch's link to `lang` from this page.
    pub fn switch_href(&self, lang: Lang) -> String {
        format!(
            "/dashboard/lang?to={}&back={}",
            lang.code(),
            http_request::url_encode(&self.here)
        )
    }
}

/// The language of a request: the cookie's (when it names one the gateway speaks), else the
/// one `Accept-Language` prefers, else `default`.
pub fn choose(cookie: Option<&str>, accept_language: Option<&str>, default: Lang) -> Lang {
    cookie
        .and_then(Lang::parse)
        .unwrap_or_else(|| Lang::negotiate(accept_language, default))
}

/// Where the switch may lead back to: a path of this dashboard only (never another site),
/// visible ASCII only; anything else is the overview.
pub fn safe_back(back: Option<&str>) -> &str {
    match back {
        Some(back)
            if (back == "/dashboard" || back.starts_with("/dashboard/"))
                && back.bytes().all(|b| b.is_ascii_graphic() && b != b'\\') =>
        {
            back
        }
        _ => "/dashboard/",
    }
}

/// `GET /dashboard/lang?to=fr|en&back=PATH`: keeps the choice in a cookie and goes back.
pub fn switch(request: &Request<Incoming>, secure: bool) -> hyper::Response<Body> {
    let query = http_request::query(request);
    let back = safe_back(http_request::field(&query, "back"));
    let mut response = web::redirect(back);
    if let Some(lang) = http_request::field(&query, "to").and_then(Lang::parse) {
        let cookie = web::cookie_text(LANG_COOKIE, lang.code(), Some(LANG_COOKIE_AGE), secure);
        web::set_cookie(&mut response, &cookie);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_wins_then_accept_language_then_the_default() {
        assert_eq!(choose(None, None, Lang::Fr), Lang::Fr);
        assert_eq!(choose(None, None, Lang::En), Lang::En);
        assert_eq!(choose(None, Some("en-GB,en;q=0.8"), Lang::Fr), Lang::En);
        assert_eq!(choose(Some("fr"), Some("en"), Lang::En), Lang::Fr);
        assert_eq!(choose(Some("en"), Some("fr"), Lang::Fr), Lang::En);
        // A cookie naming no language the gateway speaks is ignored.
        assert_eq!(choose(Some("ln"), Some("en"), Lang::Fr), Lang::En);
        assert_eq!(choose(Some(""), None, Lang::Fr), Lang::Fr);
    }

    #[test]
    fn the_switch_leads_back_to_this_dashboard_only() {
        assert_eq!(safe_back(Some("/dashboard/keys")), "/dashboard/keys");
        assert_eq!(
            safe_back(Some("/dashboard/invoices?env=sandbox&rn=F%2F1")),
            "/dashboard/invoices?env=sandbox&rn=F%2F1"
        );
        assert_eq!(safe_back(Some("/dashboard")), "/dashboard");
        for bad in [
            "https://evil.example/",
            "//evil.example/dashboard/",
            "/dashboardx",
            "/\\evil.example",
            "/dashboard/\r\nSet-Cookie: x=1",
            "/dashboard/ x",
            "",
        ] {
            assert_eq!(safe_back(Some(bad)), "/dashboard/", "{bad:?}");
        }
        assert_eq!(safe_back(None), "/dashboard/");
    }

    #[test]
    fn the_switch_link_carries_this_page() {
        let reader = Reader {
            lang: Lang::Fr,
            here: "/dashboard/invoices?env=sandbox".into(),
        };
        assert_eq!(
            reader.switch_href(Lang::En),
            "/dashboard/lang?to=en&back=%2Fdashboard%2Finvoices%3Fenv%3Dsandbox"
        );
    }
}
