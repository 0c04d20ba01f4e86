//! The alerts raised and not yet cleared, and the crossing logic: a condition that appears is
//! raised once; while it holds nothing more happens; when it goes away the alert clears and
//! the next crossing raises it again. Kept in `<state_dir>/alerts.json` (written to a temp
//! file, fsync'd, renamed, the directory fsync'd: `atomic_file`) so that a restart sends no e-mail twice.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::conditions::{Condition, Facts};
use super::kind::AlertKey;
use super::AlertError;

/// The state file's name in the state directory.
pub const STATE_FILE: &str = "alerts.json";

/// The state file's format version.
const VERSION: u32 = 1;

/// One raised alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaisedAlert {
    /// Which alert.
    #[serde(flatten)]
    pub key: AlertKey,
    /// The crossing it belongs to (the quota year; empty for the others).
    #[serde(default)]
    pub episode: String,
    /// When it was raised.
    pub raised_at: DateTime<Utc>,
    /// What it says, as last evaluated.
    #[serde(default)]
    pub facts: Facts,
    /// Organizations (ids) whose administrators have not been e-mailed yet.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub unsent: BTreeSet<String>,
}

/// What one evaluation changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Transitions {
    /// Alerts raised now.
    pub raised: Vec<RaisedAlert>,
    /// Alerts whose condition went away.
    pub cleared: Vec<RaisedAlert>,
}

/// The raised alerts, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertState {
    raised: BTreeMap<AlertKey, RaisedAlert>,
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    version: u32,
    raised: Vec<RaisedAlert>,
}

impl AlertState {
    /// Moves to the conditions that hold now: new ones are raised (their recipients to be
    /// e-mailed), those gone are cleared, those still there keep their raising and get the
    /// latest facts.
    #[cfg(test)]
    pub fn step(&mut self, now: &[Condition], at: DateTime<Utc>) -> Transitions {
        self.step_keeping(now, &[], at)
    }

    /// Like `step`, except that the alerts of `undecided` (what is not known yet, see
    /// [`undecided`](super::conditions::undecided)) are neither raised nor cleared.
    pub fn step_keeping(
        &mut self,
        now: &[Condition],
        undecided: &[AlertKey],
        at: DateTime<Utc>,
    ) -> Transitions {
        let mut transitions = Transitions::default();
        let current: BTreeMap<&AlertKey, &Condition> = now.iter().map(|c| (&c.key, c)).collect();
        let gone: Vec<AlertKey> = self
            .raised
            .iter()
            .filter(|(key, _)| !undecided.contains(key))
            .filter(|(key, raised)| current.get(key).is_none_or(|c| c.episode != raised.episode))
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            if let Some(raised) = self.raised.remove(&key) {
                transitions.cleared.push(raised);
            }
        }
        for condition in now {
            match self.raised.get_mut(&condition.key) {
                Some(raised) => raised.facts = condition.facts.clone(),
                None => {
                    let raised = RaisedAlert {
                        key: condition.key.clone(),
                        episode: condition.episode.clone(),
                        raised_at: at,
                        facts: condition.facts.clone(),
                        unsent: condition.recipients.iter().cloned().collect(),
                    };
                    self.raised.insert(condition.key.clone(), raised.clone());
                    transitions.raised.push(raised);
                }
            }
        }
        transitions
    }

    /// The raised alerts, by key.
    pub fn raised(&self) -> impl Iterator<Item = &RaisedAlert> {
        self.raised.values()
    }

    /// Whether `other` differs from this state in what the state file must keep: the raised
    /// alerts, their raising and the e-mails still to send (not their latest facts, which
    /// change with every invoice and are evaluated again after a restart).
    pub fn differs_on_disk(&self, other: &AlertState) -> bool {
        let kept =
            |state: &AlertState| -> Vec<(AlertKey, String, DateTime<Utc>, BTreeSet<String>)> {
                state
                    .raised
                    .values()
                    .map(|r| {
                        (
                            r.key.clone(),
                            r.episode.clone(),
                            r.raised_at,
                            r.unsent.clone(),
                        )
                    })
                    .collect()
            };
        kept(self) != kept(other)
    }

    /// The alert of `key` if raised.
    pub fn get_mut(&mut self, key: &AlertKey) -> Option<&mut RaisedAlert> {
        self.raised.get_mut(key)
    }

    /// The raised alerts whose key `keep` says, as the state file's JSON (without their
    /// facts, evaluated again by whoever reads them): a row of the shared state
    /// (`alerts/shared.rs`).
    pub fn encode_where(&self, keep: impl Fn(&AlertKey) -> bool) -> String {
        let file = StateFile {
            version: VERSION,
            raised: self
                .raised
                .values()
                .filter(|r| keep(&r.key))
                .map(|r| RaisedAlert {
                    facts: Facts::default(),
                    ..r.clone()
                })
                .collect(),
        };
        serde_json::to_string(&file).unwrap_or_default()
    }

    /// Replaces the raised alerts whose key `keep` says with those of `text` (an
    /// [`AlertState::encode_where`]), each keeping the facts last evaluated here.
    pub fn adopt_where(
        &mut self,
        text: &str,
        keep: impl Fn(&AlertKey) -> bool,
    ) -> Result<(), String> {
        let file: StateFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.version != VERSION {
            return Err(format!("version {}", file.version));
        }
        let mut facts: BTreeMap<AlertKey, Facts> = BTreeMap::new();
        self.raised.retain(|key, raised| {
            let mine = keep(key);
            if mine {
                facts.insert(key.clone(), std::mem::take(&mut raised.facts));
            }
            !mine
        });
        for mut raised in file.raised.into_iter().filter(|r| keep(&r.key)) {
            if let Some(known) = facts.remove(&raised.key) {
                raised.facts = known;
            }
            self.raised.insert(raised.key.clone(), raised);
        }
        Ok(())
    }

    /// Reads `path`. A missing file is an empty state; an unreadable or damaged one is an
    /// error the caller logs (and then starts empty).
    pub fn load(path: &Path) -> Result<AlertState, AlertError> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AlertState::default()),
            Err(source) => return Err(state_error(path, source)),
        };
        let damaged = |reason: String| AlertError::StateDamaged {
            path: path.to_path_buf(),
            reason,
        };
        let file: StateFile = serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
        if file.version != VERSION {
            return Err(damaged(format!(
                "version {} (this gateway writes version {VERSION})",
                file.version
            )));
        }
        Ok(AlertState {
            raised: file
                .raised
                .into_iter()
                .map(|raised| (raised.key.clone(), raised))
                .collect(),
        })
    }

    /// Writes the state to `path` atomically: `<path>.tmp`, fsync, rename, fsync of the
    /// directory.
    pub fn save(&self, path: &Path) -> Result<(), AlertError> {
        let file = StateFile {
            version: VERSION,
            raised: self.raised.values().cloned().collect(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| AlertError::StateDamaged {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        crate::atomic_file::write_private(path, &bytes).map_err(|source| state_error(path, source))
    }
}

fn state_error(path: &Path, source: std::io::Error) -> AlertError {
    AlertError::StateFile {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::conditions::tests::snapshot;
    use crate::alerts::conditions::{evaluate, undecided};
    use crate::alerts::AlertSettings;

    fn labels(alerts: &[RaisedAlert]) -> Vec<String> {
        alerts.iter().map(|a| a.key.kind.label()).collect()
    }

    fn step(state: &mut AlertState, used: u64) -> Transitions {
        let s = snapshot(used);
        state.step(&evaluate(&s, &AlertSettings::default()), s.now)
    }

    #[test]
    fn raised_once_per_crossing_and_rearmed_after_clearing() {
        let mut state = AlertState::default();
        assert_eq!(step(&mut state, 3), Transitions::default());
        let t = step(&mut state, 4);
        assert_eq!(labels(&t.raised), ["quota_80"]);
        assert_eq!(t.raised[0].unsent, BTreeSet::from(["acme".to_owned()]));
        assert_eq!(step(&mut state, 4), Transitions::default(), "not again");
        let t = step(&mut state, 5);
        assert_eq!(labels(&t.raised), ["quota_90", "quota_100"]);
        assert!(t.cleared.is_empty());
        assert_eq!(step(&mut state, 5), Transitions::default());
        // A new year (or a larger quota): cleared, re-armed.
        let t = step(&mut state, 0);
        assert_eq!(labels(&t.cleared), ["quota_80", "quota_90", "quota_100"]);
        assert_eq!(labels(&step(&mut state, 4).raised), ["quota_80"]);
    }

    #[test]
    fn a_new_quota_year_is_a_new_crossing() {
        let mut state = AlertState::default();
        step(&mut state, 4);
        let mut s = snapshot(4);
        s.orgs[0].year = 2026;
        let t = state.step(&evaluate(&s, &AlertSettings::default()), s.now);
        assert_eq!(labels(&t.cleared), ["quota_80"]);
        assert_eq!(labels(&t.raised), ["quota_80"]);
    }

    #[test]
    fn an_unknown_fact_never_clears_an_alert() {
        let settings = AlertSettings::default();
        let mut s = snapshot(0);
        s.channels[0].connected = false;
        s.channels[0].since = s.now - chrono::Duration::minutes(20);
        s.channels[0].last_contact = Some(None);
        let mut state = AlertState::default();
        let mut step = |s: &crate::alerts::conditions::Snapshot| {
            state.step_keeping(&evaluate(s, &settings), &undecided(s, &settings), s.now)
        };
        let t = step(&s);
        assert_eq!(labels(&t.raised), ["channel_down", "dgi_contact_old"]);
        // A restart: every channel "not connected since now", no DGI contact read yet.
        s.channels[0].since = s.now;
        s.channels[0].last_contact = None;
        assert_eq!(step(&s), Transitions::default(), "kept, not cleared");
        // Known again: a connected channel and a fresh contact clear them.
        s.channels[0].connected = true;
        assert_eq!(labels(&step(&s).cleared), ["channel_down"]);
        s.channels[0].last_contact = Some(Some(s.local_now));
        assert_eq!(labels(&step(&s).cleared), ["dgi_contact_old"]);
        assert_eq!(state.raised().count(), 0);
    }

    #[test]
    fn only_what_the_file_keeps_is_a_change_to_save() {
        let mut state = AlertState::default();
        step(&mut state, 4);
        let before = state.clone();
        step(&mut state, 4);
        assert!(!state.differs_on_disk(&before));
        let key = state.raised().next().expect("raised").key.clone();
        state.get_mut(&key).expect("raised").facts.used = Some(5);
        assert!(!state.differs_on_disk(&before), "new facts only");
        state.get_mut(&key).expect("raised").unsent.clear();
        assert!(state.differs_on_disk(&before), "e-mail sent");
    }

    #[test]
    fn a_shared_row_replaces_only_its_own_alerts() {
        use crate::alerts::kind::{AlertKind, Subject};
        let mut leader = AlertState::default();
        step(&mut leader, 4);
        let key = leader.raised().next().expect("raised").key.clone();
        leader.get_mut(&key).expect("raised").unsent.clear();
        let service = |k: &AlertKey| matches!(k.subject, Subject::Org(_));
        let row = leader.encode_where(service);
        assert!(!row.contains("\"used\""), "no facts in a row: {row}");

        // Another replica saw the crossing too (still owing its e-mail), and a box of its own.
        let mut other = AlertState::default();
        step(&mut other, 4);
        let own = AlertKey {
            kind: AlertKind::ChannelDown,
            subject: Subject::Device("shop".into()),
        };
        let mut with_box = other.raised().next().expect("raised").clone();
        with_box.key = own.clone();
        other.raised.insert(own.clone(), with_box);
        other.adopt_where(&row, service).expect("adopted");
        let adopted = other.get_mut(&key).expect("kept raised");
        assert!(adopted.unsent.is_empty(), "sent by the leader: not again");
        assert_eq!(adopted.facts.used, Some(4), "facts evaluated here kept");
        assert!(other.get_mut(&own).is_some(), "its own alerts untouched");
        assert!(other.adopt_where("{not json", service).is_err());
    }

    #[test]
    fn persisted_across_a_reload() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(STATE_FILE);
        assert_eq!(
            AlertState::load(&path).expect("missing"),
            AlertState::default()
        );
        let mut state = AlertState::default();
        step(&mut state, 4);
        state.save(&path).expect("saved");
        let mut again = AlertState::load(&path).expect("loaded");
        assert_eq!(again, state);
        assert_eq!(
            step(&mut again, 4),
            Transitions::default(),
            "not raised twice"
        );
        assert!(!path.with_extension("json.tmp").exists());

        fs::write(&path, br#"{"version": 2, "raised": []}"#).expect("write");
        assert!(matches!(
            AlertState::load(&path),
            Err(AlertError::StateDamaged { .. })
        ));
        fs::write(&path, b"{not json").expect("write");
        assert!(matches!(
            AlertState::load(&path),
            Err(AlertError::StateDamaged { .. })
        ));
    }
}
