//! Certification: the use case. Validates a request, checks duplicates, reserves quota, runs
//! the invoice on the device as one session, journals the intent and the certification, and
//! answers (DESIGN.md section 4).
//!
//! | module | one concept |
//! |---|---|
//! | `request` | the JSON body of `POST /Invoice`, parsed without f64 |
//! | `validate` | one rule per error code; the typed, device-ready invoice and its digest |
//! | `claims` | rn in flight and quota units reserved, released on drop |
//! | `devices` | which device an invoice runs on; each organization's sandbox simulator, started on demand |
//! | `run` | the device sequence of one invoice (C1..38) and its failure rules |
//! | `readiness` | whether each configured device could certify now, and why not |
//! | `readings` | the rates of C1h (or the configured table) and the checks of `R:` |
//! | `compare` | the 33h check: the box's subtotal against the gateway's, field by field |
//! | `continuity` | the box's counters against the register: fiscal anomalies |
//! | `reconcile` | settling an unknown 38h outcome from C1h |
//! | `record` | journaling certifications and abandonments off the async threads |
//! | `service` | `Certifier`: authentication, certify, lookup, status, background reconciliation |
//! | `error` | `CertifyError` and its stable codes |

mod claims;
mod compare;
mod continuity;
mod devices;
mod error;
mod readiness;
mod readings;
mod reconcile;
mod record;
pub mod request;
mod run;
mod service;
pub mod validate;

pub use devices::{sandbox_device_name, SandboxFactory};
pub use error::{AuthFailure, CertifyError};
pub use readiness::Problem;
pub use service::{Certified, Certifier, CertifierSettings, Principal, ServiceStatus};
