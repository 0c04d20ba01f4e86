//! Recording: the process-wide registry of counters and histograms, and the calls the layers
//! make to count what happened (a few atomic operations, or a short lock for a new label set).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::histogram::Histogram;

#[derive(Debug, Default)]
pub(super) struct Registry {
    pub(super) certifications: Mutex<BTreeMap<(String, String), u64>>,
    pub(super) anomalies: Mutex<BTreeMap<(String, String, String), u64>>,
    pub(super) round_trips: Mutex<BTreeMap<(String, String), &'static Histogram>>,
    pub(super) queue_waits: Mutex<BTreeMap<String, &'static Histogram>>,
    pub(super) refusals: Mutex<BTreeMap<&'static str, u64>>,
    pub(super) sign_ins: Mutex<BTreeMap<&'static str, u64>>,
    pub(super) alerts_active: Mutex<BTreeMap<String, u64>>,
    pub(super) alerts_raised: Mutex<BTreeMap<String, u64>>,
    /// The last good backup's time (Unix seconds), 0 for none; `None` until read.
    pub(super) backup_last_success: Mutex<Option<i64>>,
    /// Why the register cannot be written (`Some(None)`: it can); `None` until watched.
    pub(super) register_write_fault: Mutex<Option<Option<&'static str>>>,
}

pub(super) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

pub(super) use crate::sync::lock;

/// One histogram per label set, created on first use and kept for the process's life (the
/// label sets are few: devices x commands).
fn histogram<K: Ord + Clone>(
    map: &Mutex<BTreeMap<K, &'static Histogram>>,
    key: &K,
) -> &'static Histogram {
    let mut map = lock(map);
    if let Some(h) = map.get(key) {
        return h;
    }
    let h: &'static Histogram = Box::leak(Box::default());
    map.insert(key.clone(), h);
    h
}

/// Counts one answered `POST /Invoice`: `outcome` (`certified`, `replayed`, `invalid`,
/// `unauthorized`, `conflict`, `quota`, `refused`, `unavailable`, `error`) and invoice type
/// (`FV`..., or `unknown` when the body was not valid).
pub fn certification(outcome: &str, invoice_type: &str) {
    let mut map = lock(&registry().certifications);
    *map.entry((outcome.to_string(), invoice_type.to_string()))
        .or_insert(0) += 1;
}

/// One command exchange with `device` (command byte `cmd`) took `elapsed`.
pub fn device_round_trip(device: &str, cmd: u8, elapsed: Duration) {
    histogram(
        &registry().round_trips,
        &(device.to_string(), mcf_sfe::command::code::name(cmd)),
    )
    .observe(elapsed);
}

/// One call `call` (`request`, `confirm`...) of `device`'s web API took `elapsed`, counted
/// with the box's command exchanges.
pub fn web_api_round_trip(device: &str, call: &'static str, elapsed: Duration) {
    histogram(
        &registry().round_trips,
        &(device.to_string(), call.to_string()),
    )
    .observe(elapsed);
}

/// A reply of `device` to command `cmd` differed from PROTOCOL.md in `field` (read on:
/// the gateway does not need that field).
pub fn device_reply_anomaly(device: &str, cmd: u8, field: &str) {
    let mut map = lock(&registry().anomalies);
    *map.entry((
        device.to_string(),
        mcf_sfe::command::code::name(cmd),
        field.to_string(),
    ))
    .or_insert(0) += 1;
}

/// A connection or request the HTTP server turned away before serving it, by `reason`
/// (`per_peer`: too many connections from one address; `dashboard_busy`: the dashboard's
/// share of requests in use; `body_too_slow`).
pub fn connection_refused(reason: &'static str) {
    *lock(&registry().refusals).entry(reason).or_insert(0) += 1;
}

/// A dashboard sign-in attempt by `outcome` (`ok`, `bad_token`, `throttled`, `bad_form`).
pub fn dashboard_sign_in(outcome: &'static str) {
    *lock(&registry().sign_ins).entry(outcome).or_insert(0) += 1;
}

/// The alerts raised now, by kind (`quota_80`, `channel_down`...; set by `alerts`). Every kind
/// named here gets its `emcf_alerts_raised_total` series at 0 too, so that Prometheus's
/// `increase()` sees the first raise.
pub fn alerts_active(by_kind: BTreeMap<String, u64>) {
    {
        let mut raised = lock(&registry().alerts_raised);
        for kind in by_kind.keys() {
            raised.entry(kind.clone()).or_insert(0);
        }
    }
    *lock(&registry().alerts_active) = by_kind;
}

/// The last good backup's time as `<state_dir>/last-backup.json` says it (`None`: never);
/// set by `alerts` at each evaluation.
pub fn backup_last_success(at: Option<chrono::DateTime<chrono::Utc>>) {
    *lock(&registry().backup_last_success) = Some(at.map_or(0, |at| at.timestamp()));
}

/// Why the register cannot be written now (`no_space`, `read_only`, `io`), or `None` when it
/// can; set by the certification service's storage watch.
pub fn register_write_fault(kind: Option<&'static str>) {
    *lock(&registry().register_write_fault) = Some(kind);
}

/// An alert of `kind` was raised.
pub fn alert_raised(kind: &str) {
    *lock(&registry().alerts_raised)
        .entry(kind.to_string())
        .or_insert(0) += 1;
}

/// `POST /Invoice` answered so far, whatever the outcome (the alerts evaluate again when it
/// moves).
pub fn answered_invoices() -> u64 {
    lock(&registry().certifications).values().sum()
}

/// A session waited `elapsed` in `device`'s queue before it got the port.
pub fn queue_wait(device: &str, elapsed: Duration) {
    histogram(&registry().queue_waits, &device.to_string()).observe(elapsed);
}
