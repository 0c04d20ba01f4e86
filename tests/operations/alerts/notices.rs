//! Change notices end to end (`notice add`, `notice list`), through the real binary: a date
//! whose first second is less than 30 full days ahead refused in French with the earliest
//! date; a notice whose e-mails are pending with less than 30 days left flagged by the list; a notice published
//! while the relay is down is e-mailed once it is back (tried again by the running service),
//! once to each administrator, never again after a restart; one published while the service is
//! stopped is e-mailed at the next start, in the configured language; while a notice retires
//! v1 every `/api/v1` answer carries `Deprecation`, `Sunset` and `Link` (none before), the
//! notice's public page shows its body, the overview shows its banner; an unknown version is
//! a JSON 404 listing the versions served.

use std::time::Duration;

use chrono::{Duration as Days, FixedOffset, NaiveTime, TimeZone, Utc};

use super::smtp::{Received, SmtpSink};
use super::*;

fn today() -> chrono::NaiveDate {
    let zone = FixedOffset::east_opt(3600).expect("the default zone");
    Utc::now().with_timezone(&zone).date_naive()
}

fn cli_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::task::block_in_place(|| cli(dir, &dir.join("config.toml"), args))
}

/// A notice e-mail as a strict client reads it: (to, subject, body, language).
fn read(mail: &Received) -> (Vec<String>, String, String, String) {
    let read = mail.strict();
    let header = |name: &str| {
        read["headers"][name]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let id = read["message_id"].as_str().unwrap_or_default();
    assert!(
        id.starts_with("<notice.") && id.ends_with("@passerelle.cd>"),
        "{id}"
    );
    assert_eq!(header("auto-submitted"), "auto-generated");
    let parts = read["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 1, "one plain-text part: {read}");
    let to = mail.to.clone();
    (
        to,
        header("subject"),
        parts[0]["text"].as_str().unwrap_or_default().to_owned(),
        header("content-language"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_notices_are_e_mailed_once_shown_and_said_in_v1_headers() {
    // The relay is down at first: its address reserved, nothing listening.
    let relay = std::net::TcpListener::bind("127.0.0.1:0").expect("reserve");
    let relay_addr = relay.local_addr().expect("addr");
    drop(relay);
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let text = format!(
        "public_url = \"https://factures.example.cd/\"\n{}",
        super::config(dir.path(), &sim.link, relay_addr)
    );
    let mut gateway = Gateway::start(dir.path(), &text);
    let out = tokio::task::block_in_place(|| {
        org_add_acme(
            dir.path(),
            &dir.path().join("config.toml"),
            "Acme",
            &[
                "--admin-email",
                "admin@acme.cd",
                "--admin-email",
                "compta@acme.cd",
            ],
        )
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    gateway.wait_ready().await;
    let addr = gateway.addr;

    // No notice: no header; an unknown version is a JSON 404 listing those served.
    let status = get(addr, "/api/v1/status", None).await;
    assert_eq!(status.status, 200);
    for name in ["deprecation", "sunset", "link"] {
        assert!(
            status.header(name).is_none(),
            "{name}: {:?}",
            status.headers
        );
    }
    let v2 = get(addr, "/api/v2/status", None).await;
    assert_eq!(v2.status, 404, "{}", v2.body);
    assert_eq!(v2.json["errorCode"], 120, "{}", v2.body);
    let desc = v2.json["errorDesc"].as_str().unwrap_or_default();
    assert!(
        desc.contains("versions servies") && desc.contains("/api/v1"),
        "{desc}"
    );
    assert_eq!(v2.header("content-language"), Some("fr"));
    let v2_en = request(addr, "GET", "/api/v3", &[("Accept-Language", "en")], None).await;
    assert_eq!(v2_en.status, 404);
    assert!(
        v2_en.json["errorDesc"]
            .as_str()
            .unwrap_or_default()
            .contains("versions served: /api/v1"),
        "{}",
        v2_en.body
    );

    // Less than 30 full days before the effective day begins (+01:00): refused in French with
    // the earliest date, nothing kept. 30 calendar days ahead is 30 full days only at the
    // first second of today: the earliest is the day after.
    let body_file = dir.path().join("body.txt");
    std::fs::write(
        &body_file,
        "La version 2 remplace la version 1.\nÉcrivez-nous <avant>.\n",
    )
    .expect("body");
    let body_path = body_file.to_str().expect("utf-8 path");
    let soon = (today() + Days::days(30)).to_string();
    let out = cli_in(
        dir.path(),
        &[
            "notice",
            "add",
            "--effective",
            &soon,
            "--subject",
            "Fin de la v1",
            "--body-file",
            body_path,
            "--retires",
            "v1",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    let earliest = (today() + Days::days(31)).to_string();
    assert!(
        said.contains("commence dans moins de 30 jours pleins"),
        "{said}"
    );
    assert!(said.contains(&format!("--effective {earliest}")), "{said}");
    let listed = cli_in(dir.path(), &["notice", "list", "--json"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");

    // Published through the running service; the relay is down.
    let effective = today() + Days::days(45);
    let out = cli_in(
        dir.path(),
        &[
            "notice",
            "add",
            "--effective",
            &effective.to_string(),
            "--subject",
            "Fin de la version 1 de l'API",
            "--body-file",
            body_path,
            "--retires",
            "v1",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Avis 1 publié"), "{said}");
    assert!(said.contains("partent maintenant"), "{said}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !gateway
        .log()
        .contains("notice e-mails not sent, relay unreachable")
    {
        assert!(std::time::Instant::now() < deadline, "{}", gateway.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Every /api/v1 answer now carries the headers (a 404 under v1 too), nothing else does.
    let published = Utc::now().timestamp();
    let sunset_at = FixedOffset::east_opt(3600)
        .expect("zone")
        .from_local_datetime(&effective.and_time(NaiveTime::MIN))
        .single()
        .expect("midnight")
        .with_timezone(&Utc);
    let sunset = sunset_at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let link = "<https://factures.example.cd/notices/1>; rel=\"deprecation\"";
    for path in [
        "/api/v1/status",
        "/api/v1",
        "/api/v1/nowhere",
        "/api/v1/Invoice/FV-1",
    ] {
        let answer = get(addr, path, None).await;
        let deprecation = answer.header("deprecation").unwrap_or_default();
        let at: i64 = deprecation
            .strip_prefix('@')
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{path}: Deprecation {deprecation:?}"));
        assert!((published - at).abs() < 60, "{path}: {deprecation}");
        assert_eq!(answer.header("sunset"), Some(sunset.as_str()), "{path}");
        let links = answer.header("link").unwrap_or_default();
        assert!(links.contains(link), "{path}: {links}");
        assert!(links.contains("rel=\"sunset\""), "{path}: {links}");
    }
    for path in ["/metrics", "/", "/api/v2/status"] {
        let answer = get(addr, path, None).await;
        assert!(answer.header("deprecation").is_none(), "{path}");
    }

    // The public page shows the body (escaped), in French first.
    let page = get(addr, "/notices/1", None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("Fin de la version 1 de l&#39;API"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Écrivez-nous &lt;avant&gt;."),
        "{}",
        page.body
    );
    let shown = effective.format("%d/%m/%Y").to_string();
    assert!(
        page.body.contains(&format!("Prend effet le {shown}")),
        "{}",
        page.body
    );
    assert_eq!(get(addr, "/notices/2", None).await.status, 404);

    // The overview's banner, with the subject, the date and the page's link.
    let token = tokio::task::block_in_place(|| issue_dashboard_token(&gateway, "acme"));
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let overview = dashboard_get(addr, Some(&session), "/dashboard/").await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    assert!(
        overview.body.contains("id=\"notice-1\""),
        "{}",
        overview.body
    );
    assert!(
        overview.body.contains(&format!("prend effet le {shown}")),
        "{}",
        overview.body
    );
    assert!(
        overview.body.contains("href=\"/notices/1?lang=fr\""),
        "{}",
        overview.body
    );

    // The relay comes back: the service tries again at its next evaluation (every 30 s),
    // and sends it once.
    let listed = cli_in(dir.path(), &["notice", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("avis 1, acme\u{a0}: en attente"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
    let sink = SmtpSink::start_on(relay_addr).await;
    let mails = sink.wait_for(1, Duration::from_secs(45)).await;
    let (to, subject, body, lang) = read(&mails[0]);
    assert_eq!(
        to,
        ["admin@acme.cd", "compta@acme.cd"],
        "each administrator"
    );
    assert_eq!(lang, "fr");
    assert_eq!(
        subject,
        "[e-MCF] Avis de changement\u{a0}: Fin de la version 1 de l'API"
    );
    for words in [
        "Bonjour,",
        &format!("un changement qui prend effet le {shown}\u{a0}:"),
        "\n\nFin de la version 1 de l'API\n\nLa version 2 remplace la version 1.\nÉcrivez-nous <avant>.\n\n",
        "la version v1 de l'API de la passerelle sera retirée",
        "https://factures.example.cd/notices/1",
    ] {
        assert!(body.contains(words), "{words:?} in:\n{body}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let listed = cli_in(dir.path(), &["notice", "list", "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
        if json[0]["sent"]["acme"].is_string() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{json}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A restart: nothing again.
    assert!(gateway.terminate(), "clean exit");
    gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(sink.messages().len(), 1, "{:?}", sink.messages());

    // Published while the service is stopped: e-mailed at the next start, in the configured
    // language (English now); no retired version, the v1 headers still those of notice 1.
    assert!(gateway.terminate(), "clean exit");
    std::fs::write(&body_file, "Maintenance du relais.\n").expect("body");
    let later = (today() + Days::days(60)).to_string();
    let out = cli_in(
        dir.path(),
        &[
            "notice",
            "add",
            "--effective",
            &later,
            "--subject",
            "Maintenance",
            "--body-file",
            body_path,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("prochain démarrage"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let english = format!("language = \"en\"\n{text}");
    gateway = Gateway::start(dir.path(), &english);
    gateway.wait_ready().await;
    let mails = sink.wait_for(2, Duration::from_secs(15)).await;
    let (_, subject, body, lang) = read(&mails[1]);
    assert_eq!(lang, "en");
    assert_eq!(subject, "[e-MCF] Change notice: Maintenance");
    assert!(body.contains("Maintenance du relais."), "{body}");
    assert!(!body.contains("will be retired"), "{body}");
    let status = get(gateway.addr, "/api/v1/status", None).await;
    assert!(
        status
            .header("link")
            .unwrap_or_default()
            .contains("/notices/1>"),
        "{:?}",
        status.headers
    );
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(sink.messages().len(), 2, "{:?}", sink.messages());
    assert!(gateway.terminate(), "clean exit");

    // A notice whose e-mail is still pending 10 days before its date (the relay was down for
    // weeks): `notice list` says that organization will not get its 30 days' warning.
    std::fs::write(dir.path().join("config.toml"), &text).expect("French again");
    let listed = cli_in(dir.path(), &["notice", "list", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json[0]["late"], false, "{json}");
    assert_eq!(json[1]["late"], false, "{json}");
    let file = dir.path().join("state").join("notices.json");
    let mut kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("notices.json")).expect("json");
    let mut late = kept["notices"][1].clone();
    late["id"] = 3.into();
    late["effective"] = (today() + Days::days(10)).to_string().into();
    late["sent"] = serde_json::json!({});
    late["given_up"] = serde_json::json!([]);
    kept["notices"].as_array_mut().expect("notices").push(late);
    std::fs::write(&file, serde_json::to_vec(&kept).expect("json")).expect("write");
    let listed = cli_in(dir.path(), &["notice", "list", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json[2]["late"], true, "{json}");
    assert_eq!(json[1]["late"], false, "{json}");
    let listed = cli_in(dir.path(), &["notice", "list"]);
    let said = String::from_utf8_lossy(&listed.stdout);
    let date = (today() + Days::days(10)).format("%d/%m/%Y").to_string();
    assert!(
        said.contains(&format!(
            "avis 3\u{a0}: attention, 1 e-mail est encore en attente à moins de 30 jours de la date d'effet ({date})"
        )),
        "{said}"
    );
    assert!(!said.contains("avis 1\u{a0}: attention"), "{said}");
}
