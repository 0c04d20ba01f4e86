//! HTML building: escaping, texts in the reader's language, amounts and times, tables that
//! become cards on a phone, and the page shell. Every dynamic value that goes into a page goes
//! through [`esc`] (text and attribute values alike), catalogue texts too ([`t`]); the QR
//! code's SVG is the only markup inserted as is, and it is drawn by the `qrcode` crate from the
//! text, never copied from it.

use chrono::{DateTime, FixedOffset, Utc};
use rust_decimal::Decimal;

use super::lang::Reader;
use crate::i18n::{format, Lang, Message};
use crate::msg;

pub use crate::model::FISCAL_CURRENCY;

/// `text` with `& < > " '` replaced by entities: safe in element content and in quoted
/// attribute values.
pub fn esc(text: &str) -> String {
    crate::markup::escape(text)
}

/// A text of the register or an administrator's name as a page shows it: its hidden effects
/// (control characters, direction marks an older release kept) made visible, escaped.
pub fn shown(text: &str) -> String {
    esc(&crate::i18n::format::visible(text))
}

/// `message` in `lang`, escaped.
pub fn t(lang: Lang, message: Message) -> String {
    esc(&message.render(lang))
}

/// An instant in the organization's zone, with the offset shown (`24/11/2026 00:30:05
/// UTC+01:00`).
pub fn time(at: &DateTime<Utc>, zone: FixedOffset, lang: Lang) -> String {
    format::date_time(*at, zone, lang)
}

pub use crate::i18n::format::device_date_time as device_time;

/// An amount in the fiscal currency (`168 040,00 CDF`).
pub fn amount(value: Decimal, lang: Lang) -> String {
    format::amount(value, FISCAL_CURRENCY, lang)
}

/// The start of a table that is a card per row on a phone: `headings` are its columns (each
/// cell repeats its column's name, see [`cell`]).
pub fn table_start(id: &str, headings: &[String]) -> String {
    let mut html = format!(
        "<div class=\"table-wrap\"><table id=\"{}\" class=\"cards\"><thead><tr>",
        esc(id)
    );
    for heading in headings {
        html.push_str(&format!("<th scope=\"col\">{}</th>", esc(heading)));
    }
    html.push_str("</tr></thead><tbody>");
    html
}

/// The end of a [`table_start`] table.
pub const TABLE_END: &str = "</tbody></table></div>";

/// One cell of column `label` (shown before the value on a phone), `class` if not empty,
/// `inner` already HTML.
pub fn cell(label: &str, class: &str, inner: &str) -> String {
    let class = if class.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", esc(class))
    };
    format!("<td data-label=\"{}\"{class}>{inner}</td>", esc(label))
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

/// The FR / EN switch: links to `/dashboard/lang`, the current language marked.
fn switch(reader: &Reader) -> String {
    let links: Vec<String> = Lang::ALL
        .iter()
        .map(|&lang| {
            let current = if lang == reader.lang {
                " aria-current=\"true\""
            } else {
                ""
            };
            let name = match lang {
                Lang::Fr => "Français",
                Lang::En => "English",
            };
            format!(
                "<a href=\"{}\" id=\"lang-{code}\" lang=\"{code}\" hreflang=\"{code}\" \
                 title=\"{name}\"{current}>{}</a>",
                esc(&reader.switch_href(lang)),
                lang.code().to_ascii_uppercase(),
                code = lang.code(),
            )
        })
        .collect();
    format!(
        "<span class=\"lang\" id=\"lang-switch\" aria-label=\"{}\">{}</span>",
        t(reader.lang, msg!("dash-lang-switch")),
        links.join(" ")
    )
}

/// A whole page in the reader's language: `title` (plain text), the navigation when signed
/// in, then `body` (already HTML).
pub fn page(reader: &Reader, title: &str, shell: Option<&Shell<'_>>, body: &str) -> String {
    let lang = reader.lang;
    let nav = match shell {
        None => String::new(),
        Some(shell) => {
            let link = |tab: Tab, href: &str, text: Message| {
                let current = if shell.tab == tab {
                    " aria-current=\"page\""
                } else {
                    ""
                };
                format!("<a href=\"{href}\"{current}>{}</a>", t(lang, text))
            };
            format!(
                "<nav><span class=\"org\" id=\"org-name\">{name} <small>({id})</small></span>{}{}{}\
                 <form method=\"post\" action=\"/dashboard/logout\" class=\"inline\">{}\
                 <button type=\"submit\" id=\"sign-out\">{}</button></form></nav>",
                link(Tab::Overview, "/dashboard/", msg!("dash-nav-overview")),
                link(Tab::Keys, "/dashboard/keys", msg!("dash-nav-keys")),
                link(Tab::Invoices, "/dashboard/invoices", msg!("dash-nav-invoices")),
                csrf_input(shell.csrf),
                t(lang, msg!("dash-nav-sign-out")),
                name = shown(shell.org_name),
                id = esc(shell.org_id),
            )
        }
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"{code}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · {brand}</title>\
         <link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/dashboard/style.css\"></head>\
         <body><header><span class=\"brand\"><strong>{brand}</strong> · {subtitle}</span>{switch}</header>{nav}\
         <main><h1>{title}</h1>\n{body}\n</main></body></html>\n",
        code = lang.code(),
        title = esc(title),
        brand = t(lang, msg!("dash-brand")),
        subtitle = t(lang, msg!("dash-subtitle")),
        switch = switch(reader),
    )
}

/// The hidden CSRF field every POST form carries.
pub fn csrf_input(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(csrf)
    )
}

/// A message box: `kind` is `info`, `ok`, `warn` or `error`; `text` is plain text.
pub fn notice(kind: &str, text: &str) -> String {
    let role = if kind == "error" { "alert" } else { "status" };
    banner(kind, role, "notice", &esc(text))
}

/// A message box of a page's own (an alert, a notice's banner): `kind` as [`notice`]'s, its
/// ARIA `role`, its `id`; `inner` is HTML, escaped already.
pub fn banner(kind: &str, role: &str, id: &str, inner: &str) -> String {
    format!("<p class=\"notice {kind}\" role=\"{role}\" id=\"{id}\">{inner}</p>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(lang: Lang) -> Reader {
        Reader {
            lang,
            here: "/dashboard/keys".into(),
        }
    }

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
        let html = page(&reader(Lang::En), "Keys & more", Some(&shell), "<p>x</p>");
        assert!(html.contains("&lt;b&gt;Shop&lt;/b&gt;"));
        assert!(!html.contains("<b>Shop"));
        assert!(html.contains("value=\"abc&quot;\""));
        assert!(html.contains("<title>Keys &amp; more"));
        assert!(html.contains("href=\"/dashboard/keys\" aria-current=\"page\""));
    }

    #[test]
    fn pages_say_their_language_and_offer_the_other() {
        let fr = page(&reader(Lang::Fr), "Clés", None, "");
        assert!(fr.contains("<html lang=\"fr\">"), "{fr}");
        assert!(fr.contains("name=\"viewport\""));
        assert!(fr.contains(
            "href=\"/dashboard/lang?to=en&amp;back=%2Fdashboard%2Fkeys\" id=\"lang-en\""
        ));
        assert!(fr.contains(
            "id=\"lang-fr\" lang=\"fr\" hreflang=\"fr\" title=\"Français\" aria-current"
        ));
        let en = page(&reader(Lang::En), "Keys", None, "");
        assert!(en.contains("<html lang=\"en\">"));
        assert!(en.contains("title=\"English\" aria-current"));
    }

    #[test]
    fn amounts_and_times_as_the_reader_writes_them() {
        let value = Decimal::new(16_804_000, 2);
        assert_eq!(amount(value, Lang::Fr), "168\u{202F}040,00\u{00A0}CDF");
        assert_eq!(amount(value, Lang::En), "168,040.00 CDF");
        let at = DateTime::parse_from_rfc3339("2026-11-23T23:30:05Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let zone = FixedOffset::east_opt(3600).unwrap_or(FixedOffset::east_opt(0).unwrap());
        assert_eq!(time(&at, zone, Lang::Fr), "24/11/2026 00:30:05 UTC+01:00");
        assert_eq!(
            device_time(&at.naive_utc(), Lang::En),
            "2026-11-23 23:30:05"
        );
    }

    #[test]
    fn table_cells_carry_their_column() {
        let head = table_start("keys", &["Id".into(), "<x>".into()]);
        assert!(head.contains("<table id=\"keys\" class=\"cards\">"));
        assert!(head.contains("<th scope=\"col\">&lt;x&gt;</th>"));
        assert_eq!(
            cell("Créée le", "num", "1"),
            "<td data-label=\"Créée le\" class=\"num\">1</td>"
        );
    }
}
