//! Formula injection through the CSV export (issue 14, point 2; issue 24, point 8): an
//! API-key holder chooses the `rn`, and `log export --format csv` lands in an administrator's
//! spreadsheet. A text cell that begins with `=`, `+`, `-` or `@`, or with blanks before one
//! of them, is written with `'` in front, in both CSV forms (amounts are numbers the gateway
//! writes and stay numbers); the register and the JSON export keep the value exactly.
//!
//! Real binary, simulator on a pty (see `common`).

use crate::common;

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

/// Issue 24, point 5: beside the plain CSV, the dashboard offers "CSV pour Excel", the same
/// export as `log export --separator semicolon --bom` (one code path): a byte order mark,
/// semicolons, decimal commas, formulas neutralized, a credit note's amounts negative numbers.
#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_offers_a_csv_for_excel() {
    let api = ApiSetup::start(None).await;
    let addr = api.addr();
    let sale = post_invoice(addr, &api.key, &invoice(" =1+1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let code = sale.json["codeDEFDGI"].as_str().expect("code").to_string();
    let note = post_invoice(
        addr,
        &api.key,
        &common::credit_note_of("XL-FA-1", &code, "FA"),
    )
    .await;
    assert_eq!(note.status, 200, "{}", note.body);
    let token = common::issue_dashboard_token(&api.gateway, "acme");
    let (session, _) = common::dashboard_sign_in(addr, &token).await;

    let search = common::dashboard_get(addr, Some(&session), "/dashboard/invoices").await;
    assert!(
        search.body.contains(
            "href=\"/dashboard/invoices.csv?env=production&amp;format=excel\" id=\"csv-excel\""
        ) && search.body.contains(">CSV pour Excel</a>"),
        "{}",
        search.body
    );
    // What it is for, in words a phone shows too (no tooltip, no jargon).
    assert!(
        search.body.contains(
            "<small id=\"csv-excel-hint\">S&#39;ouvre directement en colonnes dans Excel ou LibreOffice en français.</small>"
        ) && !search.body.contains("marque d&#39;ordre"),
        "{}",
        search.body
    );
    let excel = common::dashboard_get(
        addr,
        Some(&session),
        "/dashboard/invoices.csv?env=production&format=excel",
    )
    .await;
    assert_eq!(excel.status, 200, "{}", excel.body);
    assert_eq!(
        excel.header("content-type"),
        Some("text/csv; charset=utf-8")
    );
    assert!(
        excel
            .header("content-disposition")
            .is_some_and(|d| d.contains("loginvoices-acme-production-excel.csv")),
        "{:?}",
        excel.header("content-disposition")
    );
    let body = excel
        .body
        .strip_prefix('\u{FEFF}')
        .unwrap_or_else(|| panic!("no byte order mark: {:?}", excel.body));
    let rows = parse_csv(body, ';');
    let at = |row: usize, name: &str| {
        let i = rows[0].iter().position(|h| h == name).expect(name);
        rows[row][i].clone()
    };
    assert_eq!(rows.len(), 3, "{body}");
    assert_eq!(
        (at(1, "rn"), at(1, "total")),
        ("' =1+1".into(), "1200,00".into())
    );
    assert_eq!(
        (at(2, "type"), at(2, "total"), at(2, "vat")),
        ("FA".into(), "-1200,00".into(), "-165,52".into())
    );
    // The CLI's spreadsheet export says the same, line for line.
    let cli = api.cli_ok(&["log", "export", "--separator", "semicolon", "--bom"]);
    assert_eq!(excel.body.replace("\r\n", "\n"), cli);
    // The plain CSV is still the programs' one.
    let plain = common::dashboard_get(
        addr,
        Some(&session),
        "/dashboard/invoices.csv?env=production",
    )
    .await;
    assert!(
        plain.body.starts_with("sequence,environment,org,"),
        "{}",
        plain.body
    );
}
