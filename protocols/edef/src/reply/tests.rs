use super::*;
use rust_decimal_macros::dec;

#[test]
fn a_calculation_is_read_with_its_groups() {
    let body = br#"{"uid":"0b6f","ta":0,"tb":16,"taa":0,"tab":116.00,"hab":100.00,"vab":16.00,
        "ts":0,"total":116.00,"vtotal":16.00,"errorCode":null,"errorDesc":null,"extra":[1,2]}"#;
    let read = Calculation::read(body).unwrap();
    let calc = read.outcome.unwrap();
    assert_eq!(calc.uid, "0b6f");
    assert_eq!(calc.rates[1], Some(dec!(16)));
    assert_eq!(calc.group_ttc[1], Some(dec!(116.00)));
    assert_eq!(calc.group_ht[1], Some(dec!(100.00)));
    assert_eq!(calc.group_vat[1], Some(dec!(16.00)));
    assert_eq!(calc.group_vat[2], None);
    assert_eq!((calc.total, calc.vat_total), (dec!(116.00), dec!(16.00)));
    assert!(read.anomalies.is_empty(), "{:?}", read.anomalies);
}

#[test]
fn an_error_code_on_a_2xx_is_a_refusal() {
    let body = br#"{"uid":null,"errorCode":"1","errorDesc":"Trop de demandes en attente"}"#;
    let read = Calculation::read(body).unwrap();
    assert_eq!(
        read.outcome,
        Err(DgiError {
            code: "1".into(),
            description: "Trop de demandes en attente".into()
        })
    );
    let numeric = Confirmation::read(br#"{"errorCode":20,"errorDesc":"x"}"#).unwrap();
    assert_eq!(numeric.outcome.unwrap_err().code, "20");
}

#[test]
fn a_confirmation_keeps_every_element_as_sent() {
    let body =
        br#"{"dateTime":"22/11/2025 17:29:24","qrCode":"F;CD01002923-1;ABC;A1;20251122172924",
        "codeDEFDGI":"ABCDEFGHIJKLMNOPQRSTUVWX","counters":"5/8 FV","nim":"CD01002923-1",
        "errorCode":null,"errorDesc":null}"#;
    let confirmation = Confirmation::read(body).unwrap().outcome.unwrap();
    assert_eq!(confirmation.date_time, "22/11/2025 17:29:24");
    assert_eq!(confirmation.counters, "5/8 FV");
    assert_eq!(confirmation.code_def, "ABCDEFGHIJKLMNOPQRSTUVWX");
}

#[test]
fn a_status_lists_the_pending_uids() {
    let body = br#"{"status":true,"version":"1.0","nif":"A1","nim":"CD01-1",
        "tokenValid":"2026-12-01T10:00:00Z","serverDateTime":"2026-11-23T10:00:00",
        "pendingRequestsCount":2,"pendingRequestsList":[{"date":"2026-11-23T09:59:00","uid":"u1"},{"uid":"u2"}]}"#;
    let status = EmcfStatus::read(body).unwrap().outcome.unwrap();
    assert_eq!(status.status, Some(true));
    assert_eq!(status.nim.as_deref(), Some("CD01-1"));
    let uids: Vec<&str> = status
        .pending
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| p.uid.as_str())
        .collect();
    assert_eq!(uids, ["u1", "u2"]);
    assert_eq!(status.token_valid, date_time("2026-12-01T10:00:00Z"));
}

#[test]
fn an_unreadable_token_date_is_noted_not_fatal() {
    let read = EmcfStatus::read(br#"{"tokenValid":"soon","pendingRequestsList":[]}"#).unwrap();
    assert_eq!(read.outcome.unwrap().token_valid, None);
    assert_eq!(read.anomalies[0].field, "tokenValid");
}

#[test]
fn rates_are_read_in_any_case() {
    let read = TaxRates::read(br#"{"a":0,"B":16,"c":"8","x":3,"version":"1"}"#).unwrap();
    let TaxRates(rates) = read.outcome.unwrap();
    assert_eq!(rates[0], Some(dec!(0)));
    assert_eq!(rates[1], Some(dec!(16)));
    assert_eq!(rates[2], Some(dec!(8)));
    assert_eq!(rates[3], None);
    assert_eq!(read.anomalies.len(), 2, "{:?}", read.anomalies);
}

#[test]
fn the_date_forms_seen_are_read() {
    let expected = chrono::NaiveDate::from_ymd_opt(2025, 11, 22)
        .unwrap()
        .and_hms_opt(17, 29, 24)
        .unwrap();
    for text in [
        "22/11/2025 17:29:24",
        "2025-11-22T17:29:24",
        "2025-11-22T17:29:24.000",
        "2025-11-22 17:29:24",
        "2025-11-22T17:29:24+01:00",
        "20251122172924",
    ] {
        assert_eq!(local_date_time(text), Some(expected), "{text}");
    }
    assert_eq!(local_date_time("22.11.2025"), None);
}

#[test]
fn fields_only_reported_never_fail_a_reply() {
    let status = EmcfStatus::read(
        br#"{"nim":{"x":1},"serverDateTime":[1],"tokenValid":false,"pendingRequestsList":[{"uid":"u1"}]}"#,
    )
    .unwrap();
    let fields: Vec<&str> = status.anomalies.iter().map(|a| a.field.as_str()).collect();
    assert_eq!(fields, ["tokenValid", "nim", "serverDateTime"]);
    let status = status.outcome.unwrap();
    assert_eq!((status.nim, status.server_date_time), (None, None));
    assert_eq!(status.pending.unwrap()[0].uid, "u1");

    let calc = Calculation::read(br#"{"uid":"u","tb":"seize","total":1,"vtotal":0}"#).unwrap();
    assert_eq!(calc.anomalies[0].field, "tb");
    assert_eq!(calc.outcome.unwrap().rates[1], None);
}
