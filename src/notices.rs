//! Change notices: what the operator announces to every organization at least
//! [`NOTICE_DAYS`] days before a change that breaks something (the seed: "an e-mail goes to
//! the organization's administrators 30 days before"), for example the end of an API version.
//!
//! Kept in `<state_dir>/notices.json` (written whole or not at all: `atomic_file`), not in the
//! fiscal register: a notice is no fiscal record, the register's format is a promise to
//! auditors that an operator's announcement has no business changing, and an `index rebuild`
//! or a `log verify` must never depend on it. Each notice keeps the organizations to e-mail
//! (those known when it was published) and those already e-mailed: it is written (fsync'd)
//! before any e-mail leaves, and each e-mail is recorded as sent once the relay accepted it
//! (the alert engine sends them, `alerts`). A crash between the relay's acceptance and that
//! record sends that one e-mail again at the next start, with the same `Message-ID` (a mail
//! client shows it once): at least once, exactly once unless the process dies in that window.
//! A record the file could not take (disk full) is kept in memory all the same, so that this
//! process never sends that e-mail again, and written at the next round
//! ([`Notices::save_unsaved`]); a crash before then is the window above, longer.
//!
//! While a notice retires an API version, every answer of that version carries `Deprecation`
//! (RFC 9745: `@` and the Unix time of the notice's publication, a structured-field Date),
//! `Sunset` (RFC 8594: the HTTP-date of the effective date's first second in the configured
//! zone) and `Link` to the notice's public page (`/notices/{id}`), rel `deprecation` and
//! `sunset` ([`Deprecation`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::i18n::{format, Localized, Message};
use crate::msg;
use crate::sync;

/// The state file's name in the state directory.
pub const FILE: &str = "notices.json";
/// How many full days (of 24 hours) a notice's publication must precede the first instant of
/// its effective day in the configured zone (the instant `Sunset` names), at least.
pub const NOTICE_DAYS: i64 = 30;
/// Longest subject, in characters (one line of an e-mail client's list).
const MAX_SUBJECT: usize = 150;
/// Longest body, in bytes.
const MAX_BODY: usize = 32 * 1024;
/// The state file's format version.
const VERSION: u32 = 1;

/// A notice as the operator writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewNotice {
    /// The day the change takes effect.
    pub effective: NaiveDate,
    /// One line.
    pub subject: String,
    /// The text, as written.
    pub body: String,
    /// The API version it retires (`v1`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retires: Option<String>,
}

/// A published notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Its number (1, 2, ...): its page is `/notices/{id}`.
    pub id: u32,
    /// When it was published.
    pub published_at: DateTime<Utc>,
    /// What the operator wrote.
    #[serde(flatten)]
    pub notice: NewNotice,
    /// The organizations (ids) to e-mail: those known when it was published.
    #[serde(default)]
    pub recipients: BTreeSet<String>,
    /// Those e-mailed, and when (those given up are in `given_up` only).
    #[serde(default)]
    pub sent: BTreeMap<String, DateTime<Utc>>,
    /// Those whose e-mail will never be sent (no address, refused for good).
    #[serde(default)]
    pub given_up: BTreeSet<String>,
}

impl Notice {
    /// The organizations still to e-mail.
    pub fn pending(&self) -> impl Iterator<Item = &String> {
        self.recipients
            .iter()
            .filter(|id| !self.sent.contains_key(*id) && !self.given_up.contains(*id))
    }

    /// Whether some of its e-mails are still pending at `now` with less than [`NOTICE_DAYS`]
    /// full days left before its effective day begins in `zone`: those organizations will not
    /// get the warning the notice promised.
    pub fn late(&self, now: DateTime<Utc>, zone: FixedOffset) -> bool {
        self.pending().next().is_some()
            && day_start(self.notice.effective, zone) - now < Duration::days(NOTICE_DAYS)
    }

    /// Whether its banner still shows on `today` (until its effective date, included).
    pub fn shown_on(&self, today: NaiveDate) -> bool {
        today <= self.notice.effective
    }

    /// Whether it retires `version`.
    pub fn retires(&self, version: &str) -> bool {
        self.notice.retires.as_deref() == Some(version)
    }
}

/// What went wrong with a notice.
#[derive(Debug, Error)]
pub enum NoticeError {
    /// The effective day begins less than [`NOTICE_DAYS`] full days from now.
    #[error(
        "effective date {effective} begins less than {NOTICE_DAYS} full days from now (earliest {earliest})"
    )]
    TooSoon {
        /// As given.
        effective: NaiveDate,
        /// The earliest date allowed now.
        earliest: NaiveDate,
    },
    /// An empty subject.
    #[error("the notice's subject is empty")]
    EmptySubject,
    /// An empty body.
    #[error("the notice's body is empty")]
    EmptyBody,
    /// A subject of more than one line, with a hidden character, or too long.
    #[error("the notice's subject is not one plain line of at most {MAX_SUBJECT} characters")]
    BadSubject,
    /// A body larger than [`MAX_BODY`] or with characters that hide text.
    #[error("the notice's body is over {MAX_BODY} bytes or holds characters that hide text")]
    BadBody,
    /// A version the gateway does not serve.
    #[error("API version {version:?} is not served (served: {served})")]
    UnknownVersion {
        /// As given.
        version: String,
        /// Those served.
        served: String,
    },
    /// No such notice.
    #[error("no notice {0}")]
    NotFound(u32),
    /// The file could not be read or written.
    #[error("notices file {}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not what this version writes.
    #[error("notices file {} is damaged: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl Localized for NoticeError {
    fn message(&self) -> Message {
        match self {
            NoticeError::TooSoon {
                effective,
                earliest,
            } => msg!(
                "notice-too-soon",
                effective = effective.to_string(),
                earliest = earliest.to_string(),
                days = NOTICE_DAYS
            ),
            NoticeError::EmptySubject => msg!("notice-empty-subject"),
            NoticeError::EmptyBody => msg!("notice-empty-body"),
            NoticeError::BadSubject => msg!("notice-bad-subject", max = MAX_SUBJECT as i64),
            NoticeError::BadBody => msg!("notice-bad-body", max = MAX_BODY as i64),
            NoticeError::UnknownVersion { version, served } => msg!(
                "notice-unknown-version",
                version = version.as_str(),
                served = served.as_str()
            ),
            NoticeError::NotFound(id) => msg!("notice-not-found", id = i64::from(*id)),
            NoticeError::File { path, source } => msg!(
                "notice-file",
                path = path.display().to_string(),
                detail = source.to_string()
            ),
            NoticeError::Damaged { path, reason } => msg!(
                "notice-file-damaged",
                path = path.display().to_string(),
                detail = reason.as_str()
            ),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct NoticesFile {
    version: u32,
    notices: Vec<Notice>,
}

/// The notices of a state directory, shared by the service's parts (admin socket, alert
/// engine, dashboard, HTTP headers).
#[derive(Debug)]
pub struct Notices {
    path: PathBuf,
    zone: FixedOffset,
    state: Mutex<State>,
}

/// What the process knows: ahead of the file while a write failed (`unsaved`).
#[derive(Debug)]
struct State {
    list: Vec<Notice>,
    /// An e-mail recorded here whose record the file does not hold yet.
    unsaved: bool,
}

impl Notices {
    /// The notices of `state_dir` (none when the file is missing); `zone` says which day it
    /// is and when an effective date begins.
    pub fn open(state_dir: &Path, zone: FixedOffset) -> Result<Notices, NoticeError> {
        let path = state_dir.join(FILE);
        let list = load(&path)?;
        Ok(Notices {
            path,
            zone,
            state: Mutex::new(State {
                list,
                unsaved: false,
            }),
        })
    }

    /// Every notice, oldest first.
    pub fn all(&self) -> Vec<Notice> {
        sync::lock(&self.state).list.clone()
    }

    /// Notice `id`.
    pub fn get(&self, id: u32) -> Option<Notice> {
        sync::lock(&self.state)
            .list
            .iter()
            .find(|n| n.id == id)
            .cloned()
    }

    /// Today in the configured zone.
    pub fn today(&self) -> NaiveDate {
        Utc::now().with_timezone(&self.zone).date_naive()
    }

    /// The notices whose banner shows today.
    pub fn shown(&self) -> Vec<Notice> {
        let today = self.today();
        sync::lock(&self.state)
            .list
            .iter()
            .filter(|n| n.shown_on(today))
            .cloned()
            .collect()
    }

    /// The latest notice retiring `version`, as the headers of its answers say it.
    pub fn deprecation(&self, version: &str) -> Option<Deprecation> {
        let state = sync::lock(&self.state);
        let notice = state.list.iter().rev().find(|n| n.retires(version))?;
        Some(Deprecation::of(notice, self.zone))
    }

    /// Publishes `new` (checked: [`check`]) to the organizations `recipients`, written to the
    /// file before this returns (and so before any e-mail about it leaves).
    pub fn add(
        &self,
        new: NewNotice,
        recipients: BTreeSet<String>,
        served: &[&str],
    ) -> Result<Notice, NoticeError> {
        let now = Utc::now();
        check(&new, now, self.zone, served)?;
        let mut state = sync::lock(&self.state);
        let notice = Notice {
            id: state.list.iter().map(|n| n.id).max().unwrap_or(0) + 1,
            published_at: now,
            notice: new,
            recipients,
            sent: BTreeMap::new(),
            given_up: BTreeSet::new(),
        };
        let mut next = state.list.clone();
        next.push(notice.clone());
        // Not kept unless written: no e-mail may leave about a notice the file lacks. The
        // write holds the records not saved yet too.
        save(&self.path, &next)?;
        state.list = next;
        state.unsaved = false;
        Ok(notice)
    }

    /// Records the e-mail of notice `id` to organization `org` as sent (`true`) or given up.
    /// The record holds in this process whatever happens to the file, so that this process
    /// never sends that e-mail again; an `Err` says only that the file does not hold it yet
    /// ([`Notices::save_unsaved`] writes it at the next round; a crash before then sends it
    /// again at the next start, with the same `Message-ID`).
    pub fn record(&self, id: u32, org: &str, sent: bool) -> Result<(), NoticeError> {
        let mut state = sync::lock(&self.state);
        let notice = state
            .list
            .iter_mut()
            .find(|n| n.id == id)
            .ok_or(NoticeError::NotFound(id))?;
        if sent {
            notice.sent.insert(org.to_owned(), Utc::now());
        } else {
            notice.given_up.insert(org.to_owned());
        }
        let saved = save(&self.path, &state.list);
        state.unsaved = saved.is_err();
        saved
    }

    /// Writes the records a failed write left in memory only; `Ok(false)` when there were
    /// none, `Ok(true)` when the file now holds them.
    pub fn save_unsaved(&self) -> Result<bool, NoticeError> {
        let mut state = sync::lock(&self.state);
        if !state.unsaved {
            return Ok(false);
        }
        save(&self.path, &state.list)?;
        state.unsaved = false;
        Ok(true)
    }
}

/// The first instant of `day` in `zone`: when a notice's effective day begins, the instant
/// its `Sunset` header names.
pub(crate) fn day_start(day: NaiveDate, zone: FixedOffset) -> DateTime<Utc> {
    let midnight = day.and_time(chrono::NaiveTime::MIN);
    zone.from_local_datetime(&midnight).single().map_or_else(
        || Utc.from_utc_datetime(&midnight),
        |t| t.with_timezone(&Utc),
    )
}

/// The earliest effective date a notice published at `now` may have: the first day of `zone`
/// that begins at least [`NOTICE_DAYS`] full days after `now`.
pub(crate) fn earliest(now: DateTime<Utc>, zone: FixedOffset) -> NaiveDate {
    let bound = now + Duration::days(NOTICE_DAYS);
    let day = bound.with_timezone(&zone).date_naive();
    if day_start(day, zone) >= bound {
        day
    } else {
        day + Duration::days(1)
    }
}

/// Whether `new` may be published at `now`: its effective day beginning (in `zone`) at least
/// [`NOTICE_DAYS`] full days later, a subject of one plain line, a body, a served version.
pub fn check(
    new: &NewNotice,
    now: DateTime<Utc>,
    zone: FixedOffset,
    served: &[&str],
) -> Result<(), NoticeError> {
    let earliest = earliest(now, zone);
    if new.effective < earliest {
        return Err(NoticeError::TooSoon {
            effective: new.effective,
            earliest,
        });
    }
    if new.subject.trim().is_empty() {
        return Err(NoticeError::EmptySubject);
    }
    if new.body.trim().is_empty() {
        return Err(NoticeError::EmptyBody);
    }
    let hidden = |c: char| format::is_hidden_effect(c);
    if new.subject.chars().count() > MAX_SUBJECT
        || new.subject.chars().any(hidden)
        || new.subject.contains("=?")
    {
        return Err(NoticeError::BadSubject);
    }
    let hides_text = |c: char| hidden(c) && !matches!(c, '\n' | '\t' | '\r');
    if new.body.len() > MAX_BODY || new.body.chars().any(hides_text) {
        return Err(NoticeError::BadBody);
    }
    if let Some(version) = &new.retires {
        if !served.contains(&version.as_str()) {
            return Err(NoticeError::UnknownVersion {
                version: version.clone(),
                served: served.join(", "),
            });
        }
    }
    Ok(())
}

/// The headers of a version being retired: RFC 9745 and RFC 8594.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The notice's id (its page).
    pub id: u32,
    /// `Deprecation`: `@` and the Unix time of the publication.
    pub deprecation: String,
    /// `Sunset`: the HTTP-date (IMF-fixdate) of the effective date's first second.
    pub sunset: String,
}

impl Deprecation {
    fn of(notice: &Notice, zone: FixedOffset) -> Deprecation {
        let start = day_start(notice.notice.effective, zone);
        Deprecation {
            id: notice.id,
            deprecation: format!("@{}", notice.published_at.timestamp()),
            sunset: start.format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
        }
    }

    /// The `Link` header's value, the notice's page under `base` (`public_url`, else a
    /// reference relative to the request's host).
    pub fn link(&self, base: Option<&str>) -> String {
        let url = page_url(base, self.id);
        format!("<{url}>; rel=\"deprecation\"; type=\"text/html\", <{url}>; rel=\"sunset\"; type=\"text/html\"")
    }
}

/// The public page of notice `id` under `base` (`public_url`), else its path.
pub fn page_url(base: Option<&str>, id: u32) -> String {
    format!("{}/notices/{id}", base.unwrap_or("").trim_end_matches('/'))
}

fn load(path: &Path) -> Result<Vec<Notice>, NoticeError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(NoticeError::File {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let damaged = |reason: String| NoticeError::Damaged {
        path: path.to_path_buf(),
        reason,
    };
    let file: NoticesFile = serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
    if file.version != VERSION {
        return Err(damaged(format!(
            "version {} (this gateway writes version {VERSION})",
            file.version
        )));
    }
    Ok(file.notices)
}

fn save(path: &Path, notices: &[Notice]) -> Result<(), NoticeError> {
    let file = NoticesFile {
        version: VERSION,
        notices: notices.to_vec(),
    };
    let bytes = serde_json::to_vec_pretty(&file).map_err(|e| NoticeError::Damaged {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    crate::atomic_file::write_private(path, &bytes).map_err(|source| NoticeError::File {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests;
