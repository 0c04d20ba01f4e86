//! The overview's devices, in a shop owner's words: whether each register's device answers,
//! why invoices cannot be certified now, the device's last exchange with the DGI. The
//! protocol's names and raw values (device names, link errors, C2h fields, the web API's
//! token and pending requests) are for technicians, in a collapsed "technical details" part
//! (`<details>`, no script) that [`Technical`] gathers.

use chrono::FixedOffset;

use super::html::{self, cell, esc, t};
use crate::certify::{ChannelView, DgiContact, Problem};
use crate::i18n::{format, Lang, Message};
use crate::msg;

/// Which register a device certifies for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Register {
    /// The organization's fiscal device.
    Production,
    /// Its sandbox simulator, started at its first test invoice.
    Sandbox,
}

impl Register {
    fn id(self) -> &'static str {
        match self {
            Register::Production => "production",
            Register::Sandbox => "sandbox",
        }
    }

    fn name(self) -> Message {
        match self {
            Register::Production => msg!("dash-register-production"),
            Register::Sandbox => msg!("dash-register-sandbox"),
        }
    }
}

/// The raw values shown under "technical details", as (name, value) rows.
#[derive(Default)]
pub(super) struct Technical {
    rows: Vec<(String, String)>,
}

impl Technical {
    /// A row: `name` (catalogue text), `value` (shown as code).
    pub(super) fn add(&mut self, lang: Lang, name: Message, value: &str) {
        self.rows.push((name.render(lang), value.to_owned()));
    }

    /// The collapsed part; empty when there is nothing to show.
    pub(super) fn html(&self, lang: Lang) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let mut html = format!(
            "<details id=\"technical\"><summary>{}</summary><p>{}</p><dl class=\"grid\">",
            t(lang, msg!("dash-tech-title")),
            t(lang, msg!("dash-tech-intro"))
        );
        for (name, value) in &self.rows {
            html.push_str(&format!(
                "<dt>{}</dt><dd><code>{}</code></dd>",
                esc(name),
                esc(value)
            ));
        }
        html.push_str("</dl></details>");
        html
    }
}

/// The devices' table: one row per register.
pub(super) fn table(
    rows: &[(Register, &str, Option<&ChannelView>)],
    zone: FixedOffset,
    lang: Lang,
    technical: &mut Technical,
) -> String {
    let headings = [
        msg!("dash-device-register"),
        msg!("dash-device-state"),
        msg!("dash-device-since"),
        msg!("dash-device-last-reply"),
        msg!("dash-device-queued"),
    ]
    .map(|m| m.render(lang));
    let mut html = html::table_start("devices", &headings);
    for &(register, name, view) in rows {
        html.push_str(&row(register, view, &headings, zone, lang));
        technical.add(
            lang,
            msg!("dash-tech-device", register = register.id()),
            name,
        );
        if let Some(error) = view.and_then(|v| v.last_error.as_deref()) {
            if !error.is_empty() {
                technical.add(
                    lang,
                    msg!("dash-tech-link-error", register = register.id()),
                    error,
                );
            }
        }
        if let Some(pending) = view.and_then(|v| v.pending) {
            technical.add(lang, msg!("dash-tech-pending"), &pending.to_string());
        }
    }
    html.push_str(html::TABLE_END);
    html
}

fn row(
    register: Register,
    view: Option<&ChannelView>,
    h: &[String; 5],
    zone: FixedOffset,
    lang: Lang,
) -> String {
    let id = register.id();
    let mut row = format!(
        "<tr class=\"device\">{}",
        cell(&h[0], "", &t(lang, register.name()))
    );
    let Some(s) = view else {
        // A sandbox starts at its first test invoice: not being there yet is not a fault.
        let state = match register {
            Register::Sandbox => format!(
                "<span class=\"badge idle\" id=\"link-{id}\">{}</span> <small>{}</small>",
                t(lang, msg!("dash-link-unused")),
                t(lang, msg!("dash-link-unused-hint"))
            ),
            Register::Production => format!(
                "<span class=\"badge down\" id=\"link-{id}\">{}</span>",
                t(lang, msg!("dash-link-not-configured"))
            ),
        };
        row.push_str(&cell(&h[1], "", &state));
        for heading in &h[2..] {
            row.push_str(&cell(heading, "", "-"));
        }
        row.push_str("</tr>");
        return row;
    };
    let (class, text) = if s.connected {
        ("up", msg!("dash-link-connected"))
    } else {
        ("down", msg!("dash-link-disconnected"))
    };
    let last_reply = s.last_reply_at.as_ref().map_or_else(
        || msg!("dash-never").render(lang),
        |at| html::time(at, zone, lang),
    );
    row.push_str(&cell(
        &h[1],
        "",
        &format!(
            "<span class=\"badge {class}\" id=\"link-{id}\">{}</span>",
            t(lang, text)
        ),
    ));
    row.push_str(&cell(&h[2], "", &esc(&html::time(&s.since, zone, lang))));
    row.push_str(&cell(&h[3], "", &esc(&last_reply)));
    row.push_str(&cell(
        &h[4],
        "num",
        &esc(&format::integer(s.queued as u64, lang)),
    ));
    row.push_str("</tr>");
    row
}

/// Why the organization's invoices cannot be certified now, in plain words (its code picks
/// the text); the channel's own text goes to the technical details.
pub(super) fn not_ready(problem: &Problem, lang: Lang, technical: &mut Technical) -> String {
    technical.add(
        lang,
        msg!("dash-tech-not-ready"),
        &format!("{} ({})", problem.text.render(lang), problem.code),
    );
    let text = msg!(
        "dash-device-not-ready",
        code = problem.code,
        channel = problem.channel
    );
    html::banner("error", "alert", "device-not-ready", &t(lang, text))
}

/// The device's last exchange with the DGI, as it last reported it (a box), or how long the
/// gateway's access to the DGI's web API lasts.
pub(super) fn dgi_paragraph(
    status: Option<&ChannelView>,
    zone: FixedOffset,
    lang: Lang,
    technical: &mut Technical,
) -> String {
    if let Some(until) = status.and_then(|s| s.token_valid) {
        let soon = until - chrono::Utc::now() < chrono::Duration::days(7);
        let until = html::time(&until, zone, lang);
        technical.add(lang, msg!("dash-tech-token"), &until);
        let mut text = t(lang, msg!("dash-dgi-token-valid", until = until));
        if soon {
            text.push_str(&format!(
                " <strong>{}</strong>",
                t(lang, msg!("dash-dgi-token-soon"))
            ));
        }
        return format!("<p id=\"token-valid\">{text}</p>");
    }
    let Some(dgi) = status.and_then(|s| s.dgi.as_ref()) else {
        return format!(
            "<p id=\"dgi-contact\">{}</p>",
            t(lang, msg!("dash-dgi-unknown"))
        );
    };
    c2h_details(dgi, lang, technical);
    let at = dgi.last_contact.map_or_else(
        || msg!("dash-never").render(lang),
        |at| html::device_time(&at, lang),
    );
    let mut text = t(lang, msg!("dash-dgi-contact", at = at));
    let state = dgi.state.trim();
    if !state.is_empty() {
        text.push(' ');
        text.push_str(&t(lang, msg!("dash-dgi-state", state = state)));
    }
    // EC only: DC's meaning differs between firmware (PROTOCOL.md §5.2), so it is shown
    // to technicians only.
    if let Some(sent) = dgi.sent {
        text.push(' ');
        text.push_str(&t(
            lang,
            msg!(
                "dash-dgi-sent",
                n = sent,
                sent = format::integer(sent, lang)
            ),
        ));
    }
    if !dgi.error.trim().is_empty() {
        text.push(' ');
        text.push_str(&t(lang, msg!("dash-dgi-error")));
    }
    format!("<p id=\"dgi-contact\">{text}</p>")
}

/// What the box's C2h said, field by field, for technicians.
fn c2h_details(dgi: &DgiContact, lang: Lang, technical: &mut Technical) {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    let at = dgi
        .last_contact
        .map_or_else(|| "-".to_owned(), |at| at.to_string());
    technical.add(
        lang,
        msg!("dash-tech-c2h"),
        &format!(
            "DT={at} STA={} EC={} DC={} ER={}",
            dgi.state,
            count(dgi.sent),
            count(dgi.stored),
            dgi.error
        ),
    );
}
