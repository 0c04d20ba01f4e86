//! Golden vectors, the files themselves: they hold exactly the vectors that `meaning::typed`
//! knows, each vector's bytes agree with its own seq/cmd/data/status lines and with the
//! protocol's LEN and BCC arithmetic, and the loader (tests/vectors/mod.rs) reads every key and
//! rejects mistakes.

mod meaning;
mod vectors;

use std::collections::BTreeSet;

use meaning::{typed, NAMES};
use vectors::{hex, Body, Direction};

#[test]
fn the_vector_files_hold_every_required_vector() {
    let names: BTreeSet<String> = vectors::all().into_iter().map(|v| v.name).collect();
    let known: BTreeSet<String> = NAMES.iter().map(|n| n.to_string()).collect();
    assert_eq!(names, known, "vector files and meaning/mod.rs disagree");
    for name in NAMES {
        assert!(
            typed(name).is_some(),
            "{name} is in NAMES but not in typed()"
        );
    }
}

/// The bytes agree with the vector's own seq/cmd/data/status lines, and LEN and BCC are right
/// by the protocol's arithmetic (recomputed here, independently of the crate).
#[test]
fn every_vector_is_self_consistent() {
    for v in vectors::all() {
        let f = &v.frame;
        let (seq, cmd, data, status) = match &v.body {
            Body::Control => {
                assert_eq!(v.direction, Direction::DeviceToHost, "{v}");
                assert!(f == &[0x15] || f == &[0x16], "{v}: not NAK or SYN");
                continue;
            }
            Body::Request { seq, cmd, data } => (*seq, *cmd, data, None),
            Body::Reply {
                seq,
                cmd,
                data,
                status,
            } => (*seq, *cmd, data, Some(status)),
        };
        let tail = if status.is_some() { 1 + 6 } else { 0 };
        assert!(std::str::from_utf8(data).is_ok(), "{v}: DATA is not UTF-8");
        assert_eq!(
            f.len(),
            1 + 3 + data.len() + tail + 1 + 4 + 1,
            "{v}: frame length"
        );
        assert_eq!(f[0], 0x01, "{v}: SOH");
        assert_eq!(usize::from(f[1]), 0x20 + 4 + data.len() + tail, "{v}: LEN");
        assert_eq!((f[2], f[3]), (seq, cmd), "{v}: SEQ, CMD");
        assert_eq!(&f[4..4 + data.len()], &data[..], "{v}: DATA");
        let mut at = 4 + data.len();
        if let Some(status) = status {
            assert_eq!(f[at], 0x04, "{v}: separator");
            assert_eq!(&f[at + 1..at + 7], status, "{v}: STATUS");
            at += 7;
        }
        assert_eq!(f[at], 0x05, "{v}: POSTAMBLE");
        let sum: u32 = f[1..=at].iter().map(|&b| u32::from(b)).sum();
        let nibbles: Vec<u8> = [12, 8, 4, 0]
            .iter()
            .map(|shift| 0x30 + ((sum >> shift) & 0xF) as u8)
            .collect();
        assert_eq!(
            &f[at + 1..at + 5],
            &nibbles[..],
            "{v}: BCC of sum {sum:#06x} should be {}",
            hex(&nibbles)
        );
        assert_eq!(f[at + 5], 0x03, "{v}: ETX");
    }
}

/// The loader itself: every key, the DATA notation, and its errors.
#[test]
fn the_vector_loader_reads_every_key_and_rejects_mistakes() {
    let text = "# comment\n\
        vector: one\n\
        dir: device->host\n\
        meaning: a reply\n\
        meaning: on two lines\n\
        seq: 20\n\
        cmd: C1\n\
        status: 80 80 80 80 80 81\n\
        data: \"a\\tb\\n\\\\ \\\"q\\\" \u{e9}\"\n\
        frame:\n  01 2B  # SOH LEN\n  # a comment line\n  FF\n\n\
        vector: two\n\
        dir: device->host\n\
        meaning: NAK\n\
        frame: 15\n";
    let parsed = vectors::parse("inline", text).unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].name, "one");
    assert_eq!(parsed[0].meaning, "a reply on two lines");
    assert_eq!(
        parsed[0].body,
        Body::Reply {
            seq: 0x20,
            cmd: 0xC1,
            data: "a\tb\n\\ \"q\" \u{e9}".as_bytes().to_vec(),
            status: [0x80, 0x80, 0x80, 0x80, 0x80, 0x81],
        }
    );
    assert_eq!(parsed[0].frame, [0x01, 0x2B, 0xFF]);
    assert_eq!(parsed[0].line, 2);
    assert_eq!(parsed[1].body, Body::Control);
    assert_eq!(parsed[1].frame, [0x15]);

    let error = |text: &str| vectors::parse("inline", text).unwrap_err();
    assert!(error("dir: host->device\n").contains("before the first"));
    assert!(error("vector: x\ndir: sideways\n").contains("dir must be"));
    assert!(error("vector: x\nseq: 2\n").contains("two-digit"));
    assert!(error("vector: x\ndir: host->device\nmeaning: m\nframe: 01\n").contains("needs seq"));
    assert!(error("vector: x\ndir: device->host\nmeaning: m\nframe: 15 16\n").contains("one byte"));
    assert!(error("vector: x\ndata: \"\\q\"\n").contains("unknown escape"));
    assert!(error("vector: x\nseq: 20\nseq: 21\n").contains("twice"));
    assert!(error("vector: x\nframe:\n\n  01\n").contains("outside a frame"));
    assert!(error("vector: x\nfoo: 1\n").contains("unknown key"));
}
