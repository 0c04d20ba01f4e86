//! What an ERP integrator and an organization admin check about API keys and the annual
//! quota: every kind of bad key is a 401 with a JSON error; disabling a key with the CLI while
//! the gateway runs takes effect on the next request, enabling it restores it; only successful
//! certifications use quota, the quota stops certification with 429, a replay still answers,
//! and a restart of the gateway keeps both the register and the quota.
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

use common::{
    assert_error, counters_of, get, invoice, post_invoice, request, ApiSetup, Response, SIM_NIF,
};
use serde_json::{json, Value};

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The documented checksum of a key (keys.rs): CRC-32 (IEEE) of everything before it, as 6
/// base62 digits, most significant first. Computed here independently of the product.
fn checksum(signed: &str) -> String {
    let mut value = u64::from(crc32fast::hash(signed.as_bytes()));
    let mut digits = [b'0'; 6];
    for digit in digits.iter_mut().rev() {
        *digit = BASE62[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8(digits.to_vec()).unwrap()
}

/// A well-formed key (right shape and checksum) from its parts.
fn key_from(prefix: &str, id: &str, secret: &str) -> String {
    let signed = format!("{prefix}{id}_{secret}");
    let sum = checksum(&signed);
    format!("{signed}{sum}")
}

/// (id, secret) of a key `mcf_xxxx_<id:12>_<secret:24><checksum:6>`.
fn parts(key: &str) -> (&str, &str) {
    assert_eq!(key.len(), 52, "{key}");
    (&key[9..21], &key[22..46])
}

/// POST of `body` with a raw `Authorization` header value (or none).
async fn post_with_auth(api: &ApiSetup, authorization: Option<&str>, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap();
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(value) = authorization {
        headers.push(("Authorization", value));
    }
    request(
        api.addr(),
        "POST",
        "/api/v1/Invoice",
        &headers,
        Some(&bytes),
    )
    .await
}

/// Asserts a 401 with `code`, the `WWW-Authenticate: Bearer` challenge, and no echo of
/// `secret` in the body.
#[track_caller]
fn assert_unauthorized(response: &Response, code: u64, label: &str, secret: &str) {
    assert_eq!(response.status, 401, "{label}: {}", response.body);
    assert_error(response, 401, code);
    assert_eq!(
        response.header("www-authenticate"),
        Some("Bearer"),
        "{label}"
    );
    assert!(
        !response.body.contains(secret),
        "{label}: the error echoes the secret: {}",
        response.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_keys_are_401_and_certify_nothing() {
    let api = ApiSetup::start(None).await;
    let key = api.key.clone();
    assert!(key.starts_with("mcf_live_"), "{key}");
    let (id, secret) = parts(&key);
    let other_secret: String = secret.chars().rev().collect();
    assert_ne!(other_secret, secret);
    let mut typo = key.clone().into_bytes();
    typo[30] = if typo[30] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap();
    let wrong_checksum = format!(
        "{}{}",
        &key[..51],
        if key.ends_with('0') { '1' } else { '0' }
    );

    let cases: Vec<(&str, Option<String>, u64)> = vec![
        ("no Authorization header", None, 100),
        ("Bearer without a token", Some("Bearer ".into()), 100),
        ("Basic scheme", Some(format!("Basic {key}")), 100),
        ("the key without a scheme", Some(key.clone()), 100),
        ("malformed key", Some("Bearer mcf_live_abc".into()), 101),
        (
            "key of another format",
            Some("Bearer sk_live_51HqLyjWDarjtT1zdp7dc".into()),
            101,
        ),
        (
            "a JWT",
            Some("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl".into()),
            101,
        ),
        (
            "mistyped key (checksum catches it)",
            Some(format!("Bearer {typo}")),
            101,
        ),
        (
            "wrong checksum",
            Some(format!("Bearer {wrong_checksum}")),
            101,
        ),
        (
            "right id, wrong secret, valid checksum",
            Some(format!(
                "Bearer {}",
                key_from("mcf_live_", id, &other_secret)
            )),
            101,
        ),
        (
            "unknown id, valid checksum",
            Some(format!(
                "Bearer {}",
                key_from("mcf_live_", "ZZZZZZZZZZZZ", secret)
            )),
            101,
        ),
        (
            "the live key's id and secret as a sandbox key",
            Some(format!("Bearer {}", key_from("mcf_test_", id, secret))),
            101,
        ),
        (
            "key with a trailing garbage",
            Some(format!("Bearer {key}x")),
            101,
        ),
    ];
    for (label, authorization, code) in &cases {
        let response = post_with_auth(&api, authorization.as_deref(), &invoice("K-1")).await;
        assert_unauthorized(&response, *code, label, secret);
        let lookup = match authorization {
            Some(value) => {
                request(
                    api.addr(),
                    "GET",
                    "/api/v1/Invoice/K-1",
                    &[("Authorization", value.as_str())],
                    None,
                )
                .await
            }
            None => get(api.addr(), "/api/v1/Invoice/K-1", None).await,
        };
        assert_unauthorized(&lookup, *code, label, secret);
    }
    // The scheme is case-insensitive: the real key works.
    let response = post_with_auth(&api, Some(&format!("bearer {key}")), &invoice("K-1")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        counters_of(&response),
        (1, 1, "FV".into()),
        "nothing certified before"
    );
    assert_eq!(api.quota_used(), 1);
}

/// The key list of `acme` as (id, environment, enabled) rows.
fn key_rows(api: &ApiSetup) -> Vec<(String, String, String)> {
    let listed: Value =
        serde_json::from_str(&api.cli_ok(&["key", "list", "--org", "acme", "--json"]))
            .expect("key list --json prints JSON");
    listed
        .as_array()
        .into_iter()
        .flatten()
        .map(|key| {
            let text = |name: &str| key[name].as_str().unwrap_or_default().to_string();
            let enabled = if key["enabled"] == true { "yes" } else { "no" };
            (text("id"), text("environment"), enabled.to_string())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn disabling_a_key_takes_effect_on_the_next_request() {
    let api = ApiSetup::start(None).await;
    let other = api.issue_key(false);
    let (id, _) = parts(&api.key);
    let rows = key_rows(&api);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let row = rows
        .iter()
        .find(|(listed, _, _)| listed == id)
        .unwrap_or_else(|| panic!("key {id} not in {rows:?}"));
    assert_eq!(row.2, "yes", "{rows:?}");
    let listing = api.cli_ok(&["key", "list", "--org", "acme"]);
    assert!(
        !listing.contains(parts(&api.key).1),
        "key list shows a secret: {listing}"
    );

    let response = post_invoice(api.addr(), &api.key, &invoice("D-1")).await;
    assert_eq!(response.status, 200, "{}", response.body);

    api.cli_ok(&["key", "disable", id]);
    let rows = key_rows(&api);
    assert_eq!(
        rows.iter()
            .find(|(listed, _, _)| listed == id)
            .map(|r| r.2.as_str()),
        Some("no"),
        "{rows:?}"
    );
    let refused = post_invoice(api.addr(), &api.key, &invoice("D-2")).await;
    assert_unauthorized(&refused, 102, "disabled key", parts(&api.key).1);
    let lookup = get(api.addr(), "/api/v1/Invoice/D-1", Some(&api.key)).await;
    assert_unauthorized(&lookup, 102, "disabled key, GET", parts(&api.key).1);
    // A replay of what it certified is refused too: the key is off.
    let replay = post_invoice(api.addr(), &api.key, &invoice("D-1")).await;
    assert_unauthorized(&replay, 102, "disabled key, replay", parts(&api.key).1);
    // The organization's other key still works.
    let response = post_invoice(api.addr(), &other, &invoice("D-3")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(counters_of(&response), (2, 2, "FV".into()));

    api.cli_ok(&["key", "enable", id]);
    let response = post_invoice(api.addr(), &api.key, &invoice("D-2")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(counters_of(&response), (3, 3, "FV".into()));
    let lookup = get(api.addr(), "/api/v1/Invoice/D-1", Some(&api.key)).await;
    assert_eq!(lookup.status, 200, "{}", lookup.body);
    assert_eq!(api.quota_used(), 3);

    // Used just before (the gateway remembers a key that matched), then disabled: 401 even
    // for a request the gateway would refuse for another reason before certifying it.
    let bearer = format!("Bearer {}", api.key);
    let mut bad = invoice("D-4");
    bad["items"][0]["taxGroup"] = json!("Z");
    let response = post_with_auth(&api, Some(&bearer), &bad).await;
    assert_error(&response, 400, 43);
    api.cli_ok(&["key", "disable", id]);
    let refused = post_with_auth(&api, Some(&bearer), &bad).await;
    assert_unauthorized(
        &refused,
        102,
        "disabled key, invalid invoice",
        parts(&api.key).1,
    );
    api.cli_ok(&["key", "enable", id]);
    let response = post_invoice(api.addr(), &api.key, &invoice("D-4")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    api.cli_ok(&["key", "disable", id]);
    let text = request(
        api.addr(),
        "POST",
        "/api/v1/Invoice",
        &[("Content-Type", "text/plain"), ("Authorization", &bearer)],
        Some(b"D-5"),
    )
    .await;
    assert_unauthorized(&text, 102, "disabled key, not JSON", parts(&api.key).1);
    assert_eq!(api.quota_used(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_organization_moved_to_another_box_certifies_its_next_invoice_there() {
    let mut api = ApiSetup::start(None).await;
    let _second = common::second_box(&mut api.gateway).await;
    let response = post_invoice(api.addr(), &api.key, &invoice("MV-1")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.json["nim"], "SIM0000001", "{}", response.body);
    // Moved while the service runs, its key used just before: the next invoice goes to the
    // box the organization names now, and is counted there.
    api.cli_ok(&["org", "update", "acme", "--device", "shop2"]);
    let response = post_invoice(api.addr(), &api.key, &invoice("MV-2")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.json["nim"], "SIM0000002",
        "certified on the box the organization names now: {}",
        response.body
    );
    assert_eq!(counters_of(&response), (1, 1, "FV".into()));
    // And back: the register answers for both, whichever box certified them.
    api.cli_ok(&["org", "update", "acme", "--device", "shop"]);
    let response = post_invoice(api.addr(), &api.key, &invoice("MV-3")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.json["nim"], "SIM0000001", "{}", response.body);
    let replay = post_invoice(api.addr(), &api.key, &invoice("MV-2")).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.json["nim"], "SIM0000002", "{}", replay.body);
    assert_eq!(api.quota_used(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn only_successes_use_the_quota_which_survives_a_restart() {
    let mut api = ApiSetup::start(Some(3)).await;
    let quota = common::quota_of(&api.gateway, "acme");
    assert_eq!(quota["quota"], 3, "{quota}");
    assert_eq!(quota["used"], 0, "{quota}");

    // Failures use no quota: a validation error, a device refusal, payments short.
    let mut bad = invoice("Q-BAD");
    bad["items"][0]["taxGroup"] = json!("Z");
    let response = post_invoice(api.addr(), &api.key, &bad).await;
    assert_error(&response, 400, 43);
    let mut unknown_original = invoice("Q-FA");
    unknown_original["type"] = json!("FA");
    unknown_original["reference"] = json!("ABCDEFGHIJKLMNOPQRSTUVWX");
    let response = post_invoice(api.addr(), &api.key, &unknown_original).await;
    let error = assert_error(&response, 422, 140);
    assert!(
        error["errorDesc"]
            .as_str()
            .unwrap()
            .contains("original invoice not found"),
        "the device's text is given: {}",
        response.body
    );
    let mut short = invoice("Q-SHORT");
    short["payments"][0]["amount"] = json!("1100.00");
    let response = post_invoice(api.addr(), &api.key, &short).await;
    assert_error(&response, 400, 141);
    assert_eq!(api.quota_used(), 0, "failures use no quota");

    // Exactly three successes.
    let mut codes = Vec::new();
    for n in 1..=3u64 {
        let rn = format!("Q-{n}");
        let response = post_invoice(api.addr(), &api.key, &invoice(&rn)).await;
        assert_eq!(response.status, 200, "{rn}: {}", response.body);
        assert_eq!(counters_of(&response), (n, n, "FV".into()));
        codes.push(response.json["codeDEFDGI"].as_str().unwrap().to_string());
        assert_eq!(api.quota_used(), n);
    }
    let quota = common::quota_of(&api.gateway, "acme");
    assert_eq!(quota["remaining"], 0, "{quota}");

    // The fourth is refused, twice, and reaches no device.
    for _ in 0..2 {
        let response = post_invoice(api.addr(), &api.key, &invoice("Q-4")).await;
        let error = assert_error(&response, 429, 130);
        let desc = error["errorDesc"].as_str().unwrap();
        assert!(desc.contains("quota"), "{desc}");
    }
    // A replay of a certified rn still answers, without quota.
    let replay = post_invoice(api.addr(), &api.key, &invoice("Q-2")).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["codeDEFDGI"], codes[1].as_str());
    // Other content under a certified rn is still a conflict, a bad body still a 400.
    let mut changed = invoice("Q-2");
    changed["items"][0]["name"] = json!("STYLO BLEU");
    let response = post_invoice(api.addr(), &api.key, &changed).await;
    assert_error(&response, 409, 110);
    let response = post_invoice(api.addr(), &api.key, &bad).await;
    assert_error(&response, 400, 43);
    // Sandbox keys are outside the quota.
    let sandbox = api.issue_key(true);
    let response = post_invoice(api.addr(), &sandbox, &invoice("Q-SBX")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.json["environment"], "sandbox");
    assert_eq!(api.quota_used(), 3);

    // A restart keeps the register and the quota.
    api.restart_gateway().await;
    for (n, code) in codes.iter().enumerate() {
        let rn = format!("Q-{}", n + 1);
        let fetched = get(api.addr(), &format!("/api/v1/Invoice/{rn}"), Some(&api.key)).await;
        assert_eq!(fetched.status, 200, "{rn} after restart: {}", fetched.body);
        assert_eq!(fetched.json["codeDEFDGI"], code.as_str());
        assert_eq!(
            fetched.json["qrCode"].as_str().map(|q| q.contains(SIM_NIF)),
            Some(true)
        );
    }
    assert_eq!(api.quota_used(), 3);
    let response = post_invoice(api.addr(), &api.key, &invoice("Q-4")).await;
    assert_error(&response, 429, 130);
    let replay = post_invoice(api.addr(), &api.key, &invoice("Q-3")).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["codeDEFDGI"], codes[2].as_str());

    // Raising the quota (org add updates the organization) lets the next one through, with
    // the next counters: none of the refused requests reached the device.
    api.cli_ok(&["org", "update", "acme", "--quota", "4"]);
    let response = post_invoice(api.addr(), &api.key, &invoice("Q-4")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(counters_of(&response), (4, 4, "FV".into()));
    assert_eq!(api.quota_used(), 4);
    let response = post_invoice(api.addr(), &api.key, &invoice("Q-5")).await;
    assert_error(&response, 429, 130);
}

#[tokio::test(flavor = "multi_thread")]
async fn simultaneous_requests_never_exceed_the_quota() {
    let api = ApiSetup::start(Some(3)).await;
    let bodies: Vec<Value> = (1..=6).map(|n| invoice(&format!("C-{n}"))).collect();
    let responses =
        futures::future::join_all(bodies.iter().map(|b| post_invoice(api.addr(), &api.key, b)))
            .await;
    let mut certified: Vec<(u64, u64, String)> = Vec::new();
    let mut refused = 0;
    for response in &responses {
        match response.status {
            200 => certified.push(counters_of(response)),
            _ => {
                assert_error(response, 429, 130);
                refused += 1;
            }
        }
    }
    certified.sort();
    assert_eq!(
        certified,
        vec![
            (1, 1, "FV".into()),
            (2, 2, "FV".into()),
            (3, 3, "FV".into())
        ],
        "exactly the quota is certified"
    );
    assert_eq!(refused, 3);
    assert_eq!(api.quota_used(), 3);
}
