//! Tests of the prefix check against the full scan.

use std::path::Path;

use super::*;
use crate::store::embedded::journal::{frame, open_file, scan, scan_from, Mode};
use crate::store::embedded::tests::{certify_range, frames, journal_path, seeded, write_frames};

/// A journal of `n` certified entries after the 6 seed records; returns its payloads.
fn journal(dir: &Path, n: usize) -> Vec<Vec<u8>> {
    let store = seeded(dir);
    certify_range(&store, 0..n);
    drop(store);
    frames(dir).into_iter().map(|(_, p)| p).collect()
}

fn check(dir: &Path, seq: u64, head: &Hash, block: usize) -> Option<Start> {
    let (mut file, len) = open_file(&journal_path(dir)).unwrap();
    check_prefix_in_blocks(&mut file, len, seq, head, block)
}

#[test]
fn the_prefix_check_ends_after_the_record_the_index_applied() {
    let dir = tempfile::tempdir().unwrap();
    let payloads = journal(dir.path(), 5);
    let offsets: Vec<u64> = frames(dir.path()).iter().map(|(at, _)| *at).collect();
    let len = std::fs::metadata(journal_path(dir.path())).unwrap().len();
    // Blocks smaller than a record, around a record, and the real size: records straddle.
    for block in [7, 100, 333, 4096, PREFIX_BLOCK] {
        for (i, payload) in payloads.iter().enumerate() {
            let seq = i as u64 + 1;
            let end = offsets.get(i + 1).copied().unwrap_or(len);
            assert_eq!(
                check(dir.path(), seq, &hash(payload), block),
                Some(Start {
                    offset: end,
                    seq,
                    head: hash(payload),
                    record_start: offsets[i],
                }),
                "block {block}, seq {seq}"
            );
        }
    }
    // What the full scan says about the same records.
    let (mut file, len) = open_file(&journal_path(dir.path())).unwrap();
    let full = scan(&mut file, len, Mode::Strict, dir.path(), |_, _, _| Ok(())).unwrap();
    let fast = check(dir.path(), full.records, &full.head, PREFIX_BLOCK).unwrap();
    assert_eq!(
        (fast.offset, fast.seq, fast.head),
        (full.end, full.records, full.head)
    );
}

#[test]
fn the_tail_scan_continues_where_the_prefix_check_ended() {
    let dir = tempfile::tempdir().unwrap();
    let payloads = journal(dir.path(), 3);
    let (mut file, len) = open_file(&journal_path(dir.path())).unwrap();
    let start = check_prefix(&mut file, len, 6, &hash(&payloads[5])).unwrap();
    let mut seen = Vec::new();
    let tail = scan_from(
        &mut file,
        start,
        len,
        Mode::Open,
        dir.path(),
        |record, _, _| {
            seen.push(record.seq);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen, (7..=payloads.len() as u64).collect::<Vec<_>>());
    let full = scan(&mut file, len, Mode::Open, dir.path(), |_, _, _| Ok(())).unwrap();
    assert_eq!(
        (tail.records, tail.end, tail.head),
        (full.records, full.end, full.head)
    );
    assert!(tail.torn.is_none());
}

#[test]
fn the_chain_check_started_early_agrees_with_the_prefix_check() {
    let dir = tempfile::tempdir().unwrap();
    let payloads = journal(dir.path(), 4);
    let n = payloads.len() as u64;
    let path = journal_path(dir.path());
    let len = std::fs::metadata(&path).unwrap().len();
    let early = |block: usize, tail: usize, seq: u64, head: &Hash| {
        ChainCheck::spawn_with(&path, block, tail)
            .unwrap()
            .start_after(len, seq, head)
    };
    for block in [7, 100, PREFIX_BLOCK] {
        for seq in 1..=n {
            let head = hash(&payloads[seq as usize - 1]);
            let expected = check(dir.path(), seq, &head, block);
            assert!(expected.is_some());
            // Remembered when among the last 5 records, else left to `check_prefix`.
            let remembered = if seq + 5 > n { expected } else { None };
            assert_eq!(
                early(block, 5, seq, &head),
                remembered,
                "block {block} seq {seq}"
            );
        }
    }
    let head = hash(payloads.last().unwrap());
    assert_eq!(early(64, 5, n, &hash(b"other")), None);
    assert_eq!(early(64, 5, 0, &GENESIS), None);
    let other_len = ChainCheck::spawn(&path)
        .unwrap()
        .start_after(len + 1, n, &head);
    assert_eq!(other_len, None, "checked another length of the journal");

    // A torn tail: the records before it are intact.
    let third = frames(dir.path())[3].0 as usize;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&frame(b"{\"seq\":99")[..10]);
    std::fs::write(&path, &bytes).unwrap();
    let torn = ChainCheck::spawn(&path)
        .unwrap()
        .start_after(bytes.len() as u64, n, &head);
    assert_eq!(torn.map(|s| s.offset), Some(len));
    // Damage in the middle: nothing after it counts.
    bytes.truncate(len as usize);
    bytes[third + 30] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        ChainCheck::spawn(&path).unwrap().start_after(len, n, &head),
        None
    );
    // Dropped unused: the thread stops by itself.
    drop(ChainCheck::spawn(&path));
}

#[test]
fn the_prefix_check_refuses_anything_not_exactly_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let payloads = journal(dir.path(), 4);
    let n = payloads.len() as u64;
    let head = hash(payloads.last().unwrap());
    let path = journal_path(dir.path());
    let original = std::fs::read(&path).unwrap();
    let offsets: Vec<u64> = frames(dir.path()).iter().map(|(at, _)| *at).collect();
    assert!(check(dir.path(), n, &head, 64).is_some());

    // Another hash than the index's, a seq the journal does not have, seq 0.
    assert_eq!(check(dir.path(), n, &hash(b"other"), 64), None);
    assert_eq!(check(dir.path(), n + 1, &head, 64), None);
    assert_eq!(check(dir.path(), 0, &GENESIS, 64), None);

    let mutated = |at: usize, f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = original.clone();
        f(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        let result = check(dir.path(), n, &head, 64);
        std::fs::write(&path, &original).unwrap();
        assert_eq!(result, None, "mutation at {at}");
    };
    let third = offsets[3] as usize;
    // A flipped payload byte (CRC), a flipped CRC byte, a zero and an oversized length.
    mutated(third + 30, &|b| b[third + 30] ^= 0x01);
    mutated(third + 5, &|b| b[third + 5] ^= 0x01);
    mutated(third, &|b| {
        b[third..third + 4].copy_from_slice(&0u32.to_le_bytes())
    });
    mutated(third, &|b| {
        b[third..third + 4].copy_from_slice(&(MAX_RECORD + 1).to_le_bytes())
    });
    // A truncated journal (the last record torn).
    mutated(original.len() - 3, &|b| b.truncate(b.len() - 3));

    // A record changed with its CRC recomputed: the next record's link breaks.
    let mut changed = payloads.clone();
    let text = String::from_utf8(changed[8].clone()).unwrap();
    assert!(text.contains("\"rn\":\"FN-1\""), "{text}");
    changed[8] = text.replace("FN-1", "FN-X").into_bytes();
    write_frames(dir.path(), &changed);
    assert_eq!(check(dir.path(), n, &head, 64), None);
    // The record the index applied changed: its hash is not the index's.
    let mut changed = payloads.clone();
    let text = String::from_utf8(changed[n as usize - 1].clone()).unwrap();
    assert!(text.contains("\"rn\":\"FN-3\""), "{text}");
    changed[n as usize - 1] = text.replace("FN-3", "FN-Y").into_bytes();
    write_frames(dir.path(), &changed);
    assert_eq!(check(dir.path(), n, &head, 64), None);

    // Valid records not in the writer's exact form (other JSON spacing, an uppercase
    // link): left to the full scan.
    let respaced: Vec<Vec<u8>> = payloads
        .iter()
        .map(|p| {
            String::from_utf8(p.clone())
                .unwrap()
                .replacen("{\"seq\":", "{\"seq\": ", 1)
                .into_bytes()
        })
        .collect();
    write_frames(dir.path(), &respaced);
    assert_eq!(check(dir.path(), 1, &hash(&respaced[0]), 64), None);
    let mut upper = payloads.clone();
    let text = String::from_utf8(upper[1].clone()).unwrap();
    let link = hex::encode(hash(&payloads[0]));
    upper[1] = text.replace(&link, &link.to_uppercase()).into_bytes();
    write_frames(dir.path(), &upper);
    assert_eq!(check(dir.path(), 2, &hash(&upper[1]), 64), None);
}
