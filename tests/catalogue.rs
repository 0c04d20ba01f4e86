//! Every message the code asks for exists in both languages: finds each `msg!("id"` in `src/`
//! and looks it up in the French and the English catalogue (the catalogue's own tests check
//! that the two languages have the same messages with the same variables).

use std::path::Path;

use emcf_gateway::i18n::{catalogue, Lang};

#[path = "support/wording.rs"]
mod wording;

#[path = "catalogue/paths.rs"]
mod paths;

use wording::wordings;

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

// ---------------------------------------------------------------------------------------
// The guard: no person-facing text outside the catalogue.
//
// Every string literal of the non-test code under `src/` that reads like words (two words of
// letters with a space between them, once `{placeholders}` and `<tags>` are taken out) must
// be one of:
// - in a log line (`tracing`'s macros: logs stay English), a panic's or an assertion's text,
//   an attribute (`#[error("...")]` is the English `Display` for logs; `#[serde]`, `#[arg]`),
//   a comment or a doc comment, or test code (`#[cfg(test)]`, `tests.rs`, `tests/`);
// - the id of a `msg!` (the text is then the catalogue's);
// - in a file or a folder of [`TECHNICAL`], whose texts are technical by design, each with
//   why;
// - one of [`NOT_SENTENCES`], by its file and its beginning, each with why (an entry that
//   matches nothing fails too, so that the list never keeps what the code no longer has).
// Anything else fails, named by its file, its line and its text.
// ---------------------------------------------------------------------------------------

/// Files and folders (`src/` relative; a folder ends with `/`) whose literals are technical
/// texts by design, and why. Logs and the register's own records stay English; a person reads
/// them only as the technical detail of a catalogue message.
const TECHNICAL: &[(&str, &str)] = &[
    (
        "metrics/",
        "Prometheus HELP lines: read by monitoring tools, English by that format's convention",
    ),
    (
        "store/",
        "why a register record is damaged or refused: logs, and the technical detail of \
         StoreError's message (store-* in common.ftl)",
    ),
    (
        "device/actor.rs",
        "the link's reasons (port, frames, timeouts): logs, and the technical detail of \
         DeviceError's message (device-* in common.ftl)",
    ),
    ("device/actor/", "as device/actor.rs"),
    ("device/transport.rs", "as device/actor.rs"),
    ("device/session.rs", "as device/actor.rs"),
    ("device/mod.rs", "as device/actor.rs"),
    (
        "certify/box_channel/commands.rs",
        "the box channel's diagnostics: logs, and the reasons journaled with an abandoned \
         intent (the register keeps them as written)",
    ),
    ("certify/box_channel/readings.rs", "as certify/box_channel/commands.rs"),
    ("certify/box_channel/run.rs", "as certify/box_channel/commands.rs"),
    ("certify/box_channel/settle_from_c1h.rs", "as certify/box_channel/commands.rs"),
    (
        "certify/web_api_channel/calls.rs",
        "the web API channel's diagnostics (HTTP, the DGI's answers): as certify/box_channel/commands.rs",
    ),
    ("certify/web_api_channel/client.rs", "as certify/web_api_channel/calls.rs"),
    ("certify/web_api_channel/run.rs", "as certify/web_api_channel/calls.rs"),
    ("certify/web_api_channel/settle_from_pending.rs", "as certify/web_api_channel/calls.rs"),
    (
        "keys.rs",
        "why a presented API key is malformed: logs only (the client reads err-api-key-invalid)",
    ),
    (
        "qr.rs",
        "QR and PNG encoding faults: logs only (a page says qr-not-drawn)",
    ),
    ("notify.rs", "the sd_notify socket's faults: logs only"),
    (
        "alerts/kind.rs",
        "the alerts' state file and relay diagnostics: logs, and the technical detail of \
         cli-alerts-setup",
    ),
    ("alerts/state.rs", "as alerts/kind.rs"),
    ("alerts/mail.rs", "as alerts/kind.rs"),
    (
        "notices.rs",
        "the notices file's diagnostics: the technical detail of notice-file-damaged",
    ),
    ("receipt/html.rs", "CSS of the printable page"),
    ("dashboard/style.rs", "CSS of the dashboard"),
];

/// Why a `CertifyError::Internal` detail is not a sentence for a person.
const INTERNAL_DETAIL: &str =
    "the technical detail of CertifyError::Internal, for the log line; a person reads err-internal";

/// Why serde_json's texts in `certify/invoice/json.rs` are not sentences of ours.
const SERDE_JSON_TEXT: &str =
    "serde_json's own error text, matched to pick the catalogue's words (json-fault); never shown";

/// Why serde's texts in `config/unknown.rs` are not sentences of ours.
const SERDE_UNKNOWN_TEXT: &str = "serde's text of an unknown key or value (through the TOML \
    reader), matched to say it with the catalogue's words (config-unknown); never shown";

/// Literals that read like words but are not sentences for a person: (file, beginning, why).
const NOT_SENTENCES: &[(&str, &str, &str)] = &[
    ("config/unknown.rs", "unknown field `", SERDE_UNKNOWN_TEXT),
    (
        "cli/mod.rs",
        "index rebuild",
        "a command's name, the $command of cli-embedded-only (what the operator typed)",
    ),
    ("config/unknown.rs", "unknown variant `", SERDE_UNKNOWN_TEXT),
    ("config/unknown.rs", "one of ", SERDE_UNKNOWN_TEXT),
    ("certify/status.rs", "no configured device is named ", INTERNAL_DETAIL),
    ("certify/status.rs", "several devices are configured ", INTERNAL_DETAIL),
    ("certify/service/finish.rs", "certification task failed: ", INTERNAL_DETAIL),
    (
        "certify/service/finish.rs",
        "the certification failed unexpectedly",
        INTERNAL_DETAIL,
    ),
    ("certify/register_writer.rs", "store task failed: ", INTERNAL_DETAIL),
    (
        "certify/resolve.rs",
        "settled by an administrator as not certified: ",
        "the reason journaled with an abandoned intent: a record's field, kept as written (like \
         certify/box_channel's reasons)",
    ),
    (
        "cli/demo.rs",
        "  emcf-gateway ",
        "a command to type, the same in every language",
    ),
    (
        "cli/demo.rs",
        "live key: ",
        "the fixed lines scripts and tests read (module doc of cli/demo.rs)",
    ),
    (
        "cli/demo.rs",
        "curl -s ",
        "a command to type: an invoice's JSON",
    ),
    (
        "cli/serve.rs",
        "emcf-gateway listening on http://",
        "the fixed line scripts and tests read (cli/demo.rs)",
    ),
    (
        "config/error.rs",
        " at line {line}",
        "ConfigError's English Display, for logs (its message is config-parse-at)",
    ),
    (
        "dashboard/web.rs",
        "default-src ",
        "a Content-Security-Policy header value",
    ),
    (
        "dashboard/receipt.rs",
        "default-src ",
        "a Content-Security-Policy header value",
    ),
    (
        "dashboard/invoices.rs",
        "num total",
        "CSS class names of a table cell",
    ),
    (
        "dashboard/signin.rs",
        "{message}<p>{}</p> <form method=",
        "the sign-in form's HTML with a command to type; every sentence in it is from the catalogue",
    ),
    (
        "certify/invoice/json.rs",
        " at line ",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "EOF while parsing ",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "expected ",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "key must be a string",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "invalid ",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "number out of range",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "lone leading surrogate",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "unexpected end of hex escape",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "control character",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "trailing c",
        SERDE_JSON_TEXT,
    ),
    (
        "certify/invoice/json.rs",
        "recursion limit exceeded",
        SERDE_JSON_TEXT,
    ),
    (
        "i18n/names.rs",
        "dashboard of ",
        "the marker a settlement from the dashboard journals in its source (dashboard/in_doubt.rs), \
         read back to say it in the reader's words",
    ),
    (
        "dashboard/in_doubt.rs",
        "dashboard of ",
        "as i18n/names.rs: the marker journaled with a settlement, a record's field",
    ),
    (
        "dashboard/session_file.rs",
        "version ",
        "the technical reason of SessionFileError::Damaged, for the log line",
    ),
    (
        "dashboard/signin.rs",
        "this address",
        "a value of the throttling's log line (its page text is dash-signin-whose-address)",
    ),
    (
        "dashboard/signin.rs",
        "this organization",
        "a value of the throttling's log line (its page text is dash-signin-whose-org)",
    ),
    (
        "dashboard/mod.rs",
        "foreign origin",
        "the reason of a refusal's log line (its page text is dash-err-csrf)",
    ),
    (
        "dashboard/mod.rs",
        "missing or wrong CSRF token",
        "the reason of a refusal's log line (its page text is dash-err-csrf)",
    ),
    (
        "dashboard/mod.rs",
        "dashboard task failed: ",
        "the technical detail of admin-socket-failed",
    ),
];

#[test]
fn the_guard_finds_what_a_person_would_read() {
    let code = r##"
fn run() -> anyhow::Result<()> {
    println!("live key: {x}");
    eprintln!("organization {} saved", id);
    bail!("the box did not answer");
    let r = thing().context("starting the async runtime")?;
    let t = format!("{} : {e}", "the register cannot be opened");
    let d = "# HELP the metric";
    info!(%x, "logs stay in English");
    tracing::warn!("so do warnings");
    let m = msg!("cli-error", text = format!("sneaky words here {e}"));
    let id = msg!("cli-demo-try");
    assert!(ok, "a failed assertion says this");
    let h = format!("<span class=\"badge {}\">{}</span>", a, b);
    let c = 'x'; let l: &'static str = "plain";
    let raw = r#"raw words here"#;
    Ok(())
}
/// Doc comments say "anything they like".
#[error("for logs in English")]
struct E;
#[cfg(test)]
mod tests {
    fn t() { let _ = "words in a test"; }
}
"##;
    let found: Vec<String> = wordings(code).into_iter().map(|w| w.text).collect();
    assert_eq!(
        found,
        [
            "live key: {x}",
            "organization {} saved",
            "the box did not answer",
            "starting the async runtime",
            "the register cannot be opened",
            "# HELP the metric",
            "sneaky words here {e}",
            "raw words here",
        ]
    );
    let lines: Vec<usize> = wordings(code).into_iter().map(|w| w.line).collect();
    assert_eq!(lines[..3], [3, 4, 5]);
}

#[test]
fn every_person_facing_text_of_src_comes_from_the_catalogue() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    // Files of modules declared `#[cfg(test)] mod name;` are test code too.
    let mut test_modules = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let compact: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
        let dir = file.parent().unwrap_or(&root);
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let base = if matches!(stem, "mod" | "lib" | "main") {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        for part in compact.split("#[cfg(test)] mod ").skip(1) {
            if let Some(name) = part.split(';').next().filter(|n| !n.contains(' ')) {
                let declared = base.join(format!("{name}.rs"));
                if let Ok(relative) = declared.strip_prefix(&root) {
                    test_modules.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    let mut untranslated = Vec::new();
    let mut allowed_seen = vec![false; NOT_SENTENCES.len()];
    let mut scanned = 0;
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        let test_code = relative.ends_with("tests.rs")
            || relative.contains("/tests/")
            || relative.starts_with("tests/");
        let technical = TECHNICAL.iter().any(|(place, _)| {
            relative == *place || (place.ends_with('/') && relative.starts_with(place))
        });
        if test_code || technical || test_modules.contains(&relative) {
            continue;
        }
        scanned += 1;
        let source = std::fs::read_to_string(file).unwrap_or_default();
        for wording in wordings(&source) {
            let allowed = NOT_SENTENCES.iter().position(|(place, start, _)| {
                relative == *place && wording.text.starts_with(start)
            });
            match allowed {
                Some(at) => allowed_seen[at] = true,
                None => untranslated.push(format!(
                    "src/{relative}:{}: {:?}",
                    wording.line, wording.text
                )),
            }
        }
    }
    let stale: Vec<String> = NOT_SENTENCES
        .iter()
        .zip(&allowed_seen)
        .filter(|(_, seen)| !**seen)
        .map(|((place, start, _), _)| format!("src/{place}: {start:?}"))
        .collect();
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(
        untranslated.is_empty() && stale.is_empty(),
        "texts a person reads must come from the catalogue (msg! with locales/*/*.ftl; logs use \
         tracing and stay English; technical texts belong to TECHNICAL with why):\n{}\n\
         NOT_SENTENCES entries that match nothing any more (remove them):\n{}",
        untranslated.join("\n"),
        stale.join("\n")
    );
}

/// The docs quote the French output as the program prints it (its no-break spaces before
/// `:` and `;` included), and their French summaries follow the same typography.
#[test]
fn the_docs_show_the_french_output_as_printed() {
    use emcf_gateway::msg;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect(path);
    let printed = [
        (
            "docs/notices.md",
            msg!(
                "cli-notice-org",
                id = 1i64,
                org = "acme",
                state = msg!("cli-notice-org-sent", at = "26/11/2026 22:10:03 UTC+01:00")
            ),
        ),
        (
            "docs/notices.md",
            msg!(
                "cli-notice-org",
                id = 1i64,
                org = "bobo",
                state = msg!("cli-notice-org-pending")
            ),
        ),
        (
            "docs/notices.md",
            msg!(
                "cli-notice-late",
                id = 2i64,
                pending = 1i64,
                date = "20/12/2026",
                days = 30i64
            ),
        ),
        (
            "docs/backup.md",
            msg!(
                "backup-done",
                dir = "/var/backups/emcf-gateway/emcf-backup-20261126T020000Z",
                records = 1204i64,
                entries = 1187i64,
                files = 7i64,
                head = "6a9bfb9cdd9086e9f96eb821dc7b56e1faa7eb0f65994a46bb4d35de8dd246b0"
            ),
        ),
    ];
    for (path, message) in printed {
        let line = message.render(Lang::Fr);
        assert!(read(path).contains(&line), "{path} should show {line:?}");
    }
    // The French summary of the integrators' page, and the banner quoted by backup.md.
    let summary = read("docs/integrators/versions.md");
    let french: String = summary
        .lines()
        .skip_while(|l| !l.starts_with("**En bref (français).**"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(french.len() > 200, "the French summary is read: {french:?}");
    for mark in [" :", " ;", " ?", " !", " »", "« "] {
        assert!(!french.contains(mark), "{mark:?} in {french:?}");
    }
    let banner = msg!("dash-alert-backup-old", at = "…").render(Lang::Fr);
    let quoted = banner.split(", il y a").nth(1).expect("banner");
    let quoted: String = quoted.chars().take(70).collect();
    let backup = read("docs/backup.md").replace("\n  ", " ");
    assert!(
        backup.contains(&quoted),
        "docs/backup.md should quote {quoted:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Every repository path a comment or a document names exists (`catalogue/paths.rs`).

#[test]
fn every_path_a_comment_or_a_document_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stale = paths::stale_names(root);
    assert!(
        stale.is_empty(),
        "{} name(s) of files or sections that are not there (a file moved or renamed? point \
         the comment or the document at its new place; in code, edit comment lines only):\n{}",
        stale.len(),
        stale.join("\n")
    );
}

#[test]
fn the_path_check_finds_a_missing_file_and_a_missing_section() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(path, text).expect("a file");
    };
    write("Cargo.toml", "[package]\n");
    write(
        "docs/guide.md",
        "# Guide\n\n## 1. One\n\n## 4a. Web\n\nSee `src/certify/run.rs`.\n",
    );
    let source = [
        "//! Certifies (docs/guide.md §1, docs/guide.md §4a, `certify`, certify/run.rs).",
        "/// Gone: docs/gone.md, certify/box_channel/run.rs, docs/guide.md §2, `certify/box_channel`.",
        "fn f() { let s = \"docs/not-a-comment.md\"; } // see tests/none.rs",
        "// Not paths: tests/golden_*.rs, https://example.com/docs/x.md, 10 invoices/s.",
    ];
    write("src/certify/run.rs", &source.join("\n"));
    let stale = paths::stale_names(root);
    assert_eq!(
        stale,
        [
            "src/certify/run.rs:2: `docs/gone.md` does not exist",
            "src/certify/run.rs:2: `certify/box_channel/run.rs` does not exist",
            "src/certify/run.rs:2: `docs/guide.md §2`: no heading numbered 2 there",
            "src/certify/run.rs:2: `certify/box_channel` does not exist",
            "src/certify/run.rs:3: `tests/none.rs` does not exist",
        ]
    );
}
