use super::*;
use crate::certify::resolve::BadElement;
use crate::i18n::Lang;

const CODE: &str = "XN56YAPV37MZLNZLX6MOC3A5";
const NIM: &str = "CD01000001-1";
const NIF: &str = "A1234567B";

fn expected(invoice_type: &str) -> Expected<'_> {
    Expected {
        invoice_type,
        nif: NIF,
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

#[test]
fn a_name_cannot_pass_for_another_in_the_journaled_source() {
    // Journaled as "administrator: NAME; NOTE": a `;` in the name would make the rest read
    // as a note, or as "dashboard of ...".
    assert!(check_free_text("by", "Marie K.; dashboard of acme").is_err());
    assert!(check_free_text("by", "Marie K.").is_ok());
    assert!(check_free_text("note", "lu sur le portail; ticket 12").is_ok());
}
