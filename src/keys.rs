//! API keys (docs/design.md §7): issuing, parsing, checking.
//!
//! # Format
//!
//! ```text
//! mcf_test_4Hq0ZbT1xYk9_0123456789abcdefghijABCD36W2UQ
//! └prefix─┘└─id: 12───┘│└─────secret: 24───────┘└crc─┘
//! ```
//!
//! A key is the concatenation, without spaces, of:
//!
//! | part | length | content |
//! |---|---|---|
//! | prefix | 9 | `mcf_live_` (Production) or `mcf_test_` (Sandbox) |
//! | id | 12 | public id, base62, random; stored as [`KeyRecord::id`], shown in lists and logs |
//! | separator | 1 | `_` |
//! | secret | 24 | base62, uniformly random from the OS ([`rand::rngs::OsRng`]): 24 × log2(62) ≈ 142.9 bits |
//! | checksum | 6 | CRC-32 of everything before it, as a 6-digit base62 number |
//!
//! 52 ASCII characters in all ([`KEY_LEN`]). The base62 alphabet is
//! `0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz` (digit values 0..=61 in that
//! order). The checksum is the CRC-32 used by zlib, PNG and Ethernet (IEEE 802.3, reflected
//! polynomial `0xEDB88320`, initial value and final XOR `0xFFFFFFFF`) over the ASCII bytes of
//! `prefix + id + "_" + secret` (46 bytes), written in base62, most significant digit first,
//! left-padded with `0` to 6 digits (62^6 > 2^32, so 6 digits always suffice).
//!
//! The checksum lets [`parse`] reject a mistyped or truncated key before any lookup: CRC-32
//! detects every change confined to 32 consecutive bits, so any single changed character and any
//! swap of two neighbouring characters is always caught (tested).
//!
//! Only the SHA-256 of the 24 secret characters (ASCII bytes, lowercase hex) is stored
//! ([`KeyRecord::secret_sha256`]); [`PresentedKey::matches`] compares it in constant time. The
//! plaintext exists once, in [`IssuedKey::plaintext`], to be shown to the user at creation. No
//! `Debug` or `Display` of this module's types prints a secret, and no [`KeyError`] echoes one.

use std::fmt;

use chrono::{DateTime, Utc};
use rand::distributions::Alphanumeric;
use rand::rngs::OsRng;
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use thiserror::Error;

use crate::model::{Environment, KeyRecord};

/// Prefix of Production keys.
pub const LIVE_PREFIX: &str = "mcf_live_";
/// Prefix of Sandbox keys.
pub const TEST_PREFIX: &str = "mcf_test_";
/// Length of the public id, in base62 characters.
pub const ID_LEN: usize = 12;
/// Length of the secret, in base62 characters (≈ 142.9 random bits).
pub const SECRET_LEN: usize = 24;
/// Length of the checksum, in base62 characters.
pub const CHECKSUM_LEN: usize = 6;
/// Length of a whole key: prefix (9) + id + `_` + secret + checksum = 52.
pub const KEY_LEN: usize = PREFIX_LEN + ID_LEN + 1 + SECRET_LEN + CHECKSUM_LEN;

const PREFIX_LEN: usize = 9;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const REDACTED: &str = "<redacted>";

/// The prefix of keys of `environment`: `mcf_live_` or `mcf_test_`.
pub fn prefix(environment: Environment) -> &'static str {
    match environment {
        Environment::Production => LIVE_PREFIX,
        Environment::Sandbox => TEST_PREFIX,
    }
}

/// Why a presented key was refused by [`parse`]. The messages never contain the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum KeyError {
    /// Not the shape of a key: wrong prefix, length or characters.
    #[error("malformed API key: {reason}")]
    Malformed {
        /// What is wrong, in words (never the key's content).
        reason: &'static str,
    },
    /// The shape is right but the checksum does not match: a typo or a truncated copy.
    #[error("API key checksum mismatch: the key was mistyped or cut; copy it again in full")]
    BadChecksum,
}

/// A newly issued key: the plaintext to show once, and the record to store.
///
/// `Debug` redacts the secret part of `plaintext`. The admin socket's answer to `key issue`
/// is its JSON (`{"key", "record"}`), read by the CLI.
#[derive(Clone, Serialize, Deserialize)]
pub struct IssuedKey {
    /// The whole key. Show it to the user once; never store or log it.
    #[serde(rename = "key")]
    pub plaintext: String,
    /// What to store: id, organization, environment, SHA-256 of the secret, label, enabled,
    /// creation time.
    pub record: KeyRecord,
}

impl fmt::Debug for IssuedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedKey")
            .field(
                "plaintext",
                &format_args!(
                    "{}{}_{REDACTED}",
                    prefix(self.record.environment),
                    self.record.id
                ),
            )
            .field("record", &self.record)
            .finish()
    }
}

/// Issues a new key for organization `org`, enabled, created at `now`.
///
/// Id and secret come from the operating system's random source. The id is random (≈ 71 bits),
/// not checked for uniqueness here: the store should refuse an id it already holds (the caller
/// then simply issues again).
///
/// # Panics
///
/// Only if the operating system's random source fails ([`OsRng`]), which does not happen on a
/// running Linux system.
pub fn issue(org: &str, environment: Environment, label: &str, now: DateTime<Utc>) -> IssuedKey {
    let id = random_base62(ID_LEN);
    let secret = random_base62(SECRET_LEN);
    let mut plaintext = String::with_capacity(KEY_LEN);
    plaintext.push_str(prefix(environment));
    plaintext.push_str(&id);
    plaintext.push('_');
    plaintext.push_str(&secret);
    let checksum = checksum(plaintext.as_bytes());
    plaintext.push_str(&checksum);
    IssuedKey {
        plaintext,
        record: KeyRecord {
            id,
            org: org.to_string(),
            environment,
            secret_sha256: secret_sha256_hex(&secret),
            label: label.to_string(),
            enabled: true,
            created_at: now,
        },
    }
}

/// A key as presented by a client, checked for shape and checksum but not yet against a record.
///
/// Look up the [`KeyRecord`] by [`PresentedKey::id`], then call [`PresentedKey::matches`].
/// `Debug` and `Display` show the environment and id, never the secret.
#[derive(Clone)]
pub struct PresentedKey {
    /// From the prefix.
    pub environment: Environment,
    /// The public id (12 base62 characters).
    pub id: String,
    secret: String,
}

impl fmt::Debug for PresentedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PresentedKey")
            .field("environment", &self.environment)
            .field("id", &self.id)
            .field("secret", &format_args!("{REDACTED}"))
            .finish()
    }
}

impl fmt::Display for PresentedKey {
    /// `mcf_live_<id>_<redacted>`: safe for logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}_{REDACTED}", prefix(self.environment), self.id)
    }
}

impl PresentedKey {
    /// Whether this key is the one `record` describes: same id, same environment, and the
    /// SHA-256 of the secret equal to `record.secret_sha256` (compared in constant time).
    ///
    /// Does not look at `record.enabled`: the caller refuses disabled keys itself (so that it
    /// can say so). A record whose hash is not 64 hex digits matches nothing.
    pub fn matches(&self, record: &KeyRecord) -> bool {
        let digest = Sha256::digest(self.secret.as_bytes());
        let mut stored = [0u8; 32];
        let stored_ok = hex::decode_to_slice(record.secret_sha256.as_bytes(), &mut stored).is_ok();
        let secret_ok: bool = digest.as_slice().ct_eq(&stored).into();
        // Evaluate every part (no short circuit on the secret); id and environment are public.
        secret_ok & stored_ok & (self.environment == record.environment) & (self.id == record.id)
    }
}

/// Checks the shape and checksum of `text` (a whole key, no surrounding spaces) and splits it.
///
/// A mistyped key fails here with [`KeyError::BadChecksum`], before any lookup. Never panics,
/// whatever the input.
pub fn parse(text: &str) -> Result<PresentedKey, KeyError> {
    let bytes = text.as_bytes();
    let environment = if bytes.starts_with(LIVE_PREFIX.as_bytes()) {
        Environment::Production
    } else if bytes.starts_with(TEST_PREFIX.as_bytes()) {
        Environment::Sandbox
    } else {
        return Err(KeyError::Malformed {
            reason: "an API key starts with mcf_live_ or mcf_test_",
        });
    };
    if bytes.len() != KEY_LEN {
        return Err(KeyError::Malformed {
            reason: "an API key is exactly 52 characters long",
        });
    }
    let rest = &bytes[PREFIX_LEN..];
    let (id, rest) = rest.split_at(ID_LEN);
    let (separator, rest) = rest.split_at(1);
    let (secret, checksum_part) = rest.split_at(SECRET_LEN);
    if separator != b"_" {
        return Err(KeyError::Malformed {
            reason: "the 12-character id must be followed by _",
        });
    }
    let alnum = |part: &[u8]| part.iter().all(u8::is_ascii_alphanumeric);
    if !alnum(id) || !alnum(secret) || !alnum(checksum_part) {
        return Err(KeyError::Malformed {
            reason: "apart from the prefix and the _ after the id, an API key has only letters and digits",
        });
    }
    // Every byte checked so far is ASCII, so these slices are valid UTF-8.
    let signed = &text[..KEY_LEN - CHECKSUM_LEN];
    if checksum(signed.as_bytes()).as_bytes() != checksum_part {
        return Err(KeyError::BadChecksum);
    }
    Ok(PresentedKey {
        environment,
        id: String::from_utf8_lossy(id).into_owned(),
        secret: String::from_utf8_lossy(secret).into_owned(),
    })
}

/// The key in an `Authorization` header value `Bearer <key>`.
///
/// The scheme is case-insensitive and followed by one or more spaces; trailing spaces and tabs
/// are ignored. `None` for any other scheme, a missing or empty token, or a token with
/// whitespace inside. Only extracts: pass the result to [`parse`].
pub fn bearer(header_value: &str) -> Option<&str> {
    let scheme = header_value.get(..6)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let rest = header_value.get(6..)?;
    let token = rest.trim_start_matches(' ');
    if token.len() == rest.len() {
        return None;
    }
    let token = token.trim_end_matches([' ', '\t']);
    if token.is_empty() || token.contains(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    Some(token)
}

/// `len` random base62 characters from the OS's generator (also the dashboard tokens').
pub(crate) fn random_base62(len: usize) -> String {
    // `Alphanumeric` samples uniformly from [A-Za-z0-9] (62 symbols, rejection sampling).
    OsRng
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// Lowercase hex SHA-256 of a secret, as stored (also the dashboard tokens').
pub(crate) fn secret_sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// CRC-32 (IEEE) of `signed`, as 6 base62 digits, most significant first.
fn checksum(signed: &[u8]) -> String {
    let mut value = u64::from(crc32fast::hash(signed));
    let mut digits = [b'0'; CHECKSUM_LEN];
    for digit in digits.iter_mut().rev() {
        // `value % 62` < 62: always a valid index.
        *digit = BASE62[(value % 62) as usize];
        value /= 62;
    }
    digits.iter().map(|&b| char::from(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
    }

    fn secret_of(issued: &IssuedKey) -> &str {
        &issued.plaintext[PREFIX_LEN + ID_LEN + 1..PREFIX_LEN + ID_LEN + 1 + SECRET_LEN]
    }

    #[test]
    fn issued_keys_have_the_documented_shape() {
        for environment in [Environment::Production, Environment::Sandbox] {
            let issued = issue("demo", environment, "till 2", now());
            let text = &issued.plaintext;
            assert_eq!(text.len(), KEY_LEN);
            assert!(text.starts_with(prefix(environment)));
            assert_eq!(&text[PREFIX_LEN..PREFIX_LEN + ID_LEN], issued.record.id);
            assert_eq!(&text[PREFIX_LEN + ID_LEN..PREFIX_LEN + ID_LEN + 1], "_");
            assert!(text[PREFIX_LEN..]
                .bytes()
                .all(|b| b == b'_' || b.is_ascii_alphanumeric()));
            let record = &issued.record;
            assert_eq!(record.org, "demo");
            assert_eq!(record.environment, environment);
            assert_eq!(record.label, "till 2");
            assert!(record.enabled);
            assert_eq!(record.created_at, now());
            assert_eq!(record.secret_sha256.len(), 64);
            assert_eq!(record.secret_sha256, secret_sha256_hex(secret_of(&issued)));
            assert!(!record.secret_sha256.contains(secret_of(&issued)));
        }
    }

    #[test]
    fn issued_keys_parse_back_and_match() {
        for environment in [Environment::Production, Environment::Sandbox] {
            for _ in 0..50 {
                let issued = issue("demo", environment, "", now());
                let presented = parse(&issued.plaintext).unwrap();
                assert_eq!(presented.environment, environment);
                assert_eq!(presented.id, issued.record.id);
                assert!(presented.matches(&issued.record));
            }
        }
    }

    #[test]
    fn issued_keys_differ() {
        let a = issue("demo", Environment::Production, "", now());
        let b = issue("demo", Environment::Production, "", now());
        assert_ne!(a.plaintext, b.plaintext);
        assert_ne!(a.record.id, b.record.id);
        assert_ne!(a.record.secret_sha256, b.record.secret_sha256);
    }

    /// Fixed vectors, computed independently with Python's `zlib.crc32` and a base62 encoder.
    #[test]
    fn checksum_vectors() {
        let live = "mcf_live_AAAAAAAAAAAA_0123456789abcdefghijABCD";
        assert_eq!(crc32fast::hash(live.as_bytes()), 0xab47_3fa4);
        assert_eq!(checksum(live.as_bytes()), "38TDgC");
        let presented = parse("mcf_live_AAAAAAAAAAAA_0123456789abcdefghijABCD38TDgC").unwrap();
        assert_eq!(presented.environment, Environment::Production);
        assert_eq!(presented.id, "AAAAAAAAAAAA");
        assert_eq!(presented.secret, "0123456789abcdefghijABCD");

        let test = "mcf_test_4Hq0ZbT1xYk9_0123456789abcdefghijABCD";
        assert_eq!(checksum(test.as_bytes()), "36W2UQ");
        let presented = parse("mcf_test_4Hq0ZbT1xYk9_0123456789abcdefghijABCD36W2UQ").unwrap();
        assert_eq!(presented.environment, Environment::Sandbox);
        assert_eq!(presented.id, "4Hq0ZbT1xYk9");
    }

    #[test]
    fn every_single_character_change_fails() {
        let issued = issue("demo", Environment::Production, "", now());
        let original = issued.plaintext.as_bytes().to_vec();
        for position in 0..original.len() {
            for &replacement in BASE62.iter().chain(b"_-. ") {
                if replacement == original[position] {
                    continue;
                }
                let mut changed = original.clone();
                changed[position] = replacement;
                let text = String::from_utf8(changed).unwrap();
                let result = parse(&text);
                assert!(result.is_err(), "accepted a change at {position}");
                if position >= PREFIX_LEN
                    && position != PREFIX_LEN + ID_LEN
                    && replacement.is_ascii_alphanumeric()
                {
                    assert_eq!(result.unwrap_err(), KeyError::BadChecksum);
                }
            }
        }
    }

    #[test]
    fn adjacent_swaps_fail() {
        let issued = issue("demo", Environment::Sandbox, "", now());
        let original = issued.plaintext.as_bytes();
        for position in PREFIX_LEN..original.len() - 1 {
            if original[position] == original[position + 1] {
                continue;
            }
            let mut swapped = original.to_vec();
            swapped.swap(position, position + 1);
            assert!(parse(std::str::from_utf8(&swapped).unwrap()).is_err());
        }
    }

    #[test]
    fn malformed_keys() {
        let good = issue("demo", Environment::Production, "", now()).plaintext;
        let cases = [
            String::new(),
            "mcf_".to_string(),
            good.replacen("mcf_live_", "mcf_prod_", 1),
            good.replacen("mcf_live_", "MCF_LIVE_", 1),
            good[..KEY_LEN - 1].to_string(),
            format!("{good}x"),
            format!(" {good}"),
            format!("{good}\n"),
            // Non-ASCII with the right byte length must not panic.
            format!("{}é{}", &good[..20], &good[22..]),
        ];
        for case in cases {
            assert!(
                matches!(parse(&case), Err(KeyError::Malformed { .. })),
                "{case:?}"
            );
        }
    }

    #[test]
    fn wrong_secret_with_right_id_does_not_match() {
        let issued = issue("demo", Environment::Production, "", now());
        let other = issue("demo", Environment::Production, "", now());
        // The other key's secret under the first key's id, with a valid checksum.
        let signed = format!("{LIVE_PREFIX}{}_{}", issued.record.id, secret_of(&other));
        let forged = format!("{signed}{}", checksum(signed.as_bytes()));
        let presented = parse(&forged).unwrap();
        assert_eq!(presented.id, issued.record.id);
        assert!(!presented.matches(&issued.record));
    }

    #[test]
    fn environment_and_id_must_match() {
        let issued = issue("demo", Environment::Production, "", now());
        let presented = parse(&issued.plaintext).unwrap();

        let mut record = issued.record.clone();
        record.environment = Environment::Sandbox;
        assert!(!presented.matches(&record));

        let mut record = issued.record.clone();
        record.id = "AAAAAAAAAAAA".to_string();
        assert!(!presented.matches(&record));

        // The same secret under the test prefix does not match the live record.
        let signed = format!("{TEST_PREFIX}{}_{}", issued.record.id, secret_of(&issued));
        let test_key = format!("{signed}{}", checksum(signed.as_bytes()));
        assert!(!parse(&test_key).unwrap().matches(&issued.record));
    }

    #[test]
    fn broken_stored_hash_matches_nothing() {
        let issued = issue("demo", Environment::Production, "", now());
        let presented = parse(&issued.plaintext).unwrap();
        for bad in ["", "zz", &issued.record.secret_sha256[..62]] {
            let mut record = issued.record.clone();
            record.secret_sha256 = bad.to_string();
            assert!(!presented.matches(&record));
        }
        // Uppercase hex is still the same hash.
        let mut record = issued.record.clone();
        record.secret_sha256 = record.secret_sha256.to_ascii_uppercase();
        assert!(presented.matches(&record));
    }

    #[test]
    fn nothing_prints_the_secret() {
        let issued = issue("demo", Environment::Production, "", now());
        let secret = secret_of(&issued).to_string();
        let presented = parse(&issued.plaintext).unwrap();
        for text in [
            format!("{issued:?}"),
            format!("{issued:#?}"),
            format!("{presented:?}"),
            format!("{presented:#?}"),
            format!("{presented}"),
        ] {
            assert!(!text.contains(&secret), "{text}");
            assert!(!text.contains(&issued.plaintext), "{text}");
            assert!(text.contains(&issued.record.id), "{text}");
        }
        assert_eq!(
            presented.to_string(),
            format!("mcf_live_{}_<redacted>", issued.record.id)
        );

        // Errors about the key never contain it.
        let mut typo = issued.plaintext.clone().into_bytes();
        typo[30] = if typo[30] == b'a' { b'b' } else { b'a' };
        let typo = String::from_utf8(typo).unwrap();
        let error = parse(&typo).unwrap_err();
        assert_eq!(error, KeyError::BadChecksum);
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(!text.contains(&secret[..8]));
        }
        let error = parse(&issued.plaintext[..40]).unwrap_err();
        assert!(!error.to_string().contains(&issued.plaintext[..40]));
    }

    #[test]
    fn bearer_header() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER    abc"), Some("abc"));
        assert_eq!(bearer("Bearer abc  "), Some("abc"));
        assert_eq!(bearer("Bearer abc\t"), Some("abc"));
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("Bearer    "), None);
        assert_eq!(bearer("Bearerabc"), None);
        assert_eq!(bearer("Bearer\tabc"), None);
        assert_eq!(bearer("Bearer a b"), None);
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer(" Bearer abc"), None);
        assert_eq!(bearer("Bearé abc"), None);
        assert_eq!(bearer(""), None);
        let issued = issue("demo", Environment::Sandbox, "", now());
        let header = format!("Bearer {}", issued.plaintext);
        let presented = parse(bearer(&header).unwrap()).unwrap();
        assert!(presented.matches(&issued.record));
    }

    proptest! {
        #[test]
        fn parse_never_panics(text in ".{0,80}") {
            let _ = parse(&text);
            let _ = bearer(&text);
        }

        #[test]
        fn parse_never_panics_on_near_keys(
            live in any::<bool>(),
            rest in "[0-9A-Za-z_é]{40,46}",
        ) {
            let text = format!("{}{rest}", if live { LIVE_PREFIX } else { TEST_PREFIX });
            let _ = parse(&text);
        }

        #[test]
        fn random_bodies_with_valid_checksum_parse(
            id in "[0-9A-Za-z]{12}",
            secret in "[0-9A-Za-z]{24}",
        ) {
            let signed = format!("{LIVE_PREFIX}{id}_{secret}");
            let key = format!("{signed}{}", checksum(signed.as_bytes()));
            let presented = parse(&key).unwrap();
            prop_assert_eq!(presented.id, id);
            prop_assert_eq!(presented.secret, secret);
        }
    }
}
