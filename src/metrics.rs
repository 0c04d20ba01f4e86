//! Process-wide counters and histograms, rendered as Prometheus text at `GET /metrics`:
//! certifications by outcome and type, device round-trip time per command, time waited in a
//! device's queue. Gauges that are states (link up, queue depth, quota used) are read when
//! rendering, from the certification service.
//!
//! `/metrics` needs no key, so no label names an organization or anything derived from one
//! unless `[http] metrics_per_organization` is set: the quotas are counted, not listed, and
//! the sandboxes (each organization's own channel, `sandbox-<organization id>`) are recorded
//! under their own names but rendered together under [`SANDBOXES`]. Configured devices keep
//! their names: the operator chose them in `[[devices]]`.
//!
//! Recording is a few atomic operations (and a short lock for a new label pair), so the device
//! and certification layers record directly.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Upper bounds of the histogram buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 90.0,
];

/// A histogram with fixed buckets.
#[derive(Debug, Default)]
struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, value: Duration) {
        let seconds = value.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(value.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// What it holds now, to render or to add to another's.
    fn read(&self) -> HistogramReading {
        HistogramReading {
            counts: std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed)),
            count: self.count.load(Ordering::Relaxed),
            sum_micros: self.sum_micros.load(Ordering::Relaxed),
        }
    }
}

/// A histogram's values at one moment; several add up into one series (the sandboxes).
#[derive(Debug, Default, Clone, Copy)]
struct HistogramReading {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum_micros: u64,
}

impl HistogramReading {
    fn add(&mut self, other: &HistogramReading) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum_micros = self.sum_micros.saturating_add(other.sum_micros);
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            cumulative += count;
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        let count = self.count;
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}");
        let sum = self.sum_micros as f64 / 1e6;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {count}");
    }
}

#[derive(Debug, Default)]
struct Registry {
    certifications: Mutex<BTreeMap<(String, String), u64>>,
    anomalies: Mutex<BTreeMap<(String, String, String), u64>>,
    round_trips: Mutex<BTreeMap<(String, String), &'static Histogram>>,
    queue_waits: Mutex<BTreeMap<String, &'static Histogram>>,
    refusals: Mutex<BTreeMap<&'static str, u64>>,
    sign_ins: Mutex<BTreeMap<&'static str, u64>>,
    alerts_active: Mutex<BTreeMap<String, u64>>,
    alerts_raised: Mutex<BTreeMap<String, u64>>,
    /// The last good backup's time (Unix seconds), 0 for none; `None` until read.
    backup_last_success: Mutex<Option<i64>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

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

/// State gauges read at render time.
#[derive(Debug, Clone, Default)]
pub struct Gauges {
    /// Per device: name, link up, sessions waiting.
    pub devices: Vec<(String, bool, usize)>,
    /// Per organization: id, certified this quota year, annual quota.
    pub quotas: Vec<(String, u64, u64)>,
    /// The configured devices.
    pub configured: Vec<String>,
    /// Configured devices that cannot certify now, and the code of why (`link_down`,
    /// `box_blocked`, `nif_mismatch`, `settling`: a fixed set, never free text).
    pub not_ready: Vec<(String, String)>,
    /// Per device: fiscal anomalies not yet acknowledged.
    pub open_anomalies: Vec<(String, u64)>,
    /// Per device: invoices in doubt waiting for an administrator.
    pub awaiting_administrator: Vec<(String, u64)>,
    /// Per web API device: when its token expires (Unix seconds), as the DGI last said.
    pub token_valid: Vec<(String, i64)>,
    /// Whether the certification path works (`GET /status`).
    pub ready: bool,
}

/// Escapes a label value.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `device` label of every organization's sandbox when organizations are not named: not a
/// name a configured device can have (letters, digits, `-` and `_` only), so that it never
/// mixes with one.
pub const SANDBOXES: &str = "(sandboxes)";

/// How a device is named in a label. A configured device keeps its name (the operator's, from
/// `[[devices]]`); a sandbox (`sandbox-<organization id>`) is named only with
/// `per_organization`, else every sandbox is counted under [`SANDBOXES`].
struct DeviceLabels<'a> {
    configured: &'a [String],
    per_organization: bool,
}

impl DeviceLabels<'_> {
    fn of<'n>(&self, device: &'n str) -> &'n str {
        if self.per_organization || self.configured.iter().any(|c| c == device) {
            device
        } else {
            SANDBOXES
        }
    }

    /// `values` by device label, those under one label folded together with `fold`.
    fn fold<V: Clone>(
        &self,
        values: impl IntoIterator<Item = (String, V)>,
        fold: impl Fn(&mut V, V),
    ) -> BTreeMap<String, V> {
        let mut folded: BTreeMap<String, V> = BTreeMap::new();
        for (device, value) in values {
            match folded.get_mut(self.of(&device)) {
                Some(current) => fold(current, value),
                None => {
                    folded.insert(self.of(&device).to_owned(), value);
                }
            }
        }
        folded
    }
}

/// The Prometheus text exposition of everything; organizations named only when
/// `per_organization` (`/metrics` is public: by default it says how many, not which, and
/// every sandbox, whose channel is named after its organization, is counted under
/// [`SANDBOXES`]).
pub fn render(gauges: &Gauges, per_organization: bool) -> String {
    let mut out = String::new();
    out.push_str("# HELP emcf_ready Whether the certification path works (store writable, devices up, nothing to settle).\n# TYPE emcf_ready gauge\n");
    let _ = writeln!(out, "emcf_ready {}", u8::from(gauges.ready));

    out.push_str("# HELP emcf_certifications_total Answered POST /Invoice by outcome and invoice type.\n# TYPE emcf_certifications_total counter\n");
    for ((outcome, kind), count) in lock(&registry().certifications).iter() {
        let _ = writeln!(
            out,
            "emcf_certifications_total{{outcome=\"{}\",type=\"{}\"}} {count}",
            label(outcome),
            label(kind)
        );
    }

    let devices = DeviceLabels {
        configured: &gauges.configured,
        per_organization,
    };
    render_devices(&mut out, gauges, &devices);
    render_device_traffic(&mut out, &devices);
    render_http(&mut out);
    render_alerts(&mut out);
    render_backup(&mut out);
    if per_organization {
        render_quotas(&mut out, gauges);
    } else {
        render_quota_totals(&mut out, gauges);
    }
    out
}

/// What the HTTP server turned away, and the dashboard's sign-ins.
fn render_http(out: &mut String) {
    out.push_str("# HELP emcf_http_refused_total Connections or requests turned away before being served, by reason.\n# TYPE emcf_http_refused_total counter\n");
    for (reason, count) in lock(&registry().refusals).iter() {
        let _ = writeln!(
            out,
            "emcf_http_refused_total{{reason=\"{reason}\"}} {count}"
        );
    }
    out.push_str("# HELP emcf_dashboard_sign_ins_total Dashboard sign-in attempts by outcome.\n# TYPE emcf_dashboard_sign_ins_total counter\n");
    for (outcome, count) in lock(&registry().sign_ins).iter() {
        let _ = writeln!(
            out,
            "emcf_dashboard_sign_ins_total{{outcome=\"{outcome}\"}} {count}"
        );
    }
}

/// The alerts, by kind only (never by organization: see `alerts`).
fn render_backup(out: &mut String) {
    if let Some(at) = *lock(&registry().backup_last_success) {
        out.push_str("# HELP emcf_backup_last_success_timestamp_seconds When the last good backup was taken (Unix time; 0: never).\n# TYPE emcf_backup_last_success_timestamp_seconds gauge\n");
        out.push_str(&format!(
            "emcf_backup_last_success_timestamp_seconds {at}\n"
        ));
    }
}

fn render_alerts(out: &mut String) {
    out.push_str("# HELP emcf_alerts_active Alerts raised and not cleared, by kind (quota_80, quota_90, quota_100, channel_down, dgi_contact_old, in_doubt, backup_old, backup_command_failed).\n# TYPE emcf_alerts_active gauge\n");
    for (kind, count) in lock(&registry().alerts_active).iter() {
        let _ = writeln!(
            out,
            "emcf_alerts_active{{kind=\"{}\"}} {count}",
            label(kind)
        );
    }
    out.push_str("# HELP emcf_alerts_raised_total Alerts raised since the start, by kind.\n# TYPE emcf_alerts_raised_total counter\n");
    for (kind, count) in lock(&registry().alerts_raised).iter() {
        let _ = writeln!(
            out,
            "emcf_alerts_raised_total{{kind=\"{}\"}} {count}",
            label(kind)
        );
    }
}

/// How many organizations there are and how many have used their whole quota, unnamed.
fn render_quota_totals(out: &mut String, gauges: &Gauges) {
    out.push_str(
        "# HELP emcf_organizations Organizations served.\n# TYPE emcf_organizations gauge\n",
    );
    let _ = writeln!(out, "emcf_organizations {}", gauges.quotas.len());
    let exhausted = gauges
        .quotas
        .iter()
        .filter(|(_, used, quota)| used >= quota)
        .count();
    out.push_str("# HELP emcf_organizations_quota_exhausted Organizations whose annual quota is used up (429).\n# TYPE emcf_organizations_quota_exhausted gauge\n");
    let _ = writeln!(out, "emcf_organizations_quota_exhausted {exhausted}");
}

/// The devices' state: link, readiness and why not, fiscal anomalies, queue depth. The
/// sandboxes folded together (`devices`): link up only if every one is, the others summed,
/// the earliest token expiry.
fn render_devices(out: &mut String, gauges: &Gauges, devices: &DeviceLabels<'_>) {
    let links = devices.fold(
        gauges
            .devices
            .iter()
            .map(|(device, up, queued)| (device.clone(), (*up, *queued))),
        |(up, queued), (other_up, other_queued)| {
            *up &= other_up;
            *queued += other_queued;
        },
    );
    let sum = |values: &[(String, u64)]| {
        devices.fold(values.iter().cloned(), |count, other| *count += other)
    };
    out.push_str("# HELP emcf_device_link_up Whether the device answers (1) or not (0).\n# TYPE emcf_device_link_up gauge\n");
    for (device, (up, _)) in &links {
        let _ = writeln!(
            out,
            "emcf_device_link_up{{device=\"{}\"}} {}",
            label(device),
            u8::from(*up)
        );
    }
    out.push_str("# HELP emcf_device_ready Whether the configured device could certify an invoice now (1) or not (0, see emcf_device_not_ready).\n# TYPE emcf_device_ready gauge\n");
    for device in &gauges.configured {
        let ready = !gauges.not_ready.iter().any(|(d, _)| d == device);
        let _ = writeln!(
            out,
            "emcf_device_ready{{device=\"{}\"}} {}",
            label(device),
            u8::from(ready)
        );
    }
    out.push_str("# HELP emcf_device_not_ready Why a configured device cannot certify now (1 while it lasts): link_down, box_blocked, nif_mismatch or settling; the words are in the log and on the dashboard.\n# TYPE emcf_device_not_ready gauge\n");
    for (device, reason) in &gauges.not_ready {
        let _ = writeln!(
            out,
            "emcf_device_not_ready{{device=\"{}\",reason=\"{}\"}} 1",
            label(device),
            label(reason)
        );
    }
    out.push_str("# HELP emcf_fiscal_anomalies_open Fiscal anomalies (a box's counters contradicting the register) not yet acknowledged.\n# TYPE emcf_fiscal_anomalies_open gauge\n");
    for (device, count) in &sum(&gauges.open_anomalies) {
        let _ = writeln!(
            out,
            "emcf_fiscal_anomalies_open{{device=\"{}\"}} {count}",
            label(device)
        );
    }
    out.push_str("# HELP emcf_invoices_in_doubt Invoices whose outcome only an administrator can settle (emcf-gateway intent list / intent resolve).\n# TYPE emcf_invoices_in_doubt gauge\n");
    for (device, count) in &sum(&gauges.awaiting_administrator) {
        let _ = writeln!(
            out,
            "emcf_invoices_in_doubt{{device=\"{}\"}} {count}",
            label(device)
        );
    }
    out.push_str("# HELP emcf_token_valid_until_seconds When the web API token of the device expires (Unix time), as the DGI last said.\n# TYPE emcf_token_valid_until_seconds gauge\n");
    let tokens = devices.fold(gauges.token_valid.iter().cloned(), |until, other| {
        *until = (*until).min(other);
    });
    for (device, until) in &tokens {
        let _ = writeln!(
            out,
            "emcf_token_valid_until_seconds{{device=\"{}\"}} {until}",
            label(device)
        );
    }
    out.push_str("# HELP emcf_device_queue_depth Sessions waiting for the device.\n# TYPE emcf_device_queue_depth gauge\n");
    for (device, (_, queued)) in &links {
        let _ = writeln!(
            out,
            "emcf_device_queue_depth{{device=\"{}\"}} {queued}",
            label(device)
        );
    }
}

/// What crossed the devices' lines: reply anomalies, round trips, queue waits (the sandboxes
/// added together unless organizations are named).
fn render_device_traffic(out: &mut String, devices: &DeviceLabels<'_>) {
    let mut anomalies: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for ((device, cmd, field), count) in lock(&registry().anomalies).iter() {
        *anomalies
            .entry((devices.of(device).to_owned(), cmd.clone(), field.clone()))
            .or_insert(0) += count;
    }
    out.push_str("# HELP emcf_device_reply_anomalies_total Replies that differed from PROTOCOL.md in a field the gateway reads tolerantly, by device, command and field.\n# TYPE emcf_device_reply_anomalies_total counter\n");
    for ((device, cmd, field), count) in &anomalies {
        let _ = writeln!(
            out,
            "emcf_device_reply_anomalies_total{{device=\"{}\",command=\"{}\",field=\"{}\"}} {count}",
            label(device),
            label(cmd),
            label(field)
        );
    }

    let mut round_trips: BTreeMap<(String, String), HistogramReading> = BTreeMap::new();
    for ((device, cmd), h) in lock(&registry().round_trips).iter() {
        round_trips
            .entry((devices.of(device).to_owned(), cmd.clone()))
            .or_default()
            .add(&h.read());
    }
    out.push_str("# HELP emcf_device_round_trip_seconds One command exchange with the device, retries included (a web API device: one call).\n# TYPE emcf_device_round_trip_seconds histogram\n");
    for ((device, cmd), h) in &round_trips {
        h.render(
            out,
            "emcf_device_round_trip_seconds",
            &format!("device=\"{}\",command=\"{}\"", label(device), label(cmd)),
        );
    }
    let mut waits: BTreeMap<String, HistogramReading> = BTreeMap::new();
    for (device, h) in lock(&registry().queue_waits).iter() {
        waits
            .entry(devices.of(device).to_owned())
            .or_default()
            .add(&h.read());
    }
    out.push_str("# HELP emcf_device_queue_wait_seconds Time an invoice waited for the device.\n# TYPE emcf_device_queue_wait_seconds histogram\n");
    for (device, h) in &waits {
        h.render(
            out,
            "emcf_device_queue_wait_seconds",
            &format!("device=\"{}\"", label(device)),
        );
    }
}

/// Each organization's quota use and limit.
fn render_quotas(out: &mut String, gauges: &Gauges) {
    out.push_str("# HELP emcf_quota_used Production invoices certified this quota year.\n# TYPE emcf_quota_used gauge\n");
    for (org, used, _) in &gauges.quotas {
        let _ = writeln!(out, "emcf_quota_used{{org=\"{}\"}} {used}", label(org));
    }
    out.push_str("# HELP emcf_quota_limit Annual quota of the organization's plan.\n# TYPE emcf_quota_limit gauge\n");
    for (org, _, quota) in &gauges.quotas {
        let _ = writeln!(out, "emcf_quota_limit{{org=\"{}\"}} {quota}", label(org));
    }
}

#[cfg(test)]
mod tests;
