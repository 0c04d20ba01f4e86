//! A simulated DRC e-MCF fiscal device that speaks MCF-SFE (crate `mcf-sfe`) byte for byte.
//!
//! The [`engine`] executes commands against an invoice state machine and a persisted fiscal
//! memory; the [`link`] owns the bytes (NAK, SYN, SEQ replay, faults, pacing) over any
//! `AsyncRead + AsyncWrite`; [`port`] opens the pseudo-terminal or serial port it serves.
//! A [`firmware`] profile makes the box talk like one real firmware instead of PROTOCOL.md.
//! [`edef`] simulates the DGI's e-MCF web API (e-DEF) over HTTP(S) instead of the box.

pub mod config;
pub mod edef;
pub mod engine;
pub mod error;
pub mod faults;
pub mod firmware;
pub mod fiscal;
pub mod invoice;
pub mod link;
pub mod port;
pub mod reader;
pub mod relay;
pub mod replay;
pub mod runner;
pub mod totals;

pub use firmware::Firmware;
pub use runner::{start_on_pty, RunError, RunningSim, SimOptions};
