use super::*;

fn new(effective: NaiveDate) -> NewNotice {
    NewNotice {
        effective,
        subject: "Fin de la version 1 de l'API".into(),
        body: "La version 2 la remplace.\n".into(),
        retires: Some("v1".into()),
    }
}

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("day")
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("instant")
        .with_timezone(&Utc)
}

fn zone() -> FixedOffset {
    FixedOffset::east_opt(3600).expect("zone")
}

#[test]
fn thirty_full_days_before_the_effective_day_begins() {
    let refused_with =
        |now: &str, effective: &str| match check(&new(day(effective)), at(now), zone(), &["v1"]) {
            Err(NoticeError::TooSoon { earliest, .. }) => Some(earliest),
            Err(other) => panic!("{other}"),
            Ok(()) => None,
        };
    // Published 26/11 at 23:59 +01:00: 26/12 begins 29 days and 1 minute later.
    assert_eq!(
        refused_with("2026-11-26T23:59:00+01:00", "2026-12-26"),
        Some(day("2026-12-27"))
    );
    assert_eq!(
        refused_with("2026-11-26T23:59:00+01:00", "2026-12-27"),
        None
    );
    // Published at the first second of 26/11: 26/12 begins 30 days later exactly.
    assert_eq!(
        refused_with("2026-11-26T00:00:00+01:00", "2026-12-26"),
        None
    );
    assert_eq!(
        refused_with("2026-11-26T00:00:01+01:00", "2026-12-26"),
        Some(day("2026-12-27"))
    );
    assert_eq!(
        refused_with("2026-11-26T12:00:00+01:00", "2026-12-25"),
        Some(day("2026-12-27"))
    );
    // The configured zone's day, not UTC's: 25/11 at 23:30 UTC is 26/11 00:30 +01:00.
    assert_eq!(
        refused_with("2026-11-25T23:30:00Z", "2026-12-26"),
        Some(day("2026-12-27"))
    );
    // What is refused at `now` is what `Sunset` would name less than 30 days later.
    assert_eq!(
        day_start(day("2026-12-26"), zone()) - at("2026-11-26T00:00:00+01:00"),
        Duration::days(NOTICE_DAYS)
    );
    let now = at("2026-11-26T10:00:00+01:00");
    let mut unknown = new(day("2027-01-26"));
    unknown.retires = Some("v9".into());
    assert!(matches!(
        check(&unknown, now, zone(), &["v1"]),
        Err(NoticeError::UnknownVersion { .. })
    ));
    let mut two_lines = new(day("2027-01-26"));
    two_lines.subject = "a\nb".into();
    assert!(matches!(
        check(&two_lines, now, zone(), &["v1"]),
        Err(NoticeError::BadSubject)
    ));
}

#[test]
fn pending_e_mails_are_late_with_less_than_thirty_days_left() {
    let mut notice = Notice {
        id: 1,
        published_at: at("2026-11-26T10:00:00+01:00"),
        notice: new(day("2026-12-27")),
        recipients: BTreeSet::from(["acme".to_owned(), "bobo".to_owned()]),
        sent: BTreeMap::new(),
        given_up: BTreeSet::new(),
    };
    // 27/12 begins at 26/12 23:00 UTC: 30 days before is 26/11 23:00 UTC.
    assert!(!notice.late(at("2026-11-26T23:00:00Z"), zone()));
    assert!(notice.late(at("2026-11-26T23:00:01Z"), zone()));
    assert!(notice.late(at("2026-12-28T10:00:00Z"), zone()), "past");
    // Nothing pending: nothing late.
    notice
        .sent
        .insert("acme".into(), at("2026-11-27T10:00:00Z"));
    notice.given_up.insert("bobo".into());
    assert!(!notice.late(at("2026-12-20T10:00:00Z"), zone()));
}

#[test]
fn kept_across_a_reopen_and_e_mailed_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zone = FixedOffset::east_opt(3600).expect("zone");
    let notices = Notices::open(dir.path(), zone).expect("open");
    let effective = notices.today() + Duration::days(40);
    let orgs = BTreeSet::from(["acme".to_owned(), "bobo".to_owned()]);
    let notice = notices.add(new(effective), orgs, &["v1"]).expect("added");
    assert_eq!(notice.id, 1);
    notices.record(1, "acme", true).expect("recorded");
    let again = Notices::open(dir.path(), zone).expect("reopen");
    let read = again.get(1).expect("kept");
    assert_eq!(read.pending().collect::<Vec<_>>(), ["bobo"]);
    assert_eq!(again.shown().len(), 1);
    let headers = again.deprecation("v1").expect("retires v1");
    assert_eq!(
        headers.deprecation,
        format!("@{}", notice.published_at.timestamp())
    );
    // The effective day begins at 00:00 +01:00: 23:00 GMT the day before.
    let before = effective - Duration::days(1);
    assert_eq!(
        headers.sunset,
        format!("{} 23:00:00 GMT", before.format("%a, %d %b %Y"))
    );
    assert_eq!(
        headers.link(Some("https://f.example.cd/")),
        "<https://f.example.cd/notices/1>; rel=\"deprecation\"; type=\"text/html\", <https://f.example.cd/notices/1>; rel=\"sunset\"; type=\"text/html\""
    );
    assert!(again.deprecation("v2").is_none());
}

#[test]
fn a_send_the_file_could_not_keep_is_not_sent_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zone = FixedOffset::east_opt(3600).expect("zone");
    let notices = Notices::open(dir.path(), zone).expect("open");
    let effective = notices.today() + Duration::days(40);
    let orgs = BTreeSet::from(["acme".to_owned(), "bobo".to_owned()]);
    notices.add(new(effective), orgs, &["v1"]).expect("added");
    assert!(!notices.save_unsaved().expect("nothing to write"));
    // The file cannot be replaced (as on a full or read-only disk; a folder in its place
    // stops even root's rename).
    let file = dir.path().join(FILE);
    std::fs::remove_file(&file).expect("remove");
    std::fs::create_dir(&file).expect("folder in its place");
    assert!(matches!(
        notices.record(1, "acme", true),
        Err(NoticeError::File { .. })
    ));
    // This process knows it was sent: the next round does not send it again.
    let kept = notices.get(1).expect("notice");
    assert_eq!(kept.pending().collect::<Vec<_>>(), ["bobo"]);
    assert!(kept.sent.contains_key("acme"));
    assert!(notices.save_unsaved().is_err(), "still not writable");
    // Once the disk takes it again, the next round writes it.
    std::fs::remove_dir(&file).expect("folder removed");
    assert!(notices.save_unsaved().expect("written"));
    assert!(!notices.save_unsaved().expect("nothing left"));
    let again = Notices::open(dir.path(), zone).expect("reopen");
    let read = again.get(1).expect("kept");
    assert!(read.sent.contains_key("acme"));
    assert_eq!(read.pending().collect::<Vec<_>>(), ["bobo"]);
}

#[test]
fn a_damaged_file_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(FILE), b"{nope").expect("write");
    let zone = FixedOffset::east_opt(0).expect("zone");
    assert!(matches!(
        Notices::open(dir.path(), zone),
        Err(NoticeError::Damaged { .. })
    ));
}
