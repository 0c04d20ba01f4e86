//! Dashboard sign-in tokens: issued by the CLI (`dashboard-token issue --org ID`) for an
//! organization's admin, typed once into the dashboard's sign-in form.
//!
//! # Format
//!
//! `mcf_dash_` + id (12 base62) + `_` + secret (32 base62, from the OS random source:
//! 32 × log2(62) ≈ 190 bits), 54 ASCII characters. Only the SHA-256 of the secret (lowercase
//! hex) is stored, in the journal's `dashboard_token_issued` event; the presented secret's
//! hash is compared with it in constant time. The plaintext exists once, in
//! [`IssuedToken::plaintext`]; no `Debug` here prints a secret.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::answers::PublicToken;
use crate::keys::{random_base62, secret_sha256_hex};
use crate::store::DashboardToken;

/// Prefix of every dashboard token.
pub const PREFIX: &str = "mcf_dash_";
/// Length of the public id.
pub const ID_LEN: usize = 12;
/// Length of the secret.
pub const SECRET_LEN: usize = 32;
/// Length of a whole token.
pub const TOKEN_LEN: usize = PREFIX.len() + ID_LEN + 1 + SECRET_LEN;

/// A newly issued token: the plaintext to show once, and the record to store. The admin
/// socket's answer to `dashboard-token issue` is its JSON (`{"token", "record"}`, the record
/// as [`PublicToken`]: never the hash), read by the CLI.
#[derive(Clone, Serialize)]
pub struct IssuedToken {
    /// The whole token. Show it once; never store or log it.
    #[serde(rename = "token")]
    pub plaintext: String,
    /// What to store (the secret's hash only).
    #[serde(serialize_with = "as_shown")]
    pub record: DashboardToken,
}

/// The record as an answer shows it.
fn as_shown<S: Serializer>(record: &DashboardToken, serializer: S) -> Result<S::Ok, S::Error> {
    PublicToken::from(record).serialize(serializer)
}

impl fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedToken")
            .field(
                "plaintext",
                &format_args!("{PREFIX}{}_<redacted>", self.record.id),
            )
            .field("record", &self.record)
            .finish()
    }
}

/// Issues a token for `org`.
pub fn issue(org: &str, label: &str, now: DateTime<Utc>) -> IssuedToken {
    let id = random_base62(ID_LEN);
    let secret = random_base62(SECRET_LEN);
    IssuedToken {
        plaintext: format!("{PREFIX}{id}_{secret}"),
        record: DashboardToken {
            id,
            org: org.to_string(),
            token_sha256: secret_sha256_hex(&secret),
            label: label.to_string(),
            created_at: now,
            revoked: false,
        },
    }
}

/// A presented token split into id and secret (shape checked, not yet the record).
pub struct PresentedToken {
    /// Public id.
    pub id: String,
    secret: String,
}

impl fmt::Debug for PresentedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PresentedToken")
            .field("id", &self.id)
            .field("secret", &format_args!("<redacted>"))
            .finish()
    }
}

impl PresentedToken {
    /// Whether the secret's SHA-256 equals `record.token_sha256` (constant time) and the ids
    /// agree. Does not look at `revoked`.
    pub fn matches(&self, record: &DashboardToken) -> bool {
        let digest = Sha256::digest(self.secret.as_bytes());
        let mut stored = [0u8; 32];
        let stored_ok = hex::decode_to_slice(record.token_sha256.as_bytes(), &mut stored).is_ok();
        let secret_ok: bool = digest.as_slice().ct_eq(&stored).into();
        secret_ok & stored_ok & (self.id == record.id)
    }
}

/// Checks the shape of `text` (surrounding white space ignored); `None` if it cannot be a
/// token. Never panics.
pub fn parse(text: &str) -> Option<PresentedToken> {
    let text = text.trim();
    let rest = text.strip_prefix(PREFIX)?;
    if text.len() != TOKEN_LEN || !rest.is_ascii() {
        return None;
    }
    let (id, secret) = (&rest[..ID_LEN], &rest[ID_LEN + 1..]);
    let base62 = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric());
    if rest.as_bytes()[ID_LEN] != b'_' || !base62(id) || !base62(secret) {
        return None;
    }
    Some(PresentedToken {
        id: id.to_string(),
        secret: secret.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_token_parses_and_matches_its_record_only() {
        let issued = issue("demo", "owner", Utc::now());
        assert_eq!(issued.plaintext.len(), TOKEN_LEN);
        assert!(issued.plaintext.starts_with(PREFIX));
        let presented = parse(&format!(" {}\n", issued.plaintext)).expect("parses");
        assert_eq!(presented.id, issued.record.id);
        assert!(presented.matches(&issued.record));
        let other = issue("demo", "owner", Utc::now());
        assert!(!presented.matches(&other.record));
        let mut same_id = other.record.clone();
        same_id.id = issued.record.id.clone();
        assert!(!presented.matches(&same_id), "another secret");
        let mut bad_hash = issued.record.clone();
        bad_hash.token_sha256 = "zz".into();
        assert!(!presented.matches(&bad_hash));
    }

    #[test]
    fn the_answer_shows_the_token_once_and_never_its_hash() {
        let issued = issue("demo", "owner", Utc::now());
        let answer = serde_json::to_value(&issued).expect("serializes");
        assert_eq!(answer["token"], issued.plaintext.as_str());
        assert_eq!(answer["record"]["id"], issued.record.id.as_str());
        assert_eq!(answer["record"]["org"], "demo");
        assert!(answer["record"].get("token_sha256").is_none());
        assert!(!answer.to_string().contains(&issued.record.token_sha256));
    }

    #[test]
    fn malformed_tokens_are_refused_and_nothing_prints_a_secret() {
        let issued = issue("demo", "", Utc::now());
        let text = &issued.plaintext;
        for bad in [
            "",
            "mcf_dash_",
            &text[..text.len() - 1],
            &format!("{text}x"),
            &text.replace("mcf_dash_", "mcf_live_"),
            &format!("{}-{}", &text[..21], &text[22..]),
            &format!("{}é{}", &text[..30], &text[32..]),
        ] {
            assert!(parse(bad).is_none(), "{bad:?}");
        }
        let secret = &text[22..];
        assert!(!format!("{issued:?}").contains(secret));
        assert!(!format!("{:?}", parse(text).unwrap()).contains(secret));
    }
}
