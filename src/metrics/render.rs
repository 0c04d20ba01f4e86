//! Rendering: the Prometheus text of what was recorded and of the state gauges the
//! certification service gives at render time ([`Gauges`]); organizations named only when
//! asked, every sandbox otherwise under [`SANDBOXES`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::histogram::HistogramReading;
use super::record::{lock, registry};

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
pub(super) fn label(value: &str) -> String {
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
    render_register_fault(&mut out);
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

/// Whether the register can be written: one line per kind of fault, 1 for the one now.
fn render_register_fault(out: &mut String) {
    let Some(now) = *lock(&registry().register_write_fault) else {
        return;
    };
    out.push_str("# HELP emcf_register_write_fault The invoice register cannot be written, by why (no_space, read_only, io, database): new invoices are refused until it can.\n# TYPE emcf_register_write_fault gauge\n");
    for kind in ["no_space", "read_only", "io", "database"] {
        let value = u8::from(now == Some(kind));
        let _ = writeln!(out, "emcf_register_write_fault{{kind=\"{kind}\"}} {value}");
    }
}

fn render_alerts(out: &mut String) {
    out.push_str("# HELP emcf_alerts_active Alerts raised and not cleared, by kind (quota_80, quota_90, quota_100, channel_down, dgi_contact_old, in_doubt, backup_old, backup_command_failed, register_unwritable).\n# TYPE emcf_alerts_active gauge\n");
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
