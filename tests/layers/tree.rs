//! The module tree of a crate for tests/layers.rs: every file reached from its roots down
//! every `mod` (`#[path]` and inline modules included), with its module path, the modules
//! declared and the exported macros.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};

use super::reader::Problems;

/// One source file reached from a crate root.
pub(crate) struct SourceFile {
    /// Path relative to the source root, `/`-separated (`certify/web_api_channel/run.rs`).
    pub(crate) relative: String,
    /// Its module path (`["certify", "edef", "run"]`); the binary's root is `["<main>"]`.
    pub(crate) module: Vec<String>,
    /// Reached through a `#[cfg(test)]` module.
    pub(crate) test: bool,
}

pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
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
pub(crate) fn item_attrs(item: &syn::Item) -> Option<&[syn::Attribute]> {
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
pub(crate) struct Tree {
    pub(crate) root: PathBuf,
    pub(crate) files: Vec<SourceFile>,
    /// Every module path declared (`mod x;` or `mod x { .. }`), to resolve a child's name.
    pub(crate) modules: BTreeSet<Vec<String>>,
    /// `#[macro_export]` macros by name, with the module that defines them (`msg` -> i18n).
    pub(crate) exported_macros: BTreeMap<String, Vec<String>>,
    pub(crate) problems: Problems,
}

impl Tree {
    pub(crate) fn read(root: &Path, roots: &[(&str, Vec<String>)]) -> Tree {
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

    pub(crate) fn relative(&self, path: &Path) -> String {
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

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
