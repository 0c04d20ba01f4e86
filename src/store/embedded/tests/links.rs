//! Credit notes and their originals, both ways (`links.rs`), through appends and a rebuild.

use sha2::{Digest, Sha256};

use super::*;

/// An intent of `org` whose kept invoice is a credit note of `original` (a codeDEFDGI).
fn credit_note(org: &str, rn: &str, original: &str) -> Intent {
    let form = format!(
        r#"{{"canon":"1","curCode":"CDF","items":[{{"name":"Retour","price":"10","quantity":"1","taxGroup":"B","type":"BIE"}}],"mode":"ttc","operator":{{"name":"A"}},"reference":"{original}","referenceType":"COR","rn":"{rn}","type":"FA"}}"#
    );
    let mut intent = intent(org, rn);
    intent.invoice_type = "FA".into();
    intent.request_digest = hex::encode(Sha256::digest(form.as_bytes()));
    intent.invoice = Some(form);
    intent
}

fn certify_intent(store: &EmbeddedStore, intent: Intent) -> RegisterEntry {
    let id = store.record_intent(intent).unwrap();
    store
        .record_certified(id, 2026, time(3), security(id), "finalize")
        .unwrap()
}

fn rns(entries: &[RegisterEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.request.rn.as_str()).collect()
}

#[test]
fn a_credit_note_and_its_original_find_each_other_also_after_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let original = certify(&store, "demo", Environment::Production, "FV-1", 2026);
    let other = certify(&store, "demo", Environment::Production, "FV-2", 2026);
    let code = original.security.code_def.clone();
    let first = certify_intent(&store, credit_note("demo", "FA-1", &code));
    let second = certify_intent(&store, credit_note("demo", "FA-2", &code));
    // Another organization naming the same codeDEFDGI links to nothing of demo's.
    let foreign = certify_intent(&store, credit_note("acme", "FA-X", &code));

    let check = |store: &EmbeddedStore| {
        let (none, credits) = store.credit_links(&original).unwrap();
        assert_eq!(none, None);
        assert_eq!(rns(&credits), ["FA-1", "FA-2"]);
        let (found, none) = store.credit_links(&first).unwrap();
        assert_eq!(found.map(|e| e.request.rn), Some("FV-1".to_string()));
        assert!(none.is_empty());
        assert_eq!(
            store.credit_links(&second).unwrap().0,
            Some(original.clone())
        );
        assert_eq!(store.credit_links(&other).unwrap(), (None, vec![]));
        assert_eq!(store.credit_links(&foreign).unwrap(), (None, vec![]));
    };
    check(&store);
    drop(store);
    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    check(&store);
}
