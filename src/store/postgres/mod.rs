//! The register on PostgreSQL (issue 28): what the hosted deployment keeps in a database
//! server instead of the state directory. The embedded store (journal + sled,
//! `store/embedded/`) stays the default. What a provider sets up: docs/postgresql.md.
//!
//! * `settings.rs`: how to reach the server ([`PgSettings`]), made by the configuration's
//!   `[store]` table.
//! * `connect.rs`: the pool of connections ([`PgPool`]), refusing a server that would lose a
//!   commit or is too old.
//! * `migrate.rs`: the schema's versioned migrations applied at start ([`migrate`]);
//!   `migrations.rs`: the binary's list ([`MIGRATIONS`]), SQL under `migrations/`.
//! * `register.rs`: the register's writes and reads ([`PgRegister`]): an intent with its
//!   quota unit, a certification numbered and chained, an intent abandoned.
//! * `access.rs`: organizations, API keys and dashboard tokens ([`PgRegister::issue_key`],
//!   [`PgRegister::revoke_dashboard_token`]...), each write with its event.
//! * `device_view.rs`: a device's open intents and its machine's counters
//!   (`model::DeviceView`), read with the intent or the certification they go with.
//! * `reads.rs`: the register's reads, with the embedded store's answers: entries by
//!   sequence, pages of them, credit notes and their originals, open intents, bindings.
//! * `leases.rs`: work one replica at a time does, with a fencing epoch (issue 29).
//! * `alert_state.rs`: the alerts' state and their e-mails' records, written fenced by the
//!   writer's leases (issue 29).
//! * `sessions.rs`: the dashboard's sessions, sign-in form values and failed sign-ins,
//!   shared by every replica (issue 29).
//! * `devices.rs`: web API e-MCFs kept as data, their tokens sealed (issue 29).
//! * `view.rs`: what admission reads for one invoice, in one statement
//!   ([`PgRegister::admission_view`]).
//! * `import.rs`: an embedded register copied in, in one transaction, with its ids
//!   ([`PgRegister::import`]; `emcf-gateway store import`).
//! * `export.rs`: every event and intent as stored, for an export back to a journal.
//! * `verify.rs`: `log verify` of the register ([`PgRegister::verify`]): every chain
//!   recomputed, the numbers without a gap, every kept invoice against its digest.
//! * `store.rs`: [`PgStore`], what the seam (`store::Store`) calls: the register run from
//!   the caller's thread on the runtime's handle.
//! * `error.rs`: what can go wrong ([`PgError`]).

mod access;
mod alert_state;
mod boxes;
mod cached;
mod connect;
mod device_view;
mod devices;
mod error;
mod export;
mod import;
mod leases;
mod migrate;
mod migrations;
mod reads;
mod register;
mod replicas;
mod sessions;
mod settings;
mod store;
mod verify;
mod view;
mod window;

pub use alert_state::MailClaim;
pub use connect::{PgPool, ServerFacts, DURABLE_COMMIT, OLDEST_SERVER};
pub use devices::{DeviceRefusal, DeviceWritten, StoredDevice};
pub use error::PgError;
pub use export::{EventRow, IntentRow, IntentState};
pub use import::{ImportCounts, ImportRefusal, ImportRules, Settled, IMPORTED};
pub use migrate::{migrate, schema_state, Migrated, Migration, SchemaState, MIGRATION_LOCK};
pub use migrations::MIGRATIONS;
pub use register::{PgRegister, QuotaClaim, Refusal, Written};
pub use replicas::lease_of;
pub use sessions::{FailureKind, SessionLifetimes};
pub use settings::{PgSettings, PgTls};
pub use store::PgStore;
pub use verify::PgVerifyReport;
