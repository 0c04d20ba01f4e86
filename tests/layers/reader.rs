//! The reader of tests/layers.rs: every path a file of the module tree (`tree.rs`) writes,
//! parsed with `syn` and resolved to the unit it names, and the references that break a rule.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use super::tree::{is_cfg_test, item_attrs, rust_files, SourceFile, Tree};
use super::{Rule, CHANNEL_FOLDERS, RULED_CRATES, TESTS_MAY_ALSO_NAME};

/// One name a file gives to another unit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Reference {
    file: String,
    line: usize,
    /// The path as written (`crate::store::Store`, `super::super::device`, `mcf_sfe::Frame`).
    path: String,
    /// The unit named (`store`, `certify/box_channel`, `mcf_sfe`).
    target: String,
    /// The unit of the file.
    from: String,
    /// In code under `#[cfg(test)]`.
    test: bool,
}

/// What went wrong while reading the tree (a file that does not parse, a `mod` without file,
/// a file no `mod` reaches).
pub(crate) type Problems = Vec<String>;

/// The unit of a module path.
pub(crate) fn unit_of(module: &[String]) -> String {
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
        // Only as many segments as are modules: `crate::certify::WebApiSettings` is certify's.
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
pub(crate) fn read_crate(root: &Path) -> (Vec<Reference>, Vec<SourceFile>, Problems) {
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

/// The references that break a rule, each said with its file, line, path and rule; and the
/// temporary allowances that matched nothing.
pub(crate) fn broken(
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
        if rule.allows(&reference.target)
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
