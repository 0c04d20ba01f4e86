//! The organization dashboard over real HTTP, on the real binary and a simulator: sign-in
//! with a CLI-issued token, cookie flags, session end (expiry, revocation, sign-out), CSRF
//! refusals, escaping, isolation between two organizations, keys, LogInvoices and the CSV
//! export; and no secret in the log.

use crate::common;

use std::net::SocketAddr;

use common::*;

/// The header of a browser that prefers English.
const ENGLISH: (&str, &str) = ("Accept-Language", "en-GB,en;q=0.9,fr;q=0.5");

/// `GET path` with the session `session` and `extra` headers.
async fn dashboard_get_with(
    addr: SocketAddr,
    session: &str,
    path: &str,
    extra: &[(&str, &str)],
) -> Response {
    let cookie = format!("emcf_session={session}");
    let mut headers = vec![("Cookie", cookie.as_str())];
    headers.extend_from_slice(extra);
    request(addr, "GET", path, &headers, None).await
}

/// An overview as a shop owner reads it: without its collapsed technical details.
fn overview_without_details(body: &str) -> String {
    match (
        body.find("<details id=\"technical\">"),
        body.find("</details>"),
    ) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &body[..start], &body[end..])
        }
        _ => body.to_owned(),
    }
}

/// The public id of an API key (`mcf_live_` + 12 characters).
fn key_id(key: &str) -> &str {
    &key[9..21]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_sessions_and_cookie_flags() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");

    // Not signed in: to the sign-in page.
    let page = dashboard_get(addr, None, "/dashboard/").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.header("location"), Some("/dashboard/login"));
    assert_eq!(
        dashboard_get(addr, None, "/dashboard")
            .await
            .header("location"),
        Some("/dashboard/")
    );
    let login = dashboard_get(addr, None, "/dashboard/login").await;
    assert_eq!(login.status, 200);
    assert!(login.body.contains("name=\"token\""), "{}", login.body);
    let (_, header) = set_cookie(&login, "emcf_signin").expect("sign-in cookie");
    assert!(header.contains("HttpOnly") && header.contains("SameSite=Strict"));
    for (name, value) in [
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
    ] {
        assert_eq!(login.header(name), Some(value), "{name}");
    }
    assert!(login
        .header("content-security-policy")
        .is_some_and(|csp| csp.contains("default-src 'none'") && !csp.contains("script")));

    // A wrong token, a forged one, no sign-in cookie, another site's form.
    let wrong = dashboard_sign_in_response(addr, "mcf_dash_nope", &[]).await;
    assert_eq!(wrong.status, 401);
    assert!(
        wrong
            .body
            .contains("jeton de tableau de bord n&#39;est pas valide"),
        "French unless the browser prefers English: {}",
        wrong.body
    );
    let wrong = dashboard_sign_in_response(addr, "mcf_dash_nope", &[ENGLISH]).await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("token is not valid"), "{}", wrong.body);
    let forged = format!("{}{}", &token[..22], "A".repeat(32));
    assert_eq!(
        dashboard_sign_in_response(addr, &forged, &[]).await.status,
        401
    );
    let no_cookie = dashboard_post(
        addr,
        None,
        "/dashboard/login",
        &[("csrf", "x"), ("token", &token)],
        &[],
    )
    .await;
    assert_eq!(no_cookie.status, 403);
    assert!(no_cookie.body.contains("cookie"), "{}", no_cookie.body);
    assert!(set_cookie(&no_cookie, "emcf_session").is_none());
    let foreign =
        dashboard_sign_in_response(addr, &token, &[("Origin", "http://evil.example")]).await;
    assert_eq!(foreign.status, 403);
    assert!(set_cookie(&foreign, "emcf_session").is_none());

    // The right token: a session cookie, HttpOnly, SameSite=Strict, Secure only behind TLS.
    let ok = dashboard_sign_in_response(addr, &token, &[]).await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_eq!(ok.header("location"), Some("/dashboard/"));
    let (session, header) = set_cookie(&ok, "emcf_session").expect("session cookie");
    assert_eq!(session.len(), 64, "256-bit id in hex");
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(header.contains("HttpOnly"), "{header}");
    assert!(header.contains("SameSite=Strict"), "{header}");
    assert!(header.contains("Path=/dashboard"), "{header}");
    assert!(!header.contains("Secure"), "{header}");
    // A claim of TLS from a peer that is not a configured proxy changes nothing (the
    // proxies' side: tests/operations/dashboard_sign_in.rs).
    let tls = dashboard_sign_in_response(addr, &token, &[("X-Forwarded-Proto", "https")]).await;
    let (_, header) = set_cookie(&tls, "emcf_session").expect("session cookie");
    assert!(!header.contains("Secure"), "{header}");

    let overview = dashboard_get(addr, Some(session), "/dashboard/").await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    assert!(overview.body.contains("Test shop"), "{}", overview.body);
    assert!(overview.body.contains("<meter id=\"quota\""));
    assert!(
        overview.body.contains("id=\"link-production\">répond"),
        "{}",
        overview.body
    );
    // A sandbox not used yet is not a fault: a grey badge that says so.
    assert!(
        overview
            .body
            .contains("class=\"badge idle\" id=\"link-sandbox\">pas encore utilisé"),
        "{}",
        overview.body
    );
    // The device's C2h (read at connection), in plain words; its raw fields for technicians.
    let plain = overview_without_details(&overview.body);
    assert!(
        plain.contains("Dernier échange de l&#39;appareil avec la DGI")
            && plain.contains("L&#39;appareil est relié à la DGI.")
            && plain.contains("Il dit avoir transmis 0 facture à la DGI."),
        "{}",
        overview.body
    );
    for word in [
        "C2h",
        "CON",
        "liaison CON",
        "sandbox-acme",
        ">shop<",
        "HTTP",
    ] {
        assert!(
            !plain.contains(word),
            "{word:?} outside the details: {plain}"
        );
    }
    assert!(
        overview
            .body
            .contains("<details id=\"technical\"><summary>Détails techniques")
            && overview.body.contains("STA=CON"),
        "{}",
        overview.body
    );
    let overview = dashboard_get_with(addr, session, "/dashboard/", &[ENGLISH]).await;
    assert!(
        overview.body.contains("id=\"link-production\">answering"),
        "{}",
        overview.body
    );
    assert!(
        overview.body.contains("id=\"link-sandbox\">not used yet")
            && overview
                .body
                .contains("The device is connected to the DGI."),
        "{}",
        overview.body
    );

    // Clear errors.
    let missing = dashboard_get(addr, Some(session), "/dashboard/invoices/production/999").await;
    assert_eq!(missing.status, 404);
    // In the reader's language, not the register's English (issue 24).
    assert!(
        missing.body.contains(
            "Votre organisation n&#39;a pas de facture n° 999 dans son registre de production."
        ),
        "{}",
        missing.body
    );
    assert!(!missing.body.contains("register entry"), "{}", missing.body);
    let missing = dashboard_get_with(
        addr,
        session,
        "/dashboard/invoices/sandbox/7/receipt",
        &[ENGLISH],
    )
    .await;
    assert_eq!(missing.status, 404);
    assert!(
        missing
            .body
            .contains("Your organization has no invoice No. 7 in its sandbox register."),
        "{}",
        missing.body
    );
    assert_eq!(
        dashboard_get(addr, Some(session), "/dashboard/nope")
            .await
            .status,
        404
    );
    let bad = dashboard_get(addr, Some(session), "/dashboard/invoices?from=yesterday").await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("YYYY-MM-DD"), "{}", bad.body);

    // An unknown (or expired) session: back to the sign-in page, which says why.
    let gone = dashboard_get(addr, Some(&"0".repeat(64)), "/dashboard/keys").await;
    assert_eq!(gone.status, 303);
    assert_eq!(gone.header("location"), Some("/dashboard/login?expired=1"));
    let login = dashboard_get(addr, None, "/dashboard/login?expired=1").await;
    assert!(login.body.contains("session a expiré"), "{}", login.body);

    // Sign-out needs the CSRF token, then ends the session.
    let (second, csrf) = dashboard_sign_in(addr, &token).await;
    let cookie = format!("emcf_session={second}");
    let refused = dashboard_post(addr, Some(&cookie), "/dashboard/logout", &[], &[]).await;
    assert_eq!(refused.status, 403);
    let out = dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/logout",
        &[("csrf", &csrf)],
        &[],
    )
    .await;
    assert_eq!(out.status, 303);
    assert_eq!(
        out.header("location"),
        Some("/dashboard/login?signed_out=1")
    );
    assert_eq!(
        dashboard_get(addr, Some(&second), "/dashboard/")
            .await
            .status,
        303
    );

    // Revoking the token ends its sessions and refuses it at sign-in.
    assert_eq!(
        dashboard_get(addr, Some(session), "/dashboard/")
            .await
            .status,
        200
    );
    let listed = cli_ok(
        &setup.gateway,
        &["dashboard-token", "list", "--org", "acme"],
    );
    let token_id = &token[9..21];
    assert!(listed.contains(token_id), "{listed}");
    cli_ok(&setup.gateway, &["dashboard-token", "revoke", token_id]);
    let ended = dashboard_get(addr, Some(session), "/dashboard/").await;
    assert_eq!(ended.header("location"), Some("/dashboard/login?expired=1"));
    assert_eq!(
        dashboard_sign_in_response(addr, &token, &[]).await.status,
        401
    );

    let log = setup.gateway.log();
    assert!(log.contains("dashboard sign-in"), "sign-ins are logged");
    for secret in [&token[21..], session, second.as_str(), csrf.as_str()] {
        assert!(!log.contains(secret), "a secret is in the log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_admin_sees_and_changes_only_their_organization() {
    let mut setup = ApiSetup::start(None).await;
    let (_second_box, beta_key) = common::second_shop(&mut setup.gateway, "beta").await;
    let addr = setup.addr();
    let acme_token = issue_dashboard_token(&setup.gateway, "acme");
    let beta_token = issue_dashboard_token(&setup.gateway, "beta");

    let acme_rn = "A-\"1'";
    let acme = post_invoice(addr, &setup.key, &invoice(acme_rn)).await;
    assert_eq!(acme.status, 200, "{}", acme.body);
    let beta = post_invoice(addr, &beta_key, &invoice("B-1")).await;
    assert_eq!(beta.status, 200, "{}", beta.body);
    let sandbox_key = setup.issue_key(true);
    let sandbox = post_invoice(addr, &sandbox_key, &invoice("S-1")).await;
    assert_eq!(sandbox.status, 200, "{}", sandbox.body);

    let (acme_session, acme_csrf) = dashboard_sign_in(addr, &acme_token).await;
    let (beta_session, beta_csrf) = dashboard_sign_in(addr, &beta_token).await;
    let acme_cookie = format!("emcf_session={acme_session}");
    let get = |session: &str, path: &str| {
        let (session, path) = (session.to_string(), path.to_string());
        async move { dashboard_get(addr, Some(&session), &path).await }
    };

    // LogInvoices: own entries only, production and sandbox apart, rn escaped.
    let list = get(&acme_session, "/dashboard/invoices").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains("A-&quot;1&#39;"), "{}", list.body);
    assert!(!list.body.contains(acme_rn));
    assert!(!list.body.contains("B-1") && !list.body.contains("S-1"));
    let list = get(&acme_session, "/dashboard/invoices?env=sandbox").await;
    assert!(list.body.contains("S-1") && !list.body.contains("A-&quot;"));
    let found = get(&acme_session, "/dashboard/invoices?rn=a-%221").await;
    assert!(found.body.contains("A-&quot;1&#39;"), "{}", found.body);
    let none = get(&acme_session, "/dashboard/invoices?rn=B-1").await;
    assert!(none
        .body
        .contains("Aucune facture de ce registre ne correspond"));
    let later = get(&acme_session, "/dashboard/invoices?from=2999-01-01").await;
    assert!(later
        .body
        .contains("Aucune facture de ce registre ne correspond"));
    assert!(get(&beta_session, "/dashboard/invoices")
        .await
        .body
        .contains("B-1"));

    // Detail: security elements and the QR code; another organization's entry is not found.
    let acme_seq = 1;
    let detail = get(
        &acme_session,
        &format!("/dashboard/invoices/production/{acme_seq}"),
    )
    .await;
    assert_eq!(detail.status, 200, "{}", detail.body);
    let code = acme.json["codeDEFDGI"].as_str().expect("codeDEFDGI");
    assert!(detail.body.contains(code), "{}", detail.body);
    assert!(detail.body.contains("<svg") && !detail.body.contains("<?xml"));
    assert!(detail.body.contains("RDCDEF01;"));
    assert_eq!(
        get(&beta_session, "/dashboard/invoices/production/1")
            .await
            .status,
        404
    );
    assert_eq!(
        get(&acme_session, "/dashboard/invoices/production/2")
            .await
            .status,
        404
    );

    // CSV export: the organization's register only.
    let csv = get(&acme_session, "/dashboard/invoices.csv?env=production").await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    assert!(csv.header("content-disposition").is_some_and(
        |v| v.starts_with("attachment") && v.contains("loginvoices-acme-production.csv")
    ));
    let lines: Vec<&str> = csv.body.lines().collect();
    assert!(lines[0].starts_with("sequence,environment,org,"));
    assert_eq!(lines.len(), 2, "{}", csv.body);
    assert!(lines[1].contains("\"A-\"\"1'\"") && lines[1].contains(code));
    let beta_csv = get(&beta_session, "/dashboard/invoices.csv").await;
    assert!(beta_csv.body.contains("B-1") && !beta_csv.body.contains("A-"));

    // Keys: own keys only; another organization's key cannot be toggled.
    let keys = get(&acme_session, "/dashboard/keys").await;
    assert!(keys.body.contains(key_id(&setup.key)));
    assert!(!keys.body.contains(key_id(&beta_key)));
    let toggle = |cookie: String,
                  csrf: String,
                  id: String,
                  enabled: &'static str,
                  extra: Vec<(&'static str, &'static str)>| async move {
        dashboard_post(
            addr,
            Some(&cookie),
            "/dashboard/keys/toggle",
            &[("csrf", &csrf), ("id", &id), ("enabled", enabled)],
            &extra,
        )
        .await
    };
    for (path, form) in [
        ("/dashboard/keys/toggle", ("enabled", "true")),
        ("/dashboard/keys/disable", ("x", "")),
    ] {
        let beta_id = key_id(&beta_key);
        let fields = [("csrf", acme_csrf.as_str()), ("id", beta_id), form];
        let other = dashboard_post(addr, Some(&acme_cookie), path, &fields, &[]).await;
        assert_eq!(other.status, 404, "{path}: {}", other.body);
    }
    let other = get(
        &acme_session,
        &format!("/dashboard/keys/disable?id={}", key_id(&beta_key)),
    )
    .await;
    assert_eq!(other.status, 404, "{}", other.body);
    assert_eq!(
        post_invoice(addr, &beta_key, &invoice("B-2")).await.status,
        200
    );

    // CSRF: no token, another session's token, another site's Origin or Referer: refused.
    let acme_id = key_id(&setup.key).to_string();
    for (csrf, extra) in [
        (String::new(), vec![]),
        (beta_csrf.clone(), vec![]),
        (acme_csrf.clone(), vec![("Origin", "http://evil.example")]),
        (acme_csrf.clone(), vec![("Origin", "null")]),
    ] {
        let refused = toggle(acme_cookie.clone(), csrf, acme_id.clone(), "false", extra).await;
        assert_eq!(refused.status, 403, "{}", refused.body);
    }
    let referer = dashboard_post(
        addr,
        Some(&acme_cookie),
        "/dashboard/keys/toggle",
        &[("csrf", &acme_csrf), ("id", &acme_id), ("enabled", "false")],
        &[
            ("Origin", ""),
            ("Referer", "http://evil.example/dashboard/keys"),
        ],
    )
    .await;
    assert_eq!(referer.status, 403);
    // Neither header (some clients send none): the CSRF token alone decides.
    let bare = dashboard_post(
        addr,
        Some(&acme_cookie),
        "/dashboard/keys/toggle",
        &[("csrf", &beta_csrf), ("id", &acme_id), ("enabled", "false")],
        &[("Origin", "")],
    )
    .await;
    assert_eq!(bare.status, 403);
    assert_eq!(
        post_invoice(addr, &setup.key, &invoice("A-2")).await.status,
        200
    );

    // Disabling is asked first (tests/operations/dashboard_keys.rs), then confirmed with the CSRF token:
    // the next API call gets 401; enabled again (one click): 200.
    let fields = [("csrf", acme_csrf.as_str()), ("id", acme_id.as_str())];
    let done = dashboard_post(
        addr,
        Some(&acme_cookie),
        "/dashboard/keys/disable",
        &fields,
        &[],
    )
    .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(
        done.header("location").map(str::to_string),
        Some(format!("/dashboard/keys?disabled={acme_id}"))
    );
    assert_eq!(
        post_invoice(addr, &setup.key, &invoice("A-3")).await.status,
        401
    );
    let done = toggle(
        acme_cookie.clone(),
        acme_csrf.clone(),
        acme_id.clone(),
        "true",
        vec![],
    )
    .await;
    assert_eq!(done.status, 303);
    assert_eq!(
        post_invoice(addr, &setup.key, &invoice("A-3")).await.status,
        200
    );

    // Issuing a key shows it once; its label is escaped in the list.
    let issued = dashboard_post(
        addr,
        Some(&acme_cookie),
        "/dashboard/keys",
        &[
            ("csrf", &acme_csrf),
            ("environment", "sandbox"),
            ("label", "<b>till</b>"),
        ],
        &[],
    )
    .await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let marker = "id=\"new-key\">";
    let at = issued.body.find(marker).expect("the new key") + marker.len();
    let new_key = &issued.body[at..at + 52];
    assert!(new_key.starts_with("mcf_test_"), "{new_key}");
    let keys = get(&acme_session, "/dashboard/keys").await;
    assert!(keys.body.contains("&lt;b&gt;till&lt;/b&gt;") && !keys.body.contains("<b>till"));
    assert!(
        !keys.body.contains(&new_key[21..]),
        "the secret is shown once only"
    );
    assert_eq!(
        post_invoice(addr, new_key, &invoice("S-2")).await.status,
        200
    );

    let log = setup.gateway.log();
    for secret in [
        &acme_token[21..],
        &beta_token[21..],
        &acme_session,
        &acme_csrf,
        &new_key[21..],
    ] {
        assert!(!log.contains(secret), "a secret is in the log");
    }
}
