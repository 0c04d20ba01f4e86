//! The two keys of layout 4 that would otherwise take one sled key per register entry: the
//! register (`r`, 64 entries a key) and the rn lookup (`n`, hashed into 65,536 buckets per
//! organization and register). sled keeps some state in memory for every page of keys,
//! whether cached or not; with a key per entry that state grew with the register (about
//! 80 MiB at 1,000,000 entries). Grouped, the keys of a million entries fit a few thousand
//! pages, and a replay writes each group once per batch.
//!
//! | key | value |
//! |---|---|
//! | `r` env block | the places of entries `64 * block ..= 64 * block + 63` of `env`: one 56-byte [`EntryRef`] per seq, in seq order, up to the last one held (all zeros: none); block u64 BE |
//! | `n` org `\0` env bucket | (rn length u16 BE, rn, seq u64 BE) of each entry of `org` in `env` whose rn hashes to `bucket` (the first 2 bytes of its SHA-256, u16 BE) |

use sha2::{Digest, Sha256};

use super::entry_ref::{EntryRef, ENCODED};
use super::index::env_byte;
use super::StoreError;
use crate::model::Environment;

/// Entries per `r` key.
const BLOCK: u64 = 64;

/// `r` key of the block holding entry `seq` of `env`.
pub(super) fn k_entry_block(env: Environment, seq: u64) -> Vec<u8> {
    let mut k = vec![b'r', env_byte(env)];
    k.extend_from_slice(&(seq / BLOCK).to_be_bytes());
    k
}

/// The first seq of the block of an `r` key.
pub(super) fn first_seq(key: &[u8]) -> Result<u64, StoreError> {
    Ok(super::index::be_u64(key)? * BLOCK)
}

/// Entry `seq`'s place in its block's value, if the block holds it.
pub(super) fn slot(block: &[u8], seq: u64) -> Result<Option<EntryRef>, StoreError> {
    let at = (seq % BLOCK) as usize * ENCODED;
    match block.get(at..at + ENCODED) {
        Some(bytes) if bytes.iter().any(|&b| b != 0) => EntryRef::decode(bytes).map(Some),
        _ => Ok(None),
    }
}

/// The block's value with `entry` as seq `seq`'s place.
pub(super) fn with_slot(block: Option<&[u8]>, seq: u64, entry: &EntryRef) -> Vec<u8> {
    let at = (seq % BLOCK) as usize * ENCODED;
    let mut value = block.map(<[u8]>::to_vec).unwrap_or_default();
    if value.len() < at + ENCODED {
        value.resize(at + ENCODED, 0);
    }
    value[at..at + ENCODED].copy_from_slice(&entry.encode());
    value
}

/// The entries a block holds: (seq, place), in seq order.
pub(super) fn slots(
    first: u64,
    block: &[u8],
) -> impl DoubleEndedIterator<Item = Result<(u64, EntryRef), StoreError>> + '_ {
    block
        .chunks(ENCODED)
        .enumerate()
        .filter(|(_, bytes)| bytes.iter().any(|&b| b != 0))
        .map(move |(i, bytes)| Ok((first + i as u64, EntryRef::decode(bytes)?)))
}

/// The last seq a block holds (its value ends with it); a value that is empty or not whole
/// places is malformed.
pub(super) fn last_seq(first: u64, block: &[u8]) -> Result<u64, StoreError> {
    let held = block.len() / ENCODED;
    if held == 0 || !block.len().is_multiple_of(ENCODED) {
        return Err(StoreError::Invalid(format!(
            "index holds a malformed register block of {} bytes at seq {first}",
            block.len()
        )));
    }
    Ok(first + held as u64 - 1)
}

/// `n` key of the bucket of `rn` among `org`'s entries of `env`.
pub(super) fn k_rn_bucket(org: &str, env: Environment, rn: &str) -> Vec<u8> {
    k_bucket(b'n', org, env, rn)
}

/// Whether `k` is a bucket's key (`k_bucket`: prefix `n` or `c`).
pub(super) fn is_bucket(k: &[u8]) -> bool {
    matches!(k.first(), Some(b'n' | b'c'))
}

/// The key with `prefix` of the bucket of `name` among `org`'s entries of `env`: `prefix`,
/// org, `\0`, env, the first 2 bytes of the name's SHA-256. Buckets hold (name, seq) pairs
/// (`find_rn`, `with_rn`): the rns (`n`) and the codeDEFDGIs (`c`, `links.rs`).
pub(super) fn k_bucket(prefix: u8, org: &str, env: Environment, name: &str) -> Vec<u8> {
    let digest = Sha256::digest(name.as_bytes());
    let mut k = Vec::with_capacity(org.len() + 5);
    k.push(prefix);
    k.extend_from_slice(org.as_bytes());
    k.push(0);
    k.push(env_byte(env));
    k.extend_from_slice(&digest[..2]);
    k
}

fn malformed(bucket: &[u8]) -> StoreError {
    StoreError::Invalid(format!("index holds a malformed rn bucket {bucket:?}"))
}

/// The (rn, seq) pairs of a bucket's value.
fn pairs(bucket: &[u8]) -> impl Iterator<Item = Result<(&[u8], u64), StoreError>> {
    let mut rest = bucket;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let pair = (|| {
            let len = usize::from(u16::from_be_bytes(
                rest.get(..2).and_then(|b| b.try_into().ok()).ok_or(())?,
            ));
            let rn = rest.get(2..2 + len).ok_or(())?;
            let seq = rest
                .get(2 + len..10 + len)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .ok_or(())?;
            rest = &rest[10 + len..];
            Ok((rn, u64::from_be_bytes(seq)))
        })();
        if pair.is_err() {
            rest = &[];
        }
        Some(pair.map_err(|()| malformed(bucket)))
    })
}

/// The seq of `rn` in a bucket's value.
pub(super) fn find_rn(bucket: &[u8], rn: &str) -> Result<Option<u64>, StoreError> {
    for pair in pairs(bucket) {
        let (held, seq) = pair?;
        if held == rn.as_bytes() {
            return Ok(Some(seq));
        }
    }
    Ok(None)
}

/// The bucket's value with `rn` at `seq` (replacing its seq if it holds `rn`: the caller,
/// `apply_certified`, has checked that `rn` names no other entry).
pub(super) fn with_rn(bucket: Option<&[u8]>, rn: &str, seq: u64) -> Result<Vec<u8>, StoreError> {
    let len = u16::try_from(rn.len())
        .map_err(|_| StoreError::Invalid(format!("an rn of {} bytes", rn.len())))?;
    let mut value = Vec::with_capacity(bucket.map_or(0, <[u8]>::len) + 10 + rn.len());
    for pair in bucket.map(pairs).into_iter().flatten() {
        let (held, held_seq) = pair?;
        if held != rn.as_bytes() {
            value.extend_from_slice(&(held.len() as u16).to_be_bytes());
            value.extend_from_slice(held);
            value.extend_from_slice(&held_seq.to_be_bytes());
        }
    }
    value.extend_from_slice(&len.to_be_bytes());
    value.extend_from_slice(rn.as_bytes());
    value.extend_from_slice(&seq.to_be_bytes());
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::journal::Place;

    fn at(start: u64) -> EntryRef {
        EntryRef {
            place: Place { start, len: 9 },
            hash: [1; 32],
            intent: Place {
                start: start - 50,
                len: 40,
            },
        }
    }

    #[test]
    fn a_block_holds_64_places_up_to_its_last() {
        assert_eq!(
            k_entry_block(Environment::Production, 63),
            k_entry_block(Environment::Production, 0)
        );
        assert_ne!(
            k_entry_block(Environment::Production, 64),
            k_entry_block(Environment::Production, 63)
        );
        let block = with_slot(None, 65, &at(100));
        let block = with_slot(Some(&block), 66, &at(200));
        assert_eq!(block.len(), 3 * ENCODED, "slot 64 empty, then 65 and 66");
        assert_eq!(slot(&block, 64).unwrap(), None);
        assert_eq!(slot(&block, 65).unwrap(), Some(at(100)));
        assert_eq!(slot(&block, 67).unwrap(), None);
        let held: Vec<_> = slots(64, &block).map(Result::unwrap).collect();
        assert_eq!(held, [(65, at(100)), (66, at(200))]);
        assert_eq!(last_seq(64, &block).unwrap(), 66);
        assert!(last_seq(64, &[]).is_err(), "an empty block is malformed");
        let key = k_entry_block(Environment::Sandbox, 130);
        assert_eq!(first_seq(&key).unwrap(), 128);
    }

    #[test]
    fn a_bucket_finds_each_rn_and_a_malformed_one_is_an_error() {
        let bucket = with_rn(None, "FV-1", 1).unwrap();
        let bucket = with_rn(Some(&bucket), "", 2).unwrap();
        let bucket = with_rn(Some(&bucket), "FV-10", 3).unwrap();
        assert_eq!(find_rn(&bucket, "FV-1").unwrap(), Some(1));
        assert_eq!(find_rn(&bucket, "").unwrap(), Some(2));
        assert_eq!(find_rn(&bucket, "FV-10").unwrap(), Some(3));
        assert_eq!(find_rn(&bucket, "FV-100").unwrap(), None);
        let moved = with_rn(Some(&bucket), "FV-1", 9).unwrap();
        assert_eq!(find_rn(&moved, "FV-1").unwrap(), Some(9));
        assert_eq!(moved.len(), bucket.len());
        assert!(find_rn(&bucket[..bucket.len() - 1], "FV-10").is_err());
        // The bucket depends on the rn, the organization and the register.
        let k = k_rn_bucket("demo", Environment::Production, "FV-1");
        assert_eq!(k.len(), 1 + 4 + 1 + 1 + 2);
        assert_ne!(k, k_rn_bucket("demo", Environment::Sandbox, "FV-1"));
        assert_ne!(k, k_rn_bucket("acme", Environment::Production, "FV-1"));
    }
}
