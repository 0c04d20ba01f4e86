//! Alerts end to end: the real gateway with `[smtp]` pointing at an SMTP sink this test runs,
//! an organization with a small quota and an admin address. Each quota threshold is e-mailed
//! once (80 % at the 4th invoice; at the 5th, 90 % and 100 % are crossed together and only
//! 100 % is e-mailed), never again on further requests nor after a restart; `/metrics` and the
//! dashboard overview show the active alerts. Every e-mail is read as a strict mail client
//! reads it (`Received::strict`: RFC 5322 and MIME, each header checked, the body decoded),
//! in French by default and in English when configured, with the dashboard's link from
//! `public_url` or, without it, the way to reach the dashboard.

use crate::common;
use crate::smtp;
// Change notices: e-mailed through the same relay and outbox (`notice add`).
mod notices;

use std::time::Duration;

use common::*;
use smtp::{Received, SmtpSink};

fn config(dir: &std::path::Path, device: &std::path::Path, smtp: std::net::SocketAddr) -> String {
    format!(
        "{}\n[smtp]\nhost = \"127.0.0.1\"\nport = {}\nfrom = \"emcf-gateway <alertes@passerelle.cd>\"\ntls = \"none\"\n",
        config_with_device(dir, device),
        smtp.port()
    )
}

/// Words a shop owner should never read in an alert.
const JARGON: &[&str] = &["HTTP", "429", "C2h", "API", "=C3", "=?utf", "intent"];

/// What every alert e-mail must be, read by a strict client: the headers a client shows and
/// needs, one UTF-8 plain-text part, no jargon. Returns the decoded subject and body.
fn strict_alert(mail: &Received, lang: &str) -> (String, String) {
    let read = mail.strict();
    let header = |name: &str| {
        read["headers"][name]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("mime-version"), "1.0", "{read}");
    assert_eq!(read["from"], serde_json::json!(["alertes@passerelle.cd"]));
    assert!(header("from").starts_with("emcf-gateway"), "{read}");
    assert_eq!(read["to"], serde_json::json!(["admin@acme.cd"]), "{read}");
    let id = read["message_id"].as_str().unwrap_or_default();
    assert!(
        id.ends_with("@passerelle.cd>"),
        "on the sender's domain: {id}"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    let date = read["date_unix"].as_f64().unwrap_or_default();
    assert!(
        (now - date).abs() < 300.0,
        "Date {}: {read}",
        header("date")
    );
    assert_eq!(header("content-language"), lang);
    assert_eq!(header("auto-submitted"), "auto-generated");
    let subject = header("subject");
    let raw_subject = read["raw_subject"].as_str().unwrap_or_default();
    if !subject.is_ascii() {
        assert!(raw_subject.contains("=?utf-8?"), "RFC 2047: {raw_subject}");
    }
    let parts = read["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 1, "one plain-text part: {read}");
    let part = &parts[0];
    assert_eq!(part["type"], "text/plain");
    assert_eq!(part["charset"], "utf-8");
    let encoding = part["encoding"].as_str().unwrap_or_default();
    assert!(
        ["7bit", "quoted-printable", "base64"].contains(&encoding),
        "{encoding}"
    );
    let body = part["text"].as_str().unwrap_or_default().to_owned();
    for word in JARGON {
        assert!(
            !body.contains(word) && !subject.contains(word),
            "{word}: {subject}\n{body}"
        );
    }
    (subject, body)
}

/// The message-ids of `mails`, asserted distinct.
fn distinct_ids(mails: &[Received]) {
    let mut ids: Vec<String> = mails
        .iter()
        .map(|m| {
            m.strict()["message_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), mails.len(), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_alerts_are_e_mailed_once_per_crossing() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let text = format!(
        "public_url = \"https://factures.example.cd/\"\n{}",
        config(dir.path(), &sim.link, sink.addr)
    );
    let mut gateway = Gateway::start(dir.path(), &text);
    let key = tokio::task::block_in_place(|| {
        let out = org_add_acme(
            dir.path(),
            &gateway.config,
            "Acme",
            &["--quota", "5", "--admin-email", "admin@acme.cd"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        issue_key(dir.path(), &gateway.config, "acme", false)
    });
    gateway.wait_ready().await;
    let addr = gateway.addr;

    for n in 1..=3 {
        let answer = post_invoice(addr, &key, &invoice(&format!("FV-{n}"))).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(sink.messages().is_empty(), "nothing below 80 %");

    let answer = post_invoice(addr, &key, &invoice("FV-4")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mails = sink.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0].to, ["admin@acme.cd"]);
    assert_eq!(mails[0].from, "alertes@passerelle.cd");
    let (subject, body) = strict_alert(&mails[0], "fr");
    assert_eq!(
        subject, "[e-MCF] Acme\u{a0}: 80\u{a0}% du quota annuel de factures utilisé",
        "French by default"
    );
    for words in [
        "L'organisation Acme a certifié 4 factures sur les 5 de son quota annuel",
        "Ce qu'il faut faire\u{a0}: pour ne pas être bloqué, demandez dès maintenant la formule Grow à l'opérateur de la passerelle.",
        "\nhttps://factures.example.cd/dashboard/\n",
    ] {
        assert!(body.contains(words), "{words:?} in:\n{body}");
    }

    // Further requests below the next threshold: nothing more.
    let metrics = get(addr, "/metrics", None).await;
    assert!(
        metrics
            .body
            .contains("emcf_alerts_active{kind=\"quota_80\"} 1"),
        "{}",
        metrics.body
    );
    assert!(!metrics.body.contains("acme"), "no organization named");

    let answer = post_invoice(addr, &key, &invoice("FV-5")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mails = sink.wait_for(2, Duration::from_secs(15)).await;
    let (subject, body) = strict_alert(&mails[1], "fr");
    assert_eq!(
        subject,
        "[e-MCF] Acme\u{a0}: quota annuel de factures atteint, les nouvelles factures sont refusées"
    );
    for words in [
        "L'organisation Acme a utilisé tout son quota annuel",
        "Ce qu'il faut faire\u{a0}: demandez la formule Grow à l'opérateur de la passerelle. Dès le changement de formule,",
        "\nhttps://factures.example.cd/dashboard/\n",
    ] {
        assert!(body.contains(words), "{words:?} in:\n{body}");
    }
    distinct_ids(&mails);
    for n in 6..=8 {
        let answer = post_invoice(addr, &key, &invoice(&format!("FV-{n}"))).await;
        assert_eq!(answer.status, 429, "{}", answer.body);
    }
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(
        sink.messages().len(),
        2,
        "once per crossing: {:?}",
        sink.messages()
    );

    let metrics = get(addr, "/metrics", None).await;
    for kind in ["quota_80", "quota_90", "quota_100"] {
        assert!(
            metrics
                .body
                .contains(&format!("emcf_alerts_active{{kind=\"{kind}\"}} 1")),
            "{kind}: {}",
            metrics.body
        );
    }
    assert!(metrics
        .body
        .contains("emcf_alerts_active{kind=\"channel_down\"} 0"));
    assert!(metrics
        .body
        .contains("emcf_alerts_raised_total{kind=\"quota_100\"} 1"));

    // The overview's banner: the highest quota alert, inviting an upgrade.
    let token = tokio::task::block_in_place(|| issue_dashboard_token(&gateway, "acme"));
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let page = dashboard_get(addr, Some(&session), "/dashboard/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("id=\"alert-quota_100\""),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("id=\"alert-quota_80\""),
        "only the highest"
    );
    assert!(
        page.body
            .contains("Demandez la formule Grow à l&#39;opérateur de la passerelle"),
        "{}",
        page.body
    );

    // A restart reads the raised alerts back: nothing is e-mailed again.
    assert!(gateway.terminate(), "clean exit");
    let state = std::fs::read_to_string(dir.path().join("state/alerts.json")).expect("state file");
    assert!(state.contains("quota_100"), "{state}");
    gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(sink.messages().len(), 2, "{:?}", sink.messages());
    let log = gateway.log();
    assert_eq!(log.matches("alert raised").count(), 3, "{log}");
}

/// In English when configured, without `public_url`, for an organization whose name is not
/// ASCII: the quota reached (quota 1: one invoice crosses every threshold, 100 % alone is
/// e-mailed) and a box whose last contact with the DGI is older than `dgi_contact_days` (the
/// simulator's clock a day behind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_in_english_say_how_to_reach_the_dashboard_without_a_link() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start_custom(dir.path(), |options| {
        options.link.clock_offset_secs = -86_399;
    })
    .await;
    let text = common::store::with_store(
        dir.path(),
        &format!(
            "language = \"en\"\n{}\n[alerts]\ndgi_contact_days = 1\n",
            config(dir.path(), &sim.link, sink.addr)
        ),
    );
    // The organization exists before the service starts: the DGI contact is known at the
    // first evaluations, and its recipients are the organizations bound to the box then.
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, &text).expect("config");
    let out = org_add_acme(
        dir.path(),
        &config_path,
        "Épicerie Ngaliema",
        &["--quota", "1", "--admin-email", "admin@acme.cd"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = issue_key(dir.path(), &config_path, "acme", false);
    let gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let answer = post_invoice(gateway.addr, &key, &invoice("EN-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    let mails = sink.wait_for(2, Duration::from_secs(40)).await;
    let read: Vec<(String, String)> = mails.iter().map(|m| strict_alert(m, "en")).collect();
    let find = |subject: &str| {
        read.iter()
            .find(|(s, _)| s == subject)
            .map(|(_, body)| body.clone())
            .unwrap_or_else(|| panic!("no e-mail {subject:?} in {read:?}"))
    };
    let quota =
        find("[e-MCF] Épicerie Ngaliema: annual invoice quota reached, new invoices are refused");
    let dgi = find("[e-MCF] Épicerie Ngaliema: fiscal device shop no longer talks to the DGI");
    for (body, words) in [
        (
            &quota,
            "Épicerie Ngaliema has used its whole annual quota for ",
        ),
        (
            &quota,
            "What to do: ask the gateway's operator for the Grow plan.",
        ),
        (
            &dgi,
            "The last exchange of fiscal device \"shop\" of Épicerie Ngaliema with the DGI was on ",
        ),
        (
            &dgi,
            "What to do: check that the fiscal device is switched on and connected to the internet",
        ),
    ] {
        assert!(body.contains(words), "{words:?} in:\n{body}");
    }
    for body in [&quota, &dgi] {
        assert!(
            body.contains("open the gateway's address followed by /dashboard"),
            "{body}"
        );
        assert!(!body.contains("://"), "no link without public_url: {body}");
        assert!(body.starts_with("Hello,\n\n"), "{body}");
    }
    distinct_ids(&mails);
    let log = gateway.log();
    assert!(log.contains("no public_url configured"), "{log}");
}

/// A message as the gateway sends one, with `subject` as its raw Subject line.
fn crafted(subject: &str) -> Received {
    let data = format!(
        "Date: Thu, 26 Nov 2026 20:33:01 +0100\r\nFrom: emcf-gateway <alertes@passerelle.cd>\r\n\
         To: admin@acme.cd\r\nSubject: {subject}\r\nMessage-ID: <a1@passerelle.cd>\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Transfer-Encoding: 7bit\r\n\r\nBonjour,\r\n"
    );
    Received {
        data,
        ..Received::default()
    }
}

/// Issue 24: the checker itself, on crafted messages. Before names were checked, an
/// organization's name could put CR LF into a Subject (lettre encodes it: the raw line is
/// clean, the decoded one is not) and a long one could make encoded words over RFC 2047's 75
/// characters. The gateway cannot send those any more (the names are refused, below), so
/// the checker's two rules are tried on the messages such a name would have made, through
/// the same `Received` path the alert tests use: a rule that cannot fail would pass these.
#[test]
fn the_strict_checker_refuses_what_a_forged_name_would_have_sent() {
    let clean = crafted("[e-MCF] =?utf-8?q?=C3=89picerie?= Ngaliema");
    let read = clean.check().expect("a clean message");
    assert_eq!(read["headers"]["subject"], "[e-MCF] Épicerie Ngaliema");

    let forged = crafted("[e-MCF] =?utf-8?q?Evil=0D=0ABcc=3A_victim=40x=2Ecd?= quota");
    let reason = forged.check().expect_err("a Subject that decodes to CR LF");
    assert!(
        reason.contains("Subject: decodes to control character U+000D"),
        "{reason}"
    );

    let long_word = format!("=?utf-8?b?{}?=", "w6k".repeat(22));
    assert_eq!(long_word.len(), 78);
    let reason = crafted(&format!("[e-MCF] {long_word}"))
        .check()
        .expect_err("an encoded word over 75 characters");
    assert!(reason.contains("encoded word of 78 characters"), "{reason}");
    let short_words = format!("=?utf-8?b?{0}?= =?utf-8?b?{0}?=", "w6k".repeat(11));
    assert!(crafted(&short_words).check().is_ok(), "two words of 43");

    let reason = crafted("[e-MCF] a\u{1b}[2Jb")
        .check()
        .expect_err("a raw control character");
    assert!(reason.contains("control character U+001B"), "{reason}");
}

/// Issue 24: a name that would forge the e-mail is refused by the running service (the CLI
/// goes through its admin socket), and the longest name accepted, 100 characters that are
/// not ASCII, goes out as encoded words of at most 75 characters on lines a relay takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_name_is_e_mailed_in_short_encoded_words_and_a_forged_one_is_refused() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let text = config(dir.path(), &sim.link, sink.addr);
    let gateway = Gateway::start(dir.path(), &text);
    gateway.wait_ready().await;
    let add = |name: &str| {
        org_add_acme(
            dir.path(),
            &gateway.config,
            name,
            &["--quota", "1", "--admin-email", "admin@acme.cd"],
        )
    };
    let long = "A".repeat(1100);
    for (name, said) in [
        (
            "Evil\r\nBcc: victim@x.cd\r\n\r\nInjected body",
            "contient un retour chariot (U+000D) au caractère 5",
        ),
        (long.as_str(), "fait 1100 caractères, 100 au plus"),
        (
            "=?utf-8?q?Fake?=",
            "contient « =? », le début d'un mot encodé d'e-mail",
        ),
    ] {
        let out = tokio::task::block_in_place(|| add(name));
        assert!(!out.status.success(), "{name:?} accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&nbsp(&format!("le nom de l'organisation {said}"))),
            "{name:?}: {stderr}"
        );
    }
    let name = format!("Épicerie {}", "é".repeat(91));
    assert_eq!(name.chars().count(), 100);
    let out = tokio::task::block_in_place(|| add(&name));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = tokio::task::block_in_place(|| issue_key(dir.path(), &gateway.config, "acme", false));
    let answer = post_invoice(gateway.addr, &key, &invoice("LONG-1")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mails = sink.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let (subject, body) = strict_alert(&mails[0], "fr");
    assert_eq!(
        subject,
        format!("[e-MCF] {name}\u{a0}: quota annuel de factures atteint, les nouvelles factures sont refusées")
    );
    assert!(body.contains(&name), "{body}");
    let raw = mails[0].strict()["raw_subject"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(raw.matches("=?utf-8?").count() > 1, "several words: {raw}");
}
