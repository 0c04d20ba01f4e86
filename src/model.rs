//! The gateway's records: organizations, API keys, LogInvoices entries and fiscal anomalies.
//! Plain data shared by the store (which persists them) and the layers above (which build and
//! read them).

mod anomaly;
mod entry_wire;
mod invoice_content;
mod key;
mod org;
mod probe;
mod register;

pub use anomaly::{
    missing_numbers, numbers_text, parse_numbers, total_counter, AnomalyAck, AnomalyRecord,
    BoxCounters, DeviceView, FiscalAnomaly, FiscalAnomalyKind, LostInvoice,
};
pub use invoice_content::{
    is_credit_note_type, reference_of, ClientContent, ContentError, InvoiceContent, ItemContent,
    OperatorContent, PaymentContent,
};
pub use key::{KeyId, KeyRecord};
pub use org::{is_plausible_email, Environment, OrgId, Organization, Plan};
pub use probe::{ProbeReport, SeenAnomaly};
pub use register::{
    DeviceTotals, GroupAmounts, IdempotencyBinding, Intent, IntentId, RegisterEntry,
    SecurityElements, FISCAL_CURRENCY,
};
