//! The fiscal block as a self-contained HTML page: inline CSS, the QR code as inline SVG, no
//! script, nothing fetched (served with [`CSP`]). Every value is escaped.
//!
//! Layouts ([`Layout`]): `a4` a bordered block 190 mm wide (the QR code on the left, 36 mm)
//! for the bottom of an A4 invoice, `@page` A4 with 10 mm margins (on a screen narrower than
//! the block, a phone's, it is one column: title, QR code, lines; printing is unchanged); a
//! credit note's original takes a line of its own under the codeDEFDGI; `80mm` and `58mm` a
//! receipt column 72 mm or 48 mm wide, `@page { size: 80mm auto; margin: 0 }` (or 58mm), the
//! QR code centred (40 mm, 32 mm); on 58 mm the invoice's lines put each value under its
//! label, the totals stay on one line each. The block avoids a page break inside itself.

use crate::i18n::Lang;
use crate::markup::escape as esc;
use crate::msg;

use super::{block, Layout, Line, Original};
use crate::model::RegisterEntry;

/// The `Content-Security-Policy` of the page: inline styles only, nothing else.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// What the page shows beside the block on a screen (never printed).
#[derive(Debug, Clone, Default)]
pub struct Screen {
    /// A link back (the dashboard's invoice page): its path and its text.
    pub back: Option<(String, String)>,
    /// The other layouts: the text before the links, and (path, text) of each link.
    pub layouts: Option<(String, Vec<(String, String)>)>,
}

/// The page of `entry`'s fiscal block in `layout` and `lang` (`original`: see
/// [`super::block`]).
pub fn page(
    entry: &RegisterEntry,
    original: Option<Original<'_>>,
    layout: Layout,
    lang: Lang,
) -> String {
    page_with(entry, original, layout, lang, &Screen::default())
}

/// The same, with `screen`'s links above the block (hidden when printed).
pub fn page_with(
    entry: &RegisterEntry,
    original: Option<Original<'_>>,
    layout: Layout,
    lang: Lang,
    screen: &Screen,
) -> String {
    let block = block(entry, original, lang);
    let qr = crate::qr::inline_svg(&block.qr_code, &block.qr_label).unwrap_or_else(|error| {
        tracing::warn!(%error, "a receipt's QR code could not be drawn");
        format!(
            "<p class=\"qr-error\">{}</p>",
            esc(&msg!("qr-not-drawn").render(lang))
        )
    });
    let mut nav = String::new();
    if let Some((href, text)) = &screen.back {
        nav.push_str(&format!("<a href=\"{}\">{}</a>", esc(href), esc(text)));
    }
    if let Some((intro, links)) = &screen.layouts {
        if !nav.is_empty() {
            nav.push_str(" · ");
        }
        nav.push_str(&esc(intro));
        for (href, text) in links {
            nav.push_str(&format!(" <a href=\"{}\">{}</a>", esc(href), esc(text)));
        }
    }
    let nav = if nav.is_empty() {
        String::new()
    } else {
        format!("<nav class=\"screen\">{nav}</nav>\n")
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{page_title}</title>\n<style>{base}{layout_css}</style></head>\n\
<body class=\"layout-{layout_name}\">\n{nav}\
<section class=\"fiscal\" id=\"fiscal-block\">\n\
<h1>{title}</h1>\n\
<div class=\"qr\" id=\"qr\">{qr}</div>\n\
<div class=\"details\">\n\
<div class=\"code\"><span class=\"code-label\">{code_label}</span> \
<strong id=\"codeDEFDGI\">{code}</strong></div>\n\
{original}<dl class=\"security\">\n{security}</dl>\n\
<dl class=\"totals\">\n{totals}</dl>\n\
</div>\n</section>\n</body></html>\n",
        lang = lang.code(),
        page_title = esc(&block.page_title),
        base = BASE_CSS,
        layout_css = layout_css(layout),
        layout_name = layout.as_str(),
        title = esc(&block.title),
        code_label = esc(&block.code_label),
        code = esc(&block.code),
        original = if block.original.is_empty() {
            String::new()
        } else {
            format!("<dl class=\"original\">\n{}</dl>\n", lines(&block.original))
        },
        security = lines(&block.security),
        totals = lines(&block.totals),
    )
}

fn lines(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| {
            format!(
                "<dt>{}</dt><dd id=\"{}\">{}</dd>\n",
                esc(&line.label),
                esc(&line.id),
                esc(&line.value)
            )
        })
        .collect()
}

const BASE_CSS: &str = "\n*{box-sizing:border-box}\
html,body{margin:0;padding:0;background:#fff;color:#000}\
body{font-family:Arial,Helvetica,sans-serif;line-height:1.25}\
.fiscal{break-inside:avoid;page-break-inside:avoid}\
h1{font-size:1.05em;margin:0 0 1.5mm}\
.qr svg{display:block}\
.code{margin:0 0 1.5mm}\
.code strong{font-family:'Courier New',Courier,monospace;font-size:1.1em;letter-spacing:.02em;white-space:nowrap}\
dl{display:grid;grid-template-columns:auto 1fr;gap:.3mm 2mm;margin:0 0 1.5mm}\
dt{white-space:nowrap}dd{margin:0;text-align:right;overflow-wrap:anywhere}\
#total,#vtotal{font-weight:bold}\
nav.screen{font-size:10pt;padding:2mm 0 4mm}\
@media print{nav.screen{display:none}}\n";

fn layout_css(layout: Layout) -> &'static str {
    match layout {
        Layout::A4 => {
            "@page{size:A4;margin:10mm}\
body{font-size:9pt}\
nav.screen,.fiscal{width:190mm;max-width:100%;margin:0 auto}\
.fiscal{display:grid;grid-template-columns:36mm 1fr;grid-template-areas:'qr title' 'qr details';\
column-gap:5mm;border:.3mm solid #000;padding:3mm}\
h1{grid-area:title}.qr{grid-area:qr}.qr svg{width:36mm;height:36mm}\
.details{grid-area:details;display:grid;grid-template-columns:1fr 1fr;column-gap:6mm;align-items:start}\
.code,.original{grid-column:1 / 3}.original{grid-template-columns:max-content max-content}\
dt{white-space:normal}dd{white-space:nowrap}\n\
@media screen and (max-width:760px){.fiscal{grid-template-columns:minmax(0,1fr);\
grid-template-areas:'title' 'qr' 'details'}.qr svg{margin:0 auto 1.5mm}\
.details{grid-template-columns:minmax(0,1fr)}.code,.original{grid-column:auto}\
.original{grid-template-columns:auto 1fr}\
.code strong,dd{white-space:normal;overflow-wrap:break-word}}\n"
        }
        Layout::Mm80 => {
            "@page{size:80mm auto;margin:0}\
body{font-size:9pt}\
nav.screen,.fiscal{width:72mm;margin:0 auto}\
.fiscal{padding:2mm 0}\
h1,.code{text-align:center}.qr svg{width:40mm;height:40mm;margin:0 auto 1.5mm}\
.code-label{display:block}\n"
        }
        Layout::Mm58 => {
            "@page{size:58mm auto;margin:0}\
body{font-size:8pt}\
nav.screen,.fiscal{width:48mm;margin:0 auto}\
.fiscal{padding:2mm 0}\
h1,.code{text-align:center}.qr svg{width:32mm;height:32mm;margin:0 auto 1.5mm}\
.code-label{display:block}dl.security{grid-template-columns:1fr}\
dl.security dd{text-align:left;margin-bottom:.6mm}\
dl.totals dt{white-space:normal}dl.totals dd{white-space:nowrap}\n"
        }
    }
}
