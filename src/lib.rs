//! emcf-gateway: certifies invoices with the DRC e-MCF fiscal device for ERPs on the shop LAN.
//!
//! Layers, one direction of dependency (see ARCHITECTURE.md): `mcf_sfe` (bytes and frames)
//! <- [`device`] (one task owns each port) <- [`certify`] (the use case) <- [`api`] (HTTP) and
//! [`cli`]. [`store`] (journal + sled) is used by `certify` and [`admin`] only.

pub mod admin;
pub mod alerts;
pub mod api;
pub mod arrivals;
pub mod atomic_file;
pub mod certify;
pub mod cli;
pub mod config;
pub mod dashboard;
pub mod device;
pub mod failpoint;
pub mod http_body;
pub mod http_request;
pub mod i18n;
pub mod keys;
pub mod markup;
pub mod metrics;
pub mod model;
pub mod notices;
pub mod notify;
pub mod qr;
pub mod receipt;
pub mod store;
pub mod sync;
