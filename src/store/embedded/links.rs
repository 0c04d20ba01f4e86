//! Credit notes and their originals, both ways: a credit note (FA, EA) names its original by
//! codeDEFDGI (`reference`, kept with its intent since 1.5.0), so the index keeps, per
//! organization and register,
//!
//! | key | value |
//! |---|---|
//! | `c` org `\0` env bucket | (codeDEFDGI, seq of the entry it certified) of the codes that hash to the bucket, as `n` holds rns (`grouped.rs`) |
//! | `a` org `\0` env reference `\0` seq (u64 BE) | empty: entry seq is a credit note of the invoice certified as `reference` |
//!
//! `a` is keyed by the original's codeDEFDGI, not its seq: a credit note may name an invoice
//! certified before the gateway kept invoices (or never through it), and is still found once
//! it is. Links never cross organizations or registers.

use super::grouped::{find_rn, k_bucket, with_rn};
use super::index::{be_u64, env_byte, key, Index};
use super::staged::Staged;
use super::{EmbeddedStore, StoreError};
use crate::model::{reference_of, Environment, RegisterEntry};

fn k_code(org: &str, env: Environment, code_def: &str) -> Vec<u8> {
    k_bucket(b'c', org, env, code_def)
}

fn k_credits_prefix(org: &str, env: Environment, reference: &str) -> Vec<u8> {
    key(
        b'a',
        &[
            org.as_bytes(),
            b"\0",
            &[env_byte(env)],
            reference.as_bytes(),
            b"\0",
        ],
    )
}

impl Staged<'_> {
    /// Entry `entry` is found by its codeDEFDGI, and under its original if it is a credit
    /// note. A codeDEFDGI already taken keeps its first entry (the register is not the place
    /// to settle a channel that signed twice alike). `kept`: the invoice the entry keeps (in
    /// its record, or its intent's: `kept.rs`).
    pub(super) fn add_links(
        &mut self,
        entry: &RegisterEntry,
        kept: Option<&str>,
    ) -> Result<(), StoreError> {
        let req = &entry.request;
        let (org, env) = (req.org.as_str(), req.environment);
        let code_def = entry.security.code_def.as_str();
        let code = k_code(org, env, code_def);
        let bucket = self.get(&code)?;
        let taken = match bucket.as_deref() {
            Some(bucket) => find_rn(bucket, code_def)?.is_some(),
            None => false,
        };
        if !taken {
            let bucket = with_rn(bucket.as_deref(), code_def, entry.sequence)?;
            self.insert(code, bucket);
        }
        // Only a credit note names an original; the look at the text spares parsing the
        // invoices that cannot (all the others).
        let names_one = |text: &&str| text.contains("\"reference\"");
        if let Some(reference) = kept.filter(names_one).and_then(reference_of) {
            let mut k = k_credits_prefix(org, env, &reference);
            k.extend_from_slice(&entry.sequence.to_be_bytes());
            self.insert(k, &[][..]);
        }
        Ok(())
    }
}

impl Index {
    /// The seq of `org`'s entry in `env` certified as `code_def`.
    pub fn entry_seq_by_code(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Option<u64>, StoreError> {
        match self.tree.get(k_code(org, env, code_def))? {
            Some(bucket) => find_rn(&bucket, code_def),
            None => Ok(None),
        }
    }

    /// The seqs of `org`'s credit notes in `env` that name `code_def` as their original, in
    /// register order.
    pub fn credit_note_seqs(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Vec<u64>, StoreError> {
        self.tree
            .scan_prefix(k_credits_prefix(org, env, code_def))
            .keys()
            .map(|k| be_u64(&k?))
            .collect()
    }
}

impl EmbeddedStore {
    /// The invoice `org`'s `env` register certified as `code_def`, with the credit notes that
    /// name it as their original, in register order; `None` when the register has no entry
    /// certified as `code_def` (a credit note of it may still be there: `a` keys need no
    /// original).
    pub fn credited_original(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<Option<(RegisterEntry, Vec<RegisterEntry>)>, StoreError> {
        self.read(|index| {
            let Some(seq) = index.entry_seq_by_code(org, env, code_def)? else {
                return Ok(None);
            };
            let Some(original) = index.entry(env, seq)? else {
                return Ok(None);
            };
            let mut credit_notes = Vec::new();
            for seq in index.credit_note_seqs(org, env, code_def)? {
                credit_notes.extend(index.entry(env, seq)?);
            }
            Ok(Some((original, credit_notes)))
        })
    }

    /// Whether `org`'s `env` register holds an entry certified as `code_def`.
    pub fn holds_code(
        &self,
        org: &str,
        env: Environment,
        code_def: &str,
    ) -> Result<bool, StoreError> {
        self.read(|index| Ok(index.entry_seq_by_code(org, env, code_def)?.is_some()))
    }
}
