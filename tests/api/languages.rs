//! The language of `errorDesc`: French by default, English when `Accept-Language` prefers it,
//! said by `Content-Language` (with `Vary: Accept-Language`); `errorCode` and `field` never
//! change with it. And an error only a person can fix (the organization's device not
//! configured: 156) carries no `Retry-After` for an ERP to loop on (153, a box of another
//! taxpayer: tests/device/health.rs and tests/device/web_api_recovery.rs).
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

use common::{assert_error, invoice, nbsp, request, ApiSetup, Gateway};
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
    let french = "le numéro de facture (rn) ne peut pas être vide";
    let english = "the invoice number (rn) cannot be empty";
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
        "this API version is not served; versions served: /api/v1"
    );
    assert_language(&unknown, "en");
    let unknown = request(api.addr(), "GET", "/api/v2/status", &[], None).await;
    assert_eq!(
        assert_error(&unknown, 404, 120)["errorDesc"],
        nbsp("cette version de l'API n'est pas servie ; versions servies : /api/v1")
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

/// `POST /api/v1/Invoice` with `bytes` as they are, and `Accept-Language` if given.
async fn post_bytes_in(
    api: &ApiSetup,
    bytes: &[u8],
    accept_language: Option<&str>,
) -> common::Response {
    let auth = format!("Bearer {}", api.key);
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    if let Some(value) = accept_language {
        headers.push(("Accept-Language", value));
    }
    request(api.addr(), "POST", "/api/v1/Invoice", &headers, Some(bytes)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_in_the_reader_s_language_from_end_to_end() {
    let api = ApiSetup::start(None).await;

    // A body cut short: what is wrong and where, never the parser's English.
    let cut = r#"{"rn":"L-9","items":[{"name":"x"}"#;
    let column = cut.len();
    for (lang, text) in [
        (
            None,
            format!(
                "le corps de la requête n'est pas du JSON valide, ligne 1, colonne {column} : le \
                 corps s'arrête avant la fin d'un tableau (il manque un « ] »)"
            ),
        ),
        (
            Some("en"),
            format!(
                "the body is not valid JSON, line 1, column {column}: the body ends before the \
                 end of an array (a \"]\" is missing)"
            ),
        ),
    ] {
        let response = post_bytes_in(&api, cut.as_bytes(), lang).await;
        let error = assert_error(&response, 400, 1);
        assert_eq!(error["errorDesc"], nbsp(&text), "{lang:?}");
        assert!(error.get("field").is_none(), "{}", response.body);
        assert_language(&response, lang.unwrap_or("fr"));
    }
    // On another line: the line and the column of the mistake (a missing colon).
    let body = "{\n  \"rn\": \"L-9\",\n  \"mode\" \"ttc\"\n}";
    let response = post_bytes_in(&api, body.as_bytes(), None).await;
    assert_eq!(
        assert_error(&response, 400, 1)["errorDesc"],
        nbsp(
            "le corps de la requête n'est pas du JSON valide, ligne 3, colonne 10 : un « : » est \
             attendu après le nom du champ"
        )
    );
    // A raw line break inside a string, and the issue's own case (EOF while parsing a value).
    for (body, fr) in [
        (
            "{\"rn\":\"L-\n9\"}",
            "un caractère de contrôle (retour à la ligne, tabulation…) écrit tel quel dans une \
             chaîne, au lieu d'être échappé",
        ),
        (
            "{\"rn\":\"L-9\",\"mode\":",
            "le corps s'arrête là où une valeur est attendue (corps vide ou coupé)",
        ),
    ] {
        let response = post_bytes_in(&api, body.as_bytes(), None).await;
        let desc = assert_error(&response, 400, 1)["errorDesc"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(desc.ends_with(fr), "{desc}");
        for english in ["EOF", "while parsing", "at line", "control character ("] {
            assert!(!desc.contains(english), "{desc}");
        }
    }

    // The box's refusal: its own words, quoted and said to be its own, in either language.
    let mut unknown_original = invoice("L-10");
    unknown_original["type"] = json!("FA");
    unknown_original["reference"] = json!("ABCDEFGHIJKLMNOPQRSTUVWX");
    let body = serde_json::to_vec(&unknown_original).unwrap();
    for (lang, said) in [
        (
            None,
            "le boîtier e-MCF a refusé la facture, avec ces mots à lui, cités tels quels : « ",
        ),
        (
            Some("en"),
            "the e-MCF device refused the invoice, in its own words, quoted as they came: \"",
        ),
    ] {
        let response = post_bytes_in(&api, &body, lang).await;
        let desc = assert_error(&response, 422, 140)["errorDesc"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            desc.starts_with(&nbsp(said)) && desc.contains("original invoice not found"),
            "{lang:?}: {desc}"
        );
    }
    assert_eq!(api.quota_used(), 0);
}
