//! Issue 29, point 5: a dashboard user may land on any replica. Two `serve` processes over one
//! PostgreSQL database (the same `[store] url`, each its own state directory, port and box),
//! as a load balancer would send one browser's requests: a session opened on A works on B with
//! the same CSRF token, a form loaded from A is accepted by B, a sign-in form loaded from A is
//! posted to B, a sign-out on B ends the session on A at once, failed sign-ins spread over A
//! and B are slowed as if made on one, and a restart of A keeps the session. What the
//! database keeps of a session is the hash of its id, never the cookie's id or its CSRF token.
//! While the database is away the dashboard answers 503, never a page on a guess.
//!
//! Starts its own server (`tests/support/pg.rs`); without PostgreSQL it is skipped outside CI.

use std::net::SocketAddr;

use crate::common::{
    add_org_with_key, cli_ok, config_with_device, csrf_field, dashboard_get, dashboard_post,
    dashboard_sign_in, issue_dashboard_token, request, set_cookie, Gateway, Response, Sim,
};
use crate::pg::{PgServer, SUPERUSER};

const DB: &str = "replicas";

/// One replica: its directory, its simulated box, the gateway.
struct Replica {
    _dir: tempfile::TempDir,
    _sim: Sim,
    gateway: Gateway,
}

impl Replica {
    /// A replica on the database `url`, with its own state directory, port and box.
    async fn start(url: &str) -> Replica {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = Sim::start(dir.path()).await;
        let config = format!(
            "{}\n[store]\nurl = {url:?}\n",
            config_with_device(dir.path(), &sim.link)
        );
        let gateway = Gateway::start(dir.path(), &config);
        Replica {
            _dir: dir,
            _sim: sim,
            gateway,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.gateway.addr
    }

    /// SIGTERM (a clean exit asserted), then the same replica again.
    async fn restart(&mut self) {
        assert!(self.gateway.terminate(), "clean exit");
        let config = std::fs::read_to_string(&self.gateway.config).expect("config");
        self.gateway = Gateway::start(&self.gateway.dir.clone(), &config);
        self.gateway.wait_ready().await;
    }
}

/// The sign-in form loaded from `from`: its cookie and its form value.
async fn load_sign_in(from: SocketAddr) -> (String, String) {
    let page = request(from, "GET", "/dashboard/login", &[], None).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let (cookie, _) = set_cookie(&page, "emcf_signin").expect("sign-in cookie");
    let field = csrf_field(&page.body).expect("form value");
    (cookie.to_string(), field)
}

/// Posts the sign-in form `form` to `to` with `token`.
async fn post_sign_in(to: SocketAddr, form: &(String, String), token: &str) -> Response {
    let cookie = format!("emcf_signin={}", form.0);
    dashboard_post(
        to,
        Some(&cookie),
        "/dashboard/login",
        &[("csrf", &form.1), ("token", token)],
        &[],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_user_may_land_on_any_replica() {
    let Some(server) = PgServer::init("dashboard sessions shared by replicas") else {
        return;
    };
    server.sql("postgres", &format!("CREATE DATABASE {DB}"));
    let url = server.socket_url(SUPERUSER, DB);
    let mut a = Replica::start(&url).await;
    let b = Replica::start(&url).await;
    let key = tokio::task::block_in_place(|| {
        add_org_with_key(&a.gateway.dir, &a.gateway.config, "acme", "shop", None)
    });
    a.gateway.wait_ready().await;
    b.gateway.wait_ready().await;
    let token = issue_dashboard_token(&a.gateway, "acme");

    // Signed in on A: B knows the session, with the same CSRF token.
    let (session, csrf) = dashboard_sign_in(a.addr(), &token).await;
    let on_b = dashboard_get(b.addr(), Some(&session), "/dashboard/").await;
    assert_eq!(on_b.status, 200, "{}", on_b.body);
    assert!(on_b.body.contains("Test shop"), "{}", on_b.body);
    assert_eq!(csrf_field(&on_b.body).as_deref(), Some(csrf.as_str()));

    // What the database keeps: the id's hash, never the id or the CSRF token.
    let kept = server.sql(
        DB,
        "SELECT encode(id_sha256, 'hex') || ' ' || org || ' ' || token_id \
         FROM dashboard_sessions",
    );
    assert_eq!(kept.lines().count(), 1, "{kept}");
    assert!(
        kept.contains("acme") && kept.contains(&token[9..21]),
        "{kept}"
    );
    let dump = String::from_utf8_lossy(&server.dump(DB)).into_owned();
    for secret in [&session, &csrf] {
        assert!(!dump.contains(secret.as_str()), "a secret in the database");
    }

    // A form loaded from A (the keys page) posted to B: the key is disabled, as A then shows.
    let cookie = format!("emcf_session={session}");
    let keys = dashboard_get(a.addr(), Some(&session), "/dashboard/keys").await;
    assert_eq!(keys.status, 200, "{}", keys.body);
    let form_csrf = csrf_field(&keys.body).expect("the keys page's form");
    let key_id = &key[9..21];
    let disabled = dashboard_post(
        b.addr(),
        Some(&cookie),
        "/dashboard/keys/disable",
        &[("csrf", &form_csrf), ("id", key_id)],
        &[],
    )
    .await;
    assert_eq!(disabled.status, 303, "{}", disabled.body);
    let listed: serde_json::Value = serde_json::from_str(&cli_ok(
        &a.gateway,
        &["key", "list", "--org", "acme", "--json"],
    ))
    .expect("key list --json");
    let record = listed
        .as_array()
        .and_then(|keys| keys.iter().find(|k| k["id"] == key_id))
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(record["enabled"], false, "{listed}");

    // A sign-in form loaded from A, posted to B.
    let form = load_sign_in(a.addr()).await;
    let second = post_sign_in(b.addr(), &form, &token).await;
    assert_eq!(second.status, 303, "{}", second.body);
    let (other, _) = set_cookie(&second, "emcf_session").expect("a session");
    let other = other.to_string();
    assert_eq!(
        post_sign_in(a.addr(), &form, &token).await.status,
        403,
        "a form value is used once, whichever replica saw it"
    );

    // Signed out on B: refused on A at once.
    let out = dashboard_post(
        b.addr(),
        Some(&cookie),
        "/dashboard/logout",
        &[("csrf", &csrf)],
        &[],
    )
    .await;
    assert_eq!(out.status, 303, "{}", out.body);
    let on_a = dashboard_get(a.addr(), Some(&session), "/dashboard/").await;
    assert_eq!(on_a.status, 303, "{}", on_a.body);
    assert_eq!(on_a.header("location"), Some("/dashboard/login?expired=1"));

    // Failed sign-ins spread over A and B count as on one: the sixth is slowed, on either.
    let wrong = format!("{}{}", &token[..22], "A".repeat(token.len() - 22));
    for attempt in 1..=5 {
        let to = if attempt % 2 == 0 { a.addr() } else { b.addr() };
        let form = load_sign_in(to).await;
        let answer = post_sign_in(to, &form, &wrong).await;
        assert_eq!(answer.status, 401, "attempt {attempt}: {}", answer.body);
    }
    for to in [a.addr(), b.addr()] {
        let form = load_sign_in(to).await;
        let slowed = post_sign_in(to, &form, &token).await;
        assert_eq!(slowed.status, 429, "{}", slowed.body);
        assert!(
            slowed.header("retry-after").is_some(),
            "{:?}",
            slowed.headers
        );
    }

    // A restarts: the session opened on B lives on, on both.
    a.restart().await;
    for replica in [&a, &b] {
        let page = dashboard_get(replica.addr(), Some(&other), "/dashboard/").await;
        assert_eq!(page.status, 200, "{}", page.body);
    }

    // The database away: the dashboard answers 503 (a session is not taken as live, a sign-in
    // form not given without its value kept), and works again once it is back.
    let mut server = server;
    server.stop_immediate();
    let away = dashboard_get(b.addr(), Some(&other), "/dashboard/").await;
    assert_eq!(away.status, 503, "{}", away.body);
    assert!(away.header("retry-after").is_some(), "{:?}", away.headers);
    let login = request(b.addr(), "GET", "/dashboard/login", &[], None).await;
    assert_eq!(login.status, 503, "{}", login.body);
    assert!(login.header("retry-after").is_some(), "{:?}", login.headers);
    assert!(
        set_cookie(&login, "emcf_signin").is_none(),
        "{:?}",
        login.headers
    );
    server.start();
    let back = dashboard_get(b.addr(), Some(&other), "/dashboard/").await;
    assert_eq!(back.status, 200, "{}", back.body);
}
