//! The invoice as certified, kept once in the journal.
//!
//! Since 1.5.0 an `intent` record keeps the canonical form of the validated request
//! ([`crate::model::Intent::invoice`], whose SHA-256 is its `request_digest`). 1.5.0 to 1.7.0
//! wrote it a second time in the `certified` record (its entry flattens the intent). Since
//! 1.8.0 a `certified` record leaves it out ([`Event::certified`]): its `intent` field (the
//! intent record's seq) says where the copy is, and the index keeps that record's place with
//! the entry's (`entry_ref.rs`). So three forms of an entry are read, each unchanged:
//!
//! | journal of | intent record | certified record | the entry's kept invoice |
//! |---|---|---|---|
//! | 1.4.0 and before | no invoice | no invoice | none |
//! | 1.5.0 to 1.7.0 | invoice | the same invoice | the certified record's |
//! | 1.8.0 and later | invoice | no invoice | its intent record's |
//!
//! Every reader of an entry (exports, receipts, `log show`, the dashboard, the API's lookups)
//! gets it from [`super::entry_ref`], which takes the invoice from the intent record here
//! ([`take_from_intent`]); `log verify` counts and checks each kept invoice with [`Tally`].
//! Either way the text is read against the entry's own `request_digest`
//! ([`crate::model::Intent::content`]): a copy that does not hash to it is never shown as the
//! certified invoice.

use std::collections::HashMap;

use super::error::{DamageAt, StoreError};
use super::event::{Event, Record};
use super::journal::Counted;
use crate::model::{IntentId, InvoiceContent, RegisterEntry};

impl Event {
    /// The `certified` record of `entry`: the entry without the invoice its intent's record
    /// keeps (see the [module](self)).
    pub fn certified(entry: &RegisterEntry) -> Event {
        let mut entry = entry.clone();
        entry.request.invoice = None;
        Event::Certified(entry)
    }
}

/// Gives `entry` (read from a `certified` record without its invoice) the invoice its intent
/// kept, from that intent's `record`; `Err` says why the record is not the entry's intent.
pub(super) fn take_from_intent(entry: &mut RegisterEntry, record: Record) -> Result<(), String> {
    let Event::Intent(intent) = record.event else {
        return Err(format!(
            "the index places the intent of entry {} in a {} record",
            entry.sequence,
            record.event.kind()
        ));
    };
    if record.seq != entry.intent || intent.request_digest != entry.request.request_digest {
        return Err(format!(
            "the index places the intent of entry {} (seq {}) at the intent of seq {} for \
             another request: rebuild the index from the journal (`index rebuild`) once the \
             journal is known good",
            entry.sequence, entry.intent, record.seq
        ));
    }
    entry.request.invoice = intent.invoice;
    Ok(())
}

/// What `log verify` counts of the register, record after record: the entries, and the
/// invoices they keep, each read against its entry's request digest (a copy that does not
/// match is damage: the register would show an invoice that is not the certified one).
#[derive(Default)]
pub(super) struct Tally {
    /// The invoices of the intents not yet resolved, by intent id.
    open: HashMap<IntentId, String>,
    certified: u64,
    invoices_kept: u64,
}

impl Tally {
    /// Counts `record`.
    pub(super) fn see(&mut self, record: &Record) -> Result<(), StoreError> {
        match &record.event {
            Event::Intent(intent) => {
                if let Some(text) = &intent.invoice {
                    self.open.insert(record.seq, text.clone());
                }
            }
            Event::Abandoned { intent, .. } => {
                self.open.remove(intent);
            }
            Event::Certified(entry) => {
                self.certified += 1;
                let in_intent = self.open.remove(&entry.intent);
                let kept = entry.request.invoice.as_deref().or(in_intent.as_deref());
                if let Some(text) = kept {
                    InvoiceContent::read(text, &entry.request.request_digest).map_err(|error| {
                        StoreError::damaged(
                            DamageAt::Seq(record.seq),
                            format!("entry {}: {error}", entry.sequence),
                        )
                    })?;
                    self.invoices_kept += 1;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// What it counted.
    pub(super) fn counted(&self) -> Counted {
        Counted {
            certified: self.certified,
            invoices_kept: self.invoices_kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::event::GENESIS;
    use crate::store::embedded::tests::certified_entry;
    use sha2::{Digest, Sha256};

    /// An intent keeping its invoice, as 1.5.0 and later write them.
    fn intent(org: &str, rn: &str) -> crate::model::Intent {
        let form = format!(
            r#"{{"canon":"1","curCode":"CDF","items":[{{"name":"Sac","price":"10","quantity":"1","taxGroup":"B","type":"BIE"}}],"mode":"ttc","operator":{{"name":"A"}},"rn":"{rn}","type":"FV"}}"#
        );
        let mut intent = crate::store::embedded::tests::intent(org, rn);
        intent.request_digest = hex::encode(Sha256::digest(form.as_bytes()));
        intent.invoice = Some(form);
        intent
    }

    fn record(seq: u64, event: Event) -> Record {
        Record {
            seq,
            prev: hex::encode(GENESIS),
            at: crate::store::embedded::tests::time(3),
            event,
        }
    }

    #[test]
    fn a_certified_record_leaves_its_invoice_to_its_intent() {
        let request = intent("demo", "FN-1");
        assert!(
            request.invoice.is_some(),
            "the test intent keeps its invoice"
        );
        let entry = certified_entry(1, 3, request.clone());
        let Event::Certified(journaled) = Event::certified(&entry) else {
            panic!("not a certified event");
        };
        assert_eq!(journaled.request.invoice, None);
        let json = serde_json::to_string(&journaled).unwrap();
        assert!(!json.contains("\"invoice\""), "{json}");

        let mut read = journaled.clone();
        take_from_intent(&mut read, record(3, Event::Intent(request.clone()))).unwrap();
        assert_eq!(read, entry, "the entry read back is the one certified");
        // Another record than its intent.
        let mut read = journaled.clone();
        let other = take_from_intent(&mut read, record(4, Event::Intent(request.clone())));
        assert!(other.unwrap_err().contains("seq 4"));
        let mut read = journaled.clone();
        let wrong = take_from_intent(&mut read, record(3, Event::Certified(entry.clone())));
        assert!(wrong.unwrap_err().contains("certified record"));
        let mut read = journaled;
        let mut changed = request;
        changed.request_digest = "0".repeat(64);
        let wrong = take_from_intent(&mut read, record(3, Event::Intent(changed)));
        assert!(wrong.unwrap_err().contains("another request"));
    }

    #[test]
    fn the_tally_counts_an_invoice_kept_once_twice_or_never() {
        let request = intent("demo", "FN-1");
        let entry = certified_entry(1, 1, request.clone());
        let mut without = request.clone();
        without.invoice = None;
        let older = certified_entry(2, 3, without.clone());
        let mut tally = Tally::default();
        let records = [
            record(1, Event::Intent(request.clone())),
            record(2, Event::certified(&entry)), // 1.8.0: kept in its intent
            record(3, Event::Intent(without)),
            record(4, Event::Certified(older)), // 1.4.0: kept nowhere
            record(5, Event::Intent(request.clone())),
            record(6, Event::Certified(certified_entry(3, 5, request.clone()))), // 1.5.0
        ];
        for record in &records {
            tally.see(record).unwrap();
        }
        let counted = tally.counted();
        assert_eq!((counted.certified, counted.invoices_kept), (3, 2));

        // An intent's copy that is not the certified request is damage.
        let mut changed = request;
        changed.invoice = Some(format!("{} ", changed.invoice.unwrap()));
        let mut tally = Tally::default();
        tally.see(&record(1, Event::Intent(changed))).unwrap();
        match tally.see(&record(2, Event::certified(&entry))) {
            Err(StoreError::Damaged { reason, .. }) => {
                assert!(reason.contains("entry 1"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_journal_form_reads_back_its_invoice_also_after_a_rebuild() {
        use crate::model::Environment;
        use crate::store::embedded::event::hash;
        use crate::store::embedded::tests::{frames, security, seeded, time, write_frames};
        use crate::store::embedded::EmbeddedStore;

        let dir = tempfile::tempdir().unwrap();
        let store = seeded(dir.path());
        // Written by this release: the certified record leaves the invoice to its intent.
        let id = store.record_intent(intent("demo", "FV-1")).unwrap();
        let new = store
            .record_certified(id, 2026, time(3), security(id), "finalize")
            .unwrap();
        assert!(
            new.request.invoice.is_some(),
            "the caller gets the whole entry"
        );
        drop(store);
        let mut payloads: Vec<Vec<u8>> = frames(dir.path()).into_iter().map(|(_, p)| p).collect();
        let certified = String::from_utf8(payloads.last().unwrap().clone()).unwrap();
        assert!(!certified.contains("\"invoice\""), "{certified}");
        // As 1.5.0 to 1.7.0 wrote them: the invoice in the intent and in the entry.
        let mut prev = hex::encode(hash(payloads.last().unwrap()));
        let older = intent("demo", "FV-2");
        let seq = payloads.len() as u64 + 1;
        let mut old_entry = certified_entry(2, seq, older.clone());
        old_entry.security = security(seq);
        for (seq, event) in [
            (seq, Event::Intent(older)),
            (seq + 1, Event::Certified(old_entry.clone())),
        ] {
            let bytes = serde_json::to_vec(&Record {
                seq,
                prev: prev.clone(),
                at: time(3),
                event,
            })
            .unwrap();
            prev = hex::encode(hash(&bytes));
            payloads.push(bytes);
        }
        write_frames(dir.path(), &payloads);
        for rebuild in [false, true] {
            if rebuild {
                std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
            }
            let store = EmbeddedStore::open(dir.path()).unwrap();
            let read = |rn| {
                store
                    .entry_by_rn("demo", Environment::Production, rn)
                    .unwrap()
                    .unwrap()
            };
            assert_eq!(read("FV-1"), new);
            assert_eq!(read("FV-2"), old_entry);
            for entry in [read("FV-1"), read("FV-2")] {
                assert_eq!(
                    entry.request.content().unwrap().unwrap().rn,
                    entry.request.rn
                );
            }
            let report = store.verify().unwrap();
            let entries = if rebuild { 3 } else { 2 };
            assert_eq!((report.certified, report.invoices_kept), (entries, entries));
            // Appends go on after the older form.
            if !rebuild {
                let id = store.record_intent(intent("demo", "FV-3")).unwrap();
                store
                    .record_certified(id, 2026, time(3), security(id), "finalize")
                    .unwrap();
                let report = store.verify().unwrap();
                assert_eq!((report.certified, report.invoices_kept), (3, 3));
                assert!(read("FV-3").request.content().unwrap().is_ok());
            }
        }
    }
}
