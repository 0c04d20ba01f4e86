//! A full disk survived without a restart (issue 27, point 2), through the real binary and the
//! box simulator, the gateway's state directory on a small tmpfs the test mounts (root; skips
//! elsewhere, fails under CI) and fills with a file: new invoices are refused before anything
//! reaches the box and before any quota is used, `/status` and `/metrics` say why, and once
//! the file is removed the gateway certifies again by itself. An invoice the box finalized
//! just before the disk filled hears 164, and its retry after recovery gets 200 with the same
//! codeDEFDGI: the box certified it exactly once.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{
    add_org_with_key, assert_error, assert_register_matches_device, config_with_device,
    device_triples, fiscal_invoices, get, invoice, post_invoice, quota_used, wait_status, Gateway,
    Response, Sim,
};
use crate::smtp::SmtpSink;
use crate::tmpfs::Tmpfs;
use emcf_sim::edef::{start_edef, EdefOptions};

mod index_first;
mod steps;

use steps::{
    fill_then_release, held_after_finalize, journal_len, measure_then_pad, pad_journal, Pause,
    PAGE, SLACK,
};

const ORG: &str = "shop-org";

/// The simulator, a gateway whose state directory is a tmpfs, an organization and its key.
/// Dropped in this order: the gateway, the simulator, the mount, the directory.
struct Setup {
    gateway: Gateway,
    sim: Sim,
    disk: Tmpfs,
    key: String,
    dir: tempfile::TempDir,
}

impl Setup {
    /// With `relay`, alerts are e-mailed to `admin@shop.cd` through it.
    async fn new(env: &[(&str, &str)], relay: Option<u16>) -> Option<Setup> {
        let dir = tempfile::tempdir().expect("tempdir");
        let disk = Tmpfs::mount(&dir.path().join("state"), "48m", "the disk-full tests")?;
        let sim = Sim::start(dir.path()).await;
        let mut config = config_with_device(dir.path(), &sim.link);
        if let Some(port) = relay {
            config.push_str(&format!(
                "\n[smtp]\nhost = \"127.0.0.1\"\nport = {port}\nfrom = \"alertes@shop.cd\"\ntls = \"none\"\n"
            ));
        }
        let gateway = Gateway::start_with_env(dir.path(), &config, env);
        gateway.wait_ready().await;
        let key = add_org_with_key(dir.path(), &gateway.config, ORG, "shop", None);
        let out = crate::common::cli(
            dir.path(),
            &gateway.config,
            &["org", "update", ORG, "--admin-email", "admin@shop.cd"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Setup {
            gateway,
            sim,
            disk,
            key,
            dir,
        })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    async fn post(&self, rn: &str) -> Response {
        post_invoice(self.gateway.addr, &self.key, &invoice(rn)).await
    }

    fn quota_used(&self) -> u64 {
        tokio::task::block_in_place(|| {
            quota_used(self.path(), &self.path().join("config.toml"), ORG)
        })
    }

    /// Waits until `/status` is false and gives its reason; checks `/metrics` says why.
    async fn wait_refusing(&self) -> String {
        wait_status(self.gateway.addr, false, Duration::from_secs(10)).await;
        let status = get(self.gateway.addr, "/api/v1/status", None).await;
        let reason = status.json["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("no reason in {}", status.body))
            .to_owned();
        let metrics = get(self.gateway.addr, "/metrics", None).await;
        assert!(
            metrics
                .body
                .contains("emcf_register_write_fault{kind=\"no_space\"} 1"),
            "{}",
            metrics.body
        );
        reason
    }

    /// Waits until `/metrics` counts `active` register alerts.
    async fn wait_alert(&self, active: u8) {
        let wanted = format!("emcf_alerts_active{{kind=\"register_unwritable\"}} {active}");
        let started = Instant::now();
        loop {
            let metrics = get(self.gateway.addr, "/metrics", None).await;
            if metrics.body.contains(&wanted) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(40),
                "{}",
                metrics.body
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Removes `filler` and waits until the gateway says it certifies again (no restart).
    async fn free(&self, filler: &Path) {
        std::fs::remove_file(filler).expect("filler removed");
        wait_status(self.gateway.addr, true, Duration::from_secs(20)).await;
        let metrics = get(self.gateway.addr, "/metrics", None).await;
        assert!(
            metrics
                .body
                .contains("emcf_register_write_fault{kind=\"no_space\"} 0"),
            "{}",
            metrics.body
        );
    }
}

/// No certification of `rn` was started on a channel: the gateway's log has no span of it
/// (`invoice{org=... rn=... device=...}`, opened once the channel is held).
fn assert_never_ran(gateway: &Gateway, rn: &str) {
    let log = gateway.log();
    assert!(
        !log.contains(&format!("rn={rn} device=")),
        "{rn} went to its channel:\n{log}"
    );
}

fn code_of(response: &Response) -> String {
    response.json["codeDEFDGI"]
        .as_str()
        .unwrap_or_else(|| panic!("no codeDEFDGI in {}", response.body))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_refuses_before_the_box_and_recovers_without_a_restart() {
    let relay = SmtpSink::start().await;
    let Some(setup) = Setup::new(&[], Some(relay.addr.port())).await else {
        return;
    };
    let first = setup.post("DF-1").await;
    assert_eq!(first.status, 200, "{}", first.body);
    // The index flushes what DF-1 changed within half a second: sled does not survive a
    // failed write of its own (its error stays until it is reopened), so the disk fills
    // once it is clean, as it would while the gateway refuses invoices near a full disk.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let filler = setup.disk.fill();
    let reason = setup.wait_refusing().await;
    assert!(
        reason.contains("disque de la passerelle est plein"),
        "{reason}"
    );

    // A retry of an invoice certified before the fault still gets its stored result: only
    // new work is refused.
    let replayed = setup.post("DF-1").await;
    assert_eq!(replayed.status, 200, "{}", replayed.body);
    assert_eq!(
        code_of(&replayed),
        code_of(&first),
        "the stored certification"
    );
    assert_eq!(
        replayed.header("Idempotent-Replayed"),
        Some("true"),
        "{replayed:?}"
    );

    let refused = setup.post("DF-2").await;
    assert_error(&refused, 503, 161);
    assert!(refused.header("Retry-After").is_some(), "{refused:?}");
    assert_eq!(
        fiscal_invoices(&setup.sim).len(),
        1,
        "the box certified nothing more"
    );
    assert_never_ran(&setup.gateway, "DF-2");
    assert_eq!(setup.quota_used(), 1, "no quota used by a refusal");
    // The administrators are told by e-mail (the alert is evaluated after each answer).
    let mails = relay.wait_for(1, Duration::from_secs(40)).await;
    assert_eq!(mails[0].to, ["admin@shop.cd"]);
    let mail = mails[0].strict().to_string();
    assert!(
        mail.contains("le registre des factures de la passerelle ne peut pas être écrit"),
        "{mail}"
    );
    setup.wait_alert(1).await;

    setup.free(&filler).await;
    let second = setup.post("DF-2").await;
    assert_eq!(
        second.status,
        200,
        "{}\n{}",
        second.body,
        setup.gateway.log()
    );
    let entries = assert_register_matches_device(setup.path(), &setup.sim);
    assert_eq!(entries.len(), 2);
    assert_eq!(setup.quota_used(), 2);
    setup.wait_alert(0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invoice_finalized_as_the_disk_fills_is_recorded_once_space_returns() {
    let marks = tempfile::tempdir().expect("tempdir");
    let pause = Pause {
        path: marks.path().join("pause"),
    };
    let Some(setup) = Setup::new(&[("EMCF_PAUSE_AT", &pause.env())], None).await else {
        return;
    };
    let (addr, key) = (setup.gateway.addr, setup.key.clone());

    let post = |rn: &'static str| {
        let key = key.clone();
        tokio::spawn(async move { post_invoice(addr, &key, &invoice(rn)).await })
    };

    // DF-0 measures the records of one invoice: its intent, then its certification.
    let certification = measure_then_pad(setup.path(), ORG, &pause, || post("DF-0")).await;
    assert!(certification > 2 * SLACK, "{certification}");

    // DF-A: the box finalizes it, then the disk fills before its certification is written.
    let pending = held_after_finalize(setup.path(), &pause, certification, || post("DF-A")).await;
    assert_eq!(
        fiscal_invoices(&setup.sim).len(),
        2,
        "the box certified DF-A"
    );
    let filler = fill_then_release(&setup.disk, &pause).await;

    let answered = pending.await.expect("request task");
    let error = assert_error(&answered, 503, 164);
    assert!(
        error["errorDesc"]
            .as_str()
            .is_some_and(|text| text.contains("le boîtier a certifié la facture DF-A")),
        "{error}"
    );
    assert!(answered.header("Retry-After").is_some(), "{answered:?}");
    setup.wait_refusing().await;

    // Meanwhile: the retry hears the same, another invoice is refused before the box.
    assert_error(&setup.post("DF-A").await, 503, 164);
    assert_error(&setup.post("DF-B").await, 503, 161);
    assert_eq!(fiscal_invoices(&setup.sim).len(), 2);
    assert_never_ran(&setup.gateway, "DF-B");

    setup.free(&filler).await;
    let retried = setup.post("DF-A").await;
    assert_eq!(
        retried.status,
        200,
        "{}\n{}",
        retried.body,
        setup.gateway.log()
    );
    let device = device_triples(&setup.sim);
    assert_eq!(device.len(), 2, "DF-A certified exactly once on the box");
    assert_eq!(code_of(&retried), device[1].1, "the same certification");

    let next = setup.post("DF-B").await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_register_matches_device(setup.path(), &setup.sim);
    assert_eq!(setup.quota_used(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_confirm_answered_as_the_disk_fills_is_recorded_once_space_returns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(disk) = Tmpfs::mount(&dir.path().join("state"), "48m", "the disk-full tests") else {
        return;
    };
    let marks = tempfile::tempdir().expect("tempdir");
    let pause = Pause {
        path: marks.path().join("pause"),
    };
    let api = start_edef(
        "127.0.0.1:0".parse().expect("address"),
        EdefOptions::default(),
    )
    .await
    .expect("the web API simulator starts");
    let token = dir.path().join("dgi.token");
    std::fs::write(&token, "sim-token\n").expect("token");
    let config = format!(
        "state_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n\n[[devices]]\nname = \"dgi\"\nkind = \"web_api\"\nurl = {url:?}\ntoken_file = {token:?}\nstatus_interval_secs = 1\n",
        state = dir.path().join("state"),
        url = api.url(),
    );
    let gateway = Gateway::start_with_env(dir.path(), &config, &[("EMCF_PAUSE_AT", &pause.env())]);
    gateway.wait_ready().await;
    let key = add_org_with_key(dir.path(), &gateway.config, "acme", "dgi", None);
    let addr = gateway.addr;
    let post = |rn: &'static str| {
        let key = key.clone();
        tokio::spawn(async move { post_invoice(addr, &key, &invoice(rn)).await })
    };

    // W-0 measures the records of one invoice, then the journal is padded (see
    // `pad_journal`).
    let certification = measure_then_pad(dir.path(), "acme", &pause, || post("W-0")).await;

    // W-A: the DGI confirms it, then the disk fills before its certification is written.
    let pending = held_after_finalize(dir.path(), &pause, certification, || post("W-A")).await;
    let filler = fill_then_release(&disk, &pause).await;
    let answered = pending.await.expect("request task");
    let error = assert_error(&answered, 503, 164);
    assert!(
        error["errorDesc"]
            .as_str()
            .is_some_and(|text| text.contains("la DGI a certifié la facture W-A")),
        "{error}"
    );
    wait_status(addr, false, Duration::from_secs(10)).await;
    assert_error(&post("W-A").await.expect("retry"), 503, 164);
    assert_error(&post("W-B").await.expect("other"), 503, 161);
    assert_eq!(api.finalized_count(), 2, "nothing more reached the DGI");
    assert_never_ran(&gateway, "W-B");

    std::fs::remove_file(&filler).expect("filler removed");
    wait_status(addr, true, Duration::from_secs(20)).await;
    let retried = post("W-A").await.expect("retry");
    assert_eq!(retried.status, 200, "{}\n{}", retried.body, gateway.log());
    let confirmed = api
        .finalized()
        .into_iter()
        .find(|f| f.rn == "W-A")
        .expect("W-A confirmed");
    assert_eq!(
        code_of(&retried),
        confirmed.code_def,
        "the same certification"
    );
    assert_eq!(api.finalized_count(), 2, "W-A confirmed exactly once");
    assert_eq!(post("W-B").await.expect("next").status, 200);
    drop(gateway);
}
