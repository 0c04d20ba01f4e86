//! Reading the body: JSON, types, unknown and duplicate fields, depth, decimals.

use rust_decimal_macros::dec;

use super::*;
use crate::certify::invoice::code;
use crate::certify::invoice::request::{parse_body, MAX_DEPTH};

fn parse_error(body: &str) -> ValidationError {
    match parse_body(body.as_bytes()) {
        Ok(request) => panic!("parsed: {body}\n{request:?}"),
        Err(error) => error,
    }
}

#[test]
fn the_reference_example_is_read_field_by_field() {
    let request = parse_body(REFERENCE.as_bytes()).unwrap();
    assert_eq!(request.rn.as_deref(), Some("FC0002"));
    assert_eq!(request.isf.as_deref(), Some("ISF01"));
    assert_eq!(request.cur_rate, Some(dec!(-1)));
    let items = request.items.unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].price, Some(dec!(600.00)));
    assert_eq!(items[0].quantity, Some(dec!(2.0)));
    assert_eq!(items[1].code.as_deref(), Some(" ---DEEE"));
    assert_eq!(items[1].tax_specific_value.as_deref(), Some("0.00%"));
    let client = request.client.unwrap();
    assert_eq!(client.type_desc.as_deref(), Some("Personne morale"));
    assert_eq!(client.email, None);
    let payments = request.payments.unwrap();
    assert_eq!(payments[0].amount, Some(dec!(1230.00)));
    assert_eq!(request.operator.unwrap().id.as_deref(), Some("01"));
}

#[test]
fn decimals_may_be_strings_or_numbers_and_keep_every_digit() {
    let body = r#"{"rn":"1","curRate":2850.1234,"items":[
        {"price":12.50,"quantity":"0.125"},
        {"price":"79228162514264337593543950.335","quantity":3}]}"#;
    let request = parse_body(body.as_bytes()).unwrap();
    let items = request.items.unwrap();
    assert_eq!(request.cur_rate, Some(dec!(2850.1234)));
    assert_eq!(items[0].price.unwrap().to_string(), "12.50");
    assert_eq!(items[0].quantity, Some(dec!(0.125)));
    // 29 digits: an f64 would have lost the last ones.
    assert_eq!(
        items[1].price.unwrap().to_string(),
        "79228162514264337593543950.335"
    );
    assert_eq!(items[1].quantity, Some(dec!(3)));
}

#[test]
fn null_and_empty_decimals_are_absent_and_minus_zero_is_zero() {
    let body = r#"{"rn":null,"curRate":"","items":[{"price":"-0.00","quantity":null}]}"#;
    let request = parse_body(body.as_bytes()).unwrap();
    assert_eq!(request.rn, None);
    assert_eq!(request.cur_rate, None);
    let item = &request.items.unwrap()[0];
    assert!(!item.price.unwrap().is_sign_negative());
    assert_eq!(item.quantity, None);
}

#[test]
fn decimals_with_exponents_or_junk_are_refused_with_their_path() {
    for (body, field) in [
        (r#"{"curRate":1e3}"#, "curRate"),
        (r#"{"curRate":"1E3"}"#, "curRate"),
        (r#"{"items":[{"price":"12,50"}]}"#, "items[0].price"),
        (r#"{"items":[{},{"quantity":" 1"}]}"#, "items[1].quantity"),
        (r#"{"payments":[{"amount":"1_000"}]}"#, "payments[0].amount"),
        (r#"{"payments":[{"amount":"+5"}]}"#, "payments[0].amount"),
        (r#"{"payments":[{"amount":"5."}]}"#, "payments[0].amount"),
        (
            r#"{"payments":[{"amount":"123456789012345678901234567890"}]}"#,
            "payments[0].amount",
        ),
    ] {
        let error = parse_error(body);
        assert_eq!(
            (error.code, error.field.as_deref()),
            (code::BAD_DECIMAL, Some(field)),
            "{body}: {error}"
        );
    }
}

#[test]
fn unknown_fields_are_refused_with_their_path() {
    // The seed's own example misspells originalPrice in its first item.
    let misspelt = REFERENCE.replacen("\"originalPrice\"", "\"origìnaÎPříče\"", 1);
    let error = parse_error(&misspelt);
    assert_eq!(error.code, code::UNKNOWN_FIELD);
    assert_eq!(error.field.as_deref(), Some("items[0].origìnaÎPříče"));
    assert!(error.to_string().contains("origìnaÎPříče"), "{error}");
    for (body, field) in [
        (r#"{"rn":"1","isf":"X"}"#, "isf"),
        (r#"{"client":{"emial":"a@b.c"}}"#, "client.emial"),
        (
            r#"{"payments":[{"name":"ESPECES","currency":"CDF"}]}"#,
            "payments[0].currency",
        ),
        (r#"{"operator":{"id":"1","role":"x"}}"#, "operator.role"),
    ] {
        let error = parse_error(body);
        assert_eq!(
            (error.code, error.field.as_deref()),
            (code::UNKNOWN_FIELD, Some(field)),
            "{body}"
        );
    }
}

#[test]
fn a_field_given_twice_is_refused_even_when_escaped() {
    let error = parse_error(r#"{"rn":"A","r\u006e":"B"}"#);
    assert_eq!(
        (error.code, error.field.as_deref()),
        (code::DUPLICATE_FIELD, Some("rn"))
    );
    let error = parse_error(r#"{"items":[{"name":"a","name":"a"}]}"#);
    assert_eq!(error.field.as_deref(), Some("items[0].name"));
}

#[test]
fn wrong_json_types_are_refused_with_their_path() {
    for (body, field) in [
        (r#"{"rn":12}"#, Some("rn")),
        (r#"{"items":"none"}"#, Some("items")),
        (r#"{"items":{}}"#, Some("items")),
        (r#"{"items":[[]]}"#, Some("items[0]")),
        (r#"{"client":["PM"]}"#, Some("client")),
        (r#"{"operator":{"id":1}}"#, Some("operator.id")),
        (r#"{"items":[{"price":true}]}"#, Some("items[0].price")),
        (
            r#"{"payments":[{"amount":{}}]}"#,
            Some("payments[0].amount"),
        ),
        (r#"[]"#, None),
        (r#""text""#, None),
    ] {
        let error = parse_error(body);
        assert_eq!(
            (error.code, error.field.as_deref()),
            (code::WRONG_TYPE, field),
            "{body}: {error}"
        );
    }
}

#[test]
fn bad_json_and_bad_utf8_are_malformed() {
    for body in [
        "",
        "{",
        r#"{"rn":"1",}"#,
        r#"{"rn":"1"} x"#,
        "{'rn':'1'}",
        "\u{feff}{}",
    ] {
        assert_eq!(parse_error(body).code, code::MALFORMED_JSON, "{body:?}");
    }
    let error = parse_body(b"{\"rn\":\"\xff\"}").unwrap_err();
    assert_eq!(error.code, code::MALFORMED_JSON);
    assert!(error.to_string().contains("UTF-8"), "{error}");
    assert_eq!(
        error.message.render(crate::i18n::Lang::Fr),
        "le corps de la requête n'est pas en UTF-8 (octet 7)"
    );
}

#[test]
fn a_json_error_says_what_and_where_in_the_reader_s_language() {
    use crate::certify::invoice::json::json_fault;
    use crate::i18n::Lang;
    // Each kind of mistake a body can hold: the fault serde_json's text is read as (pinned
    // here, so that a serde_json whose words change fails this test), and where.
    for (body, fault, line, column) in [
        ("", "eof-value", 1, 0),
        ("{\"rn\":", "eof-value", 1, 6),
        ("{", "eof-object", 1, 1),
        ("{\"items\":[", "eof-list", 1, 10),
        ("{\"rn\":\"F-1", "eof-string", 1, 10),
        ("{\"rn\" \"1\"}", "expected-colon", 1, 7),
        (
            "{\"rn\":\"1\" \"mode\":\"ttc\"}",
            "expected-comma-object",
            1,
            11,
        ),
        ("{\"items\":[1 2]}", "expected-comma-list", 1, 13),
        ("{\"rn\":tru}", "expected-value", 1, 10),
        ("\u{feff}{}", "expected-value", 1, 1),
        ("{'rn':'1'}", "key-not-string", 1, 2),
        ("{\"rn\":\"a\\qb\"}", "invalid-escape", 1, 10),
        ("{\"rn\":\"\\u12G4\"}", "invalid-escape", 1, 13),
        ("{\"x\":-}", "invalid-number", 1, 7),
        ("{\"rn\":\"a\nb\"}", "control-in-string", 1, 8),
        ("{\"rn\":\"1\",}", "key-not-string", 1, 11),
        ("{\"items\":[1,]}", "expected-value", 1, 13),
        ("{\"rn\":\"1\"} x", "trailing-characters", 1, 12),
    ] {
        let error = serde_json::from_str::<&serde_json::value::RawValue>(body).unwrap_err();
        assert_eq!(
            (json_fault(&error), error.line(), error.column()),
            (fault, line, column),
            "{body:?}: {error}"
        );
        let refused = parse_error(body);
        assert_eq!(
            (refused.code, refused.field.as_deref()),
            (code::MALFORMED_JSON, None)
        );
        let fr = refused.message.render(Lang::Fr);
        let en = refused.message.render(Lang::En);
        assert!(
            fr.starts_with(&crate::i18n::nbsp(&format!(
                "le corps de la requête n'est pas du JSON valide, ligne {line}, colonne {column} : "
            ))),
            "{fr}"
        );
        assert!(
            en.starts_with(&format!(
                "the body is not valid JSON, line {line}, column {column}: "
            )),
            "{en}"
        );
        // Never the parser's own English.
        for text in [&fr, &en] {
            for english in [
                "EOF",
                "while parsing",
                "at line",
                "expected `",
                "trailing characters",
            ] {
                assert!(!text.contains(english), "{body:?}: {text}");
            }
        }
        assert!(
            !fr.contains("this is not JSON") && !fr.contains("ce n'est pas du JSON"),
            "{fr}"
        );
    }
    let cut = parse_error("{\"rn\":\"F-1\",\"items\":[{\"name\":\"x\"");
    assert_eq!(
        cut.message.render(Lang::Fr),
        crate::i18n::nbsp(
            "le corps de la requête n'est pas du JSON valide, ligne 1, colonne 32 : le corps \
             s'arrête avant la fin d'un objet (il manque un « } »)"
        )
    );
}

#[test]
fn a_depth_bomb_is_refused_before_any_recursion() {
    // Deep enough to overflow a recursive parser's stack if it were reached.
    let bomb = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    assert_eq!(parse_error(&bomb).code, code::TOO_DEEP);
    let objects = format!(
        r#"{{"rn":"1","x":{}1{}}}"#,
        r#"{"a":"#.repeat(100_000),
        "}".repeat(100_000)
    );
    assert_eq!(parse_error(&objects).code, code::TOO_DEEP);
    // Brackets inside strings do not count, escaped quotes included.
    let inside = format!(r#"{{"rn":"\"{}"}}"#, "[".repeat(100));
    assert_eq!(
        parse_body(inside.as_bytes()).unwrap().rn.unwrap(),
        format!("\"{}", "[".repeat(100))
    );
    // Exactly MAX_DEPTH levels is fine for the scan (the schema refuses it later).
    let deep = format!(
        r#"{{"x":{}{}}}"#,
        "[".repeat(MAX_DEPTH - 1),
        "]".repeat(MAX_DEPTH - 1)
    );
    assert_eq!(parse_error(&deep).code, code::UNKNOWN_FIELD);
    let deeper = format!(
        r#"{{"x":{}{}}}"#,
        "[".repeat(MAX_DEPTH),
        "]".repeat(MAX_DEPTH)
    );
    assert_eq!(parse_error(&deeper).code, code::TOO_DEEP);
}

#[test]
fn comment_fields_map_to_lines_a_to_h() {
    let body = r#"{"cmta":"first","cmth":"last","cmtc":null}"#;
    let request = parse_body(body.as_bytes()).unwrap();
    assert_eq!(request.comments[0].as_deref(), Some("first"));
    assert_eq!(request.comments[2], None);
    assert_eq!(request.comments[7].as_deref(), Some("last"));
}
