//! The alert engine: evaluates the conditions every [`EVERY`] and soon after each answered
//! invoice, raises and clears (the log, `/metrics`), e-mails what is raised and not yet
//! sent, keeps the state file, and answers the dashboard's banners.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::FixedOffset;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::collect::{backup_facts, collect};
use super::conditions::{evaluate, undecided, Snapshot};
use super::kind::{AlertKey, AlertKind, Subject};
use super::mail::{Delivery, Mailer};
use super::notice_mail;
use super::shared::{Scope, Shared};
use super::state::{AlertState, RaisedAlert, Transitions, STATE_FILE};
use super::{text, AlertError};
use super::{AlertSettings, SmtpSettings};
use crate::admin::backup::LastBackup;
use crate::admin::Admin;
use crate::certify::Certifier;
use crate::i18n::Lang;
use crate::metrics;
use crate::model::Organization;
use crate::notices::Notices;
use crate::sync;

/// How often the conditions are evaluated when nothing happens.
pub const EVERY: Duration = Duration::from_secs(30);
/// How often the engine looks whether an invoice was answered since its last evaluation.
const TICK: Duration = Duration::from_secs(1);

/// What the engine needs besides the service.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// `[alerts]`.
    pub alerts: AlertSettings,
    /// The configured time zone (the quota year, times in e-mails).
    pub zone: FixedOffset,
    /// The e-mails' language (the configuration's `language`).
    pub lang: Lang,
    /// `public_url`: the e-mails link to its dashboard.
    pub public_url: Option<String>,
}

/// The alerts of a running gateway.
pub struct AlertEngine {
    settings: EngineSettings,
    state_dir: PathBuf,
    path: PathBuf,
    pub(super) state: Mutex<AlertState>,
    /// Held while a state is saved: one save at a time, in the order of the changes.
    saving: Mutex<()>,
    mailer: Option<Mailer>,
    /// The change notices to e-mail (none without: tests).
    notices: Option<Arc<Notices>>,
    /// Woken when something is to send now (a notice published through the admin socket).
    wake: Notify,
    /// Over PostgreSQL, the state shared by replicas (`shared.rs`); `None` on the embedded
    /// store, whose state is `alerts.json` alone.
    pub(super) shared: Mutex<Option<Shared>>,
}

impl AlertEngine {
    /// The engine of `state_dir`, its raised alerts read back from `alerts.json` (missing or
    /// unreadable: none raised, logged). With `smtp`, alerts are e-mailed; a relay that
    /// cannot be set up (password file unreadable) is an error.
    pub fn open(
        state_dir: &Path,
        settings: EngineSettings,
        smtp: Option<&SmtpSettings>,
    ) -> Result<AlertEngine, AlertError> {
        let path = state_dir.join(STATE_FILE);
        let state = AlertState::load(&path).unwrap_or_else(|error| {
            warn!(%error, "alerts: state file not read; starting with no alert raised");
            AlertState::default()
        });
        if let Ok(last) = LastBackup::read(state_dir) {
            metrics::backup_last_success(last.map(|l| l.at));
        }
        let mailer = smtp.map(Mailer::new).transpose()?;
        if mailer.is_none() {
            info!("alerts: no [smtp] configured, alerts are not e-mailed");
        } else if settings.public_url.is_none() {
            info!("alerts: no public_url configured, the e-mails tell how to reach the dashboard without a link");
        }
        let engine = AlertEngine {
            settings,
            state_dir: state_dir.to_path_buf(),
            path,
            state: Mutex::new(state),
            saving: Mutex::new(()),
            mailer,
            notices: None,
            wake: Notify::new(),
            shared: Mutex::new(None),
        };
        engine.publish();
        Ok(engine)
    }

    /// The engine also e-mails the change notices of `notices`.
    pub fn with_notices(mut self, notices: Arc<Notices>) -> AlertEngine {
        self.notices = Some(notices);
        self
    }

    /// Sends what is pending now rather than at the next evaluation (a notice was published).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// The alerts raised for `org`: its own, and those of its device.
    pub fn active_for(&self, org: &Organization) -> Vec<RaisedAlert> {
        sync::lock(&self.state)
            .raised()
            .filter(|alert| match &alert.key.subject {
                Subject::Org(id) => *id == org.id,
                Subject::Device(name) => *name == org.device,
                Subject::Gateway => true,
            })
            .cloned()
            .collect()
    }

    /// Moves to what `snapshot` shows: logs each raised and cleared alert, counts them,
    /// saves the state when what the file keeps changed (blocking: reads nothing, but fsyncs;
    /// the engine calls it off the runtime's workers).
    pub fn apply(&self, snapshot: &Snapshot) -> Transitions {
        let conditions = evaluate(snapshot, &self.settings.alerts);
        let unknown = undecided(snapshot, &self.settings.alerts);
        let saving = sync::lock(&self.saving);
        let mut state = sync::lock(&self.state);
        let before = state.clone();
        let transitions = state.step_keeping(&conditions, &unknown, snapshot.now);
        for alert in &transitions.raised {
            warn!(alert = %alert.key.kind, about = %alert.key.subject, facts = ?alert.facts, "alert raised");
            metrics::alert_raised(&alert.key.kind.label());
        }
        for alert in &transitions.cleared {
            info!(alert = %alert.key.kind, about = %alert.key.subject, "alert cleared");
        }
        // Several quota thresholds crossed at once: the highest one is e-mailed.
        suppress_lower_quota_mails(&mut state, &transitions);
        let to_save = state.differs_on_disk(&before).then(|| state.clone());
        drop(state);
        if let Some(state) = to_save {
            self.save(&state);
        }
        drop(saving);
        self.publish();
        transitions
    }

    /// Changes the state with `change` and saves it if what the file keeps changed, the
    /// state's lock not held while saving (the dashboard reads it).
    pub(super) async fn change(self: &Arc<Self>, change: impl FnOnce(&mut AlertState)) {
        let to_save = {
            let mut state = sync::lock(&self.state);
            let before = state.clone();
            change(&mut state);
            state.differs_on_disk(&before).then(|| state.clone())
        };
        if let Some(state) = to_save {
            let engine = Arc::clone(self);
            let _ = tokio::task::spawn_blocking(move || {
                let _saving = sync::lock(&engine.saving);
                engine.save(&state);
            })
            .await;
        }
    }

    /// E-mails every raised alert not yet sent to its organizations' administrators. A relay
    /// that cannot be reached ends the round (all tried again at the next evaluation), a
    /// refusal for now is tried again, a permanent refusal is logged and given up.
    ///
    /// Over PostgreSQL each e-mail is first recorded in the shared state, fenced, and sent
    /// only once recorded (`shared.rs`): the service's alerts by the leader, this replica's
    /// own (its boxes, its state directory) and its change notices by itself.
    pub async fn send_pending(self: &Arc<Self>, orgs: &[Organization], certifier: &Arc<Certifier>) {
        // An organization gone or removed from the list: nobody left to tell.
        let known: Vec<&str> = orgs.iter().map(|o| o.id.as_str()).collect();
        self.change(|state| {
            let keys: Vec<_> = state.raised().map(|a| a.key.clone()).collect();
            for key in keys {
                if let Some(raised) = state.get_mut(&key) {
                    raised.unsent.retain(|id| known.contains(&id.as_str()));
                }
            }
        })
        .await;
        if let Some(notices) = &self.notices {
            notice_mail::save_unsaved(notices).await;
        }
        let Some(mailer) = &self.mailer else { return };
        let pending: Vec<(RaisedAlert, Organization)> = sync::lock(&self.state)
            .raised()
            .flat_map(|alert| {
                alert.unsent.iter().filter_map(|id| {
                    let org = orgs.iter().find(|o| o.id == *id)?;
                    Some((alert.clone(), org.clone()))
                })
            })
            .collect();
        let head = text::Letterhead {
            zone: self.settings.zone,
            lang: self.settings.lang,
            public_url: self.settings.public_url.as_deref(),
        };
        for (alert, org) in pending {
            let scope = self.scope(&alert.key);
            let done = match text::mail(&alert, &org, head) {
                None => true, // No address: nothing to send, ever.
                Some(mail) => {
                    if let Some(scope) = scope {
                        if !self.claim(certifier, &alert.key, &org.id, scope).await {
                            continue;
                        }
                    }
                    let about = alert.key.kind.to_string();
                    match mailer.deliver(&mail, "alert", &about, &org.id).await {
                        Delivery::Sent | Delivery::GivenUp => true,
                        Delivery::Later => {
                            self.unclaim(certifier, &alert.key, &org.id, scope).await;
                            false
                        }
                        Delivery::RelayUnreachable => {
                            self.unclaim(certifier, &alert.key, &org.id, scope).await;
                            return;
                        }
                    }
                }
            };
            if done {
                self.change(|state| {
                    if let Some(raised) = state.get_mut(&alert.key) {
                        raised.unsent.remove(&org.id);
                    }
                })
                .await;
            }
        }
        if let Some(notices) = &self.notices {
            let claims = self.is_shared().then_some(certifier);
            notice_mail::send_pending(notices, mailer, orgs, head, claims).await;
        }
    }

    /// Evaluates every [`EVERY`], and within a second of an answered invoice, until `stop`.
    pub fn spawn(
        self: &Arc<Self>,
        certifier: Arc<Certifier>,
        admin: Arc<Admin>,
        stop: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let engine = Arc::clone(self);
        if certifier.alerts_shared() {
            *sync::lock(&engine.shared) = Some(Shared::new(&engine.state_dir));
        }
        tokio::spawn(async move {
            let mut last: Option<(Instant, u64)> = None;
            let mut woken = false;
            // Evaluated while another replica led: sent once this one leads.
            let mut owed = false;
            loop {
                let answered = metrics::answered_invoices();
                let was_woken = std::mem::take(&mut woken);
                let due = was_woken
                    || (owed && certifier.leads())
                    || last.is_none_or(|(at, count)| at.elapsed() >= EVERY || count != answered);
                if due {
                    last = Some((Instant::now(), answered));
                    // Store reads and the state's fsync: off the runtime's workers.
                    let evaluated = {
                        let (engine, certifier, admin) = (
                            Arc::clone(&engine),
                            Arc::clone(&certifier),
                            Arc::clone(&admin),
                        );
                        tokio::task::spawn_blocking(move || {
                            let mut snapshot = collect(&certifier, &admin, &engine.settings)?;
                            snapshot.backup = backup_facts(&engine.state_dir, &admin);
                            engine.read_shared(&certifier, &snapshot);
                            engine.apply(&snapshot);
                            engine.write_shared(&certifier, None);
                            Ok::<_, AlertError>(snapshot.orgs)
                        })
                    };
                    let evaluated = tokio::select! {
                        joined = evaluated => joined,
                        () = stop.cancelled() => return,
                    };
                    match evaluated {
                        // One replica at a time sends (`certify/leader.rs`); the others
                        // keep their view of the alerts for their dashboards. Over
                        // PostgreSQL each replica sends its own (`shared.rs`), the leader
                        // the service's too.
                        Ok(Ok(_)) if !certifier.leads() && !engine.is_shared() => owed = true,
                        Ok(Ok(facts)) => {
                            owed = !certifier.leads();
                            let orgs: Vec<Organization> =
                                facts.into_iter().map(|f| f.org).collect();
                            // Sending never delays a shutdown.
                            tokio::select! {
                                () = engine.send_pending(&orgs, &certifier) => {}
                                () = stop.cancelled() => return,
                            }
                        }
                        Ok(Err(error)) => warn!(%error, "alerts: not evaluated"),
                        Err(error) => warn!(%error, "alerts: evaluation failed"),
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(TICK) => {}
                    () = engine.wake.notified() => woken = true,
                    () = stop.cancelled() => return,
                }
            }
        })
    }

    /// Whether the state is shared by replicas (over PostgreSQL).
    fn is_shared(&self) -> bool {
        sync::lock(&self.shared).is_some()
    }

    /// Who e-mails the alert `key` over PostgreSQL; `None` on the embedded store.
    fn scope(&self, key: &AlertKey) -> Option<Scope> {
        sync::lock(&self.shared).as_ref().map(|s| s.scope(key))
    }

    fn save(&self, state: &AlertState) {
        if let Err(error) = state.save(&self.path) {
            warn!(%error, "alerts: state not saved (a restart may e-mail an alert again)");
        }
    }

    /// Sets `emcf_alerts_active` from the raised alerts.
    fn publish(&self) {
        let mut counts: std::collections::BTreeMap<String, u64> = self
            .settings
            .alerts
            .quota_thresholds
            .iter()
            .map(|p| AlertKind::Quota(*p))
            .chain([
                AlertKind::ChannelDown,
                AlertKind::DgiContactOld,
                AlertKind::InDoubt,
                AlertKind::BackupOld,
                AlertKind::BackupCommandFailed,
                AlertKind::RegisterUnwritable,
            ])
            .map(|kind| (kind.label(), 0))
            .collect();
        for alert in sync::lock(&self.state).raised() {
            *counts.entry(alert.key.kind.label()).or_insert(0) += 1;
        }
        metrics::alerts_active(counts);
    }
}

/// Of quota alerts raised together for one organization, only the highest is e-mailed.
fn suppress_lower_quota_mails(state: &mut AlertState, transitions: &Transitions) {
    for alert in &transitions.raised {
        let AlertKind::Quota(percent) = alert.key.kind else {
            continue;
        };
        let higher = transitions.raised.iter().any(|other| {
            other.key.subject == alert.key.subject
                && matches!(other.key.kind, AlertKind::Quota(p) if p > percent)
        });
        if higher {
            if let Some(raised) = state.get_mut(&alert.key) {
                raised.unsent.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::conditions::tests::snapshot;

    fn engine(dir: &Path) -> AlertEngine {
        let settings = EngineSettings {
            alerts: AlertSettings::default(),
            zone: FixedOffset::east_opt(3600).expect("offset"),
            lang: Lang::Fr,
            public_url: None,
        };
        AlertEngine::open(dir, settings, None).expect("engine")
    }

    #[test]
    fn raised_once_and_kept_across_a_restart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = engine(dir.path());
        assert_eq!(first.apply(&snapshot(4)).raised.len(), 1);
        assert!(first.apply(&snapshot(4)).raised.is_empty());
        let org = &snapshot(4).orgs[0].org;
        assert_eq!(first.active_for(org).len(), 1);

        let again = engine(dir.path());
        assert_eq!(again.active_for(org).len(), 1, "read back");
        assert!(
            again.apply(&snapshot(4)).raised.is_empty(),
            "not raised twice"
        );
        let t = again.apply(&snapshot(5));
        assert_eq!(t.raised.len(), 2);
        let unsent: Vec<_> = again
            .active_for(org)
            .into_iter()
            .filter(|a| !a.unsent.is_empty())
            .map(|a| a.key.kind.label())
            .collect();
        assert_eq!(
            unsent,
            ["quota_80", "quota_100"],
            "90 % is not mailed with 100 %"
        );
    }

    #[test]
    fn a_damaged_state_file_means_nothing_raised() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(STATE_FILE), b"garbage").expect("write");
        let engine = engine(dir.path());
        assert_eq!(engine.apply(&snapshot(4)).raised.len(), 1);
    }
}
