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
mod tests;
