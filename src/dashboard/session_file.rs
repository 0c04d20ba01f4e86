//! The dashboard's sessions kept across a restart: `<state_dir>/dashboard-sessions.json`,
//! rewritten whole (`atomic_file`: temp file 0600, fsync, rename) when a session opens or
//! ends, and at most once a minute per session for its last use. It holds, for each live
//! session, the SHA-256 of its id (never the cookie's id, never its CSRF token, which is
//! derived from the id), its organization, the public id of the dashboard token it was opened
//! with, and its times:
//!
//! ```json
//! {"version": 1, "sessions": [{"id_sha256": "9f86…", "org": "acme", "token_id": "NdjDBQOYdRHj",
//!   "created_at": "2026-11-26T18:07:30Z", "last_seen": "2026-11-26T18:42:05Z"}]}
//! ```
//!
//! Read back at start (`Dashboard::with_sessions_in`): expired sessions, and those whose
//! token was revoked or whose organization is gone, are dropped (and the file rewritten). A
//! file that cannot be read or written is logged, and the sign-in page says that sessions are
//! not kept; the dashboard works on with sessions in memory. On PostgreSQL the file is not
//! used: sessions are the database's, for every replica (`shared`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use thiserror::Error;
use tracing::{info, warn};

use super::session::Sessions;
use super::Dashboard;
use crate::sync;

/// The file's name in the state directory.
pub const FILE: &str = "dashboard-sessions.json";

/// The file's format version.
const VERSION: u32 = 1;

/// One session as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSession {
    /// SHA-256 of the cookie's id, in hex.
    pub id_sha256: String,
    /// Its organization.
    pub org: String,
    /// The public id of the dashboard token it was opened with.
    pub token_id: String,
    /// Sign-in.
    pub created_at: DateTime<Utc>,
    /// Last request (within a minute).
    pub last_seen: DateTime<Utc>,
}

#[derive(Serialize, Deserialize)]
struct Format {
    version: u32,
    sessions: Vec<StoredSession>,
}

/// Why the file was not read or written (for the log).
#[derive(Debug, Error)]
pub enum SessionFileError {
    /// Reading or writing failed.
    #[error("dashboard sessions file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not what this version writes.
    #[error("dashboard sessions file {} is damaged: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The sessions file of a running dashboard.
pub struct SessionFile {
    path: PathBuf,
    /// One write at a time, each of the state as it is when the write starts.
    writing: Mutex<()>,
    /// The sessions of the last run could not be read back at start.
    not_read: AtomicBool,
    /// The last write failed.
    not_written: AtomicBool,
}

/// Whether sessions survive a restart, as the sign-in page says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// They do (or no file is used: nothing to say).
    Yes,
    /// The sessions open before the last start could not be read back.
    NotReadAtStart,
    /// They cannot be written now: a restart would end them.
    NotWritten,
}

impl SessionFile {
    /// The file `FILE` in `state_dir`.
    pub fn in_dir(state_dir: &Path) -> SessionFile {
        SessionFile {
            path: state_dir.join(FILE),
            writing: Mutex::new(()),
            not_read: AtomicBool::new(false),
            not_written: AtomicBool::new(false),
        }
    }

    /// Reads the sessions of the last run (blocking). A missing file is none; a file that
    /// cannot be read is logged, remembered for the sign-in page, and counts as none.
    pub fn read(&self) -> Vec<StoredSession> {
        match read(&self.path) {
            Ok(sessions) => sessions,
            Err(error) => {
                warn!(%error, "dashboard sessions not read back: everyone signs in again");
                self.not_read.store(true, Ordering::SeqCst);
                Vec::new()
            }
        }
    }

    /// Writes `sessions` if they changed since the last write (blocking).
    pub fn save(&self, sessions: &Sessions) {
        let _writing = sync::lock(&self.writing);
        if !sessions.dirty() {
            return;
        }
        match write(&self.path, &sessions.stored()) {
            Ok(()) => self.not_written.store(false, Ordering::SeqCst),
            Err(error) => {
                sessions.mark_unsaved();
                if !self.not_written.swap(true, Ordering::SeqCst) {
                    warn!(%error, "dashboard sessions not written: a restart would sign everyone out");
                }
            }
        }
    }

    /// What the sign-in page says about it.
    pub fn kept(&self) -> Kept {
        if self.not_written.load(Ordering::SeqCst) {
            Kept::NotWritten
        } else if self.not_read.load(Ordering::SeqCst) {
            Kept::NotReadAtStart
        } else {
            Kept::Yes
        }
    }
}

impl Dashboard {
    /// Keeps sessions across a restart in `state_dir` (`session_file::FILE`): reads back
    /// those of the last run that are still live and whose token and organization still
    /// exist, and writes the file again without the others. On PostgreSQL the sessions are
    /// the database's, for every replica (`shared`): no file is used, and a file left by an
    /// embedded store's run is not read (its users sign in again).
    pub async fn with_sessions_in(mut self, state_dir: &Path) -> Dashboard {
        if self.shared {
            info!("dashboard sessions kept in the database, for every replica");
            return self;
        }
        let file = Arc::new(SessionFile::in_dir(state_dir));
        let (admin, sessions, reading) = (
            Arc::clone(&self.admin),
            Arc::clone(&self.sessions),
            Arc::clone(&file),
        );
        let restored = tokio::task::spawn_blocking(move || {
            let stored = reading.read();
            let before = stored.len();
            let now = chrono::Utc::now();
            let orgs: Vec<String> = match admin.org_list() {
                Ok(orgs) => orgs.into_iter().map(|org| org.id).collect(),
                Err(error) => {
                    // Nothing is restored (fail closed), and the file is left as it is.
                    warn!(%error, "dashboard sessions not read back: the register could not be read");
                    return (0, before);
                }
            };
            let valid = |s: &StoredSession| {
                orgs.contains(&s.org)
                    && sessions.live_at(s, now)
                    && matches!(admin.dashboard_token_valid(&s.token_id, &s.org), Ok(true))
            };
            let live: Vec<_> = stored.into_iter().filter(valid).collect();
            let restored = sessions.restore(live, now);
            if restored != before {
                sessions.mark_unsaved();
                reading.save(&sessions);
            }
            (restored, before)
        })
        .await;
        match restored {
            Ok((restored, read)) => info!(
                restored,
                dropped = read - restored,
                "dashboard sessions read back (expired, revoked or of a removed organization: dropped)"
            ),
            Err(error) => warn!(%error, "dashboard sessions not read back"),
        }
        self.session_file = Some(file);
        self
    }

    /// Writes the sessions file if a session opened, ended or was used since it was written
    /// (off the runtime's workers; waits for the write).
    pub(super) async fn save_sessions(&self) {
        let Some(file) = self.session_file.clone() else {
            return;
        };
        let sessions = Arc::clone(&self.sessions);
        if let Err(error) = tokio::task::spawn_blocking(move || file.save(&sessions)).await {
            warn!(%error, "dashboard sessions: the write did not finish");
        }
    }

    /// [`save_sessions`](Self::save_sessions) without waiting for it (a session's use).
    pub(super) fn save_sessions_later(&self) {
        if let Some(file) = self.session_file.clone() {
            if self.sessions.dirty() {
                let sessions = Arc::clone(&self.sessions);
                drop(tokio::task::spawn_blocking(move || file.save(&sessions)));
            }
        }
    }
}

/// The sessions in `path`; none if it does not exist.
pub fn read(path: &Path) -> Result<Vec<StoredSession>, SessionFileError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SessionFileError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let damaged = |reason: String| SessionFileError::Damaged {
        path: path.to_path_buf(),
        reason,
    };
    let file: Format = serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
    if file.version != VERSION {
        return Err(damaged(format!(
            "version {} (this gateway writes version {VERSION})",
            file.version
        )));
    }
    Ok(file.sessions)
}

/// Writes `sessions` to `path` atomically, for its owner only.
pub fn write(path: &Path, sessions: &[StoredSession]) -> Result<(), SessionFileError> {
    let file = Format {
        version: VERSION,
        sessions: sessions.to_vec(),
    };
    let bytes = serde_json::to_vec_pretty(&file).map_err(|e| SessionFileError::Damaged {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    crate::atomic_file::write_private(path, &bytes).map_err(|source| SessionFileError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_written_and_read_back_and_a_damaged_file_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let file = SessionFile::in_dir(dir.path());
        assert!(file.read().is_empty(), "no file: no session");
        assert_eq!(file.kept(), Kept::Yes);
        let sessions = Sessions::new();
        let (id, _) = sessions.open("acme", "tok");
        file.save(&sessions);
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(!text.contains(&id), "{text}");
        let back = file.read();
        assert_eq!(back.len(), 1);
        assert_eq!(
            (back[0].org.as_str(), back[0].token_id.as_str()),
            ("acme", "tok")
        );

        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        let file = SessionFile::in_dir(dir.path());
        assert!(file.read().is_empty());
        assert_eq!(file.kept(), Kept::NotReadAtStart);
        std::fs::write(dir.path().join(FILE), br#"{"version": 9, "sessions": []}"#).unwrap();
        assert!(matches!(
            read(&dir.path().join(FILE)),
            Err(SessionFileError::Damaged { .. })
        ));
    }

    #[test]
    fn a_file_that_cannot_be_written_is_said_and_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = SessionFile::in_dir(&dir.path().join("missing"));
        let sessions = Sessions::new();
        let _ = sessions.open("acme", "tok");
        file.save(&sessions);
        assert_eq!(file.kept(), Kept::NotWritten);
        assert!(sessions.dirty(), "tried again at the next change");
        std::fs::create_dir(dir.path().join("missing")).unwrap();
        file.save(&sessions);
        assert_eq!(file.kept(), Kept::Yes);
    }
}
