//! The certification path on both channels, through the real binary: the box (a simulator on
//! a pty, a fault relay on a bad cable, every firmware profile, wire captures) and the DGI's
//! web API (its simulator on a socket), device health, the register's durability, and the
//! gateway against a model of itself.
//!
//! One test binary for the theme (shared support compiled once): `cargo test --test device`,
//! `cargo test --test device web_api::` for one module.

#[path = "../common/mod.rs"]
mod common;
// Only `config check` (health/config_check.rs) sends mail here: part of the sink is unused.
#[allow(dead_code)]
#[path = "../support/smtp.rs"]
mod smtp;
// `path()` serves the operations tests only.
#[allow(dead_code)]
#[path = "../support/tmpfs.rs"]
mod tmpfs;

mod captures;
mod disk_full;
mod durability;
mod faults;
mod firmware_matrix;
mod health;
mod link_faults;
mod model;
mod register_behind;
mod web_api;
mod web_api_recovery;
mod web_api_replicas;
