//! What a shop's people do with the gateway, through the real binary: the first run, the
//! dashboard (sign-in, keys, languages, receipts), the auditor's questions, alerts and notices
//! by e-mail, backups and restores, the state directory's modes, upgrades from every release.
//!
//! One test binary for the theme (shared support compiled once): `cargo test --test
//! operations`, `cargo test --test operations backup::` for one module.

#[path = "../common/mod.rs"]
mod common;
use common::pg;
#[path = "../support/smtp.rs"]
mod smtp;
#[path = "../support/tmpfs.rs"]
mod tmpfs;

mod alerts;
mod audit;
mod backup;
mod dashboard;
mod dashboard_keys;
mod dashboard_lang;
mod dashboard_receipt;
mod dashboard_sign_in;
mod first_run;
mod full_disk;
mod on_postgres;
mod postgres;
mod postgres_access;
mod postgres_boxes;
mod postgres_devices;
mod postgres_leases;
mod postgres_reads;
mod postgres_register;
mod postgres_replicas;
mod postgres_roles;
mod postgres_schema;
mod postgres_sessions;
mod postgres_window;
mod replicas;
mod state_modes;
mod store_config;
mod store_move;
mod upgrade;
