//! What the API and the dashboard read from a request besides its body: a header's value, the
//! query string (an urlencoded form has the same grammar), a percent-encoded path segment.
//! One decoder of `%XX` escapes serves them all ([`unescape`]); the body is `http_body`'s.
//!
//! The rules: a query or a form is read as browsers send it (`+` is a space, a malformed
//! escape is kept as written, bytes that are not UTF-8 are replaced); a path segment names
//! something exactly (an invoice number), so a malformed escape or non-UTF-8 bytes make it
//! name nothing.

use hyper::Request;

/// A header's value; a value that is not visible ASCII reads as `"\u{fffd}"` (present but
/// unreadable: a malformed key is a wrong one, never an absent one).
pub fn header<'a, B>(request: &'a Request<B>, name: &str) -> Option<&'a str> {
    request
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// The query string's pairs, decoded ([`parse_urlencoded`]); none without a query.
pub fn query<B>(request: &Request<B>) -> Vec<(String, String)> {
    query_pairs(request.uri().query())
}

/// The pairs of a query string, decoded ([`parse_urlencoded`]).
pub fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    parse_urlencoded(query.unwrap_or(""))
}

/// Decodes `application/x-www-form-urlencoded` text (also a query string): `name=value`
/// pairs split on `&`, a bare `name` has the value `""`; `+` is a space, `%XX` a byte,
/// malformed escapes are kept as they are, invalid UTF-8 is replaced.
pub fn parse_urlencoded(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (form_component(name), form_component(value))
        })
        .collect()
}

/// The first value of `name` in decoded pairs.
pub fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Decodes the `%XX` escapes of a path segment (`+` stays a `+`); `None` if an escape is
/// malformed or the bytes are not UTF-8.
pub fn percent_decode(segment: &str) -> Option<String> {
    let (bytes, well_formed) = unescape(segment, false);
    well_formed.then(|| String::from_utf8(bytes).ok()).flatten()
}

/// Percent-encodes `text` for a query-string value (everything but unreserved characters).
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A name or value of a query or form.
fn form_component(text: &str) -> String {
    String::from_utf8_lossy(&unescape(text, true).0).into_owned()
}

/// The bytes `text` stands for: `%XX` is the byte `XX` (hex, any case), `+` a space when
/// `plus_is_space`; a malformed escape is kept as written and the flag is `false`.
fn unescape(text: &str, plus_is_space: bool) -> (Vec<u8>, bool) {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut well_formed = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' => match text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
                Some(byte) => {
                    out.push(byte);
                    i += 2;
                }
                None => {
                    out.push(b'%');
                    well_formed = false;
                }
            },
            b => out.push(b),
        }
        i += 1;
    }
    (out, well_formed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlencoded_text_is_decoded() {
        let pairs = parse_urlencoded("rn=F%2F1+a&x=%zz&empty=&flag&u=%C3%A9");
        assert_eq!(field(&pairs, "rn"), Some("F/1 a"));
        assert_eq!(field(&pairs, "x"), Some("%zz"));
        assert_eq!(field(&pairs, "empty"), Some(""));
        assert_eq!(field(&pairs, "flag"), Some(""));
        assert_eq!(field(&pairs, "u"), Some("é"));
        assert_eq!(field(&pairs, "missing"), None);
        let text = "a b&c=d/\"'<é";
        assert_eq!(
            field(&parse_urlencoded(&format!("q={}", url_encode(text))), "q"),
            Some(text)
        );
    }

    #[test]
    fn a_query_gives_its_first_value_of_a_name() {
        let query = Some("layout=80mm&width=&layout=58mm");
        let pairs = query_pairs(query);
        assert_eq!(field(&pairs, "layout"), Some("80mm"));
        assert_eq!(field(&pairs, "width"), Some(""));
        assert_eq!(field(&pairs, "scale"), None);
        assert!(query_pairs(None).is_empty());
    }

    #[test]
    fn path_segments_are_decoded_exactly() {
        assert_eq!(
            percent_decode("F-2026%2F001").as_deref(),
            Some("F-2026/001")
        );
        assert_eq!(percent_decode("A%20B").as_deref(), Some("A B"));
        assert_eq!(percent_decode("A+B").as_deref(), Some("A+B"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
        assert_eq!(percent_decode("%ff"), None);
    }
}
