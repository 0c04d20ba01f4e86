//! HTML escaping, one rule for every page the gateway draws (dashboard, landing page,
//! receipts, inline QR codes).

/// `text` with `& < > " '` replaced by entities: safe in element content and in quoted
/// attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            super::escape(r#"<a href="x">O'K & co</a>"#),
            "&lt;a href=&quot;x&quot;&gt;O&#39;K &amp; co&lt;/a&gt;"
        );
    }
}
