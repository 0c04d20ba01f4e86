use super::*;
use rust_decimal_macros::dec;

fn at(minute: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 21)
        .and_then(|d| d.and_hms_opt(14, minute, 0))
        .unwrap()
}

fn sale(rn: &str) -> NewInvoice {
    NewInvoice {
        invoice_type: InvoiceType::Fv,
        rn: rn.into(),
        at: at(0),
        total: dec!(1200.00),
        vat: dec!(165.52),
        reference: None,
        usd_rate: None,
    }
}

fn credit_note(rn: &str, original: &str) -> NewInvoice {
    NewInvoice {
        invoice_type: InvoiceType::Fa,
        reference: Some(original.into()),
        ..sale(rn)
    }
}

#[test]
fn commits_count_per_kind_and_are_found_by_code() {
    let mut memory = FiscalMemory::open(None, "SIM0000001", "A1234567B", 10).unwrap();
    let first = memory.commit(sale("F-1"), "key").unwrap();
    let second = memory.commit(sale("F-2"), "key").unwrap();
    let refund = memory
        .commit(credit_note("A-1", &first.code_def), "key")
        .unwrap();
    assert_eq!((first.tc, first.fc), (1, 1));
    assert_eq!((second.tc, second.fc), (2, 2));
    assert_eq!((refund.tc, refund.fc), (3, 1));
    assert_eq!((memory.tc(), memory.fvc(), memory.frc()), (3, 2, 1));
    assert_ne!(first.code_def, second.code_def);
    assert_eq!(memory.find(&first.code_def), Some(&first));
    assert_eq!(memory.last(), Some(&refund));
    assert_eq!(memory.find("AAAAAAAAAAAAAAAAAAAAAAAA"), None);
}

#[test]
fn capacity_limits_commits_and_drives_the_full_flags() {
    let mut memory = FiscalMemory::open(None, "SIM0000001", "A1234567B", 20).unwrap();
    for i in 0..18 {
        assert!(!memory.is_nearly_full(), "nearly full after {i}");
        memory.commit(sale(&format!("F-{i}")), "key").unwrap();
    }
    assert!(!memory.is_nearly_full());
    memory.commit(sale("F-19"), "key").unwrap(); // 19 of 20 = 95 %
    assert!(memory.is_nearly_full() && !memory.is_full());
    memory.commit(sale("F-20"), "key").unwrap();
    assert!(memory.is_full());
    assert!(matches!(
        memory.commit(sale("F-21"), "key"),
        Err(SimError::MemoryFull { capacity: 20 })
    ));
    assert_eq!(memory.tc(), 20);
}

#[test]
fn the_file_survives_a_reopen_and_keeps_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fiscal.json");
    let code = {
        let mut memory = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10).unwrap();
        assert!(path.exists(), "created at open");
        let mut usd = sale("E-1");
        usd.invoice_type = InvoiceType::Ev;
        usd.usd_rate = Some(UsdRate {
            rate: dec!(2850.5),
            date: at(0).date(),
        });
        memory.commit(sale("F-1"), "key").unwrap();
        memory.commit(usd, "key").unwrap().code_def
    };
    // Another configuration: the file's identity wins, the counters go on.
    let mut memory = FiscalMemory::open(Some(&path), "SIM9999999", "Z9999999Z", 10).unwrap();
    assert_eq!((memory.nim(), memory.nif()), ("SIM0000001", "A1234567B"));
    assert_eq!((memory.tc(), memory.fvc(), memory.frc()), (2, 2, 0));
    assert_eq!(memory.currency().map(|c| c.rate), Some(dec!(2850.5)));
    assert!(memory.find(&code).is_some());
    let third = memory.commit(credit_note("A-1", &code), "key").unwrap();
    assert_eq!((third.tc, third.fc), (3, 1));
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    assert!(
        !Path::new(&tmp).exists(),
        "the temporary file is renamed away"
    );
    let invoices = memory.invoices().to_vec();
    drop(memory);
    let reopened = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10).unwrap();
    assert_eq!(reopened.invoices(), invoices);
}

#[test]
fn a_failed_write_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("fiscal.json");
    fs::create_dir(dir.path().join("sub")).unwrap();
    let mut memory = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10).unwrap();
    memory.commit(sale("F-1"), "key").unwrap();
    fs::remove_dir_all(dir.path().join("sub")).unwrap();
    assert!(matches!(
        memory.commit(sale("F-2"), "key"),
        Err(SimError::StateFile { .. })
    ));
    assert_eq!(
        (memory.tc(), memory.fvc(), memory.invoices().len()),
        (1, 1, 1)
    );
}

#[test]
fn corrupt_or_inconsistent_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fiscal.json");
    fs::write(&path, b"").unwrap();
    let open = || FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10);
    assert!(matches!(open(), Err(SimError::CorruptState { .. })));

    fs::remove_file(&path).unwrap();
    let mut memory = open().unwrap();
    memory.commit(sale("F-1"), "key").unwrap();
    drop(memory);
    let good = fs::read_to_string(&path).unwrap();
    for (from, to) in [
        ("\"tc\": 1,", "\"tc\": 2,"),
        ("\"fvc\": 1,", "\"fvc\": 0,"),
        ("\"format\": 1", "\"format\": 2"),
        ("\"type\": \"FV\"", "\"type\": \"XX\""),
        ("\"total\": \"1200.00\"", "\"total\": \"1200.001\""),
    ] {
        assert!(good.contains(from), "{from} not in {good}");
        fs::write(&path, good.replacen(from, to, 1)).unwrap();
        let error = open().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("is corrupt"), "{from} -> {to}: {error}");
    }
}

#[test]
fn an_unreadable_path_is_a_state_file_error() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be.
    let result = FiscalMemory::open(Some(dir.path()), "SIM0000001", "A1234567B", 10);
    assert!(matches!(result, Err(SimError::StateFile { .. })));
}

#[test]
fn one_fiscal_memory_file_serves_one_simulator_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let mut first = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10).unwrap();
    // A second simulator on the same file would number the same invoice twice.
    let second = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10);
    assert!(matches!(second, Err(SimError::InUse { .. })), "{second:?}");
    first.commit(sale("F-1"), "key").unwrap();
    drop(first);
    let reopened = FiscalMemory::open(Some(&path), "SIM0000001", "A1234567B", 10).unwrap();
    assert_eq!(reopened.tc(), 1);
}
