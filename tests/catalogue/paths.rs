//! Every repository path a comment or a document names exists: in the comments of the Rust
//! sources (`src/`, `protocols/`, `device-sim/`, `tests/`, `bench/`) and in every Markdown file
//! (frozen release fixtures under `tests/fixtures/` aside), a name such as `docs/design.md §4`,
//! `src/certify/service.rs`, `certify/box_channel/run.rs`, `tests/crash.rs`, `ARCHITECTURE.md` must
//! name a file or folder that is there, and a `§N` after a Markdown file a heading numbered N.
//!
//! A path is read from the repository's root, from the crate the file belongs to (its folder
//! with a `Cargo.toml`) and that crate's `src/`, or from the file's own folder. A name followed
//! by `*`, `<`, `{` or `$` is a pattern, not a path. Absolute paths and URLs are not checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Folders whose Rust comments are checked.
const SOURCE_DIRS: [&str; 5] = ["src", "protocols", "device-sim", "tests", "bench"];

/// First segments that make a name a repository path wherever it appears.
const ROOT_PREFIXES: [&str; 14] = [
    "docs/",
    "src/",
    "tests/",
    "protocols/",
    "device-sim/",
    "bench/",
    "interop/",
    "scripts/",
    "examples/",
    "packaging/",
    "systemd/",
    "locales/",
    "fuzz/",
    "fuzz-gateway/",
];

/// Folders never read: build output, tools, and frozen copies of older releases.
const SKIPPED: [&str; 6] = [
    "target",
    ".git",
    ".venv",
    "node_modules",
    "tests/fixtures",
    "fuzz/corpus",
];

/// Folders that exist only once a tool has run (fuzzing's corpus and crashes, build output):
/// a name under them is not checked.
const GENERATED: [&str; 5] = [
    "fuzz/artifacts",
    "fuzz/corpus",
    "fuzz-gateway/artifacts",
    "fuzz-gateway/corpus",
    "target/",
];

/// Names written as placeholders on purpose (`src/name.rs`: "the module called name").
const PLACEHOLDERS: [&str; 2] = ["src/name.rs", "src/name/"];

/// One path named in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Line number, from 1.
    pub line: usize,
    /// The path as written.
    pub path: String,
    /// The `§N` that follows it, if any.
    pub section: Option<String>,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')
}

/// The comment part of one line of Rust (`//`, `///`, `//!`, or a trailing `// ...` after
/// code outside a string), if any.
pub fn comment_of(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return Some(trimmed);
    }
    let at = line.find(" // ")?;
    let quotes = line[..at].matches('"').count();
    quotes.is_multiple_of(2).then(|| &line[at..])
}

/// The `§N` right after a path (`docs/design.md §4a`, `PROTOCOL.md §3.3-§5` gives `3.3`).
fn section_after(rest: &str) -> Option<String> {
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest.strip_prefix('§')?;
    let section: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    let section = section.trim_end_matches('.').to_owned();
    (!section.is_empty() && section.starts_with(|c: char| c.is_ascii_digit())).then_some(section)
}

/// The names in `text` that look like repository paths. `src_names` are the first segments
/// that make `a/b` a path (the folders and modules under a crate's `src/`).
pub fn names_in(text: &str, line: usize, src_names: &BTreeSet<String>) -> Vec<Named> {
    let mut found = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let prev = if i == 0 { None } else { Some(chars[i - 1].1) };
        if !is_path_char(c)
            || prev.is_some_and(|p| is_path_char(p) || matches!(p, ':' | '~' | '$' | '@'))
        {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && is_path_char(chars[j].1) {
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |(at, _)| *at);
        let next = chars.get(j).map(|(_, c)| *c);
        i = j;
        let raw = &text[start..end];
        let token = raw
            .strip_prefix("./")
            .unwrap_or(raw)
            .trim_end_matches(['.', '-']);
        if token.is_empty()
            || token.starts_with('/')
            || token.contains("//")
            || token.contains("..")
            || next.is_some_and(|n| matches!(n, '*' | '<' | '{' | '$'))
        {
            continue;
        }
        if GENERATED.iter().any(|g| token.starts_with(g)) || PLACEHOLDERS.contains(&token) {
            continue;
        }
        let first = token.split('/').next().unwrap_or("");
        let last = token.rsplit('/').next().unwrap_or("");
        // `certify/box_channel` in backticks names a module folder; `invoices/s` in prose does not,
        // nor does `config/config.toml` (a file inside a copy, not under `src/`).
        let module = prev == Some('`')
            && token.contains('/')
            && src_names.contains(first)
            && (!last.contains('.') || last.ends_with(".rs"));
        let is_path = ROOT_PREFIXES.iter().any(|p| token.starts_with(p))
            || (token.ends_with(".md") && token.len() > 3)
            || (token.contains('/') && token.ends_with(".rs"))
            || module;
        if is_path {
            found.push(Named {
                line,
                path: token.to_owned(),
                section: section_after(&text[start + raw.len()..]),
            });
        }
    }
    found
}

/// Whether `markdown` has a heading numbered `section` (`## 4a. ...`, `### 3.3 ...`).
pub fn has_section(markdown: &str, section: &str) -> bool {
    markdown.lines().any(|line| {
        let Some(title) = line.strip_prefix('#') else {
            return false;
        };
        let title = title.trim_start_matches('#').trim_start();
        title
            .strip_prefix(section)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', ' ']))
    })
}

fn skipped(root: &Path, path: &Path) -> bool {
    let relative = path.strip_prefix(root).unwrap_or(path);
    SKIPPED.iter().any(|s| relative.starts_with(s))
        || relative
            .file_name()
            .is_some_and(|n| n == "target" || n == "node_modules" || n == ".git")
}

fn files_under(root: &Path, dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if skipped(root, &path) {
            continue;
        }
        if path.is_dir() {
            files_under(root, &path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

/// The folder with a `Cargo.toml` that holds `file` (the root at worst).
fn crate_of(root: &Path, file: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.join("Cargo.toml").is_file() || d == root {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    root.to_path_buf()
}

/// The first segments under `crate_dir/src` (folders, and modules without `.rs`).
fn src_names(crate_dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(crate_dir.join("src")) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let name = path.file_stem()?.to_str()?.to_owned();
            (path.is_dir() || path.extension().is_some_and(|x| x == "rs")).then_some(name)
        })
        .filter(|n| n != "lib" && n != "main" && n != "tests")
        .collect()
}

/// Every `.md` file name in the repository (a bare `PROTOCOL.md` names the one there is).
fn markdown_names(root: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    files_under(root, root, "md", &mut files);
    files
        .iter()
        .filter_map(|f| f.file_name()?.to_str().map(str::to_owned))
        .collect()
}

/// Where `name` (written in `file`) is, if anywhere.
fn resolve(root: &Path, file: &Path, name: &str, markdown: &BTreeSet<String>) -> Option<PathBuf> {
    let krate = crate_of(root, file);
    let here = file.parent().unwrap_or(root);
    let bases = [
        root.to_path_buf(),
        root.join("src"),
        krate.clone(),
        krate.join("src"),
        here.to_path_buf(),
    ];
    if let Some(found) = bases.iter().map(|b| b.join(name)).find(|p| p.exists()) {
        return Some(found);
    }
    if !name.contains('/') && markdown.contains(name) {
        let mut files = Vec::new();
        files_under(root, root, "md", &mut files);
        return files
            .into_iter()
            .find(|f| f.file_name().is_some_and(|n| n == name));
    }
    None
}

/// Every stale name in the tree at `root`, as `file:line: ...` lines.
pub fn stale_names(root: &Path) -> Vec<String> {
    let markdown = markdown_names(root);
    let gateway_names = src_names(root);
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        files_under(root, &root.join(dir), "rs", &mut files);
    }
    let rust_count = files.len();
    files_under(root, root, "md", &mut files);
    let mut stale = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let is_rust = index < rust_count;
        let mut names = src_names(&crate_of(root, file));
        names.extend(gateway_names.iter().cloned());
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            let part = if is_rust {
                match comment_of(line) {
                    Some(comment) => comment,
                    None => continue,
                }
            } else {
                line
            };
            for named in names_in(part, number + 1, &names) {
                match resolve(root, file, &named.path, &markdown) {
                    None => stale.push(format!(
                        "{shown}:{}: `{}` does not exist",
                        named.line, named.path
                    )),
                    Some(target) => {
                        let Some(section) = &named.section else {
                            continue;
                        };
                        if !named.path.ends_with(".md") {
                            continue;
                        }
                        let body = std::fs::read_to_string(&target).unwrap_or_default();
                        if !has_section(&body, section) {
                            stale.push(format!(
                                "{shown}:{}: `{} §{section}`: no heading numbered {section} there",
                                named.line, named.path
                            ));
                        }
                    }
                }
            }
        }
    }
    stale
}
