//! What an administrator types when settling an invoice in doubt becomes the register's
//! security elements, so each is checked against the form the channel produces
//! ([`Resolution::check`], in this order): codeDEFDGI 24 upper-case letters and digits (the
//! box's SIG, the web API's `codeDEFDGI`; the printed form in groups of 4 with dashes is taken
//! and kept without them); the NIM as the web API names its e-MCF (`CD01002923-1`: two
//! letters, 8 digits, `-`, a number; only that channel leaves invoices to a person); the
//! counters `FC/TC TYPE` with FC at most TC and TYPE the invoice's own type; the QR
//! code's text. The QR code's form is learnt from the channel itself where it can be: when the
//! register holds an earlier entry of the organization certified through the same channel,
//! the typed text must have that entry's fields, its prefix, and the NIM, codeDEFDGI, NIF and
//! date where that entry has its own (a real DGI's form may differ from the reconstruction);
//! without one, `PREFIX;NIM;codeDEFDGI;NIF;yyyyMMddHHmmss` (5 fields, as the box's
//! `RDCDEF01;...` and the web API simulator's). A refusal names the field and the form
//! expected. The name and the note are one line of text.

use chrono::NaiveDateTime;

use super::{bad, Resolution, ResolveError};
use crate::i18n::format::is_hidden_effect;
use crate::model::RegisterEntry;
use crate::msg;

/// Longest text of an element, a name or a note.
const MAX_TEXT: usize = 500;

/// What the elements typed must agree with: the invoice in doubt and its channel.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The organization's last entry certified through the same channel: its QR code is the
    /// form the channel gives (`None`: no such entry yet).
    pub model: Option<&'a RegisterEntry>,
    /// The invoice's type (`FV`...): the counters' own.
    pub invoice_type: &'a str,
    /// The organization's NIF: the QR code's.
    pub nif: &'a str,
}

/// Length of a codeDEFDGI.
const CODE_DEF_LEN: usize = 24;
/// Most digits of a counter.
const MAX_COUNTER_DIGITS: usize = 12;

impl Resolution {
    /// The elements as typed by a person, against the forms the channel produces and against
    /// each other (see the module's documentation); the first wrong one is refused, naming it.
    /// Returns them as the register keeps them (trimmed, the codeDEFDGI without dashes).
    pub fn check(&self, expected: &Expected<'_>) -> Result<Resolution, ResolveError> {
        let Resolution::Certified {
            code_def,
            qr_code,
            counters,
            nim,
            date_time,
        } = self
        else {
            return Ok(Resolution::NotCertified);
        };
        for (name, value) in [
            ("codeDEFDGI", code_def),
            ("nim", nim),
            ("counters", counters),
            ("qrCode", qr_code),
        ] {
            if value.trim().is_empty() {
                return Err(bad(name, msg!("resolve-element-missing", name = name)));
            }
            let printable = value
                .trim()
                .chars()
                .all(|c| c.is_ascii_graphic() || c == ' ');
            if value.len() > MAX_TEXT || !printable {
                return Err(bad(name, msg!("resolve-element-bad", name = name)));
            }
        }
        let code_def = code_def_of(code_def.trim())?;
        let nim = nim.trim();
        if !nim_well_formed(nim) {
            return Err(bad("nim", msg!("resolve-nim-bad", nim = nim)));
        }
        let counters = counters.trim();
        if !counters_well_formed(counters, expected.invoice_type) {
            return Err(bad(
                "counters",
                msg!(
                    "resolve-counters-bad",
                    counters = counters,
                    invoice_type = expected.invoice_type
                ),
            ));
        }
        let qr_code = qr_code.trim();
        let typed = Typed {
            code_def: &code_def,
            nim,
            nif: expected.nif,
        };
        match expected.model {
            Some(model) => check_qr_like(qr_code, &typed, model)?,
            None => check_qr(qr_code, &typed)?,
        }
        Ok(Resolution::Certified {
            code_def,
            qr_code: qr_code.to_owned(),
            counters: counters.to_owned(),
            nim: nim.to_owned(),
            date_time: *date_time,
        })
    }
}

/// A codeDEFDGI as the register keeps it: 24 upper-case letters and digits, typed as such or
/// in the printed groups of 4 joined by dashes.
fn code_def_of(typed: &str) -> Result<String, ResolveError> {
    let grouped = typed.len() == CODE_DEF_LEN + CODE_DEF_LEN / 4 - 1
        && typed.split('-').all(|group| group.len() == 4);
    let code: String = if grouped {
        typed.chars().filter(|c| *c != '-').collect()
    } else {
        typed.to_owned()
    };
    let well_formed = code.len() == CODE_DEF_LEN
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if well_formed {
        Ok(code)
    } else {
        Err(bad(
            "codeDEFDGI",
            msg!(
                "resolve-code-def-bad",
                code_def = typed,
                length = typed.chars().count()
            ),
        ))
    }
}

/// The web API's NIM (`CD01002923-1`: two upper-case letters, 8 digits, `-`, 1 to 3 digits).
/// Only the web API channel leaves invoices to an administrator (a box's outcome is settled
/// from its C1h), so no box MID is typed here.
fn nim_well_formed(nim: &str) -> bool {
    let Some((machine, number)) = nim.split_once('-') else {
        return false;
    };
    let letters = machine.get(..2).unwrap_or_default();
    let digits = machine.get(2..).unwrap_or_default();
    letters.len() == 2
        && letters.bytes().all(|b| b.is_ascii_uppercase())
        && digits.len() == 8
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (1..=3).contains(&number.len())
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// `FC/TC TYPE`: two numbers from 1, FC at most TC (FC counts one kind, TC them all), and the
/// invoice's own type.
fn counters_well_formed(counters: &str, invoice_type: &str) -> bool {
    let Some((numbers, kind)) = counters.split_once(' ') else {
        return false;
    };
    let Some((fc, tc)) = numbers.split_once('/') else {
        return false;
    };
    let number = |s: &str| {
        let digits =
            !s.is_empty() && s.len() <= MAX_COUNTER_DIGITS && s.bytes().all(|b| b.is_ascii_digit());
        digits
            .then(|| s.parse::<u64>().ok())
            .flatten()
            .filter(|n| *n >= 1)
    };
    match (number(fc), number(tc)) {
        (Some(fc), Some(tc)) => fc <= tc && kind == invoice_type,
        _ => false,
    }
}

/// The elements a QR code's text must repeat: those typed, and the organization's NIF.
struct Typed<'a> {
    code_def: &'a str,
    nim: &'a str,
    nif: &'a str,
}

/// Whether `text` is a date and time as the QR codes write it (`yyyyMMddHHmmss`).
fn is_qr_time(text: &str) -> bool {
    text.len() == 14 && NaiveDateTime::parse_from_str(text, "%Y%m%d%H%M%S").is_ok()
}

/// Without an earlier entry of the channel: `PREFIX;NIM;codeDEFDGI;NIF;yyyyMMddHHmmss`,
/// with the NIM and codeDEFDGI typed (the codeDEFDGI as the register keeps it, without
/// dashes) and the organization's NIF.
fn check_qr(qr_code: &str, typed: &Typed<'_>) -> Result<(), ResolveError> {
    let fields: Vec<&str> = qr_code.split(';').collect();
    let [prefix, qr_nim, qr_code_def, qr_nif, at] = fields[..] else {
        return Err(bad(
            "qrCode",
            msg!("resolve-qr-form", qr_code = qr_code, fields = fields.len()),
        ));
    };
    let prefix_ok = !prefix.is_empty()
        && prefix.len() <= 16
        && prefix
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-');
    if !prefix_ok || !is_qr_time(at) {
        return Err(bad(
            "qrCode",
            msg!("resolve-qr-form", qr_code = qr_code, fields = 5u32),
        ));
    }
    for (part, found, expected) in [
        ("nim", qr_nim, typed.nim),
        ("codeDEFDGI", qr_code_def, typed.code_def),
        ("nif", qr_nif, typed.nif),
    ] {
        if found != expected {
            return Err(mismatch(part, found, expected));
        }
    }
    Ok(())
}

/// With an earlier entry of the channel (`model`): the typed text has its number of fields
/// and its prefix, and where the model has its own NIM, codeDEFDGI, NIF or a date, the typed
/// text has those typed (a date there).
fn check_qr_like(
    qr_code: &str,
    typed: &Typed<'_>,
    model: &RegisterEntry,
) -> Result<(), ResolveError> {
    let theirs: Vec<&str> = model.security.qr_code.split(';').collect();
    let fields: Vec<&str> = qr_code.split(';').collect();
    let form = || {
        bad(
            "qrCode",
            msg!(
                "resolve-qr-like",
                qr_code = qr_code,
                example = model.security.qr_code.as_str(),
                fields = theirs.len()
            ),
        )
    };
    if theirs.len() < 2 {
        // Not `;`-separated (a URL, say): the typed text names what the model names.
        let elements = [
            ("nim", model.security.nim.as_str(), typed.nim),
            (
                "codeDEFDGI",
                model.security.code_def.as_str(),
                typed.code_def,
            ),
            ("nif", model.request.nif.as_str(), typed.nif),
        ];
        for (part, their, expected) in elements {
            if model.security.qr_code.contains(their) && !qr_code.contains(expected) {
                return Err(mismatch(part, qr_code, expected));
            }
        }
        return Ok(());
    }
    if fields.len() != theirs.len() || fields.first() != theirs.first() {
        return Err(form());
    }
    for (found, their) in fields.iter().zip(&theirs).skip(1) {
        let expected = if *their == model.security.nim {
            ("nim", typed.nim)
        } else if *their == model.security.code_def {
            ("codeDEFDGI", typed.code_def)
        } else if *their == model.request.nif {
            ("nif", typed.nif)
        } else if is_qr_time(their) {
            if !is_qr_time(found) {
                return Err(form());
            }
            continue;
        } else {
            continue;
        };
        if *found != expected.1 {
            return Err(mismatch(expected.0, found, expected.1));
        }
    }
    Ok(())
}

fn mismatch(part: &str, found: &str, expected: &str) -> ResolveError {
    bad(
        "qrCode",
        msg!(
            "resolve-qr-mismatch",
            part = part,
            found = found,
            expected = expected
        ),
    )
}

/// A name or a note: journaled with the decision and shown with the entry, so one line of
/// text without control characters or direction marks.
pub(super) fn check_free_text(field: &'static str, text: &str) -> Result<(), ResolveError> {
    if text.chars().count() > MAX_TEXT {
        return Err(bad(field, msg!("resolve-text-too-long", max = MAX_TEXT)));
    }
    // A name is journaled as `administrator: NAME; NOTE`, read back by i18n::names: a `;` in
    // it would let a name pass for another (or for "dashboard of ...").
    if text.chars().any(is_hidden_effect) || (field == "by" && text.contains(';')) {
        return Err(bad(field, msg!("resolve-text-bad", field = field)));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
