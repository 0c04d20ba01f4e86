//! The OpenAPI description of the v1 API (`protocols/http-v1/openapi.yaml`): served verbatim at
//! `GET /api/v1/openapi.yaml`, and complete against the rest of the source of truth: every
//! route, every status an operation can answer (each with `X-Request-Id`), every error code of
//! `docs/error-codes.md` under its HTTP status, every field of the request body.
//!
//! No YAML crate is a dependency: the document keeps a plain block style (2-space indents, one
//! key per line, flow lists only for enums) and these checks read it by indentation. Whether it
//! is a valid OpenAPI document that the server honours is what `tests/system/schemathesis.rs` checks.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{get, Gateway};
use emcf_gateway::certify::invoice::code;

const SPEC: &str = include_str!("../../protocols/http-v1/openapi.yaml");
const ERROR_CODES: &str = include_str!("../../docs/error-codes.md");

/// Every route of `src/api/routes.rs`, with its method and the statuses it can answer
/// (`src/api/reply.rs`: `status_of` and `http_error`).
const OPERATIONS: &[(&str, &str, &[&str])] = &[
    ("/status", "get", &["200"]),
    ("/status/replica", "get", &["200", "503"]),
    ("/openapi.yaml", "get", &["200"]),
    (
        "/Invoice",
        "post",
        &[
            "200", "400", "401", "408", "409", "413", "415", "422", "429", "500", "503",
        ],
    ),
    (
        "/Invoice/{rn}",
        "get",
        &["200", "401", "404", "409", "500", "503"],
    ),
    (
        "/Invoice/{rn}/qr.svg",
        "get",
        &["200", "401", "404", "409", "500", "503"],
    ),
    (
        "/Invoice/{rn}/qr.png",
        "get",
        &["200", "400", "401", "404", "409", "500", "503"],
    ),
    (
        "/Invoice/{rn}/receipt.html",
        "get",
        &["200", "400", "401", "404", "409", "500", "503"],
    ),
    (
        "/Invoice/{rn}/receipt.escpos",
        "get",
        &["200", "400", "401", "404", "409", "500", "503"],
    ),
];

// ---- reading the document by indentation ----

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A content line: not blank, not a comment.
fn is_content(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with('#')
}

/// The key of a `key:` or `key: value` line (quotes removed), and its value.
fn key_of(line: &str) -> Option<(String, &str)> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("- ") {
        return None;
    }
    let (key, value) = if let Some(rest) = trimmed.strip_prefix('"') {
        let end = rest.find('"')?;
        let after = rest[end + 1..].strip_prefix(':')?;
        (rest[..end].to_string(), after)
    } else {
        let at = trimmed.find(':')?;
        let after = &trimmed[at + 1..];
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        (trimmed[..at].to_string(), after)
    };
    Some((key, value.trim()))
}

/// The lines of the block under the key at `path` (each step one level, 2 spaces, deeper),
/// and the indentation of its children.
fn block<'a>(text: &'a str, path: &[&str]) -> (Vec<&'a str>, usize) {
    let mut lines: Vec<&str> = text.lines().collect();
    let mut indent = 0;
    for (depth, step) in path.iter().enumerate() {
        let start = lines
            .iter()
            .position(|line| {
                is_content(line)
                    && indent_of(line) == indent
                    && key_of(line).is_some_and(|(k, _)| k == *step)
            })
            .unwrap_or_else(|| panic!("openapi.yaml has no {}", path[..=depth].join(" / ")));
        let end = lines[start + 1..]
            .iter()
            .position(|line| is_content(line) && indent_of(line) <= indent)
            .map_or(lines.len(), |i| start + 1 + i);
        lines = lines[start + 1..end].to_vec();
        indent += 2;
    }
    (lines, indent)
}

/// The `key: value` lines directly under `path`.
fn entries<'a>(text: &'a str, path: &[&str]) -> Vec<(String, &'a str)> {
    let (lines, indent) = block(text, path);
    lines
        .into_iter()
        .filter(|line| is_content(line) && indent_of(line) == indent)
        .filter_map(key_of)
        .collect()
}

/// The keys directly under `path`.
fn children(text: &str, path: &[&str]) -> Vec<String> {
    entries(text, path).into_iter().map(|(k, _)| k).collect()
}

/// The value of the `key: value` line directly under `path`, if any.
fn value(text: &str, path: &[&str], key: &str) -> Option<String> {
    entries(text, path)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.trim_matches('"').to_string())
}

/// Whether a line directly under `path` reads `line`.
fn has_line(text: &str, path: &[&str], line: &str) -> bool {
    let (lines, indent) = block(text, path);
    lines
        .iter()
        .any(|l| indent_of(l) == indent && l.trim() == line)
}

/// The integers of the first `enum: [...]` under `path`.
fn enum_under(text: &str, path: &[&str]) -> BTreeSet<u16> {
    let (lines, _) = block(text, path);
    let line = lines
        .into_iter()
        .find(|line| line.trim_start().starts_with("enum: ["))
        .unwrap_or_else(|| panic!("no enum under {}", path.join(" / ")));
    let list = line
        .trim()
        .trim_start_matches("enum: [")
        .trim_end_matches(']');
    list.split(',')
        .map(|n| n.trim().parse().expect("an integer errorCode"))
        .collect()
}

// ---- reading docs/error-codes.md ----

/// `(HTTP status, errorCode)` of every code in docs/error-codes.md: the validation tables
/// (`| code | field | rule | example |`, all HTTP 400) and the tables `| HTTP | Code | ... |`.
fn documented_codes() -> BTreeMap<u16, u16> {
    let mut codes = BTreeMap::new();
    let mut http_first = false;
    let mut validation = true;
    for line in ERROR_CODES.lines() {
        if line.starts_with("## Other errors") {
            validation = false;
        }
        if line.starts_with("| HTTP | Code |") {
            http_first = true;
            continue;
        }
        if !line.starts_with('|') {
            http_first = false;
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if http_first {
            if let (Ok(status), Ok(code)) = (cells[1].parse::<u16>(), cells[2].parse::<u16>()) {
                assert!(
                    codes.insert(code, status).is_none(),
                    "code {code} twice in the docs"
                );
            }
        } else if validation {
            if let Ok(code) = cells[1].parse::<u16>() {
                assert!(
                    codes.insert(code, 400).is_none(),
                    "code {code} twice in the docs"
                );
            }
        }
    }
    codes
}

/// Field names of the `### Fields of the body` section, by object.
fn documented_fields() -> BTreeMap<&'static str, BTreeSet<String>> {
    let section = ERROR_CODES
        .split("### Fields of the body")
        .nth(1)
        .expect("a 'Fields of the body' section")
        .split("\n#")
        .next()
        .unwrap_or_default();
    let mut fields: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<&'static str> = None;
    // Sentences start with the object they list: "Top level:", "`items[i]`:", "`client`:"...
    for token in section.split_whitespace() {
        let object = match token {
            "level:" => Some("InvoiceRequest"),
            "`items[i]`:" => Some("Item"),
            "`client`:" => Some("Client"),
            "`payments[i]`:" => Some("Payment"),
            "`operator`:" => Some("Operator"),
            _ => None,
        };
        if object.is_some() {
            current = object;
            continue;
        }
        if token.starts_with("Every") || token.starts_with("Decimal") {
            current = None;
        }
        let Some(object) = current else { continue };
        let name = token.trim_end_matches(['.', ',', ';']);
        if let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
            if name.chars().all(|c| c.is_ascii_alphanumeric()) {
                fields.entry(object).or_default().insert(name.to_string());
            }
        }
    }
    // "`cmta` .. `cmth`"
    let top = fields.entry("InvoiceRequest").or_default();
    if top.contains("cmta") && top.contains("cmth") {
        for letter in 'a'..='h' {
            top.insert(format!("cmt{letter}"));
        }
    }
    fields
}

// ---- the checks ----

#[test]
fn the_document_is_plain_block_yaml() {
    assert!(SPEC.starts_with("openapi: 3.1.0\n"), "OpenAPI 3.1.0 first");
    for (n, line) in SPEC.lines().enumerate() {
        assert!(!line.contains('\t'), "line {}: a tab", n + 1);
        assert_eq!(line.trim_end(), line, "line {}: trailing blanks", n + 1);
        assert_eq!(indent_of(line) % 2, 0, "line {}: odd indentation", n + 1);
    }
    assert_eq!(value(SPEC, &["info"], "version").as_deref(), Some("1.0"));
    assert!(
        has_line(SPEC, &["servers"], "- url: /api/v1"),
        "the server is /api/v1, relative"
    );
    assert_eq!(
        value(
            SPEC,
            &["components", "securitySchemes", "bearerAuth"],
            "scheme"
        )
        .as_deref(),
        Some("bearer")
    );
}

#[test]
fn every_route_and_status_is_described() {
    let paths = children(SPEC, &["paths"]);
    let expected: Vec<String> = OPERATIONS.iter().map(|(p, _, _)| p.to_string()).collect();
    assert_eq!(paths, expected, "the paths of openapi.yaml");
    for (path, method, statuses) in OPERATIONS {
        assert_eq!(
            children(SPEC, &["paths", path]),
            vec![method.to_string()],
            "{path}: one method"
        );
        let responses = children(SPEC, &["paths", path, method, "responses"]);
        assert_eq!(&responses, statuses, "{method} {path}: responses");
        let public = matches!(*path, "/status" | "/status/replica" | "/openapi.yaml");
        let security = has_line(SPEC, &["paths", path, method], "security: []");
        assert_eq!(security, public, "{method} {path}: public or Bearer");
        for status in *statuses {
            let response = ["paths", path, method, "responses", status];
            let headers = match value(SPEC, &response, "$ref") {
                Some(reference) => {
                    let name = reference
                        .strip_prefix("#/components/responses/")
                        .expect("a response $ref");
                    children(SPEC, &["components", "responses", name, "headers"])
                }
                None => children(SPEC, &[&response[..], &["headers"]].concat()),
            };
            assert!(
                headers.iter().any(|h| h == "X-Request-Id"),
                "{method} {path} {status}: X-Request-Id"
            );
            if *status == "401" {
                assert!(headers.iter().any(|h| h == "WWW-Authenticate"));
            }
            if *status == "503" || *status == "409" {
                assert!(
                    headers.iter().any(|h| h == "Retry-After"),
                    "{method} {path} {status}: Retry-After"
                );
            }
        }
    }
}

#[test]
fn every_error_code_is_listed_under_its_status() {
    let documented = documented_codes();
    assert!(documented.len() > 60, "docs parsed: {documented:?}");
    for rule in code::ALL {
        assert_eq!(
            documented.get(rule),
            Some(&400),
            "validation code {rule} in docs/error-codes.md"
        );
    }
    let mut described = BTreeMap::new();
    for name in children(SPEC, &["components", "schemas"]) {
        let Some(status) = name
            .strip_prefix("Error")
            .and_then(|s| s.parse::<u16>().ok())
        else {
            continue;
        };
        for code in enum_under(SPEC, &["components", "schemas", &name]) {
            assert!(
                described.insert(code, status).is_none(),
                "code {code} under two statuses"
            );
        }
    }
    assert_eq!(
        described, documented,
        "errorCode -> HTTP status: openapi.yaml (left) vs docs/error-codes.md (right)"
    );
    // The table of the description names every code too.
    for code in documented.keys() {
        assert!(
            SPEC.contains(&format!(" {code} ")) || SPEC.contains(&format!(" {code},")),
            "code {code} in the description"
        );
    }
}

#[test]
fn every_request_field_is_described() {
    let documented = documented_fields();
    assert_eq!(documented.len(), 5, "docs parsed: {documented:?}");
    for (schema, fields) in documented {
        let described: BTreeSet<String> =
            children(SPEC, &["components", "schemas", schema, "properties"])
                .into_iter()
                .collect();
        assert_eq!(described, fields, "{schema}: openapi.yaml vs docs");
        assert_eq!(
            value(
                SPEC,
                &["components", "schemas", schema],
                "additionalProperties"
            )
            .as_deref(),
            Some("false"),
            "{schema}: unknown fields are refused"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_document_is_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start_demo(dir.path());
    let response = get(gateway.addr, "/api/v1/openapi.yaml", None).await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-type"),
        Some("application/yaml; charset=utf-8")
    );
    assert!(response.header("x-request-id").is_some());
    assert_eq!(response.body, SPEC, "served verbatim");
}

// ---- v1 stays backward compatible with the contract of 1.0.0 ----

mod compat;

/// The document of release 1.0.0, as its commit had it (`git show <1.0.0>:protocols/...`).
const RELEASE_1_0_0: &str = include_str!("../fixtures/release-1.0.0/openapi.yaml");

#[test]
fn v1_keeps_the_contract_of_1_0_0() {
    let old = compat::parse(RELEASE_1_0_0);
    let new = compat::parse(SPEC);
    // The reader sees the documents: every 1.0.0 path and the schemas compared.
    let paths = old.get("paths").map(|p| match p {
        compat::Node::Map(entries) => entries.len(),
        _ => 0,
    });
    assert_eq!(paths, Some(5), "1.0.0's paths read");
    assert!(new
        .get("components")
        .and_then(|c| c.get("schemas"))
        .and_then(|s| s.get("InvoiceRequest"))
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get("rn"))
        .is_some());
    let breaks = compat::breaks(&old, &new);
    assert!(
        breaks.is_empty(),
        "v1 breaks clients of 1.0.0:\n{}",
        breaks.join("\n")
    );
}

const BASE: &str = r##"openapi: 3.0.3
paths:
  /Invoice:
    post:
      parameters:
        - name: lang
          in: query
          required: false
          schema:
            type: string
      requestBody:
        content:
          application/json:
            schema:
              $ref: "#/components/schemas/Request"
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Answer"
  /status:
    get:
      responses:
        "200":
          description: ok
  /Invoice/{rn}:
    get:
      parameters:
        - $ref: "#/components/parameters/Rn"
        - $ref: "#/components/parameters/Trace"
      responses:
        "200":
          description: ok
          headers:
            X-Request-Id:
              schema:
                type: string
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Answer"
            text/csv:
              schema:
                type: string
        "404":
          description: not found
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Error404"
components:
  parameters:
    Rn:
      name: rn
      in: path
      required: true
      schema:
        type: string
    Trace:
      name: X-Trace
      in: header
      required: false
      schema:
        type: string
  schemas:
    Request:
      type: object
      required: [rn]
      properties:
        rn:
          type: string
        type:
          $ref: "#/components/schemas/Kind"
        items:
          type: array
          items:
            $ref: "#/components/schemas/Item"
        memo:
          type: [string, "null"]
    Item:
      type: object
      properties:
        name:
          type: string
        price:
          type: string
    Kind:
      type: string
      enum: [FV, FA]
    Answer:
      type: object
      required: [code]
      properties:
        code:
          type: string
          description: |
            The code: a text.
        total:
          type: string
          format: decimal
        client:
          type: [string, "null"]
    Error404:
      allOf:
        - $ref: "#/components/schemas/Error"
        - properties:
            errorCode:
              enum: [120, 170]
    Error:
      type: object
      properties:
        errorCode:
          type: integer
        note:
          anyOf:
            - type: string
            - type: "null"
"##;

/// `BASE` with `from` replaced by `to` (which must be there).
fn changed(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn the_comparer_fails_on_each_kind_of_break() {
    let base = compat::parse(BASE);
    assert_eq!(compat::breaks(&base, &base), Vec::<String>::new());
    // Compatible: a new path, field, enum value, optional field, a prose change.
    let grown = changed(
        "        total:\n",
        "        extra:\n          type: string\n        total:\n",
    )
    .replace("enum: [FV, FA]", "enum: [FV, FA, EV]")
    .replace("The code: a text.", "The code, said otherwise.")
    .replace(
        "  /status:\n",
        "  /other:\n    get:\n      responses: {}\n  /status:\n",
    )
    // A request field taking null too, or a number: more is accepted.
    .replacen(
        "        rn:\n          type: string\n",
        "        rn:\n          type: [string, \"null\"]\n",
        1,
    )
    .replace(
        "        memo:\n          type: [string, \"null\"]\n",
        "        memo:\n          type: [string, integer, \"null\"]\n",
    )
    // An optional parameter where there were none, a new status, header, content type,
    // `anyOf` branch... of a response.
    .replace(
        "  /status:\n    get:\n",
        "  /status:\n    get:\n      parameters:\n        - name: since\n          in: query\n          schema:\n            type: string\n",
    )
    .replace(
        "        \"404\":\n          description: not found\n",
        "        \"410\":\n          description: gone\n        \"404\":\n          description: not found\n",
    )
    .replace(
        "          headers:\n            X-Request-Id:\n",
        "          headers:\n            X-Other:\n              schema:\n                type: string\n            X-Request-Id:\n",
    )
    .replace(
        "            text/csv:\n",
        "            text/plain:\n              schema:\n                type: string\n            text/csv:\n",
    )
    .replace("enum: [120, 170]", "enum: [120, 170, 171]");
    assert_eq!(
        compat::breaks(&base, &compat::parse(&grown)),
        Vec::<String>::new()
    );
    // A new required field of a response is no break for a client either.
    let answer_required = changed("required: [code]", "required: [code, total]");
    assert_eq!(
        compat::breaks(&base, &compat::parse(&answer_required)),
        Vec::<String>::new()
    );

    let cases = [
        (
            "  /status:\n    get:\n",
            "  /state:\n    get:\n",
            "path /status removed",
        ),
        (
            "  /status:\n    get:\n",
            "  /status:\n    put:\n",
            "GET /status removed",
        ),
        (
            "        total:\n          type: string\n          format: decimal\n",
            "",
            "field total removed",
        ),
        (
            "        price:\n          type: string\n",
            "",
            "field price removed",
        ),
        ("enum: [FV, FA]", "enum: [FV]", "enum value FA removed"),
        (
            "required: [rn]",
            "required: [rn, type]",
            "request field type made required",
        ),
        (
            "    Item:\n      type: object\n",
            "    Item:\n      type: object\n      required: [name]\n",
            "request field name made required",
        ),
        (
            "          required: false\n",
            "          required: true\n",
            "parameter lang made required",
        ),
        // A type list that loses a member, or changes one.
        (
            "        client:\n          type: [string, \"null\"]\n",
            "        client:\n          type: string\n",
            "client: type [null, string] became string",
        ),
        (
            "        client:\n          type: [string, \"null\"]\n",
            "        client:\n          type: [integer, \"null\"]\n",
            "client: type [null, string] became [integer, null]",
        ),
        (
            "        memo:\n          type: [string, \"null\"]\n",
            "        memo:\n          type: string\n",
            "memo: type [null, string] became string",
        ),
        // A response field that gains a type: a strict client fails on it.
        (
            "        code:\n          type: string\n",
            "        code:\n          type: [string, \"null\"]\n",
            "code: type string became [null, string]",
        ),
        (
            "        errorCode:\n          type: integer\n",
            "        errorCode:\n          type: [integer, string]\n",
            "errorCode: type integer became [integer, string]",
        ),
        // A parameter component made required, read through the operation's `$ref`.
        (
            "      name: X-Trace\n      in: header\n      required: false\n",
            "      name: X-Trace\n      in: header\n      required: true\n",
            "parameter X-Trace made required (in header)",
        ),
        // A required parameter where the operation had none.
        (
            "  /status:\n    get:\n",
            "  /status:\n    get:\n      parameters:\n        - name: since\n          in: query\n          required: true\n          schema:\n            type: string\n",
            "paths./status.get: parameter since made required (in query)",
        ),
        // A branch removed from an `allOf` (the errorCode values of a status) or an `anyOf`.
        (
            "        - properties:\n            errorCode:\n              enum: [120, 170]\n",
            "",
            "Error404.allOf: allOf branch 1 removed",
        ),
        (
            "            - type: string\n            - type: \"null\"\n",
            "            - type: \"null\"\n",
            "note.anyOf: anyOf branch 0 removed",
        ),
        (
            "          anyOf:\n            - type: string\n            - type: \"null\"\n",
            "          type: string\n",
            "note: anyOf removed",
        ),
        // A response status, a response header, a content type removed.
        (
            "        \"404\":\n          description: not found\n          content:\n            application/json:\n              schema:\n                $ref: \"#/components/schemas/Error404\"\n",
            "",
            "response status 404 removed",
        ),
        (
            "            X-Request-Id:\n              schema:\n                type: string\n",
            "            X-Other:\n              schema:\n                type: string\n",
            "header X-Request-Id removed",
        ),
        (
            "            text/csv:\n              schema:\n                type: string\n",
            "",
            "content type text/csv removed",
        ),
        (
            "        rn:\n          type: string\n",
            "        rn:\n          type: integer\n",
            "type string became integer",
        ),
        (
            "          format: decimal\n",
            "          format: double\n",
            "format decimal became double",
        ),
        (
            "              $ref: \"#/components/schemas/Request\"",
            "              $ref: \"#/components/schemas/Item\"",
            "$ref",
        ),
    ];
    for (from, to, expected) in cases {
        let found = compat::breaks(&base, &compat::parse(&changed(from, to)));
        assert!(
            found.iter().any(|b| b.contains(expected)),
            "{expected:?} not found for {from:?} -> {to:?}: {found:?}"
        );
    }
}

/// The same breaks made to today's document are found there too: the reader sees its type
/// lists, parameter components, branches, statuses, headers and content types.
#[test]
fn the_comparer_finds_breaks_in_the_real_document() {
    let old = compat::parse(RELEASE_1_0_0);
    let cases = [
        ("type: [string, \"null\"]", "type: string", "became string"),
        (
            "      name: Idempotency-Key\n      in: header\n      required: false\n",
            "      name: Idempotency-Key\n      in: header\n      required: true\n",
            "parameter Idempotency-Key made required (in header)",
        ),
        (
            "        - properties:\n            errorCode:\n              enum: [100, 101, 102]\n",
            "",
            "Error401.allOf: allOf branch 1 removed",
        ),
        (
            "        \"401\":\n          $ref: \"#/components/responses/Unauthorized\"\n",
            "",
            "response status 401 removed",
        ),
        (
            "            X-Request-Id:\n              $ref: \"#/components/headers/X-Request-Id\"\n",
            "",
            "header X-Request-Id removed",
        ),
        ("            application/yaml:\n", "            text/yaml:\n", "content type application/yaml removed"),
    ];
    for (from, to, expected) in cases {
        assert!(SPEC.contains(from), "{from:?}");
        let found = compat::breaks(&old, &compat::parse(&SPEC.replacen(from, to, 1)));
        assert!(
            found.iter().any(|b| b.contains(expected)),
            "{expected:?} not found for {from:?} -> {to:?}: {found:?}"
        );
    }
}
