//! What the certification service tells about itself, in its own types (no channel's type
//! leaves `certify`): whether it could certify now and why not, each channel's state, the
//! gauges of `/metrics`, the fiscal anomalies of the register, and the probe of a channel for
//! technicians. `board.rs` keeps the status as a snapshot, computed when something changes.

mod board;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Datelike, NaiveDateTime, Utc};

use super::Certifier;
use crate::certify::CertifyError;
use crate::i18n::Message;
use crate::metrics;
use crate::model::{AnomalyRecord, Organization, ProbeReport};

/// Whether the certification path works, for `GET /status`, the dashboard and `/metrics`: a
/// snapshot the service keeps (`status/board.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceStatus {
    /// Store writable and every configured channel able to certify now.
    pub ready: bool,
    /// The store takes writes (none failed, no damage found in its history).
    pub store_ok: bool,
    /// Each channel (configured and sandboxes started), by name.
    pub devices: Vec<ChannelView>,
    /// Channels waiting for a reconciliation.
    pub reconciling: Vec<String>,
    /// Each configured channel that could not certify now, and why, for the log, `/metrics`
    /// and the administrator (it may name every organization bound to it).
    pub not_ready: Vec<(String, Problem)>,
    /// Each configured channel for monitoring (`GET /api/v1/status`: public, so no sandbox,
    /// no organization and no free text).
    pub monitored: Vec<DeviceHealth>,
    /// `monitored` as JSON, rendered once per snapshot.
    pub monitored_json: String,
    /// Why the register cannot be written now, if it cannot (`storage_fault.rs`).
    pub storage_fault: Option<super::StorageFault>,
}

impl ServiceStatus {
    /// Whether `other` says the same, its rendered JSON aside.
    pub(crate) fn says_the_same(&self, other: &ServiceStatus) -> bool {
        self.ready == other.ready
            && self.store_ok == other.store_ok
            && self.devices == other.devices
            && self.reconciling == other.reconciling
            && self.not_ready == other.not_ready
            && self.monitored == other.monitored
            && self.storage_fault == other.storage_fault
    }

    /// `monitored` as JSON, through a `Value` as the route always rendered it (keys in order).
    pub(crate) fn render_monitored(&mut self) {
        self.monitored_json = serde_json::to_value(&self.monitored)
            .and_then(|value| serde_json::to_string(&value))
            .unwrap_or_else(|_| "[]".to_owned());
    }
}

/// One configured channel's state for monitoring.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceHealth {
    /// Its configured name.
    pub name: String,
    /// `box` or `web_api`.
    pub kind: &'static str,
    /// It can certify now.
    pub ready: bool,
    /// Why not, as a fixed code (`link_down`, `box_blocked`, `nif_mismatch`, `settling`, `token_rejected`, `register_behind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<&'static str>,
    /// It answers.
    pub connected: bool,
    /// Since when it answers or not (UTC).
    pub since: DateTime<Utc>,
    /// When it last answered (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reply_at: Option<DateTime<Utc>>,
    /// A box's last contact with the DGI, as it reported it (its own clock, no zone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_dgi_contact: Option<NaiveDateTime>,
}

/// One channel's state, as the dashboard and `/metrics` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelView {
    /// Its configured name.
    pub name: String,
    /// It answers.
    pub connected: bool,
    /// When `connected` last changed.
    pub since: DateTime<Utc>,
    /// The last link error (kept after a reconnect, for diagnosis).
    pub last_error: Option<String>,
    /// When it last answered.
    pub last_reply_at: Option<DateTime<Utc>>,
    /// Invoices waiting for it (not counting the one being served).
    pub queued: usize,
    /// Its last contact with the DGI, as it last reported it (a box).
    pub dgi: Option<DgiContact>,
    /// When its token for the DGI's web API expires, as the DGI last said (the web API).
    pub token_valid: Option<DateTime<Utc>>,
    /// Requests pending on the DGI's web API now (the web API).
    pub pending: Option<usize>,
}

/// A channel's link with the DGI server, as it last reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DgiContact {
    /// Last contact (the channel's clock), if any.
    pub last_contact: Option<NaiveDateTime>,
    /// The link's state, in the channel's words.
    pub state: String,
    /// Invoices sent to the DGI.
    pub sent: Option<u64>,
    /// Invoices stored, not yet sent.
    pub stored: Option<u64>,
    /// The last error, empty when none.
    pub error: String,
}

/// Why a configured device could not certify now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// A fixed code, for `/metrics` labels: `link_down`, `box_blocked`, `nif_mismatch`,
    /// `settling`, `token_rejected` (the web API), `register_behind` (`register_behind.rs`).
    pub code: &'static str,
    /// The kind of channel it is about: `box` or `web_api` (as `Channel::kind`), so that a
    /// person reads "the device" or "the DGI's online service".
    pub channel: &'static str,
    /// In words: English in the log (`Display`), the reader's language on the dashboard's
    /// technical details.
    pub text: Message,
}

impl Certifier {
    /// The status from the channels' state now, the invoices in doubt, the store's health
    /// and `organizations` (no store I/O): each channel's view and problem computed once.
    fn compute_status(&self, organizations: &[Organization]) -> ServiceStatus {
        let reconciling = self.in_doubt.list();
        let mut devices = Vec::new();
        let mut not_ready = Vec::new();
        let mut monitored = Vec::new();
        for (channel, configured) in self.channels.all() {
            let view = channel.view();
            // Ready means the fiscal path: the configured channels (sandboxes start on demand).
            if configured {
                let settling = reconciling.iter().any(|name| name == channel.name());
                let problem = self
                    .journal
                    .registers_behind()
                    .problem(channel.name())
                    .or_else(|| channel.problem(organizations, settling));
                monitored.push(DeviceHealth {
                    name: view.name.clone(),
                    kind: channel.kind(),
                    ready: problem.is_none(),
                    problem: problem.as_ref().map(|problem| problem.code),
                    connected: view.connected,
                    since: view.since,
                    last_reply_at: view.last_reply_at,
                    last_dgi_contact: view.dgi.as_ref().and_then(|d| d.last_contact),
                });
                if let Some(problem) = problem {
                    not_ready.push((channel.name().to_owned(), problem));
                }
            }
            devices.push(view);
        }
        let storage_fault = self.storage_fault();
        let store_ok = self.store_ok() && storage_fault.is_none();
        let ready =
            store_ok && reconciling.is_empty() && !monitored.is_empty() && not_ready.is_empty();
        ServiceStatus {
            ready,
            store_ok,
            devices,
            reconciling,
            not_ready,
            monitored,
            // Rendered once the snapshot is kept (`board.rs`), not at every read.
            monitored_json: String::new(),
            storage_fault,
        }
    }

    /// The store takes writes: none failed, and the check of its history found no damage.
    fn store_ok(&self) -> bool {
        !self.store_failed.load(Ordering::SeqCst) && self.store.refuse_if_damaged().is_ok()
    }

    /// Why `org`'s production channel could not certify now (its code, and words that name
    /// no other organization: the dashboard's); `None` when it could.
    pub fn problem_for(&self, org: &Organization) -> Option<Problem> {
        let channel = self.channels.configured(&org.device)?;
        let settling = self.in_doubt.contains(&org.device);
        let behind = self.journal.registers_behind().problem(&org.device);
        behind.or_else(|| channel.problem(std::slice::from_ref(org), settling))
    }

    /// The fiscal anomalies of the register (counter continuity), oldest first.
    pub fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, CertifyError> {
        Ok(self.store.fiscal_anomalies()?)
    }

    /// The state gauges of `/metrics`: channels, and each organization's quota use this year.
    pub fn gauges(&self) -> Result<metrics::Gauges, CertifyError> {
        let status = self.status();
        let year = Utc::now().with_timezone(&self.settings.offset).year();
        let mut quotas = Vec::new();
        for org in self.store.organizations()? {
            let used = self.store.quota_used(&org.id, year)?;
            quotas.push((org.id.clone(), used, self.admission.quota_of(&org)));
        }
        let anomalies = self.store.fiscal_anomalies()?;
        Ok(metrics::Gauges {
            devices: status
                .devices
                .iter()
                .map(|view| (view.name.clone(), view.connected, view.queued))
                .collect(),
            not_ready: status
                .not_ready
                .iter()
                .map(|(device, problem)| (device.clone(), problem.code.to_string()))
                .collect(),
            configured: self.channels.configured_names(),
            open_anomalies: anomalies
                .iter()
                .filter(|a| a.acknowledged.is_none())
                .fold(BTreeMap::new(), |mut counts, a| {
                    *counts.entry(a.anomaly.device.clone()).or_insert(0u64) += 1;
                    counts
                })
                .into_iter()
                .collect(),
            quotas,
            awaiting_administrator: self.awaiting_counts(),
            token_valid: status
                .devices
                .iter()
                .filter_map(|view| {
                    view.token_valid
                        .map(|at| (view.name.clone(), at.timestamp()))
                })
                .collect(),
            ready: status.ready,
        })
    }

    /// The NIF the configured device `device` is personalized for, as it last said (`org
    /// add` checks an organization's NIF with it; nothing is sent to the device).
    pub fn device_nif(&self, device: &str) -> Result<Option<String>, CertifyError> {
        match self.channels.configured(device) {
            Some(channel) => Ok(channel.known_nif()),
            None => Err(CertifyError::Internal(format!(
                "no configured device is named {device:?} (configured: {})",
                self.channels.configured_names().join(", ")
            ))),
        }
    }

    /// Probes a configured channel (`device probe` through the admin socket): `device`, or
    /// the only configured one.
    pub async fn probe(
        &self,
        device: Option<&str>,
        lang: crate::i18n::Lang,
    ) -> Result<ProbeReport, CertifyError> {
        let names = self.channels.configured_names();
        let name = match device {
            Some(name) => name.to_string(),
            None if names.len() == 1 => names[0].clone(),
            None => {
                return Err(CertifyError::Internal(format!(
                    "several devices are configured ({}): name one with --device",
                    names.join(", ")
                )))
            }
        };
        let Some(channel) = self.channels.configured(&name) else {
            return Err(CertifyError::Internal(format!(
                "no configured device is named {name:?} (configured: {})",
                names.join(", ")
            )));
        };
        channel.probe(lang).await
    }
}

pub(crate) use board::StatusBoard;
