//! Keys that each hold 64 consecutive ids as bits: an organization's register entries (`R`)
//! and how intents were resolved (`j`). One key per 64 ids instead of one per id: a replay
//! writes each block once per batch, and sled holds a few bytes per entry.
//!
//! | key | value |
//! |---|---|
//! | `R` org `\0` env block | u64 BE: bit `seq % 64` set for each entry of `org` in block `seq / 64` (u64 BE) of the `env` register |
//! | `j` block | certified (u64 BE) ++ abandoned (u64 BE): bit `id % 64` of intent `id` of block `id / 64` (u64 BE), set in one of them once it is resolved |

use super::index::{env_byte, Index};
use super::StoreError;
use crate::model::{Environment, IntentId};

/// Ids per block.
pub(super) const BLOCK: u64 = 64;

pub(super) fn block_of(id: u64) -> u64 {
    id / BLOCK
}

/// The bit of `id` in its block.
pub(super) fn bit_of(id: u64) -> u64 {
    1 << (id % BLOCK)
}

/// `R` key of `org`'s entries of `env` in `block`.
pub(super) fn k_org_block(org: &str, env: Environment, block: u64) -> Vec<u8> {
    let mut k = k_org_prefix(org, env);
    k.extend_from_slice(&block.to_be_bytes());
    k
}

/// The prefix of every `R` key of `org` in `env`.
pub(super) fn k_org_prefix(org: &str, env: Environment) -> Vec<u8> {
    let mut k = Vec::with_capacity(org.len() + 11);
    k.push(b'R');
    k.extend_from_slice(org.as_bytes());
    k.push(0);
    k.push(env_byte(env));
    k
}

/// `j` key of the block of intent `id`.
pub(super) fn k_resolved(id: IntentId) -> Vec<u8> {
    let mut k = vec![b'j'];
    k.extend_from_slice(&block_of(id).to_be_bytes());
    k
}

fn malformed(what: &str, bytes: &[u8]) -> StoreError {
    StoreError::Invalid(format!("index holds a malformed {what} {bytes:?}"))
}

/// The bitmap of an `R` value.
pub(super) fn org_bits(value: &[u8]) -> Result<u64, StoreError> {
    <[u8; 8]>::try_from(value)
        .map(u64::from_be_bytes)
        .map_err(|_| malformed("entry block", value))
}

/// How intent `id` ended in its `j` value: `Some(b'c')` certified, `Some(b'a')` abandoned.
pub(super) fn resolution_in(value: &[u8], id: IntentId) -> Result<Option<u8>, StoreError> {
    let [certified, abandoned] = resolved_bits(value)?;
    Ok(if certified & bit_of(id) != 0 {
        Some(b'c')
    } else if abandoned & bit_of(id) != 0 {
        Some(b'a')
    } else {
        None
    })
}

/// The two bitmaps of a `j` value (certified, abandoned); an absent value has none set.
pub(super) fn resolved_bits(value: &[u8]) -> Result<[u64; 2], StoreError> {
    if value.is_empty() {
        return Ok([0, 0]);
    }
    let halves = <[u8; 16]>::try_from(value).map_err(|_| malformed("resolution block", value))?;
    let mut certified = [0u8; 8];
    let mut abandoned = [0u8; 8];
    certified.copy_from_slice(&halves[..8]);
    abandoned.copy_from_slice(&halves[8..]);
    Ok([u64::from_be_bytes(certified), u64::from_be_bytes(abandoned)])
}

/// A `j` value of the two bitmaps.
pub(super) fn resolved_value(bits: [u64; 2]) -> Vec<u8> {
    let mut v = bits[0].to_be_bytes().to_vec();
    v.extend_from_slice(&bits[1].to_be_bytes());
    v
}

/// The seqs set in `bits` of `block`, in ascending order.
pub(super) fn seqs(block: u64, bits: u64) -> impl DoubleEndedIterator<Item = u64> {
    (0..BLOCK)
        .filter(move |bit| bits & (1 << bit) != 0)
        .map(move |bit| block * BLOCK + bit)
}

impl Index {
    /// `org`'s entries of `env` with a seq in `from..to`, in ascending order or (`rev`)
    /// descending, until `visit` says stop (returns `false`).
    pub(super) fn org_seqs(
        &self,
        org: &str,
        env: Environment,
        (from, to): (u64, u64),
        rev: bool,
        visit: &mut dyn FnMut(u64) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        if from >= to {
            return Ok(());
        }
        let range = k_org_block(org, env, block_of(from))..=k_org_block(org, env, block_of(to - 1));
        let blocks = self.tree.range(range);
        let mut each = |kv: sled::Result<(sled::IVec, sled::IVec)>| -> Result<bool, StoreError> {
            let (k, v) = kv?;
            let block = super::index::be_u64(&k)?;
            let in_range = |seq: &u64| (from..to).contains(seq);
            let bits = org_bits(&v)?;
            if rev {
                for seq in seqs(block, bits).rev().filter(in_range) {
                    if !visit(seq)? {
                        return Ok(false);
                    }
                }
            } else {
                for seq in seqs(block, bits).filter(in_range) {
                    if !visit(seq)? {
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        };
        if rev {
            for kv in blocks.rev() {
                if !each(kv)? {
                    break;
                }
            }
        } else {
            for kv in blocks {
                if !each(kv)? {
                    break;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_and_blocks() {
        assert_eq!((block_of(0), block_of(63), block_of(64)), (0, 0, 1));
        assert_eq!(bit_of(65), 2);
        let found: Vec<u64> = seqs(2, 0b1001 | 1 << 63).collect();
        assert_eq!(found, [128, 131, 191]);
        let back: Vec<u64> = seqs(2, 0b1001).rev().collect();
        assert_eq!(back, [131, 128]);
    }

    #[test]
    fn resolutions_round_trip_and_a_malformed_block_is_an_error() {
        let value = resolved_value([bit_of(70), bit_of(71)]);
        assert_eq!(resolution_in(&value, 70).unwrap(), Some(b'c'));
        assert_eq!(resolution_in(&value, 71).unwrap(), Some(b'a'));
        assert_eq!(resolution_in(&value, 72).unwrap(), None);
        assert_eq!(resolved_bits(&[]).unwrap(), [0, 0]);
        assert!(resolution_in(&value[..15], 70).is_err());
        assert!(org_bits(&[1, 2]).is_err());
    }
}
