//! Firmware profiles in the engine: they change the wire form of replies, never what the box
//! certifies.

use super::*;
use crate::firmware::{RefusalForm, REAL_IDLE_STATUS};
use mcf_sfe::{Dialect, LineBreaks};

/// Sends `command` as a host of `firmware`'s dialect would and reads the reply tolerantly.
fn talk(engine: &mut Engine, command: &Command) -> (Reply, Handled) {
    let line_breaks = engine.firmware().line_breaks;
    let data = line_breaks
        .outgoing(&command.encode().unwrap())
        .into_owned();
    let handled = engine.handle(command.code(), &data, clock(), Instant::now());
    assert!(handled.reply.len() <= MAX_REPLY_DATA);
    let dialect = Dialect {
        line_breaks,
        refusal_by_status: true,
    };
    let reading = Reply::read(command.code(), &handled.reply, handled.status, &dialect).unwrap();
    (reading.reply, handled)
}

#[test]
fn every_preset_certifies_and_signs_exactly_as_the_reference() {
    let mut signed = Vec::new();
    for firmware in crate::firmware::Firmware::presets() {
        let name = firmware.name;
        let mut engine = Engine::open_with_firmware(config(), firmware).unwrap();
        for command in [
            open(InvoiceType::Fv, PriceMode::Ttc, "F-1"),
            stylo(),
            Command::Subtotal,
            pay(dec!(1200.00)),
        ] {
            let (reply, _) = talk(&mut engine, &command);
            assert!(!matches!(reply, Reply::Refused(_)), "{name}: {reply:?}");
        }
        let (reply, _) = talk(&mut engine, &finalize(dec!(1200.00), dec!(165.52)));
        let Reply::Certified(cert) = reply else {
            panic!("{name}: {reply:?}")
        };
        assert_eq!(
            (cert.fc, cert.tc, cert.invoice_type),
            (1, 1, InvoiceType::Fv)
        );
        signed.push((name, cert.code_def, engine.memory().invoices().to_vec()));
    }
    let (_, code_def, records) = &signed[0];
    for (name, other_code, other_records) in &signed {
        assert_eq!(other_code, code_def, "{name}");
        assert_eq!(other_records, records, "{name}");
    }
}

#[test]
fn refusals_take_the_profile_form() {
    let wire = |name: &str| {
        let firmware = crate::firmware::Firmware::named(name).unwrap();
        let mut engine = Engine::open_with_firmware(config(), firmware).unwrap();
        talk(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
        let (_, handled) = talk(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-2"));
        (handled.reply, handled.status)
    };
    let (data, status) = wire("reference");
    assert_eq!(data, b"E:invoice already open");
    assert!(status.has(StatusFlag::CommandRefused) && status.has(StatusFlag::InvoiceOpen));
    assert_eq!(wire("cdf-currency").0, "E:facture déjà ouverte".as_bytes());
    let (data, status) = wire("silent");
    assert_eq!(data, b"E:facture d\xE9j\xE0 ouverte");
    assert_eq!(status.0, REAL_IDLE_STATUS);
    let (data, status) = wire("c1h-11");
    assert_eq!(data, b"");
    assert!(status.has(StatusFlag::CommandRefused));
}

#[test]
fn an_unexecuted_refusal_takes_the_profile_form() {
    let engine = Engine::open(config()).unwrap();
    let (data, status) = engine.refuse_unexecuted(code::ITEM);
    assert_eq!(data, b"E:fault injected: command not executed");
    assert_eq!(status, Status::with(&[StatusFlag::CommandRefused]));
    let french = crate::firmware::Firmware {
        refusals: RefusalForm::FrenchWindows1252,
        ..crate::firmware::Firmware::reference()
    };
    let engine = Engine::open_with_firmware(config(), french).unwrap();
    let (data, _) = engine.refuse_unexecuted(code::ITEM);
    assert_eq!(
        data,
        b"E:d\xE9faut inject\xE9 : commande non ex\xE9cut\xE9e"
    );
}

#[test]
fn swapped_escapes_are_read_from_the_host_and_written_back() {
    let mut config = config();
    config.taxpayer[5] = "Ligne 1\nLigne 2".to_owned();
    let firmware = crate::firmware::Firmware {
        line_breaks: LineBreaks::Swapped,
        ..crate::firmware::Firmware::reference()
    };
    let mut engine = Engine::open_with_firmware(config, firmware).unwrap();
    talk(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    // The host writes CR as `^xa;` and LF as `^xd;`: the box reads "Merci\r\nAu revoir".
    let raw = b"A,Merci^xa;^xd;Au revoir";
    let handled = engine.handle(code::COMMENT, raw, clock(), Instant::now());
    assert_eq!(handled.reply, b"");
    let comments = engine.machine().invoice().unwrap().comments();
    assert_eq!(
        comments.get(&CommentLine::A).map(String::as_str),
        Some("Merci\r\nAu revoir")
    );
    let key = Command::TaxpayerField(mcf_sfe::types::TaxpayerKey::D0);
    let (reply, handled) = talk(&mut engine, &key);
    assert_eq!(handled.reply, b"D0,Ligne 1^xd;Ligne 2");
    let Reply::TaxpayerField(value) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(value.value, "Ligne 1\nLigne 2");
}

#[test]
fn slow_commands_and_the_credit_note_follow_the_profile() {
    let silent = crate::firmware::Firmware::named("silent").unwrap();
    let mut engine = Engine::open_with_firmware(config(), silent).unwrap();
    assert_eq!(engine.config().timing.credit_note_reply, SlowReply::Silent);
    assert_eq!(
        engine.config().timing.credit_note,
        std::time::Duration::from_secs(25)
    );
    let (_, handled) = talk(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    assert_eq!(
        (handled.processing, handled.silent),
        (std::time::Duration::from_millis(1_500), true)
    );
    let (_, handled) = talk(&mut engine, &stylo());
    assert_eq!(
        (handled.processing, handled.silent),
        (Timing::default().command, false)
    );
}
