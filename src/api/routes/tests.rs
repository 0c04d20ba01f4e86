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
fn views_and_their_parameters_are_read_from_the_path_and_query() {
    assert_eq!(View::of("F-1/qr.png"), Some(("F-1", View::QrPng)));
    assert_eq!(
        View::of("F-1/receipt.html"),
        Some(("F-1", View::ReceiptHtml))
    );
    assert_eq!(
        View::of("F%2F1/receipt.escpos"),
        Some(("F%2F1", View::ReceiptEscpos))
    );
    assert_eq!(View::of("F-1/receipt.pdf"), None);
    let query = Some("lang=en&layout=80mm&layout=a4&width");
    assert_eq!(query_value(query, "layout"), Some("80mm"));
    assert_eq!(query_value(query, "width"), Some(""));
    assert_eq!(query_value(query, "scale"), None);
    assert_eq!(query_value(None, "layout"), None);
    assert!(matches!(
        View::ReceiptHtml.format(Some("layout=58MM")),
        Ok(Format::ReceiptHtml(Layout::Mm58))
    ));
    assert!(matches!(
        View::ReceiptEscpos.format(None),
        Ok(Format::ReceiptEscpos(PaperWidth::Mm80))
    ));
    assert!(matches!(
        View::QrPng.format(Some("scale=7")),
        Ok(Format::QrPng { scale: Some(7) })
    ));
    for (view, query, name) in [
        (View::ReceiptHtml, "layout=letter", "layout"),
        (View::ReceiptEscpos, "width=76", "width"),
        (View::QrPng, "scale=0", "scale"),
    ] {
        match view.format(Some(query)) {
            Err(BadParameter(bad, _, _)) => assert_eq!(bad, name),
            Ok(_) => panic!("{query} taken"),
        }
    }
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
