//! The schema's migrations this binary carries, in order: each `migrations/NNNN_name.sql`
//! embedded with `include_str!`, applied by `migrate.rs` at start. An applied migration is
//! never edited (its checksum is recorded): a change is a new file with the next version.

use super::migrate::Migration;

/// Every migration, versions increasing from 1 without a gap.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "register",
    sql: include_str!("../../../migrations/0001_register.sql"),
}];
