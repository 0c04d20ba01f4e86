use std::collections::BTreeMap;
use std::time::Duration;

use super::render::label;
use super::*;

#[test]
fn recorded_values_appear_in_the_text() {
    certification("certified", "FV");
    certification("certified", "FV");
    device_round_trip("test-dev", 0x38, Duration::from_millis(300));
    queue_wait("test-dev", Duration::from_millis(2));
    device_reply_anomaly("test-dev", 0xC1, "curDate");
    let gauges = Gauges {
        devices: vec![("test-dev".into(), true, 3)],
        quotas: vec![("demo".into(), 7, 5000)],
        ready: true,
        configured: vec!["test-dev".into(), "back".into()],
        not_ready: vec![("back".into(), "box_blocked".into())],
        open_anomalies: vec![("back".into(), 1)],
        awaiting_administrator: vec![("dgi".into(), 2)],
        token_valid: vec![("dgi".into(), 1_800_000_000)],
    };
    let text = render(&gauges, true);
    assert!(text.contains("emcf_invoices_in_doubt{device=\"dgi\"} 2"));
    assert!(text.contains("emcf_token_valid_until_seconds{device=\"dgi\"} 1800000000"));
    assert!(text.contains("emcf_device_ready{device=\"test-dev\"} 1"));
    assert!(text.contains("emcf_device_ready{device=\"back\"} 0"));
    assert!(text.contains("emcf_device_not_ready{device=\"back\",reason=\"box_blocked\"} 1"));
    assert!(text.contains("emcf_fiscal_anomalies_open{device=\"back\"} 1"));
    assert!(text.contains(
        "emcf_device_reply_anomalies_total{device=\"test-dev\",command=\"C1h\",field=\"curDate\"} "
    ));
    assert!(text.contains("emcf_certifications_total{outcome=\"certified\",type=\"FV\"} "));
    assert!(text.contains("emcf_device_link_up{device=\"test-dev\"} 1"));
    assert!(text.contains("emcf_device_queue_depth{device=\"test-dev\"} 3"));
    assert!(text.contains(
        "emcf_device_round_trip_seconds_bucket{device=\"test-dev\",command=\"38h\",le=\"0.5\"} "
    ));
    assert!(text.contains(
        "emcf_device_round_trip_seconds_bucket{device=\"test-dev\",command=\"38h\",le=\"0.25\"} 0"
    ));
    assert!(text.contains("emcf_quota_used{org=\"demo\"} 7"));
    assert!(text.contains("emcf_quota_limit{org=\"demo\"} 5000"));
    assert!(text.contains("emcf_ready 1"));

    alerts_active(BTreeMap::from([("quota_80".to_string(), 1)]));
    alert_raised("quota_80");
    assert!(answered_invoices() >= 2);
    let text = render(&gauges, false);
    assert!(
        text.contains("emcf_alerts_active{kind=\"quota_80\"} 1"),
        "{text}"
    );
    assert!(text.contains("emcf_alerts_raised_total{kind=\"quota_80\"} "));

    let public = render(&gauges, false);
    assert!(!public.contains("demo"), "{public}");
    assert!(public.contains("emcf_organizations 1"));
    assert!(public.contains("emcf_organizations_quota_exhausted 0"));
    assert!(public.contains("emcf_ready 1"));
}

#[test]
fn sandboxes_are_one_device_unless_organizations_are_named() {
    web_api_round_trip("sandbox-kivu41", "test-call", Duration::from_millis(3));
    web_api_round_trip("sandbox-goma42", "test-call", Duration::from_millis(30));
    web_api_round_trip("shop", "test-call", Duration::from_millis(3));
    device_reply_anomaly("sandbox-kivu41", 0xC2, "test-field");
    device_reply_anomaly("sandbox-goma42", 0xC2, "test-field");
    let gauges = Gauges {
        devices: vec![
            ("shop".into(), true, 1),
            ("sandbox-kivu41".into(), true, 2),
            ("sandbox-goma42".into(), false, 3),
        ],
        configured: vec!["shop".into()],
        awaiting_administrator: vec![
            ("shop".into(), 0),
            ("sandbox-kivu41".into(), 1),
            ("sandbox-goma42".into(), 2),
        ],
        open_anomalies: vec![("sandbox-goma42".into(), 1)],
        token_valid: vec![
            ("sandbox-kivu41".into(), 1_900_000_000),
            ("sandbox-goma42".into(), 1_800_000_000),
        ],
        quotas: vec![("kivu41".into(), 1, 10), ("goma42".into(), 10, 10)],
        ..Gauges::default()
    };
    let public = render(&gauges, false);
    assert!(
        !public.contains("kivu41") && !public.contains("goma42"),
        "{public}"
    );
    for line in [
        "emcf_device_link_up{device=\"shop\"} 1",
        "emcf_device_link_up{device=\"(sandboxes)\"} 0",
        "emcf_device_queue_depth{device=\"shop\"} 1",
        "emcf_device_queue_depth{device=\"(sandboxes)\"} 5",
        "emcf_invoices_in_doubt{device=\"(sandboxes)\"} 3",
        "emcf_fiscal_anomalies_open{device=\"(sandboxes)\"} 1",
        "emcf_token_valid_until_seconds{device=\"(sandboxes)\"} 1800000000",
        "emcf_device_round_trip_seconds_count{device=\"shop\",command=\"test-call\"} 1",
        "emcf_device_round_trip_seconds_count{device=\"(sandboxes)\",command=\"test-call\"} 2",
        "emcf_device_round_trip_seconds_bucket{device=\"(sandboxes)\",command=\"test-call\",le=\"0.005\"} 1",
        "emcf_device_reply_anomalies_total{device=\"(sandboxes)\",command=\"C2h\",field=\"test-field\"} 2",
        "emcf_organizations_quota_exhausted 1",
    ] {
        assert!(public.lines().any(|l| l == line), "{line}:\n{public}");
    }

    let named = render(&gauges, true);
    for line in [
        "emcf_device_queue_depth{device=\"sandbox-goma42\"} 3",
        "emcf_device_round_trip_seconds_count{device=\"sandbox-kivu41\",command=\"test-call\"} 1",
        "emcf_quota_used{org=\"goma42\"} 10",
    ] {
        assert!(named.lines().any(|l| l == line), "{line}:\n{named}");
    }
    assert!(!named.contains(SANDBOXES), "{named}");
}

#[test]
fn label_values_are_escaped() {
    assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}
