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
