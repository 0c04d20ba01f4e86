//! What a certification channel may write to the register, and nothing else: the callback the
//! use case gives every channel (`channel.rs`). Each call runs on the blocking pool (the store
//! fsyncs) and returns once the record is durable: the intent before the channel finalizes,
//! the certification before anyone answers 200.

use std::sync::Arc;

use chrono::{Datelike, FixedOffset, Utc};

use crate::certify::continuity::{self, Seen};
use crate::certify::leader::Leadership;
use crate::certify::register_behind::{self, RegistersBehind, Said};
use crate::certify::unrecorded::{Unrecorded, UnrecordedSet};
use crate::certify::CertifyError;
use crate::model::{BoxCounters, DeviceView, Intent, IntentId, RegisterEntry, SecurityElements};
/// The places of the DGI's window shared by the replicas, as a channel holds them.
pub(crate) use crate::store::{DoubtedSlot, WindowSlot};
use crate::store::{QuotaClaim, Store, StoreError};

/// An intent the channel must not finalize: not journaled (`journaled` is `None`), or
/// journaled while the register halted (its id: settled as not finalized once the register
/// can be written again).
#[derive(Debug)]
pub struct IntentRefused {
    /// The intent, if it is in the journal.
    pub journaled: Option<IntentId>,
    /// Why (a store error).
    pub error: CertifyError,
}

/// The register as a channel may write it (not the store's `Journal`, the file under it).
#[derive(Clone)]
pub struct RegisterWriter {
    store: Arc<Store>,
    offset: FixedOffset,
    /// Certifications the register could not write yet (`unrecorded.rs`).
    unrecorded: UnrecordedSet,
    behind: RegistersBehind,
    /// This process's replica and whether it leads (`leader.rs`, `replica.rs`).
    leadership: Leadership,
}

impl RegisterWriter {
    /// The register in `store`; `offset` is the quota year's time zone.
    pub(crate) fn new(store: Arc<Store>, offset: FixedOffset) -> RegisterWriter {
        RegisterWriter {
            store,
            offset,
            unrecorded: UnrecordedSet::default(),
            behind: RegistersBehind::default(),
            leadership: Leadership::new(&Leadership::replica_name()),
        }
    }

    /// This process's replica and its view of the leader lease.
    pub(crate) fn leadership(&self) -> &Leadership {
        &self.leadership
    }

    /// Whether this process may start a call to the DGI for an invoice it owns: always on the
    /// embedded store; on PostgreSQL while its own lease is surely held (after it, another
    /// replica may take its invoices over: `certify/replica.rs`).
    pub(crate) fn may_call_dgi(&self) -> bool {
        matches!(*self.store, Store::Embedded(_)) || self.leadership.holds_own_lease()
    }

    /// Whether other replicas hold their lease now (never on the embedded store; `true`
    /// while the database cannot tell).
    pub(crate) async fn others_run(&self) -> bool {
        if matches!(*self.store, Store::Embedded(_)) {
            return false;
        }
        blocking(&self.store, |store| store.other_replicas_live())
            .await
            .unwrap_or(true)
    }

    /// Whether this process does the work one replica at a time does (the web API's sweep
    /// of stray requests, the alerts): always on the embedded store (one process), while it
    /// holds the leader lease on PostgreSQL.
    pub(crate) fn leads(&self) -> bool {
        matches!(*self.store, Store::Embedded(_)) || self.leadership.leads()
    }

    /// Says in the register why only an administrator can settle `intent`, for every replica
    /// to show (a no-op on the embedded store: its one process keeps it). Tried again for a
    /// minute while the register cannot be written; the channel keeps it in memory anyway.
    pub(crate) async fn mark_awaiting(&self, intent: IntentId, why: String) {
        let mut pause = std::time::Duration::from_millis(200);
        for _ in 0..10 {
            let why = why.clone();
            match blocking(&self.store, move |store| store.mark_awaiting(intent, &why)).await {
                Ok(_) => return,
                Err(error) => {
                    tracing::warn!(%error, intent, "could not say in the register that an invoice waits for an administrator; trying again");
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_secs(10));
        }
    }

    /// The certifications the register could not write yet.
    pub(crate) fn unrecorded(&self) -> &UnrecordedSet {
        &self.unrecorded
    }

    /// Journals `intent` (fsync'd) before the channel finalizes it. The channel may finalize
    /// only on `Ok`: an intent journaled while the register halted (its last page fsync'd,
    /// but the index could not take it, so the certification could not be written either) is
    /// refused with its id ([`IntentRefused::journaled`]): the channel cancels, and the intent
    /// is settled as not finalized once the register can be written again.
    ///
    /// With `view_of` (a machine's NIM), the register's view of the intent's device and of
    /// that machine before this intent is read with it, at no cost of its own
    /// ([`Store::record_intent_with_view`]).
    pub async fn intent(
        &self,
        intent: Intent,
        quota: Option<QuotaClaim>,
        view_of: Option<String>,
    ) -> Result<(IntentId, Option<DeviceView>), IntentRefused> {
        let store = Arc::clone(&self.store);
        let rn = intent.rn.clone();
        let journaled = tokio::task::spawn_blocking(move || {
            let (id, view) = match view_of {
                Some(nim) => {
                    let (id, view) = store.record_intent_with_view(intent, quota, &nim)?;
                    (id, Some(view))
                }
                None => (store.record_intent(intent, quota)?, None),
            };
            Ok::<_, StoreError>((id, view, store.write_fault()))
        })
        .await;
        match journaled {
            Ok(Ok((id, view, None))) => Ok((id, view)),
            Ok(Ok((id, _, Some(fault)))) => Err(IntentRefused {
                journaled: Some(id),
                error: CertifyError::Store(StoreError::Halted(fault.detail)),
            }),
            // PostgreSQL refused the unit admission reserved: another replica took the last.
            Ok(Err(StoreError::QuotaExhausted(_))) if quota.is_some() => {
                let limit = quota.map_or((0, 0), |q| (q.year, q.quota));
                Err(IntentRefused {
                    journaled: None,
                    error: CertifyError::QuotaExhausted {
                        used: limit.1,
                        quota: limit.1,
                        year: limit.0,
                    },
                })
            }
            Ok(Err(StoreError::InFlight(_))) => Err(IntentRefused {
                journaled: None,
                error: CertifyError::InFlight { rn },
            }),
            Ok(Err(error)) => Err(IntentRefused {
                journaled: None,
                error: CertifyError::from(error),
            }),
            Err(error) => Err(IntentRefused {
                journaled: None,
                error: task_failed(error),
            }),
        }
    }

    /// Journals the certification of `intent` (`of` is that intent, as the channel holds it;
    /// fsync'd before this returns) and returns its LogInvoices entry. `source` says how it
    /// was learnt: `finalize` or `reconciled`.
    pub async fn certified(
        &self,
        intent: IntentId,
        of: &Intent,
        security: SecurityElements,
        source: &str,
    ) -> Result<RegisterEntry, CertifyError> {
        let written = self.certify(intent, of, security, source, false).await?;
        Ok(written.0)
    }

    /// [`RegisterWriter::certified`], and the register's view of the intent's device (its
    /// other open intents) and of the entry's machine before this entry, read in the same
    /// write ([`Store::record_certified_with_view`]).
    pub async fn certified_with_view(
        &self,
        intent: IntentId,
        of: &Intent,
        security: SecurityElements,
        source: &str,
    ) -> Result<(RegisterEntry, DeviceView), CertifyError> {
        let (entry, view) = self.certify(intent, of, security, source, true).await?;
        Ok((entry, view.unwrap_or_default()))
    }

    async fn certify(
        &self,
        intent: IntentId,
        of: &Intent,
        security: SecurityElements,
        source: &str,
        with_view: bool,
    ) -> Result<(RegisterEntry, Option<DeviceView>), CertifyError> {
        let source = source.to_owned();
        let certified_at = Utc::now();
        // The quota year is the one the request arrived in, whichever store: the one its unit
        // was reserved (and, on PostgreSQL, claimed) under, even when certified after midnight
        // on 31 December.
        let quota_year = of.received_at.with_timezone(&self.offset).year();
        let unrecorded = self.unrecorded.clone();
        // What a retry names, from the caller's own intent: keeping it never reads the index
        // (which may be what fails).
        let (org, environment, rn, device) = (
            of.org.clone(),
            of.environment,
            of.rn.clone(),
            of.device.clone(),
        );
        blocking(&self.store, move |store| {
            let elements = security.clone();
            let written = if with_view {
                store
                    .record_certified_with_view(intent, quota_year, certified_at, elements, &source)
                    .map(|(entry, view)| (entry, Some(view)))
            } else {
                store
                    .record_certified(intent, quota_year, certified_at, elements, &source)
                    .map(|entry| (entry, None))
            };
            // The channel certified it but the register cannot write now: its elements are
            // kept until it can (`unrecorded.rs`), never lost, never certified again.
            if written.is_err() && store.write_fault().is_some() {
                let kept = Unrecorded {
                    org,
                    environment,
                    rn,
                    device,
                    security,
                    source,
                    certified_at,
                    quota_year,
                };
                unrecorded.keep(intent, kept);
            }
            written
        })
        .await
    }

    /// Journals that `intent` was not finalized.
    pub async fn abandoned(&self, intent: IntentId, reason: String) -> Result<(), CertifyError> {
        blocking(&self.store, move |store| {
            store.record_abandoned(intent, &reason)
        })
        .await
    }

    /// Whether the e-MCFs' windows are shared with other replicas (PostgreSQL, a replica).
    pub(crate) fn shares_window(&self) -> bool {
        self.store.shares_window()
    }

    /// A free place of `device`'s shared window of `limit`, taken; `None` while all are.
    pub(crate) async fn take_window_slot(
        &self,
        device: &str,
        limit: u32,
    ) -> Result<Option<WindowSlot>, CertifyError> {
        let device = device.to_owned();
        blocking(&self.store, move |store| {
            store.take_window_slot(&device, limit)
        })
        .await
    }

    /// Notes the uid sent under `slot`; whether the place is still this replica's.
    pub(crate) async fn note_window_uid(
        &self,
        slot: &WindowSlot,
        uid: &str,
    ) -> Result<bool, CertifyError> {
        let (slot, uid) = (slot.clone(), uid.to_owned());
        blocking(&self.store, move |store| store.note_window_uid(&slot, &uid)).await
    }

    /// Gives `slot` back.
    pub(crate) async fn give_back_window_slot(
        &self,
        slot: &WindowSlot,
    ) -> Result<(), CertifyError> {
        let slot = slot.clone();
        blocking(&self.store, move |store| store.give_back_window_slot(&slot)).await
    }

    /// `device`'s places whose holder is gone (marked now).
    pub(crate) async fn window_doubts(
        &self,
        device: &str,
        after: std::time::Duration,
    ) -> Result<Vec<DoubtedSlot>, CertifyError> {
        let device = device.to_owned();
        blocking(&self.store, move |store| {
            store.window_doubts(&device, after)
        })
        .await
    }

    /// Gives back this replica's places of `device` none of its lanes holds (`held`), taken
    /// more than `older` ago.
    pub(crate) async fn give_back_lost_window_slots(
        &self,
        device: &str,
        held: Vec<i32>,
        older: std::time::Duration,
    ) -> Result<u64, CertifyError> {
        let device = device.to_owned();
        blocking(&self.store, move |store| {
            store.give_back_lost_window_slots(&device, &held, older)
        })
        .await
    }

    /// Gives back `slot`, in doubt for more than `after` and its request no longer pending.
    pub(crate) async fn free_window_slot(
        &self,
        slot: &DoubtedSlot,
        after: std::time::Duration,
    ) -> Result<bool, CertifyError> {
        let slot = slot.clone();
        blocking(&self.store, move |store| {
            store.free_window_slot(&slot, after)
        })
        .await
    }

    /// Which of `uids`, pending on `device`'s DGI, the service knows.
    pub(crate) async fn known_window_uids(
        &self,
        device: &str,
        uids: Vec<String>,
    ) -> Result<Vec<String>, CertifyError> {
        let device = device.to_owned();
        blocking(&self.store, move |store| {
            store.known_window_uids(&device, &uids)
        })
        .await
    }

    /// The channel references (web API uids) of `device`'s open intents; `None` when the
    /// register cannot be read (then nothing can be said to be owned by no intent).
    pub async fn open_refs(&self, device: &str) -> Option<Vec<String>> {
        let device = device.to_owned();
        blocking(&self.store, move |store| store.open_intents_of(&device))
            .await
            .map(|open| {
                open.into_iter()
                    .filter_map(|(_, intent)| intent.channel_ref)
                    .collect()
            })
            .ok()
    }

    /// Checks what a channel said of its counters against `known`: a fiscal anomaly is
    /// journaled once and logged, never refused.
    pub async fn check_continuity(&self, known: Option<&BoxCounters>, seen: Seen<'_>) {
        continuity::check(&self.store, known, seen).await;
    }

    /// The register's view of `device` (its open intents but `except`) and of the machine
    /// `nim`, read now.
    pub(crate) async fn device_view(
        &self,
        device: &str,
        nim: &str,
        except: Option<IntentId>,
    ) -> Result<DeviceView, CertifyError> {
        let (device, nim) = (device.to_owned(), nim.to_owned());
        blocking(&self.store, move |store| {
            store.device_view(&device, &nim, except)
        })
        .await
    }

    /// Whether a channel's counter runs ahead of the register as `view` holds it
    /// (`register_behind.rs`): the anomaly journaled once, the channel stopped, 171 or 172.
    pub(crate) async fn check_ahead(
        &self,
        said: Said<'_>,
        view: &DeviceView,
    ) -> Result<(), CertifyError> {
        register_behind::check(&self.store, &self.behind, said, view).await
    }

    /// The channels stopped because the register is behind them.
    pub(crate) fn registers_behind(&self) -> &RegistersBehind {
        &self.behind
    }
}

/// Runs a blocking store call on the blocking pool (the store fsyncs).
pub(crate) async fn blocking<T, F>(store: &Arc<Store>, call: F) -> Result<T, CertifyError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || call(&store))
        .await
        .map_err(task_failed)?
        .map_err(CertifyError::from)
}

/// A blocking-pool task that panicked or was cancelled, as an internal error.
pub(crate) fn task_failed(error: tokio::task::JoinError) -> CertifyError {
    CertifyError::Internal(format!("store task failed: {error}"))
}
