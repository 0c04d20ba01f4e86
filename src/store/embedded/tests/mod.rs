//! Store tests: fixtures and journal-file helpers shared by `recovery` (journal format, torn
//! tails, damage, index rebuilds, lock), `register` (the certification flow and queries),
//! `dashboard` (dashboard tokens, org-scoped register pages), and `crash_seeds` (the journal
//! over the fault-injecting file of `fault_file`: power cuts, write and fsync failures).

mod boxes;
mod crash_seeds;
mod dashboard;
mod disk_full;
pub(crate) mod fault_file;
mod history;
mod interrupted_build;
mod links;
mod rebuild;
mod recovery;
mod register;
mod replay_log;

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use rust_decimal_macros::dec;

use super::{journal, EmbeddedStore, StoreError};
use crate::model::{
    DeviceTotals, Environment, Intent, IntentId, KeyRecord, Organization, Plan, RegisterEntry,
    SecurityElements,
};

pub(crate) fn time(day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, 10, 0, 0).unwrap()
}

pub(crate) fn org(id: &str) -> Organization {
    Organization {
        id: id.to_string(),
        name: format!("{id} SARL"),
        nif: format!("NIF-{id}"),
        isf: format!("ISF-{id}"),
        plan: Plan::Start,
        quota_override: None,
        device: "box1".to_string(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    }
}

/// The key of `org` for `env`: `live-<org>` or `test-<org>`.
pub(crate) fn key_id(org: &str, env: Environment) -> String {
    match env {
        Environment::Production => format!("live-{org}"),
        Environment::Sandbox => format!("test-{org}"),
    }
}

pub(crate) fn key(org: &str, env: Environment) -> KeyRecord {
    KeyRecord {
        id: key_id(org, env),
        org: org.to_string(),
        environment: env,
        secret_sha256: "ab".repeat(32),
        label: "till 1".to_string(),
        enabled: true,
        created_at: time(1),
    }
}

/// A Production intent of `org` for invoice `rn`.
pub(crate) fn intent(org: &str, rn: &str) -> Intent {
    intent_in(org, Environment::Production, rn)
}

pub(crate) fn intent_in(org: &str, env: Environment, rn: &str) -> Intent {
    Intent {
        org: org.to_string(),
        environment: env,
        rn: rn.to_string(),
        invoice_type: "FV".to_string(),
        key_id: key_id(org, env),
        device: "box1".to_string(),
        request_digest: format!("{:0>64}", rn.len()),
        received_at: time(2),
        totals: DeviceTotals {
            total: dec!(116.00),
            vat: dec!(16.00),
            group_ttc: vec![('B', dec!(116.00))],
            group_vat: vec![('B', dec!(16.00))],
            specific_tax: dec!(0.00),
            usd_equivalent: None,
            mcur: None,
        },
        nif: format!("NIF-{org}"),
        isf: format!("ISF-{org}"),
        idempotency_key: None,
        device_tc: None,
        channel_ref: None,
        invoice: None,
    }
}

pub(crate) fn security(n: u64) -> SecurityElements {
    SecurityElements {
        code_def: format!("SIG{n:021}"),
        qr_code: format!("RDCDEF01;NIM1;SIG{n};NIF;20260302100000"),
        counters: format!("{n}/{n} FV"),
        nim: "NIM1".to_string(),
        date_time: NaiveDate::from_ymd_opt(2026, 3, 2)
            .and_then(|d| d.and_hms_opt(10, 0, 0))
            .unwrap(),
        date_time_as_sent: None,
    }
}

pub(crate) fn certified_entry(
    sequence: u64,
    intent_id: IntentId,
    request: Intent,
) -> RegisterEntry {
    RegisterEntry {
        sequence,
        intent: intent_id,
        request,
        certified_at: time(3),
        security: security(sequence),
        source: "finalize".to_string(),
        quota_year: 2026,
    }
}

/// A store with organizations `demo` and `acme`, each with a live and a test key (6 records).
pub(crate) fn seeded(dir: &Path) -> EmbeddedStore {
    let store = EmbeddedStore::open(dir).unwrap();
    for id in ["demo", "acme"] {
        store.save_organization(org(id)).unwrap();
        store.issue_key(key(id, Environment::Production)).unwrap();
        store.issue_key(key(id, Environment::Sandbox)).unwrap();
    }
    store
}

/// Intent then certification of `rn`; returns the entry.
pub(crate) fn certify(
    store: &EmbeddedStore,
    org: &str,
    env: Environment,
    rn: &str,
    year: i32,
) -> RegisterEntry {
    let id = store.record_intent(intent_in(org, env, rn)).unwrap();
    store
        .record_certified(id, year, time(3), security(id), "finalize")
        .unwrap()
}

/// Certifies `FN-{from}`..`FN-{to - 1}` for `demo` in Production (2026).
pub(crate) fn certify_range(store: &EmbeddedStore, range: std::ops::Range<usize>) {
    for i in range {
        certify(
            store,
            "demo",
            Environment::Production,
            &format!("FN-{i}"),
            2026,
        );
    }
}

/// The Production register, up to 1000 entries.
pub(crate) fn production_register(store: &EmbeddedStore) -> Vec<RegisterEntry> {
    store
        .entries(&super::EntryFilter {
            org: None,
            environment: Environment::Production,
            after_sequence: 0,
            limit: 1000,
        })
        .unwrap()
}

pub(crate) fn journal_path(dir: &Path) -> PathBuf {
    dir.join("journal").join("journal.log")
}

/// The index of the state directory `dir` (no store open on it).
pub(crate) fn open_index(dir: &Path) -> super::index::Index {
    super::index::Index::open(
        &dir.join("index.sled"),
        &journal_path(dir),
        super::DEFAULT_INDEX_CACHE_MIB,
    )
    .unwrap()
}

/// The records of a journal file: (offset, payload).
pub(crate) fn frames(dir: &Path) -> Vec<(u64, Vec<u8>)> {
    let bytes = std::fs::read(journal_path(dir)).unwrap();
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push((at as u64, bytes[at + 8..at + 8 + len].to_vec()));
        at += 8 + len;
    }
    out
}

/// Rewrites the journal from payloads (CRCs recomputed: only the chain can tell).
pub(crate) fn write_frames(dir: &Path, payloads: &[Vec<u8>]) {
    let bytes: Vec<u8> = payloads.iter().flat_map(|p| journal::frame(p)).collect();
    std::fs::write(journal_path(dir), bytes).unwrap();
}

/// Asserts a `Damaged` error at `at`, returning its reason.
#[track_caller]
pub(crate) fn assert_damaged<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    at: super::DamageAt,
) -> String {
    match result {
        Err(StoreError::Damaged {
            seq_or_offset,
            reason,
        }) => {
            assert_eq!(seq_or_offset, at, "{reason}");
            reason
        }
        other => panic!("expected Damaged at {at}, got {other:?}"),
    }
}
