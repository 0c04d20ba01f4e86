//! How a [`RegisterEntry`] is read back: its fields and its intent's side by side.
//!
//! An entry is written with its intent's fields flattened into it (`#[serde(flatten)]`).
//! Reading a flattened struct makes serde copy the whole entry into an intermediate tree
//! first; on a rebuild of the index from a journal of a million entries that copy was the
//! largest cost (docs/performance.md). This struct names every field once, so an entry is
//! read straight from its bytes. Unknown fields are ignored, as the flattened form did.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::key::KeyId;
use super::org::{Environment, OrgId};
use super::register::{DeviceTotals, Intent, IntentId, RegisterEntry, SecurityElements};

/// Every field of a journaled entry, flat.
#[derive(Deserialize)]
pub(super) struct EntryWire {
    sequence: u64,
    intent: IntentId,
    certified_at: DateTime<Utc>,
    security: SecurityElements,
    source: String,
    quota_year: i32,
    org: OrgId,
    environment: Environment,
    rn: String,
    invoice_type: String,
    key_id: KeyId,
    device: String,
    request_digest: String,
    received_at: DateTime<Utc>,
    totals: DeviceTotals,
    nif: String,
    isf: String,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    device_tc: Option<u64>,
    #[serde(default)]
    channel_ref: Option<String>,
    #[serde(default)]
    invoice: Option<String>,
}

impl From<EntryWire> for RegisterEntry {
    fn from(wire: EntryWire) -> RegisterEntry {
        // A struct literal: a field added to `Intent` does not build until it is read here.
        RegisterEntry {
            sequence: wire.sequence,
            intent: wire.intent,
            request: Intent {
                org: wire.org,
                environment: wire.environment,
                rn: wire.rn,
                invoice_type: wire.invoice_type,
                key_id: wire.key_id,
                device: wire.device,
                request_digest: wire.request_digest,
                received_at: wire.received_at,
                totals: wire.totals,
                nif: wire.nif,
                isf: wire.isf,
                idempotency_key: wire.idempotency_key,
                device_tc: wire.device_tc,
                channel_ref: wire.channel_ref,
                invoice: wire.invoice,
            },
            certified_at: wire.certified_at,
            security: wire.security,
            source: wire.source,
            quota_year: wire.quota_year,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use rust_decimal::Decimal;

    use super::*;

    fn entry(optional: bool) -> RegisterEntry {
        let at = DateTime::parse_from_rfc3339("2026-11-27T06:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let some = |s: &str| optional.then(|| s.to_string());
        RegisterEntry {
            sequence: 12,
            intent: 40,
            request: Intent {
                org: "demo".into(),
                environment: Environment::Production,
                rn: "FV-9".into(),
                invoice_type: "FV".into(),
                key_id: "k1".into(),
                device: "box".into(),
                request_digest: "ab".repeat(32),
                received_at: at,
                totals: DeviceTotals {
                    total: Decimal::new(11600, 2),
                    vat: Decimal::new(1600, 2),
                    group_ttc: vec![('B', Decimal::new(11600, 2))],
                    group_vat: vec![('B', Decimal::new(1600, 2))],
                    specific_tax: Decimal::ZERO,
                    usd_equivalent: optional.then(|| Decimal::new(5, 2)),
                    mcur: some("0.05"),
                },
                nif: "A1234567B".into(),
                isf: "ISF-1".into(),
                idempotency_key: some("idem-1"),
                device_tc: optional.then_some(7),
                channel_ref: some("uid-1"),
                invoice: some("{\"rn\":\"FV-9\",\"items\":[]}"),
            },
            certified_at: at,
            security: SecurityElements {
                code_def: "CODE".into(),
                qr_code: "RDCDEF01;NIM;CODE;A1234567B;20261127060000".into(),
                counters: "7/7 FV".into(),
                nim: "NIM".into(),
                date_time: NaiveDate::from_ymd_opt(2026, 11, 27)
                    .unwrap()
                    .and_hms_opt(6, 0, 0)
                    .unwrap(),
                date_time_as_sent: some("27/11/2026 06:00:00"),
            },
            source: "finalize".into(),
            quota_year: 2026,
        }
    }

    #[test]
    fn an_entry_reads_back_what_was_written_with_every_field_set_or_not() {
        for optional in [true, false] {
            let entry = entry(optional);
            let json = serde_json::to_string(&entry).unwrap();
            let back: RegisterEntry = serde_json::from_str(&json).unwrap();
            assert_eq!(back, entry, "{json}");
        }
    }

    #[test]
    fn unknown_fields_are_ignored_as_the_flattened_form_did() {
        let mut json = serde_json::to_value(entry(true)).unwrap();
        json["type"] = "certified".into();
        json["a_later_field"] = serde_json::json!({"x": [1, 2]});
        let back: RegisterEntry = serde_json::from_value(json).unwrap();
        assert_eq!(back, entry(true));
    }
}
