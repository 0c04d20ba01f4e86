//! Tests of the configuration: parsing and the documentation; `sources.rs` the file, the
//! environment and the flags; `validation.rs` what `validate` refuses, device by device;
//! `web_api.rs` the channel kinds and a web API entry's keys; `store.rs` the `[store]` table.

mod sources;
mod store;
mod validation;
mod web_api;

use super::*;
use crate::i18n::Localized;
use chrono::TimeZone;

const DOC: &str = include_str!("../../../docs/configuration.md");

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(text, Path::new("test.toml"))
}

fn parse_error(text: &str) -> String {
    match parse(text) {
        Err(error @ ConfigError::Parse { .. }) => error.to_string(),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

fn invalid(config: &Config) -> (String, String) {
    match config.validate() {
        Err(ConfigError::Invalid { key, message, .. }) => (key.to_string(), message.to_string()),
        other => panic!("expected an invalid configuration, got {other:?}"),
    }
}

fn vars(list: &[(&str, &str)]) -> impl Iterator<Item = (String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<Vec<_>>()
        .into_iter()
}

fn toml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim() == "```toml" => current = Some(String::new()),
            Some(block) if line.trim() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn defaults() {
    let config = Config::default();
    assert_eq!(config.state_dir, None);
    assert_eq!(config.resolved_state_dir(), Path::new("./emcf-state"));
    assert_eq!(config.listen, "127.0.0.1:8080".parse().unwrap());
    assert_eq!(config.offset(), FixedOffset::east_opt(3600).unwrap());
    assert_eq!(config.max_connections, 256);
    assert_eq!(config.request_timeout(), Duration::from_secs(120));
    assert_eq!(config.header_read_timeout(), Duration::from_secs(10));
    assert_eq!(config.body_limit_bytes, 262_144);
    assert_eq!(config.index_cache_mib, 8);
    assert_eq!(
        config.plans,
        Plans {
            start: 5000,
            grow: 50_000
        }
    );
    assert!(!config.has_devices());
    assert_eq!(config.source, None);
    config.validate().unwrap();
    // An empty file is the defaults.
    assert_eq!(parse("").unwrap(), config);
    assert_eq!(parse("[plans]\n").unwrap(), config);
}

#[test]
fn quotas() {
    let config = Config {
        plans: Plans { start: 7, grow: 70 },
        ..Config::default()
    };
    assert_eq!(config.quota_for(Plan::Start, None), 7);
    assert_eq!(config.quota_for(Plan::Grow, None), 70);
    assert_eq!(config.quota_for(Plan::Start, Some(1_000)), 1_000);
    assert_eq!(config.quota_for(Plan::Grow, Some(0)), 0);
}

#[test]
fn quota_year_follows_the_offset() {
    let config = Config::default();
    // 31 Dec 23:30 UTC is already 1 Jan in Kinshasa.
    let at = Utc.with_ymd_and_hms(2024, 12, 31, 23, 30, 0).unwrap();
    assert_eq!(config.quota_year(at), 2025);
    let at = Utc.with_ymd_and_hms(2024, 12, 31, 22, 59, 59).unwrap();
    assert_eq!(config.quota_year(at), 2024);
    let utc = parse("timezone_offset = \"Z\"").unwrap();
    assert_eq!(
        utc.quota_year(Utc.with_ymd_and_hms(2024, 12, 31, 23, 30, 0).unwrap()),
        2024
    );
}

#[test]
fn full_file() {
    let config = parse(
        r#"
        state_dir = "/var/lib/emcf-gateway"
        listen = "0.0.0.0:9090"
        timezone_offset = "+02:00"
        max_connections = 64
        request_timeout_secs = 200
        header_read_timeout_secs = 5
        body_limit_bytes = 100000
        index_cache_mib = 64

        [plans]
        start = 1000
        grow = 20000

        [[devices]]
        name = "shop"
        path = "/dev/serial/by-id/usb-shop"
        baud = 9600
        queue_capacity = 4
        window_ms = 800
        tries = 4
        command_budget_ms = 6000
        finalize_budget_ms = 20000
        credit_note_budget_ms = 150000
        poll_interval_ms = 700

        [[devices]]
        name = "back-office"
        path = "/dev/ttyUSB1"
        "#,
    )
    .unwrap();
    config.validate().unwrap();
    assert_eq!(
        config.resolved_state_dir(),
        Path::new("/var/lib/emcf-gateway")
    );
    assert_eq!(config.listen, "0.0.0.0:9090".parse().unwrap());
    assert_eq!(config.offset().local_minus_utc(), 7200);
    assert_eq!(config.max_connections, 64);
    assert_eq!(config.request_timeout_secs, 200);
    assert_eq!(config.header_read_timeout_secs, 5);
    assert_eq!(config.body_limit_bytes, 100_000);
    assert_eq!(config.index_cache_mib, 64);
    assert_eq!(
        config.plans,
        Plans {
            start: 1000,
            grow: 20_000
        }
    );
    assert!(config.has_devices());
    assert_eq!(config.devices.len(), 2);

    let shop = config.device("shop").unwrap();
    assert_eq!(shop.path, Path::new("/dev/serial/by-id/usb-shop"));
    assert_eq!(shop.baud, 9600);
    assert_eq!(shop.queue_capacity, 4);
    assert_eq!(
        shop.timing(),
        LinkTiming {
            window: Duration::from_millis(800),
            tries: 4,
            command_budget: Duration::from_millis(6000),
            finalize_budget: Duration::from_millis(20_000),
            credit_note_budget: Duration::from_millis(150_000),
            poll_interval: Duration::from_millis(700),
            ..LinkTiming::default()
        }
    );

    let back = config.device("back-office").unwrap();
    assert_eq!(back, &DeviceEntry::new("back-office", "/dev/ttyUSB1"));
    assert_eq!(back.baud, 115_200);
    assert_eq!(back.queue_capacity, 32);
    assert_eq!(back.timing(), LinkTiming::default());
    assert_eq!(back.timing().longest_budget(), Duration::from_secs(90));
    assert!(config.device("nope").is_none());
}

#[test]
fn documented_examples_are_valid() {
    let blocks = toml_blocks(DOC);
    assert!(blocks.len() >= 2, "docs/configuration.md lost its examples");
    for block in blocks {
        let config = parse(&block).unwrap_or_else(|e| panic!("{e}\n{block}"));
        config.validate().unwrap_or_else(|e| panic!("{e}\n{block}"));
        assert!(config.has_devices());
    }
}

#[test]
fn documented_defaults_match_the_code() {
    let d = Config::default();
    for line in [
        format!("| `max_connections` | integer | `{}` |", d.max_connections),
        format!(
            "| `request_timeout_secs` | integer | `{}` |",
            d.request_timeout_secs
        ),
        format!(
            "| `header_read_timeout_secs` | integer | `{}` |",
            d.header_read_timeout_secs
        ),
        format!(
            "| `body_limit_bytes` | integer | `{}` (256 KiB) |",
            d.body_limit_bytes
        ),
        format!(
            "| `max_connections_per_peer` | integer | `{}` |",
            d.http.max_connections_per_peer
        ),
        format!(
            "| `dashboard_max_requests` | integer | `{}` |",
            d.http.dashboard_max_requests
        ),
        format!(
            "| `body_read_grace_secs` | integer | `{}` |",
            d.http.body_read_grace_secs
        ),
        format!(
            "| `body_min_bytes_per_sec` | integer | `{}` |",
            d.http.body_min_bytes_per_sec
        ),
        format!(
            "| `metrics_per_organization` | boolean | `{}` |",
            d.http.metrics_per_organization
        ),
        format!(
            "| `trusted_proxies` | list of strings | `{:?}` |",
            d.http.trusted_proxies
        ),
        format!("| `index_cache_mib` | integer | `{}` |", d.index_cache_mib),
        format!("| `demo` | boolean | `{}` |", d.demo),
        format!(
            "| `channel_down_minutes` | integer | `{}` |",
            d.alerts.channel_down_minutes
        ),
        format!(
            "| `dgi_contact_days` | integer | `{}` |",
            d.alerts.dgi_contact_days
        ),
        format!(
            "| `quota_thresholds` | list of integers | `{:?}` |",
            d.alerts.quota_thresholds
        ),
        format!(
            "| `port` | integer | `{}` |",
            crate::alerts::DEFAULT_SMTP_PORT
        ),
        format!("| `start` | integer | `{}` |", d.plans.start),
        format!("| `grow` | integer | `{}` |", d.plans.grow),
        format!("| `baud` | integer | `{DEFAULT_BAUD}` |"),
        format!("| `queue_capacity` | integer | `{DEFAULT_QUEUE_CAPACITY}` |"),
        format!(
            "| `window_ms` | integer | `{}` |",
            LinkTiming::default().window.as_millis()
        ),
        format!("| `tries` | integer | `{}` |", LinkTiming::default().tries),
        format!(
            "| `command_budget_ms` | integer | `{}` |",
            LinkTiming::default().command_budget.as_millis()
        ),
        format!(
            "| `finalize_budget_ms` | integer | `{}` |",
            LinkTiming::default().finalize_budget.as_millis()
        ),
        format!(
            "| `credit_note_budget_ms` | integer | `{}` |",
            LinkTiming::default().credit_note_budget.as_millis()
        ),
        format!(
            "| `poll_interval_ms` | integer | `{}` |",
            LinkTiming::default().poll_interval.as_millis()
        ),
        format!(
            "| `listen` | `\"IP:port\"` or `\"host:port\"` | `\"{}\"` |",
            d.listen
        ),
        format!(
            "| `timezone_offset` | `\"+HH:MM\"` | `\"{}\"` |",
            d.timezone_offset
        ),
        format!("| `dir` | path | `{:?}` |", d.backup.dir),
        format!("| `keep` | integer | `{}` |", d.backup.keep),
        format!(
            "| `command_timeout_secs` | integer | `{}` |",
            d.backup.command_timeout_secs
        ),
    ] {
        assert!(DOC.contains(&line), "docs/configuration.md lacks: {line}");
    }
}

#[test]
fn unknown_keys_are_rejected_with_their_name() {
    let message = parse_error("max_conections = 256\n");
    assert!(message.contains("max_conections"), "{message}");
    assert!(message.contains("test.toml"), "{message}");
    assert!(message.contains("line 1"), "{message}");

    let message = parse_error("[plans]\nstarter = 5\n");
    assert!(message.contains("starter"), "{message}");

    let message = parse_error("[[devices]]\nname = \"a\"\npath = \"/dev/x\"\nbaudrate = 9600\n");
    assert!(message.contains("baudrate"), "{message}");

    let message = parse_error("[logging]\nlevel = \"info\"\n");
    assert!(message.contains("logging"), "{message}");
}

#[test]
fn wrong_types_and_missing_keys_are_named() {
    // A host name is resolved (1.4.0); a port that is not one is refused with examples.
    let config = parse("listen = \"localhost:8080\"\n").unwrap();
    assert_eq!(config.listen.port(), 8080);
    assert!(config.listen.ip().is_loopback(), "{}", config.listen);
    // The keys whose text the gateway reads itself are refused in its own words, naming the
    // key and the file, in the reader's language.
    for (text, key, example) in [
        ("listen = \"localhost:http\"\n", "listen", "0.0.0.0:8080"),
        (
            "timezone_offset = \"Africa/Kinshasa\"\n",
            "timezone_offset",
            "+01:00",
        ),
        ("language = \"ln\"\n", "language", "fr"),
    ] {
        let error = parse(text).unwrap_err();
        assert!(
            matches!(&error, ConfigError::Invalid { key: k, .. } if k.name == key),
            "{error:?}"
        );
        for lang in crate::i18n::Lang::ALL {
            let said = error.message().render(lang);
            for fragment in [key, example, "test.toml"] {
                assert!(said.contains(fragment), "{lang}: {said}");
            }
        }
        assert!(error
            .message()
            .render(crate::i18n::Lang::Fr)
            .contains("non valable"));
    }

    let message = parse_error("max_connections = -1\n");
    assert!(message.contains("max_connections"), "{message}");

    let message = parse_error("request_timeout_secs = \"120\"\n");
    assert!(message.contains("request_timeout_secs"), "{message}");

    let message = parse_error("not toml at all");
    assert!(message.contains("test.toml"), "{message}");

    // A mistyped key is said in the reader's words, with the keys allowed there.
    let error = parse("max_connections = 10\nmax_conections = 256\n").unwrap_err();
    let said = error.message().render(crate::i18n::Lang::Fr);
    assert!(
        said.contains(&crate::i18n::nbsp(
            "ligne 2 : clé inconnue « max_conections » ; les clés permises ici sont : "
        )),
        "{said}"
    );
    assert!(said.contains("max_connections"), "{said}");
}

#[test]
fn offsets() {
    let secs = |text: &str| parse_offset(text).map(|o| o.local_minus_utc());
    assert_eq!(secs("+01:00"), Some(3600));
    assert_eq!(secs("+02:00"), Some(7200));
    assert_eq!(secs("-05:30"), Some(-19_800));
    assert_eq!(secs("+0100"), Some(3600));
    assert_eq!(secs("+01"), Some(3600));
    assert_eq!(secs("Z"), Some(0));
    assert_eq!(secs("utc"), Some(0));
    assert_eq!(secs("+14:00"), Some(50_400));
    for bad in [
        "",
        "+",
        "01:00",
        "+1:00",
        "+01:60",
        "+15:00",
        "+01:0",
        "+0١:00",
        "+aa:bb",
        "Africa/Kinshasa",
    ] {
        assert_eq!(secs(bad), None, "{bad:?}");
    }
}

#[test]
fn serialization_round_trips() {
    let two_boxes = toml_blocks(DOC)
        .into_iter()
        .find(|block| block.contains("timezone_offset = \"+02:00\""))
        .expect("the example of two boxes");
    let mut config = parse(&two_boxes).unwrap();
    config.state_dir = Some(PathBuf::from("/srv/emcf"));
    let text = config.to_toml_string().unwrap();
    assert!(text.contains("timezone_offset = \"+02:00\""), "{text}");
    assert_eq!(parse(&text).unwrap(), config);
    let defaults = Config::default();
    assert_eq!(
        parse(&defaults.to_toml_string().unwrap()).unwrap(),
        defaults
    );
}
