use super::*;

#[test]
fn json_content_types() {
    assert!(is_json(Some("application/json")));
    assert!(is_json(Some("Application/JSON; charset=utf-8")));
    assert!(!is_json(Some("text/plain")));
    assert!(!is_json(Some("application/jsonx")));
    assert!(!is_json(None));
}
