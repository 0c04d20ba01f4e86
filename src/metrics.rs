//! Process-wide counters and histograms, rendered as Prometheus text at `GET /metrics`:
//! certifications by outcome and type, device round-trip time per command, time waited in a
//! device's queue. Gauges that are states (link up, queue depth, quota used) are read when
//! rendering, from the certification service.
//!
//! `/metrics` needs no key, so no label names an organization or anything derived from one
//! unless `[http] metrics_per_organization` is set: the quotas are counted, not listed, and
//! the sandboxes (each organization's own channel, `sandbox-<organization id>`) are recorded
//! under their own names but rendered together under [`SANDBOXES`]. Configured devices keep
//! their names: the operator chose them in `[[devices]]`.
//!
//! Recording is a few atomic operations (and a short lock for a new label pair), so the device
//! and certification layers record directly.
//!
//! `record.rs` the registry and the recording calls, `render.rs` the text and the gauges,
//! `histogram.rs` the buckets.

mod histogram;
mod record;
mod render;

pub use record::{
    alert_raised, alerts_active, answered_invoices, backup_last_success, certification,
    connection_refused, dashboard_sign_in, device_reply_anomaly, device_round_trip, queue_wait,
    register_write_fault, web_api_round_trip,
};
pub use render::{render, Gauges, SANDBOXES};

#[cfg(test)]
mod tests;
