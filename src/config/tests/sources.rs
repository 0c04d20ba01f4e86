//! Where the configuration comes from: the file (which one), the environment variables, the
//! flags, in that order, and `Config::resolve` running every step.

use super::{parse, vars};
use crate::config::*;
use std::path::{Path, PathBuf};

#[test]
fn environment_overrides_the_file() {
    let mut config = parse("state_dir = \"/from/file\"\nlisten = \"0.0.0.0:1\"\n").unwrap();
    config
        .apply_env(vars(&[
            ("EMCF_STATE_DIR", "/from/env"),
            ("EMCF_LISTEN", "[::]:8443"),
            ("STATE_DIRECTORY", "/var/lib/systemd-said"),
            ("PATH", "/usr/bin"),
            ("EMCF_CONFIG", "/ignored/here.toml"),
        ]))
        .unwrap();
    assert_eq!(config.resolved_state_dir(), Path::new("/from/env"));
    assert_eq!(config.listen, "[::]:8443".parse().unwrap());
}

#[test]
fn systemd_state_directory_is_only_a_default() {
    // Not set anywhere else: systemd's directory (first entry).
    let mut config = Config::default();
    config
        .apply_env(vars(&[(
            "STATE_DIRECTORY",
            "/var/lib/emcf-gateway:/var/lib/other",
        )]))
        .unwrap();
    assert_eq!(
        config.resolved_state_dir(),
        Path::new("/var/lib/emcf-gateway")
    );

    // The file wins over systemd's.
    let mut config = parse("state_dir = \"/data/emcf\"").unwrap();
    config
        .apply_env(vars(&[("STATE_DIRECTORY", "/var/lib/emcf-gateway")]))
        .unwrap();
    assert_eq!(config.resolved_state_dir(), Path::new("/data/emcf"));

    // EMCF_STATE_DIR wins over both, whatever the order of the variables.
    let mut config = Config::default();
    config
        .apply_env(vars(&[
            ("EMCF_STATE_DIR", "/mine"),
            ("STATE_DIRECTORY", "/var/lib/emcf-gateway"),
        ]))
        .unwrap();
    assert_eq!(config.resolved_state_dir(), Path::new("/mine"));
}

#[test]
fn empty_variables_are_unset() {
    let mut config = Config::default();
    config
        .apply_env(vars(&[
            ("EMCF_STATE_DIR", ""),
            ("EMCF_LISTEN", ""),
            ("STATE_DIRECTORY", ""),
        ]))
        .unwrap();
    assert_eq!(config, Config::default());
}

#[test]
fn bad_environment_values_are_named() {
    let mut config = Config::default();
    let error = config
        .apply_env(vars(&[("EMCF_LISTEN", "localhost")]))
        .unwrap_err();
    assert!(matches!(&error, ConfigError::Env { var, .. } if var == "EMCF_LISTEN"));
    let message = error.to_string();
    assert!(
        message.contains("EMCF_LISTEN") && message.contains("localhost"),
        "{message}"
    );
}

#[test]
fn flags_override_everything() {
    let mut config = parse("state_dir = \"/from/file\"").unwrap();
    config
        .apply_env(vars(&[
            ("EMCF_STATE_DIR", "/from/env"),
            ("EMCF_LISTEN", "0.0.0.0:1"),
        ]))
        .unwrap();
    config.apply_overrides(&Overrides {
        state_dir: Some(PathBuf::from("/from/flag")),
        listen: Some("10.0.0.1:80".parse().unwrap()),
        language: Some(crate::i18n::Lang::En),
    });
    assert_eq!(config.language, crate::i18n::Lang::En);
    assert_eq!(config.resolved_state_dir(), Path::new("/from/flag"));
    assert_eq!(config.listen, "10.0.0.1:80".parse().unwrap());
    // No flags: nothing changes.
    let before = config.clone();
    config.apply_overrides(&Overrides::default());
    assert_eq!(config, before);
}

#[test]
fn which_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let default_file = dir.path().join("default.toml");
    let env_file = dir.path().join("env.toml");
    let flag_file = dir.path().join("flag.toml");
    let missing = dir.path().join("missing.toml");
    std::fs::write(&env_file, "max_connections = 2\n").unwrap();
    std::fs::write(&flag_file, "max_connections = 3\n").unwrap();

    // No default file: the defaults.
    let config = Config::load_from(None, None, &default_file).unwrap();
    assert_eq!(config, Config::default());

    std::fs::write(&default_file, "max_connections = 1\n").unwrap();
    let config = Config::load_from(None, None, &default_file).unwrap();
    assert_eq!(config.max_connections, 1);
    assert_eq!(config.source.as_deref(), Some(default_file.as_path()));

    let config = Config::load_from(None, Some(&env_file), &default_file).unwrap();
    assert_eq!(config.max_connections, 2);

    let config = Config::load_from(Some(&flag_file), Some(&env_file), &default_file).unwrap();
    assert_eq!(config.max_connections, 3);
    assert_eq!(config.source.as_deref(), Some(flag_file.as_path()));

    // A named file must exist.
    for (path, env) in [
        (Some(missing.as_path()), None),
        (None, Some(missing.as_path())),
    ] {
        let error = Config::load_from(path, env, &default_file).unwrap_err();
        assert!(matches!(&error, ConfigError::Read { path, .. } if path == &missing));
        assert!(error.to_string().contains("missing.toml"), "{error}");
    }
}

#[test]
fn resolve_runs_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "listen = \"0.0.0.0:1\"\nstate_dir = \"/file\"\n").unwrap();
    let config = Config::resolve(
        None,
        vars(&[
            ("EMCF_CONFIG", file.to_str().unwrap()),
            ("EMCF_LISTEN", "0.0.0.0:2"),
        ]),
        &Overrides {
            state_dir: Some(PathBuf::from("/flag")),
            listen: None,
            language: None,
        },
    )
    .unwrap();
    assert_eq!(config.source.as_deref(), Some(file.as_path()));
    assert_eq!(config.listen, "0.0.0.0:2".parse().unwrap());
    assert_eq!(config.resolved_state_dir(), Path::new("/flag"));

    // Validation runs last and names the file.
    std::fs::write(&file, "request_timeout_secs = 30\n").unwrap();
    let error = Config::resolve(Some(&file), vars(&[]), &Overrides::default()).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("request_timeout_secs"), "{message}");
    assert!(message.contains("config.toml"), "{message}");
}

#[test]
fn language_from_the_file_then_the_environment() {
    use crate::i18n::Lang;
    assert_eq!(Config::default().language, Lang::Fr);
    let config = Config::from_toml_str("language = \"en-GB\"\n", Path::new("t.toml")).unwrap();
    assert_eq!(config.language, Lang::En);
    let refused = Config::from_toml_str("language = \"ln\"\n", Path::new("t.toml"));
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("\"ln\"") && message.contains("fr"),
        "{message}"
    );
    let mut config = Config::default();
    config
        .apply_env(vars(&[("EMCF_LANG", "en_US.UTF-8")]))
        .unwrap();
    assert_eq!(config.language, Lang::En);
    assert!(Config::default()
        .apply_env(vars(&[("EMCF_LANG", "de")]))
        .is_err());
}
