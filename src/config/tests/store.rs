//! `[store]`: without `url` nothing changes (older files too); with it, what
//! `Config::store_settings` gives the PostgreSQL store, and every refusal naming its key.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{invalid, parse, vars, DOC};
use crate::config::*;
use crate::i18n::{nbsp, Localized};
use crate::store::postgres::{PgSettings, PgTls};

/// A validated configuration from `text` (panics if refused).
fn valid(text: &str) -> Config {
    let config = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    config.validate().unwrap_or_else(|e| panic!("{e}\n{text}"));
    config
}

/// The key and English problem of `text`'s refusal by `validate`.
fn refused(text: &str) -> (String, String) {
    invalid(&parse(text).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

/// A password file in `dir` holding `content`, with `mode`.
fn password_file(dir: &Path, content: &str, mode: u32) -> PathBuf {
    let path = dir.join("pg.password");
    std::fs::write(&path, content).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn with_password_file(path: &Path) -> String {
    format!(
        "[store]\nurl = \"postgresql://emcf@db.example.cd:5432/emcf\"\npassword_file = {:?}\n",
        path.display().to_string()
    )
}

#[test]
fn without_a_url_the_embedded_store_as_before_for_every_release_s_file() {
    for text in [
        "",
        include_str!("../../../tests/fixtures/release-1.0.0/config.toml"),
        include_str!("../../../tests/fixtures/release-1.7.0/config.toml"),
    ] {
        let text = text
            .replace("@STATE@", "/var/lib/emcf-gateway")
            .replace("@BACKUP_DIR@", "/var/backups/emcf-gateway")
            .replace("@SMTP_PORT@", "2525");
        let config = valid(&text);
        assert!(config.store.is_default());
        assert_eq!(config.store_settings().unwrap(), None);
        assert!(!config.to_toml_string().unwrap().contains("[store]"));
    }
}

#[test]
fn a_tcp_url_with_a_password_file_gives_the_store_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    // One trailing newline is the editor's, not the password's; spaces are the password's.
    let file = password_file(dir.path(), " s3cret pg \n\n", 0o600);
    let config = valid(&with_password_file(&file));
    let settings = config.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(
        settings,
        PgSettings {
            url: "postgresql://emcf@db.example.cd:5432/emcf".into(),
            password: Some(" s3cret pg \n".into()),
            tls: PgTls::Require,
            pool_size: DEFAULT_STORE_POOL_SIZE,
        }
    );
    std::fs::write(&file, "s3cret\r\n").unwrap();
    let settings = config.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.password.as_deref(), Some("s3cret"));
    for shown in [format!("{config:?}"), config.to_toml_string().unwrap()] {
        assert!(!shown.contains("s3cret"), "{shown}");
    }
    // Read-only for its owner is as good.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400)).unwrap();
    assert!(config.store_settings().unwrap().is_some());
    // A backup copies the password file with the configuration.
    assert_eq!(config.named_files(), [file]);
}

#[test]
fn a_socket_folder_needs_no_tls_and_verify_full_takes_the_ca_file() {
    let socket =
        valid("[store]\nurl = \"postgresql://emcf@/emcf?host=/run/postgresql\"\npool_size = 3\n");
    let settings = socket.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.tls, PgTls::Disable);
    assert_eq!(settings.password, None);
    assert_eq!(settings.pool_size, 3);
    // The socket's folder in the host part, percent-encoded as libpq allows.
    let encoded = valid("[store]\nurl = \"postgresql://emcf@%2Frun%2Fpostgresql/emcf\"\n");
    let settings = encoded.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.tls, PgTls::Disable);
    let verified = valid(
        "[store]\nurl = \"postgres://emcf@[2001:db8::1]:5433/emcf\"\nsslmode = \"verify-full\"\nca_file = \"/etc/emcf-gateway/pg-ca.pem\"\n",
    );
    let settings = verified.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(
        settings.tls,
        PgTls::VerifyFull {
            ca_file: "/etc/emcf-gateway/pg-ca.pem".into()
        }
    );
    let plain =
        valid("[store]\nurl = \"postgresql://emcf@10.0.0.5/emcf\"\nsslmode = \"disable\"\n");
    let settings = plain.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.tls, PgTls::Disable);
}

#[test]
fn a_password_in_the_url_is_refused_without_being_repeated() {
    for url in [
        "postgresql://emcf:s3cret@db.example.cd/emcf",
        "postgresql://emcf@db.example.cd/emcf?password=s3cret",
    ] {
        let config = parse(&format!("[store]\nurl = \"{url}\"\n")).unwrap();
        let error = config.validate().expect_err(url);
        let (key, problem) = invalid(&config);
        assert_eq!(key, "store.url");
        assert!(problem.contains("password_file"), "{problem}");
        let fr = error.message().render(crate::i18n::Lang::Fr);
        assert!(
            fr.contains(&nbsp(
                "store.url contient un mot de passe : retirez-le de l'URL"
            )),
            "{fr}"
        );
        for shown in [fr, error.to_string(), format!("{config:?}")] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
    }
    // Nor is it repeated by the TOML reader's refusal of its line.
    let error = parse("[store]\nurl = \"postgresql://emcf:s3cret@db/emcf\" x\n").unwrap_err();
    let shown = format!("{error} {}", error.message().render(crate::i18n::Lang::Fr));
    assert!(
        !shown.contains("s3cret") && shown.contains("emcf:***@db"),
        "{shown}"
    );
}

#[test]
fn every_url_mistake_names_store_url_and_what_to_write() {
    for (url, expected) in [
        ("mysql://emcf@db/emcf", "must start with \"postgresql://\""),
        ("db.example.cd:5432/emcf", "must start with"),
        (
            "postgresql://db.example.cd/emcf",
            "must name the PostgreSQL user",
        ),
        ("postgresql://emcf@/emcf", "must name the server"),
        (
            "postgresql://emcf@db.example.cd:5432",
            "must name the database",
        ),
        ("postgresql://emcf@db.example.cd/", "must name the database"),
        (
            "postgresql://emcf@db/emcf?sslmode=disable",
            "must not give sslmode: write it as the key sslmode",
        ),
        (
            "postgresql://emcf@db/emcf?sslrootcert=/ca.pem",
            "must not give sslrootcert: write it as the key ca_file",
        ),
    ] {
        let (key, problem) = refused(&format!("[store]\nurl = \"{url}\"\n"));
        assert_eq!(key, "store.url", "{url}");
        assert!(problem.contains(expected), "{url}: {problem}");
    }
    // What libpq takes in the query instead of the URL's parts is taken too.
    valid("[store]\nurl = \"postgresql:///emcf?host=/run/postgresql&user=emcf\"\n");
    valid("[store]\nurl = \"postgresql://emcf@db?dbname=emcf&application_name=gw\"\n");
}

#[test]
fn tls_keys_must_agree_with_each_other_and_with_the_url() {
    let tcp = "[store]\nurl = \"postgresql://emcf@db.example.cd/emcf\"\n";
    let socket = "[store]\nurl = \"postgresql://emcf@/emcf?host=/run/postgresql\"\n";
    for (text, key, expected) in [
        (
            format!("{tcp}sslmode = \"verify-full\"\n"),
            "store.ca_file",
            "is missing: with sslmode = \"verify-full\"",
        ),
        (
            format!("{tcp}ca_file = \"/etc/ca.pem\"\n"),
            "store.ca_file",
            "only used with sslmode = \"verify-full\" (here \"require\")",
        ),
        (
            format!("{socket}sslmode = \"require\"\n"),
            "store.sslmode",
            "Unix socket",
        ),
        (
            format!("{tcp}password_file = \"\"\n"),
            "store.password_file",
            "is empty",
        ),
        (
            format!("{tcp}pool_size = 0\n"),
            "store.pool_size",
            "between 1 and 100",
        ),
        (
            format!("{tcp}pool_size = 101\n"),
            "store.pool_size",
            "between 1 and 100",
        ),
        (
            "[store]\npool_size = 4\n".to_owned(),
            "store.url",
            "is missing while the [store] table has other keys",
        ),
    ] {
        let (got, problem) = refused(&text);
        assert_eq!(got, key, "{text}");
        assert!(problem.contains(expected), "{text}: {problem}");
    }
    // A mode libpq has but the gateway does not is refused by name, with the allowed ones.
    let error = parse(&format!("{tcp}sslmode = \"prefer\"\n")).unwrap_err();
    let fr = error.message().render(crate::i18n::Lang::Fr);
    assert!(
        fr.contains("prefer") && fr.contains("disable, require, verify-full"),
        "{fr}"
    );
    let error = parse(&format!("{tcp}passwordfile = \"/x\"\n")).unwrap_err();
    let fr = error.message().render(crate::i18n::Lang::Fr);
    assert!(
        fr.contains("passwordfile") && fr.contains("password_file"),
        "{fr}"
    );
}

#[test]
fn the_password_file_must_be_the_service_s_alone_and_hold_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let file = password_file(dir.path(), "s3cret\n", 0o640);
    let config = valid(&with_password_file(&file));
    let owner = std::fs::metadata(&file).unwrap().uid();
    let said = |config: &Config, owner: u32| {
        let error = config.store_settings_owned_by(owner).unwrap_err();
        let fr = error.message().render(crate::i18n::Lang::Fr);
        assert!(!fr.contains("s3cret"), "{fr}");
        assert!(fr.contains("store.password_file"), "{fr}");
        error.to_string()
    };
    assert!(said(&config, owner).contains("has mode 0640"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(config.store_settings_owned_by(owner).is_ok());
    let other = owner.wrapping_add(1);
    let problem = said(&config, other);
    assert!(
        problem.contains(&format!("belongs to user number {owner}"))
            && problem.contains(&format!("chown {other} ")),
        "{problem}"
    );
    for (content, expected) in [("\n", "is empty"), ("", "is empty")] {
        std::fs::write(&file, content).unwrap();
        assert!(said(&config, owner).contains(expected), "{content:?}");
    }
    std::fs::write(&file, [0xff, 0xfe, b'\n']).unwrap();
    assert!(said(&config, owner).contains("is not a password"));
    std::fs::write(&file, "x".repeat(5000)).unwrap();
    assert!(said(&config, owner).contains("is not a password"));
    std::fs::remove_file(&file).unwrap();
    assert!(said(&config, owner).contains("cannot be read"));
    let folder = valid(&with_password_file(dir.path()));
    assert!(said(&folder, owner).contains("is not a file"));
}

#[test]
fn emcf_store_url_replaces_the_file_s_url_and_is_refused_by_its_name() {
    let mut config = parse(
        "[store]\nurl = \"postgresql://emcf@old/emcf\"\nsslmode = \"disable\"\npool_size = 2\n",
    )
    .unwrap();
    config
        .apply_env(vars(&[(ENV_STORE_URL, "postgresql://emcf@new:6432/emcf")]))
        .unwrap();
    config.validate().unwrap();
    let settings = config.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.url, "postgresql://emcf@new:6432/emcf");
    assert_eq!(settings.pool_size, 2);
    // The variable alone is enough; empty, it is not set.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("config.toml");
    std::fs::write(&empty, "").unwrap();
    let resolved = Config::resolve(
        Some(&empty),
        vars(&[(
            ENV_STORE_URL,
            "postgresql://emcf@/emcf?host=/run/postgresql",
        )]),
        &Overrides::default(),
    )
    .unwrap();
    assert!(resolved.store_settings().unwrap().is_some());
    let mut unset = Config::default();
    unset.apply_env(vars(&[(ENV_STORE_URL, "")])).unwrap();
    assert_eq!(unset.store_settings().unwrap(), None);
    let error = Config::default()
        .apply_env(vars(&[(ENV_STORE_URL, "postgresql://emcf:s3cret@db/emcf")]))
        .unwrap_err();
    assert!(matches!(&error, ConfigError::Env { var, .. } if var == ENV_STORE_URL));
    let fr = error.message().render(crate::i18n::Lang::Fr);
    assert!(
        fr.contains("EMCF_STORE_URL") && fr.contains("emcf:***@db") && !fr.contains("s3cret"),
        "{fr}"
    );
}

#[test]
fn emcf_store_password_file_gives_another_role_s_password_for_one_command() {
    // `store migrate` as the database's owner: the URL and the password file of that role,
    // the service's own staying in the file.
    let dir = tempfile::tempdir().unwrap();
    let (service, owner) = (
        dir.path().join("pg.password"),
        dir.path().join("owner.password"),
    );
    for (path, text) in [(&service, "service-secret\n"), (&owner, "owner-secret\n")] {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let file = dir.path().join("config.toml");
    std::fs::write(
        &file,
        format!(
            "[store]\nurl = \"postgresql://emcf@/emcf?host=/run/postgresql\"\npassword_file = {:?}\n",
            service
        ),
    )
    .unwrap();
    let as_owner = Config::resolve(
        Some(&file),
        vars(&[
            (
                ENV_STORE_URL,
                "postgresql://emcf_owner@/emcf?host=/run/postgresql",
            ),
            (ENV_STORE_PASSWORD_FILE, owner.to_str().unwrap()),
        ]),
        &Overrides::default(),
    )
    .unwrap();
    let settings = as_owner.store_settings().unwrap().expect("PostgreSQL");
    assert!(settings.url.starts_with("postgresql://emcf_owner@"));
    assert_eq!(settings.password.as_deref(), Some("owner-secret"));
    let as_service = Config::resolve(Some(&file), vars(&[]), &Overrides::default()).unwrap();
    let settings = as_service.store_settings().unwrap().expect("PostgreSQL");
    assert_eq!(settings.password.as_deref(), Some("service-secret"));
}

#[test]
fn the_documentation_says_the_keys_defaults_and_variable() {
    for line in [
        "## `[store]`: the register on PostgreSQL".to_owned(),
        format!("| `pool_size` | integer | `{DEFAULT_STORE_POOL_SIZE}` |"),
        "| `sslmode` | `\"disable\"`, `\"require\"` or `\"verify-full\"` |".to_owned(),
        format!("| `{ENV_STORE_URL}` | Replaces `store.url`"),
        format!("| `{ENV_STORE_PASSWORD_FILE}` | Replaces `store.password_file`"),
    ] {
        assert!(DOC.contains(&line), "docs/configuration.md lacks: {line}");
    }
}

#[test]
fn the_secret_key_file_gives_its_keys_and_is_refused_when_others_can_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    let path = dir.path().join("secret.keys");
    std::fs::write(&path, format!("# the key that seals comes first\n{key}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let text = format!(
        "[store]\nurl = \"postgresql://emcf@db.example.cd:5432/emcf\"\nsecret_key_file = {:?}\n",
        path.display().to_string()
    );
    let config = valid(&text);
    let keyring = config.store_keyring().unwrap().expect("a keyring");
    assert_eq!(keyring.ids(), vec!["k630dcd2966c43366"]);
    for shown in [format!("{config:?}"), format!("{keyring:?}")] {
        assert!(!shown.contains(key), "{shown}");
    }
    // Readable by others: refused, naming the key and the file, never a key.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = config.store_keyring().unwrap_err().to_string();
    assert!(
        refused.contains("store.secret_key_file") && refused.contains("0644"),
        "{refused}"
    );
    assert!(!refused.contains(key), "{refused}");
    // A line that is not a key: its number said.
    std::fs::write(&path, format!("{key}\nnot-a-key\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let refused = config.store_keyring().unwrap_err().to_string();
    assert!(refused.contains("2"), "{refused}");
    assert!(!refused.contains(key), "{refused}");
    // Unset: no keyring.
    let unset = valid("[store]\nurl = \"postgresql://emcf@db.example.cd:5432/emcf\"\n");
    assert!(unset.store_keyring().unwrap().is_none());
}
