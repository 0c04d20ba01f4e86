//! What the journal records: one [`Event`] per [`Record`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{
    FiscalAnomaly, Intent, IntentId, KeyId, KeyRecord, OrgId, Organization, RegisterEntry,
};

/// One fact, as journaled. The JSON form is tagged by `"type"` (`organization_saved`,
/// `key_issued`, `key_enabled`, `key_disabled`, `intent`, `certified`, `abandoned`,
/// `dashboard_token_issued`, `dashboard_token_revoked`, and since 1.1.0 `fiscal_anomaly`,
/// `fiscal_anomaly_acknowledged`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// An organization was created or changed (the whole record, as saved).
    OrganizationSaved(Organization),
    /// An API key was issued.
    KeyIssued(KeyRecord),
    /// A key was enabled.
    KeyEnabled {
        /// The key's id.
        id: KeyId,
    },
    /// A key was disabled.
    KeyDisabled {
        /// The key's id.
        id: KeyId,
    },
    /// 38h is about to be sent for this invoice. Its id is the record's `seq`.
    Intent(Intent),
    /// The device certified an intent: one LogInvoices entry.
    Certified(RegisterEntry),
    /// An intent that the device did not certify (cancelled, refused, or reconciled as not
    /// finalized).
    Abandoned {
        /// The intent resolved.
        intent: IntentId,
        /// Why.
        reason: String,
    },
    /// A dashboard sign-in token was issued to an organization's admin (only its hash).
    DashboardTokenIssued {
        /// The token's public id.
        token_id: String,
        /// The organization it signs in to.
        org: OrgId,
        /// Lowercase hex SHA-256 of the token's secret part.
        token_sha256: String,
        /// When it was issued.
        created_at: DateTime<Utc>,
        /// Free text (whose token it is).
        label: String,
    },
    /// A dashboard token was revoked: it signs in no more, and its sessions end.
    DashboardTokenRevoked {
        /// The token's public id.
        token_id: String,
    },
    /// A box said something its register history contradicts (counter continuity). Its id is
    /// the record's `seq`.
    FiscalAnomaly(FiscalAnomaly),
    /// An administrator acknowledged a fiscal anomaly.
    FiscalAnomalyAcknowledged {
        /// The anomaly's id.
        anomaly: u64,
        /// Who.
        by: String,
        /// Why it is understood.
        note: String,
        /// A register behind its box: the missing certifications' numbers acknowledged
        /// (1.8.0; absent before, and for the other kinds).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        numbers: Vec<u64>,
        /// Of those, the ones whose rn is known: never certified again (1.8.1; absent
        /// before).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rns: Vec<crate::model::LostInvoice>,
    },
}

impl Event {
    /// The `"type"` tag, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::OrganizationSaved(_) => "organization_saved",
            Event::KeyIssued(_) => "key_issued",
            Event::KeyEnabled { .. } => "key_enabled",
            Event::KeyDisabled { .. } => "key_disabled",
            Event::Intent(_) => "intent",
            Event::Certified(_) => "certified",
            Event::Abandoned { .. } => "abandoned",
            Event::DashboardTokenIssued { .. } => "dashboard_token_issued",
            Event::DashboardTokenRevoked { .. } => "dashboard_token_revoked",
            Event::FiscalAnomaly(_) => "fiscal_anomaly",
            Event::FiscalAnomalyAcknowledged { .. } => "fiscal_anomaly_acknowledged",
        }
    }
}

/// A dashboard token as the index holds it (the state after its events). Never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DashboardToken {
    /// Public id.
    pub id: String,
    /// The organization it signs in to.
    pub org: OrgId,
    /// Lowercase hex SHA-256 of the secret part.
    pub token_sha256: String,
    /// Free text.
    pub label: String,
    /// When it was issued.
    pub created_at: DateTime<Utc>,
    /// Revoked: signs in no more.
    pub revoked: bool,
}

/// A journal record's payload: `{"seq", "prev", "at", "event"}`, in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// 1, 2, 3... with no gap.
    pub seq: u64,
    /// Lowercase hex SHA-256 of the previous record's payload bytes; 64 zeros for the first.
    pub prev: String,
    /// When it was appended (UTC).
    pub at: DateTime<Utc>,
    /// The fact.
    #[serde(deserialize_with = "super::event_read::event")]
    pub event: Event,
}

/// SHA-256 of a payload, as the chain uses it.
pub type Hash = [u8; 32];

/// The `prev` of the first record.
pub const GENESIS: Hash = [0u8; 32];

/// SHA-256 of `payload`.
pub fn hash(payload: &[u8]) -> Hash {
    Sha256::digest(payload).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::tests::{certified_entry, intent};

    #[test]
    fn events_round_trip_with_their_type_tag() {
        let events = vec![
            Event::KeyEnabled { id: "k1".into() },
            Event::Intent(intent("demo", "FN-1")),
            Event::Certified(certified_entry(7, 3, intent("demo", "FN-1"))),
            Event::Abandoned {
                intent: 4,
                reason: "device refused".into(),
            },
            Event::DashboardTokenIssued {
                token_id: "t1".into(),
                org: "demo".into(),
                token_sha256: "ab".repeat(32),
                created_at: Utc::now(),
                label: "owner".into(),
            },
            Event::DashboardTokenRevoked {
                token_id: "t1".into(),
            },
        ];
        for event in events {
            let record = Record {
                seq: 9,
                prev: hex::encode(GENESIS),
                at: Utc::now(),
                event: event.clone(),
            };
            let json = serde_json::to_string(&record).unwrap();
            assert!(json.starts_with("{\"seq\":9,\"prev\":\"0000"), "{json}");
            assert!(
                json.contains(&format!("\"type\":\"{}\"", event.kind())),
                "{json}"
            );
            let back: Record = serde_json::from_str(&json).unwrap();
            assert_eq!(back, record);
        }
    }
}
