//! Alerts end to end: the real gateway with `[smtp]` pointing at an SMTP sink this test runs,
//! an organization with a quota of 5 and an admin address. Each quota threshold is e-mailed
//! once (80 % at the 4th invoice; at the 5th, 90 % and 100 % are crossed together and only
//! 100 % is e-mailed), never again on further requests nor after a restart; `/metrics` and the
//! dashboard overview show the active alerts.

mod common;
#[path = "support/smtp.rs"]
mod smtp;

use std::time::Duration;

use common::*;
use smtp::SmtpSink;

fn config(dir: &std::path::Path, device: &std::path::Path, smtp: std::net::SocketAddr) -> String {
    format!(
        "{}\n[smtp]\nhost = \"127.0.0.1\"\nport = {}\nfrom = \"emcf-gateway <alertes@passerelle.cd>\"\ntls = \"none\"\n",
        config_with_device(dir, device),
        smtp.port()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_alerts_are_e_mailed_once_per_crossing() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = Sim::start(dir.path()).await;
    let text = config(dir.path(), &sim.link, sink.addr);
    let mut gateway = Gateway::start(dir.path(), &text);
    let key = tokio::task::block_in_place(|| {
        let out = cli(
            dir.path(),
            &gateway.config,
            &[
                "org",
                "add",
                "--id",
                "acme",
                "--name",
                "Acme",
                "--nif",
                SIM_NIF,
                "--isf",
                "ISF-1",
                "--device",
                "shop",
                "--quota",
                "5",
                "--admin-email",
                "admin@acme.cd",
            ],
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
    let subject = mails[0].header("Subject").expect("subject");
    assert!(
        subject.contains("80 % du quota annuel"),
        "French by default: {subject}"
    );

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
    let subject = mails[1].header("Subject").expect("subject");
    assert!(subject.contains("100 %"), "{subject}");
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
    assert!(page.body.contains("formule supérieure"), "{}", page.body);

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
