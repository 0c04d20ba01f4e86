//! The printable fiscal block over HTTP, on the real binary and the bundled simulator: an
//! invoice is certified, then its QR code as PNG, its fiscal block as HTML (A4, 80 mm, 58 mm,
//! French and English) and as ESC/POS bytes (58 and 80 mm) are fetched with the key, as an ERP
//! would; what is refused (unknown rn, no key, a bad parameter) is answered in JSON.

use crate::common;

use std::net::SocketAddr;

use common::{get, invoice, post_invoice, ApiSetup};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A response whose body is kept as bytes (PNG, ESC/POS).
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// `GET path` with `headers` (Connection: close), the body read as bytes.
async fn raw_get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Raw {
    let bytes = common::http::request_bytes(addr, "GET", path, headers, None);
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(&bytes).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        stream.read_to_end(&mut raw),
    )
    .await
    .expect("in time")
    .expect("read");
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status");
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let body = raw[end + 4..].to_vec();
    Raw {
        status,
        headers,
        body,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[track_caller]
fn assert_bad_parameter(response: &Raw, field: &str) {
    assert_eq!(response.status, 400, "{}", response.text());
    assert!(response
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json")));
    let body = response.json();
    assert_eq!(body["errorCode"], 128, "{body}");
    assert_eq!(body["field"], field, "{body}");
    assert!(body["errorDesc"].as_str().is_some_and(|d| !d.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erp_prints_the_fiscal_block_of_a_certified_invoice() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let certified = post_invoice(addr, &setup.key, &invoice("RCPT-1")).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    let code = certified.json["codeDEFDGI"]
        .as_str()
        .expect("code")
        .to_string();
    let qr_code = certified.json["qrCode"]
        .as_str()
        .expect("qrCode")
        .to_string();
    let counters = certified.json["counters"]
        .as_str()
        .expect("counters")
        .to_string();
    let nim = certified.json["nim"].as_str().expect("nim").to_string();
    let auth = format!("Bearer {}", setup.key);
    let key = [("Authorization", auth.as_str())];
    let english = [
        ("Authorization", auth.as_str()),
        ("Accept-Language", "en-GB,en;q=0.9"),
    ];

    // The QR code as PNG: a square, about 300 pixels, 1-bit gray; ?scale= sets its pixels.
    let png_response = raw_get(addr, "/api/v1/Invoice/RCPT-1/qr.png", &key).await;
    assert_eq!(png_response.status, 200, "{}", png_response.text());
    assert_eq!(png_response.header("content-type"), Some("image/png"));
    assert_eq!(
        png_response.header("x-content-type-options"),
        Some("nosniff")
    );
    let side = png_side(&png_response.body);
    assert!((250..=350).contains(&side), "{side} px");
    let small = raw_get(addr, "/api/v1/Invoice/RCPT-1/qr.png?scale=2", &key).await;
    assert_eq!(small.status, 200);
    let small_side = png_side(&small.body);
    assert_eq!(small_side % 2, 0);
    assert!(small_side < side);
    for bad in ["0", "41", "x", ""] {
        let path = format!("/api/v1/Invoice/RCPT-1/qr.png?scale={bad}");
        assert_bad_parameter(&raw_get(addr, &path, &key).await, "scale");
    }

    // The HTML block: French and A4 by default.
    let page = raw_get(addr, "/api/v1/Invoice/RCPT-1/receipt.html", &key).await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("content-language"), Some("fr"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'") && csp.contains("style-src 'unsafe-inline'"));
    assert!(!csp.contains("script"), "{csp}");
    let html = page.text();
    for needle in [
        format!("id=\"codeDEFDGI\">{code}<"),
        format!("id=\"counters\">{counters}<"),
        format!("id=\"nim\">{nim}<"),
        "id=\"rn\">RCPT-1<".to_string(),
        "class=\"layout-a4\"".to_string(),
        "<svg ".to_string(),
        "<html lang=\"fr\">".to_string(),
        "Total TTC".to_string(),
        "1\u{202f}200,00\u{a0}CDF".to_string(),
    ] {
        assert!(html.contains(&needle), "{needle} in {html}");
    }
    let thermal = raw_get(
        addr,
        "/api/v1/Invoice/RCPT-1/receipt.html?layout=80mm&lang=en",
        &key,
    )
    .await;
    assert_eq!(thermal.status, 200);
    assert_eq!(thermal.header("content-language"), Some("en"));
    let thermal = thermal.text();
    assert!(
        thermal.contains("@page{size:80mm auto;margin:0}"),
        "{thermal}"
    );
    assert!(thermal.contains("Total incl. VAT") && thermal.contains("1,200.00 CDF"));
    let narrow = raw_get(
        addr,
        "/api/v1/Invoice/RCPT-1/receipt.html?layout=58mm",
        &english,
    )
    .await;
    assert_eq!(narrow.header("content-language"), Some("en"));
    assert!(narrow.text().contains("@page{size:58mm auto;margin:0}"));
    let bad = raw_get(
        addr,
        "/api/v1/Invoice/RCPT-1/receipt.html?layout=letter",
        &english,
    )
    .await;
    assert_bad_parameter(&bad, "layout");
    assert_eq!(bad.header("content-language"), Some("en"));
    assert!(bad.json()["errorDesc"]
        .as_str()
        .is_some_and(|d| d.contains("letter") && d.contains("a4, 80mm, 58mm")));

    // ESC/POS: 80 mm by default, the printer's own QR command with the exact qrCode.
    for (query, module) in [("", 6u8), ("?width=80", 6), ("?width=58", 4)] {
        let path = format!("/api/v1/Invoice/RCPT-1/receipt.escpos{query}");
        let receipt = raw_get(addr, &path, &key).await;
        assert_eq!(receipt.status, 200, "{}", receipt.text());
        assert_eq!(
            receipt.header("content-type"),
            Some("application/octet-stream")
        );
        assert!(receipt
            .header("content-disposition")
            .is_some_and(|d| d.contains("RCPT-1.escpos")));
        let bytes = &receipt.body;
        assert!(bytes.starts_with(&[0x1B, 0x40]), "ESC @ first");
        assert!(bytes.ends_with(&[0x1D, 0x56, 0x42, 0x00]), "cut last");
        let stored = u8::try_from(qr_code.len() + 3).expect("short");
        let mut store = vec![0x1D, 0x28, 0x6B, stored, 0x00, 0x31, 0x50, 0x30];
        store.extend_from_slice(qr_code.as_bytes());
        let at = find(bytes, &store).expect("GS ( k fn 180 with the qrCode");
        assert_eq!(
            &bytes[at - 16..at],
            &[
                0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x43, module, // fn 167
                0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x45, 0x31, // fn 169 M
            ]
        );
        let after = &bytes[at + store.len()..];
        assert!(after.starts_with(&[0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x51, 0x30]));
        let text = String::from_utf8_lossy(bytes);
        assert!(text.contains(&format!("{code}\n")) && text.contains(&counters));
        assert!(text.contains("Facture no"), "French, ASCII: {text}");
    }
    for bad in ["57", "80mm", ""] {
        let path = format!("/api/v1/Invoice/RCPT-1/receipt.escpos?width={bad}");
        assert_bad_parameter(&raw_get(addr, &path, &key).await, "width");
    }

    // Refusals: no key (401, before the parameters), an unknown rn (404), another method.
    for path in [
        "/api/v1/Invoice/RCPT-1/qr.png",
        "/api/v1/Invoice/RCPT-1/receipt.html",
        "/api/v1/Invoice/RCPT-1/receipt.escpos?width=1",
    ] {
        let refused = get(addr, path, None).await;
        assert_eq!(refused.status, 401, "{path}: {}", refused.body);
        assert_eq!(refused.json["errorCode"], 100);
        let unknown = get(addr, &path.replace("RCPT-1", "NOPE"), Some(&setup.key)).await;
        let expected = if path.contains("width=1") { 400 } else { 404 };
        assert_eq!(unknown.status, expected, "{path}: {}", unknown.body);
        if expected == 404 {
            assert_eq!(unknown.json["errorCode"], 170, "{}", unknown.body);
        }
    }
    let posted = common::request(
        addr,
        "POST",
        "/api/v1/Invoice/RCPT-1/receipt.html",
        &key,
        Some(b"{}"),
    )
    .await;
    assert_eq!(posted.status, 405);
    assert_eq!(posted.header("allow"), Some("GET"));
    let nested = get(addr, "/api/v1/Invoice/a/b/receipt.html", Some(&setup.key)).await;
    assert_eq!(nested.status, 404);
    assert_eq!(nested.json["errorCode"], 120);
}

/// The side of a square PNG (decoded with the `png` crate).
fn png_side(bytes: &[u8]) -> u32 {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let reader = decoder.read_info().expect("a PNG");
    let info = reader.info();
    assert_eq!(info.width, info.height, "square");
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    info.width
}

/// Issue 24, point 2: a receipt names its document by its type, and a credit note's block
/// names the invoice it reduces: its codeDEFDGI and rn when the register has it, else the
/// codeDEFDGI it named, said to be absent from this register.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credit_note_s_receipt_names_its_document_and_its_original() {
    let mut setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let mut codes = Vec::new();
    for (rn, kind, group) in [("RC-FV-1", "FV", "B"), ("RC-EV-1", "EV", "E")] {
        let mut body = invoice(rn);
        body["type"] = kind.into();
        body["items"][0]["taxGroup"] = group.into();
        body.as_object_mut().map(|b| b.remove("payments"));
        let sale = post_invoice(addr, &setup.key, &body).await;
        assert_eq!(sale.status, 200, "{}", sale.body);
        codes.push(sale.json["codeDEFDGI"].as_str().expect("code").to_string());
    }
    for (rn, kind, group, code) in [
        ("RC-FA-1", "FA", "B", &codes[0]),
        ("RC-EA-1", "EA", "E", &codes[1]),
    ] {
        let mut note = common::credit_note_of(rn, code, kind);
        note["items"][0]["taxGroup"] = group.into();
        note.as_object_mut().map(|b| b.remove("payments"));
        let certified = post_invoice(addr, &setup.key, &note).await;
        assert_eq!(certified.status, 200, "{}", certified.body);
    }
    let auth = format!("Bearer {}", setup.key);
    let key = [("Authorization", auth.as_str())];

    let sale_page = raw_get(addr, "/api/v1/Invoice/RC-FV-1/receipt.html", &key)
        .await
        .text();
    assert!(sale_page.contains("<h1>Facture de vente – "), "{sale_page}");
    assert!(!sale_page.contains("originalRn"), "{sale_page}");

    let page = raw_get(addr, "/api/v1/Invoice/RC-FA-1/receipt.html", &key).await;
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    for needle in [
        "<h1>Facture d&#39;avoir – éléments de sécurité e-MCF</h1>".to_string(),
        format!("id=\"originalCodeDEFDGI\">{}<", codes[0]),
        "id=\"originalRn\">RC-FV-1<".to_string(),
    ] {
        assert!(html.contains(&needle), "{needle} in {html}");
    }
    let english = raw_get(addr, "/api/v1/Invoice/RC-FA-1/receipt.html?lang=en", &key).await;
    assert!(english
        .text()
        .contains("<h1>Credit note – e-MCF security elements</h1>"));
    let printed = raw_get(
        addr,
        "/api/v1/Invoice/RC-FA-1/receipt.escpos?width=58",
        &key,
    )
    .await;
    let text = String::from_utf8_lossy(&printed.body);
    assert!(text.contains("Facture d'avoir - elements de"), "{text}");
    assert!(
        text.contains(&format!("{}\n", codes[0])) && text.contains("RC-FV-1\n"),
        "{text}"
    );
    let export = raw_get(addr, "/api/v1/Invoice/RC-EA-1/receipt.html?lang=en", &key)
        .await
        .text();
    for needle in [
        "<h1>Export credit note – e-MCF security elements</h1>".to_string(),
        "id=\"originalRn\">RC-EV-1<".to_string(),
    ] {
        assert!(export.contains(&needle), "{needle} in {export}");
    }
    // The API's JSON answer is unchanged: the device's figures, positive.
    let answer = common::get(addr, "/api/v1/Invoice/RC-FA-1", Some(&setup.key)).await;
    assert_eq!(answer.json["total"], "1200.00", "{}", answer.body);

    // A new register on the same box (the gateway installed after the sales): the box knows
    // the original, this register does not.
    assert!(setup.gateway.terminate(), "{}", setup.gateway.log());
    let fresh = tempfile::tempdir().expect("tempdir");
    setup.gateway = common::Gateway::start(
        fresh.path(),
        &common::config_with_device(fresh.path(), &setup.sim.link),
    );
    let fresh_key = tokio::task::block_in_place(|| {
        common::add_org_with_key(fresh.path(), &setup.gateway.config, "acme", "shop", None)
    });
    setup.gateway.wait_ready().await;
    let addr = setup.addr();
    let mut note = common::credit_note_of("RC-FA-2", &codes[0], "FA");
    note.as_object_mut().map(|b| b.remove("payments"));
    let certified = post_invoice(addr, &fresh_key, &note).await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    let auth = format!("Bearer {fresh_key}");
    let key = [("Authorization", auth.as_str())];
    let page = raw_get(addr, "/api/v1/Invoice/RC-FA-2/receipt.html", &key)
        .await
        .text();
    for needle in [
        "<h1>Facture d&#39;avoir – éléments de sécurité e-MCF</h1>".to_string(),
        format!("id=\"originalCodeDEFDGI\">{}<", codes[0]),
        "id=\"originalRn\">absente de ce registre<".to_string(),
    ] {
        assert!(page.contains(&needle), "{needle} in {page}");
    }
    let printed = raw_get(addr, "/api/v1/Invoice/RC-FA-2/receipt.escpos?lang=en", &key).await;
    let text = String::from_utf8_lossy(&printed.body);
    assert!(
        text.contains("Credit note - e-MCF security elements"),
        "{text}"
    );
    assert!(text.contains("not found in this register\n"), "{text}");
}
