//! What `Config::validate` refuses, and how it names the key: devices (a web API entry's keys
//! are in `web_api.rs`), names, timeouts; and the 1.0.0 file that must still load.

use super::{invalid, parse, parse_error};
use crate::alerts::{dashboard_url, SmtpTls};
use crate::config::*;
use std::time::Duration;

fn with_device(edit: impl FnOnce(&mut DeviceEntry)) -> Config {
    let mut device = DeviceEntry::new("shop", "/dev/ttyUSB0");
    edit(&mut device);
    Config {
        devices: vec![device],
        ..Config::default()
    }
}

#[test]
fn validation_errors_name_the_key() {
    let device_key = |field: &str| format!("{field} in [[devices]] entry 1 (\"shop\")");
    let cases: Vec<(Config, String, &str)> = vec![
        (
            Config {
                max_connections: 0,
                ..Config::default()
            },
            "max_connections".into(),
            "between 1 and 65536",
        ),
        (
            Config {
                header_read_timeout_secs: 0,
                ..Config::default()
            },
            "header_read_timeout_secs".into(),
            "between 1 and 3600 seconds",
        ),
        (
            Config {
                request_timeout_secs: 90_000,
                ..Config::default()
            },
            "request_timeout_secs".into(),
            "between 1 and 3600 seconds",
        ),
        (
            Config {
                body_limit_bytes: 10,
                ..Config::default()
            },
            "body_limit_bytes".into(),
            "between 1024",
        ),
        (
            Config {
                index_cache_mib: 0,
                ..Config::default()
            },
            "index_cache_mib".into(),
            "between 1 and 4096 MiB",
        ),
        (
            Config {
                index_cache_mib: 5000,
                ..Config::default()
            },
            "index_cache_mib".into(),
            "between 1 and 4096 MiB",
        ),
        (
            Config {
                plans: Plans { start: 0, grow: 1 },
                ..Config::default()
            },
            "plans.start".into(),
            "is 0",
        ),
        (
            Config {
                state_dir: Some(PathBuf::new()),
                ..Config::default()
            },
            "state_dir".into(),
            "is empty",
        ),
        (with_device(|d| d.baud = 0), device_key("baud"), "115200"),
        (
            with_device(|d| d.path = PathBuf::new()),
            device_key("path"),
            "/dev/serial/by-id",
        ),
        (
            with_device(|d| d.queue_capacity = 0),
            device_key("queue_capacity"),
            "is 0",
        ),
        (
            with_device(|d| d.tries = Some(0)),
            device_key("tries"),
            "between 1 and 10",
        ),
        (
            with_device(|d| d.finalize_budget_ms = Some(0)),
            device_key("finalize_budget_ms"),
            "between 1 and 3600000 ms",
        ),
        (
            with_device(|d| d.window_ms = Some(16_000)),
            device_key("window_ms"),
            "command_budget_ms",
        ),
        (
            with_device(|d| d.poll_interval_ms = Some(20_000)),
            device_key("poll_interval_ms"),
            "finalize_budget_ms",
        ),
        (
            with_device(|d| d.credit_note_budget_ms = Some(120_000)),
            "request_timeout_secs".into(),
            "device \"shop\" (120000 ms",
        ),
        (
            Config {
                request_timeout_secs: 90,
                ..Config::default()
            },
            "request_timeout_secs".into(),
            "embedded simulator",
        ),
        (
            with_device(|d| d.name = String::new()),
            "name in [[devices]] entry 1 (\"\")".into(),
            "is empty",
        ),
        (
            with_device(|d| d.name = "shop 1".into()),
            "name in [[devices]] entry 1 (\"shop 1\")".into(),
            "ASCII letters",
        ),
        (
            with_device(|d| d.name = "x".repeat(33)),
            format!("name in [[devices]] entry 1 (\"{}\")", "x".repeat(33)),
            "32",
        ),
        (
            with_device(|d| {
                d.seq_range = Some("20-20".into());
                d.seq_replay = Some(true);
            }),
            device_key("seq_range"),
            "seq_replay = false",
        ),
        (
            with_device(|d| d.seq_range = Some("10-FF".into())),
            device_key("seq_range"),
            "at least 20",
        ),
        (
            with_device(|d| d.rates = Some([("B".to_string(), "16%".to_string())].into())),
            device_key("rates"),
            "not a rate",
        ),
    ];
    for (config, key, fragment) in cases {
        let (got_key, message) = invalid(&config);
        assert_eq!(got_key, key, "{message}");
        assert!(message.contains(fragment), "{key}: {message}");
    }
}

#[test]
fn http_keys_are_read_validated_and_optional() {
    let text = "[http]\nmax_connections_per_peer = 8\ndashboard_max_requests = 4\n\
                body_read_grace_secs = 5\nbody_min_bytes_per_sec = 100\n\
                metrics_per_organization = true\n";
    let config = Config::from_toml_str(text, Path::new("t.toml")).expect("parses");
    config.validate().expect("valid");
    let limits = config.body_limits();
    assert_eq!(
        (limits.limit, limits.grace.as_secs(), limits.min_rate),
        (DEFAULT_BODY_LIMIT_BYTES, 5, 100)
    );
    assert!(limits.drain > limits.limit, "oversize bodies are drained");
    assert!(config.http.metrics_per_organization);
    assert_eq!(config.http.dashboard_max_requests, 4);
    let written = config.to_toml_string().expect("writes");
    assert!(written.contains("[http]"), "{written}");
    let plain = Config::default().to_toml_string().expect("writes");
    assert!(!plain.contains("[http]"), "defaults are left out: {plain}");

    for (edit, key) in [
        (
            (|c: &mut Config| c.http.max_connections_per_peer = 0) as fn(&mut Config),
            "http.max_connections_per_peer",
        ),
        (
            |c: &mut Config| c.http.max_connections_per_peer = 70_000,
            "http.max_connections_per_peer",
        ),
        (
            |c: &mut Config| c.http.dashboard_max_requests = 0,
            "http.dashboard_max_requests",
        ),
        (
            |c: &mut Config| c.http.body_min_bytes_per_sec = 0,
            "http.body_min_bytes_per_sec",
        ),
        (
            |c: &mut Config| c.http.body_read_grace_secs = 0,
            "http.body_read_grace_secs",
        ),
    ] {
        let mut config = Config::default();
        edit(&mut config);
        let message = config.validate().expect_err(key).to_string();
        assert!(message.contains(key), "{message}");
    }
    let unknown = Config::from_toml_str("[http]\nmax_conections_per_peer = 8\n", Path::new("t"));
    assert!(unknown.is_err(), "a misspelt key is refused");
}

#[test]
fn duplicate_device_names() {
    let mut config = with_device(|_| {});
    config
        .devices
        .push(DeviceEntry::new("Shop", "/dev/ttyUSB1"));
    let (key, message) = invalid(&config);
    assert_eq!(key, "name in [[devices]] entry 2 (\"Shop\")");
    assert!(message.contains("entry 1"), "{message}");
}

#[test]
fn request_timeout_just_above_the_budget_is_enough() {
    let mut config = with_device(|d| d.credit_note_budget_ms = Some(119_999));
    config.validate().unwrap();
    config.devices[0].credit_note_budget_ms = Some(120_000);
    assert!(config.validate().is_err());
}

#[test]
fn invalid_error_mentions_the_file() {
    let mut config = Config {
        max_connections: 0,
        ..Config::default()
    };
    assert!(!config.validate().unwrap_err().to_string().contains("file"));
    config.source = Some(PathBuf::from("/etc/emcf-gateway/config.toml"));
    let message = config.validate().unwrap_err().to_string();
    assert!(
        message.contains("/etc/emcf-gateway/config.toml"),
        "{message}"
    );
    assert!(message.contains("max_connections"), "{message}");
}

/// A configuration written for release 1.0.0 (every key it knew) is read by this release
/// unchanged, with the same meaning.
#[test]
fn a_release_1_0_0_configuration_still_loads() {
    let text = include_str!("../../../tests/fixtures/release-1.0.0/config.toml");
    let config = parse(text).expect("the 1.0.0 file parses");
    config.validate().expect("and is valid");
    assert_eq!(config.listen.to_string(), "0.0.0.0:8080");
    assert_eq!(config.timezone_offset.local_minus_utc(), 7200);
    assert_eq!(config.plans.start, 3000);
    assert_eq!(config.devices.len(), 2);
    let warehouse = &config.devices[1];
    assert_eq!(warehouse.baud, 9600);
    let timing = warehouse.timing();
    assert_eq!(timing.window, Duration::from_millis(800));
    assert_eq!(timing.tries, 4);
    assert_eq!(timing.command_budget, Duration::from_millis(8000));
    assert_eq!(timing.credit_note_budget, Duration::from_millis(180_000));
    assert_eq!(timing.poll_interval, Duration::from_millis(1000));
}

#[test]
fn alerts_and_smtp_are_optional_and_validated() {
    let config = parse("").expect("no [alerts], no [smtp]");
    assert!(config.smtp.is_none());
    assert_eq!(config.alerts.quota_thresholds, [80, 90, 100]);
    let config =
        parse("[smtp]\nhost = \"relay.example.cd\"\nfrom = \"a@example.cd\"\n").expect("smtp");
    config.validate().expect("valid");
    let mut smtp = config.smtp.expect("smtp");
    assert_eq!((smtp.port(), smtp.tls), (587, SmtpTls::Starttls));
    smtp.tls = SmtpTls::Tls;
    assert_eq!(smtp.port(), 465, "TLS from the first byte: submissions");
    smtp.port = Some(2525);
    assert_eq!(smtp.port(), 2525);
    for (text, key) in [
        (
            "[alerts]\nquota_thresholds = [80, 80]\n",
            "alerts.quota_thresholds",
        ),
        (
            "[alerts]\nquota_thresholds = [0]\n",
            "alerts.quota_thresholds",
        ),
        (
            "[alerts]\nchannel_down_minutes = 0\n",
            "alerts.channel_down_minutes",
        ),
        (
            "[smtp]\nhost = \"h\"\nfrom = \"not an address\"\n",
            "smtp.from",
        ),
        (
            "[smtp]\nhost = \"h\"\nfrom = \"a@b.cd\"\nusername = \"u\"\n",
            "smtp.username",
        ),
    ] {
        let config = parse(text).expect("parses");
        assert_eq!(invalid(&config).0, key, "{text}");
    }
    assert!(
        parse_error("[smtp]\nhost = \"h\"\nfrom = \"a@b.cd\"\npassword = \"x\"\n")
            .contains("password")
    );
}

/// `public_url` (1.6.0): optional, an http(s) address with a host, written back as given; the
/// dashboard's link is built from it with or without a trailing `/`.
#[test]
fn public_url_is_optional_and_an_http_address() {
    assert_eq!(parse("").expect("none").public_url, None);
    for (url, dashboard) in [
        (
            "https://factures.example.cd",
            "https://factures.example.cd/dashboard/",
        ),
        (
            "https://factures.example.cd/",
            "https://factures.example.cd/dashboard/",
        ),
        (
            "http://192.168.1.20:8080",
            "http://192.168.1.20:8080/dashboard/",
        ),
        (
            "https://example.cd/factures/",
            "https://example.cd/factures/dashboard/",
        ),
    ] {
        let config = parse(&format!("public_url = {url:?}\n")).expect("parses");
        config.validate().unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(config.public_url.as_deref(), Some(url));
        assert_eq!(dashboard_url(url), dashboard);
        let written = config.to_toml_string().expect("writes");
        assert_eq!(parse(&written).expect("reads back"), config, "{written}");
    }
    for url in [
        "",
        "factures.example.cd",
        "ftp://factures.example.cd",
        "https://",
        "https:///dashboard",
        "https://admin:secret@factures.example.cd",
        "https://factures.example.cd/?from=mail",
        "https://factures.example.cd/#top",
        " https://factures.example.cd",
        "https://factures example.cd",
        "javascript:alert(1)",
    ] {
        let config = parse(&format!("public_url = {url:?}\n")).expect("parses");
        let (key, message) = invalid(&config);
        assert_eq!(key, "public_url", "{url:?}: {message}");
        assert!(message.contains("https://factures.example.cd"), "{message}");
    }
    let config =
        parse("public_url = \"https://factures.example.cd/dashboard/\"\n").expect("parses");
    let (key, message) = invalid(&config);
    assert_eq!(key, "public_url");
    assert!(message.contains("without /dashboard"), "{message}");
    assert!(parse_error("public_url = 8080\n").contains("public_url"));
}

/// `demo` (1.7.0): on when absent (a file written before it keeps the demo simulator); off and
/// no device: `serve` waits for the box (the packaged file); a device makes it moot.
#[test]
fn demo_is_on_unless_the_file_turns_it_off() {
    let older = parse("").expect("an empty file");
    assert!(older.demo && !older.awaits_device());
    let packaged = parse("demo = false\n").expect("parses");
    assert!(packaged.awaits_device());
    let named = parse("demo = false\n[[devices]]\nname = \"shop\"\npath = \"/dev/emcf0\"\n")
        .expect("parses");
    assert!(!named.awaits_device());
    assert!(parse("demo = \"no\"\n").is_err(), "a text is not a boolean");
}
