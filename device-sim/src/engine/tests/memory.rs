//! The fiscal memory file as the engine uses it: reopen, write failure, capacity.

use super::*;

#[test]
fn counters_survive_a_reopen_of_the_same_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("emcf-sim.json");
    let config = DeviceConfig {
        state_file: Some(path.clone()),
        ..config()
    };
    let first = {
        let mut engine = Engine::open(config.clone()).unwrap();
        let first = sell(&mut engine, "F-1");
        // Committed to disk before the reply was produced.
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains(&first.code_def));
        sell(&mut engine, "F-2");
        // An open invoice is lost by a power cut.
        send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-3"));
        first
    };
    let other_identity = DeviceConfig {
        nim: "SIM0000099".into(),
        ..config
    };
    let mut engine = Engine::open(other_identity).unwrap();
    assert!(!engine.status().has(StatusFlag::InvoiceOpen));
    let state = device_state(&mut engine);
    assert_eq!(
        (state.mid.as_str(), state.tc, state.fvc),
        ("SIM0000001", 2, 2)
    );
    assert_eq!(state.last.invoice().map(|l| l.rn.as_str()), Some("F-2"));
    let third = sell(&mut engine, "F-3");
    assert_eq!(
        (third.tc, third.fc, third.mid.as_str()),
        (3, 3, "SIM0000001")
    );
    // The reopened memory still knows the first invoice as an original.
    assert_eq!(
        send(
            &mut engine,
            &credit(InvoiceType::Fa, "A-1", &first.code_def)
        ),
        Reply::Done
    );
}

#[test]
fn a_failed_fiscal_memory_write_refuses_and_keeps_the_invoice_open() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let config = DeviceConfig {
        state_file: Some(sub.join("emcf-sim.json")),
        ..config()
    };
    let mut engine = Engine::open(config).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    send(&mut engine, &stylo());
    send(&mut engine, &Command::Subtotal);
    send(&mut engine, &pay(dec!(1200.00)));
    std::fs::remove_dir_all(&sub).unwrap();
    let totals = finalize(dec!(1200.00), dec!(165.52));
    let (reply, handled) = send_at(&mut engine, &totals, Instant::now());
    let Reply::Refused(text) = reply else {
        panic!("{reply:?}")
    };
    assert!(text.starts_with("fiscal memory write failed"), "{text}");
    assert_eq!(handled.finalized, None);
    assert!(handled.status.has(StatusFlag::InvoiceOpen));
    assert_eq!(engine.memory().tc(), 0);
    std::fs::create_dir(&sub).unwrap();
    assert_eq!(certified(send(&mut engine, &totals)).tc, 1);
}

#[test]
fn a_full_fiscal_memory_refuses_new_invoices() {
    let config = DeviceConfig {
        memory_capacity: 1,
        ..config()
    };
    let mut engine = Engine::open(config).unwrap();
    assert!(!engine.status().has(StatusFlag::FiscalMemoryNearlyFull));
    sell(&mut engine, "F-1");
    let status = engine.status();
    assert!(
        status.has(StatusFlag::FiscalMemoryNearlyFull) && status.has(StatusFlag::FiscalMemoryFull)
    );
    let text = refused(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-2"));
    assert_eq!(text, "fiscal memory full");
}
