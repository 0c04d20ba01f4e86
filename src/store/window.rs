//! The DGI's window of pending requests per web API e-MCF, shared by the replicas over
//! PostgreSQL (issue 29; `store/postgres/window.rs`). The embedded store belongs to one
//! process: its channels count their window in memory, and nothing here is shared
//! ([`Store::shares_window`] is `false`, as it is for a process on PostgreSQL that is not a
//! replica; the embedded store's calls take nothing and give nothing back).

use std::time::Duration;

use super::{Store, StoreError};

/// A place of an e-MCF's window taken by this replica, under `epoch` (its fencing token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSlot {
    /// The e-MCF (a device's name).
    pub device: String,
    /// Which place.
    pub slot: i32,
    /// Raised at each taking: the holder's later writes of the place carry it.
    pub epoch: i64,
}

/// A place whose holder's lease is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoubtedSlot {
    /// The place, as it stands.
    pub slot: WindowSlot,
    /// The uid of the request sent under it, if its holder noted it.
    pub uid: Option<String>,
    /// In doubt for longer than asked: whatever its holder sent has reached the DGI.
    pub ready: bool,
}

impl Store {
    /// Whether the e-MCFs' windows are shared through the store (PostgreSQL).
    pub fn shares_window(&self) -> bool {
        matches!(self, Store::Postgres(p) if p.register().replica().is_some())
    }

    /// A free place of `device`'s window of `limit` for this replica, taken; `None` while all
    /// are taken (and on the embedded store).
    pub fn take_window_slot(
        &self,
        device: &str,
        limit: u32,
    ) -> Result<Option<WindowSlot>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(None),
            Store::Postgres(p) => p.run(p.register().take_window_slot(device, limit)),
        }
    }

    /// Notes the uid of the request sent under `slot`; whether the place is still this
    /// replica's.
    pub fn note_window_uid(&self, slot: &WindowSlot, uid: &str) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(true),
            Store::Postgres(p) => p.run(p.register().note_window_uid(slot, uid)),
        }
    }

    /// Gives `slot` back (nothing if it is no longer this replica's).
    pub fn give_back_window_slot(&self, slot: &WindowSlot) -> Result<(), StoreError> {
        match self {
            Store::Embedded(_) => Ok(()),
            Store::Postgres(p) => p.run(p.register().give_back_window_slot(slot)),
        }
    }

    /// Gives back every place this replica still holds (it stops); how many.
    pub fn give_back_window_slots(&self) -> Result<u64, StoreError> {
        match self {
            Store::Embedded(_) => Ok(0),
            Store::Postgres(p) => p.run(p.register().give_back_window_slots()),
        }
    }

    /// Marks `device`'s places whose holder's lease is gone as in doubt; its places in doubt
    /// (ready once marked more than `after` ago).
    pub fn window_doubts(
        &self,
        device: &str,
        after: Duration,
    ) -> Result<Vec<DoubtedSlot>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(Vec::new()),
            Store::Postgres(p) => p.run(p.register().window_doubts(device, after)),
        }
    }

    /// Gives back this replica's places of `device` no lane of it holds (`held`), taken more
    /// than `older` ago (their giving back failed); how many.
    pub fn give_back_lost_window_slots(
        &self,
        device: &str,
        held: &[i32],
        older: Duration,
    ) -> Result<u64, StoreError> {
        match self {
            Store::Embedded(_) => Ok(0),
            Store::Postgres(p) => p.run(
                p.register()
                    .give_back_lost_window_slots(device, held, older),
            ),
        }
    }

    /// Gives back `slot`, in doubt for more than `after`, unchanged since it was read and its
    /// holder still gone: the caller read the DGI's pending list since and its request is not
    /// there.
    pub fn free_window_slot(
        &self,
        slot: &DoubtedSlot,
        after: Duration,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Embedded(_) => Ok(false),
            Store::Postgres(p) => p.run(p.register().free_window_slot(slot, after)),
        }
    }

    /// Which of `uids`, pending on `device`'s DGI, the service knows (noted under a place, or
    /// held by an intent whatever its state).
    pub fn known_window_uids(
        &self,
        device: &str,
        uids: &[String],
    ) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Embedded(_) => Ok(uids.to_vec()),
            Store::Postgres(p) => p.run(p.register().known_window_uids(device, uids)),
        }
    }
}
