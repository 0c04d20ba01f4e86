use super::*;
use mcf_sfe::command::code;

#[test]
fn every_preset_is_named_and_described() {
    let presets = Firmware::presets();
    assert_eq!(presets.len(), PRESETS.len());
    for (firmware, (name, description)) in presets.iter().zip(PRESETS) {
        assert_eq!(firmware.name, name);
        assert!(!description.is_empty());
        assert!(firmware.validate().is_ok(), "{name}");
    }
    assert_eq!(Firmware::named("reference"), Some(Firmware::reference()));
    assert_eq!(Firmware::default(), Firmware::reference());
    assert_eq!(Firmware::named("Reference"), None);
    assert_eq!(Firmware::named("nope"), None);
}

/// Together, the presets use every value of every knob at least once, so that a host tested
/// against all of them has met every difference the evidence shows.
#[test]
fn the_presets_cover_every_knob_value() {
    let p = Firmware::presets();
    let has = |check: &dyn Fn(&Firmware) -> bool| p.iter().any(check);
    for layout in [
        C1hLayout::Fields30,
        C1hLayout::Fields27,
        C1hLayout::Fields11,
        C1hLayout::Fields10,
    ] {
        assert!(has(&|f| f.c1h_layout == layout), "{layout:?}");
    }
    for currency in [
        CurrencyBlock::Reference,
        CurrencyBlock::CdfWhenNoRate,
        CurrencyBlock::UsdTwoDecimals,
    ] {
        assert!(
            has(&|f| f.currency == currency && f.c1h_layout == C1hLayout::Fields30),
            "{currency:?}"
        );
    }
    for untaxed in [UntaxedRate::Empty, UntaxedRate::Zero] {
        assert!(has(&|f| f.untaxed_rate == untaxed), "{untaxed:?}");
    }
    for layout in [C2hLayout::Fields5, C2hLayout::Fields4Idle] {
        assert!(has(&|f| f.c2h_layout == layout), "{layout:?}");
    }
    for form in [TaxpayerReply::KeyValue, TaxpayerReply::ValueOnly] {
        assert!(has(&|f| f.taxpayer == form), "{form:?}");
    }
    for mcur in [Mcur::Reference, Mcur::Empty, Mcur::Zero, Mcur::Always] {
        assert!(has(&|f| f.mcur == mcur), "{mcur:?}");
    }
    for form in [
        CertificationForm::Prefixed,
        CertificationForm::SpacedPrefix,
        CertificationForm::Bare,
        CertificationForm::BareWithoutFn,
    ] {
        assert!(has(&|f| f.certification == form), "{form:?}");
    }
    for mode in [SlowReply::Syn, SlowReply::Silent, SlowReply::Pending] {
        assert!(
            has(&|f| f.credit_note.is_some_and(|c| c.reply == mode)),
            "{mode:?}"
        );
    }
    assert!(has(&|f| f.credit_note.is_none()));
    assert!(has(&|f| f.slow_commands.as_ref().is_some_and(|s| s.silent)));
    assert!(has(&|f| f.slow_commands.is_none()));
    assert!(has(&|f| f.syn == SynPace::Configured));
    assert!(has(&|f| f.syn == SynPace::Never));
    assert!(has(
        &|f| matches!(f.syn, SynPace::Every(i) if i > Duration::from_millis(500))
    ));
    assert!(has(&|f| f.seq_replay) && has(&|f| !f.seq_replay));
    for form in [
        RefusalForm::English,
        RefusalForm::French,
        RefusalForm::FrenchWindows1252,
        RefusalForm::StatusBit,
    ] {
        assert!(has(&|f| f.refusals == form), "{form:?}");
    }
    for status in [StatusBytes::Simulator, StatusBytes::RealIdle] {
        assert!(has(&|f| f.status == status), "{status:?}");
    }
    for breaks in [LineBreaks::Protocol, LineBreaks::Swapped] {
        assert!(has(&|f| f.line_breaks == breaks), "{breaks:?}");
    }
}

#[test]
fn scaling_time_scales_every_duration_of_the_profile() {
    let silent = Firmware::named("silent").unwrap().scale_time(20);
    assert_eq!(
        silent.credit_note.map(|c| c.duration),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        silent.slow_commands.map(|s| s.duration),
        Some(Duration::from_millis(300))
    );
    let slow = Firmware::named("slow-syn").unwrap().scale_time(50);
    assert_eq!(slow.syn, SynPace::Every(Duration::from_millis(350)));
    assert_eq!(Firmware::reference().scale_time(10), Firmware::reference());
}

#[test]
fn a_profile_credit_note_wins_over_the_device_timing() {
    let base = Timing::default();
    assert_eq!(Firmware::reference().timing(base), base);
    let usd = Firmware::named("usd-currency").unwrap().timing(base);
    assert_eq!(usd.credit_note_reply, SlowReply::Pending);
    assert_eq!(usd.credit_note, Duration::from_secs(2));
    assert_eq!(usd.command, base.command);
    let too_long = Firmware {
        syn: SynPace::Every(MAX_TIMING + Duration::from_secs(1)),
        ..Firmware::reference()
    };
    assert!(too_long.validate().is_err());
}

#[test]
fn slow_commands_take_their_time_silently_or_not() {
    let silent = Firmware::named("silent").unwrap();
    let ms = Duration::from_millis;
    assert_eq!(
        silent.pace(code::SUBTOTAL, ms(20), false),
        (ms(1_500), true)
    );
    assert_eq!(silent.pace(code::ITEM, ms(20), false), (ms(20), false));
    let slow = Firmware::named("slow-syn").unwrap();
    assert_eq!(slow.pace(code::SUBTOTAL, ms(20), false), (ms(1_500), false));
    assert_eq!(slow.syn_interval(ms(60)), Some(ms(700)));
    assert_eq!(silent.syn_interval(ms(60)), None);
    assert_eq!(Firmware::reference().syn_interval(ms(60)), Some(ms(60)));
}

#[test]
fn status_bytes() {
    let open = Status::with(&[StatusFlag::InvoiceOpen, StatusFlag::ClientSet]);
    let refused = Status::with(&[StatusFlag::CommandRefused]);
    let reference = Firmware::reference();
    assert_eq!(reference.status(open, false), open);
    assert_eq!(reference.status(Status::default(), true), Status::default());
    let silent = Firmware::named("silent").unwrap();
    assert_eq!(silent.status(open, false).0, REAL_IDLE_STATUS);
    assert_eq!(silent.status(refused, true).0, REAL_IDLE_STATUS);
    let bit = Firmware::named("c1h-11").unwrap();
    assert_eq!(bit.status(Status::default(), true), refused);
    let both = Firmware {
        refusals: RefusalForm::StatusBit,
        ..silent
    };
    assert_eq!(
        both.status(open, true).0,
        [0xC2, 0x80, 0xC0, 0x80, 0xC0, 0xD8]
    );
}

#[test]
fn texts_follow_the_refusal_language() {
    let refusal = Refusal::InvoiceAlreadyOpen;
    assert_eq!(
        Firmware::reference().text(Text::Refusal(&refusal)),
        "invoice already open"
    );
    assert_eq!(
        Firmware::named("cdf-currency")
            .unwrap()
            .text(Text::Refusal(&refusal)),
        "facture déjà ouverte"
    );
    assert_eq!(
        Firmware::named("silent").unwrap().text(Text::FaultInjected),
        "défaut injecté : commande non exécutée"
    );
    let reference = Firmware::reference();
    assert_eq!(
        reference.text(Text::UnknownCommand(0x15)),
        "unknown command 0x15"
    );
    assert_eq!(reference.text(Text::Syntax("x")), "syntax: x");
    assert_eq!(
        reference.text(Text::FaultInjected),
        "fault injected: command not executed"
    );
}
