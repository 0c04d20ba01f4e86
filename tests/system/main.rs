//! The tests that drive programs of the system around the gateway: the dashboard in Chromium,
//! schemathesis on the OpenAPI document, the integrator kit's clients (Python, Node, PHP,
//! Mono) and the nginx example, the systemd unit (`systemd-analyze`), an independent web API
//! written in Python.
//!
//! Each says what it needs and how to get it; what is missing skips its test with a note,
//! except under CI (`CI=true`), where `.ci/run` installs everything and a missing one fails.
//! In a binary of their own: they are the heaviest, and they keep the timing-sensitive tests
//! of the other binaries from sharing the machine with a browser or a compiler.
//!
//! `cargo test --test system`, `cargo test --test system browser::` for one module.

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod example_clients;
mod schemathesis;
mod systemd;
mod web_api_interop;
