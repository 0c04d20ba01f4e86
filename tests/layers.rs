//! The layer rules of ARCHITECTURE.md, checked on the source: each module of `src/` names
//! (in a `use`, however rustfmt wraps it, or inline in code, a type, a pattern or a macro's
//! arguments) only the modules its layer is allowed to depend on, and the ruled crates
//! (`mcf_sfe`, `edef`, `sled`, `emcf_sim`) only where they belong.
//!
//! The sources are parsed with `syn`, from `src/lib.rs` and `src/main.rs` down every `mod`
//! (`#[path]` included, inline `mod x { .. }` too); `crate::`, `super::`, `self::` and a child
//! module's name are resolved to the module they name. Every `.rs` file under `src/` must be
//! reached, every module must have a rule: nothing is exempt. A broken rule fails naming the
//! file, the line, the path and the rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The crates outside this one that a rule may allow or forbid: the protocols (`mcf_sfe`,
/// `edef`), the index's database (`sled`) and the bundled simulator (`emcf_sim`). Other crates
/// (std, tokio, serde, hyper, ...) are not ruled.
const RULED_CRATES: &[&str] = &["mcf_sfe", "edef", "sled", "emcf_sim"];

/// The channels' folders under `src/certify/`, each a unit of its own (the box channel, the
/// web API channel). Renamed folders are renamed here and in the rules' unit names (a rule
/// for a unit that does not exist fails).
const CHANNEL_FOLDERS: &[&str] = &["mcf", "edef"];

/// A unit and what it may name. A unit is a top-level module of `src/`, except inside
/// `certify`, where each channel is a unit of its own: `certify/mcf` (the box channel) and
/// `certify/edef` (the web API channel); `certify` is the rest of it. `lib` is `src/lib.rs`,
/// `main` the binary's `src/main.rs`.
struct Rule {
    unit: &'static str,
    may_name: &'static [&'static str],
    why: &'static str,
}

/// Each unit's allowed dependencies (an allow-list: anything else it names fails). Below
/// everything, naming nothing: `arrivals`, `markup`, `atomic_file`, `failpoint`, `notify`,
/// `http_body`.
const RULES: &[Rule] = &[
    Rule {
        unit: "lib",
        may_name: &[],
        why: "the crate's root declares the modules and re-exports nothing",
    },
    Rule {
        unit: "main",
        may_name: &["cli"],
        why: "the binary hands everything to the CLI (anyhow at the edge)",
    },
    Rule {
        unit: "cli",
        may_name: &[
            "config",
            "api",
            "dashboard",
            "alerts",
            "admin",
            "certify",
            "device",
            "store",
            "notices",
            "metrics",
            "keys",
            "receipt",
            "qr",
            "i18n",
            "model",
            "markup",
            "http_body",
            "arrivals",
            "atomic_file",
            "failpoint",
            "notify",
            "emcf_sim",
        ],
        why: "the CLI is the edge: it reads the configuration and wires every layer (the \
              bundled simulator included); it builds the channels through certify and speaks \
              no protocol itself",
    },
    Rule {
        unit: "config",
        may_name: &[
            "alerts",
            "dashboard",
            "certify",
            "device",
            "store",
            "http_body",
            "i18n",
            "model",
            "mcf_sfe",
            "edef",
        ],
        why: "the configuration is at the edge with the CLI, and only the CLI names it: it \
              reads and checks the operator's file and turns it into each layer's own \
              settings (device::DeviceConfig, certify::EdefSettings, http_body::BodyLimits, \
              alerts::AlertSettings, dashboard::TrustedProxies), so that no layer depends on \
              the file's shape and each keeps its defaults",
    },
    Rule {
        unit: "api",
        may_name: &[
            "certify",
            "admin",
            "dashboard",
            "notices",
            "metrics",
            "receipt",
            "qr",
            "i18n",
            "model",
            "markup",
            "http_body",
        ],
        why: "the HTTP layer talks to certify and admin (never the device, the store, a \
              protocol or the configuration's file) and hands /dashboard to the dashboard",
    },
    Rule {
        unit: "dashboard",
        may_name: &[
            "certify",
            "admin",
            "alerts",
            "notices",
            "metrics",
            "receipt",
            "qr",
            "i18n",
            "model",
            "markup",
            "http_body",
            "atomic_file",
        ],
        why: "the HTML layer talks to certify and admin (never the device, the store, a \
              protocol or the configuration's file), and shows the alerts' banners",
    },
    Rule {
        unit: "alerts",
        may_name: &[
            "certify",
            "admin",
            "notices",
            "metrics",
            "i18n",
            "model",
            "atomic_file",
        ],
        why: "alerts watch through certify and admin, and are shown by the dashboard, never \
              the reverse",
    },
    Rule {
        unit: "admin",
        may_name: &[
            "store",
            "certify",
            "keys",
            "notices",
            "i18n",
            "model",
            "atomic_file",
            "failpoint",
        ],
        why: "administration works on the store, whatever the channel: of certify it names \
              only the rules of what an administrator types (a settlement, an amount's limit)",
    },
    Rule {
        unit: "certify",
        may_name: &[
            "certify/mcf",
            "certify/edef",
            "store",
            "keys",
            "metrics",
            "arrivals",
            "i18n",
            "model",
            "failpoint",
        ],
        why: "the use case sees a Channel: only its channels know how an invoice travels \
              (certify/mcf the box: device and mcf_sfe; certify/edef the web API: edef)",
    },
    Rule {
        unit: "certify/mcf",
        may_name: &[
            "certify",
            "device",
            "mcf_sfe",
            "metrics",
            "arrivals",
            "i18n",
            "model",
            "failpoint",
        ],
        why: "the box channel: the only part of certify that knows the device and MCF-SFE; \
              it writes through certify's journal, and knows nothing of the web API channel",
    },
    Rule {
        unit: "certify/edef",
        may_name: &[
            "certify",
            "edef",
            "metrics",
            "arrivals",
            "i18n",
            "model",
            "failpoint",
        ],
        why: "the web API channel: the only part of certify that knows the DGI's web API; it \
              writes through certify's journal, and knows nothing of the box or its protocol",
    },
    Rule {
        unit: "device",
        may_name: &["mcf_sfe", "metrics", "arrivals", "i18n", "model"],
        why: "the port's owner knows frames and the link, not invoices or the register",
    },
    Rule {
        unit: "store",
        may_name: &["sled", "i18n", "model", "atomic_file", "failpoint"],
        why: "the register knows records, not who writes them; the only user of sled",
    },
    Rule {
        unit: "model",
        may_name: &[],
        why: "plain data shared by all: i18n names model (the names of its codes), not the \
              reverse",
    },
    Rule {
        unit: "i18n",
        may_name: &["model"],
        why: "the catalogue is used by every layer and names none of them (errors say their \
              message through i18n::Localized, next to their type)",
    },
    Rule {
        unit: "receipt",
        may_name: &["qr", "i18n", "model", "markup"],
        why: "the printable fiscal block is drawn from a register entry alone, for api and \
              dashboard",
    },
    Rule {
        unit: "qr",
        may_name: &["markup"],
        why: "the QR code of a register entry's text, for receipts, api and dashboard",
    },
    Rule {
        unit: "notices",
        may_name: &["i18n", "atomic_file"],
        why: "change notices are a state file of their own, read by admin, alerts, api and \
              dashboard",
    },
    Rule {
        unit: "metrics",
        may_name: &["mcf_sfe"],
        why: "the Prometheus text is fed by the layers and names none of them (of the box's \
              protocol, only the command names its labels carry)",
    },
    Rule {
        unit: "keys",
        may_name: &["model"],
        why: "the API key format: plain data and a check",
    },
    Rule {
        unit: "http_body",
        may_name: &[],
        why: "reading a request body under limits, below api and dashboard",
    },
    Rule {
        unit: "arrivals",
        may_name: &[],
        why: "a place in a channel's arrival order, below device and certify",
    },
    Rule {
        unit: "markup",
        may_name: &[],
        why: "one HTML escape, below every page",
    },
    Rule {
        unit: "atomic_file",
        may_name: &[],
        why: "one write-fsync-rename, below every state file",
    },
    Rule {
        unit: "failpoint",
        may_name: &[],
        why: "the crash harness's abort points, below every layer",
    },
    Rule {
        unit: "notify",
        may_name: &[],
        why: "a wake-up signal, below every layer",
    },
];

/// What code under `#[cfg(test)]` may name besides its unit's rule: the bundled simulator,
/// as the box of the unit tests beside the code.
const TESTS_MAY_ALSO_NAME: &[&str] = &["emcf_sim"];

/// TEMPORARY: violations inside certify that issue 26's other branches remove (the
/// channel-neutral invoice: `certify/invoice` built from box commands; the web API channel
/// checking the DGI's totals with `mcf_sfe` types). Each entry is (file, or folder ending in
/// `/`, under `src/`; what it names). The
/// lead deletes this list at merge; an entry that no longer matches anything fails, so it
/// cannot outlive its violation.
const TEMPORARY_ALLOWANCES_UNTIL_ISSUE_26_MERGE: &[(&str, &str)] = &[
    // `ValidInvoice` built from box commands (branch i26-invoice makes it channel-neutral).
    ("certify/invoice/", "mcf_sfe"),
    // The invoice's tax group, from mcf_sfe until the neutral invoice has its own.
    ("certify/admission/ceiling.rs", "mcf_sfe"),
    // The web API channel checks the DGI's totals with `mcf_sfe::reply::Subtotal`
    // (i26-invoice: edef/invoice.rs; i26-seam: edef/run.rs).
    ("certify/edef/invoice.rs", "mcf_sfe"),
    ("certify/edef/run.rs", "mcf_sfe"),
];

// ---------------------------------------------------------------------------------------
// The reader: modules, files, and what each names.

/// One source file reached from a crate root.
struct SourceFile {
    /// Path relative to the source root, `/`-separated (`certify/edef/run.rs`).
    relative: String,
    /// Its module path (`["certify", "edef", "run"]`); the binary's root is `["<main>"]`.
    module: Vec<String>,
    /// Reached through a `#[cfg(test)]` module.
    test: bool,
}

/// One name a file gives to another unit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    file: String,
    line: usize,
    /// The path as written (`crate::store::Store`, `super::super::device`, `mcf_sfe::Frame`).
    path: String,
    /// The unit named (`store`, `certify/mcf`, `mcf_sfe`).
    target: String,
    /// The unit of the file.
    from: String,
    /// In code under `#[cfg(test)]`.
    test: bool,
}

/// What went wrong while reading the tree (a file that does not parse, a `mod` without file,
/// a file no `mod` reaches).
type Problems = Vec<String>;

/// The unit of a module path.
fn unit_of(module: &[String]) -> String {
    match module {
        [] => "lib".to_owned(),
        [main, ..] if main == "<main>" => "main".to_owned(),
        [certify, channel, ..]
            if certify == "certify" && CHANNEL_FOLDERS.contains(&channel.as_str()) =>
        {
            format!("certify/{channel}")
        }
        [top, ..] => top.clone(),
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    // `#[cfg(test)]`, `#[cfg(any(test, ...))]`: code the tests compile.
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| tokens_have_ident(list.tokens.clone(), "test"))
    })
}

/// The attributes of an item that may carry `#[cfg(test)]`.
fn item_attrs(item: &syn::Item) -> Option<&[syn::Attribute]> {
    Some(match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => return None,
    })
}

fn tokens_have_ident(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == name,
        TokenTree::Group(group) => tokens_have_ident(group.stream(), name),
        _ => false,
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            return None;
        };
        if !nv.path.is_ident("path") {
            return None;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            _ => None,
        }
    })
}

/// The tree of a crate: every file reached from its root, with its module path.
struct Tree {
    root: PathBuf,
    files: Vec<SourceFile>,
    /// Every module path declared (`mod x;` or `mod x { .. }`), to resolve a child's name.
    modules: BTreeSet<Vec<String>>,
    /// `#[macro_export]` macros by name, with the module that defines them (`msg` -> i18n).
    exported_macros: BTreeMap<String, Vec<String>>,
    problems: Problems,
}

impl Tree {
    fn read(root: &Path, roots: &[(&str, Vec<String>)]) -> Tree {
        let mut tree = Tree {
            root: root.to_path_buf(),
            files: Vec::new(),
            modules: BTreeSet::new(),
            exported_macros: BTreeMap::new(),
            problems: Vec::new(),
        };
        for (file, module) in roots {
            tree.modules.insert(module.clone());
            tree.add_file(&root.join(file), module.clone(), true, false);
        }
        tree
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Reads `path` as the file of `module`; `mod_rs`: its children live beside it (a crate
    /// root or `mod.rs`), else in a folder of its name.
    fn add_file(&mut self, path: &Path, module: Vec<String>, mod_rs: bool, test: bool) {
        let relative = self.relative(path);
        let Ok(text) = fs::read_to_string(path) else {
            self.problems
                .push(format!("src/{relative}: cannot be read"));
            return;
        };
        let file = match syn::parse_file(&text) {
            Ok(file) => file,
            Err(error) => {
                self.problems
                    .push(format!("src/{relative}: does not parse: {error}"));
                return;
            }
        };
        let dir = path.parent().unwrap_or(&self.root).to_path_buf();
        let children_dir = if mod_rs {
            dir.clone()
        } else {
            dir.join(path.file_stem().unwrap_or_default())
        };
        self.files.push(SourceFile {
            relative,
            module: module.clone(),
            test,
        });
        self.walk_items(&file.items, &module, &dir, &children_dir, test);
    }

    /// The `mod` items and exported macros of one module's items. `file_dir`: the folder of
    /// the file they are in (`#[path]` is relative to it); `children_dir`: where a child's
    /// file is looked for.
    fn walk_items(
        &mut self,
        items: &[syn::Item],
        module: &[String],
        file_dir: &Path,
        children_dir: &Path,
        test: bool,
    ) {
        for item in items {
            match item {
                syn::Item::Mod(item_mod) => {
                    let name = item_mod.ident.to_string();
                    let mut child = module.to_vec();
                    child.push(name.clone());
                    self.modules.insert(child.clone());
                    let test = test || is_cfg_test(&item_mod.attrs);
                    if let Some((_, items)) = &item_mod.content {
                        let dir = children_dir.join(&name);
                        self.walk_items(items, &child, file_dir, &dir, test);
                        continue;
                    }
                    if let Some(explicit) = path_attr(&item_mod.attrs) {
                        let path = file_dir.join(explicit);
                        // A `#[path]` file's own children are found as for `mod.rs`.
                        self.add_file(&path, child, true, test);
                        continue;
                    }
                    let flat = children_dir.join(format!("{name}.rs"));
                    let nested = children_dir.join(&name).join("mod.rs");
                    if flat.exists() {
                        self.add_file(&flat, child, false, test);
                    } else if nested.exists() {
                        self.add_file(&nested, child, true, test);
                    } else {
                        self.problems.push(format!(
                            "module {} has no file under {}",
                            child.join("::"),
                            self.relative(children_dir)
                        ));
                    }
                }
                syn::Item::Macro(item_macro) => {
                    let exported = item_macro
                        .attrs
                        .iter()
                        .any(|a| a.path().is_ident("macro_export"));
                    if let (true, Some(name)) = (exported, &item_macro.ident) {
                        self.exported_macros
                            .insert(name.to_string(), module.to_vec());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Reads one file's references to other units.
struct Reader<'a> {
    tree: &'a Tree,
    file: &'a SourceFile,
    /// The module the visitor is in (the file's, or an inline module inside it).
    module: Vec<String>,
    /// Names brought into scope by this file's `use` items (a path starting with one was
    /// checked at its `use`).
    imported: BTreeSet<String>,
    /// Inside an item under `#[cfg(test)]` (or a file reached through one).
    test: bool,
    found: Vec<Reference>,
}

impl<'a> Reader<'a> {
    fn new(tree: &'a Tree, file: &'a SourceFile, syntax: &syn::File) -> Reader<'a> {
        let mut imported = BTreeSet::new();
        collect_imported(&syntax.items, &mut imported);
        Reader {
            tree,
            file,
            module: file.module.clone(),
            imported,
            test: file.test,
            found: Vec::new(),
        }
    }

    /// Resolves a path (its segments as written, `leading_colon`: `::x`) and records the unit
    /// it names, if it is another unit. `in_use`: from a `use` item (its first segment may be
    /// a child module or a crate only).
    fn record(&mut self, segments: &[String], leading_colon: bool, line: usize, in_use: bool) {
        let Some(first) = segments.first() else {
            return;
        };
        let written = format!(
            "{}{}",
            if leading_colon { "::" } else { "" },
            segments.join("::")
        );
        let is_main = self.file.module.first().is_some_and(|m| m == "<main>");
        let absolute: Vec<String> = if leading_colon {
            return self.record_crate(first, &written, line);
        } else if first == "crate" {
            let base = if is_main {
                vec!["<main>".to_owned()]
            } else {
                Vec::new()
            };
            base.into_iter()
                .chain(segments[1..].iter().cloned())
                .collect()
        } else if first == "self" || first == "super" {
            let mut module = self.module.clone();
            let mut rest = segments;
            while let Some(head) = rest.first() {
                match head.as_str() {
                    "self" => {}
                    "super" => {
                        module.pop();
                    }
                    _ => break,
                }
                rest = &rest[1..];
            }
            module.into_iter().chain(rest.iter().cloned()).collect()
        } else if is_main && first == "emcf_gateway" {
            segments[1..].to_vec()
        } else {
            let mut child = self.module.clone();
            child.push(first.clone());
            if self.tree.modules.contains(&child) {
                child
                    .into_iter()
                    .chain(segments[1..].iter().cloned())
                    .collect()
            } else if !in_use && self.imported.contains(first) {
                return;
            } else {
                return self.record_crate(first, &written, line);
            }
        };
        let target = self.unit_named(&absolute);
        self.push(target, written, line);
    }

    /// The unit an absolute path names: the longest declared module it starts with, or the
    /// module of an exported macro (`crate::msg` is i18n's).
    fn unit_named(&self, absolute: &[String]) -> String {
        let in_root = |name: &String| {
            let root: Vec<String> = absolute
                .first()
                .filter(|m| *m == "<main>")
                .cloned()
                .into_iter()
                .collect();
            let mut module = root;
            module.push(name.clone());
            module
        };
        let start = usize::from(absolute.first().is_some_and(|m| m == "<main>"));
        if let Some(name) = absolute.get(start) {
            if !self.tree.modules.contains(&in_root(name)) {
                if let Some(defined) = self.tree.exported_macros.get(name) {
                    return unit_of(defined);
                }
            }
        }
        // Only as many segments as are modules: `crate::certify::EdefSettings` is certify's.
        let mut module: Vec<String> = Vec::new();
        for segment in absolute {
            let mut next = module.clone();
            next.push(segment.clone());
            if self.tree.modules.contains(&next) {
                module = next;
            } else {
                break;
            }
        }
        unit_of(&module)
    }

    fn record_crate(&mut self, name: &str, written: &str, line: usize) {
        if RULED_CRATES.contains(&name) {
            self.push(name.to_owned(), written.to_owned(), line);
        }
    }

    fn push(&mut self, target: String, path: String, line: usize) {
        let from = unit_of(&self.file.module);
        if target != from {
            self.found.push(Reference {
                file: self.file.relative.clone(),
                line,
                path,
                target,
                from,
                test: self.test,
            });
        }
    }

    /// Paths inside a macro's arguments (`matches!(x, crate::device::Y)`, `format!(..)`):
    /// every `a::b::c` run of tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut index = 0;
        while index < trees.len() {
            match &trees[index] {
                TokenTree::Group(group) => {
                    self.scan_tokens(group.stream());
                    index += 1;
                }
                TokenTree::Ident(ident) => {
                    let leading = index >= 2 && is_path_sep(&trees, index - 2);
                    let after_path = index >= 3
                        && is_path_sep(&trees, index - 2)
                        && matches!(trees[index - 3], TokenTree::Ident(_));
                    let line = ident.span().start().line;
                    let mut segments = vec![ident.to_string()];
                    let mut next = index + 1;
                    while is_path_sep(&trees, next) {
                        match trees.get(next + 2) {
                            Some(TokenTree::Ident(more)) => {
                                segments.push(more.to_string());
                                next += 3;
                            }
                            _ => break,
                        }
                    }
                    if segments.len() > 1 && !after_path {
                        self.record(&segments, leading, line, false);
                    }
                    index = next.max(index + 1);
                }
                _ => index += 1,
            }
        }
    }
}

/// Whether `trees[at..]` starts with `::`.
fn is_path_sep(trees: &[TokenTree], at: usize) -> bool {
    matches!(
        (trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':' && a.spacing() == proc_macro2::Spacing::Joint
    )
}

/// The names `use` items bring into scope (the last segment, or its `as` name).
fn collect_imported(items: &[syn::Item], out: &mut BTreeSet<String>) {
    fn tree_names(tree: &syn::UseTree, out: &mut BTreeSet<String>) {
        match tree {
            syn::UseTree::Path(path) => tree_names(&path.tree, out),
            syn::UseTree::Name(name) => {
                out.insert(name.ident.to_string());
            }
            syn::UseTree::Rename(rename) => {
                out.insert(rename.rename.to_string());
            }
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    tree_names(item, out);
                }
            }
        }
    }
    for item in items {
        match item {
            syn::Item::Use(item_use) => tree_names(&item_use.tree, out),
            syn::Item::Mod(item_mod) => {
                if let Some((_, items)) = &item_mod.content {
                    collect_imported(items, out);
                }
            }
            syn::Item::Fn(item_fn) => collect_block_imports(&item_fn.block, out),
            _ => {}
        }
    }
    fn collect_block_imports(block: &syn::Block, out: &mut BTreeSet<String>) {
        for stmt in &block.stmts {
            if let syn::Stmt::Item(item) = stmt {
                collect_imported(std::slice::from_ref(item), out);
            }
        }
    }
}

/// Every full path of a `use` tree (`use crate::{a, b::{c, d}}`: `crate::a`, `crate::b::c`,
/// `crate::b::d`), with the line of its last segment.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, usize)>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_paths(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let mut full = prefix.clone();
            if name.ident != "self" {
                full.push(name.ident.to_string());
            }
            out.push((full, name.ident.span().start().line));
        }
        syn::UseTree::Rename(rename) => {
            let mut full = prefix.clone();
            if rename.ident != "self" {
                full.push(rename.ident.to_string());
            }
            out.push((full, rename.ident.span().start().line));
        }
        syn::UseTree::Glob(glob) => {
            out.push((prefix.clone(), glob.star_token.spans[0].start().line));
        }
        syn::UseTree::Group(group) => {
            for item in &group.items {
                use_paths(item, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&item.tree, &mut Vec::new(), &mut paths);
        let leading = item.leading_colon.is_some();
        for (segments, line) in paths {
            self.record(&segments, leading, line, true);
        }
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        let outer = self.test;
        self.test = outer || item_attrs(item).is_some_and(is_cfg_test);
        syn::visit::visit_item(self, item);
        self.test = outer;
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 || path.leading_colon.is_some() {
            let line = path.segments[0].ident.span().start().line;
            self.record(&segments, path.leading_colon.is_some(), line, false);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }
}

/// Every reference from one unit to another in the crate under `root` (`lib.rs`, and
/// `main.rs` when there is one), with the problems met reading it.
fn read_crate(root: &Path) -> (Vec<Reference>, Vec<SourceFile>, Problems) {
    let mut roots = vec![("lib.rs", Vec::new())];
    if root.join("main.rs").exists() {
        roots.push(("main.rs", vec!["<main>".to_owned()]));
    }
    let mut tree = Tree::read(root, &roots);
    let mut found = Vec::new();
    for file in &tree.files {
        let text = fs::read_to_string(root.join(&file.relative)).unwrap_or_default();
        let Ok(syntax) = syn::parse_file(&text) else {
            continue;
        };
        let mut reader = Reader::new(&tree, file, &syntax);
        reader.visit_file(&syntax);
        found.extend(reader.found);
    }
    let mut on_disk = Vec::new();
    rust_files(root, &mut on_disk);
    let reached: BTreeSet<String> = tree.files.iter().map(|f| f.relative.clone()).collect();
    for path in on_disk {
        let relative = tree.relative(&path);
        if !reached.contains(&relative) {
            tree.problems.push(format!(
                "src/{relative}: no `mod` reaches it (a file the compiler does not see cannot \
                 be checked: declare it or delete it)"
            ));
        }
    }
    found.sort();
    found.dedup();
    (found, tree.files, tree.problems)
}

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

/// The references that break a rule, each said with its file, line, path and rule; and the
/// temporary allowances that matched nothing.
fn broken(
    references: &[Reference],
    rules: &[Rule],
    allowances: &[(&str, &str)],
) -> (Vec<String>, Vec<String>) {
    let mut used = BTreeSet::new();
    let mut said = Vec::new();
    for reference in references {
        let Some(rule) = rules.iter().find(|r| r.unit == reference.from) else {
            said.push(format!(
                "src/{}:{}: `{}`: the unit {} has no rule in tests/layers.rs",
                reference.file, reference.line, reference.path, reference.from
            ));
            continue;
        };
        if rule.may_name.contains(&reference.target.as_str())
            || (reference.test && TESTS_MAY_ALSO_NAME.contains(&reference.target.as_str()))
        {
            continue;
        }
        if let Some(at) = allowances
            .iter()
            .position(|(file, target)| covers(file, &reference.file) && *target == reference.target)
        {
            used.insert(at);
            continue;
        }
        said.push(format!(
            "src/{}:{}: `{}` names {}, which {} may not name: {}",
            reference.file, reference.line, reference.path, reference.target, rule.unit, rule.why
        ));
    }
    let stale = allowances
        .iter()
        .enumerate()
        .filter(|(at, _)| !used.contains(at))
        .map(|(_, (file, target))| {
            format!(
                "temporary allowance (src/{file}, {target}) matches nothing any more: delete it"
            )
        })
        .collect();
    (said, stale)
}

/// Whether an allowance's `place` (a file, or a folder ending in `/`) holds `file`.
fn covers(place: &str, file: &str) -> bool {
    if place.ends_with('/') {
        file.starts_with(place)
    } else {
        file == place
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn each_layer_names_only_what_its_rule_allows() {
    let (references, files, problems) = read_crate(&src());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(files.len() > 200, "only {} files read", files.len());
    let (said, stale) = broken(
        &references,
        RULES,
        TEMPORARY_ALLOWANCES_UNTIL_ISSUE_26_MERGE,
    );
    assert!(
        said.is_empty() && stale.is_empty(),
        "layer rules broken:\n{}",
        said.into_iter().chain(stale).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_module_has_a_rule_and_every_rule_names_real_units() {
    let (_, files, problems) = read_crate(&src());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let units: BTreeSet<String> = files.iter().map(|f| unit_of(&f.module)).collect();
    let ruled: BTreeSet<String> = RULES.iter().map(|r| r.unit.to_owned()).collect();
    let missing: Vec<&String> = units.difference(&ruled).collect();
    assert!(missing.is_empty(), "modules without a rule: {missing:?}");
    let gone: Vec<&String> = ruled.difference(&units).collect();
    assert!(
        gone.is_empty(),
        "rules for modules that do not exist: {gone:?}"
    );
    for rule in RULES {
        for name in rule.may_name {
            assert!(
                units.contains(*name) || RULED_CRATES.contains(name),
                "the rule of {} allows {name}, which is neither a unit nor a ruled crate",
                rule.unit
            );
            assert_ne!(*name, rule.unit, "the rule of {} allows itself", rule.unit);
        }
    }
    for (file, target) in TEMPORARY_ALLOWANCES_UNTIL_ISSUE_26_MERGE {
        assert!(
            file.starts_with("certify/"),
            "a temporary allowance is for certify only: {file} names {target}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The reader itself: a test that cannot fail is a defect, so it is shown failing.

/// A crate in a temporary folder: `files` (path under `src/`, text).
fn crate_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        fs::write(path, text).expect("a source file");
    }
    dir
}

const TEST_RULES: &[Rule] = &[
    Rule {
        unit: "lib",
        may_name: &["api", "store", "device", "certify", "i18n"],
        why: "root",
    },
    Rule {
        unit: "api",
        may_name: &["certify", "i18n"],
        why: "api names certify only",
    },
    Rule {
        unit: "certify",
        may_name: &["store", "certify/mcf", "i18n"],
        why: "certify sees a channel",
    },
    Rule {
        unit: "certify/mcf",
        may_name: &["certify", "device", "mcf_sfe"],
        why: "the box channel",
    },
    Rule {
        unit: "store",
        may_name: &[],
        why: "the register",
    },
    Rule {
        unit: "device",
        may_name: &["mcf_sfe"],
        why: "the port",
    },
    Rule {
        unit: "i18n",
        may_name: &[],
        why: "the catalogue",
    },
];

fn said_for(files: &[(&str, &str)]) -> Vec<String> {
    let dir = crate_of(files);
    let (references, _, problems) = read_crate(dir.path());
    assert!(problems.is_empty(), "{problems:?}");
    broken(&references, TEST_RULES, &[]).0
}

const LIB: &str = "mod api;\nmod certify;\nmod store;\nmod device;\nmod i18n;\n";

#[test]
fn the_reader_catches_a_wrapped_use_group() {
    let said = said_for(&[
        ("lib.rs", LIB),
        (
            "api/mod.rs",
            "use crate::{\n    certify::Certifier,\n    store::{\n        Store,\n        open,\n    },\n};\n",
        ),
        ("certify.rs", ""),
        ("store.rs", ""),
        ("device.rs", ""),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api/mod.rs:4: `crate::store::Store` names store, which api may not name: api names certify only",
            "src/api/mod.rs:5: `crate::store::open` names store, which api may not name: api names certify only",
        ]
    );
}

#[test]
fn the_reader_catches_inline_paths_in_code_types_and_macros() {
    let said = said_for(&[
        ("lib.rs", LIB),
        (
            "api.rs",
            "fn f() -> crate::certify::Answer {\n    let _ = crate::device::LinkStatus::default();\n    \
             assert!(matches!(x, crate::store::Halted));\n    ::mcf_sfe::frame(1)\n}\n",
        ),
        ("certify.rs", ""),
        ("store.rs", ""),
        ("device.rs", ""),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api.rs:2: `crate::device::LinkStatus::default` names device, which api may not name: api names certify only",
            "src/api.rs:3: `crate::store::Halted` names store, which api may not name: api names certify only",
            "src/api.rs:4: `::mcf_sfe::frame` names mcf_sfe, which api may not name: api names certify only",
        ]
    );
}

#[test]
fn the_reader_resolves_super_self_children_and_path_modules() {
    let said = said_for(&[
        ("lib.rs", "mod api;\nmod certify;\n#[path = \"elsewhere/register.rs\"]\nmod store;\nmod device;\nmod i18n;\n"),
        ("api.rs", "mod routes;\n"),
        // `super::super` from api::routes::inner is the crate's root.
        ("api/routes.rs", "mod inner {\n    use super::super::super::store::Store;\n    fn f() { self::g(); }\n}\n"),
        (
            "certify/mod.rs",
            "mod mcf;\nmod service;\nuse mcf::Run;\nfn f() { mcf_sfe::x(); }\n",
        ),
        ("certify/service.rs", "use super::mcf::Run;\nfn f() { super::super::device::open(); }\n"),
        ("certify/mcf.rs", "use crate::device::Port;\nuse mcf_sfe::Frame;\nuse super::service;\n"),
        // The `#[path]` file is read, and is store's.
        ("elsewhere/register.rs", "use crate::api::Router;\n"),
        ("device.rs", "use mcf_sfe::Frame;\n"),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api/routes.rs:2: `super::super::super::store::Store` names store, which api may not name: api names certify only",
            "src/certify/mod.rs:4: `mcf_sfe::x` names mcf_sfe, which certify may not name: certify sees a channel",
            "src/certify/service.rs:2: `super::super::device::open` names device, which certify may not name: certify sees a channel",
            "src/elsewhere/register.rs:1: `crate::api::Router` names api, which store may not name: the register",
        ]
    );
}

#[test]
fn a_file_no_module_reaches_is_a_problem() {
    let dir = crate_of(&[("lib.rs", "mod api;\n"), ("api.rs", ""), ("stray.rs", "")]);
    let (_, _, problems) = read_crate(dir.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("src/stray.rs"), "{problems:?}");
}

#[test]
fn a_stale_temporary_allowance_fails() {
    let (_, stale) = broken(&[], TEST_RULES, &[("certify/invoice/mod.rs", "mcf_sfe")]);
    assert_eq!(stale.len(), 1);
}

#[test]
fn only_test_code_may_drive_the_simulator() {
    let said = said_for(&[
        ("lib.rs", LIB),
        ("api.rs", ""),
        ("certify.rs", ""),
        ("store.rs", ""),
        (
            "device.rs",
            "use emcf_sim::start_on_pty;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nfn f() { emcf_sim::run(); }\n",
        ),
        ("device/tests.rs", "use emcf_sim::SimOptions;\n"),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        ["src/device.rs:1: `emcf_sim::start_on_pty` names emcf_sim, which device may not name: the port"]
    );
}
