//! The register on PostgreSQL (issue 28, under construction): what the hosted deployment
//! keeps in a database server instead of the state directory. The embedded store (journal +
//! sled, the rest of `store`) stays the default.
//!
//! * `settings.rs`: how to reach the server ([`PgSettings`]), made by the configuration's
//!   `[store]` table.

mod settings;

pub use settings::{PgSettings, PgTls};
