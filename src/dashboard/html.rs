//! HTML building: escaping and the page shell. Every dynamic value that goes into a page goes
//! through [`esc`] (text and attribute values alike); the QR code's SVG is the only markup
//! inserted as is, and it is drawn by the `qrcode` crate from the text, never copied from it.

use chrono::{DateTime, FixedOffset, Utc};

/// `text` with `& < > " '` replaced by entities: safe in element content and in quoted
/// attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Which navigation entry is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    /// The overview.
    Overview,
    /// API keys.
    Keys,
    /// LogInvoices.
    Invoices,
    /// None (error pages).
    None,
}

/// What the shell of a signed-in page shows.
pub struct Shell<'a> {
    /// Organization display name.
    pub org_name: &'a str,
    /// Organization id.
    pub org_id: &'a str,
    /// The session's CSRF token (for the sign-out form).
    pub csrf: &'a str,
    /// Current entry.
    pub tab: Tab,
}

/// A whole page: `title`, the navigation when signed in, then `body` (already HTML).
pub fn page(title: &str, shell: Option<&Shell<'_>>, body: &str) -> String {
    let nav = match shell {
        None => String::new(),
        Some(shell) => {
            let link = |tab: Tab, href: &str, text: &str| {
                let current = if shell.tab == tab {
                    " aria-current=\"page\""
                } else {
                    ""
                };
                format!("<a href=\"{href}\"{current}>{text}</a>")
            };
            format!(
                "<nav><span class=\"org\" id=\"org-name\">{name} <small>({id})</small></span>{}{}{}\
                 <form method=\"post\" action=\"/dashboard/logout\" class=\"inline\">{}\
                 <button type=\"submit\" id=\"sign-out\">Sign out</button></form></nav>",
                link(Tab::Overview, "/dashboard/", "Overview"),
                link(Tab::Keys, "/dashboard/keys", "API keys"),
                link(Tab::Invoices, "/dashboard/invoices", "LogInvoices"),
                csrf_input(shell.csrf),
                name = esc(shell.org_name),
                id = esc(shell.org_id),
            )
        }
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · e-MCF gateway</title>\
         <link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/dashboard/style.css\"></head>\
         <body><header><strong>e-MCF gateway</strong> · organization dashboard</header>{nav}\
         <main><h1>{title}</h1>\n{body}\n</main></body></html>\n",
        title = esc(title),
    )
}

/// The hidden CSRF field every POST form carries.
pub fn csrf_input(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(csrf)
    )
}

/// A message box: `kind` is `info`, `ok` or `error`.
pub fn notice(kind: &str, text: &str) -> String {
    let role = if kind == "error" { "alert" } else { "status" };
    format!(
        "<p class=\"notice {kind}\" role=\"{role}\" id=\"notice\">{}</p>",
        esc(text)
    )
}

/// A UTC time in the gateway's time zone, to the second (`2026-03-02 11:00:00 +01:00`).
pub fn time(at: &DateTime<Utc>, offset: FixedOffset) -> String {
    at.with_timezone(&offset)
        .format("%Y-%m-%d %H:%M:%S %:z")
        .to_string()
}

/// The stylesheet served at `/dashboard/style.css`.
pub const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}\
header{background:#123;color:#fff;padding:.6em 1em}\
nav{display:flex;gap:1em;align-items:center;padding:.5em 1em;background:#e4e8ee;flex-wrap:wrap}\
nav a[aria-current]{font-weight:bold;text-decoration:none;color:#000}\
nav .org{font-weight:600;margin-right:auto}\
main{padding:1em;max-width:75em}\
table{border-collapse:collapse;background:#fff;margin:.5em 0}\
th,td{border:1px solid #ccd;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#eef1f5}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
code,.mono{font-family:ui-monospace,monospace;word-break:break-all}\
form.inline{display:inline;margin:0}\
fieldset{background:#fff;border:1px solid #ccd;margin:1em 0}\
label{margin-right:1em}\
.notice{padding:.6em 1em;border-radius:4px;background:#eef}\
.notice.ok{background:#e3f6e6}.notice.error{background:#fde8e8;color:#8a1111}\
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.85em;background:#dde}\
.badge.production{background:#d8ecff}.badge.sandbox{background:#fff0c9}\
.badge.up{background:#d6f5dc}.badge.down{background:#fbd5d5}\
.secret{font-size:1.2em;background:#fff;border:2px dashed #c60;padding:.5em;display:block}\
meter{width:20em;height:1.4em}\
figure#qr svg{width:220px;height:220px}\
dl.grid{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dl.grid dt{font-weight:600}dl.grid dd{margin:0}\
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_text_and_attributes() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(esc("F-2026/001 é"), "F-2026/001 é");
    }

    #[test]
    fn the_shell_escapes_the_organization_and_carries_the_csrf_token() {
        let shell = Shell {
            org_name: "<b>Shop</b>",
            org_id: "demo",
            csrf: "abc\"",
            tab: Tab::Keys,
        };
        let html = page("Keys & more", Some(&shell), "<p>x</p>");
        assert!(html.contains("&lt;b&gt;Shop&lt;/b&gt;"));
        assert!(!html.contains("<b>Shop"));
        assert!(html.contains("value=\"abc&quot;\""));
        assert!(html.contains("<title>Keys &amp; more"));
        assert!(html.contains("href=\"/dashboard/keys\" aria-current=\"page\""));
    }
}
