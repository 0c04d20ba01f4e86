//! What the certification service tells about itself, in its own types (no channel's type
//! leaves `certify`): whether it could certify now and why not, each channel's state, the
//! gauges of `/metrics`, the fiscal anomalies of the register, and the probe of a channel for
//! technicians.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Datelike, NaiveDateTime, Utc};
use tracing::{info, warn};

use super::Certifier;
use crate::certify::CertifyError;
use crate::i18n::Message;
use crate::metrics;
use crate::model::{AnomalyRecord, Organization, ProbeReport};

/// Whether the certification path works, for `GET /status`, the dashboard and `/metrics`.
#[derive(Debug, Clone)]
pub struct ServiceStatus {
    /// Store writable and every configured channel able to certify now.
    pub ready: bool,
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
    /// Why not, as a fixed code (`link_down`, `box_blocked`, `nif_mismatch`, `settling`, `token_rejected`).
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
    /// `settling`, `token_rejected` (the web API).
    pub code: &'static str,
    /// The kind of channel it is about: `box` or `web_api` (as `Channel::kind`), so that a
    /// person reads "the device" or "the DGI's online service".
    pub channel: &'static str,
    /// In words: English in the log (`Display`), the reader's language on the dashboard's
    /// technical details.
    pub text: Message,
}

impl Certifier {
    /// Whether the certification path works; logs each change of a channel's readiness.
    pub fn status(&self) -> ServiceStatus {
        let all = self.channels.all();
        let reconciling = self.in_doubt.list();
        let organizations = self.store.organizations().unwrap_or_default();
        // Ready means the fiscal path: the configured channels (sandboxes start on demand).
        let not_ready: Vec<(String, Problem)> = all
            .iter()
            .filter(|(_, configured)| *configured)
            .filter_map(|(channel, _)| {
                let settling = reconciling.iter().any(|name| name == channel.name());
                channel
                    .problem(&organizations, settling)
                    .map(|problem| (channel.name().to_owned(), problem))
            })
            .collect();
        self.reported.log_changes(&not_ready);
        let ready = !self.store_failed.load(Ordering::SeqCst)
            && self.store.refuse_if_damaged().is_ok()
            && reconciling.is_empty()
            && all.iter().any(|(_, configured)| *configured)
            && not_ready.is_empty();
        let monitored = all
            .iter()
            .filter(|(_, configured)| *configured)
            .map(|(channel, _)| {
                let view = channel.view();
                let problem = not_ready
                    .iter()
                    .find(|(name, _)| name == channel.name())
                    .map(|(_, problem)| problem.code);
                DeviceHealth {
                    name: view.name.clone(),
                    kind: channel.kind(),
                    ready: problem.is_none(),
                    problem,
                    connected: view.connected,
                    since: view.since,
                    last_reply_at: view.last_reply_at,
                    last_dgi_contact: view.dgi.as_ref().and_then(|d| d.last_contact),
                }
            })
            .collect();
        ServiceStatus {
            ready,
            monitored,
            devices: all.iter().map(|(channel, _)| channel.view()).collect(),
            reconciling,
            not_ready,
        }
    }

    /// Computes the status every `every`, so that a channel's readiness changes reach the
    /// log even when nothing polls `/status`.
    pub fn spawn_status_watch(self: &Arc<Self>, every: Duration) {
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(this) = this.upgrade() else { return };
                let _ = this.status();
            }
        });
    }

    /// Why `org`'s production channel could not certify now (its code, and words that name
    /// no other organization: the dashboard's); `None` when it could.
    pub fn problem_for(&self, org: &Organization) -> Option<Problem> {
        let channel = self.channels.configured(&org.device)?;
        let settling = self.in_doubt.contains(&org.device);
        channel.problem(std::slice::from_ref(org), settling)
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

/// The reasons last logged, per device: a change is logged once, not at every poll.
#[derive(Default)]
pub(super) struct Reported {
    last: Mutex<BTreeMap<String, String>>,
}

impl Reported {
    /// Logs each device whose reason appeared, changed or went away since the last call.
    pub(super) fn log_changes(&self, problems: &[(String, Problem)]) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now: BTreeMap<String, String> = problems
            .iter()
            .map(|(device, problem)| (device.clone(), problem.text.to_string()))
            .collect();
        for (device, reason) in &now {
            if last.get(device) != Some(reason) {
                warn!(%device, %reason, "status false: this device cannot certify now");
            }
        }
        for device in last.keys() {
            if !now.contains_key(device) {
                info!(%device, "this device can certify again");
            }
        }
        *last = now;
    }
}
