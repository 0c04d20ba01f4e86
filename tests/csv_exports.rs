//! Formula injection through the CSV export (issue 14, point 2; issue 24, point 8): an
//! API-key holder chooses the `rn`, and `log export --format csv` lands in an administrator's
//! spreadsheet. A text cell that begins with `=`, `+`, `-` or `@`, or with blanks before one
//! of them, is written with `'` in front, in both CSV forms (amounts are numbers the gateway
//! writes and stay numbers); the register and the JSON export keep the value exactly.
//!
//! Real binary, simulator on a pty (see `common`).

mod common;

use common::{invoice, post_invoice, ApiSetup};

/// The `rn`s of the attack, and what their CSV cell must hold once read back per RFC 4180.
const CASES: &[(&str, &str)] = &[
    ("=HYPERLINK(\"http://e.x\")", "'=HYPERLINK(\"http://e.x\")"),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("@SUM(1+1)", "'@SUM(1+1)"),
    ("-2+3", "'-2+3"),
    // Blanks before the formula: spreadsheets skip them and run it.
    (" =1+1", "' =1+1"),
    ("   @SUM(1+1)", "'   @SUM(1+1)"),
    // An rn is a text even when it looks like a number: kept a text.
    ("-116.00", "'-116.00"),
];

/// The cells of one CSV text per RFC 4180 (quoted cells, `""` inside them, CRLF or LF),
/// cells separated by `separator`.
fn parse_csv(text: &str, separator: char) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') if cell.is_empty() => quoted = true,
            (false, c) if c == separator => row.push(std::mem::take(&mut cell)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() || !row.is_empty() {
        row.push(cell);
        rows.push(row);
    }
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn an_rn_that_is_a_formula_reaches_the_csv_as_text_and_the_json_unchanged() {
    let api = ApiSetup::start(None).await;
    for (rn, _) in CASES {
        let response = post_invoice(api.addr(), &api.key, &invoice(rn)).await;
        assert_eq!(response.status, 200, "{rn}: {}", response.json);
        assert_eq!(response.json["rn"], *rn);
    }

    let csv = api.cli_ok(&["log", "export", "--format", "csv", "--org", "acme"]);
    let rows = parse_csv(&csv, ',');
    let header = &rows[0];
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    assert_eq!(rows.len(), 1 + CASES.len(), "{csv}");
    for (row, (rn, cell)) in rows[1..].iter().zip(CASES) {
        assert_eq!(row.len(), header.len(), "{csv}");
        assert_eq!(row[column("rn")], *cell, "rn {rn}");
        assert_eq!(row[column("total")], "1200.00");
    }
    // No cell of the export begins, blanks aside, with a trigger character unless it is a
    // plain number.
    for cell in rows.iter().flatten() {
        let visible = cell.trim_start();
        let formula = cell.starts_with(['\t', '\r'])
            || visible.starts_with(['=', '+', '@'])
            || (visible.starts_with('-') && visible.parse::<f64>().is_err());
        assert!(!formula, "cell {cell:?} in\n{csv}");
    }

    // For a French spreadsheet: a byte order mark, semicolons, decimal commas; the same rows.
    let french = api.cli_ok(&[
        "log",
        "export",
        "--format",
        "csv",
        "--separator",
        "semicolon",
        "--bom",
        "--org",
        "acme",
    ]);
    let body = french
        .strip_prefix('\u{FEFF}')
        .unwrap_or_else(|| panic!("no byte order mark: {french:?}"));
    assert!(body.starts_with("sequence;environment;org;"), "{body}");
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 1 + CASES.len(), "{body}");
    assert!(lines[1].contains(";1200,00;"), "{}", lines[1]);
    assert!(!lines[1].contains(",00,"), "{}", lines[1]);
    let french_rows = parse_csv(body, ';');
    for (row, (rn, cell)) in french_rows[1..].iter().zip(CASES) {
        assert_eq!(row.len(), header.len(), "{body}");
        assert_eq!(row[column("rn")], *cell, "rn {rn}, semicolons");
        assert_eq!(row[column("total")], "1200,00");
    }

    // The register is not rewritten: the JSON export and `log show` carry the rn as certified.
    let entries = common::exported_entries(api.dir.path(), &api.gateway.config);
    let rns: Vec<&str> = entries.iter().filter_map(|e| e["rn"].as_str()).collect();
    let sent: Vec<&str> = CASES.iter().map(|(rn, _)| *rn).collect();
    assert_eq!(rns, sent);
    let shown: serde_json::Value =
        serde_json::from_str(&api.cli_ok(&["log", "show", "1", "--json"])).expect("JSON");
    assert_eq!(shown["rn"], CASES[0].0);
}
