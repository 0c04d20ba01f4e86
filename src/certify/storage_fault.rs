//! The register when it cannot be written (a full disk, a read-only or failing file system),
//! and its recovery without a restart.
//!
//! A watch task ([`Certifier::spawn_storage_watch`]) looks every [`WATCH`], off the runtime's
//! workers, at two things: whether the journal halted after a failed write, or the register's
//! PostgreSQL server stopped answering (`Store::write_fault`, `Store::probe`: 165), and the
//! state directory's file system (`statvfs`): read-only, or
//! less than [`RESERVE`] free, is a fault *before* any write fails, so that the first invoice
//! after the disk filled is refused too, before anything is sent to a device. What it sees is
//! kept here ([`StorageWatch`]): the certification path and the status read it in memory.
//!
//! While it lasts, new invoices are refused before admission (503, 161 disk full, 162
//! read-only, 163 I/O error: no device touched, no quota reserved), `/status` is false with
//! the reason, `/metrics` has `emcf_register_write_fault{kind}`, the dashboard and an alert
//! say so. Once the file system takes writes again the task calls `Store::resume_writes`
//! (every [`RESUME_EVERY`] at most) and journals the certifications kept in memory meanwhile
//! (`unrecorded.rs`): certification resumes by itself.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tracing::{debug, error, info, warn};

use super::admission::Principal;
use super::Certifier;
use crate::certify::CertifyError;
use crate::i18n::Message;
use crate::metrics;
use crate::msg;
use crate::store::{FaultKind, Store, StoreError};
use crate::sync::lock;

/// How often the watch looks at the register's file system.
pub(super) const WATCH: Duration = Duration::from_secs(1);
/// How often, at most, a halted journal is tried again while its file system looks writable.
const RESUME_EVERY: Duration = Duration::from_secs(2);
/// Free space below which the register counts as full: room for the largest record twice
/// (an intent and its certification) and the index's growth.
pub const RESERVE: u64 = 4 << 20;

/// Why the register cannot be written, in the certification service's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFaultKind {
    /// The file system is full (or has less than [`RESERVE`] free).
    NoSpace,
    /// The file system is read-only.
    ReadOnly,
    /// Writes fail (EIO...): the disk may be failing.
    Io,
    /// The register's PostgreSQL server does not answer.
    Database,
}

impl StorageFaultKind {
    fn of(kind: FaultKind) -> StorageFaultKind {
        match kind {
            FaultKind::NoSpace => StorageFaultKind::NoSpace,
            FaultKind::ReadOnly => StorageFaultKind::ReadOnly,
            FaultKind::Io => StorageFaultKind::Io,
            FaultKind::Database => StorageFaultKind::Database,
        }
    }

    /// The fixed label of `/metrics`: `no_space`, `read_only`, `io`.
    pub fn label(self) -> &'static str {
        match self {
            StorageFaultKind::NoSpace => "no_space",
            StorageFaultKind::ReadOnly => "read_only",
            StorageFaultKind::Io => "io",
            StorageFaultKind::Database => "database",
        }
    }

    /// Every kind, for gauges that show each one.
    pub const ALL: [StorageFaultKind; 4] = [
        StorageFaultKind::NoSpace,
        StorageFaultKind::ReadOnly,
        StorageFaultKind::Io,
        StorageFaultKind::Database,
    ];

    /// The API error code of an invoice refused for it (161, 162, 163, 165).
    pub fn code(self) -> u16 {
        match self {
            StorageFaultKind::NoSpace => 161,
            StorageFaultKind::ReadOnly => 162,
            StorageFaultKind::Io => 163,
            StorageFaultKind::Database => 165,
        }
    }

    /// Why, in words (a clause: "the gateway's disk is full").
    pub fn why(self) -> Message {
        match self {
            StorageFaultKind::NoSpace => msg!("register-fault-no-space"),
            StorageFaultKind::ReadOnly => msg!("register-fault-read-only"),
            StorageFaultKind::Io => msg!("register-fault-io"),
            StorageFaultKind::Database => msg!("register-fault-database"),
        }
    }
}

/// The register cannot be written now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageFault {
    /// Why.
    pub kind: StorageFaultKind,
    /// Since when (UTC).
    pub since: DateTime<Utc>,
    /// The journal halted after a failed write (otherwise the file system was seen full or
    /// read-only before any write failed).
    pub halted: bool,
}

impl StorageFault {
    /// The status's reason: what cannot be done, why, since when.
    pub fn reason(&self) -> Message {
        msg!("register-fault-reason", why = self.kind.why())
    }
}

/// What the watch last saw, and when it last tried to resume.
#[derive(Default)]
pub(crate) struct StorageWatch {
    seen: Mutex<Option<StorageFault>>,
    tried: Mutex<Option<Instant>>,
}

impl StorageWatch {
    /// The fault last seen, if any.
    pub(crate) fn current(&self) -> Option<StorageFault> {
        lock(&self.seen).clone()
    }

    /// Keeps `kind` (halted or seen on the file system), or none; logs and publishes each
    /// change.
    fn set(&self, now: Option<(StorageFaultKind, bool)>) {
        let mut seen = lock(&self.seen);
        let next = now.map(|(kind, halted)| StorageFault {
            kind,
            halted,
            since: seen
                .as_ref()
                .filter(|before| before.kind == kind)
                .map_or_else(Utc::now, |before| before.since),
        });
        match (&*seen, &next) {
            (None, Some(fault)) => error!(
                kind = fault.kind.label(),
                halted = fault.halted,
                "the register cannot be written: new invoices are refused before any device until it can"
            ),
            (Some(before), Some(fault)) if before.kind != fault.kind => warn!(
                kind = fault.kind.label(),
                halted = fault.halted,
                "the register still cannot be written, for another reason"
            ),
            (Some(_), None) => {
                info!("the register can be written again: certification resumes")
            }
            _ => {}
        }
        metrics::register_write_fault(next.as_ref().map(|fault| fault.kind.label()));
        *seen = next;
    }

    /// Looks at the journal and the file system of `dir` (blocking): resumes a halted
    /// journal once its file system looks writable, journals what was kept meanwhile, and
    /// keeps what it sees.
    fn observe(
        &self,
        store: &Store,
        dir: Option<&Path>,
        writer: &super::register_writer::RegisterWriter,
    ) {
        // The state directory's disk holds the register only for the embedded store.
        let space = store.embedded().and(dir).and_then(file_system_fault);
        store.probe();
        if store.write_fault().is_some() && space.is_none() && self.due() {
            match store.resume_writes() {
                Ok(_) => info!("the journal takes writes again"),
                Err(error) => debug!(%error, "the journal cannot resume yet"),
            }
        }
        if store.write_fault().is_none() && writer.unrecorded().len() > 0 {
            if let Err(error) = writer.unrecorded().record_all(store) {
                warn!(%error, "certifications kept in memory cannot be journaled yet");
            }
        }
        let halted = store
            .write_fault()
            .map(|fault| (StorageFaultKind::of(fault.kind), true));
        self.set(halted.or(space.map(|kind| (kind, false))));
    }

    /// Whether a resume may be tried now (at most every [`RESUME_EVERY`]).
    fn due(&self) -> bool {
        let mut tried = lock(&self.tried);
        if tried.is_some_and(|at| at.elapsed() < RESUME_EVERY) {
            return false;
        }
        *tried = Some(Instant::now());
        true
    }
}

/// A file system that is read-only, or has less than [`RESERVE`] free; `None` when it takes
/// writes, or cannot be looked at (then only a failed write says).
fn file_system_fault(dir: &Path) -> Option<StorageFaultKind> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed `statvfs` is a valid value of this plain C struct.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `stat` a valid, writable struct; both
    // outlive the call.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    if stat.f_flag & libc::ST_RDONLY != 0 {
        return Some(StorageFaultKind::ReadOnly);
    }
    let free = stat.f_bavail.saturating_mul(stat.f_frsize);
    (free < RESERVE).then_some(StorageFaultKind::NoSpace)
}

impl Certifier {
    /// Why the register cannot be written now, if it cannot (what the watch last saw).
    pub fn storage_fault(&self) -> Option<StorageFault> {
        self.storage.current()
    }

    /// Before admission: a retry of an invoice certified while the register could not
    /// write it hears 164 until it is journaled; any other invoice is refused while the
    /// register cannot be written (161, 162, 163), before any device or quota.
    pub(super) fn refuse_if_unwritable(
        &self,
        principal: &Principal,
        rn: &str,
    ) -> Result<(), CertifyError> {
        if let Some(device) =
            self.journal
                .unrecorded()
                .holds(&principal.org.id, principal.environment, rn)
        {
            return Err(self.not_recorded(rn, &device));
        }
        match self.storage_fault() {
            Some(fault) => Err(CertifyError::RegisterUnwritable { kind: fault.kind }),
            None => Ok(()),
        }
    }

    /// Whether a run's store `error` says the register cannot be written (a write fault, a
    /// halted journal, an index being reopened, an I/O error), and why; `None` for any other
    /// store error (damage, a conflict...).
    pub(super) fn unwritable_kind(&self, error: &StoreError) -> Option<StorageFaultKind> {
        let seen = || {
            self.store
                .write_fault()
                .map(|f| StorageFaultKind::of(f.kind))
                .or_else(|| self.storage_fault().map(|f| f.kind))
        };
        match error {
            StoreError::Halted(_) => Some(seen().unwrap_or(StorageFaultKind::Io)),
            StoreError::Io(_) | StoreError::Index(_) => Some(
                error
                    .storage_refusal()
                    .map(StorageFaultKind::of)
                    .or_else(seen)
                    .unwrap_or(StorageFaultKind::Io),
            ),
            _ => self
                .store
                .write_fault()
                .map(|f| StorageFaultKind::of(f.kind)),
        }
    }

    /// 164 for `rn`, certified by the channel `device` and kept until the register takes it.
    pub(super) fn not_recorded(&self, rn: &str, device: &str) -> CertifyError {
        CertifyError::CertifiedNotRecorded {
            rn: rn.to_owned(),
            channel: self.channels.by_name(device).map_or("box", |c| c.kind()),
        }
    }

    /// After a run that failed on the register: looks again now (off the runtime's workers)
    /// rather than at the next tick.
    pub(super) async fn observe_storage(self: &Arc<Self>) {
        let this = Arc::clone(self);
        let _ = tokio::task::spawn_blocking(move || {
            let dir = lock(&this.storage_dir).clone();
            this.storage
                .observe(&this.store, dir.as_deref(), &this.journal);
        })
        .await;
    }

    /// Watches the register's file system in `state_dir` every [`WATCH`] (see the module's
    /// doc) until the service is dropped.
    pub fn spawn_storage_watch(self: &Arc<Self>, state_dir: PathBuf) {
        *lock(&self.storage_dir) = Some(state_dir);
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(certifier) = this.upgrade() else {
                    return;
                };
                certifier.observe_storage().await;
                drop(certifier);
                tokio::time::sleep(WATCH).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_keeps_its_start_until_its_kind_changes_and_clears() {
        let watch = StorageWatch::default();
        assert_eq!(watch.current(), None);
        watch.set(Some((StorageFaultKind::NoSpace, false)));
        let first = watch.current().expect("a fault");
        assert_eq!(
            (first.kind, first.halted),
            (StorageFaultKind::NoSpace, false)
        );
        // The journal halts on the same full disk: the same fault, since the same time.
        watch.set(Some((StorageFaultKind::NoSpace, true)));
        let halted = watch.current().expect("a fault");
        assert!(halted.halted);
        assert_eq!(halted.since, first.since);
        watch.set(Some((StorageFaultKind::ReadOnly, true)));
        assert!(watch
            .current()
            .is_some_and(|f| f.since >= first.since && f.kind == StorageFaultKind::ReadOnly));
        watch.set(None);
        assert_eq!(watch.current(), None);
    }

    #[test]
    fn each_kind_has_its_code_and_label() {
        let codes: Vec<u16> = StorageFaultKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes, [161, 162, 163, 165]);
        let labels: Vec<&str> = StorageFaultKind::ALL.iter().map(|k| k.label()).collect();
        assert_eq!(labels, ["no_space", "read_only", "io", "database"]);
    }

    #[test]
    fn a_writable_file_system_with_room_is_no_fault() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The build machine's disk may be nearly full: only a fault other than space would
        // be wrong here.
        assert_ne!(
            file_system_fault(dir.path()),
            Some(StorageFaultKind::ReadOnly)
        );
        assert_eq!(file_system_fault(&dir.path().join("missing")), None);
    }
}
