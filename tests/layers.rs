//! The layer rules of ARCHITECTURE.md, checked on the source: a module names (through
//! `crate::...` paths, in `use` lines or inline) only the modules its layer may depend on.
//! A later change that quietly crosses a layer fails here, naming the file, the line and
//! the rule.

use std::fs;
use std::path::{Path, PathBuf};

/// (module folder under `src/`, files excluded from the rule, modules it must not name, why)
const RULES: &[(&str, &[&str], &[&str], &str)] = &[
    (
        "api",
        &[],
        &["device", "store", "mcf_sfe"],
        "the HTTP layer talks to certify and admin only",
    ),
    (
        "dashboard",
        &[],
        &["device", "store", "mcf_sfe"],
        "the HTML layer talks to certify and admin only",
    ),
    (
        "certify",
        &["certify/mcf"],
        &["device", "api", "dashboard", "admin", "cli"],
        "only the box channel (certify/mcf) knows the device link: the use case sees a Channel",
    ),
    (
        "device",
        &[],
        &["certify", "store", "api", "dashboard", "admin", "cli"],
        "the port's owner knows frames and the link, not invoices or the register",
    ),
    (
        "store",
        &[],
        &["certify", "device", "api", "dashboard", "admin", "cli"],
        "the register knows records, not who writes them",
    ),
    (
        "model",
        &[],
        &[
            "certify",
            "device",
            "store",
            "api",
            "dashboard",
            "admin",
            "cli",
            "i18n",
        ],
        "plain data shared by all: i18n names model (the names of its codes), not the reverse",
    ),
    (
        "receipt",
        &[],
        &[
            "certify",
            "device",
            "store",
            "api",
            "dashboard",
            "admin",
            "cli",
            "mcf_sfe",
        ],
        "the printable fiscal block is drawn from a register entry alone, for api and dashboard",
    ),
    (
        "alerts",
        &[],
        &["device", "store", "api", "dashboard", "cli", "mcf_sfe"],
        "alerts watch through certify and admin, and are shown by the dashboard, never the reverse",
    ),
    (
        "notices",
        &[],
        &[
            "certify",
            "device",
            "store",
            "api",
            "dashboard",
            "admin",
            "cli",
            "alerts",
            "mcf_sfe",
        ],
        "change notices are a state file of their own, read by admin, alerts, api and dashboard",
    ),
    (
        "markup",
        &[],
        &[
            "certify",
            "device",
            "store",
            "api",
            "dashboard",
            "admin",
            "cli",
            "mcf_sfe",
        ],
        "one HTML escape, below every page",
    ),
    (
        "admin",
        &[],
        &["device", "api", "dashboard", "cli", "mcf_sfe"],
        "administration works on the store, whatever the channel",
    ),
    (
        "i18n",
        &[],
        &[
            "certify",
            "device",
            "store",
            "api",
            "dashboard",
            "admin",
            "cli",
            "config",
            "alerts",
            "receipt",
            "mcf_sfe",
        ],
        "the catalogue is used by every layer and names none of them (errors say their \
         message through i18n::Localized, next to their type)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
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

/// The files of module `name` (`src/name.rs` and everything under `src/name/`).
fn module_files(src: &Path, name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let single = src.join(format!("{name}.rs"));
    if single.exists() {
        files.push(single);
    }
    rust_files(&src.join(name), &mut files);
    files.sort();
    files
}

/// The modules a line names: `crate::x`, `crate::{x, y::z}`, and the crate `mcf_sfe`.
fn named_modules(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or_default();
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let head = part.trim().split("::").next().unwrap_or_default();
                if !head.is_empty() {
                    names.push(head.to_owned());
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(head);
        }
    }
    if code.contains("mcf_sfe::") {
        names.push("mcf_sfe".to_owned());
    }
    names
}

#[test]
fn each_layer_names_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    let mut checked = 0;
    for (module, excluded, forbidden, why) in RULES {
        let files = module_files(&src, module);
        assert!(!files.is_empty(), "no source for module {module}");
        for file in files {
            let relative = file.strip_prefix(&src).unwrap_or(&file).to_string_lossy();
            let relative = relative.replace('\\', "/");
            if excluded.iter().any(|e| relative.starts_with(e)) {
                continue;
            }
            let text = fs::read_to_string(&file).expect("read a source file");
            checked += 1;
            for (number, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if trimmed.starts_with("//") {
                    continue;
                }
                for name in named_modules(line) {
                    if forbidden.contains(&name.as_str()) {
                        broken.push(format!(
                            "src/{relative}:{}: names {name}: {why}",
                            number + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} files checked");
    assert!(
        broken.is_empty(),
        "layer rules broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_reader_sees_grouped_and_inline_paths() {
    assert_eq!(named_modules("use crate::device::LinkStatus;"), ["device"]);
    assert_eq!(
        named_modules("use crate::{device::X, store};"),
        ["device", "store"]
    );
    assert_eq!(
        named_modules("let x = crate::store::open(); // crate::api"),
        ["store"]
    );
    assert_eq!(
        named_modules("mcf_sfe::command::code::name(cmd)"),
        ["mcf_sfe"]
    );
}
