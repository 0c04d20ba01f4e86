//! What an auditor asks (issue 15, point 1-2): "what exactly did invoice X say, and which
//! credit notes reduce it?", answered from the CLI and the dashboard alone, and exports by
//! period with the client, the reference and HT/VAT/TTC per group.
//!
//! Real binary, simulator on a pty, real HTTP (see `common`).

use crate::common;

use common::*;
use serde_json::{json, Value};

/// An invoice with a client, two groups, a payment and a comment.
fn detailed(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FV",
        "client": {"name": "Kinshasa Matériaux SARL", "nif": "A7654321Z", "type": "PM",
                   "address": "12 av. du Commerce, Gombe"},
        "items": [
            {"name": "Sac de ciment 50 kg", "code": "CIM-50", "type": "BIE", "price": "14500",
             "quantity": "2", "taxGroup": "B"},
            {"name": "Livraison", "type": "SER", "price": "5000", "quantity": "1",
             "taxGroup": "A"}
        ],
        "payments": [{"name": "VIREMENT", "amount": "34000", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "7", "name": "Amani"},
        "cmta": "Livré au dépôt de Limete"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auditor_reads_what_an_invoice_said_and_its_credit_notes() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let original = post_invoice(addr, &setup.key, &detailed("AUD-1")).await;
    assert_eq!(original.status, 200, "{}", original.body);
    let code = original.json["codeDEFDGI"]
        .as_str()
        .expect("code")
        .to_string();
    let other = post_invoice(addr, &setup.key, &invoice("AUD-2")).await;
    assert_eq!(other.status, 200, "{}", other.body);
    let mut note = credit_note_of("AUD-FA-1", &code, "FA");
    note["referenceType"] = json!("RAN");
    let credit = post_invoice(addr, &setup.key, &note).await;
    assert_eq!(credit.status, 200, "{}", credit.body);

    // The CLI, for people: client, items, payments, comment, groups, and the credit note.
    let shown = setup.cli_ok(&["log", "show", "1"]);
    for text in [
        "Facture de vente AUD-1 — registre de production, entrée 1",
        "Facture de vente (FV)",
        "Kinshasa Matériaux SARL",
        "A7654321Z",
        "Sac de ciment 50 kg [CIM-50]",
        "VIREMENT",
        "34\u{202f}000,00\u{a0}CDF",
        "Livré au dépôt de Limete",
        "Avoirs qui réduisent cette facture",
        "AUD-FA-1",
        "Contenu gardé tel que certifié",
    ] {
        assert!(shown.contains(text), "{text:?} missing:\n{shown}");
    }
    // Group B: TTC 29 000, VAT 4 000 (16 % included), HT 25 000.
    assert!(
        shown.contains("25\u{202f}000,00") && shown.contains("4\u{202f}000,00"),
        "{shown}"
    );
    // The credit note names its original, found by rn.
    let note_shown = setup.cli_ok(&[
        "log", "show", "--org", "acme", "--rn", "AUD-FA-1", "--lang", "en",
    ]);
    assert!(
        note_shown.contains("This credit note reduces the invoice"),
        "{note_shown}"
    );
    assert!(
        note_shown.starts_with("Credit note AUD-FA-1 — production register, entry 3"),
        "{note_shown}"
    );
    assert!(note_shown.contains("Credit note (FA)"), "{note_shown}");
    assert!(
        note_shown.contains("AUD-1") && note_shown.contains(&code),
        "{note_shown}"
    );
    assert!(note_shown.contains("(RAN)"), "{note_shown}");

    // The same for scripts.
    let json: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "show", "1", "--json"])).expect("JSON");
    let kept = &json["certified_invoice"];
    assert_eq!(kept["status"], "kept", "{json}");
    assert_eq!(kept["invoice"]["client"]["name"], "Kinshasa Matériaux SARL");
    assert_eq!(kept["invoice"]["items"][0]["quantity"], "2");
    assert_eq!(json["credit_notes"][0]["rn"], "AUD-FA-1", "{json}");
    assert_eq!(json["credit_notes"].as_array().map(Vec::len), Some(1));
    let groups = json["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 2, "{json}");
    assert_eq!(groups[1]["group"], "B");
    assert_eq!(groups[1]["ht"], "25000.00");
    let note_json: Value = serde_json::from_str(
        &setup.cli_ok(&["log", "show", "--org", "acme", "--rn", "AUD-FA-1", "--json"]),
    )
    .expect("JSON");
    assert_eq!(note_json["original"]["rn"], "AUD-1", "{note_json}");
    assert!(note_json["credit_notes"]
        .as_array()
        .is_some_and(Vec::is_empty));
    // An invoice without a credit note has none; an unknown rn is an error.
    let plain: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "show", "2", "--json"])).expect("JSON");
    assert_eq!(plain["original"], Value::Null);
    let missing = setup
        .gateway
        .cli(&["log", "show", "--org", "acme", "--rn", "NOPE"]);
    assert!(!missing.status.success());

    // The register verifies, and says how many invoices it keeps.
    let verify: Value = serde_json::from_str(&setup.cli_ok(&["log", "verify"])).expect("JSON");
    assert_eq!(verify["invoices_kept"], 3, "{verify}");
    // A journal has one head; a database has a chain per organization, and no empty head.
    if crate::common::store::on_postgres() {
        assert!(verify["chains"].as_u64() >= Some(1), "{verify}");
        assert!(verify.get("head_sha256").is_none(), "{verify}");
    } else {
        assert_eq!(
            verify["head_sha256"].as_str().map(str::len),
            Some(64),
            "{verify}"
        );
    }

    // The dashboard: the same content and the links both ways, and the print links.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _csrf) = dashboard_sign_in(addr, &token).await;
    let page = dashboard_get(addr, Some(&session), "/dashboard/invoices/production/1").await;
    assert_eq!(page.status, 200, "{}", page.body);
    for text in [
        "Kinshasa Matériaux SARL",
        "Sac de ciment 50 kg",
        "Livré au dépôt de Limete",
        "id=\"credit-notes\"",
        "href=\"/dashboard/invoices/production/3\">AUD-FA-1</a>",
        "href=\"/dashboard/invoices/production/1/receipt?layout=a4\"",
        "href=\"/dashboard/invoices/production/1/receipt?layout=80mm\"",
    ] {
        assert!(page.body.contains(text), "{text:?} missing:\n{}", page.body);
    }
    assert!(
        page.body.contains("id=\"type\">Facture de vente (FV)<"),
        "{}",
        page.body
    );
    // The credit notes table names each note's document.
    assert!(
        page.body.contains("Facture d&#39;avoir <small>FA</small>"),
        "{}",
        page.body
    );
    let note_page = dashboard_get(addr, Some(&session), "/dashboard/invoices/production/3").await;
    for text in [
        "href=\"/dashboard/invoices/production/1\">AUD-1</a>",
        "<title>Facture d&#39;avoir AUD-FA-1",
        "id=\"type\">Facture d&#39;avoir (FA)<",
    ] {
        assert!(
            note_page.body.contains(text),
            "{text:?} missing:\n{}",
            note_page.body
        );
    }
    // The register list names each entry's document.
    let list = dashboard_get(addr, Some(&session), "/dashboard/invoices?env=production").await;
    for text in [
        "Facture de vente <small>FV</small>",
        "Facture d&#39;avoir <small>FA</small>",
    ] {
        assert!(list.body.contains(text), "{text:?} missing:\n{}", list.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_by_period_carry_client_reference_and_groups() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let original = post_invoice(addr, &setup.key, &detailed("EXP-1")).await;
    assert_eq!(original.status, 200, "{}", original.body);
    let code = original.json["codeDEFDGI"]
        .as_str()
        .expect("code")
        .to_string();
    let credit = post_invoice(addr, &setup.key, &credit_note_of("EXP-FA-1", &code, "FA")).await;
    assert_eq!(credit.status, 200, "{}", credit.body);
    let today = chrono::Utc::now().date_naive();
    let (yesterday, tomorrow) = (
        today.pred_opt().expect("day"),
        today.succ_opt().expect("day"),
    );

    // The period is read in the configured zone (UTC+1 here), not UTC: the window from the day
    // before to the day after today (UTC) holds both whatever the hour.
    let csv = setup.cli_ok(&[
        "log",
        "export",
        "--org",
        "acme",
        "--from",
        &yesterday.to_string(),
        "--to",
        &tomorrow.to_string(),
    ]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let at = |row: &[&str], name: &str| -> String {
        let i = header.iter().position(|h| *h == name).expect(name);
        row[i].to_string()
    };
    assert_eq!(
        header[..3],
        ["sequence", "environment", "org"],
        "1.4.0's columns first"
    );
    assert_eq!(at(&rows[0], "clientName"), "Kinshasa Matériaux SARL");
    assert_eq!(at(&rows[0], "htB"), "25000.00");
    assert_eq!(at(&rows[0], "vatB"), "4000.00");
    assert_eq!(at(&rows[0], "ttcB"), "29000.00");
    assert_eq!(at(&rows[0], "ttcA"), "5000.00");
    assert_eq!(at(&rows[1], "type"), "FA");
    assert_eq!(at(&rows[1], "reference"), code);
    assert_eq!(at(&rows[1], "referenceType"), "RAM");

    // A period after today (in any zone: days after tomorrow) holds nothing; reversed dates
    // are refused.
    let after = today + chrono::Days::new(3);
    let later = setup.cli_ok(&["log", "export", "--from", &after.to_string()]);
    assert_eq!(later.lines().count(), 1, "header only: {later}");
    let reversed = setup.gateway.cli(&[
        "log",
        "export",
        "--from",
        &tomorrow.to_string(),
        "--to",
        &yesterday.to_string(),
    ]);
    assert!(!reversed.status.success());

    // JSON lines: the entry as journaled, the invoice, the groups.
    let json = setup.cli_ok(&["log", "export", "--format", "json", "--org", "acme"]);
    let first: Value = serde_json::from_str(json.lines().next().expect("line")).expect("JSON");
    assert_eq!(first["rn"], "EXP-1");
    assert_eq!(
        first["certified_invoice"]["invoice"]["client"]["nif"],
        "A7654321Z"
    );
    assert_eq!(first["groups"][1]["ttc"], "29000.00");

    // The dashboard's downloads follow the search's dates, in CSV and JSON.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _csrf) = dashboard_sign_in(addr, &token).await;
    let empty = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/invoices.csv?env=production&from={after}"),
    )
    .await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert_eq!(empty.body.lines().count(), 1, "{}", empty.body);
    let both = dashboard_get(
        addr,
        Some(&session),
        &format!(
            "/dashboard/invoices.csv?env=production&from={yesterday}&to={tomorrow}&format=json"
        ),
    )
    .await;
    assert_eq!(both.status, 200, "{}", both.body);
    assert_eq!(both.body.lines().count(), 2, "{}", both.body);
    assert!(both.body.contains("\"reference\":\""), "{}", both.body);
    let bad = dashboard_get(addr, Some(&session), "/dashboard/invoices.csv?format=xml").await;
    assert_eq!(bad.status, 400);
    // The search page links the downloads with its dates.
    let search = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/invoices?env=production&from={yesterday}"),
    )
    .await;
    assert!(
        search
            .body
            .contains(&format!("invoices.csv?env=production&amp;from={yesterday}")),
        "{}",
        search.body
    );
}

/// Issue 24, point 1: each key and each entry shows its real environment, in the reader's
/// words in tables and as the API spells it (`production`, `sandbox`) in every JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_and_entries_show_their_real_environment() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let test_key = setup.issue_key(true);
    let (live_id, test_id) = (&setup.key[9..21], &test_key[9..21]);
    let certified = post_invoice(addr, &test_key, &invoice("ENV-1")).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    assert_eq!(certified.json["environment"], "sandbox");

    let row_of = |table: &str, id: &str| -> String {
        table
            .lines()
            .find(|line| line.starts_with(id))
            .unwrap_or_else(|| panic!("no row {id} in\n{table}"))
            .to_string()
    };
    let french = setup.cli_ok(&["key", "list", "--org", "acme"]);
    assert!(row_of(&french, test_id).contains("bac à sable"), "{french}");
    assert!(!row_of(&french, test_id).contains("production"), "{french}");
    assert!(row_of(&french, live_id).contains("production"), "{french}");
    let english = setup.cli_ok(&["key", "list", "--org", "acme", "--lang", "en"]);
    assert!(row_of(&english, test_id).contains("sandbox"), "{english}");
    assert!(
        !row_of(&english, test_id).contains("production"),
        "{english}"
    );

    let listed: Value =
        serde_json::from_str(&setup.cli_ok(&["key", "list", "--org", "acme", "--json"]))
            .expect("JSON");
    let environment_of = |id: &str| {
        listed
            .as_array()
            .into_iter()
            .flatten()
            .find(|k| k["id"] == id)
            .map(|k| k["environment"].clone())
    };
    assert_eq!(environment_of(test_id), Some(json!("sandbox")), "{listed}");
    assert_eq!(
        environment_of(live_id),
        Some(json!("production")),
        "{listed}"
    );

    // The sandbox register's entry, listed and shown.
    let entries: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "list", "--sandbox", "--json"])).expect("JSON");
    assert_eq!(entries[0]["rn"], "ENV-1", "{entries}");
    assert_eq!(entries[0]["environment"], "sandbox", "{entries}");
    let shown: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "show", "1", "--sandbox", "--json"]))
            .expect("JSON");
    assert_eq!(shown["environment"], "sandbox", "{shown}");
    let text = setup.cli_ok(&["log", "show", "1", "--sandbox"]);
    assert!(text.contains("registre du bac à sable, entrée 1"), "{text}");
    let exported = setup.cli_ok(&["log", "export", "--format", "json", "--sandbox"]);
    let line: Value = serde_json::from_str(exported.trim()).expect("one JSON line");
    assert_eq!(line["environment"], "sandbox", "{line}");

    // The dashboard names each register in a sentence that reads right.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let sandbox = dashboard_get(addr, Some(&session), "/dashboard/invoices?env=sandbox").await;
    for text in [
        "<legend>Chercher dans le registre du bac à sable</legend>",
        ">Exporter le registre du bac à sable en CSV (dates de la recherche)</a>",
    ] {
        assert!(sandbox.body.contains(text), "{text}\n{}", sandbox.body);
    }
    let production =
        dashboard_get(addr, Some(&session), "/dashboard/invoices?env=production").await;
    assert!(
        production
            .body
            .contains(">Exporter le registre de production en CSV (dates de la recherche)</a>"),
        "{}",
        production.body
    );
    let overview = dashboard_get(addr, Some(&session), "/dashboard/").await;
    assert!(
        overview.body.contains(">0 en production</a>")
            && overview.body.contains(">1 dans le bac à sable</a>"),
        "{}",
        overview.body
    );
    let entry = dashboard_get(addr, Some(&session), "/dashboard/invoices/sandbox/1").await;
    assert!(
        entry.body.contains("← Registre du bac à sable</a>"),
        "{}",
        entry.body
    );
}

/// A sale in USD as the issue saw it: 570,000 CDF (200 USD at 2,850 CDF per USD), paid in cash
/// in USD.
/// `log show`'s text with each run of plain spaces made one (the labels' padding), its
/// no-break spaces kept.
fn squeezed(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the value of the row `label` starts in `log show`'s `text`, in characters.
fn value_column(text: &str, label: &str) -> usize {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("  {label} ")))
        .unwrap_or_else(|| panic!("no row {label:?}:\n{text}"));
    let after = &line[2 + label.len()..];
    2 + label.chars().count() + after.chars().take_while(|c| *c == ' ').count()
}

fn usd_sale(rn: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": "FV", "curCode": "USD", "curRate": "2850",
        "curDate": "2026-11-20",
        "items": [{"name": "Groupe électrogène", "type": "BIE", "price": "570000.00",
                   "quantity": "1", "taxGroup": "B"}],
        "payments": [{"name": "ESPECES", "amount": "570000.00", "curCode": "USD",
                      "curRate": "2850"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}

/// A credit note of `kind` in USD against the invoice certified as `original`: 28,500 CDF
/// (10 USD).
fn usd_credit_note(rn: &str, original: &str, kind: &str) -> Value {
    json!({
        "rn": rn, "mode": "ttc", "type": kind, "curCode": "USD", "curRate": "2850",
        "curDate": "2026-11-21", "reference": original, "referenceType": "RRR",
        "items": [{"name": "Remise", "type": "BIE", "price": "28500.00", "quantity": "1",
                   "taxGroup": "B"}],
        "payments": [{"name": "ESPECES", "amount": "28500.00", "curCode": "USD",
                      "curRate": "2850"}],
        "operator": {"id": "1", "name": "Caisse 1"}
    })
}

/// The sum of the column `name` of a CSV export whose decimals use `point`.
fn column_sum(csv: &str, separator: char, point: char, name: &str) -> rust_decimal::Decimal {
    let mut lines = csv.trim_start_matches('\u{feff}').lines();
    let header: Vec<&str> = lines.next().expect("header").split(separator).collect();
    let at = header.iter().position(|h| *h == name).expect(name);
    lines
        .map(|line| {
            let cell = line
                .split(separator)
                .nth(at)
                .expect("cell")
                .replace(point, ".");
            cell.parse::<rust_decimal::Decimal>()
                .unwrap_or_else(|e| panic!("{cell:?} in {line}: {e}"))
        })
        .sum()
}

/// Issue 24, point 1: a credit note is negative in every export (its total, VAT, groups and
/// USD equivalent), so that a sum of `total` is the net turnover; the API answer and the
/// register keep the device's figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sum_of_exported_totals_is_the_net_turnover() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let sale = post_invoice(addr, &setup.key, &usd_sale("NET-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let code = sale.json["codeDEFDGI"].as_str().expect("code").to_string();
    let small = post_invoice(addr, &setup.key, &invoice("NET-2")).await;
    assert_eq!(small.status, 200, "{}", small.body);
    let note = post_invoice(addr, &setup.key, &usd_credit_note("NET-FA-1", &code, "FA")).await;
    assert_eq!(note.status, 200, "{}", note.body);
    // The API answers the device's figures.
    assert_eq!(note.json["total"], "28500.00", "{}", note.body);
    assert_eq!(note.json["usdTotal"], "10.00", "{}", note.body);
    let net: rust_decimal::Decimal = "542700.00".parse().expect("decimal");

    let csv = setup.cli_ok(&["log", "export", "--org", "acme"]);
    assert_eq!(column_sum(&csv, ',', '.', "total"), net, "{csv}");
    let header = csv.lines().next().expect("header");
    assert!(header.starts_with("sequence,environment,org,nif,isf,rn,type,total,vat,"));
    assert!(
        header.contains(",invoiceCurrency,usdRate,usdEquivalent,"),
        "{header}"
    );
    assert!(header.ends_with(",amountCurrency,amountSign"), "{header}");
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let at = |row: usize, name: &str| {
        let i = rows[0].iter().position(|h| *h == name).expect(name);
        rows[row][i].to_string()
    };
    assert_eq!(
        [
            "type",
            "total",
            "vat",
            "ttcB",
            "vatB",
            "htB",
            "ht",
            "usdEquivalent"
        ]
        .map(|n| at(3, n)),
        [
            "FA",
            "-28500.00",
            "-3931.03",
            "-28500.00",
            "-3931.03",
            "-24568.97",
            "-24568.97",
            "-10.00"
        ]
    );
    assert_eq!(
        ["invoiceCurrency", "usdRate", "amountCurrency", "amountSign"].map(|n| at(3, n)),
        ["USD", "2850", "CDF", "-1"]
    );
    assert_eq!(
        ["total", "usdEquivalent", "amountSign"].map(|n| at(1, n)),
        ["570000.00", "200.00", "1"]
    );

    let french = setup.cli_ok(&["log", "export", "--separator", "semicolon", "--bom"]);
    assert_eq!(column_sum(&french, ';', ',', "total"), net, "{french}");
    assert!(french.contains(";FA;-28500,00;-3931,03;"), "{french}");

    let json = setup.cli_ok(&["log", "export", "--format", "json"]);
    let lines: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let sum: rust_decimal::Decimal = lines
        .iter()
        .map(|l| {
            l["totals"]["total"]
                .as_str()
                .expect("total")
                .parse::<rust_decimal::Decimal>()
                .expect("decimal")
        })
        .sum();
    assert_eq!(sum, net, "{json}");
    assert_eq!(lines[2]["totals"]["usd_equivalent"], "-10.00");
    assert_eq!(lines[2]["groups"][0]["ttc"], "-28500.00");
    assert_eq!(lines[2]["amount_sign"], -1);
    // What the invoice said is kept as certified.
    assert_eq!(
        lines[2]["certified_invoice"]["invoice"]["items"][0]["price"],
        "28500"
    );

    // The register and log show keep the device's figures.
    let shown: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "show", "3", "--json"])).expect("JSON");
    assert_eq!(shown["totals"]["total"], "28500.00", "{shown}");

    // The dashboard's downloads are the same exports.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let download = dashboard_get(
        addr,
        Some(&session),
        "/dashboard/invoices.csv?env=production",
    )
    .await;
    assert_eq!(download.status, 200, "{}", download.body);
    assert_eq!(
        column_sum(&download.body, ',', '.', "total"),
        net,
        "{}",
        download.body
    );
    let download = dashboard_get(
        addr,
        Some(&session),
        "/dashboard/invoices.csv?env=production&format=json",
    )
    .await;
    let totals: Vec<String> = download
        .body
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON")["totals"]["total"].to_string())
        .collect();
    assert_eq!(totals, ["\"570000.00\"", "\"1200.00\"", "\"-28500.00\""]);
}

/// Issue 24, point 1: a USD invoice's amounts are CDF and said so everywhere a person reads
/// them; the USD equivalent is shown apart and named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usd_invoice_s_amounts_are_labelled_cdf() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let sale = post_invoice(addr, &setup.key, &usd_sale("USD-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let (nb, nnb) = ('\u{a0}', '\u{202f}');
    let wrong = [
        format!("570{nnb}000,00{nb}USD"),
        "570,000.00 USD".to_string(),
    ];

    let shown = setup.cli_ok(&["log", "show", "1"]);
    let rows = squeezed(&shown);
    for text in [
        format!("ESPECES 570{nnb}000,00{nb}CDF (payé en USD{nb}: 200,00{nb}USD)"),
        format!("USD (montants en CDF{nb}; 1{nb}USD = 2{nnb}850,00{nb}CDF, cours du 20/11/2026)"),
        format!("Total TTC 570{nnb}000,00{nb}CDF"),
        format!("Équivalent USD 200,00{nb}USD"),
        "PRIX UNITAIRE (CDF)".to_string(),
        // Who recorded it, in words, on its own row; the security elements named as on the
        // receipt and the dashboard; the device's date as a French reader writes it.
        "Appareil · clé shop · ".to_string(),
        "Enregistrée par l'appareil, en certifiant la facture".to_string(),
        "Code DEF/DGI ".to_string(),
        "Numéro de l'appareil (NIM) ".to_string(),
        "Texte du code QR ".to_string(),
    ] {
        assert!(rows.contains(&text), "{text:?} missing:\n{shown}");
    }
    assert!(
        !shown.contains("finalize") && !shown.contains("codeDEFDGI "),
        "{shown}"
    );
    let device_date = shown
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Date de l'appareil"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        chrono::NaiveDateTime::parse_from_str(device_date, "%d/%m/%Y %H:%M:%S").is_ok(),
        "{device_date}"
    );
    let english = setup.cli_ok(&["log", "show", "1", "--lang", "en"]);
    assert!(
        squeezed(&english).contains("ESPECES 570,000.00 CDF (paid in USD: 200.00 USD)")
            && squeezed(&english).contains("Recorded by the device, when certifying the invoice"),
        "{english}"
    );
    // Every value starts in one column, whatever the length of its label in each language.
    for (text, labels) in [
        (
            &shown,
            [
                "Vendeur",
                "Enregistrée par",
                "Numéro de l'appareil (NIM)",
                "ESPECES",
                "Total TTC",
            ],
        ),
        (
            &english,
            [
                "Seller",
                "Recorded by",
                "Device number (NIM)",
                "ESPECES",
                "Total TTC",
            ],
        ),
    ] {
        let columns: Vec<usize> = labels.iter().map(|l| value_column(text, l)).collect();
        assert!(
            columns.windows(2).all(|w| w[0] == w[1]),
            "{columns:?}\n{text}"
        );
    }
    for text in [&shown, &english] {
        assert!(!wrong.iter().any(|w| text.contains(w.as_str())), "{text}");
    }

    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let page = dashboard_get(addr, Some(&session), "/dashboard/invoices/production/1").await;
    assert_eq!(page.status, 200, "{}", page.body);
    for text in [
        format!("ESPECES 570{nnb}000,00{nb}CDF (payé en USD{nb}: 200,00{nb}USD)"),
        format!("id=\"currency\">USD (montants en CDF{nb}; 1{nb}USD = 2{nnb}850,00{nb}CDF"),
        format!("id=\"usd\">200,00{nb}USD<"),
        "Prix unitaire (CDF)".to_string(),
        "TTC (CDF)".to_string(),
        // The security elements named as on the receipt and in log show.
        "<figcaption>Code QR de la facture</figcaption>".to_string(),
        "<dt>Code DEF/DGI</dt><dd id=\"codeDEFDGI\">".to_string(),
        "<dt>Enregistrée par</dt><dd id=\"source\">l&#39;appareil, en certifiant la facture</dd>"
            .to_string(),
    ] {
        assert!(
            page.body.contains(&text),
            "{text:?} missing:\n{}",
            page.body
        );
    }
    assert!(
        !wrong.iter().any(|w| page.body.contains(w.as_str())),
        "{}",
        page.body
    );

    // The receipt: totals in CDF, the USD equivalent named, the rate of a USD invoice.
    let receipt = get(addr, "/api/v1/Invoice/USD-1/receipt.html", Some(&setup.key)).await;
    assert_eq!(receipt.status, 200, "{}", receipt.body);
    for text in [
        format!("id=\"total\">570{nnb}000,00{nb}CDF<"),
        format!("Équivalent USD</dt><dd id=\"usdTotal\">200,00{nb}USD<"),
        format!("Cours USD du 20/11/2026</dt><dd id=\"rate\">1{nb}USD = 2{nnb}850,00{nb}CDF<"),
    ] {
        assert!(
            receipt.body.contains(&text),
            "{text:?} missing:\n{}",
            receipt.body
        );
    }
}

/// What a 1.5.0 gateway certified before invoice texts were checked (codes 71 and 73 since
/// 1.6.0): an entry whose client name, item and comment carry a line feed, a carriage return
/// and a right-to-left override. The register cannot be made through the API any more, so
/// the entry is written with the store's own API while the service is stopped (as 1.5.0
/// would have journaled it), and the organization's name likewise. `log show`, `org list` and
/// the dashboard show those characters as `⟨LF⟩`, `⟨U+202E⟩`: no forged line on the auditor's
/// terminal, nothing reordered on the page; `--json` and the exports keep the exact text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_an_older_release_kept_are_shown_escaped_and_exported_exactly() {
    use emcf_gateway::model::{Intent, SecurityElements};
    use sha2::{Digest, Sha256};

    // An older release's journal, written with the embedded store's own API.
    if crate::common::store::embedded_only("texts_an_older_release_kept_are_shown_escaped") {
        return;
    }
    let mut setup = ApiSetup::start(None).await;
    assert!(setup.gateway.terminate(), "clean exit");
    let form = r#"{"canon":"1","client":{"name":"Kinshasa SARL\nNom                   HONEST SARL","nif":"A7654321Z","type":"PM"},"curCode":"CDF","items":[{"name":"Sac de ciment \u202e05 gk","price":"14500","quantity":"2","taxGroup":"B","type":"BIE"}],"mode":"ttc","operator":{"name":"Amani"},"rn":"OLD-1","type":"FV","cmta":"Livré\r\n  NIF client             A0000000Z"}"#;
    {
        let store = emcf_gateway::store::Store::open(&setup.dir.path().join("state"))
            .expect("the register opens");
        let mut org = store.organization("acme").expect("read").expect("acme");
        org.name = "Acme\r\nNom HONEST SARL".into();
        store.save_organization(org).expect("a 1.5.0 name");
        let key = store.keys_of("acme").expect("keys")[0].id.clone();
        let intent: Intent = serde_json::from_value(json!({
            "org": "acme", "environment": "Production", "rn": "OLD-1", "invoice_type": "FV",
            "key_id": key, "device": "shop",
            "request_digest": hex::encode(Sha256::digest(form.as_bytes())),
            "received_at": chrono::Utc::now(),
            "totals": {"total": "29000.00", "vat": "4000.00", "group_ttc": [["B", "29000.00"]],
                       "group_vat": [["B", "4000.00"]], "specific_tax": "0.00",
                       "usd_equivalent": null},
            "nif": SIM_NIF, "isf": "ISF-1", "invoice": form
        }))
        .expect("an intent");
        let security: SecurityElements = serde_json::from_value(json!({
            "codeDEFDGI": "TQ2W7ZB5M3KD8XRNH4JCV6PA",
            "qrCode": "RDCDEF01;SIM0000001;TQ2W7ZB5M3KD8XRNH4JCV6PA;A1234567B;20261123100002",
            "counters": "1/1 FV", "nim": "SIM0000001", "dateTime": "2026-11-23T10:00:02"
        }))
        .expect("security elements");
        let id = store.record_intent(intent, None).expect("intent journaled");
        let year = chrono::Datelike::year(&chrono::Utc::now());
        store
            .record_certified(id, year, chrono::Utc::now(), security, "finalize")
            .expect("certified");
    }
    let config = std::fs::read_to_string(&setup.gateway.config).expect("config");
    setup.gateway = Gateway::start(setup.dir.path(), &config);
    setup.gateway.wait_ready().await;
    let addr = setup.addr();

    let shown = setup.cli_ok(&["log", "show", "1"]);
    for text in [
        "Kinshasa SARL⟨LF⟩Nom                   HONEST SARL",
        "Sac de ciment ⟨U+202E⟩05 gk",
        "Livré⟨CR⟩⟨LF⟩  NIF client             A0000000Z",
    ] {
        assert!(shown.contains(text), "{text:?} in:\n{shown}");
    }
    for (forged, within) in [("HONEST", "SARL⟨LF⟩"), ("A0000000Z", "Livré⟨CR⟩⟨LF⟩")] {
        assert!(
            shown
                .lines()
                .filter(|l| l.contains(forged))
                .all(|l| l.contains(within)),
            "a forged line {forged:?}:\n{shown}"
        );
    }
    assert!(!shown.contains(['\u{202E}', '\r']), "{shown:?}");
    let listed = setup.cli_ok(&["org", "list"]);
    assert!(listed.contains("Acme⟨CR⟩⟨LF⟩Nom HONEST SARL"), "{listed}");

    // Scripts and exports read the register's exact text.
    let json: Value =
        serde_json::from_str(&setup.cli_ok(&["log", "show", "1", "--json"])).expect("JSON");
    let kept = &json["certified_invoice"]["invoice"];
    assert_eq!(
        kept["client"]["name"],
        "Kinshasa SARL\nNom                   HONEST SARL"
    );
    assert_eq!(kept["items"][0]["name"], "Sac de ciment \u{202E}05 gk");
    let export = setup.cli_ok(&["log", "export", "--format", "json", "--org", "acme"]);
    let line: Value = serde_json::from_str(export.lines().next().expect("line")).expect("JSON");
    assert_eq!(
        line["certified_invoice"]["invoice"]["cmta"],
        "Livré\r\n  NIF client             A0000000Z"
    );

    // The dashboard: the same, and U+202E, which HTML escaping leaves as it is, never
    // reaches the page.
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let page = dashboard_get(addr, Some(&session), "/dashboard/invoices/production/1").await;
    assert_eq!(page.status, 200, "{}", page.body);
    for text in [
        "id=\"client\">Kinshasa SARL⟨LF⟩Nom                   HONEST SARL · NIF A7654321Z",
        "Sac de ciment ⟨U+202E⟩05 gk",
        "id=\"comments\">Livré⟨CR⟩⟨LF⟩  NIF client",
    ] {
        assert!(page.body.contains(text), "{text:?} in:\n{}", page.body);
    }
    assert!(!page.body.contains('\u{202E}'), "{}", page.body);
}
