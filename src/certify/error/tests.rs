use super::*;

#[test]
fn french_by_describe_english_by_display() {
    let quota = CertifyError::QuotaExhausted {
        used: 1000,
        quota: 1000,
        year: 2026,
    };
    assert_eq!(
        quota.describe(Lang::Fr),
        crate::i18n::nbsp(
            "le quota annuel de factures de cette organisation est atteint (1000 sur 1000 en \
         2026) ; demandez à l'opérateur de la passerelle la formule Grow ou un quota plus \
         grand"
        )
    );
    assert_eq!(
        quota.to_string(),
        "the annual invoice quota of this organization is reached (1000 of 1000 in 2026); \
         ask the gateway's operator for the Grow plan or a larger quota"
    );
    assert_eq!(
        CertifyError::Unauthorized(AuthFailure::Invalid).describe(Lang::Fr),
        "clé API invalide"
    );
}

#[test]
fn foreign_texts_are_passed_on_as_they_came() {
    let refused = CertifyError::DeviceRefused {
        text: "original invoice not found".into(),
    };
    // Quoted, and said to be the device's own words.
    assert_eq!(
        refused.describe(Lang::Fr),
        crate::i18n::nbsp(
            "le boîtier e-MCF a refusé la facture, avec ces mots à lui, cités tels quels : \
         « original invoice not found »"
        )
    );
    let dgi = CertifyError::DgiRefused {
        code: "11".into(),
        text: "Facture d'origine introuvable".into(),
    };
    assert_eq!(
        dgi.describe(Lang::Fr),
        crate::i18n::nbsp(
            "la DGI a refusé la facture : erreur DGI 11, avec ce texte de la DGI, cité tel \
             quel : « Facture d'origine introuvable »"
        )
    );
    assert_eq!(
        dgi.to_string(),
        "the DGI refused the invoice: DGI error 11, with this text of the DGI's, quoted as it \
         came: \"Facture d'origine introuvable\""
    );
}

#[test]
fn technical_details_stay_in_the_log_never_in_the_client_s_text() {
    let token = CertifyError::TokenRejected {
        device: "dgi".into(),
        reason: TokenReason::FileUnreadable {
            path: "/etc/emcf/dgi.token".into(),
            why: "Permission denied (os error 13)".into(),
        },
    };
    let fr = token.describe(Lang::Fr);
    assert_eq!(
        fr,
        crate::i18n::nbsp(
            "l'API web de la DGI n'accepte pas le jeton de cette passerelle pour l'appareil dgi : \
         le fichier du jeton de cet appareil ne peut pas être lu (le journal du service dit \
         pourquoi) ; l'opérateur de la passerelle doit installer un nouveau jeton (réessayer \
         n'y changera rien)"
        )
    );
    assert!(!token.describe(Lang::En).contains("Permission"));
    let log = token.to_string();
    assert!(
        log.contains("/etc/emcf/dgi.token") && log.contains("Permission denied"),
        "{log}"
    );
    let rejected = CertifyError::TokenRejected {
        device: "dgi".into(),
        reason: TokenReason::Rejected { status: 401 },
    };
    assert!(
        rejected.describe(Lang::Fr).contains(&crate::i18n::nbsp(
            "la DGI a refusé le jeton de l'e-MCF (HTTP 401) : il a expiré"
        )),
        "{}",
        rejected.describe(Lang::Fr)
    );
    let link = CertifyError::DeviceUnavailable {
        reason: msg!(
            "reason-link-down",
            detail = "No such file or directory (os error 2)"
        ),
        retry_after: Duration::from_secs(5),
    };
    for lang in Lang::ALL {
        assert!(
            !link.describe(lang).contains("os error"),
            "{}",
            link.describe(lang)
        );
    }
    assert!(
        link.to_string().contains("No such file or directory"),
        "{link}"
    );
    let store = CertifyError::Internal("store task failed: cancelled".into());
    assert!(!store.describe(Lang::Fr).contains("cancelled"));
    assert!(store.to_string().contains("store task failed"));
}

#[test]
fn a_reason_is_rendered_in_the_language_of_its_sentence() {
    let error = CertifyError::DeviceNotReady {
        reason: msg!("reason-state-refused", text = "E: busy"),
    };
    assert_eq!(
        error.describe(Lang::Fr),
        crate::i18n::nbsp(
            "le boîtier e-MCF ne peut pas certifier pour le moment : il a refusé de donner son \
         état (C1h), avec ces mots à lui, cités tels quels : « E: busy »"
        )
    );
    assert_eq!(
        error.to_string(),
        "the e-MCF device cannot certify now: it refused to give its state (C1h), in its own \
         words, quoted as they came: \"E: busy\""
    );
}

#[test]
fn setup_errors_have_their_code_and_no_retry() {
    let not_configured = CertifyError::DeviceNotConfigured {
        device: "shop2".into(),
    };
    assert_eq!(not_configured.code(), 156);
    assert_eq!(CertifyError::NoSandbox.code(), 156);
    let wrong = CertifyError::WrongDevice {
        device_nif: "B9999999Z".into(),
        org_nif: "A1234567B".into(),
    };
    let token = CertifyError::TokenRejected {
        device: "dgi".into(),
        reason: TokenReason::Rejected { status: 401 },
    };
    for error in [&not_configured, &CertifyError::NoSandbox, &wrong, &token] {
        assert_eq!(error.retry_after(), None, "{error}");
    }
    assert!(not_configured
        .describe(Lang::Fr)
        .starts_with("l'appareil shop2 de cette organisation n'est pas configuré"));
    // What a retry can fix keeps its delay.
    let busy = CertifyError::QueueFull {
        retry_after: Duration::from_secs(3),
    };
    assert_eq!(busy.retry_after(), Some(Duration::from_secs(3)));
}
