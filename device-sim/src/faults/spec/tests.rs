use super::*;
use crate::faults::{BOX_FAULTS, DROP_REPLIES, MAX_DELAY_MS, REFUSE_CMD, VANISH_AFTER};

/// The README beside the workspace's `Cargo.toml`.
fn readme_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")
}

const BEGIN: &str = "<!-- emcf-sim faults: begin";
const END: &str = "<!-- emcf-sim faults: end -->";

#[test]
fn the_readme_lists_every_fault_of_both_simulators_as_defined() {
    // The README's technician section holds `readme_tables()` between two markers;
    // `UPDATE_README=1 cargo test -p emcf-sim --lib readme` writes it there.
    let path = readme_path();
    let readme = std::fs::read_to_string(&path).unwrap();
    let begin = readme.find(BEGIN).expect("the README has the begin marker");
    let body = begin + readme[begin..].find("-->").expect("marker closed") + "-->\n".len();
    let end = readme.find(END).expect("the README has the end marker");
    let expected = format!("\n{}\n", readme_tables());
    if readme[body..end] != expected && std::env::var_os("UPDATE_README").is_some() {
        let updated = format!("{}{expected}{}", &readme[..body], &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        readme[body..end],
        expected,
        "the README's fault tables differ from BOX_FAULTS (faults.rs) and EDEF_FAULTS \
         (edef/faults.rs): UPDATE_README=1 cargo test -p emcf-sim --lib readme"
    );
}

#[test]
fn every_example_is_a_value_its_kind_takes() {
    for fault in BOX_FAULTS
        .faults
        .iter()
        .chain(crate::edef::EDEF_FAULTS.faults)
    {
        assert!(
            fault.kind.read_text(fault.example).is_some(),
            "{}: {}",
            fault.name,
            fault.example
        );
        assert!(
            !fault.what.is_empty() && fault.what.ends_with('.'),
            "{}",
            fault.name
        );
    }
    assert_eq!(
        std::time::Duration::from_millis(MAX_DELAY_MS),
        crate::config::MAX_TIMING
    );
}

#[test]
fn kinds_take_their_values_and_nothing_else() {
    use FaultValue::*;
    let read = |kind: FaultKind, text: &str| kind.read_text(text);
    assert_eq!(read(FaultKind::OnOff, "true"), Some(Bool(true)));
    assert_eq!(read(FaultKind::OnOff, "false"), Some(Bool(false)));
    assert_eq!(read(FaultKind::OnOff, "1"), None);
    assert_eq!(read(FaultKind::NextCount, "true"), Some(Whole(1)));
    assert_eq!(read(FaultKind::NextCount, "false"), Some(Whole(0)));
    assert_eq!(read(FaultKind::NextCount, "3"), Some(Whole(3)));
    assert_eq!(read(FaultKind::NextCount, "-1"), None);
    assert_eq!(read(FaultKind::NextCount, "4294967296"), None);
    assert_eq!(read(FaultKind::Count, "0"), Some(Whole(0)));
    assert_eq!(read(FaultKind::Count, "true"), None);
    assert_eq!(read(FaultKind::Ordinal, "0"), None);
    assert_eq!(read(FaultKind::Ordinal, "2"), Some(Whole(2)));
    let ms = FaultKind::Milliseconds { max: 10 };
    assert_eq!(read(ms, "10"), Some(Whole(10)));
    assert_eq!(read(ms, "11"), None);
    assert_eq!(
        read(FaultKind::Probability, "0.25"),
        Some(Probability(0.25))
    );
    for bad in ["1.5", "-0.1", "NaN", "inf", "x"] {
        assert_eq!(read(FaultKind::Probability, bad), None, "{bad}");
    }
    for good in ["C0", "0xC0", "C0h", "c0", "0XC0"] {
        assert_eq!(
            read(FaultKind::CommandCode, good),
            Some(Command(0xC0)),
            "{good}"
        );
    }
    for bad in ["", "h", "0x", "C00", "+C", "G1"] {
        assert_eq!(read(FaultKind::CommandCode, bad), None, "{bad}");
    }
    let json = |kind: FaultKind, text: &str| kind.read_json(&serde_json::from_str(text).unwrap());
    assert_eq!(json(FaultKind::NextCount, "true"), Some(Whole(1)));
    assert_eq!(json(FaultKind::NextCount, "2"), Some(Whole(2)));
    assert_eq!(json(FaultKind::NextCount, "\"2\""), None);
    assert_eq!(json(FaultKind::NextCount, "2.0"), None);
    assert_eq!(json(FaultKind::CommandCode, "\"C0\""), Some(Command(0xC0)));
    assert_eq!(json(FaultKind::OnOff, "null"), None);
}

#[test]
fn a_flag_refused_says_what_it_takes_with_an_example() {
    let parse = DROP_REPLIES.flag_parser::<f64>();
    assert_eq!(parse("0.5"), Ok(0.5));
    assert_eq!(
        parse("2"),
        Err("--drop-replies takes a probability: 0 to 1, e.g. --drop-replies 0.1".to_owned())
    );
    // A kind that does not fit the field's type refuses every value.
    assert!(DROP_REPLIES.flag_parser::<u32>()("0.5").is_err());
    assert_eq!(REFUSE_CMD.flag_parser::<u8>()("C0h"), Ok(0xC0));
    assert_eq!(VANISH_AFTER.flag_parser::<u64>()("5"), Ok(5));
}

#[test]
fn the_help_lists_every_fault_with_what_it_takes_and_an_example() {
    for list in [BOX_FAULTS, crate::edef::EDEF_FAULTS] {
        let help = list.help_text();
        for fault in list.faults {
            let heading = format!("\n  {} (", list.shown_name(fault));
            assert!(help.contains(&heading), "{}", fault.name);
            assert!(help.contains(&list.example(fault)), "{}", fault.name);
        }
        assert!(
            help.lines().all(|line| line.chars().count() <= 100),
            "{help}"
        );
    }
    assert_eq!(
        crate::edef::EDEF_FAULTS.example(&crate::edef::LATENCY_MS),
        r#"{"latency_ms": 250}"#
    );
    assert_eq!(BOX_FAULTS.example(&REFUSE_CMD), "--refuse-cmd C0");
}
