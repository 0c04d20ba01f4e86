//! The dashboard's language over real HTTP (issue 13): French by default, English when the
//! browser's `Accept-Language` prefers it, the FR / EN switch's cookie over both; `<html
//! lang>` says which; amounts and times as each reader writes them, times in the configured
//! zone with the offset shown.

use crate::common;

use std::net::SocketAddr;

use common::*;

/// `GET path` with `headers` (and the session cookie when given).
async fn get_with(
    addr: SocketAddr,
    session: Option<&str>,
    path: &str,
    headers: &[(&str, &str)],
) -> Response {
    let cookies: Vec<String> = headers
        .iter()
        .filter(|(n, _)| *n == "Cookie")
        .map(|(_, v)| v.to_string())
        .chain(session.map(|s| format!("emcf_session={s}")))
        .collect();
    let cookie = cookies.join("; ");
    let mut all: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(n, _)| *n != "Cookie")
        .copied()
        .collect();
    if !cookie.is_empty() {
        all.push(("Cookie", cookie.as_str()));
    }
    request(addr, "GET", path, &all, None).await
}

fn html_lang(page: &Response) -> &str {
    let marker = "<html lang=\"";
    let at = page.body.find(marker).map_or(0, |at| at + marker.len());
    page.body[at..].split('"').next().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn french_by_default_english_when_preferred_and_the_switch_wins() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();

    // Accept-Language alone.
    for (accept, lang, title) in [
        (None, "fr", "<title>Connexion"),
        (Some("en-US,en;q=0.9"), "en", "<title>Sign in"),
        (Some("ln, en;q=0.5, fr;q=0.4"), "en", "<title>Sign in"),
        (Some("fr-CD, en;q=0.8"), "fr", "<title>Connexion"),
        (Some("de"), "fr", "<title>Connexion"),
    ] {
        let headers: Vec<(&str, &str)> =
            accept.map(|a| ("Accept-Language", a)).into_iter().collect();
        let page = get_with(addr, None, "/dashboard/login", &headers).await;
        assert_eq!(page.status, 200);
        assert_eq!(html_lang(&page), lang, "{accept:?}");
        assert!(page.body.contains(title), "{accept:?}: {}", page.body);
        assert!(page.body.contains("name=\"viewport\""));
    }

    // The switch: a cookie for a year, back to the page it was on (of this dashboard only).
    let switched = get_with(
        addr,
        None,
        "/dashboard/lang?to=en&back=%2Fdashboard%2Flogin",
        &[],
    )
    .await;
    assert_eq!(switched.status, 303);
    assert_eq!(switched.header("location"), Some("/dashboard/login"));
    let (value, header) = set_cookie(&switched, "emcf_lang").expect("language cookie");
    assert_eq!(value, "en");
    for part in [
        "Path=/dashboard",
        "HttpOnly",
        "SameSite=Strict",
        "Max-Age=31536000",
    ] {
        assert!(header.contains(part), "{header}");
    }
    for back in [
        "https%3A%2F%2Fevil.example%2F",
        "%2F%2Fevil.example",
        "%2Fdashboard%0D%0AX%3A1",
    ] {
        let path = format!("/dashboard/lang?to=fr&back={back}");
        let away = get_with(addr, None, &path, &[]).await;
        assert_eq!(away.header("location"), Some("/dashboard/"), "{back}");
    }
    let unknown = get_with(addr, None, "/dashboard/lang?to=ln", &[]).await;
    assert_eq!(unknown.status, 303);
    assert!(set_cookie(&unknown, "emcf_lang").is_none());

    // The cookie wins over Accept-Language, both ways.
    let english = [("Cookie", "emcf_lang=en"), ("Accept-Language", "fr")];
    let page = get_with(addr, None, "/dashboard/login", &english).await;
    assert_eq!(html_lang(&page), "en");
    let french = [("Cookie", "emcf_lang=fr"), ("Accept-Language", "en")];
    let page = get_with(addr, None, "/dashboard/login", &french).await;
    assert_eq!(html_lang(&page), "fr");

    // Signed in: every page in the chosen language, with the switch back to that page.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let mut big = invoice("LANG-1");
    big["items"][0]["price"] = "84020.00".into();
    big["payments"][0]["amount"] = "168040.00".into();
    let certified = post_invoice(addr, &setup.key, &big).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    let pages = [
        ("/dashboard/", "Vue d'ensemble", "Overview"),
        ("/dashboard/keys", "Clés API", "API keys"),
        ("/dashboard/invoices", "Total TTC", "Device time"),
        (
            "/dashboard/invoices/production/1",
            "Éléments de sécurité",
            "Security elements",
        ),
        (
            "/dashboard/keys/disable?id=nope",
            "Introuvable",
            "Not found",
        ),
    ];
    for (path, fr, en) in pages {
        let page = get_with(addr, Some(&session), path, &[]).await;
        assert_eq!(html_lang(&page), "fr", "{path}");
        assert!(
            page.body.contains(&fr.replace('\'', "&#39;")),
            "{path}: {}",
            page.body
        );
        let back = format!(
            "href=\"/dashboard/lang?to=en&amp;back={}\" id=\"lang-en\"",
            path.replace('/', "%2F")
                .replace('?', "%3F")
                .replace('=', "%3D")
        );
        assert!(page.body.contains(&back), "{path}: {back}\n{}", page.body);
        let page = get_with(addr, Some(&session), path, &[("Cookie", "emcf_lang=en")]).await;
        assert_eq!(html_lang(&page), "en", "{path}");
        assert!(page.body.contains(en), "{path}: {}", page.body);
    }

    // Amounts and times as each reader writes them, in the configured zone (+01:00).
    let list = get_with(addr, Some(&session), "/dashboard/invoices", &[]).await;
    assert!(
        list.body.contains("168\u{202F}040,00\u{A0}CDF"),
        "{}",
        list.body
    );
    assert!(list.body.contains(" UTC+01:00"), "{}", list.body);
    let list = get_with(
        addr,
        Some(&session),
        "/dashboard/invoices",
        &[("Accept-Language", "en")],
    )
    .await;
    assert!(list.body.contains("168,040.00 CDF"), "{}", list.body);
    assert!(!list.body.contains("168040.00"), "{}", list.body);
    let detail = get_with(
        addr,
        Some(&session),
        "/dashboard/invoices/production/1",
        &[],
    )
    .await;
    assert!(
        detail
            .body
            .contains("<dd id=\"total\">168\u{202F}040,00\u{A0}CDF</dd>"),
        "{}",
        detail.body
    );
}
