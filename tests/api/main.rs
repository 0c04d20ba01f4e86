//! The HTTP API as an ERP, an integrator and an attacker on the LAN meet it, through the real
//! binary: certification and its errors, languages, quotas and keys, warnings, retries, the
//! receipts and exports, `/metrics`, the OpenAPI document, hostile clients and bodies.
//!
//! One test binary for the theme (shared support compiled once): `cargo test --test api`,
//! `cargo test --test api errors::` for one module.

#[path = "../common/mod.rs"]
mod common;

mod csv_exports;
mod errors;
mod hostile_clients;
mod hostile_http;
mod invoices;
mod languages;
mod observability;
mod on_postgres;
mod openapi;
mod quota_keys;
mod receipts;
mod register_behind;
mod retries;
mod smoke;
mod warnings;
