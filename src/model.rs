//! The gateway's records: organizations, API keys, LogInvoices entries and fiscal anomalies.
//! Plain data shared by the store (which persists them) and the layers above (which build and
//! read them).

mod anomaly;
mod key;
mod org;
mod probe;
mod register;

pub use anomaly::{AnomalyAck, AnomalyRecord, BoxCounters, FiscalAnomaly, FiscalAnomalyKind};
pub use key::{KeyId, KeyRecord};
pub use org::{Environment, OrgId, Organization, Plan};
pub use probe::{ProbeReport, SeenAnomaly};
pub use register::{
    DeviceTotals, IdempotencyBinding, Intent, IntentId, RegisterEntry, SecurityElements,
};
