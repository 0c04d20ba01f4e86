//! Issue 14, point 5, against the real binary: failed sign-ins slow the next ones from that
//! address (429 + Retry-After, logged and counted) without touching other addresses; the
//! sign-in form's value is good only from the address that loaded the form, once. Issue 24:
//! sessions survive a restart (the same cookie, the same CSRF token) unless their token was
//! revoked meanwhile, and the file keeps no secret; `X-Forwarded-Host` and
//! `X-Forwarded-Proto` count only from a configured proxy. Other addresses are 127.0.0.2..
//! (loopback answers them all).

use crate::common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use common::{
    cli, csrf_field, dashboard_get, dashboard_post, dashboard_sign_in, form_body, get, http,
    issue_dashboard_token, serve_expecting_exit, set_cookie, ApiSetup, Gateway, Response,
};

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// One request from `local` (`Connection: close`).
async fn request_from(
    local: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let bytes = http::request_bytes(addr, method, path, headers, Some(body.as_bytes()));
    http::exchange_from(Some(local), addr, &bytes, Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{method} {path} from {local}: {e}"))
}

/// The sign-in form as `local` loads it: its cookie and its form value.
async fn load_form(local: IpAddr, addr: SocketAddr) -> (String, String) {
    load_form_via(local, addr, &[]).await
}

/// [`load_form`] with more headers (a proxy's `X-Forwarded-For`).
async fn load_form_via(
    local: IpAddr,
    addr: SocketAddr,
    headers: &[(&str, &str)],
) -> (String, String) {
    let page = request_from(local, addr, "GET", "/dashboard/login", headers, "").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let (cookie, _) = set_cookie(&page, "emcf_signin").expect("sign-in cookie");
    let field = csrf_field(&page.body).expect("form value");
    (cookie.to_string(), field)
}

/// Posts the sign-in form from `local` with the form's `cookie` and `field` and `token`.
async fn post_form(
    local: IpAddr,
    addr: SocketAddr,
    form: &(String, String),
    token: &str,
) -> Response {
    post_form_via(local, addr, form, token, &[]).await
}

/// [`post_form`] with more headers (a proxy's `X-Forwarded-For`).
async fn post_form_via(
    local: IpAddr,
    addr: SocketAddr,
    form: &(String, String),
    token: &str,
    more: &[(&str, &str)],
) -> Response {
    let cookie = format!("emcf_signin={}", form.0);
    let origin = format!("http://{addr}");
    let body = form_body(&[("csrf", &form.1), ("token", token)]);
    let mut headers = vec![
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
        ("Cookie", cookie.as_str()),
    ];
    headers.extend_from_slice(more);
    request_from(local, addr, "POST", "/dashboard/login", &headers, &body).await
}

/// A client behind the proxy at `proxy`: the form loaded and posted through it, the proxy
/// adding `X-Forwarded-For: client`.
async fn sign_in_via(proxy: IpAddr, addr: SocketAddr, client: &str, token: &str) -> Response {
    let via = [("X-Forwarded-For", client)];
    let form = load_form_via(proxy, addr, &via).await;
    post_form_via(proxy, addr, &form, token, &via).await
}

/// Loads the form and signs in with `token`, all from `local`.
async fn sign_in_from(local: IpAddr, addr: SocketAddr, token: &str) -> Response {
    let form = load_form(local, addr).await;
    post_form(local, addr, &form, token).await
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_sign_ins_slow_the_next_ones_from_that_address_only() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let wrong = format!("{}{}", &token[..22], "A".repeat(token.len() - 22));
    let attacker = ip(7);
    for attempt in 1..=5 {
        let answer = sign_in_from(attacker, addr, &wrong).await;
        assert_eq!(answer.status, 401, "attempt {attempt}: {}", answer.body);
    }
    // Before: 300 wrong tokens in 0.19 s were all answered.
    let slowed = sign_in_from(attacker, addr, &wrong).await;
    assert_eq!(slowed.status, 429, "{}", slowed.body);
    assert!(
        slowed.header("retry-after").is_some(),
        "{:?}",
        slowed.headers
    );
    assert!(
        slowed
            .body
            .contains("Trop de connexions avec un mauvais jeton"),
        "{}",
        slowed.body
    );
    let right_too_soon = sign_in_from(attacker, addr, &token).await;
    assert_eq!(right_too_soon.status, 429, "not even checked while slowed");

    let admin = sign_in_from(ip(8), addr, &token).await;
    assert_eq!(
        admin.status, 303,
        "another address signs in: {}",
        admin.body
    );

    tokio::time::sleep(Duration::from_millis(1100)).await;
    let after_wait = sign_in_from(attacker, addr, &token).await;
    assert_eq!(
        after_wait.status, 303,
        "after the wait: {}",
        after_wait.body
    );
    let fresh = sign_in_from(attacker, addr, &wrong).await;
    assert_eq!(fresh.status, 401, "a success starts the count afresh");

    let metrics = get(addr, "/metrics", None).await.body;
    assert!(
        metrics.contains("emcf_dashboard_sign_ins_total{outcome=\"throttled\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("emcf_dashboard_sign_ins_total{outcome=\"bad_token\"} 6"),
        "{metrics}"
    );
    let log = setup.gateway.log();
    assert!(log.contains("dashboard sign-in throttled"), "{log}");
    assert!(!log.contains(&token), "a token in the log");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_form_value_is_good_only_from_its_address_and_once() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");
    // An attacker loads the form, then makes a victim's browser post it with the attacker's
    // cookie and value (a client that can set cookies): refused.
    let planted = load_form(ip(20), addr).await;
    let victim = post_form(ip(21), addr, &planted, &token).await;
    assert_eq!(victim.status, 403, "{}", victim.body);
    // A value the server never issued, paired with a matching cookie: refused.
    let made_up = ("f".repeat(64), "f".repeat(64));
    assert_eq!(post_form(ip(21), addr, &made_up, &token).await.status, 403);
    // The genuine flow works once; the same value again is refused.
    let form = load_form(ip(21), addr).await;
    assert_eq!(post_form(ip(21), addr, &form, &token).await.status, 303);
    assert_eq!(
        post_form(ip(21), addr, &form, &token).await.status,
        403,
        "used once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_survive_a_restart_but_not_a_revoked_token() {
    let mut setup = ApiSetup::start(None).await;
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let other = issue_dashboard_token(&setup.gateway, "acme");
    let (session, csrf) = dashboard_sign_in(setup.addr(), &token).await;
    let (revoked, _) = dashboard_sign_in(setup.addr(), &other).await;
    // What the file keeps (on PostgreSQL, the database: issue 29): no cookie id, no CSRF
    // token; the file for its owner only.
    let file = setup.dir.path().join("state/dashboard-sessions.json");
    let on_postgres = common::store::on_postgres();
    let text = match common::store::dump(setup.dir.path()) {
        Some(dump) => String::from_utf8_lossy(&dump).into_owned(),
        None => std::fs::read_to_string(&file).expect("sessions file"),
    };
    for secret in [&session, &csrf, &revoked] {
        assert!(
            !text.contains(secret.as_str()),
            "a secret in the file: {text}"
        );
    }
    assert!(text.contains(&token[9..21]), "{text}");
    if !on_postgres {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("mode").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // A restart; meanwhile the second token is revoked (the CLI on the stopped register).
    assert!(setup.gateway.terminate(), "clean exit");
    let config = setup.gateway.config.clone();
    let out = tokio::task::block_in_place(|| {
        cli(
            setup.dir.path(),
            &config,
            &["dashboard-token", "revoke", &other[9..21]],
        )
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&config).expect("config");
    setup.gateway = Gateway::start(setup.dir.path(), &text);
    setup.gateway.wait_ready().await;
    let addr = setup.addr();

    // The same cookie is still signed in, with the same CSRF token: a page opened before the
    // restart posts its form.
    let page = dashboard_get(addr, Some(&session), "/dashboard/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(csrf_field(&page.body).as_deref(), Some(csrf.as_str()));
    let gone = dashboard_get(addr, Some(&revoked), "/dashboard/").await;
    assert_eq!(
        gone.status, 303,
        "a revoked token's session does not survive"
    );
    assert_eq!(gone.header("location"), Some("/dashboard/login?expired=1"));
    if on_postgres {
        assert!(!file.exists(), "no sessions file beside a database");
    } else {
        let text = std::fs::read_to_string(&file).expect("sessions file");
        assert!(!text.contains(&other[9..21]), "dropped at start: {text}");
        let log = setup.gateway.log();
        assert!(log.contains("restored=1 dropped=1"), "{log}");
    }

    // Signed out: gone for good, also after another restart.
    let cookie = format!("emcf_session={session}");
    let out = dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/logout",
        &[("csrf", &csrf)],
        &[],
    )
    .await;
    assert_eq!(out.status, 303, "{}", out.body);
    setup.restart_gateway().await;
    let after = dashboard_get(setup.addr(), Some(&session), "/dashboard/").await;
    assert_eq!(after.status, 303, "{}", after.body);
    let login = dashboard_get(setup.addr(), None, "/dashboard/login").await;
    assert!(!login.body.contains("sessions-not-kept"), "{}", login.body);
}

/// Issue 24: behind `[http] trusted_proxies`, every connection comes from the proxy. The
/// sign-in's protections count by the client address the proxy appended to
/// `X-Forwarded-For` (its right-most entry): one client's wrong tokens do not slow everyone's
/// sign-in, and 32 form loads by one client do not void everyone's open form. From any other
/// peer the header is ignored, so that no client escapes its count by claiming addresses.
#[tokio::test(flavor = "multi_thread")]
async fn behind_a_proxy_sign_in_protections_count_each_client() {
    let mut setup = ApiSetup::start(None).await;
    let config = std::fs::read_to_string(&setup.gateway.config).expect("config");
    std::fs::write(
        &setup.gateway.config,
        format!("{config}\n[http]\ntrusted_proxies = [\"127.0.0.1\"]\n"),
    )
    .expect("config written");
    setup.restart_gateway().await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let wrong = format!("{}{}", &token[..22], "A".repeat(token.len() - 22));
    let proxy = ip(1);

    // A client that opened the form before another loads it 40 times through the proxy.
    let victim_via = [("X-Forwarded-For", "203.0.113.8")];
    let victim_form = load_form_via(proxy, addr, &victim_via).await;
    for _ in 0..40 {
        load_form_via(proxy, addr, &[("X-Forwarded-For", "203.0.113.7")]).await;
    }
    // A form value is the client's: posted for another client through the proxy, refused.
    let attacker_form = load_form_via(proxy, addr, &[("X-Forwarded-For", "203.0.113.7")]).await;
    let crossed = post_form_via(proxy, addr, &attacker_form, &token, &victim_via).await;
    assert_eq!(crossed.status, 403, "{}", crossed.body);

    // One client's wrong tokens slow that client only.
    for attempt in 1..=5 {
        let answer = sign_in_via(proxy, addr, "203.0.113.7", &wrong).await;
        assert_eq!(answer.status, 401, "attempt {attempt}: {}", answer.body);
    }
    let slowed = sign_in_via(proxy, addr, "203.0.113.7", &wrong).await;
    assert_eq!(slowed.status, 429, "{}", slowed.body);
    // The right-most entry is the proxy's: what the client put before it changes nothing.
    let claimed = sign_in_via(proxy, addr, "203.0.113.8, 203.0.113.7", &token).await;
    assert_eq!(claimed.status, 429, "{}", claimed.body);

    let victim = post_form_via(proxy, addr, &victim_form, &token, &victim_via).await;
    assert_eq!(
        victim.status, 303,
        "the other client's open form still signs in: {}",
        victim.body
    );
    assert!(set_cookie(&victim, "emcf_session").is_some());

    // Not from a proxy: X-Forwarded-For is ignored, the connection's address counts.
    for (n, claim) in [
        "198.51.100.1",
        "198.51.100.2",
        "198.51.100.3",
        "198.51.100.4",
        "198.51.100.5",
    ]
    .into_iter()
    .enumerate()
    {
        let answer = sign_in_via(ip(9), addr, claim, &wrong).await;
        assert_eq!(answer.status, 401, "attempt {}: {}", n + 1, answer.body);
    }
    let direct = sign_in_via(ip(9), addr, "198.51.100.6", &wrong).await;
    assert_eq!(direct.status, 429, "{}", direct.body);
    let log = setup.gateway.log();
    assert!(log.contains("client=203.0.113.7"), "{log}");
    assert!(!log.contains("client=198.51.100"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn forwarded_host_and_proto_count_only_from_a_configured_proxy() {
    let mut setup = ApiSetup::start(None).await;
    let config = std::fs::read_to_string(&setup.gateway.config).expect("config");
    std::fs::write(
        &setup.gateway.config,
        format!("{config}\n[http]\ntrusted_proxies = [\"127.0.0.1\", \"10.0.0.0/8\"]\n"),
    )
    .expect("config written");
    setup.restart_gateway().await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");
    // A browser that reached the gateway as https://shop.example through a TLS proxy.
    let token = token.as_str();
    let forwarded_as = |local: IpAddr, host: &'static str, proto: &'static str| async move {
        let form = load_form(local, addr).await;
        let cookie = format!("emcf_signin={}", form.0);
        let body = form_body(&[("csrf", &form.1), ("token", token)]);
        let headers = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", "https://shop.example"),
            ("X-Forwarded-Host", host),
            ("X-Forwarded-Proto", proto),
            ("Cookie", cookie.as_str()),
        ];
        request_from(local, addr, "POST", "/dashboard/login", &headers, &body).await
    };
    let forwarded = |local: IpAddr| forwarded_as(local, "shop.example", "https");
    // From any other peer the same headers are ignored: another origin, refused.
    let forged = forwarded(ip(2)).await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert!(set_cookie(&forged, "emcf_session").is_none());
    // From the configured proxy: believed, and the cookie is Secure.
    let proxied = forwarded(ip(1)).await;
    assert_eq!(proxied.status, 303, "{}", proxied.body);
    let (_, header) = set_cookie(&proxied, "emcf_session").expect("session cookie");
    assert!(header.contains("; Secure"), "{header}");
    // A proxy that appends to what the client sent (Apache's form): its own element, the
    // last one, is believed, not the client's before it.
    let appended = forwarded_as(ip(1), "evil.example, shop.example", "http, https").await;
    assert_eq!(appended.status, 303, "{}", appended.body);
    let (_, header) = set_cookie(&appended, "emcf_session").expect("session cookie");
    assert!(header.contains("; Secure"), "{header}");
    let claimed = forwarded_as(ip(1), "shop.example, gateway.lan", "https, http").await;
    assert_eq!(claimed.status, 403, "{}", claimed.body);
    assert!(set_cookie(&claimed, "emcf_session").is_none());
    assert!(
        !setup.gateway.log().contains("trusted_proxies"),
        "no warning for loopback and a private range"
    );
    // A claim of TLS from another peer does not make the cookie Secure.
    let form = load_form(ip(3), addr).await;
    let cookie = format!("emcf_signin={}", form.0);
    let origin = format!("http://{addr}");
    let body = form_body(&[("csrf", &form.1), ("token", token)]);
    let headers = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
        ("X-Forwarded-Proto", "https"),
        ("Cookie", cookie.as_str()),
    ];
    let plain = request_from(ip(3), addr, "POST", "/dashboard/login", &headers, &body).await;
    assert_eq!(plain.status, 303, "{}", plain.body);
    let (session, header) = set_cookie(&plain, "emcf_session").expect("session cookie");
    assert!(!header.contains("Secure"), "{header}");
    // A signed-in form with a forged host from another peer: refused, nothing done.
    let session = session.to_string();
    let page = dashboard_get(addr, Some(&session), "/dashboard/keys").await;
    let csrf = csrf_field(&page.body).expect("csrf");
    let cookie = format!("emcf_session={session}");
    let body = form_body(&[("csrf", &csrf), ("environment", "sandbox"), ("label", "x")]);
    let forged_host = |host: &'static str| {
        [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", "https://evil.example"),
            ("X-Forwarded-Host", host),
            ("Cookie", cookie.as_str()),
        ]
    };
    let issue = request_from(
        ip(3),
        addr,
        "POST",
        "/dashboard/keys",
        &forged_host("evil.example"),
        &body,
    )
    .await;
    assert_eq!(issue.status, 403, "{}", issue.body);
    assert!(!issue.body.contains("mcf_test_"), "{}", issue.body);

    // A range past a local network is accepted, and said at start.
    std::fs::write(
        &setup.gateway.config,
        format!("{config}\n[http]\ntrusted_proxies = [\"127.0.0.1\", \"0.0.0.0/0\", \"198.51.100.0/24\"]\n"),
    )
    .expect("config written");
    setup.restart_gateway().await;
    let log = setup.gateway.log();
    assert!(
        log.contains("http.trusted_proxies trusts EVERY address") && log.contains("0.0.0.0/0"),
        "{log}"
    );
    assert!(
        log.contains("http.trusted_proxies includes internet addresses")
            && log.contains("198.51.100.0/24"),
        "{log}"
    );

    // A wrong entry is refused at start, naming the key.
    assert!(setup.gateway.terminate(), "clean exit");
    std::fs::write(
        &setup.gateway.config,
        format!("{config}\n[http]\ntrusted_proxies = [\"192.168.1.10/24\"]\n"),
    )
    .expect("config written");
    let (status, said) = tokio::task::block_in_place(|| {
        serve_expecting_exit(
            setup.dir.path(),
            &setup.gateway.config,
            Duration::from_secs(20),
        )
    });
    assert!(!status.success(), "{said}");
    assert!(said.contains("http.trusted_proxies"), "{said}");
    assert!(said.contains("192.168.1.0/24"), "{said}");
}
