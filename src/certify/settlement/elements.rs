//! What an administrator types when settling an invoice in doubt becomes the register's
//! security elements, so each is checked against the form the channel produces
//! ([`Resolution::check`], in this order): codeDEFDGI 24 upper-case letters and digits (the
//! box's SIG, the web API's `codeDEFDGI`; the printed form in groups of 4 with dashes is taken
//! and kept without them); the NIM as the channel names its e-MCF (web API `CD01002923-1`: two
//! letters, 8 digits, `-`, a number; a box's MID: up to 20 upper-case letters, digits and
//! `-`); the counters `FC/TC TYPE` with FC at most TC and TYPE the invoice's own type; the QR
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
    /// Whether the channel is the DGI's web API (its NIM is the DGI's `CD01002923-1` form).
    pub web_api: bool,
}

/// Length of a codeDEFDGI.
const CODE_DEF_LEN: usize = 24;
/// Longest box MID.
const MAX_NIM: usize = 20;
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
        if !nim_well_formed(nim, expected.web_api) {
            let form = if expected.web_api { "dgi" } else { "box" };
            return Err(bad("nim", msg!("resolve-nim-bad", nim = nim, form = form)));
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

/// The web API's NIM (`CD01002923-1`: two upper-case letters, 8 digits, `-`, 1 to 3 digits),
/// or a box's MID (1 to 20 upper-case letters, digits and `-`).
fn nim_well_formed(nim: &str, web_api: bool) -> bool {
    if !web_api {
        return !nim.is_empty()
            && nim.len() <= MAX_NIM
            && nim
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-');
    }
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
    if text.chars().any(is_hidden_effect) {
        return Err(bad(field, msg!("resolve-text-bad", field = field)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::settlement::BadElement;
    use crate::i18n::Lang;

    const CODE: &str = "XN56YAPV37MZLNZLX6MOC3A5";
    const NIM: &str = "CD01000001-1";
    const NIF: &str = "A1234567B";

    fn expected(invoice_type: &str) -> Expected<'_> {
        Expected {
            invoice_type,
            nif: NIF,
            web_api: true,
            model: None,
        }
    }

    /// As the web API simulator's confirmation gives them.
    fn certified(code_def: &str, qr_code: &str, counters: &str, nim: &str) -> Resolution {
        Resolution::Certified {
            code_def: code_def.into(),
            qr_code: qr_code.into(),
            counters: counters.into(),
            nim: nim.into(),
            date_time: NaiveDateTime::default(),
        }
    }

    fn qr(nim: &str, code: &str, nif: &str) -> String {
        format!("DGI-RDC;{nim};{code};{nif};20261123100000")
    }

    /// The field a refusal names, and its French text.
    fn refused(resolution: &Resolution, invoice_type: &str) -> (&'static str, String) {
        match resolution.check(&expected(invoice_type)) {
            Err(ResolveError::BadElement(bad)) => (bad.field, bad.message.render(Lang::Fr)),
            other => panic!("{resolution:?}: {other:?}"),
        }
    }

    #[test]
    fn elements_of_the_channel_s_forms_are_kept_as_the_register_keeps_them() {
        let typed = certified(CODE, &qr(NIM, CODE, NIF), " 5/8 FV ", NIM);
        assert_eq!(
            typed.check(&expected("FV")).unwrap(),
            certified(CODE, &qr(NIM, CODE, NIF), "5/8 FV", NIM)
        );
        // The printed form, grouped by 4 with dashes, is kept without them.
        let grouped = "XN56-YAPV-37MZ-LNZL-X6MO-C3A5";
        let kept = certified(grouped, &qr(NIM, CODE, NIF), "1/1 FA", NIM)
            .check(&expected("FA"))
            .unwrap();
        assert!(matches!(kept, Resolution::Certified { code_def, .. } if code_def == CODE));
        // A box's MID and its QR prefix.
        let on_box = certified(
            CODE,
            &format!("RDCDEF01;SIM0000001;{CODE};{NIF};20261121143005"),
            "1/1 FV",
            "SIM0000001",
        );
        let box_expected = Expected {
            web_api: false,
            ..expected("FV")
        };
        assert!(on_box.check(&box_expected).is_ok());
        assert_eq!(
            Resolution::NotCertified.check(&expected("FV")).unwrap(),
            Resolution::NotCertified
        );
    }

    /// An entry of the channel, as the register keeps it, whose QR code is `qr_code`.
    fn entry_with_qr(qr_code: &str) -> RegisterEntry {
        let text = format!(
            r#"{{"sequence":1,"intent":1,"org":"acme","environment":"Production","rn":"F-1",
            "invoice_type":"FV","key_id":"k","device":"dgi","request_digest":"d",
            "received_at":"2026-11-23T09:00:00Z","totals":{{"total":"1.00","vat":"0.00",
            "group_ttc":[],"group_vat":[],"specific_tax":"0.00","usd_equivalent":null}},
            "nif":"{NIF}","isf":"I","certified_at":"2026-11-23T09:00:00Z",
            "security":{{"codeDEFDGI":"MODELCODE000000000000001","qrCode":"{qr_code}",
            "counters":"1/1 FV","nim":"{NIM}","dateTime":"2026-11-23T09:00:00"}},
            "source":"finalize","quota_year":2026}}"#
        );
        serde_json::from_str(&text).expect("an entry")
    }

    #[test]
    fn the_qr_code_s_form_is_learnt_from_the_channel_s_earlier_entries() {
        let check = |model: &RegisterEntry, qr_code: &str| {
            certified(CODE, qr_code, "2/2 FV", NIM).check(&Expected {
                model: Some(model),
                ..expected("FV")
            })
        };
        // Another shape than the reconstruction's: its fields, its prefix, its order.
        let model = entry_with_qr(&format!(
            "DRC-EMCF-2;{NIF};MODELCODE000000000000001;{NIM};20261123090000;V2"
        ));
        let typed = format!("DRC-EMCF-2;{NIF};{CODE};{NIM};20261123100000;V2");
        assert!(check(&model, &typed).is_ok());
        // The reconstruction's form is refused for that channel, saying its form.
        let refused = check(&model, &qr(NIM, CODE, NIF));
        assert!(
            matches!(&refused, Err(ResolveError::BadElement(bad)) if bad.field == "qrCode"
                && bad.message.render(Lang::Fr).contains("DRC-EMCF-2")),
            "{refused:?}"
        );
        // The code where the channel puts its own: the one typed, without dashes.
        let dashed = typed.replace(CODE, "XN56-YAPV-37MZ-LNZL-X6MO-C3A5");
        assert!(check(&model, &dashed).is_err());
        let other_nim = typed.replace(NIM, "CD01000002-1");
        assert!(check(&model, &other_nim).is_err());
        // A URL: it names the code, the NIM and the NIF where the channel's does.
        let url = entry_with_qr(&format!(
            "https://e-mcf.example.cd/v?c=MODELCODE000000000000001&m={NIM}&n={NIF}"
        ));
        let typed = format!("https://e-mcf.example.cd/v?c={CODE}&m={NIM}&n={NIF}");
        assert!(check(&url, &typed).is_ok());
        assert!(check(&url, &typed.replace(CODE, "ABCDEFGHIJKLMNOPQRSTUVWX")).is_err());
    }

    #[test]
    fn a_wrong_element_is_named_with_the_form_expected() {
        let good_qr = qr(NIM, CODE, NIF);
        // 23 characters: the count and the form are said.
        let (field, text) = refused(&certified(&CODE[..23], &good_qr, "1/1 FV", NIM), "FV");
        assert_eq!(field, "codeDEFDGI");
        assert!(
            text.contains("23 caractères") && text.contains("24"),
            "{text}"
        );
        for code in [
            "xn56yapv37mzlnzlx6moc3a5",
            "XN56YAPV37MZLNZLX6MOC3A",
            "XN56YAPV37MZLNZLX6MOC3A5X",
            "XN56-YAPV-37MZ-LNZL-X6MO-C3A",
            "XN56YAPV37MZLNZ X6MOC3A5",
            "XN56YAPV37MZLNZL_6MOC3A5",
        ] {
            assert_eq!(
                refused(&certified(code, &good_qr, "1/1 FV", NIM), "FV").0,
                "codeDEFDGI",
                "{code}"
            );
        }
        for nim in [
            "CD0100001-1",
            "cd01000001-1",
            "CD01000001",
            "CD01000001-1234",
            "SIM0000001",
            "CDX1000001-1",
        ] {
            let (field, text) = refused(&certified(CODE, &qr(nim, CODE, NIF), "1/1 FV", nim), "FV");
            assert_eq!(field, "nim", "{nim}");
            assert!(text.contains("CD01002923-1"), "{text}");
        }
        for counters in [
            "12/345",
            "12-345 FV",
            "12/345 fv",
            "/345 FV",
            "0/3 FV",
            "4/3 FV",
            "1/1 FA",
            "1/1  FV",
            "1/1 FVX",
        ] {
            let (field, text) = refused(&certified(CODE, &good_qr, counters, NIM), "FV");
            assert_eq!(field, "counters", "{counters}");
            assert!(text.contains("12/345 FV"), "{text}");
        }
        let other_code = "ABCDEFGHIJKLMNOPQRSTUVWX";
        for (qr_code, said) in [
            ("DGI-RDC;CD01000001-1;X".to_owned(), "5 champs"),
            (format!("{good_qr};x"), "5 champs"),
            (
                format!("DGI-RDC;{NIM};{CODE};{NIF};2026112310"),
                "AAAAMMJJHHMMSS",
            ),
            (
                format!("DGI-RDC;{NIM};{CODE};{NIF};20261323100000"),
                "AAAAMMJJHHMMSS",
            ),
            (format!("dgi;{NIM};{CODE};{NIF};20261123100000"), "PRÉFIXE"),
            (qr("CD01000002-1", CODE, NIF), "CD01000002-1"),
            (qr(NIM, other_code, NIF), other_code),
            (qr(NIM, CODE, "B7654321C"), "B7654321C"),
        ] {
            let (field, text) = refused(&certified(CODE, &qr_code, "1/1 FV", NIM), "FV");
            assert_eq!(field, "qrCode", "{qr_code}");
            assert!(text.contains(said), "{qr_code}: {text}");
        }
        // Missing, or not printable ASCII.
        assert_eq!(
            refused(&certified(" ", &good_qr, "1/1 FV", NIM), "FV").0,
            "codeDEFDGI"
        );
        assert_eq!(
            refused(
                &certified(CODE, &good_qr, "1/1 FV", "CD01000001-1\u{202E}"),
                "FV"
            )
            .0,
            "nim"
        );
        assert_eq!(
            refused(&certified(CODE, "DGI-RDC\n;x", "1/1 FV", NIM), "FV").0,
            "qrCode"
        );
    }

    #[test]
    fn a_name_or_a_note_is_one_line() {
        assert!(check_free_text("by", "Marie K.").is_ok());
        for text in ["Marie\nNom HONEST", "Marie\u{202E}K", "x\u{1b}[2J"] {
            assert!(matches!(
                check_free_text("note", text),
                Err(ResolveError::BadElement(BadElement { field: "note", .. }))
            ));
        }
        assert!(check_free_text("by", &"x".repeat(MAX_TEXT + 1)).is_err());
    }
}
