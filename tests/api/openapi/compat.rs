//! Whether an OpenAPI document stays backward compatible with an older one, for the clients
//! written against the older:
//!
//! - no path or method removed; no response status code, response header or content type
//!   (of a request body or a response) removed;
//! - no field of a schema removed, no enum value removed, no `allOf`/`anyOf`/`oneOf` branch
//!   removed (branches matched by content or `$ref`, not by place);
//! - no `format` or `$ref` changed; `type` compared as a set of types (`string` is
//!   `[string]`): a type that loses a member is a break everywhere (a request a client sends
//!   would be refused; a generated client's type changes); one that gains a member is a break
//!   where a client reads it (a response, or a schema used by both: a strict client fails on a
//!   `null` or a number it was never promised) and allowed where the client only writes it (a
//!   request body or a parameter: more is accepted);
//! - no request field made required; no parameter (path-level or of an operation, by name
//!   and place, `$ref`s to `components/parameters` resolved in each document) made required
//!   or added required, also to an operation that had no `parameters`.
//!
//! Read from the plain block YAML the project writes (see `tests/api/openapi.rs`): a small tree
//! reader, no YAML crate.

use std::collections::{BTreeMap, BTreeSet};

/// A YAML node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Scalar(String),
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn scalar(&self) -> Option<&str> {
        match self {
            Node::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn names(&self) -> Vec<String> {
        match self {
            Node::Seq(items) => items
                .iter()
                .filter_map(|i| i.scalar().map(str::to_owned))
                .collect(),
            Node::Map(entries) => entries.iter().map(|(k, _)| k.clone()).collect(),
            Node::Scalar(_) => Vec::new(),
        }
    }
}

struct Line {
    indent: usize,
    text: String,
}

/// Reads `text` (block style; flow lists on one line; `|` and `>` block scalars).
pub fn parse(text: &str) -> Node {
    let lines: Vec<Line> = text
        .lines()
        .map(|l| Line {
            indent: l.len() - l.trim_start().len(),
            text: l.trim().to_owned(),
        })
        .collect();
    let mut reader = Reader { lines, at: 0 };
    reader.skip_blank();
    let indent = reader.lines.get(reader.at).map_or(0, |l| l.indent);
    reader.block(indent)
}

struct Reader {
    lines: Vec<Line>,
    at: usize,
}

impl Reader {
    fn skip_blank(&mut self) {
        while self
            .lines
            .get(self.at)
            .is_some_and(|l| l.text.is_empty() || l.text.starts_with('#'))
        {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<(usize, bool)> {
        self.skip_blank();
        self.lines
            .get(self.at)
            .map(|l| (l.indent, l.text == "-" || l.text.starts_with("- ")))
    }

    fn block(&mut self, indent: usize) -> Node {
        match self.peek() {
            Some((i, true)) if i == indent => self.seq(indent),
            _ => self.map(indent),
        }
    }

    fn seq(&mut self, indent: usize) -> Node {
        let mut items = Vec::new();
        while let Some((i, true)) = self.peek() {
            if i != indent {
                break;
            }
            let rest = self.lines[self.at].text[1..].trim_start().to_owned();
            if rest.is_empty() {
                self.at += 1;
                let deeper = self.peek().map_or(indent + 2, |(i, _)| i);
                items.push(if deeper > indent {
                    self.block(deeper)
                } else {
                    Node::Scalar(String::new())
                });
            } else if split_key(&rest).is_some() {
                // `- key: value`: a mapping whose first key is on this line.
                self.lines[self.at] = Line {
                    indent: indent + 2,
                    text: rest,
                };
                items.push(self.map(indent + 2));
            } else {
                self.at += 1;
                items.push(value(&rest));
            }
        }
        Node::Seq(items)
    }

    fn map(&mut self, indent: usize) -> Node {
        let mut entries = Vec::new();
        while let Some((i, is_item)) = self.peek() {
            if i != indent || is_item {
                break;
            }
            let text = self.lines[self.at].text.clone();
            let Some((key, rest)) = split_key(&text) else {
                self.at += 1;
                continue;
            };
            self.at += 1;
            let node = if rest.is_empty() {
                match self.peek() {
                    Some((i, _)) if i > indent => self.block(i),
                    Some((i, true)) if i == indent => self.seq(indent),
                    _ => Node::Scalar(String::new()),
                }
            } else if rest.starts_with('|') || rest.starts_with('>') {
                let mut scalar = String::new();
                while self
                    .lines
                    .get(self.at)
                    .is_some_and(|l| l.text.is_empty() || l.indent > indent)
                {
                    scalar.push_str(&self.lines[self.at].text);
                    scalar.push('\n');
                    self.at += 1;
                }
                Node::Scalar(scalar)
            } else {
                value(&rest)
            };
            entries.push((key, node));
        }
        Node::Map(entries)
    }
}

/// `key: rest` (or `key:`), the key unquoted; `None` for a plain scalar.
fn split_key(text: &str) -> Option<(String, String)> {
    if text.starts_with('[') || text.starts_with('{') {
        return None;
    }
    let (key, rest) = if let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = text[1..].find(quote)? + 1;
        let after = text[end + 1..].strip_prefix(':')?;
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        (text[1..end].to_owned(), after.trim().to_owned())
    } else if let Some(key) = text.strip_suffix(':') {
        if key.contains(": ") {
            let (k, r) = text.split_once(": ")?;
            (k.to_owned(), r.trim().to_owned())
        } else {
            (key.to_owned(), String::new())
        }
    } else {
        let (k, r) = text.split_once(": ")?;
        (k.to_owned(), r.trim().to_owned())
    };
    (!key.contains(' ') || key.starts_with('/')).then_some((key, rest))
}

fn value(text: &str) -> Node {
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Node::Seq(
            inner
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Node::Scalar(unquote(s)))
                .collect(),
        );
    }
    Node::Scalar(unquote(text))
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return t[1..t.len() - 1].to_owned();
        }
    }
    t.to_owned()
}

const METHODS: &[&str] = &["get", "put", "post", "delete", "patch", "head", "options"];
/// Keys whose subtree is prose or samples, not contract.
const PROSE: &[&str] = &[
    "description",
    "summary",
    "example",
    "examples",
    "x-codeSamples",
];
/// Keys whose list holds schemas a value must match all, any or one of.
const COMBINERS: &[&str] = &["allOf", "anyOf", "oneOf"];
/// Maps whose keys are promises a client relies on: none may go.
const NAMED: &[(&str, &str)] = &[
    ("responses", "response status"),
    ("headers", "header"),
    ("content", "content type"),
];

/// What `new` breaks of `old`, one line each (empty: compatible).
pub fn breaks(old: &Node, new: &Node) -> Vec<String> {
    let mut out = Vec::new();
    let empty = Node::Map(Vec::new());
    let (old_paths, new_paths) = (
        old.get("paths").unwrap_or(&empty),
        new.get("paths").unwrap_or(&empty),
    );
    if let Node::Map(paths) = old_paths {
        for (path, ops) in paths {
            let Some(new_ops) = new_paths.get(path) else {
                out.push(format!("path {path} removed"));
                continue;
            };
            for method in METHODS {
                if ops.get(method).is_some() && new_ops.get(method).is_none() {
                    out.push(format!("{} {path} removed", method.to_uppercase()));
                }
            }
        }
    }
    let requests = schemas_under(new, &["requestBody", "requestBodies"]);
    let mut read = schemas_under(old, &["responses", "headers"]);
    read.extend(schemas_under(new, &["responses", "headers"]));
    let mut written = schemas_under(old, &["requestBody", "requestBodies", "parameters"]);
    written.extend(schemas_under(
        new,
        &["requestBody", "requestBodies", "parameters"],
    ));
    let docs = Docs {
        old,
        new,
        requests,
        read,
        written,
    };
    docs.walk(old, new, &mut Vec::new(), &mut out);
    out
}

/// Both documents (a `$ref` is read in its own), and which component schemas are in a
/// request of the new one, read by a client, written by a client.
struct Docs<'a> {
    old: &'a Node,
    new: &'a Node,
    requests: BTreeSet<String>,
    read: BTreeSet<String>,
    written: BTreeSet<String>,
}

/// What `#/components/...` names in `doc`.
fn resolve<'a>(doc: &'a Node, reference: &str) -> Option<&'a Node> {
    let mut node = doc;
    for part in reference.strip_prefix("#/")?.split('/') {
        node = node.get(part)?;
    }
    Some(node)
}

/// The component schemas used under one of the keys `under`, directly or through others.
fn schemas_under(doc: &Node, under: &[&str]) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    fn collect(node: &Node, inside: bool, under: &[&str], refs: &mut BTreeSet<String>) {
        match node {
            Node::Map(entries) => {
                for (k, v) in entries {
                    let inside = inside || under.contains(&k.as_str());
                    if inside && k == "$ref" {
                        if let Some(name) = v
                            .scalar()
                            .and_then(|r| r.strip_prefix("#/components/schemas/"))
                        {
                            refs.insert(name.to_owned());
                        }
                    }
                    collect(v, inside, under, refs);
                }
            }
            Node::Seq(items) => items.iter().for_each(|i| collect(i, inside, under, refs)),
            Node::Scalar(_) => {}
        }
    }
    collect(doc, false, under, &mut refs);
    let schemas = doc.get("components").and_then(|c| c.get("schemas"));
    loop {
        let before = refs.len();
        for name in refs.clone() {
            if let Some(schema) = schemas.and_then(|s| s.get(&name)) {
                collect(schema, true, under, &mut refs);
            }
        }
        if refs.len() == before {
            return refs;
        }
    }
}

/// `node` without its prose, to tell whether two branches say the same.
fn contract(node: &Node) -> Node {
    match node {
        Node::Map(entries) => Node::Map(
            entries
                .iter()
                .filter(|(k, _)| !PROSE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), contract(v)))
                .collect(),
        ),
        Node::Seq(items) => Node::Seq(items.iter().map(contract).collect()),
        Node::Scalar(_) => node.clone(),
    }
}

/// A `type` as the set of its types (`string`, `[string, "null"]`).
fn types(node: &Node) -> Option<BTreeSet<String>> {
    match node.get("type")? {
        Node::Scalar(one) => Some(BTreeSet::from([one.clone()])),
        list @ Node::Seq(_) => Some(list.names().into_iter().collect()),
        Node::Map(_) => None,
    }
}

fn shown(set: &BTreeSet<String>) -> String {
    match set.len() {
        1 => set.iter().next().cloned().unwrap_or_default(),
        _ => format!("[{}]", set.iter().cloned().collect::<Vec<_>>().join(", ")),
    }
}

impl Docs<'_> {
    fn walk(&self, old: &Node, new: &Node, at: &mut Vec<String>, out: &mut Vec<String>) {
        // One side names a component the other writes inline: compare what both mean.
        let reference = |node: &Node| node.get("$ref").and_then(Node::scalar).map(str::to_owned);
        let (old_ref, new_ref) = (reference(old), reference(new));
        if old_ref != new_ref {
            let old_target = old_ref.as_deref().and_then(|r| resolve(self.old, r));
            let new_target = new_ref.as_deref().and_then(|r| resolve(self.new, r));
            match (old_target, new_target) {
                (Some(a), None) if new_ref.is_none() => return self.walk(a, new, at, out),
                (None, Some(b)) if old_ref.is_none() => return self.walk(old, b, at, out),
                _ => {}
            }
        }
        let here = at.join(".");
        let component = |set: &BTreeSet<String>| {
            at.len() >= 3 && at[0] == "components" && at[1] == "schemas" && set.contains(&at[2])
        };
        let in_request = at.iter().any(|k| k == "requestBody") || component(&self.requests);
        // Read by a client (a response), or not known to be written only by one.
        let client_reads = at.iter().any(|k| k == "responses" || k == "headers")
            || component(&self.read)
            || !(at
                .iter()
                .any(|k| k == "requestBody" || k == "requestBodies" || k == "parameters")
                || component(&self.written));
        let names_level = at.last().is_some_and(|k| {
            k == "properties"
                || k == "paths"
                || k == "schemas"
                || k == "responses"
                || k == "headers"
                || k == "content"
        });
        // `components.responses` and the like are a library, not promises by themselves.
        let library = at.len() == 1 && at[0] == "components";
        match (old, new) {
            (Node::Map(entries), Node::Map(_)) => {
                if !names_level && !library {
                    for (key, kind) in NAMED {
                        if let Some(Node::Map(names)) = old.get(key) {
                            let kept = new.get(key).map(Node::names).unwrap_or_default();
                            for (name, _) in names {
                                if !kept.contains(name) {
                                    out.push(format!("{here}.{key}: {kind} {name} removed"));
                                }
                            }
                        }
                    }
                }
                if !names_level {
                    if let Some(before) = types(old) {
                        let after = types(new).unwrap_or_default();
                        let lost = before.difference(&after).next().is_some();
                        let gained = after.difference(&before).next().is_some();
                        if lost || (gained && client_reads) {
                            out.push(format!(
                                "{here}: type {} became {}",
                                shown(&before),
                                if after.is_empty() {
                                    "nothing".to_owned()
                                } else {
                                    shown(&after)
                                }
                            ));
                        }
                    }
                    for key in ["format", "$ref"] {
                        if let Some(before) = old.get(key).and_then(Node::scalar) {
                            let after = new.get(key).and_then(Node::scalar);
                            if after != Some(before) {
                                out.push(format!(
                                    "{here}: {key} {before} became {}",
                                    after.unwrap_or("nothing")
                                ));
                            }
                        }
                    }
                    if let Some(Node::Seq(values)) = old.get("enum") {
                        let kept: BTreeSet<String> = new
                            .get("enum")
                            .map(Node::names)
                            .unwrap_or_default()
                            .into_iter()
                            .collect();
                        if new.get("enum").is_some() {
                            for v in values.iter().filter_map(Node::scalar) {
                                if !kept.contains(v) {
                                    out.push(format!("{here}: enum value {v} removed"));
                                }
                            }
                        }
                    }
                    if let Some(Node::Map(fields)) = old.get("properties") {
                        let kept = new.get("properties").map(Node::names).unwrap_or_default();
                        for (name, _) in fields {
                            if !kept.contains(name) {
                                out.push(format!("{here}: field {name} removed"));
                            }
                        }
                    }
                    if in_request {
                        let before: BTreeSet<String> = old
                            .get("required")
                            .map(Node::names)
                            .unwrap_or_default()
                            .into_iter()
                            .collect();
                        for name in new.get("required").map(Node::names).unwrap_or_default() {
                            if !before.contains(&name) {
                                out.push(format!("{here}: request field {name} made required"));
                            }
                        }
                    }
                    // An operation or path item: its parameters, even where it had none.
                    let list = |node: &Node| match node.get("parameters") {
                        Some(Node::Seq(items)) => Some(items.clone()),
                        _ => None,
                    };
                    let (old_params, new_params) = (list(old), list(new));
                    if old_params.is_some() || new_params.is_some() {
                        self.parameters(
                            &old_params.unwrap_or_default(),
                            &new_params.unwrap_or_default(),
                            &here,
                            out,
                        );
                    }
                    for key in COMBINERS {
                        if let Some(Node::Seq(branches)) = old.get(key) {
                            at.push((*key).to_owned());
                            match new.get(key) {
                                Some(Node::Seq(new_branches)) => {
                                    self.branches(branches, new_branches, key, at, out)
                                }
                                _ => out.push(format!("{here}: {key} removed")),
                            }
                            at.pop();
                        }
                    }
                }
                for (key, child) in entries {
                    if !names_level
                        && (PROSE.contains(&key.as_str()) || COMBINERS.contains(&key.as_str()))
                    {
                        continue;
                    }
                    if let Some(new_child) = new.get(key) {
                        at.push(key.clone());
                        self.walk(child, new_child, at, out);
                        at.pop();
                    }
                }
            }
            (Node::Seq(items), Node::Seq(new_items)) => {
                for (i, (a, b)) in items.iter().zip(new_items).enumerate() {
                    at.push(i.to_string());
                    self.walk(a, b, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    /// The branches of an `allOf`/`anyOf`/`oneOf`: each old one matched to a new one saying
    /// the same, else naming the same `$ref`, else at the same place (then compared); one
    /// left without a match was removed.
    fn branches(
        &self,
        old: &[Node],
        new: &[Node],
        key: &str,
        at: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        let mut used = vec![false; new.len()];
        let mut pairs: Vec<Option<usize>> = vec![None; old.len()];
        let same_ref = |a: &Node, b: &Node| {
            a.get("$ref").and_then(Node::scalar).is_some()
                && a.get("$ref").and_then(Node::scalar) == b.get("$ref").and_then(Node::scalar)
        };
        let rules: [&dyn Fn(usize, usize) -> bool; 3] = [
            &|i, j| contract(&old[i]) == contract(&new[j]),
            &|i, j| same_ref(&old[i], &new[j]),
            &|i, j| i == j,
        ];
        for rule in rules {
            for (i, pair) in pairs.iter_mut().enumerate() {
                if pair.is_some() {
                    continue;
                }
                if let Some(j) = (0..new.len()).find(|&j| !used[j] && rule(i, j)) {
                    used[j] = true;
                    *pair = Some(j);
                }
            }
        }
        let here = at.join(".");
        for (i, pair) in pairs.into_iter().enumerate() {
            match pair {
                Some(j) => {
                    at.push(i.to_string());
                    self.walk(&old[i], &new[j], at, out);
                    at.pop();
                }
                None => out.push(format!("{here}: {key} branch {i} removed")),
            }
        }
    }

    /// Parameters by place and name (a `$ref` read in its own document): none made
    /// required, none added required.
    fn parameters(&self, old: &[Node], new: &[Node], here: &str, out: &mut Vec<String>) {
        let index = |doc: &Node, items: &[Node]| -> BTreeMap<(String, String), bool> {
            items
                .iter()
                .filter_map(|p| {
                    let reference = p.get("$ref").and_then(Node::scalar);
                    let p = match reference {
                        Some(r) => resolve(doc, r).unwrap_or(p),
                        None => p,
                    };
                    let name = match (p.get("name"), p.get("in")) {
                        (Some(name), Some(place)) => {
                            (name.scalar()?.to_owned(), place.scalar()?.to_owned())
                        }
                        _ => (reference?.to_owned(), String::new()),
                    };
                    let required = p.get("required").and_then(Node::scalar) == Some("true");
                    Some((name, required))
                })
                .collect()
        };
        let before = index(self.old, old);
        for ((name, place), required) in index(self.new, new) {
            if required && before.get(&(name.clone(), place.clone())) != Some(&true) {
                out.push(format!(
                    "{here}: parameter {name} made required (in {place})"
                ));
            }
        }
    }
}
