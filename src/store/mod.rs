//! What the gateway keeps, behind one seam: [`Store`], a closed enum over its
//! implementations, as certification reaches its devices through one closed channel seam
//! (docs/design.md §11).
//!
//! * `embedded/`: the journal (the register, fsync'd, hash-chained) and its sled index, in
//!   the state directory: the default, for one machine ([`EmbeddedStore`]; its files, record
//!   format and recovery rules are described there).
//! * `postgres/`: the register and everything else in a PostgreSQL database, for hosted use
//!   (`[store] url`; docs/postgresql.md).
//! * `transfer.rs`: a register moved between them (`store import`, `store export`).
//! * `view.rs`: what admission reads for one invoice, in one read ([`AdmissionView`]).
//! * `device_view.rs`: what the register holds of one device (`model::DeviceView`), read
//!   with the write it goes with.
//! * `error.rs`: [`StoreError`], what any of them can answer.
//! * `sealed.rs`: secrets kept encrypted in the store (a web API e-MCF's token).
//! * `fault.rs`: [`WriteFault`], why the register cannot be written now (either store).
//!
//! Every method blocks (file I/O and fsync, or a round trip to the database): callers run them
//! off the async runtime's workers (`spawn_blocking`), as they always have. Certification,
//! admission, admin, alerts and the dashboard name [`Store`], never a variant's own type;
//! only the code that opens a store, and the backup of an embedded one, names a variant.

mod alert_state;
mod device_view;
mod devices;
pub mod embedded;
mod error;
mod fault;
pub mod postgres;
mod replicas;
pub mod sealed;
mod seam;
mod sessions;
pub mod transfer;
mod view;
mod window;

pub use embedded::{
    compare, copy_journal, journal_path, summarize, Comparison, DashboardToken, DurableJournal,
    EmbeddedStore, EntryFilter, EntryTally, Event, HistoryCheck, JournalSummary, Progress, Record,
    StoreOptions, VerifyReport, DEFAULT_INDEX_CACHE_MIB, MAX_RECORD, RESTORE_MARKER,
};
pub use error::{DamageAt, StoreError};
pub use fault::{FaultKind, WriteFault};
pub use postgres::StoredDevice;
pub use postgres::{FailureKind, SessionLifetimes};
pub use postgres::{MailClaim, QuotaClaim};
pub use seam::Store;
pub use view::{AdmissionAsk, AdmissionView};
pub use window::{DoubtedSlot, WindowSlot};

#[cfg(test)]
pub(crate) use embedded::tests;
