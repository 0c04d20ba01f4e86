//! `GET /api/v1/Invoice/{rn}` and its views (`qr.svg`, `qr.png` with `?scale=`,
//! `receipt.html` with `?layout=`, `receipt.escpos` with `?width=`): the key checked first,
//! then the view's parameters, then the register; a credit note's printed block names its
//! original when the register has it.

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_LANGUAGE, CONTENT_TYPE, VARY};
use hyper::{Request, Response};

use super::reply::{certification_response, certify_error, http_error, Body, HttpError};
use super::routes::authorization;
use super::{landing, App, Service};
use crate::certify::CertifyError;
use crate::http_request::{field, percent_decode, query_pairs};
use crate::i18n::Lang;
use crate::receipt::{self, Layout, PaperWidth};

/// How `GET /Invoice/{rn}` answers.
enum Format {
    /// The certification result.
    Json,
    /// Its QR code as SVG.
    QrSvg,
    /// Its QR code as PNG, `scale` pixels a module (default: about 300 pixels a side).
    QrPng { scale: Option<u32> },
    /// The printable fiscal block as an HTML page.
    ReceiptHtml(Layout),
    /// The printable fiscal block as ESC/POS bytes.
    ReceiptEscpos(PaperWidth),
}

/// What a path under `/Invoice/{rn}/` names (its query read by [`View::format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    QrSvg,
    QrPng,
    ReceiptHtml,
    ReceiptEscpos,
}

/// A query parameter with a value the route does not take: (name, value, allowed values).
struct BadParameter(&'static str, String, &'static str);

impl View {
    const SUFFIXES: [(&'static str, View); 4] = [
        ("/qr.svg", View::QrSvg),
        ("/qr.png", View::QrPng),
        ("/receipt.html", View::ReceiptHtml),
        ("/receipt.escpos", View::ReceiptEscpos),
    ];

    /// `{rn}/qr.svg`... to the encoded rn and the view.
    pub(super) fn of(tail: &str) -> Option<(&str, View)> {
        View::SUFFIXES
            .iter()
            .find_map(|(suffix, view)| tail.strip_suffix(suffix).map(|rn| (rn, *view)))
    }

    /// The view's answer as its query asks (`scale`, `layout`, `width`); other parameters are
    /// ignored.
    fn format(self, query: Option<&str>) -> Result<Format, BadParameter> {
        let pairs = query_pairs(query);
        match self {
            View::QrSvg => Ok(Format::QrSvg),
            View::QrPng => match field(&pairs, "scale") {
                None => Ok(Format::QrPng { scale: None }),
                Some(text) => match text.parse::<u32>() {
                    Ok(scale) if crate::qr::PNG_SCALES.contains(&scale) => {
                        Ok(Format::QrPng { scale: Some(scale) })
                    }
                    _ => Err(BadParameter("scale", text.to_owned(), "1..40")),
                },
            },
            View::ReceiptHtml => match field(&pairs, "layout") {
                None => Ok(Format::ReceiptHtml(Layout::default())),
                Some(text) => Layout::parse(text)
                    .map(Format::ReceiptHtml)
                    .ok_or_else(|| BadParameter("layout", text.to_owned(), Layout::ALLOWED)),
            },
            View::ReceiptEscpos => match field(&pairs, "width") {
                None => Ok(Format::ReceiptEscpos(PaperWidth::default())),
                Some(text) => PaperWidth::parse(text)
                    .map(Format::ReceiptEscpos)
                    .ok_or_else(|| BadParameter("width", text.to_owned(), PaperWidth::ALLOWED)),
            },
        }
    }
}

/// `GET /Invoice/{rn}/...`: the QR code or the fiscal block. `?lang=fr|en` chooses the
/// language before `Accept-Language` (a link or a print job cannot always set a header).
/// `get_invoice` reads the view's other parameters once the key is known good.
pub(super) async fn get_view(
    request: &Request<Incoming>,
    app: &App,
    encoded: &str,
    view: View,
    lang: Lang,
) -> Response<Body> {
    let query = request.uri().query();
    let lang = landing::query_lang(query).unwrap_or(lang);
    get_invoice(request, app, encoded, Some(view), lang).await
}

pub(super) async fn get_invoice(
    request: &Request<Incoming>,
    app: &App,
    encoded: &str,
    view: Option<View>,
    lang: Lang,
) -> Response<Body> {
    let certifier = match &app.service {
        Service::Ready { certifier, .. } => certifier,
        Service::Halted { reason } => return http_error(&HttpError::Halted(reason.clone()), lang),
    };
    let principal = match certifier
        .authenticate(authorization(request).as_deref())
        .await
    {
        Ok(principal) => principal,
        Err(error) => return certify_error(&error, lang),
    };
    // A view's parameters are read once the key is known good, before the register is.
    let format = match view.map(|view| view.format(request.uri().query())) {
        None => Format::Json,
        Some(Ok(format)) => format,
        Some(Err(BadParameter(name, value, allowed))) => {
            let error = HttpError::BadParameter {
                name,
                value,
                allowed,
            };
            return http_error(&error, lang);
        }
    };
    let Some(rn) = percent_decode(encoded) else {
        return http_error(&HttpError::NotFound, lang);
    };
    let entry = match certifier.lookup(&principal, &rn).await {
        Ok(entry) => entry,
        Err(error) => return certify_error(&error, lang),
    };
    // A credit note's printed block names its original when the register has it.
    let original = match format {
        Format::ReceiptHtml(_) | Format::ReceiptEscpos(_) => match certifier
            .off_workers({
                let entry = entry.clone();
                move |certifier| certifier.original_of(&entry)
            })
            .await
        {
            Ok(original) => original,
            Err(error) => return certify_error(&error, lang),
        },
        _ => None,
    };
    let original = original.as_ref().map(receipt::Original::of);
    let drawn = |result: Result<Vec<u8>, crate::qr::QrError>, content_type| match result {
        Ok(bytes) => printable(bytes, content_type, None),
        Err(error) => certify_error(&CertifyError::Internal(error.to_string()), lang),
    };
    match format {
        Format::Json => certification_response(&entry, &certifier.warnings(&entry).await, lang),
        Format::QrSvg => drawn(
            crate::qr::svg_of(&entry.security.qr_code).map(String::into_bytes),
            "image/svg+xml",
        ),
        Format::QrPng { scale } => drawn(
            crate::qr::png_of(&entry.security.qr_code, scale),
            "image/png",
        ),
        Format::ReceiptHtml(layout) => {
            let page = receipt::html::page(&entry, original, layout, lang);
            let mut response = printable(page.into_bytes(), "text/html; charset=utf-8", Some(lang));
            let headers = response.headers_mut();
            headers.insert(
                "content-security-policy",
                HeaderValue::from_static(receipt::html::CSP),
            );
            headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
            response
        }
        Format::ReceiptEscpos(width) => {
            let bytes = receipt::escpos::receipt(&entry, original, width, lang);
            let mut response = printable(bytes, "application/octet-stream", Some(lang));
            let name = format!(
                "attachment; filename=\"{}.escpos\"",
                file_name(&entry.request.rn)
            );
            if let Ok(value) = HeaderValue::from_str(&name) {
                response
                    .headers_mut()
                    .insert(hyper::header::CONTENT_DISPOSITION, value);
            }
            response
        }
    }
}

/// A 200 of `bytes` as `content_type`, not to be sniffed as anything else; in `lang` (with
/// `Content-Language`, `Vary: Accept-Language` and no caching) when its text depends on it.
fn printable(bytes: Vec<u8>, content_type: &'static str, lang: Option<Lang>) -> Response<Body> {
    let mut response = Response::new(Body::new(Bytes::from(bytes)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    if let Some(lang) = lang {
        headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
        headers.insert(VARY, HeaderValue::from_static("accept-language"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// An `rn` as a file name: letters, digits, `-`, `_` and `.` kept, anything else `_`.
fn file_name(rn: &str) -> String {
    rn.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_and_their_parameters_are_read_from_the_path_and_query() {
        assert_eq!(View::of("F-1/qr.png"), Some(("F-1", View::QrPng)));
        assert_eq!(
            View::of("F-1/receipt.html"),
            Some(("F-1", View::ReceiptHtml))
        );
        assert_eq!(
            View::of("F%2F1/receipt.escpos"),
            Some(("F%2F1", View::ReceiptEscpos))
        );
        assert_eq!(View::of("F-1/receipt.pdf"), None);
        let query = Some("lang=en&layout=80mm&layout=a4&width");
        assert_eq!(field(&query_pairs(query), "layout"), Some("80mm"));
        assert_eq!(field(&query_pairs(query), "width"), Some(""));
        assert_eq!(field(&query_pairs(query), "scale"), None);
        assert_eq!(field(&query_pairs(None), "layout"), None);
        assert!(matches!(
            View::ReceiptHtml.format(Some("layout=58MM")),
            Ok(Format::ReceiptHtml(Layout::Mm58))
        ));
        assert!(matches!(
            View::ReceiptEscpos.format(None),
            Ok(Format::ReceiptEscpos(PaperWidth::Mm80))
        ));
        assert!(matches!(
            View::QrPng.format(Some("scale=7")),
            Ok(Format::QrPng { scale: Some(7) })
        ));
        for (view, query, name) in [
            (View::ReceiptHtml, "layout=letter", "layout"),
            (View::ReceiptEscpos, "width=76", "width"),
            (View::QrPng, "scale=0", "scale"),
        ] {
            match view.format(Some(query)) {
                Err(BadParameter(bad, _, _)) => assert_eq!(bad, name),
                Ok(_) => panic!("{query} taken"),
            }
        }
    }
}
