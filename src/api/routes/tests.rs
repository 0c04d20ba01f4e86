use super::*;

#[test]
fn json_content_types() {
    assert!(is_json(Some("application/json")));
    assert!(is_json(Some("Application/JSON; charset=utf-8")));
    assert!(!is_json(Some("text/plain")));
    assert!(!is_json(Some("application/jsonx")));
    assert!(!is_json(None));
}

#[test]
fn path_segments_are_percent_decoded() {
    assert_eq!(
        percent_decode("F-2026%2F001").as_deref(),
        Some("F-2026/001")
    );
    assert_eq!(percent_decode("A%20B").as_deref(), Some("A B"));
    assert_eq!(percent_decode("bad%2"), None);
    assert_eq!(percent_decode("bad%zz"), None);
    assert_eq!(percent_decode("%ff"), None);
}
