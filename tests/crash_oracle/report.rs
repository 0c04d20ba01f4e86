//! What a crash run found, and what its clients saw.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

/// What a run found.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Gateway deaths.
    pub kills: usize,
    /// Acknowledged rns not in the register as acknowledged.
    pub lost: BTreeSet<String>,
    /// rns or codes found twice.
    pub duplicated: BTreeSet<String>,
    /// Register entries the device does not have.
    pub unexpected: BTreeSet<String>,
    /// Device invoices the register does not have (after every intent was settled).
    pub unrecorded: BTreeSet<String>,
    /// Checks where the quota used differed from the register.
    pub quota_mismatches: Vec<String>,
    /// Other oracle failures: sequence gaps, `log verify` failing, lookups disagreeing.
    pub violations: Vec<String>,
    /// Things that are not oracle failures but are worth a look (definitive 4xx, timeouts,
    /// a failpoint not reached, a gateway that died by itself).
    pub anomalies: Vec<String>,
    /// Register entries learnt by reconciliation (final register).
    pub recovered: usize,
    /// Invoices in doubt (web API: the confirm's answer lost with the gateway) that the
    /// harness settled as an administrator would, from what the DGI shows.
    pub settled_by_administrator: usize,
    /// Of those, the ones the DGI had not finalized (settled as not certified).
    pub settled_not_certified: usize,
    /// Register entries (final register).
    pub certified: usize,
    /// Oracle checks done.
    pub checks: usize,
    /// Restart-to-ready times (every restart that reached ready, not the first start).
    pub ready_ms: Vec<u64>,
    /// The slowest restarts: (ms, life, how the life before it ended), slowest first.
    pub slowest: Vec<(u64, usize, String)>,
    /// Load kills done.
    pub load_kills: usize,
    /// Start-up kills done.
    pub startup_kills: usize,
    /// Start-up kills that landed before the gateway printed its listening line.
    pub startup_kills_before_listening: usize,
    /// Power cuts of the state directory's file system (`power_cut.rs`).
    pub power_cuts: usize,
    /// Of those, the ones during a start-up.
    pub startup_cuts: usize,
    /// Cuts after which the unsynced canary's content was gone (the cut dropped what was not
    /// fsynced).
    pub unsynced_lost: usize,
    /// Torn journal tails cut off at an open (`journal/torn-*`), at the end of the run.
    pub torn_tails: usize,
    /// Indexes set aside (`index.sled.corrupt-*`, `index.sled.stale-*`) at the end of the run.
    pub index_set_aside: usize,
    /// Kills of the PostgreSQL server (`postgres.rs`).
    pub database_kills: usize,
    /// Of those, the outages during which the clients met 503 with code 165.
    pub outages_met: usize,
    /// Restarts of the database after which a new invoice was certified before the next kill
    /// (or the end).
    pub resumed_then_certified: usize,
    /// ms from each restart of the database to the gateway's `status: true`.
    pub resume_ms: Vec<u64>,
    /// Replicas mode: deaths of each replica.
    pub deaths_per_replica: Vec<usize>,
    /// Replicas mode: restarts on a new machine (a fresh state directory).
    pub new_machines: usize,
    /// Replicas mode: open intents of a replica gone with its machine that the leader took
    /// over, and ms from its death's end to the last taken over (each time there were some).
    pub taken_over_by_leader: usize,
    pub takeover_ms: Vec<u64>,
    /// Replicas mode: the intents settled by the administrator (each surfaced once).
    pub in_doubt_settled: BTreeSet<String>,
    /// Aborts seen per failpoint.
    pub failpoint_hits: BTreeMap<&'static str, usize>,
    /// Client counters.
    pub clients: ClientStats,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The run's directory, when kept.
    pub kept_dir: Option<PathBuf>,
}

impl Report {
    /// True when no oracle failed.
    pub fn ok(&self) -> bool {
        self.lost.is_empty()
            && self.duplicated.is_empty()
            && self.unexpected.is_empty()
            && self.unrecorded.is_empty()
            && self.quota_mismatches.is_empty()
            && self.violations.is_empty()
    }

    /// (median, p99, max) of the restart-to-ready times in ms.
    pub fn ready_stats(&self) -> (u64, u64, u64) {
        let mut times = self.ready_ms.clone();
        times.sort_unstable();
        if times.is_empty() {
            return (0, 0, 0);
        }
        let rank = |p: f64| {
            let index = ((p * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1;
            times[index]
        };
        (rank(0.5), rank(0.99), times[times.len() - 1])
    }

    /// The one-line summary.
    pub fn summary_line(&self) -> String {
        let (median, p99, max) = self.ready_stats();
        format!(
            "kills={} lost={} duplicated={} unexpected={} recovered={} settled_by_administrator={} \
             (not certified {}) certified={} restart_to_ready_ms median={median} p99={p99} max={max}",
            self.kills,
            self.lost.len(),
            self.duplicated.len(),
            self.unexpected.len(),
            self.recovered,
            self.settled_by_administrator,
            self.settled_not_certified,
            self.certified,
        )
    }

    /// Everything else, a few lines.
    pub fn details(&self) -> String {
        let mut text = format!(
            "deaths: load={} startup={} (before listening {}) failpoints={:?}\n\
             oracle: checks={} unrecorded={} quota_mismatches={} violations={}\n\
             clients: {}\n\
             wall time {:.1}s",
            self.load_kills,
            self.startup_kills,
            self.startup_kills_before_listening,
            self.failpoint_hits,
            self.checks,
            self.unrecorded.len(),
            self.quota_mismatches.len(),
            self.violations.len(),
            self.clients,
            self.elapsed.as_secs_f64(),
        );
        if self.power_cuts > 0 {
            text.push_str(&format!(
                "\npower cuts: {} (during a start-up {}) unsynced canary lost {} torn tails {} \
                 indexes set aside {}",
                self.power_cuts,
                self.startup_cuts,
                self.unsynced_lost,
                self.torn_tails,
                self.index_set_aside,
            ));
        }
        if self.database_kills > 0 {
            let mut resume = self.resume_ms.clone();
            resume.sort_unstable();
            text.push_str(&format!(
                "\ndatabase kills: {} (503 165 met during {}) certified again after {} \
                 resume_ms median={} max={}",
                self.database_kills,
                self.outages_met,
                self.resumed_then_certified,
                resume.get(resume.len() / 2).copied().unwrap_or(0),
                resume.last().copied().unwrap_or(0),
            ));
        }
        if !self.deaths_per_replica.is_empty() {
            text.push_str(&format!(
                "\nreplicas: deaths per replica {:?}, back on a new machine {} (intents taken \
                 over by the leader {}, after ms {:?}), in doubt surfaced and settled once {}",
                self.deaths_per_replica,
                self.new_machines,
                self.taken_over_by_leader,
                self.takeover_ms,
                self.in_doubt_settled.len(),
            ));
        }
        for (ms, life, before) in &self.slowest {
            text.push_str(&format!(
                "\n  slow restart: life {life} ready after {ms} ms (the life before: {before})"
            ));
        }
        let lists: [(&str, Vec<String>); 7] = [
            ("lost", self.lost.iter().cloned().collect()),
            ("duplicated", self.duplicated.iter().cloned().collect()),
            ("unexpected", self.unexpected.iter().cloned().collect()),
            ("unrecorded", self.unrecorded.iter().cloned().collect()),
            ("quota", self.quota_mismatches.clone()),
            ("violation", self.violations.clone()),
            ("anomaly", self.anomalies.clone()),
        ];
        for (name, items) in lists {
            for item in items.iter().take(20) {
                text.push_str(&format!("\n  {name}: {item}"));
            }
            if items.len() > 20 {
                text.push_str(&format!("\n  {name}: ... {} more", items.len() - 20));
            }
        }
        if let Some(dir) = &self.kept_dir {
            text.push_str(&format!("\nrun directory kept: {}", dir.display()));
        }
        text
    }
}

/// What the clients saw.
#[derive(Debug, Default, Clone)]
pub struct ClientStats {
    /// Requests sent.
    pub posts: u64,
    /// 200 without `Idempotent-Replayed`.
    pub ok_new: u64,
    /// 200 with `Idempotent-Replayed: true`.
    pub ok_replayed: u64,
    /// Deliberate replays of an rn already answered 200.
    pub replays: u64,
    /// No complete answer (refused, reset, cut).
    pub no_answer: u64,
    /// Replicas mode: retries of an rn sent to another replica than its previous try.
    pub retried_elsewhere: u64,
    /// Answers by HTTP status (other than 200).
    pub statuses: BTreeMap<u16, u64>,
    /// Answers other than 200 by HTTP status and `errorCode` (0: none).
    pub codes: BTreeMap<(u16, u64), u64>,
}

impl std::fmt::Display for ClientStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "posts={} ok_new={} ok_replayed={} deliberate_replays={} no_answer={} \
             retried_elsewhere={} other={:?}",
            self.posts,
            self.ok_new,
            self.ok_replayed,
            self.replays,
            self.no_answer,
            self.retried_elsewhere,
            self.codes
        )
    }
}
