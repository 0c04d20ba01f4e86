//! `log verify` on PostgreSQL (issue 28): every organization's hash chain recomputed from the
//! entries as stored, the register numbers of each environment without a gap, each chain's
//! head where the schema says it is, each entry's columns (what lookups use) against the
//! entry it hashes and its intent's request, and every invoice an intent keeps against its
//! digest. All read in one snapshot (REPEATABLE READ), so certifications going on meanwhile
//! are simply not seen.
//! The schema's triggers refuse a wrong write; this finds what was changed behind them (a
//! superuser who disabled them, a restore of a tampered dump).

use std::collections::BTreeMap;

use super::{PgError, PgPool, PgRegister};
use crate::model::{ContentError, Intent, RegisterEntry};

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgVerifyReport {
    /// Entries read (both environments).
    pub entries: u64,
    /// Organizations whose chain was recomputed.
    pub chains: u64,
    /// Entries whose intent keeps the invoice, each found to hash to its request digest.
    pub invoices_kept: u64,
    /// What does not hold, one line each (empty: the register is whole).
    pub problems: Vec<String>,
}

/// One entry as verified, in its organization's chain order.
struct Row {
    org: String,
    chain_seq: i64,
    environment: String,
    sequence: i64,
    prev: Vec<u8>,
    hash: Vec<u8>,
    entry: String,
    intent: String,
    rn: String,
    intent_id: i64,
    code_def: String,
    quota_year: i32,
}

impl PgRegister {
    /// Verifies the whole register (see the module's doc). Reads every entry once.
    pub async fn verify(&self) -> Result<PgVerifyReport, PgError> {
        let pool: &PgPool = self.pool();
        let mut client = pool.client().await?;
        let fail = |doing: &str, e: tokio_postgres::Error| pool.query_error(doing, &e);
        let client = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(|e| fail("starting the verification", e))?;
        // Every entry is checked here between two reads: a large register keeps the
        // transaction silent longer than the session's limit (`connect.rs` SERVER_SESSION).
        client
            .batch_execute(super::connect::UNBOUNDED_SILENCE)
            .await
            .map_err(|e| fail("starting the verification", e))?;
        let rows = client
            .query(
                "SELECT e.org, e.chain_seq, e.environment::text, e.sequence, e.prev_hash, \
                 e.hash, e.entry, i.body::text, e.rn, e.intent, e.code_def, e.quota_year \
                 FROM register_entries e JOIN intents i ON i.id = e.intent \
                 ORDER BY e.org, e.chain_seq",
                &[],
            )
            .await
            .map_err(|e| fail("reading the register", e))?;
        let mut report = PgVerifyReport::default();
        let mut heads: BTreeMap<String, (i64, Vec<u8>)> = BTreeMap::new();
        let mut numbers: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for row in rows {
            let get = |e| fail("reading an entry", e);
            let row = Row {
                org: row.try_get(0).map_err(get)?,
                chain_seq: row.try_get(1).map_err(get)?,
                environment: row.try_get(2).map_err(get)?,
                sequence: row.try_get(3).map_err(get)?,
                prev: row.try_get(4).map_err(get)?,
                hash: row.try_get(5).map_err(get)?,
                entry: row.try_get(6).map_err(get)?,
                intent: row.try_get(7).map_err(get)?,
                rn: row.try_get(8).map_err(get)?,
                intent_id: row.try_get(9).map_err(get)?,
                code_def: row.try_get(10).map_err(get)?,
                quota_year: row.try_get(11).map_err(get)?,
            };
            report.entries += 1;
            check_link(&row, &mut heads, &mut report);
            check_columns(&row, &mut report);
            numbers
                .entry(row.environment.clone())
                .or_default()
                .push(row.sequence);
            match serde_json::from_str::<Intent>(&row.intent).map(|i| i.content()) {
                Ok(None) => {}
                Ok(Some(Ok(_))) => report.invoices_kept += 1,
                Ok(Some(Err(ContentError::DigestMismatch))) => report.problems.push(format!(
                    "{} entry {}: the invoice its intent keeps does not hash to its digest",
                    row.environment, row.sequence
                )),
                Ok(Some(Err(e))) => report.problems.push(format!(
                    "{} entry {}: the invoice its intent keeps is unreadable: {e:?}",
                    row.environment, row.sequence
                )),
                Err(e) => report.problems.push(format!(
                    "{} entry {}: its intent does not read: {e}",
                    row.environment, row.sequence
                )),
            }
        }
        report.chains = heads.len() as u64;
        for (environment, mut seen) in numbers {
            seen.sort_unstable();
            let gap = seen
                .iter()
                .zip(1i64..)
                .find(|(number, expected)| **number != *expected);
            if let Some((number, expected)) = gap {
                report.problems.push(format!(
                    "{environment} register: entry {expected} is missing (the next one is {number})"
                ));
            }
        }
        let stored = client
            .query("SELECT org, entries, head FROM chain_heads", &[])
            .await
            .map_err(|e| fail("reading the chains' heads", e))?;
        for row in stored {
            let get = |e| fail("reading a chain head", e);
            let org: String = row.try_get(0).map_err(get)?;
            let entries: i64 = row.try_get(1).map_err(get)?;
            let head: Vec<u8> = row.try_get(2).map_err(get)?;
            if heads.get(&org) != Some(&(entries, head)) {
                report.problems.push(format!(
                    "{org}: the chain's recorded head is not its last entry's"
                ));
            }
        }
        Ok(report)
    }
}

/// Checks that `row`'s columns are the entry it hashes, and that entry its intent's request.
fn check_columns(row: &Row, report: &mut PgVerifyReport) {
    let at = format!("{} entry {}", row.environment, row.sequence);
    let entry: RegisterEntry = match serde_json::from_str(&row.entry) {
        Ok(entry) => entry,
        Err(e) => {
            report.problems.push(format!("{at} does not read: {e}"));
            return;
        }
    };
    let req = &entry.request;
    let columns = (
        row.sequence,
        row.environment.as_str(),
        row.org.as_str(),
        row.rn.as_str(),
        row.intent_id,
        row.code_def.as_str(),
        row.quota_year,
    );
    let hashed = (
        entry.sequence as i64,
        req.environment.as_str(),
        req.org.as_str(),
        req.rn.as_str(),
        entry.intent as i64,
        entry.security.code_def.as_str(),
        entry.quota_year,
    );
    if columns != hashed {
        report
            .problems
            .push(format!("{at}: its columns are not the entry it hashes"));
    }
    // An intent that does not read is said with the invoice it keeps.
    if let Ok(mut intent) = serde_json::from_str::<Intent>(&row.intent) {
        intent.invoice = None;
        if intent != *req {
            report
                .problems
                .push(format!("{at}: its intent's request is not the entry's"));
        }
    }
}

/// Checks that `row` follows its organization's previous entry and hashes to its hash.
fn check_link(
    row: &Row,
    heads: &mut BTreeMap<String, (i64, Vec<u8>)>,
    report: &mut PgVerifyReport,
) {
    let (count, head) = heads.get(&row.org).cloned().unwrap_or((0, vec![0u8; 32]));
    let at = format!("{}: chain entry {}", row.org, row.chain_seq);
    if row.chain_seq != count + 1 {
        report
            .problems
            .push(format!("{at} follows chain entry {count}"));
    }
    if row.prev != head {
        report
            .problems
            .push(format!("{at} does not name its previous entry's hash"));
    }
    let hash = super::register::chain_hash(&row.prev, &row.entry);
    if hash != row.hash {
        report.problems.push(format!(
            "{at} ({} {}) was changed after it was written",
            row.environment, row.sequence
        ));
    }
    heads.insert(row.org.clone(), (row.chain_seq, row.hash.clone()));
}
