use serde_json::Value;

use super::*;
use crate::edef::{DateFormat, EdefFaults};

const FV: &str = r#"{"nif":"A1234567B","rn":"F-1","mode":"ht","type":"FV",
    "items":[{"type":"BIE","name":"x","price":"600.00","quantity":2,"taxGroup":"B"}],
    "payment":[{"name":"ESPECES","amount":1392}]}"#;

fn new_api(options: EdefOptions) -> Api {
    let state = Arc::new(Mutex::new(EmcfState::default()));
    Api {
        faults: FaultHandle::new(options.faults.clone(), Arc::clone(&state)),
        options,
        state,
    }
}

fn call(api: &Api, method: Method, path: &str, body: &str) -> Answer {
    api.handle(Call {
        method: &method,
        path,
        authorization: Some("Bearer sim-token"),
        body: body.as_bytes(),
    })
}

fn json(answer: &Answer) -> Value {
    serde_json::from_str(&answer.body).unwrap()
}

fn request_uid(api: &Api) -> String {
    let answer = call(api, Method::POST, "/api/invoice", FV);
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    json(&answer)["uid"].as_str().unwrap().to_owned()
}

#[test]
fn routes_accept_any_case_and_both_verbs_for_actions() {
    let cases = [
        (Method::GET, "/api/invoice", Route::Status),
        (Method::POST, "/API/Invoice/", Route::Request),
        (
            Method::PUT,
            "/api/invoice/AbC/confirm",
            Route::Confirm("AbC".into()),
        ),
        (
            Method::POST,
            "/api/invoice/u/CONFIRM",
            Route::Confirm("u".into()),
        ),
        (
            Method::PUT,
            "/api/invoice/u/Cancel",
            Route::Cancel("u".into()),
        ),
        (Method::GET, "/api/info/taxGroups", Route::TaxGroups),
        (Method::GET, "/api/info/currencyrates", Route::CurrencyRates),
        (
            Method::GET,
            "/api/info/clientTypes",
            Route::List(ListKind::Client),
        ),
    ];
    for (method, path, expected) in cases {
        assert_eq!(route(&method, path).unwrap(), expected, "{path}");
    }
    let status = |method: Method, path: &str| route(&method, path).unwrap_err().status;
    assert_eq!(status(Method::GET, "/api/nothing"), StatusCode::NOT_FOUND);
    assert_eq!(
        status(Method::GET, "/api/info/fooTypes"),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        status(Method::DELETE, "/api/invoice"),
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(
        status(Method::GET, "/api/invoice/u/confirm"),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[test]
fn the_token_is_checked_bearer_or_bare() {
    let api = new_api(EdefOptions::default());
    let with = |authorization: Option<&str>| {
        api.handle(Call {
            method: &Method::GET,
            path: "/api/invoice",
            authorization,
            body: b"",
        })
        .status
    };
    assert_eq!(with(Some("Bearer sim-token")), StatusCode::OK);
    assert_eq!(with(Some("bearer  sim-token ")), StatusCode::OK);
    assert_eq!(with(Some("sim-token")), StatusCode::OK);
    assert_eq!(with(Some("Bearer other")), StatusCode::UNAUTHORIZED);
    assert_eq!(with(None), StatusCode::UNAUTHORIZED);
    let answer = call(&api, Method::GET, "/api/nothing", "");
    assert_eq!(json(&answer)["errorCode"], "404");

    api.faults.update(|f| f.token_expired = true);
    let answer = call(&api, Method::GET, "/api/invoice", "");
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(json(&answer)["errorCode"], "401");

    let expired = EdefOptions {
        token_valid_until: Utc::now() - chrono::TimeDelta::seconds(1),
        ..EdefOptions::default()
    };
    let answer = call(&new_api(expired), Method::GET, "/api/invoice", "");
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[test]
fn request_confirm_and_status() {
    let api = new_api(EdefOptions {
        date_format: DateFormat::Iso,
        ..EdefOptions::default()
    });
    let uid = request_uid(&api);
    let status = json(&call(&api, Method::GET, "/api/invoice", ""));
    assert_eq!(status["pendingRequestsCount"], 1);
    assert_eq!(status["pendingRequestsList"][0]["uid"], uid.as_str());
    assert_eq!(status["nim"], "CD01000001-1");
    assert_eq!(status["status"], true);

    let path = format!("/api/invoice/{uid}/confirm");
    let wrong = call(
        &api,
        Method::PUT,
        &path,
        r#"{"total":1392,"vtotal":"192.01"}"#,
    );
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    let desc = json(&wrong)["errorDesc"].as_str().unwrap().to_owned();
    assert!(desc.contains("192.01") && desc.contains("192.00"), "{desc}");
    assert_eq!(json(&wrong)["errorCode"], "99");

    let done = call(
        &api,
        Method::PUT,
        &path,
        r#"{"total":"1392.00","vtotal":192}"#,
    );
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    let done = json(&done);
    assert_eq!(done["counters"], "1/1 FV");
    let code = done["codeDEFDGI"].as_str().unwrap();
    assert_eq!(code.len(), 24);
    let date_time = done["dateTime"].as_str().unwrap();
    assert_eq!(date_time.len(), 19);
    assert_eq!(&date_time[10..11], "T");
    let compact: String = date_time.chars().filter(char::is_ascii_digit).collect();
    assert_eq!(
        done["qrCode"],
        format!("DGI-RDC;CD01000001-1;{code};A1234567B;{compact}")
    );
    assert!(done["errorCode"].is_null());

    let again = call(&api, Method::PUT, &path, r#"{"total":1392,"vtotal":192}"#);
    assert_eq!(json(&again)["errorCode"], "20");
    let status = json(&call(&api, Method::GET, "/api/invoice", ""));
    assert_eq!(status["pendingRequestsCount"], 0);
}

#[test]
fn limit_cancel_and_errors_on_200() {
    let api = new_api(EdefOptions {
        pending_limit: 2,
        ..EdefOptions::default()
    });
    let first = request_uid(&api);
    request_uid(&api);
    let refused = call(&api, Method::POST, "/api/invoice", FV);
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(json(&refused)["errorCode"], "1");

    let cancel = call(
        &api,
        Method::PUT,
        &format!("/api/invoice/{first}/cancel"),
        "",
    );
    assert_eq!(json(&cancel)["status"], "cancelled");
    request_uid(&api);
    let cancel = call(
        &api,
        Method::PUT,
        &format!("/api/invoice/{first}/cancel"),
        "",
    );
    assert_eq!(cancel.status, StatusCode::BAD_REQUEST);
    assert_eq!(json(&cancel)["errorCode"], "20");

    api.faults.update(|f| f.errors_on_200 = true);
    let refused = call(&api, Method::POST, "/api/invoice", FV);
    assert_eq!(refused.status, StatusCode::OK);
    assert_eq!(json(&refused)["errorCode"], "1");
}

#[test]
fn dropped_answers_still_do_the_work() {
    let api = new_api(EdefOptions {
        faults: EdefFaults {
            drop_next_request_answer: 1,
            drop_next_confirm_answer: 1,
            ..EdefFaults::default()
        },
        ..EdefOptions::default()
    });
    let dropped = call(&api, Method::POST, "/api/invoice", FV);
    assert!(dropped.drop_connection);
    let uid = lock(&api.state).pending()[0].uid.clone();
    let path = format!("/api/invoice/{uid}/confirm");
    let dropped = call(&api, Method::PUT, &path, r#"{"total":1392,"vtotal":192}"#);
    assert!(dropped.drop_connection);
    assert_eq!(lock(&api.state).finalized().len(), 1);
    // Refusals are never dropped, and the counters are spent.
    assert!(!call(&api, Method::PUT, &path, "{}").drop_connection);
    assert!(!call(&api, Method::POST, "/api/invoice", FV).drop_connection);
}

#[test]
fn an_expired_next_request_is_answered_then_refused_at_its_confirm() {
    let api = new_api(EdefOptions::default());
    api.faults.update(|f| f.expire_next_request = 1);
    let uid = request_uid(&api);
    assert!(lock(&api.state).pending().is_empty(), "forgotten at once");
    let path = format!("/api/invoice/{uid}/confirm");
    let refused = call(&api, Method::PUT, &path, r#"{"total":1392,"vtotal":192}"#);
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(json(&refused)["errorCode"], "20");
    assert!(lock(&api.state).finalized().is_empty());
    // The counter is spent: the next request stays pending and is confirmed.
    let uid = request_uid(&api);
    let path = format!("/api/invoice/{uid}/confirm");
    let confirmed = call(&api, Method::PUT, &path, r#"{"total":1392,"vtotal":192}"#);
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
    assert_eq!(lock(&api.state).finalized().len(), 1);
}

#[test]
fn odd_json_faults_change_numbers_and_keys() {
    let api = new_api(EdefOptions::default());
    api.faults.update(|f| {
        f.numbers_as_strings = true;
        f.upper_case_keys = true;
    });
    let groups = call(&api, Method::GET, "/api/info/taxGroups", "");
    assert_eq!(json(&groups)["B"], "16");
    let answer = call(&api, Method::POST, "/api/invoice", FV);
    assert_eq!(json(&answer)["total"], "1392.00");
    let info = json(&call(&api, Method::GET, "/api/info/status", ""));
    assert_eq!(info["emcfList"][0]["nim"], "CD01000001-1");
    let rates = json(&call(&api, Method::GET, "/api/info/currencyRates", ""));
    assert_eq!(rates[0]["type"], "USD");
    assert_eq!(rates[0]["rate"], "2850");
}

#[test]
fn the_benin_date_format_is_day_first() {
    let at = chrono::NaiveDate::from_ymd_opt(2025, 11, 22)
        .and_then(|d| d.and_hms_opt(17, 29, 24))
        .unwrap();
    assert_eq!(DateFormat::Benin.format(at), "22/11/2025 17:29:24");
    assert_eq!(DateFormat::Iso.format(at), "2025-11-22T17:29:24");
}
