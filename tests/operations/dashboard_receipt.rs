//! The dashboard's "print": `/dashboard/invoices/{env}/{seq}/receipt` shows a signed-in
//! administrator the fiscal block of one of their organization's invoices (the API's
//! `receipt.html`), in the reader's language, with `?layout=`; others get nothing.

use crate::common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_prints_the_fiscal_block_of_an_invoice() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let certified = post_invoice(addr, &setup.key, &invoice("PRINT-1")).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    let code = certified.json["codeDEFDGI"]
        .as_str()
        .expect("code")
        .to_string();
    let counters = certified.json["counters"]
        .as_str()
        .expect("counters")
        .to_string();
    let sequence = certified.json["sequence"].as_u64().expect("sequence");
    let path = format!("/dashboard/invoices/production/{sequence}/receipt");

    // Not signed in: to the sign-in page, nothing shown.
    let anonymous = dashboard_get(addr, None, &path).await;
    assert_eq!(anonymous.status, 303);
    assert_eq!(anonymous.header("location"), Some("/dashboard/login"));
    assert!(!anonymous.body.contains(&code));

    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let page = dashboard_get(addr, Some(&session), &path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("content-language"), Some("fr"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("style-src 'unsafe-inline'") && csp.contains("frame-ancestors 'none'"));
    assert!(!csp.contains("script"), "{csp}");
    for needle in [
        format!("id=\"codeDEFDGI\">{code}<"),
        format!("id=\"counters\">{counters}<"),
        "id=\"rn\">PRINT-1<".to_string(),
        "class=\"layout-a4\"".to_string(),
        "<svg ".to_string(),
        format!("href=\"/dashboard/invoices/production/{sequence}\""),
        format!("href=\"{path}?layout=80mm\""),
    ] {
        assert!(page.body.contains(&needle), "{needle} in {}", page.body);
    }

    let thermal = dashboard_get(addr, Some(&session), &format!("{path}?layout=58mm")).await;
    assert_eq!(thermal.status, 200, "{}", thermal.body);
    assert!(thermal.body.contains("@page{size:58mm auto;margin:0}"));

    // The reader's language (the FR / EN cookie) is the page's.
    let cookie = format!("emcf_session={session}; emcf_lang=en");
    let english = request(addr, "GET", &path, &[("Cookie", cookie.as_str())], None).await;
    assert_eq!(english.status, 200);
    assert_eq!(english.header("content-language"), Some("en"));
    assert!(english.body.contains("Total incl. VAT"), "{}", english.body);

    let bad = dashboard_get(addr, Some(&session), &format!("{path}?layout=letter")).await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("letter"), "{}", bad.body);

    // Another entry number, the other register: not found.
    let missing = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/invoices/production/{}/receipt", sequence + 100),
    )
    .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    let sandbox = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/invoices/sandbox/{sequence}/receipt"),
    )
    .await;
    assert_eq!(sandbox.status, 404, "{}", sandbox.body);
    assert!(!sandbox.body.contains(&code));
}

/// Issue 24, point 2: the dashboard's print of a credit note names its document and the
/// invoice it reduces (its codeDEFDGI and rn, with this organization's register).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credit_note_s_print_names_its_original() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let sale = post_invoice(addr, &setup.key, &invoice("PRINT-FV-1")).await;
    assert_eq!(sale.status, 200, "{}", sale.body);
    let code = sale.json["codeDEFDGI"].as_str().expect("code").to_string();
    let note = post_invoice(addr, &setup.key, &credit_note_of("PRINT-FA-1", &code, "FA")).await;
    assert_eq!(note.status, 200, "{}", note.body);
    let sequence = note.json["sequence"].as_u64().expect("sequence");
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, _) = dashboard_sign_in(addr, &token).await;
    let path = format!("/dashboard/invoices/production/{sequence}/receipt?layout=80mm");
    let page = dashboard_get(addr, Some(&session), &path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for needle in [
        "<h1>Facture d&#39;avoir – éléments de sécurité e-MCF</h1>".to_string(),
        format!("id=\"originalCodeDEFDGI\">{code}<"),
        "id=\"originalRn\">PRINT-FV-1<".to_string(),
    ] {
        assert!(page.body.contains(&needle), "{needle} in {}", page.body);
    }
    // The sale's print names no original.
    let sale_page = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/invoices/production/{}/receipt", sequence - 1),
    )
    .await;
    assert!(
        sale_page.body.contains("<h1>Facture de vente – "),
        "{}",
        sale_page.body
    );
    assert!(!sale_page.body.contains("originalRn"), "{}", sale_page.body);
}
