//! Certification: the use case and nothing else (docs/design.md §3-4). One invoice goes
//! `service` (the steps) -> `invoice` (parse, validate, digest) -> `admission` (replay,
//! conflicts, quota) -> a channel through the `channel` seam (`box_channel`: the e-MCF box;
//! `web_api_channel`: the DGI's web API) -> `register_writer` (intent and certification,
//! fsync'd) -> the answer.
//!
//! | module | one concept |
//! |---|---|
//! | `service` | `Certifier`: the use case as named steps; lookup |
//! | `invoice` | the request body (`request`, parsed without f64), one rule per error code, the channel-neutral invoice, its totals and its digest |
//! | `admission` | API key -> principal; duplicate, idempotency and quota claims (`claims`) |
//! | `channel` | the seam: the closed enum `Channel` (`Box`, `WebApi`: arrive, settle, view, readiness, probe), `Waiting`, `Lane` (certify one invoice) |
//! | `channels` | which channel an invoice goes to; each organization's sandbox, started on demand |
//! | `box_channel` | the e-MCF box as a channel: the session of one invoice (C1..38), its commands, 33h check, settling from C1h, readiness |
//! | `web_api_channel` | the DGI's web API as a channel: request, check, intent with the uid, confirm; the pending window; a lost confirm answer settled from the pending list |
//! | `register_writer` | `RegisterWriter`: the register as a channel may write it (intent, certification, abandonment, counter continuity) |
//! | `continuity` | a box's counters against the register: fiscal anomalies |
//! | `register_behind` | a channel's counter ahead of its register: the anomaly, the channel stopped until an administrator settles it |
//! | `in_doubt` | `InDoubt`: the channels whose last outcome is not known, and the `Reconciler` that settles them in the background |
//! | `leader` | `Leadership`: whether this replica holds the `leader` lease (the work one replica at a time does over a shared store), and its fencing epoch |
//! | `alert_records` | the alerts' state and their e-mails' records in the store over PostgreSQL, written fenced by this replica's leases |
//! | `resolve` | invoices in doubt only an administrator can settle: list, count, resolve (journaled with who) |
//! | `status` | the service's own status types, readiness, gauges, probe |
//! | `error` | `CertifyError` and its stable codes |
//! | `warnings` | warnings on a certified invoice (301: a USD invoice worth less than a dollar), from its register entry |

mod admission;
mod alert_records;
mod box_channel;
mod channel;
mod channels;
mod continuity;
mod error;
mod in_doubt;
pub mod invoice;
pub mod leader;
mod register_behind;
mod register_writer;
mod replica;
mod resolve;
mod service;
mod status;
mod storage_fault;
mod stored_devices;
mod unrecorded;
pub mod warnings;
mod web_api_channel;

/// A request's place in the arrival order (`Certifier::take_place`).
pub use crate::arrivals::Turn;
pub use admission::Principal;
pub use alert_records::MailClaim;
pub use box_channel::{box_commands, check_frames, new_box_channel};
pub use channel::{Channel, SharedChannel};
pub use channels::{sandbox_device_name, SandboxFactory};
pub use error::{AuthFailure, CertifyError, CreditExcess, TokenReason};
pub use resolve::{OpenIntent, Resolution, ResolveError};
pub use service::{Certified, Certifier, CertifierSettings};
pub use status::{ChannelView, DgiContact, Problem, ServiceStatus};
pub use storage_fault::{StorageFault, StorageFaultKind};
pub use stored_devices::KeySource;
pub use web_api_channel::{new_web_api_channel, CdfCurrency, GivenToken, WebApiSettings};
