//! Entries of older journals on PostgreSQL (an import of a register written by 1.5.0 to 1.7.0):
//! the invoice in the entry itself.

use emcf_gateway::model::RegisterEntry;
use sha2::{Digest, Sha256};

use super::{app_pool, at, claim, credit_note, intent, register_on, security, P};

/// An entry as 1.5.0 to 1.7.0 journaled it (an import of such a register): the invoice in the
/// entry itself, none in its intent. It is read back with its own, and found as a credit note
/// by the original that invoice names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_keeping_its_own_invoice_is_read_and_linked_by_it() {
    let Some((server, pg)) = register_on("PostgreSQL entries of older journals").await else {
        return;
    };
    let id = pg
        .record_intent(&intent("demo", "FV-1"), claim(10))
        .await
        .unwrap()
        .unwrap();
    let original = pg
        .record_certified(id, 2026, at(), security("FV-1"), "finalize")
        .await
        .unwrap()
        .unwrap();
    let code = &original.security.code_def;
    let mut request = credit_note("demo", P, "FA-1", code);
    let form = request.invoice.take();
    let note_id = pg
        .record_intent(&request, claim(10))
        .await
        .unwrap()
        .unwrap();
    request.invoice = form;
    let entry = RegisterEntry {
        sequence: 2,
        intent: note_id,
        request,
        certified_at: at(),
        security: security("FA-1"),
        source: "finalize".into(),
        quota_year: 2026,
    };
    let text = serde_json::to_string(&entry).unwrap();
    assert!(text.contains("\"invoice\""), "{text}");
    let pool = app_pool(&server).await;
    let client = pool.client().await.unwrap();
    let head = client
        .query_one(
            "SELECT entries, head FROM chain_heads WHERE org = 'demo'",
            &[],
        )
        .await
        .unwrap();
    let (entries, prev): (i64, Vec<u8>) = (head.get(0), head.get(1));
    let hash = Sha256::new()
        .chain_update(&prev)
        .chain_update(text.as_bytes())
        .finalize()
        .to_vec();
    client
        .execute(
            "INSERT INTO register_entries (environment, sequence, org, rn, intent, code_def, \
             certified_at, quota_year, chain_seq, prev_hash, hash, entry) VALUES ('production', \
             2, 'demo', 'FA-1', $1, $2, $3::text::timestamptz, 2026, $4, $5, $6, $7)",
            &[
                &(note_id as i64),
                &entry.security.code_def,
                &at().to_rfc3339(),
                &(entries + 1),
                &prev,
                &hash,
                &text,
            ],
        )
        .await
        .unwrap();

    assert_eq!(pg.entry(P, 2).await.unwrap(), Some(entry.clone()));
    let (found, notes) = pg
        .credited_original("demo", P, code)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.sequence, notes), (1, vec![entry.clone()]));
    let (linked, _) = pg.credit_links(&entry).await.unwrap();
    assert_eq!(linked.map(|e| e.request.rn), Some("FV-1".to_string()));
}
