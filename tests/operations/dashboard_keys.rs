//! Disabling an API key from the dashboard cuts off the tills using it at once (issue 13): it
//! is asked first (a page naming the key and its label, Confirm / Cancel) and done only by
//! that page's form, with the session's CSRF token and a same-origin request. Enabling stays
//! one click.

use crate::common;

use common::*;

/// The public id of an API key (`mcf_live_` + 12 characters).
fn key_id(key: &str) -> &str {
    &key[9..21]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabling_a_key_is_asked_then_confirmed() {
    let setup = ApiSetup::start(None).await;
    let addr = setup.addr();
    let token = issue_dashboard_token(&setup.gateway, "acme");
    let (session, csrf) = dashboard_sign_in(addr, &token).await;
    let cookie = format!("emcf_session={session}");
    let id = key_id(&setup.key).to_string();
    let certifies = |rn: &'static str| {
        let key = setup.key.clone();
        async move { post_invoice(addr, &key, &invoice(rn)).await.status }
    };

    // The keys page only asks: its Disable button is a GET to the confirmation.
    let keys = dashboard_get(addr, Some(&session), "/dashboard/keys").await;
    assert!(
        keys.body.contains(&format!(
            "<form method=\"get\" action=\"/dashboard/keys/disable\" class=\"inline\">\
             <input type=\"hidden\" name=\"id\" value=\"{id}\">"
        )),
        "{}",
        keys.body
    );
    // The former one-click form leads to the confirmation too, and disables nothing.
    let old = dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/keys/toggle",
        &[("csrf", &csrf), ("id", &id), ("enabled", "false")],
        &[],
    )
    .await;
    assert_eq!(old.status, 303, "{}", old.body);
    let confirm_path = format!("/dashboard/keys/disable?id={id}");
    assert_eq!(old.header("location"), Some(confirm_path.as_str()));
    assert_eq!(certifies("K-1").await, 200, "asking disables nothing");

    // The question names the key; Confirm is a POST form with the CSRF token; Cancel goes
    // back to the keys, which stay as they were.
    let confirm = dashboard_get(addr, Some(&session), &confirm_path).await;
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    for text in [
        format!("Désactiver la clé {id}\u{a0}?"),
        "seront refusées aussitôt".to_string(),
        "<form method=\"post\" action=\"/dashboard/keys/disable\"".to_string(),
        format!("name=\"csrf\" value=\"{csrf}\""),
        "<a href=\"/dashboard/keys\" class=\"button\" id=\"cancel\">Annuler</a>".to_string(),
    ] {
        assert!(confirm.body.contains(&text), "{text}: {}", confirm.body);
    }
    let english = request(
        addr,
        "GET",
        &confirm_path,
        &[("Cookie", &cookie), ("Accept-Language", "en")],
        None,
    )
    .await;
    assert!(
        english.body.contains(&format!(
            "Disable key {id}? The tills using it will be refused at once."
        )),
        "{}",
        english.body
    );
    let keys = dashboard_get(addr, Some(&session), "/dashboard/keys").await;
    assert!(
        keys.body.contains("class=\"enabled\">oui</td>"),
        "{}",
        keys.body
    );

    // The confirmation's form is checked like every other: token and origin.
    let disable = |csrf: String, extra: Vec<(&'static str, &'static str)>| {
        let (cookie, id) = (cookie.clone(), id.clone());
        async move {
            let fields = [("csrf", csrf.as_str()), ("id", id.as_str())];
            dashboard_post(
                addr,
                Some(&cookie),
                "/dashboard/keys/disable",
                &fields,
                &extra,
            )
            .await
        }
    };
    for (bad, extra) in [
        (String::new(), vec![]),
        ("0".repeat(64), vec![]),
        (csrf.clone(), vec![("Origin", "http://evil.example")]),
    ] {
        assert_eq!(disable(bad, extra).await.status, 403);
    }
    assert_eq!(certifies("K-2").await, 200);

    // Confirmed: disabled at once (401), said so; asking again says it already is.
    let done = disable(csrf.clone(), vec![]).await;
    assert_eq!(done.status, 303, "{}", done.body);
    let location = format!("/dashboard/keys?disabled={id}");
    assert_eq!(done.header("location"), Some(location.as_str()));
    assert_eq!(certifies("K-3").await, 401);
    let keys = dashboard_get(addr, Some(&session), &location).await;
    assert!(
        keys.body.contains(&format!("La clé {id} est désactivée")),
        "{}",
        keys.body
    );
    let again = dashboard_get(addr, Some(&session), &confirm_path).await;
    assert!(again.body.contains("déjà désactivée"), "{}", again.body);

    // Enabling is one click.
    let enabled = dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/keys/toggle",
        &[("csrf", &csrf), ("id", &id), ("enabled", "true")],
        &[],
    )
    .await;
    assert_eq!(enabled.status, 303);
    assert_eq!(certifies("K-3").await, 200);

    // A label is named in the question, escaped.
    let issued = dashboard_post(
        addr,
        Some(&cookie),
        "/dashboard/keys",
        &[
            ("csrf", &csrf),
            ("environment", "sandbox"),
            ("label", "<b>caisse 2</b>"),
        ],
        &[],
    )
    .await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let marker = "id=\"new-key\">";
    let at = issued.body.find(marker).expect("the new key") + marker.len();
    let new_id = &issued.body[at + 9..at + 21];
    let confirm = dashboard_get(
        addr,
        Some(&session),
        &format!("/dashboard/keys/disable?id={new_id}"),
    )
    .await;
    assert!(
        confirm
            .body
            .contains(&format!("{new_id} (&lt;b&gt;caisse 2&lt;/b&gt;)\u{a0}?"))
            && !confirm.body.contains("<b>caisse"),
        "{}",
        confirm.body
    );
}
