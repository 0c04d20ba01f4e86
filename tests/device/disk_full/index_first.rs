//! The index fails before the journal (issue 27, point 2): sled's own flush hits ENOSPC while
//! the journal's last page still takes records. An invoice already past the refusal then has
//! its intent fsync'd into that page, but the index cannot take it and the journal halts: the
//! box must not finalize it (the certification could not be written). It is cancelled on the
//! box, the client hears 161 (never 152 or 160), and once space returns the intent is settled
//! as not finalized and the retry is certified, once.

use std::time::Duration;

use super::{journal_len, pad_journal, Pause, Setup, ORG, PAGE, SLACK};
use crate::common::{
    assert_error, assert_register_matches_device, fiscal_invoices, invoice, post_invoice,
};

#[tokio::test(flavor = "multi_thread")]
async fn an_intent_journaled_as_the_index_fails_is_never_finalized() {
    let marks = tempfile::tempdir().expect("tempdir");
    let pause = Pause {
        path: marks.path().join("pause"),
    };
    let env = pause.env_at("before_intent");
    let Some(setup) = Setup::new(&[("EMCF_PAUSE_AT", &env)], None).await else {
        return;
    };
    let addr = setup.gateway.addr;

    let first = setup.post("DF-0").await;
    assert_eq!(first.status, 200, "{}", first.body);
    // DF-0's last two records: its intent and its certification.
    let intent = last_records(setup.path())[0];
    let key = setup.key.clone();
    pause.arm();
    let pending = tokio::spawn(async move { post_invoice(addr, &key, &invoice("DF-X")).await });
    pause.reached().await;
    // DF-X waits before its intent. The journal's last page is left almost empty (room for
    // the renames below and DF-X's intent) by renames that sled takes in memory and flushes
    // every 500 ms: the disk fills right after the last one.
    pad_journal(setup.path(), ORG, PAGE - SLACK - 64);
    let filler = setup.disk.fill();
    // More renames, journaled in that page, until sled's own flush fails (it writes into its
    // file's last page until it needs a new one).
    let mut renames = 0;
    while !index_failed(&setup.gateway.log()) {
        let room = (PAGE - journal_len(setup.path()) % PAGE) % PAGE;
        assert!(
            room > intent + SLACK,
            "sled's flush never failed after {renames} renames\n{}",
            setup.gateway.log()
        );
        let letter = if renames % 2 == 0 { 'e' } else { 'f' };
        if !rename(setup.path(), letter) {
            break;
        }
        renames += 1;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let counted = fiscal_invoices(&setup.sim).len();
    pause.release();

    let answered = pending.await.expect("request task");
    assert_error(&answered, 503, 161);
    assert_eq!(
        fiscal_invoices(&setup.sim).len(),
        counted,
        "the box finalized nothing while the register could not write\n{}",
        setup.gateway.log()
    );
    setup.wait_refusing().await;

    setup.free(&filler).await;
    let retried = retry_until_certified(&setup, "DF-X").await;
    assert_eq!(retried.status, 200, "{}", retried.body);
    let entries = assert_register_matches_device(setup.path(), &setup.sim);
    assert_eq!(entries.len(), 2, "DF-0 and DF-X, each once");
}

/// Whether the gateway's log says sled could not write.
fn index_failed(log: &str) -> bool {
    log.lines()
        .any(|line| line.contains("sled::") && line.contains("No space left on device"))
}

/// Renames the organization with 10 times `letter`; false when the gateway refused (its index
/// failed meanwhile).
fn rename(dir: &std::path::Path, letter: char) -> bool {
    let name: String = std::iter::repeat_n(letter, 10).collect();
    let out = tokio::task::block_in_place(|| {
        crate::common::cli(
            dir,
            &dir.join("config.toml"),
            &["org", "update", ORG, "--name", &name],
        )
    });
    out.status.success()
}

/// The sizes (header included) of the journal's last two records.
fn last_records(dir: &std::path::Path) -> [u64; 2] {
    let bytes =
        std::fs::read(dir.join("state").join("journal").join("journal.log")).expect("journal");
    let mut at = 0;
    let mut sizes = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        if len == 0 {
            break;
        }
        sizes.push(8 + len as u64);
        at += 8 + len;
    }
    assert!(sizes.len() >= 2, "{} records", sizes.len());
    [sizes[sizes.len() - 2], sizes[sizes.len() - 1]]
}

/// Posts `rn` until it is answered otherwise than 503 or 409 (its intent is settled from the
/// box first, once the register can be written: meanwhile the box or the rn waits).
async fn retry_until_certified(setup: &Setup, rn: &str) -> crate::common::Response {
    let started = std::time::Instant::now();
    loop {
        let answered = setup.post(rn).await;
        if ![503, 409].contains(&answered.status) || started.elapsed() > Duration::from_secs(20) {
            return answered;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
