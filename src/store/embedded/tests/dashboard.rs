//! Dashboard tokens (issue, revoke, survive a rebuilt index) and the org-scoped register
//! queries the dashboard pages use.

use super::*;
use crate::store::embedded::{DashboardToken, EmbeddedStore, StoreError};

const P: Environment = Environment::Production;
const S: Environment = Environment::Sandbox;

fn token(id: &str, org: &str) -> DashboardToken {
    DashboardToken {
        id: id.to_string(),
        org: org.to_string(),
        token_sha256: "cd".repeat(32),
        label: "owner".to_string(),
        created_at: time(1),
        revoked: false,
    }
}

fn records(store: &EmbeddedStore) -> u64 {
    store.verify().unwrap().records
}

#[test]
fn dashboard_tokens_are_issued_per_organization_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    store
        .issue_dashboard_token(token("t-demo", "demo"))
        .unwrap();
    store
        .issue_dashboard_token(token("t-acme", "acme"))
        .unwrap();
    assert_eq!(records(&store), 8);

    assert_eq!(
        store.dashboard_token("t-demo").unwrap(),
        Some(token("t-demo", "demo"))
    );
    assert_eq!(store.dashboard_token("nope").unwrap(), None);
    let ids = |org: &str| -> Vec<String> {
        store
            .dashboard_tokens_of(org)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect()
    };
    assert_eq!(ids("demo"), vec!["t-demo"]);
    assert_eq!(ids("acme"), vec!["t-acme"]);
    assert!(ids("other").is_empty());

    // Refusals journal nothing.
    assert!(matches!(
        store.issue_dashboard_token(token("t-demo", "acme")),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.issue_dashboard_token(token("t-x", "nobody")),
        Err(StoreError::UnknownOrganization(_))
    ));
    let mut revoked = token("t-y", "demo");
    revoked.revoked = true;
    assert!(matches!(
        store.issue_dashboard_token(revoked),
        Err(StoreError::Invalid(_))
    ));
    assert!(store.revoke_dashboard_token("nope").is_err());
    assert_eq!(records(&store), 8);

    let now = store.revoke_dashboard_token("t-demo").unwrap();
    assert!(now.revoked);
    assert_eq!(records(&store), 9);
    // Revoking again journals nothing.
    assert!(store.revoke_dashboard_token("t-demo").unwrap().revoked);
    assert_eq!(records(&store), 9);
    assert!(store.dashboard_token("t-demo").unwrap().unwrap().revoked);
    assert!(!store.dashboard_token("t-acme").unwrap().unwrap().revoked);
}

#[test]
fn dashboard_tokens_are_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    store.issue_dashboard_token(token("t-1", "demo")).unwrap();
    store.issue_dashboard_token(token("t-2", "demo")).unwrap();
    store.revoke_dashboard_token("t-1").unwrap();
    let before = store.dashboard_tokens_of("demo").unwrap();
    drop(store);
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.dashboard_tokens_of("demo").unwrap(), before);
    assert!(store.dashboard_token("t-1").unwrap().unwrap().revoked);
    assert!(!store.dashboard_token("t-2").unwrap().unwrap().revoked);
    // The journal holds the hash and the events, by their type tag.
    let text =
        String::from_utf8_lossy(&std::fs::read(journal_path(dir.path())).unwrap()).into_owned();
    assert!(text.contains("\"type\":\"dashboard_token_issued\""));
    assert!(text.contains("\"type\":\"dashboard_token_revoked\""));
    assert!(text.contains(&"cd".repeat(32)));
}

#[test]
fn org_entries_back_pages_one_organization_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    for n in 1..=5 {
        certify(&store, "demo", P, &format!("D-{n}"), 2026);
        certify(&store, "acme", P, &format!("A-{n}"), 2026);
    }
    certify(&store, "demo", S, "D-S1", 2026);
    let rns = |entries: Vec<crate::model::RegisterEntry>| -> Vec<String> {
        entries.into_iter().map(|e| e.request.rn).collect()
    };
    let page = store
        .org_entries_back("demo", P, u64::MAX, 2, |_| true)
        .unwrap();
    assert_eq!(page.iter().map(|e| e.sequence).collect::<Vec<_>>(), [9, 7]);
    assert_eq!(rns(page), ["D-5", "D-4"]);
    let page = store.org_entries_back("demo", P, 7, 10, |_| true).unwrap();
    assert_eq!(rns(page), ["D-3", "D-2", "D-1"]);
    let page = store
        .org_entries_back("demo", P, u64::MAX, 10, |e| e.request.rn.ends_with('2'))
        .unwrap();
    assert_eq!(rns(page), ["D-2"]);
    assert_eq!(
        rns(store
            .org_entries_back("demo", S, u64::MAX, 10, |_| true)
            .unwrap()),
        ["D-S1"]
    );
    assert!(store
        .org_entries_back("demo", P, 0, 10, |_| true)
        .unwrap()
        .is_empty());
    assert!(store
        .org_entries_back("demo", P, u64::MAX, 0, |_| true)
        .unwrap()
        .is_empty());
    assert_eq!(store.org_entry_count("demo", P).unwrap(), 5);
    assert_eq!(store.org_entry_count("demo", S).unwrap(), 1);
    assert_eq!(store.org_entry_count("acme", S).unwrap(), 0);
    assert_eq!(store.org_entry_count("acm", P).unwrap(), 0);
}
