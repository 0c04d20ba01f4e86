//! What the administration methods answer, typed. Their JSON (the admin socket's format, read
//! by the CLI) keeps the field names below.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{Organization, RegisterEntry};
use crate::store::DashboardToken;

/// An organization's quota use in the current quota year.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotaUse {
    /// The quota year.
    pub year: i32,
    /// Production invoices certified this year.
    pub used: u64,
    /// The annual quota.
    pub quota: u64,
    /// What is left.
    pub remaining: u64,
}

/// One organization with its quota use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrgShown {
    /// The organization.
    pub organization: Organization,
    /// Its quota use this year.
    pub quota: QuotaUse,
}

/// A dashboard token as shown: never its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicToken {
    /// Its public id.
    pub id: String,
    /// The organization it signs in to.
    pub org: String,
    /// Whose token it is.
    pub label: String,
    /// When it was issued.
    pub created_at: DateTime<Utc>,
    /// Revoked: it signs in no more.
    pub revoked: bool,
}

impl From<&DashboardToken> for PublicToken {
    fn from(token: &DashboardToken) -> PublicToken {
        PublicToken {
            id: token.id.clone(),
            org: token.org.clone(),
            label: token.label.clone(),
            created_at: token.created_at,
            revoked: token.revoked,
        }
    }
}

/// Register entries per environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryCounts {
    /// Production entries.
    pub production: u64,
    /// Sandbox entries.
    pub sandbox: u64,
}

/// API keys of an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyCounts {
    /// All keys.
    pub total: usize,
    /// Enabled keys.
    pub enabled: usize,
}

/// An organization's overview (the dashboard's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrgSummary {
    /// The organization.
    pub organization: Organization,
    /// Its quota use this year.
    pub quota: QuotaUse,
    /// Its register entries.
    pub entries: EntryCounts,
    /// Its API keys.
    pub keys: KeyCounts,
}

/// A page of one organization's register, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogPage {
    /// The entries.
    pub entries: Vec<RegisterEntry>,
    /// The cursor of the next page (entries below this sequence), if there is one.
    pub next_before: Option<u64>,
}
