//! Secrets kept sealed in the store: a web API e-MCF's token is written to the database only
//! encrypted (AES-256-GCM), under a key the store never holds (`[store] secret_key_file`), so
//! that a copy of the database, a backup or a `pg_dump` does not give the DGI's tokens away.
//!
//! * The key: 32 random bytes, written in its file as 64 hexadecimal characters. Its id (`k`
//!   and the first 16 hex of its SHA-256) is stored beside each sealed secret, so that a
//!   secret sealed under another key is named as such, never decrypted into garbage, and a
//!   rotation can tell what it still has to re-seal.
//! * Each secret gets a random 96-bit nonce (never reused: 2^-32 collision risk only after
//!   about 2^32 seals under one key, far beyond the tokens of a service).
//! * The secret is bound to what it belongs to (`context`, e.g. the device's name) as
//!   associated data: a sealed token copied onto another device's row does not open.
//!
//! Text form, one column: `v1:<key id>:<nonce hex>:<ciphertext and tag hex>`.

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

/// Bytes of a key.
pub const KEY_BYTES: usize = 32;

/// The version tag of the text form.
const VERSION: &str = "v1";

/// What binds a sealed secret to this product and to its context.
const AAD_PREFIX: &[u8] = b"emcf-gateway sealed secret v1\0";

/// Why a key or a sealed secret could not be used. Never holds the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The key's text is not 64 hexadecimal characters.
    #[error("the key is not 64 hexadecimal characters (32 bytes)")]
    BadKey,
    /// Sealed under another key than the one configured.
    #[error("sealed under key {sealed_with}, the configured key is {configured}")]
    OtherKey {
        /// The id of the key it was sealed with.
        sealed_with: String,
        /// The id of the configured key.
        configured: String,
    },
    /// Not the text form of a sealed secret.
    #[error("not a sealed secret ({0})")]
    Malformed(&'static str),
    /// The key is right but the ciphertext, its tag or its context do not match: changed or
    /// copied from elsewhere.
    #[error("the sealed secret does not open: altered, or sealed for something else")]
    Tampered,
    /// The system's random source failed.
    #[error("no random bytes for a nonce")]
    Random,
}

/// The key secrets are sealed with. Its bytes never leave it (`Debug` shows its id).
pub struct SealingKey {
    key: LessSafeKey,
    id: String,
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealingKey").field("id", &self.id).finish()
    }
}

impl SealingKey {
    /// The key written in a key file: 64 hex characters, one trailing newline allowed.
    pub fn from_text(text: &str) -> Result<SealingKey, SealError> {
        let text = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(text);
        if text.len() != 2 * KEY_BYTES {
            return Err(SealError::BadKey);
        }
        let bytes = hex::decode(text).map_err(|_| SealError::BadKey)?;
        SealingKey::from_bytes(&bytes)
    }

    /// The key of 32 bytes `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<SealingKey, SealError> {
        let unbound = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| SealError::BadKey)?;
        let digest = Sha256::digest(bytes);
        Ok(SealingKey {
            key: LessSafeKey::new(unbound),
            id: format!("k{}", hex::encode(&digest[..8])),
        })
    }

    /// A new random key, as its file holds it (64 hex characters and a newline).
    pub fn generate_text() -> Result<String, SealError> {
        let mut bytes = [0u8; KEY_BYTES];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| SealError::Random)?;
        Ok(format!("{}\n", hex::encode(bytes)))
    }

    /// The key's id, stored beside what it seals (not secret).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `secret` sealed for `context`, in the text form.
    pub fn seal(&self, context: &str, secret: &[u8]) -> Result<String, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| SealError::Random)?;
        let mut sealed = secret.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad(context)),
                &mut sealed,
            )
            .map_err(|_| SealError::Malformed("too long"))?;
        Ok(format!(
            "{VERSION}:{}:{}:{}",
            self.id,
            hex::encode(nonce),
            hex::encode(sealed)
        ))
    }

    /// The secret `text` seals for `context`.
    pub fn open(&self, context: &str, text: &str) -> Result<Vec<u8>, SealError> {
        let sealed = Sealed::parse(text)?;
        if sealed.key_id != self.id {
            return Err(SealError::OtherKey {
                sealed_with: sealed.key_id.to_owned(),
                configured: self.id.clone(),
            });
        }
        let mut bytes = sealed.ciphertext;
        let opened = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(sealed.nonce),
                Aad::from(aad(context)),
                &mut bytes,
            )
            .map_err(|_| SealError::Tampered)?;
        Ok(opened.to_vec())
    }
}

/// The keys of `[store] secret_key_file`, one per line: the **first** seals, any opens (the
/// key id stored with each sealed value says which), so that a key is rotated without a
/// moment when a replica cannot open what another sealed (docs/postgresql.md, "Rotating the
/// secret key"). `Debug` shows the keys' ids only.
pub struct Keyring {
    keys: Vec<SealingKey>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(SealingKey::id))
            .finish()
    }
}

/// Why a key file cannot be used. Never holds a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFileError {
    /// A line is not a key of 64 hexadecimal characters.
    #[error("line {0} is not a key of 64 hexadecimal characters (32 bytes)")]
    BadLine(usize),
    /// A key is written twice.
    #[error("line {0} repeats a key of an earlier line")]
    Repeated(usize),
    /// No key at all.
    #[error("the file holds no key")]
    Empty,
}

impl Keyring {
    /// The keys of a key file's text: one per line, blank lines and lines starting with `#`
    /// left out, the first the one that seals.
    pub fn from_text(text: &str) -> Result<Keyring, KeyFileError> {
        let mut keys: Vec<SealingKey> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let key = SealingKey::from_text(line).map_err(|_| KeyFileError::BadLine(index + 1))?;
            if keys.iter().any(|known| known.id == key.id) {
                return Err(KeyFileError::Repeated(index + 1));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err(KeyFileError::Empty);
        }
        Ok(Keyring { keys })
    }

    /// The key that seals: the file's first.
    pub fn sealing(&self) -> &SealingKey {
        &self.keys[0]
    }

    /// The ids of the keys, the sealing one first.
    pub fn ids(&self) -> Vec<&str> {
        self.keys.iter().map(SealingKey::id).collect()
    }

    /// `secret` sealed for `context` with the first key.
    pub fn seal(&self, context: &str, secret: &[u8]) -> Result<String, SealError> {
        self.sealing().seal(context, secret)
    }

    /// The secret `text` seals for `context`, opened with the key it names.
    pub fn open(&self, context: &str, text: &str) -> Result<Vec<u8>, SealError> {
        let sealed_with = sealed_with(text)?;
        match self.keys.iter().find(|key| key.id == sealed_with) {
            Some(key) => key.open(context, text),
            None => Err(SealError::OtherKey {
                sealed_with,
                configured: self.ids().join(", "),
            }),
        }
    }

    /// `text` sealed again with the first key, or `None` when the first key sealed it already.
    pub fn reseal(&self, context: &str, text: &str) -> Result<Option<String>, SealError> {
        if sealed_with(text)? == self.sealing().id {
            return Ok(None);
        }
        let secret = self.open(context, text)?;
        self.seal(context, &secret).map(Some)
    }
}

/// The id of the key `text` was sealed with (what a rotation still has to re-seal).
pub fn sealed_with(text: &str) -> Result<String, SealError> {
    Sealed::parse(text).map(|sealed| sealed.key_id.to_owned())
}

fn aad(context: &str) -> Vec<u8> {
    let mut aad = AAD_PREFIX.to_vec();
    aad.extend_from_slice(context.as_bytes());
    aad
}

/// The parts of the text form.
struct Sealed<'a> {
    key_id: &'a str,
    nonce: [u8; NONCE_LEN],
    ciphertext: Vec<u8>,
}

impl<'a> Sealed<'a> {
    fn parse(text: &'a str) -> Result<Sealed<'a>, SealError> {
        let mut parts = text.split(':');
        let (Some(version), Some(key_id), Some(nonce), Some(ciphertext), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(SealError::Malformed("not four parts"));
        };
        if version != VERSION {
            return Err(SealError::Malformed("unknown version"));
        }
        let nonce = hex::decode(nonce).map_err(|_| SealError::Malformed("nonce not hex"))?;
        let nonce: [u8; NONCE_LEN] = nonce
            .try_into()
            .map_err(|_| SealError::Malformed("nonce not 12 bytes"))?;
        let ciphertext =
            hex::decode(ciphertext).map_err(|_| SealError::Malformed("ciphertext not hex"))?;
        if ciphertext.len() < AES_256_GCM.tag_len() {
            return Err(SealError::Malformed("shorter than its tag"));
        }
        Ok(Sealed {
            key_id,
            nonce,
            ciphertext,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";

    fn key() -> SealingKey {
        SealingKey::from_text(KEY).expect("key")
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_context() {
        let key = key();
        let sealed = key.seal("shop-a", b"token-123").expect("seal");
        assert!(!sealed.contains("token-123"));
        assert_eq!(key.open("shop-a", &sealed).expect("open"), b"token-123");
        assert_eq!(key.open("shop-b", &sealed), Err(SealError::Tampered));
        let other = SealingKey::from_text(&SealingKey::generate_text().expect("random"))
            .expect("other key");
        assert!(matches!(
            other.open("shop-a", &sealed),
            Err(SealError::OtherKey { .. })
        ));
        assert_eq!(sealed_with(&sealed).expect("id"), key.id());
    }

    #[test]
    fn two_seals_of_one_secret_differ() {
        let key = key();
        let (a, b) = (
            key.seal("d", b"t").expect("a"),
            key.seal("d", b"t").expect("b"),
        );
        assert_ne!(a, b, "a fresh nonce each time");
    }

    #[test]
    fn a_changed_byte_does_not_open() {
        let key = key();
        let sealed = key.seal("d", b"secret").expect("seal");
        let mut bytes = sealed.into_bytes();
        let last = bytes.len() - 1;
        bytes[last] = if bytes[last] == b'0' { b'1' } else { b'0' };
        let altered = String::from_utf8(bytes).expect("ascii");
        assert_eq!(key.open("d", &altered), Err(SealError::Tampered));
    }

    #[test]
    fn keys_and_texts_that_are_not_ours_are_refused() {
        assert_eq!(
            SealingKey::from_text("abc").map(|_| ()),
            Err(SealError::BadKey)
        );
        let not_hex = "zz".repeat(32);
        assert_eq!(
            SealingKey::from_text(&not_hex).map(|_| ()),
            Err(SealError::BadKey)
        );
        let key = key();
        for text in [
            "",
            "v1:k:00",
            "v2:k:00:00",
            "v1:k:0011:00",
            "v1:k:000000000000000000000000:00",
        ] {
            assert!(
                matches!(key.open("d", text), Err(SealError::Malformed(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn the_key_never_shows_in_debug() {
        let shown = format!("{:?}", key());
        assert!(!shown.contains("0001020304"), "{shown}");
        assert!(shown.contains(key().id()));
    }

    #[test]
    fn a_known_key_has_a_known_id() {
        // SHA-256 of bytes 0..32, first 8 bytes: the id must not change between releases.
        assert_eq!(key().id(), "k630dcd2966c43366");
    }

    #[test]
    fn a_key_file_holds_keys_one_a_line_the_first_sealing() {
        let new = SealingKey::generate_text().expect("random");
        let text = format!("# new key first\n{new}\n{KEY}");
        let ring = Keyring::from_text(&text).expect("two keys");
        assert_eq!(ring.ids().len(), 2);
        assert_eq!(ring.ids()[1], key().id());
        let shown = format!("{ring:?}");
        assert!(
            !shown.contains(new.trim()) && !shown.contains("0001020304"),
            "{shown}"
        );
        // What the old key sealed opens, and is sealed again with the new one.
        let old = key().seal("shop", b"tok").expect("seal");
        assert_eq!(ring.open("shop", &old).expect("open"), b"tok");
        let resealed = ring.reseal("shop", &old).expect("reseal").expect("changed");
        assert_eq!(sealed_with(&resealed).expect("id"), ring.sealing().id());
        assert_eq!(ring.reseal("shop", &resealed).expect("again"), None);
        // Without the old key, what it sealed is named, not opened.
        let only_new = Keyring::from_text(&new).expect("one key");
        assert!(matches!(
            only_new.open("shop", &old),
            Err(SealError::OtherKey { .. })
        ));
        assert_eq!(only_new.open("shop", &resealed).expect("open"), b"tok");
    }

    #[test]
    fn a_key_file_that_is_not_keys_is_refused_by_its_line() {
        assert_eq!(Keyring::from_text("").map(|_| ()), Err(KeyFileError::Empty));
        assert_eq!(
            Keyring::from_text("# only\n\n").map(|_| ()),
            Err(KeyFileError::Empty)
        );
        let text = format!("{KEY}not a key\n");
        assert_eq!(
            Keyring::from_text(&text).map(|_| ()),
            Err(KeyFileError::BadLine(2))
        );
        let text = format!("{KEY}{KEY}");
        assert_eq!(
            Keyring::from_text(&text).map(|_| ()),
            Err(KeyFileError::Repeated(2))
        );
        let error = Keyring::from_text(&format!("{KEY}zz")).expect_err("bad");
        assert!(!error.to_string().contains("000102"), "{error}");
        // Windows line ends and spaces around a key are read.
        let text = format!("  {}  \r\n", KEY.trim());
        assert_eq!(
            Keyring::from_text(&text).expect("key").ids(),
            vec![key().id()]
        );
    }

    proptest! {
        #[test]
        fn any_secret_round_trips(secret in proptest::collection::vec(any::<u8>(), 0..512),
                                  context in "[a-z0-9-]{0,40}") {
            let key = key();
            let sealed = key.seal(&context, &secret).expect("seal");
            prop_assert_eq!(key.open(&context, &sealed).expect("open"), secret);
        }
    }
}
