//! The language of `errorDesc`: French by default, English when `Accept-Language` prefers it,
//! said by `Content-Language` (with `Vary: Accept-Language`); `errorCode` and `field` never
//! change with it. And an error only a person can fix (the organization's device not
//! configured: 156) carries no `Retry-After` for an ERP to loop on (153, a box of another
//! taxpayer: tests/device_health.rs and tests/edef_recovery.rs).
//!
//! Real binary, simulator on a pty (see `common`).

mod common;

use common::{assert_error, invoice, request, ApiSetup, Gateway};
use serde_json::{json, Value};

/// `POST /api/v1/Invoice` with `body`, the Bearer `key` and, if given, `Accept-Language`.
async fn post_in(
    api: &ApiSetup,
    key: &str,
    body: &Value,
    accept_language: Option<&str>,
) -> common::Response {
    let auth = format!("Bearer {key}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    if let Some(value) = accept_language {
        headers.push(("Accept-Language", value));
    }
    let bytes = serde_json::to_vec(body).expect("json");
    request(
        api.addr(),
        "POST",
        "/api/v1/Invoice",
        &headers,
        Some(&bytes),
    )
    .await
}

/// Asserts the response's `Content-Language` is `lang` and it varies by `Accept-Language`.
#[track_caller]
fn assert_language(response: &common::Response, lang: &str) {
    assert_eq!(
        response.header("content-language"),
        Some(lang),
        "{:?}",
        response.headers
    );
    assert!(
        response
            .header("vary")
            .is_some_and(|v| v.to_ascii_lowercase().contains("accept-language")),
        "{:?}",
        response.headers
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invoice_error_reads_french_by_default_and_english_on_request() {
    let api = ApiSetup::start(None).await;
    let mut empty_rn = invoice("L-1");
    empty_rn["rn"] = json!("");
    let french = "la référence de facture (rn) ne peut pas être vide";
    let english = "the invoice reference (rn) cannot be empty";
    for (accept_language, lang, text) in [
        (None, "fr", french),
        (Some("en-US,en;q=0.9"), "en", english),
        (Some("fr-CD"), "fr", french),
        (Some("ln, en;q=0.5, fr;q=0.8"), "fr", french),
        (Some("de"), "fr", french),
        (Some("EN"), "en", english),
    ] {
        let response = post_in(&api, &api.key, &empty_rn, accept_language).await;
        let error = assert_error(&response, 400, 31);
        assert_eq!(error["errorDesc"], text, "{accept_language:?}");
        assert_eq!(error["field"], "rn", "{accept_language:?}");
        assert_language(&response, lang);
    }

    // Another layer's errors too: the key (401), the HTTP layer (404), with their codes.
    let wrong_key = post_in(&api, "mcf_live_nope", &invoice("L-2"), None).await;
    assert_eq!(
        assert_error(&wrong_key, 401, 101)["errorDesc"],
        "clé API invalide"
    );
    assert_language(&wrong_key, "fr");
    let wrong_key = post_in(&api, "mcf_live_nope", &invoice("L-2"), Some("en")).await;
    assert_eq!(
        assert_error(&wrong_key, 401, 101)["errorDesc"],
        "invalid API key"
    );
    let unknown = request(
        api.addr(),
        "GET",
        "/api/v2/status",
        &[("Accept-Language", "en-GB")],
        None,
    )
    .await;
    assert_eq!(
        assert_error(&unknown, 404, 120)["errorDesc"],
        "no such path; the API is under /api/v1"
    );
    assert_language(&unknown, "en");
    let unknown = request(api.addr(), "GET", "/api/v2/status", &[], None).await;
    assert_eq!(
        assert_error(&unknown, 404, 120)["errorDesc"],
        "chemin inconnu ; l'API se trouve sous /api/v1"
    );

    // Nothing of the refused requests reached the box: the next invoice certifies.
    let ok = post_in(&api, &api.key, &invoice("L-3"), Some("en")).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn setup_errors_ask_for_a_person_not_a_retry() {
    let mut api = ApiSetup::start(None).await;
    let ok = post_in(&api, &api.key, &invoice("G-1"), None).await;
    assert_eq!(ok.status, 200, "{}", ok.body);

    // The device the organization is bound to leaves the configuration (renamed): 156, no
    // Retry-After, in either language.
    assert!(api.gateway.terminate(), "gateway exits cleanly on SIGTERM");
    let config = std::fs::read_to_string(&api.gateway.config).expect("config");
    let renamed = config.replace("name = \"shop\"", "name = \"till\"");
    assert_ne!(renamed, config, "the device is renamed: {config}");
    api.gateway = Gateway::start(api.dir.path(), &renamed);
    let refused = post_in(&api, &api.key, &invoice("G-3"), None).await;
    let error = assert_error(&refused, 503, 156);
    let desc = error["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.starts_with("l'appareil shop de cette organisation n'est pas configuré"),
        "{desc}"
    );
    assert!(
        refused.header("retry-after").is_none(),
        "{:?}",
        refused.headers
    );
    assert_language(&refused, "fr");
    let refused = post_in(&api, &api.key, &invoice("G-3"), Some("en")).await;
    let error = assert_error(&refused, 503, 156);
    let desc = error["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.starts_with("the organization's device shop is not configured on this gateway"),
        "{desc}"
    );
    assert!(refused.header("retry-after").is_none());
    assert_language(&refused, "en");
}
