//! API keys as stored: never the secret, only its SHA-256.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::org::{Environment, OrgId};

/// A key's public id (the part after the prefix, shown in lists and logs).
pub type KeyId = String;

/// An issued API key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Public id.
    pub id: KeyId,
    /// The organization it identifies.
    pub org: OrgId,
    /// Production (`mcf_live_`) or Sandbox (`mcf_test_`).
    pub environment: Environment,
    /// Lowercase hex SHA-256 of the secret part.
    pub secret_sha256: String,
    /// Free text to tell keys apart (e.g. "ERP till 2").
    pub label: String,
    /// Whether requests with it are accepted.
    pub enabled: bool,
    /// When it was issued.
    pub created_at: DateTime<Utc>,
}
