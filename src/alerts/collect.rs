//! What the alerts look at: the service's state and the register read into a [`Snapshot`]
//! at each evaluation (`engine.rs`).

use std::path::Path;

use chrono::{DateTime, Utc};
use tracing::warn;

use super::conditions::{BackupFacts, ChannelFacts, OrgFacts, Snapshot};
use super::engine::EngineSettings;
use super::AlertError;
use crate::admin::backup::LastBackup;
use crate::admin::{Admin, EntryFilter};
use crate::certify::Certifier;
use crate::metrics;
use crate::model::Environment;

/// What the alerts look at now: every organization's quota use and invoices in doubt, every
/// configured channel's link and DGI contact.
pub fn collect(
    certifier: &Certifier,
    admin: &Admin,
    settings: &EngineSettings,
) -> Result<Snapshot, AlertError> {
    let service = |e: &dyn std::fmt::Display| AlertError::Service(e.to_string());
    let now: DateTime<Utc> = Utc::now();
    let gauges = certifier.gauges().map_err(|e| service(&e))?;
    let status = certifier.status();
    let open = certifier.open_intents().map_err(|e| service(&e))?;
    let late = chrono::Duration::from_std(settings.alerts.channel_down()).unwrap_or_default();
    let mut orgs = Vec::new();
    for org in admin.org_list().map_err(|e| service(&e))? {
        let shown = admin.org_show(&org.id).map_err(|e| service(&e))?;
        // Production only: the sandbox's are a developer's tests.
        let mine = open
            .iter()
            .filter(|i| i.org == org.id && i.environment == Environment::Production);
        let in_doubt = mine
            .clone()
            .filter(|i| i.reason.is_some() || now - i.received_at >= late)
            .count() as u64;
        let waiting = mine.filter(|i| i.reason.is_some()).count() as u64;
        orgs.push(OrgFacts {
            year: shown.quota.year,
            used: shown.quota.used,
            quota: shown.quota.quota,
            in_doubt,
            waiting,
            org,
        });
    }
    let behind = certifier.registers_behind();
    let channels = status
        .devices
        .iter()
        .filter(|view| gauges.configured.contains(&view.name))
        .map(|view| ChannelFacts {
            name: view.name.clone(),
            kind: status
                .monitored
                .iter()
                .find(|health| health.name == view.name)
                .map_or("box", |health| health.kind),
            connected: view.connected,
            since: view.since,
            last_contact: view.dgi.as_ref().map(|dgi| dgi.last_contact),
            register_behind: behind
                .iter()
                .find(|(device, _)| *device == view.name)
                .map(|(_, missing)| missing.clone())
                .unwrap_or_default(),
        })
        .collect();
    Ok(Snapshot {
        now,
        local_now: now.with_timezone(&settings.zone).naive_local(),
        orgs,
        channels,
        backup: None,
        register_fault: certifier
            .storage_fault()
            .map(|fault| (fault.kind.label().to_owned(), fault.since)),
    })
}

/// The backups of `state_dir`: its last good copy as recorded by `emcf-gateway backup`
/// (also set in `/metrics`), and when the register's first production entry was made.
/// `None` when the record cannot be read (logged): nothing is raised or cleared then.
pub fn backup_facts(state_dir: &Path, admin: &Admin) -> Option<BackupFacts> {
    let last = match LastBackup::read(state_dir) {
        Ok(last) => last,
        Err(error) => {
            warn!(%error, "alerts: the last backup's record cannot be read");
            return None;
        }
    };
    metrics::backup_last_success(last.as_ref().map(|l| l.at));
    let first = admin
        .log_list(EntryFilter {
            org: None,
            environment: Environment::Production,
            after_sequence: 0,
            limit: 1,
        })
        .map_err(|error| warn!(%error, "alerts: the register's first entry cannot be read"))
        .ok()?;
    Some(BackupFacts {
        last: last.as_ref().map(|l| l.at),
        first_entry: first.first().map(|e| e.certified_at),
        command_failed: last
            .and_then(|l| l.command)
            .filter(|run| !run.ok)
            .map(|run| run.at),
    })
}
