//! Which alert conditions hold now, from a [`Snapshot`] of the service (plain data, so that
//! the rules are tested without a running gateway).

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

use super::kind::{AlertKey, AlertKind, Subject, BACKUP_MAX_AGE_DAYS};
use super::AlertSettings;
use crate::model::Organization;

/// What the evaluation looks at, read from the certification service and the register.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// When it was taken.
    pub now: DateTime<Utc>,
    /// The same instant in the configured time zone, without offset (a box's clock).
    pub local_now: NaiveDateTime,
    /// Each organization with its quota use and its invoices in doubt.
    pub orgs: Vec<OrgFacts>,
    /// Each configured channel (never a sandbox).
    pub channels: Vec<ChannelFacts>,
    /// The backups; `None` when not known (the record could not be read).
    pub backup: Option<BackupFacts>,
    /// Why the register cannot be written (`no_space`, `read_only`, `io`) and since when, if
    /// it cannot.
    pub register_fault: Option<(String, DateTime<Utc>)>,
}

/// The backups as the alerts see them (`<state_dir>/last-backup.json`, the register).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackupFacts {
    /// When the last good copy was taken; `None`: never.
    pub last: Option<DateTime<Utc>>,
    /// When the register's first production entry was certified; `None`: no entry.
    pub first_entry: Option<DateTime<Utc>>,
    /// When the `[backup] command` after the last copy failed, if it did.
    pub command_failed: Option<DateTime<Utc>>,
}

/// An organization as the alerts see it.
#[derive(Debug, Clone)]
pub struct OrgFacts {
    /// The organization (its device, its admin addresses).
    pub org: Organization,
    /// The quota year.
    pub year: i32,
    /// Production invoices certified this quota year.
    pub used: u64,
    /// Its annual quota.
    pub quota: u64,
    /// Its production invoices in doubt (see [`AlertKind::InDoubt`]).
    pub in_doubt: u64,
    /// Of those, the ones waiting for an administrator (the dashboard's "in doubt" section).
    pub waiting: u64,
}

/// A configured channel as the alerts see it.
#[derive(Debug, Clone)]
pub struct ChannelFacts {
    /// Its configured name.
    pub name: String,
    /// `box` or `web_api`.
    pub kind: &'static str,
    /// It answers.
    pub connected: bool,
    /// When `connected` last changed.
    pub since: DateTime<Utc>,
    /// A box's last contact with the DGI as its C2h said (`Some(None)`: never); `None` when
    /// the channel says nothing of it (the web API, a box not read yet).
    pub last_contact: Option<Option<NaiveDateTime>>,
    /// The counter numbers it certified that its register does not hold (it is stopped);
    /// empty when none.
    pub register_behind: Vec<u64>,
}

/// What an alert says, kept with it (for the log, the e-mail and the banner).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Facts {
    /// Quota: the quota year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    /// Quota: invoices certified this year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<u64>,
    /// Quota: the annual quota.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<u64>,
    /// Quota: the organization's plan (`start`, `grow`), which the advice depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Channel down: since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// Channel down: what the channel is, `box` or `web_api` (what the administrator can
    /// check differs). Added in 1.6.0: an older state file has none (read as a box).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// DGI contact: the last one, as the box said (`None` with `never`: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_contact: Option<NaiveDateTime>,
    /// In doubt: how many invoices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// In doubt: how many of them wait for an administrator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u64>,
    /// Backup: when the last good copy was taken (`None` with `backup_old`: never); with
    /// `backup_command_failed`, when the command failed. Added in 1.7.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_at: Option<DateTime<Utc>>,
    /// Register unwritable: why (`no_space`, `read_only`, `io`); `since` says since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// Register behind: the counter numbers the register does not hold (1.8.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<u64>>,
}

/// A condition that holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// Which alert.
    pub key: AlertKey,
    /// What makes one crossing differ from the next while the condition holds (the quota
    /// year: a new year is a new crossing); empty for the others.
    pub episode: String,
    /// What it says.
    pub facts: Facts,
    /// The organizations whose administrators are told (ids).
    pub recipients: Vec<String>,
}

/// The conditions that hold in `snapshot` under `settings`.
pub fn evaluate(snapshot: &Snapshot, settings: &AlertSettings) -> Vec<Condition> {
    let mut conditions = Vec::new();
    for facts in &snapshot.orgs {
        let org = &facts.org;
        for &threshold in &settings.quota_thresholds {
            // used / quota >= threshold %, in integers.
            let reached = facts.quota > 0
                && u128::from(facts.used) * 100 >= u128::from(facts.quota) * u128::from(threshold);
            if reached {
                conditions.push(Condition {
                    key: key(AlertKind::Quota(threshold), Subject::Org(org.id.clone())),
                    episode: facts.year.to_string(),
                    facts: Facts {
                        year: Some(facts.year),
                        used: Some(facts.used),
                        quota: Some(facts.quota),
                        plan: Some(org.plan.as_str().to_owned()),
                        ..Facts::default()
                    },
                    recipients: vec![org.id.clone()],
                });
            }
        }
        if facts.in_doubt > 0 {
            conditions.push(Condition {
                key: key(AlertKind::InDoubt, Subject::Org(org.id.clone())),
                episode: String::new(),
                facts: Facts {
                    count: Some(facts.in_doubt),
                    waiting: Some(facts.waiting),
                    ..Facts::default()
                },
                recipients: vec![org.id.clone()],
            });
        }
    }
    let down_for = chrono::Duration::from_std(settings.channel_down()).unwrap_or_default();
    let contact_age = chrono::Duration::from_std(settings.dgi_contact()).unwrap_or_default();
    for channel in &snapshot.channels {
        let recipients: Vec<String> = snapshot
            .orgs
            .iter()
            .filter(|o| o.org.device == channel.name)
            .map(|o| o.org.id.clone())
            .collect();
        let subject = Subject::Device(channel.name.clone());
        if !channel.register_behind.is_empty() {
            conditions.push(Condition {
                key: key(AlertKind::RegisterBehind, subject.clone()),
                episode: String::new(),
                facts: Facts {
                    missing: Some(channel.register_behind.clone()),
                    channel: Some(channel.kind.to_owned()),
                    ..Facts::default()
                },
                recipients: recipients.clone(),
            });
        }
        if !channel.connected && snapshot.now - channel.since >= down_for {
            conditions.push(Condition {
                key: key(AlertKind::ChannelDown, subject.clone()),
                episode: String::new(),
                facts: Facts {
                    since: Some(channel.since),
                    channel: Some(channel.kind.to_owned()),
                    ..Facts::default()
                },
                recipients: recipients.clone(),
            });
        }
        if let Some(last) = channel.last_contact {
            let old = last.is_none_or(|at| snapshot.local_now - at >= contact_age);
            if old {
                conditions.push(Condition {
                    key: key(AlertKind::DgiContactOld, subject),
                    episode: String::new(),
                    facts: Facts {
                        last_contact: last,
                        ..Facts::default()
                    },
                    recipients,
                });
            }
        }
    }
    if let Some(backup) = &snapshot.backup {
        backup_conditions(snapshot, backup, &mut conditions);
    }
    if let Some((fault, since)) = &snapshot.register_fault {
        conditions.push(Condition {
            key: key(AlertKind::RegisterUnwritable, Subject::Gateway),
            episode: String::new(),
            facts: Facts {
                since: Some(*since),
                fault: Some(fault.clone()),
                ..Facts::default()
            },
            recipients: snapshot.orgs.iter().map(|o| o.org.id.clone()).collect(),
        });
    }
    conditions
}

/// `backup_old` and `backup_command_failed`, told to every organization.
fn backup_conditions(snapshot: &Snapshot, backup: &BackupFacts, out: &mut Vec<Condition>) {
    let everyone: Vec<String> = snapshot.orgs.iter().map(|o| o.org.id.clone()).collect();
    let max_age = chrono::Duration::days(BACKUP_MAX_AGE_DAYS);
    let old = match backup.last {
        Some(at) => snapshot.now - at >= max_age,
        None => backup
            .first_entry
            .is_some_and(|first| snapshot.now - first >= max_age),
    };
    if old {
        out.push(Condition {
            key: key(AlertKind::BackupOld, Subject::Gateway),
            episode: String::new(),
            facts: Facts {
                backup_at: backup.last,
                ..Facts::default()
            },
            recipients: everyone.clone(),
        });
    }
    if let Some(at) = backup.command_failed {
        out.push(Condition {
            key: key(AlertKind::BackupCommandFailed, Subject::Gateway),
            episode: String::new(),
            facts: Facts {
                backup_at: Some(at),
                ..Facts::default()
            },
            recipients: everyone,
        });
    }
}

/// The alerts `snapshot` can neither raise nor clear, because what decides them is not known
/// yet: an unknown fact never clears an alert. A channel that is not connected but not for
/// `channel_down_minutes` yet (at start every channel is "not connected since now") keeps its
/// `channel_down`, which clears only once the channel is connected; a box whose last DGI contact
/// is not known (not read yet) keeps its `dgi_contact_old`.
pub fn undecided(snapshot: &Snapshot, settings: &AlertSettings) -> Vec<AlertKey> {
    let down_for = chrono::Duration::from_std(settings.channel_down()).unwrap_or_default();
    let mut keys = Vec::new();
    if snapshot.backup.is_none() {
        keys.push(key(AlertKind::BackupOld, Subject::Gateway));
        keys.push(key(AlertKind::BackupCommandFailed, Subject::Gateway));
    }
    for channel in &snapshot.channels {
        let subject = Subject::Device(channel.name.clone());
        if !channel.connected && snapshot.now - channel.since < down_for {
            keys.push(key(AlertKind::ChannelDown, subject.clone()));
        }
        if channel.last_contact.is_none() {
            keys.push(key(AlertKind::DgiContactOld, subject));
        }
    }
    keys
}

fn key(kind: AlertKind, subject: Subject) -> AlertKey {
    AlertKey { kind, subject }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::Plan;

    pub(in crate::alerts) fn org(id: &str, device: &str) -> Organization {
        Organization {
            id: id.into(),
            name: format!("{id} shop"),
            nif: "A1234567B".into(),
            isf: "ISF-1".into(),
            plan: Plan::Start,
            quota_override: Some(5),
            device: device.into(),
            admin_emails: vec![format!("admin@{id}.cd")],
            max_invoice_total: None,
        }
    }

    pub(in crate::alerts) fn snapshot(used: u64) -> Snapshot {
        let now = "2025-06-01T12:00:00Z".parse().expect("time");
        Snapshot {
            now,
            local_now: (now + chrono::Duration::hours(1)).naive_utc(),
            orgs: vec![OrgFacts {
                org: org("acme", "shop"),
                year: 2025,
                used,
                quota: 5,
                in_doubt: 0,
                waiting: 0,
            }],
            channels: vec![ChannelFacts {
                name: "shop".into(),
                kind: "box",
                connected: true,
                since: now - chrono::Duration::hours(5),
                last_contact: Some(Some((now - chrono::Duration::hours(2)).naive_utc())),
                register_behind: Vec::new(),
            }],
            backup: Some(BackupFacts {
                last: Some(now - chrono::Duration::hours(20)),
                first_entry: Some(now - chrono::Duration::days(30)),
                command_failed: None,
            }),
            register_fault: None,
        }
    }

    fn kinds(snapshot: &Snapshot) -> Vec<String> {
        evaluate(snapshot, &AlertSettings::default())
            .iter()
            .map(|c| format!("{} {}", c.key.kind, c.key.subject))
            .collect()
    }

    #[test]
    fn quota_thresholds_in_whole_percent() {
        assert!(kinds(&snapshot(3)).is_empty());
        assert_eq!(kinds(&snapshot(4)), ["quota_80 organization acme"]);
        assert_eq!(
            kinds(&snapshot(5)),
            [
                "quota_80 organization acme",
                "quota_90 organization acme",
                "quota_100 organization acme"
            ]
        );
        let mut none = snapshot(0);
        none.orgs[0].quota = 0;
        assert!(kinds(&none).is_empty(), "no quota, no percentage");
    }

    #[test]
    fn a_channel_is_down_after_the_delay_only() {
        let mut s = snapshot(0);
        s.channels[0].connected = false;
        s.channels[0].since = s.now - chrono::Duration::minutes(14);
        assert!(kinds(&s).is_empty());
        s.channels[0].since = s.now - chrono::Duration::minutes(15);
        assert_eq!(kinds(&s), ["channel_down device shop"]);
        let condition = &evaluate(&s, &AlertSettings::default())[0];
        assert_eq!(condition.recipients, ["acme"]);
    }

    #[test]
    fn an_old_or_missing_dgi_contact() {
        let mut s = snapshot(0);
        s.channels[0].last_contact = Some(Some(s.local_now - chrono::Duration::days(3)));
        assert_eq!(kinds(&s), ["dgi_contact_old device shop"]);
        s.channels[0].last_contact = Some(None);
        assert_eq!(kinds(&s), ["dgi_contact_old device shop"], "never");
        s.channels[0].last_contact = None;
        assert!(kinds(&s).is_empty(), "the web API says nothing of it");
    }

    #[test]
    fn a_backup_older_than_two_days_or_none_on_an_old_register() {
        let mut s = snapshot(0);
        let backup = |last, first| {
            Some(BackupFacts {
                last,
                first_entry: first,
                command_failed: None,
            })
        };
        let day = chrono::Duration::days(1);
        s.backup = backup(Some(s.now - day * 2 + chrono::Duration::minutes(1)), None);
        assert!(kinds(&s).is_empty());
        s.backup = backup(Some(s.now - day * 2), None);
        assert_eq!(kinds(&s), ["backup_old the gateway"]);
        let condition = &evaluate(&s, &AlertSettings::default())[0];
        assert_eq!(condition.recipients, ["acme"], "every organization");
        s.backup = backup(None, None);
        assert!(kinds(&s).is_empty(), "never, but nothing to lose");
        s.backup = backup(None, Some(s.now - day));
        assert!(kinds(&s).is_empty(), "never, a register begun yesterday");
        s.backup = backup(None, Some(s.now - day * 3));
        assert_eq!(
            kinds(&s),
            ["backup_old the gateway"],
            "never, an old register"
        );
        s.backup = None;
        assert!(kinds(&s).is_empty(), "unknown");
        let unknown = undecided(&s, &AlertSettings::default());
        assert!(unknown.contains(&key(AlertKind::BackupOld, Subject::Gateway)));
        s.backup = Some(BackupFacts {
            last: Some(s.now),
            first_entry: None,
            command_failed: Some(s.now),
        });
        assert_eq!(kinds(&s), ["backup_command_failed the gateway"]);
    }

    #[test]
    fn invoices_in_doubt() {
        let mut s = snapshot(0);
        s.orgs[0].in_doubt = 2;
        assert_eq!(kinds(&s), ["in_doubt organization acme"]);
    }

    #[test]
    fn a_register_that_cannot_be_written_tells_everyone_until_it_can() {
        let mut s = snapshot(1);
        assert!(kinds(&s).is_empty());
        s.register_fault = Some(("no_space".into(), s.now));
        assert_eq!(kinds(&s), ["register_unwritable the gateway"]);
        let raised = evaluate(&s, &AlertSettings::default());
        assert_eq!(raised[0].recipients, ["acme"]);
        assert_eq!(raised[0].facts.fault.as_deref(), Some("no_space"));
    }

    #[test]
    fn a_register_behind_its_device() {
        let mut s = snapshot(0);
        s.channels[0].register_behind = vec![7, 8];
        assert_eq!(kinds(&s), ["register_behind device shop"]);
        let raised = evaluate(&s, &AlertSettings::default());
        assert_eq!(raised[0].facts.missing, Some(vec![7, 8]));
        assert_eq!(raised[0].recipients, ["acme"]);
    }
}
