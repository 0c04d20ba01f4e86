//! The crash harness, CI size (issue: never lose or duplicate a certification): the real
//! binary under load from 4 clients, killed again and again (`kill -9` at random moments under
//! load and during its start-up, and aborting itself at each certification step through
//! `EMCF_FAILPOINTS`, every point at least twice), with the oracle of `crash_oracle` checked
//! after every restart. Long runs: `scripts/crash-test [N]` (`examples/crash.rs`).
//!
//! On the box (a pty) and through the DGI web API (its simulator on a socket), each with the
//! register in the state directory and in PostgreSQL (issue 28: a server the harness starts,
//! `crash_oracle/postgres.rs`): 16 deaths each, two of every failpoint (the 30 of one store
//! before, shared by the two stores now).
//!
//! Then PostgreSQL itself killed (`pg_ctl stop -m immediate`) under the same load, the gateway
//! left running: every 200 in the register after the database's restart, nothing twice, the
//! clients meeting 503 with code 165 meanwhile and never a 500, and certification resumed
//! without restarting the gateway.
//!
//! Then two replicas over one PostgreSQL (issue 29, `crash_oracle/replicas.rs`): one of them
//! killed at a time while the other serves, the clients' retries reaching either.
//!
//! `CRASH_SEED=<n>` replays another seed.
//!
//! Then power cuts (issue 27, root only): the state directory on an ext4 file system in a loop
//! file, cut with `EXT4_IOC_SHUTDOWN` (no log flush) at seeded random moments under load and
//! during start-ups, remounted, restarted, the same oracle after every restart
//! (`crash_oracle/power_cut.rs`). The seed is new each run and printed; `POWER_CUT_SEED=<n>`
//! replays it (the same moments and client choices; the interleaving is the machine's).

mod crash_oracle;
/// What the tests need from the machine (`tests/common/needs.rs`, also for the PostgreSQL
/// server of `tests/support/pg.rs`).
mod common {
    #[allow(dead_code)]
    pub mod needs;
}

use std::path::PathBuf;
use std::time::Instant;

use common::needs;
use crash_oracle::{run, Channel, Report, Settings, Store};
use emcf_gateway::failpoint::POINTS;

/// The two runs share two cores: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_on_the_box_lose_nothing_and_certify_nothing_twice() {
    kills(Channel::Box, Store::Embedded, 20_261_122).await;
}

/// The same with the register in PostgreSQL: the intent and the certification are commits
/// of the database instead of fsyncs of the journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_on_the_box_with_the_register_in_postgresql_lose_nothing() {
    if !crash_oracle::postgres::installed("the crash test on PostgreSQL") {
        return;
    }
    kills(Channel::Box, Store::Postgres, 20_261_124).await;
}

/// The same through the DGI web API: a confirm whose answer died with the gateway leaves its
/// invoice in doubt; the harness settles it as an administrator would (`intent resolve`, from
/// the invoices the DGI finalized), and every one the DGI finalized must be in the register.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_through_the_web_api_lose_nothing_and_certify_nothing_twice() {
    let report = kills(Channel::WebApi, Store::Embedded, 20_261_123).await;
    // The in-doubt case was met (kills after the confirm's answer) and settled by a person.
    assert!(
        report.settled_by_administrator >= 2,
        "{}",
        report.summary_line()
    );
}

/// The web API with the register in PostgreSQL: a provider's hosted gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_through_the_web_api_with_the_register_in_postgresql_lose_nothing() {
    if !crash_oracle::postgres::installed("the crash test on PostgreSQL") {
        return;
    }
    let report = kills(Channel::WebApi, Store::Postgres, 20_261_125).await;
    assert!(
        report.settled_by_administrator >= 2,
        "{}",
        report.summary_line()
    );
}

/// PostgreSQL killed under load (`pg_ctl stop -m immediate`, down a random 0.2..1.2 s, started
/// again), the gateway never restarted: after each restart of the database every 200 is in the
/// register with its codeDEFDGI, nothing is certified twice, the web API's finalized invoices
/// equal the register; meanwhile the clients met 503 with code 165 and never a 500; and the
/// same gateway certified again after every restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_killed_under_load_loses_nothing_and_answers_503() {
    if !crash_oracle::postgres::installed("the crash test of PostgreSQL killed") {
        return;
    }
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed(20_261_126);
    let mut settings = settings(Channel::WebApi, seed, DATABASE_KILLS);
    settings.store = Store::Postgres;
    settings.database_kills = true;
    settings.load_kill_max = std::time::Duration::from_millis(1000);
    settings.progress_every = 4;
    let report = run(settings).await.unwrap_or_else(|error| {
        panic!("crash harness (PostgreSQL killed, seed {seed}) stopped: {error}")
    });
    let summary = report.summary_line();
    println!("PostgreSQL killed: {summary}\n{}", report.details());
    let context = format!(
        "PostgreSQL killed, seed {seed}\n{summary}\n{}",
        report.details()
    );
    assert_eq!(report.database_kills, DATABASE_KILLS, "{context}");
    assert_nothing_lost_or_twice(&report, &context);
    let statuses = &report.clients.statuses;
    assert!(
        statuses
            .keys()
            .all(|status| *status < 500 || *status == 503),
        "an answer other than 503 among the 5xx: {context}"
    );
    // Every outage was met by the clients as 503 165, and the same gateway certified again
    // after every restart of the database.
    assert_eq!(report.outages_met, DATABASE_KILLS, "{context}");
    assert_eq!(report.resumed_then_certified, DATABASE_KILLS, "{context}");
    // The gateway was never killed: it settles by itself whatever the outage left open (a
    // request whose intent's COMMIT lost its answer was cancelled by the gateway itself).
    assert_eq!(report.settled_by_administrator, 0, "{context}");
    assert!(report.checks > DATABASE_KILLS, "{context}");
}

/// Kills of PostgreSQL in the CI run.
const DATABASE_KILLS: usize = 6;

/// Two replicas over one PostgreSQL (issue 29), each request of the clients to one at random:
/// one replica at a time killed under load, during its start-up and at the failpoints of the
/// web API's in-doubt path, the other serving meanwhile, the dead one back on its state
/// directory (once on a new machine, after its abort at after_intent: that intent the
/// leader's after the grace). After every restart, the one register against what the DGI
/// finalized: nothing lost or twice, even for a retry that reached the other replica; what
/// waits for an administrator listed by both replicas, settled once through either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_killed_one_at_a_time_lose_nothing_and_certify_nothing_twice() {
    if !crash_oracle::postgres::installed("the crash test of replicas") {
        return;
    }
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed(20_261_127);
    let mut settings = settings(Channel::WebApi, seed, REPLICA_DEATHS);
    settings.store = Store::Postgres;
    settings.replicas = 2;
    settings.progress_every = 2;
    let started = Instant::now();
    let report = run(settings)
        .await
        .unwrap_or_else(|error| panic!("crash harness (replicas, seed {seed}) stopped: {error}"));
    let summary = report.summary_line();
    println!(
        "replicas ({:.1}s): {summary}\n{}",
        started.elapsed().as_secs_f64(),
        report.details()
    );
    let context = format!("replicas, seed {seed}\n{summary}\n{}", report.details());
    assert_eq!(report.kills, REPLICA_DEATHS, "{context}");
    assert_nothing_lost_or_twice(&report, &context);
    assert!(report.load_kills >= 2, "{context}");
    assert!(report.startup_kills >= 1, "{context}");
    // The replica gone with its machine left its intent (after_intent) to the leader.
    assert!(report.new_machines >= 1, "{context}");
    assert!(report.taken_over_by_leader >= 1, "{context}");
    for point in &POINTS[..3] {
        let hits = report.failpoint_hits.get(point).copied().unwrap_or(0);
        assert!(
            hits >= 1,
            "failpoint {point} reached {hits} times: {context}"
        );
    }
    // The point of replicas: retries reached the other replica, and what the DGI finalized
    // without an answer (after_finalize) surfaced for an administrator.
    assert!(report.clients.retried_elsewhere >= 1, "{context}");
    assert!(report.settled_by_administrator >= 1, "{context}");
    assert!(report.certified >= 10, "{context}");
}

/// Deaths of a replica in the CI run: `crash_oracle::replicas::plan`'s first six.
const REPLICA_DEATHS: usize = 6;

/// Deaths of the gateway per channel and store in the CI run: two cycles of `plan`, each
/// failpoint twice.
const KILLS: usize = 16;

/// Power cuts of the file system under the state directory lose no acknowledged
/// certification and certify nothing twice: after each remount and restart (the gateway's own
/// reconciliation done) every 200 is in the register, the box's fiscal memory (outside the cut
/// file system) equals the register, the quota agrees, and `log verify` is clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn power_cuts_lose_nothing_and_certify_nothing_twice() {
    const SUBJECT: &str = "the power-cut crash test";
    if let Some(what) = crash_oracle::power_cut::missing_requirement() {
        return needs::missing(
            SUBJECT,
            &what,
            "run it as root with e2fsprogs and mount installed; .ci/run does",
        );
    }
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = std::env::var("POWER_CUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    // On stderr at once: a run that hangs or fails still says how to replay it.
    eprintln!("power cuts: seed {seed} (POWER_CUT_SEED={seed} replays it)");
    let cuts = POWER_CUTS;
    let mut settings = settings(Channel::Box, seed, cuts);
    settings.power_cuts = true;
    settings.load_kill_max = crash_oracle::power_cut::LOAD_CUT_MAX;
    settings.progress_every = 4;
    let started = Instant::now();
    let report = run(settings)
        .await
        .unwrap_or_else(|error| panic!("power-cut harness (seed {seed}) stopped: {error}"));
    let summary = report.summary_line();
    println!(
        "power cuts (seed {seed}, {:.1}s): {summary}\n{}",
        started.elapsed().as_secs_f64(),
        report.details()
    );
    let context = format!(
        "seed {seed} (POWER_CUT_SEED={seed} replays it)\n{summary}\n{}",
        report.details()
    );
    assert_eq!(report.kills, cuts, "{context}");
    assert_eq!(report.power_cuts, cuts, "{context}");
    assert_nothing_lost_or_twice(&report, &context);
    assert!(report.startup_cuts >= 2, "{context}");
    // The cuts were real: most dropped a file written without fsync just before them.
    assert!(report.unsynced_lost * 2 >= cuts, "{context}");
    // The load got through between the cuts.
    assert!(report.certified >= 2 * cuts, "{context}");
    assert!(report.checks > cuts / 2, "{context}");
}

/// Power cuts of the CI run (about 2 minutes on 2 cores; `scripts/crash-test power-cut` for
/// long runs).
const POWER_CUTS: usize = 40;

/// `CRASH_SEED`, else `default`.
fn seed(default: u64) -> u64 {
    std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// [`KILLS`] deaths on `channel` with the register in `store`, and the oracle's verdict
/// asserted.
async fn kills(channel: Channel, store: Store, default_seed: u64) -> Report {
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed(default_seed);
    let mut settings = settings(channel, seed, KILLS);
    settings.store = store;
    settings.progress_every = 8;
    let started = Instant::now();
    let report = run(settings).await.unwrap_or_else(|error| {
        panic!("crash harness ({channel:?}, {store:?}, seed {seed}) stopped: {error}")
    });
    let summary = report.summary_line();
    println!(
        "{channel:?}, {store:?} ({:.1}s): {summary}\n{}",
        started.elapsed().as_secs_f64(),
        report.details()
    );
    let context = format!(
        "{channel:?}, {store:?}, seed {seed}\n{summary}\n{}",
        report.details()
    );

    assert_eq!(report.kills, KILLS, "{context}");
    assert_nothing_lost_or_twice(&report, &context);
    for point in POINTS {
        let hits = report.failpoint_hits.get(point).copied().unwrap_or(0);
        assert!(
            hits >= 2,
            "failpoint {point} reached {hits} times: {context}"
        );
    }
    assert!(report.load_kills >= 2, "{context}");
    assert!(report.startup_kills >= 2, "{context}");
    // The load got through between the kills.
    assert!(report.certified >= 10, "{context}");
    assert!(report.checks >= KILLS / 2 + 4, "{context}");
    report
}

/// The harness's settings for `kills` deaths of the binary under test on `channel`, from
/// `seed`, with 4 clients.
fn settings(channel: Channel, seed: u64, kills: usize) -> Settings {
    let mut settings = Settings::new(PathBuf::from(env!("CARGO_BIN_EXE_emcf-gateway")));
    settings.kills = kills;
    settings.seed = seed;
    settings.clients = 4;
    settings.channel = channel;
    settings
}

/// The oracle's verdict: nothing acknowledged lost, nothing certified twice, the device and
/// the register agree, the quota matches the entries, and no rule was broken (`context` says
/// which run).
fn assert_nothing_lost_or_twice(report: &Report, context: &str) {
    assert_eq!(report.lost.len(), 0, "acknowledged but lost: {context}");
    assert_eq!(report.duplicated.len(), 0, "certified twice: {context}");
    assert_eq!(report.unexpected.len(), 0, "not on the device: {context}");
    assert_eq!(report.unrecorded.len(), 0, "not in the register: {context}");
    assert!(
        report.quota_mismatches.is_empty(),
        "quota used != entries: {context}"
    );
    assert!(report.violations.is_empty(), "{context}");
}
