//! Fuzzes the API key as the gateway reads it from `Authorization`: `keys::bearer` then
//! `keys::parse`, and `PresentedKey::matches` against a stored record.
//!
//! Input layout: `[mode, rest...]`.
//! - `mode` even: `rest` (lossy UTF-8) is the whole header value.
//! - `mode` odd: `rest` makes a well-formed key (prefix, id and secret mapped to base62, the
//!   documented CRC-32 checksum computed here independently), then one edit at a position
//!   the input chooses: a changed character, two neighbours swapped, or none.
//!
//! What must hold: no panic; nothing the gateway may print about a presented key (its
//! `Debug`, `Display`) contains the secret, and a refusal's text is a fixed one; a well-formed key parses, its id
//! is the 12 characters after the prefix, it matches the record holding the SHA-256 of its
//! secret and no record of another secret, environment or id; any one changed character and
//! any swap of two different neighbours is refused (the checksum's promise, keys.rs).
#![no_main]

use chrono::{TimeZone, Utc};
use emcf_gateway::keys::{self, KeyError};
use emcf_gateway::model::{Environment, KeyRecord};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn checksum(signed: &str) -> String {
    let mut value = u64::from(crc32fast::hash(signed.as_bytes()));
    let mut digits = [b'0'; 6];
    for digit in digits.iter_mut().rev() {
        *digit = BASE62[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8(digits.to_vec()).expect("ascii")
}

fn record(id: &str, secret: &str, environment: Environment) -> KeyRecord {
    KeyRecord {
        id: id.to_string(),
        org: "org".into(),
        environment,
        secret_sha256: format!("{:x}", Sha256::digest(secret.as_bytes())),
        label: String::new(),
        enabled: true,
        created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
    }
}

/// Parses a header value the way the gateway does; asserts no secret-looking part leaks.
fn read(header: &str) -> Option<keys::PresentedKey> {
    let token = keys::bearer(header)?;
    assert!(!token.is_empty() && !token.contains(char::is_whitespace));
    match keys::parse(token) {
        Ok(presented) => {
            let secret = &token[22..46];
            for shown in [format!("{presented:?}"), presented.to_string()] {
                assert!(!shown.contains(secret), "the secret is shown: {shown}");
            }
            assert_eq!(presented.id, &token[9..21]);
            Some(presented)
        }
        Err(error) => {
            // The text of a refusal is one of the fixed texts (`KeyError` holds only
            // `&'static str`): the same whatever the key's content, so it cannot echo it.
            let text = error.to_string();
            let fixed = match error {
                KeyError::Malformed { reason } => format!("malformed API key: {reason}"),
                KeyError::BadChecksum => KeyError::BadChecksum.to_string(),
            };
            assert_eq!(text, fixed);
            None
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let header = String::from_utf8_lossy(rest);
        let _ = read(&header);
        return;
    }
    // 1 + 12 + 24 bytes make a key; 2 more choose the edit.
    if rest.len() < 39 {
        return;
    }
    let live = rest[0] % 2 == 0;
    let base62 = |bytes: &[u8]| -> String {
        bytes
            .iter()
            .map(|b| char::from(BASE62[usize::from(*b) % 62]))
            .collect()
    };
    let id = base62(&rest[1..13]);
    let secret = base62(&rest[13..37]);
    let (prefix, environment, other) = if live {
        ("mcf_live_", Environment::Production, Environment::Sandbox)
    } else {
        ("mcf_test_", Environment::Sandbox, Environment::Production)
    };
    let signed = format!("{prefix}{id}_{secret}");
    let key = format!("{signed}{}", checksum(&signed));
    let scheme = ["Bearer ", "bearer ", "BEARER  "][usize::from(rest[37]) % 3];

    let presented = read(&format!("{scheme}{key}")).expect("a well-formed key parses");
    assert!(presented.matches(&record(&id, &secret, environment)));
    let mut other_secret = secret.clone().into_bytes();
    other_secret[usize::from(rest[38]) % 24] ^= 0x01;
    let other_secret = String::from_utf8(other_secret).expect("ascii");
    assert!(!presented.matches(&record(&id, &other_secret, environment)));
    assert!(!presented.matches(&record(&id, &secret, other)));
    let mut other_id = id.clone();
    other_id.replace_range(0..1, if id.starts_with('0') { "1" } else { "0" });
    assert!(!presented.matches(&record(&other_id, &secret, environment)));
    let mut bad_hash = record(&id, &secret, environment);
    bad_hash.secret_sha256.truncate(63);
    assert!(!presented.matches(&bad_hash));

    // One edit after the prefix: always caught.
    let at = 9 + usize::from(rest[38]) % (key.len() - 9);
    let mut bytes = key.clone().into_bytes();
    let edited = if rest[37] % 2 == 0 {
        let replacement =
            BASE62[(usize::from(rest[37] / 2) % 61 + 1 + position_of(bytes[at])) % 62];
        if bytes[at] == b'_' || replacement == bytes[at] {
            return;
        }
        bytes[at] = replacement;
        true
    } else if at + 1 < bytes.len() && bytes[at] != bytes[at + 1] {
        bytes.swap(at, at + 1);
        true
    } else {
        false
    };
    if edited {
        let text = String::from_utf8(bytes).expect("ascii");
        assert!(
            read(&format!("Bearer {text}")).is_none(),
            "an edited key was accepted: {text} (from {key})"
        );
    }
});

fn position_of(byte: u8) -> usize {
    BASE62.iter().position(|&b| b == byte).unwrap_or(0)
}
