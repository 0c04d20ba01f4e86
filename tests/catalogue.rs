//! Every message the code asks for exists in both languages: finds each `msg!("id"` in `src/`
//! and looks it up in the French and the English catalogue (the catalogue's own tests check
//! that the two languages have the same messages with the same variables).

use std::path::Path;

use emcf_gateway::i18n::{catalogue, Lang};

/// The ids written as `msg!("id"` in `text`.
fn ids_in(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("msg!(") {
        rest = &rest[at + "msg!(".len()..];
        let trimmed = rest.trim_start();
        if let Some(literal) = trimmed.strip_prefix('"') {
            if let Some(end) = literal.find('"') {
                ids.push(literal[..end].to_owned());
            }
        }
    }
    ids
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_scanner_finds_ids() {
    let text = "let a = msg!(\"err-one\"); let b = crate::msg!(\n    \"err-two\", n = 3);";
    assert_eq!(ids_in(text), ["err-one", "err-two"]);
}

#[test]
fn every_message_the_code_uses_exists_in_french_and_in_english() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut used = 0;
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for id in ids_in(&text) {
            // The macro's own definition and documentation.
            if id == "id" {
                continue;
            }
            used += 1;
            for lang in Lang::ALL {
                if !catalogue::has(lang, &id) {
                    missing.push(format!("{}: {id} is missing in {lang}", file.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "messages missing:\n{}",
        missing.join("\n")
    );
    assert!(used > 0, "no msg! found under {}", root.display());
}
