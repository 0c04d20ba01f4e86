//! The literals of Rust source that read like words, and where they are, for the guard of
//! `tests/catalogue.rs`: a small lexer (comments, attributes, raw and byte strings, char
//! literals and lifetimes, `#[cfg(test)]` items) that knows which macro or call each literal
//! is in, so that log lines, panics, attributes and `msg!` ids are left out.

/// A literal that reads like words, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wording {
    /// Its line (from 1).
    pub line: usize,
    /// Its text as written (escapes kept).
    pub text: String,
}

/// Macros and calls whose texts are not for a person who uses the gateway.
const EXEMPT_CONTEXTS: &[&str] = &[
    "trace",
    "debug",
    "info",
    "warn",
    "error",
    "event",
    "span",
    "trace_span",
    "debug_span",
    "info_span",
    "warn_span",
    "error_span",
    "instrument",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "expect",
    "include_str",
    "include_bytes",
    "env",
];

/// Whether `text` reads like words: two runs of two letters or more with a space between
/// them, once `{placeholders}`, `<tags>` and escapes are taken out.
pub fn reads_like_words(text: &str) -> bool {
    let mut plain = String::new();
    let mut depth_brace = 0usize;
    let mut in_tag = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // An escape (`\n`, `\"`) ends a word: `body{..}\nmain{..}` is CSS, not words.
            '\\' => {
                chars.next();
                plain.push('\0');
            }
            '{' => depth_brace += 1,
            '}' => depth_brace = depth_brace.saturating_sub(1),
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                plain.push(' ');
            }
            _ if depth_brace > 0 || in_tag => {}
            c => plain.push(c),
        }
    }
    // A word: two letters or more, one of them lower case (`GET, HEAD` is not words), with
    // punctuation around it at most ("key:", "(this").
    let letters = |w: &str| {
        let core = w.trim_matches(|c: char| !c.is_alphabetic());
        core.chars().count() >= 2
            && core.chars().any(char::is_lowercase)
            && core
                .chars()
                .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
            && w.chars()
                .all(|c| c.is_alphabetic() || c == '\'' || c == '-' || ":,.;?!()\"«»".contains(c))
    };
    // Spaces around a placeholder taken out still separate two words: "{} saved".
    let words: Vec<&str> = plain.split(' ').filter(|w| !w.is_empty()).collect();
    words
        .windows(2)
        .any(|pair| letters(pair[0]) && letters(pair[1]))
}

/// The literals of `source` that read like words and are not in an exempt context.
pub fn wordings(source: &str) -> Vec<Wording> {
    let bytes: Vec<char> = source.chars().collect();
    let mut found = Vec::new();
    // (opening delimiter, the macro or call it opens, whether a msg! id is next)
    let mut stack: Vec<(char, Option<String>)> = Vec::new();
    let mut idents: Vec<String> = Vec::new(); // the last identifiers and `!` seen
    let mut line = 1;
    let mut i = 0;
    let mut skip_next_item = false;
    let mut msg_id_next = false;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied().unwrap_or('\0');
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        // Comments, doc comments included.
        if c == '/' && next == '/' {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == '*' {
            let mut depth = 0;
            while i < bytes.len() {
                if bytes[i] == '/' && bytes.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if bytes[i] == '*' && bytes.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if bytes[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            continue;
        }
        // Attributes: skipped whole; `#[cfg(test)]` skips the item after it.
        if c == '#' && (next == '[' || (next == '!' && bytes.get(i + 2) == Some(&'['))) {
            let start = i;
            let mut depth = 0;
            while i < bytes.len() {
                match bytes[i] {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    '\n' => line += 1,
                    '"' => {
                        // A string inside the attribute: skip it whole.
                        i += 1;
                        while i < bytes.len() && bytes[i] != '"' {
                            if bytes[i] == '\\' {
                                i += 1;
                            }
                            if bytes.get(i) == Some(&'\n') {
                                line += 1;
                            }
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            let attribute: String = bytes[start..i.min(bytes.len())].iter().collect();
            let compact: String = attribute.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.starts_with("#[cfg(test)]") || compact.starts_with("#[cfg(all(test") {
                skip_next_item = true;
            }
            continue;
        }
        // Strings: normal, raw, byte.
        let raw_start = (c == 'r' && (next == '"' || next == '#'))
            || (c == 'b' && next == 'r' && matches!(bytes.get(i + 2), Some('"' | '#')));
        let previous_is_ident = i > 0 && (bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if raw_start && !previous_is_ident {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while bytes.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if bytes.get(j) == Some(&'"') {
                let start_line = line;
                let mut text = String::new();
                j += 1;
                loop {
                    if j >= bytes.len() {
                        break;
                    }
                    if bytes[j] == '"' && (0..hashes).all(|k| bytes.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    if bytes[j] == '\n' {
                        line += 1;
                    }
                    text.push(bytes[j]);
                    j += 1;
                }
                i = j;
                note(&mut found, &stack, &mut msg_id_next, start_line, text);
                continue;
            }
        }
        if c == '"' || (c == 'b' && next == '"' && !previous_is_ident) {
            let start_line = line;
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut text = String::new();
            while j < bytes.len() && bytes[j] != '"' {
                if bytes[j] == '\\' {
                    text.push('\\');
                    j += 1;
                    if bytes.get(j) == Some(&'\n') {
                        line += 1;
                        // A line continuation: one space, not the next line's indentation.
                        text.pop();
                        text.push(' ');
                        j += 1;
                        while bytes.get(j).is_some_and(|c| c.is_whitespace()) {
                            if bytes[j] == '\n' {
                                line += 1;
                            }
                            j += 1;
                        }
                        continue;
                    }
                }
                if bytes.get(j) == Some(&'\n') {
                    line += 1;
                }
                if let Some(&ch) = bytes.get(j) {
                    text.push(ch);
                }
                j += 1;
            }
            i = j + 1;
            note(&mut found, &stack, &mut msg_id_next, start_line, text);
            continue;
        }
        // Char literals and lifetimes.
        if c == '\'' {
            let close = if next == '\\' {
                (i + 2..(i + 12).min(bytes.len())).find(|&k| bytes[k] == '\'')
            } else if bytes.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            i = close.map_or(i + 1, |k| k + 1);
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_alphanumeric() || bytes[i] == '_') {
                i += 1;
            }
            idents.push(bytes[start..i].iter().collect());
            continue;
        }
        match c {
            '!' => idents.push("!".to_owned()),
            '(' | '[' | '{' => {
                let name = match idents.as_slice() {
                    [.., name, bang] if bang == "!" => Some(name.clone()),
                    [.., name] if c == '(' => Some(name.clone()),
                    _ => None,
                };
                msg_id_next =
                    name.as_deref() == Some("msg") && idents.last().is_some_and(|b| b == "!");
                if skip_next_item && c == '{' {
                    // Skip the whole test item.
                    let mut depth = 0;
                    while i < bytes.len() {
                        match bytes[i] {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            '\n' => line += 1,
                            '"' => {
                                i += 1;
                                while i < bytes.len() && bytes[i] != '"' {
                                    if bytes[i] == '\\' {
                                        i += 1;
                                    }
                                    if bytes.get(i) == Some(&'\n') {
                                        line += 1;
                                    }
                                    i += 1;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    skip_next_item = false;
                    idents.clear();
                    i += 1;
                    continue;
                }
                stack.push((c, name));
                idents.clear();
            }
            ')' | ']' | '}' => {
                stack.pop();
                idents.clear();
            }
            ';' => {
                skip_next_item = false;
                idents.clear();
            }
            ':' | '.' | '&' | '<' | '>' => {}
            c if c.is_whitespace() => {}
            _ => idents.clear(),
        }
        i += 1;
    }
    found
}

/// Keeps `text` (a literal at `line`) if it reads like words outside an exempt context.
fn note(
    found: &mut Vec<Wording>,
    stack: &[(char, Option<String>)],
    msg_id_next: &mut bool,
    line: usize,
    text: String,
) {
    if std::mem::take(msg_id_next) {
        return;
    }
    let exempt = stack
        .iter()
        .filter_map(|(_, name)| name.as_deref())
        .any(|name| EXEMPT_CONTEXTS.contains(&name));
    if !exempt && reads_like_words(&text) {
        found.push(Wording { line, text });
    }
}
