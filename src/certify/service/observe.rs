//! What the certification service tells about itself: whether it could certify now and why
//! not (`readiness.rs`), the gauges of `/metrics`, the fiscal anomalies of the register, and
//! the probe of a device for technicians.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use chrono::{Datelike, Utc};

use super::{Certifier, ServiceStatus};
use crate::certify::readiness;
use crate::certify::readiness::Problem;
use crate::certify::CertifyError;
use crate::device::probe::{probe, ProbeReport};
use crate::metrics;
use crate::model::{AnomalyRecord, Organization};

impl Certifier {
    /// Whether the certification path works; logs each change of a device's readiness.
    pub fn status(&self) -> ServiceStatus {
        let all = self.devices.statuses();
        let mut reconciling: Vec<String> = self.lock_in_doubt().iter().cloned().collect();
        reconciling.sort();
        let organizations = self.store.organizations().unwrap_or_default();
        // Ready means the fiscal path: the configured devices (sandboxes start on demand).
        let not_ready: Vec<(String, Problem)> = all
            .iter()
            .filter(|(_, _, configured)| *configured)
            .filter_map(|(name, status, _)| {
                let settling = reconciling.contains(name);
                readiness::problem(name, status, &organizations, settling)
                    .map(|problem| (name.clone(), problem))
            })
            .collect();
        self.reported.log_changes(&not_ready);
        let ready = !self.store_failed.load(Ordering::SeqCst)
            && self.store.refuse_if_damaged().is_ok()
            && reconciling.is_empty()
            && all.iter().any(|(_, _, configured)| *configured)
            && not_ready.is_empty();
        let devices = all
            .into_iter()
            .map(|(name, status, _)| (name, status))
            .collect();
        ServiceStatus {
            ready,
            devices,
            reconciling,
            not_ready,
        }
    }

    /// Computes the status every `every`, so that a device's readiness changes reach the log
    /// even when nothing polls `/status`.
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

    /// Why `org`'s production device could not certify now, in words that name no other
    /// organization (the dashboard's); `None` when it could.
    pub fn problem_for(&self, org: &Organization) -> Option<String> {
        let status = self.devices.statuses();
        let (_, link, _) = status
            .iter()
            .find(|(name, _, configured)| *configured && *name == org.device)?;
        let settling = self.lock_in_doubt().contains(&org.device);
        readiness::problem(&org.device, link, std::slice::from_ref(org), settling)
            .map(|problem| problem.text)
    }

    /// The fiscal anomalies of the register (counter continuity), oldest first.
    pub fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, CertifyError> {
        Ok(self.store.fiscal_anomalies()?)
    }

    /// The state gauges of `/metrics`: devices, and each organization's quota use this year.
    pub fn gauges(&self) -> Result<metrics::Gauges, CertifyError> {
        let status = self.status();
        let year = Utc::now().with_timezone(&self.settings.offset).year();
        let mut quotas = Vec::new();
        for org in self.store.organizations()? {
            let used = self.store.quota_used(&org.id, year)?;
            quotas.push((org.id.clone(), used, self.quota_of(&org)));
        }
        let anomalies = self.store.fiscal_anomalies()?;
        Ok(metrics::Gauges {
            devices: status
                .devices
                .iter()
                .map(|(name, link)| (name.clone(), link.connected, link.queued))
                .collect(),
            not_ready: status
                .not_ready
                .iter()
                .map(|(device, problem)| (device.clone(), problem.code.to_string()))
                .collect(),
            configured: self.devices.configured_names(),
            open_anomalies: anomalies
                .iter()
                .filter(|a| a.acknowledged.is_none())
                .fold(std::collections::BTreeMap::new(), |mut counts, a| {
                    *counts.entry(a.anomaly.device.clone()).or_insert(0u64) += 1;
                    counts
                })
                .into_iter()
                .collect(),
            quotas,
            ready: status.ready,
        })
    }

    /// Probes a configured device (`device probe` through the admin socket): `device`, or the
    /// only configured one.
    pub async fn probe(&self, device: Option<&str>) -> Result<ProbeReport, CertifyError> {
        let names = self.devices.configured_names();
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
        let handle = self
            .devices
            .by_name(&name)
            .filter(|_| names.contains(&name));
        let Some(handle) = handle else {
            return Err(CertifyError::Internal(format!(
                "no configured device is named {name:?} (configured: {})",
                names.join(", ")
            )));
        };
        probe(&handle).await.map_err(CertifyError::from_device)
    }
}
