//! Malformed and unknown commands, and arbitrary bytes.

use super::*;

#[test]
fn malformed_data_is_a_syntax_error() {
    let mut engine = Engine::open(config()).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    let before = engine.machine().clone();
    let handled = engine.handle(
        code::ITEM,
        b"STYLO\tBIE,B16.00%abc\t600.00",
        clock(),
        Instant::now(),
    );
    let text = String::from_utf8(handled.reply).unwrap();
    assert!(text.starts_with("E:syntax: "), "{text}");
    assert!(handled.status.has(StatusFlag::SyntaxError));
    assert!(handled.status.has(StatusFlag::CommandRefused));
    assert_eq!(engine.machine(), &before);
    let handled = engine.handle(code::FINALIZE, b"1200.00", clock(), Instant::now());
    assert!(handled.reply.starts_with(b"E:syntax: "));
    let handled = engine.handle(code::DEVICE_STATE, b"", clock(), Instant::now());
    assert!(!handled.status.has(StatusFlag::SyntaxError));
    assert!(!handled.status.has(StatusFlag::CommandRefused));
}

#[test]
fn an_unknown_command_is_refused() {
    let mut engine = Engine::open(config()).unwrap();
    let handled = engine.handle(0x99, b"", clock(), Instant::now());
    assert_eq!(handled.reply, b"E:unknown command 0x99");
    assert!(handled.status.has(StatusFlag::CommandRefused));
    assert!(!handled.status.has(StatusFlag::SyntaxError));
}

#[test]
fn handle_never_panics_and_replies_always_fit() {
    let mut engine = Engine::open(config()).unwrap();
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let valid: Vec<(u8, Vec<u8>)> = [
        open(InvoiceType::Fv, PriceMode::Ttc, "F-1"),
        stylo(),
        Command::Subtotal,
        pay(dec!(1200.00)),
        finalize(dec!(1200.00), dec!(165.52)),
        credit(InvoiceType::Ea, "A-1", "AAAAAAAAAAAAAAAAAAAAAAAA"),
    ]
    .iter()
    .map(|c| (c.code(), c.encode().unwrap()))
    .collect();
    let alphabet = b"0123456789.,-*;%\t\nTEBCRAFV^x&;E:";
    for round in 0..20_000 {
        let r = next();
        let (cmd, mut data) = valid[(r % valid.len() as u64) as usize].clone();
        let cmd = if round % 7 == 0 { (r >> 8) as u8 } else { cmd };
        let edits = (r >> 16) % 4;
        for _ in 0..edits {
            let r = next();
            let at = (r as usize) % (data.len() + 1);
            match r % 3 {
                0 if at < data.len() => data[at] = (r >> 32) as u8,
                1 => data.insert(at, alphabet[((r >> 40) as usize) % alphabet.len()]),
                _ => data.truncate(at),
            }
        }
        let handled = engine.handle(cmd, &data, clock(), Instant::now());
        assert!(handled.reply.len() <= MAX_REPLY_DATA);
        assert!(handled.status.0.iter().all(|b| b & 0x80 != 0));
    }
    // Extreme values parse but must not overflow the arithmetic.
    engine.handle(code::FINALIZE, b"C", clock(), Instant::now());
    send(
        &mut engine,
        &open(InvoiceType::Fv, PriceMode::Ttc, "F-HUGE"),
    );
    let huge = format!("X\tBIE,E0.00%{m}\t{m}", m = Decimal::MAX);
    let first = engine.handle(code::ITEM, huge.as_bytes(), clock(), Instant::now());
    assert_eq!(first.reply, b"");
    let second = engine.handle(code::ITEM, huge.as_bytes(), clock(), Instant::now());
    assert_eq!(second.reply, b"E:amount out of range");
}

#[test]
fn a_c1h_too_long_for_a_frame_leaves_out_the_currency_not_the_last_invoice() {
    let rates = config().rates;
    let state = DeviceState {
        mid: "SIM0000001".into(),
        nif: "A1234567B".into(),
        clock: Some(clock()),
        tc: 999_999,
        fvc: 999_998,
        frc: 1,
        last: mcf_sfe::reply::Last::Invoice(mcf_sfe::reply::LastInvoice {
            at: clock().with_nanosecond(0).unwrap(),
            invoice_type: InvoiceType::Ev,
            code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
            rn: "R".repeat(mcf_sfe::command::MAX_RN_LEN),
            amount: Some(dec!(1234567890123456789012.00)),
        }),
        rates: Some(rates.map(mcf_sfe::reply::GroupRate::from)),
        currency: Some(CurrencyInfo::usd(dec!(2850.1234), clock().date())),
    };
    let reply = Reply::DeviceState(state.clone());
    let full = reply.encode(code::DEVICE_STATE);
    assert!(full.is_err(), "fits: {:?}", full.map(|d| d.len()));
    let (data, refused) = encode(code::DEVICE_STATE, &reply, &Firmware::reference());
    assert!(!refused);
    let Ok(Reply::DeviceState(sent)) = Reply::parse(code::DEVICE_STATE, &data) else {
        panic!("{}", String::from_utf8_lossy(&data))
    };
    assert_eq!(sent.currency, None);
    assert_eq!(sent.last, state.last);
}

#[test]
fn a_refusal_text_too_long_for_a_frame_is_cut_at_a_character() {
    let data = refusal(code::ITEM, &"é,".repeat(200));
    assert!(data.len() <= MAX_REPLY_DATA);
    assert!(data.starts_with(b"E:"));
    let Ok(Reply::Refused(text)) = Reply::parse(code::ITEM, &data) else {
        panic!()
    };
    assert!(text.starts_with("é,é,"));
    assert_eq!(refusal(code::ITEM, "tab\there"), b"E:tab here");
}

#[test]
fn a_negative_zero_amount_is_a_plain_zero() {
    let mut engine = Engine::open(config()).unwrap();
    send(&mut engine, &open(InvoiceType::Fv, PriceMode::Ttc, "F-1"));
    // "-0.00" parses as zero: a free item, whatever the sign written.
    for data in [
        &b"X\tBIE,B16.00%-0.00\t-0.00"[..],
        b"X\tBIE,B16.00%-0.00\t0.00",
    ] {
        let free = engine.handle(code::ITEM, data, clock(), Instant::now());
        assert_eq!(free.reply, b"");
    }
    let sub = engine.handle(code::SUBTOTAL, b"", clock(), Instant::now());
    let text = String::from_utf8(sub.reply).unwrap();
    assert!(!text.contains('-'), "{text}");
}
