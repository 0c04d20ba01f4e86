use super::*;

fn patch(json: &str) -> Result<FaultPatch, FaultPatchError> {
    FaultPatch::from_json(json.as_bytes())
}

#[test]
fn a_patch_changes_only_what_it_names() {
    let mut faults = EdefFaults {
        latency_ms: 5,
        reset_next: 2,
        ..EdefFaults::default()
    };
    patch(r#"{"fail_next_5xx": 3, "token_expired": true}"#)
        .unwrap()
        .apply(&mut faults);
    assert_eq!(faults.latency_ms, 5);
    assert_eq!(faults.reset_next, 2);
    assert_eq!(faults.fail_next_5xx, 3);
    assert!(faults.token_expired);
}

#[test]
fn counts_take_true_false_or_a_number_and_on_off_faults_true_or_false() {
    let read = patch(
        r#"{"drop_next_confirm_answer": true, "reset_next": false, "fail_next_5xx": 1,
            "expire_next_request": 3, "errors_on_200": false, "latency_ms": 0}"#,
    )
    .unwrap();
    assert_eq!(read.drop_next_confirm_answer, Some(1));
    assert_eq!(read.reset_next, Some(0));
    assert_eq!(read.fail_next_5xx, Some(1));
    assert_eq!(read.expire_next_request, Some(3));
    assert_eq!(read.errors_on_200, Some(false));
    assert_eq!(read.latency_ms, Some(0));
    assert_eq!(read.token_expired, None);
    for refused in [
        r#"{"token_expired": 1}"#,
        r#"{"token_expired": "true"}"#,
        r#"{"drop_next_confirm_answer": -1}"#,
        r#"{"drop_next_confirm_answer": 1.5}"#,
        r#"{"drop_next_confirm_answer": "yes"}"#,
        r#"{"drop_next_confirm_answer": null}"#,
        r#"{"fail_next_5xx": 4294967296}"#,
        r#"{"latency_ms": 600001}"#,
        r#"{"latency_ms": true}"#,
    ] {
        assert!(
            matches!(patch(refused), Err(FaultPatchError::BadValue { .. })),
            "{refused}"
        );
    }
}

#[test]
fn every_fault_is_listed_with_a_kind_that_fits_its_field() {
    // The JSON form of the faults has one member per field: each is in EDEF_FAULTS, in the
    // same order, with a kind whose values are of the field's JSON type.
    let members = serde_json::to_value(EdefFaults::default()).unwrap();
    let members = members.as_object().unwrap();
    let listed: Vec<&str> = EDEF_FAULTS.faults.iter().map(|f| f.name).collect();
    let fields: Vec<&str> = members.keys().map(String::as_str).collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, fields, "EDEF_FAULTS and EdefFaults differ");
    for fault in EDEF_FAULTS.faults {
        let boolean = matches!(fault.kind, FaultKind::OnOff | FaultKind::OneShot);
        assert_eq!(members[fault.name].is_boolean(), boolean, "{}", fault.name);
        // Its example is accepted and sets it.
        let read = patch(&fault.json_example()).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(read, FaultPatch::default(), "{}", fault.name);
    }
}

#[test]
fn a_wrong_body_is_refused_in_french_naming_the_fault_what_it_takes_and_an_example() {
    let refusal = patch(r#"{"drop_next_confirm_answer": "yes"}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        refusal,
        "valeur refusée pour la panne simulée drop_next_confirm_answer\u{a0}: «\u{a0}\"yes\"\u{a0}»\u{a0}; \
         elle prend true (la prochaine fois), false (inactive) ou un nombre entier N (les N prochaines \
         fois), par exemple {\"drop_next_confirm_answer\": true}"
    );
    let refusal = patch(r#"{"token_expired": 2}"#).unwrap_err().to_string();
    assert!(
        refusal.contains("token_expired\u{a0}: «\u{a0}2\u{a0}»"),
        "{refusal}"
    );
    assert!(
        refusal.contains("true (active) ou false (inactive)"),
        "{refusal}"
    );
    assert!(refusal.contains(r#"{"token_expired": true}"#), "{refusal}");

    let unknown = patch(r#"{"reset": 1}"#).unwrap_err();
    assert_eq!(unknown, FaultPatchError::Unknown("reset".to_owned()));
    let unknown = unknown.to_string();
    assert!(
        unknown.starts_with("panne simulée inconnue\u{a0}: «\u{a0}reset\u{a0}»\u{a0}; les pannes simulées sont\u{a0}: "),
        "{unknown}"
    );
    assert!(!unknown.contains("faute"), "{unknown}");
    assert!(unknown.contains("drop_next_confirm_answer, drop_next_request_answer"));

    assert_eq!(patch("  "), Err(FaultPatchError::Empty));
    assert_eq!(patch("[1]"), Err(FaultPatchError::NotAnObject));
    let cut = patch("{\"token_expired\": tr").unwrap_err();
    assert_eq!(
        cut,
        FaultPatchError::NotJson {
            line: 1,
            column: 20
        }
    );
    assert!(cut.to_string().contains("(ligne 1, colonne 20)"), "{cut}");
    // Never the parser's English.
    for text in [cut.to_string(), patch("[1]").unwrap_err().to_string()] {
        assert!(
            !text.contains("EOF") && !text.contains("expected"),
            "{text}"
        );
    }
    let long = format!(r#"{{"{}": 1}}"#, "x".repeat(100));
    assert!(patch(&long)
        .unwrap_err()
        .to_string()
        .contains(&format!("{}…", "x".repeat(40))));
}

#[test]
fn a_refused_patch_changes_nothing() {
    let state = Arc::new(Mutex::new(EmcfState::default()));
    let handle = FaultHandle::new(EdefFaults::default(), state);
    let body = br#"{"token_expired": true, "latency_ms": "fast"}"#;
    assert!(FaultPatch::from_json(body).is_err());
    assert_eq!(handle.get(), EdefFaults::default());
}

#[test]
fn counters_count_down_and_expiry_is_one_shot() {
    let state = Arc::new(Mutex::new(EmcfState::default()));
    let handle = FaultHandle::new(
        EdefFaults {
            reset_next: 1,
            expire_all_pending: true,
            ..EdefFaults::default()
        },
        state,
    );
    assert!(!handle.get().expire_all_pending);
    assert!(handle.take_reset());
    assert!(!handle.take_reset());
    assert!(!handle.take_5xx());
    let after = handle.update(|f| f.drop_next_confirm_answer = 1);
    assert_eq!(after.drop_next_confirm_answer, 1);
    assert!(handle.take_drop_confirm());
    assert!(!handle.take_drop_confirm());
    let two = patch(r#"{"expire_next_request": 2}"#).unwrap();
    assert_eq!(handle.apply(&two).expire_next_request, 2);
    assert!(handle.take_expire_request());
    assert!(handle.take_expire_request());
    assert!(!handle.take_expire_request());
    assert_eq!(
        handle.apply(&patch(r#"{"drop_next_confirm_answer": true}"#).unwrap()),
        EdefFaults {
            drop_next_confirm_answer: 1,
            ..EdefFaults::default()
        }
    );
    assert!(handle.take_drop_confirm());
    assert!(!handle.take_drop_confirm());
    assert_eq!(
        EdefFaults {
            latency_ms: u64::MAX,
            ..EdefFaults::default()
        }
        .latency(),
        MAX_LATENCY
    );
    assert_eq!(
        Duration::from_millis(MAX_LATENCY_MS),
        MAX_LATENCY,
        "latency_ms takes what the simulator applies"
    );
}
