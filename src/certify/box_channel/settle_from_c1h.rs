//! Settling an intent whose 38h outcome is unknown (docs/design.md §4): read C1h;
//! if the device's last invoice is this rn with a codeDEFDGI, it was certified (journal it
//! from C1h); otherwise cancel whatever is open and journal the intent as abandoned. Never
//! resend 38h, never cancel before C1h has answered.
//!
//! This runs right after the unknown outcome on the same session, and again in the background
//! (at start-up for every open intent, and after an in-doubt run) until the device answers.
//! Until then the device takes no new invoice and the rn answers 409.

use mcf_sfe::reply::{Certification, DeviceState, Last};
use mcf_sfe::{Command, Reply};
use tracing::{info, warn};

use super::commands::{cancel, security_elements};
use crate::certify::register_writer::RegisterWriter;
use crate::certify::CertifyError;
use crate::device::PortSession;
use crate::model::{Intent, IntentId, RegisterEntry};

/// What C1h says about an intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum C1hVerdict {
    /// The device's last invoice is this one: it was certified.
    Certified(Certification),
    /// The device's last invoice is another one: this one was not finalized.
    NotFinalized,
    /// C1h does not say which invoice was last (its last-invoice fields are missing or
    /// unreadable): nothing can be concluded; the intent stays open for an administrator.
    CannotTell(String),
}

/// How an intent was settled.
#[derive(Debug)]
pub(crate) enum BoxSettled {
    /// Journaled as certified.
    Certified(Box<RegisterEntry>),
    /// Journaled as abandoned.
    Abandoned,
}

/// Why an intent could not be settled now.
#[derive(Debug)]
pub(crate) enum SettleError {
    /// The device did not answer C1h: try again later.
    Unreachable(String),
    /// The device answered C1h but it does not say which invoice was last: try again later,
    /// and tell an administrator.
    CannotTell(String),
    /// The journal failed.
    Store(CertifyError),
}

/// Decides from a C1h reply whether `intent` was finalized. The device takes no other invoice
/// while an intent is open, so its last invoice is this one exactly when the FN matches.
pub(crate) fn verdict_from_device_state(intent: &Intent, state: &DeviceState) -> C1hVerdict {
    let last = match &state.last {
        Last::Nothing if state.tc == 0 => return C1hVerdict::NotFinalized,
        Last::Nothing => {
            return C1hVerdict::CannotTell(format!(
                "C1h counts {} invoices but names no last one",
                state.tc
            ))
        }
        Last::Unreadable(why) => return C1hVerdict::CannotTell(why.clone()),
        Last::Invoice(last) => last,
    };
    if last.rn != intent.rn {
        // Another FN as the last invoice proves nothing was certified since the intent only
        // if the box's counter has not moved since the C1h read before it (known for intents
        // journaled since 1.1.0): a box that wrote this rn otherwise (trimmed, another case)
        // may well have certified it.
        if let Some(before) = intent.device_tc {
            if state.tc != before {
                return C1hVerdict::CannotTell(format!(
                    "the box certified since the C1h before this invoice (TC {before} then {}), \
                     but its last invoice is FN {:?}, not {:?}",
                    state.tc, last.rn, intent.rn
                ));
            }
        }
        return C1hVerdict::NotFinalized;
    }
    if last.invoice_type.to_string() != intent.invoice_type
        || last
            .amount
            .is_some_and(|amount| amount != intent.totals.total)
    {
        // Same FN: the device certified it. Never lose it, but say that it looks odd.
        warn!(
            rn = %intent.rn,
            device_type = %last.invoice_type,
            device_amount = ?last.amount,
            "the device's last invoice has this rn but another type or amount"
        );
    }
    let fc = if last.invoice_type.is_credit_note() {
        state.frc
    } else {
        state.fvc
    };
    C1hVerdict::Certified(Certification {
        fc,
        tc: state.tc,
        invoice_type: last.invoice_type,
        at: last.at,
        mid: state.mid.clone(),
        nif: state.nif.clone(),
        rn: Some(last.rn.clone()),
        code_def: last.code_def.clone(),
    })
}

/// Settles every intent of `open` on `session`: `Ok(true)` when all are settled, `Ok(false)`
/// when the box does not answer C1h yet.
pub(crate) async fn settle_all(
    session: &mut PortSession<'_>,
    open: Vec<(IntentId, Intent)>,
    journal: &RegisterWriter,
) -> Result<bool, CertifyError> {
    for (id, intent) in open {
        match settle(session, journal, id, &intent).await {
            Ok(_) => {}
            Err(SettleError::Unreachable(reason)) => {
                info!(%reason, "device did not answer C1h yet");
                return Ok(false);
            }
            Err(SettleError::CannotTell(reason)) => {
                return Err(CertifyError::Internal(format!(
                    "reconciliation cannot conclude ({reason}); C1h is asked again"
                )));
            }
            Err(SettleError::Store(error)) => return Err(error),
        }
    }
    Ok(true)
}

/// Settles one open intent on `session`.
pub(crate) async fn settle(
    session: &mut PortSession<'_>,
    journal: &RegisterWriter,
    intent_id: IntentId,
    intent: &Intent,
) -> Result<BoxSettled, SettleError> {
    let state = match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => state,
        Ok(other) => {
            return Err(SettleError::Unreachable(format!(
                "unexpected answer to C1h: {other:?}"
            )))
        }
        Err(error) => return Err(SettleError::Unreachable(error.to_string())),
    };
    match verdict_from_device_state(intent, &state) {
        C1hVerdict::Certified(certification) => {
            let entry = journal
                .certified(
                    intent_id,
                    intent,
                    security_elements(&certification),
                    "reconciled",
                )
                .await
                .map_err(SettleError::Store)?;
            info!(rn = %intent.rn, sequence = entry.sequence, "reconciled: certified on the device");
            Ok(BoxSettled::Certified(Box::new(entry)))
        }
        C1hVerdict::CannotTell(why) => Err(SettleError::CannotTell(format!(
            "the box's C1h does not say which invoice it finalized last ({why}): rn {} stays \
             in doubt and the box takes no invoice until its C1h tells",
            intent.rn
        ))),
        C1hVerdict::NotFinalized => {
            cancel(session, &intent.device).await;
            journal
                .abandoned(
                    intent_id,
                    "not finalized on the device (C1h after an unknown outcome)".to_string(),
                )
                .await
                .map_err(SettleError::Store)?;
            info!(rn = %intent.rn, "reconciled: not finalized, abandoned");
            Ok(BoxSettled::Abandoned)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, Utc};
    use mcf_sfe::reply::LastInvoice;
    use mcf_sfe::types::InvoiceType;
    use rust_decimal_macros::dec;

    use crate::model::{DeviceTotals, Environment};

    fn intent(rn: &str) -> Intent {
        Intent {
            org: "demo".into(),
            environment: Environment::Production,
            rn: rn.into(),
            invoice_type: "FV".into(),
            key_id: "k".into(),
            device: "shop".into(),
            request_digest: "d".into(),
            received_at: Utc::now(),
            totals: DeviceTotals {
                total: dec!(116.00),
                vat: dec!(16.00),
                group_ttc: vec![],
                group_vat: vec![],
                specific_tax: dec!(0),
                usd_equivalent: None,
                mcur: None,
            },
            nif: "A1234567B".into(),
            isf: "ISF1".into(),
            idempotency_key: None,
            device_tc: None,
            channel_ref: None,
            invoice: None,
        }
    }

    fn state(last_rn: Option<&str>) -> DeviceState {
        let at = NaiveDate::from_ymd_opt(2026, 11, 22)
            .and_then(|d| d.and_hms_opt(10, 0, 0))
            .unwrap_or_default();
        DeviceState {
            mid: "NIM001".into(),
            nif: "A1234567B".into(),
            clock: Some(at),
            tc: 7,
            fvc: 5,
            frc: 2,
            last: last_rn.map_or(Last::Nothing, |rn| {
                Last::Invoice(LastInvoice {
                    at,
                    invoice_type: InvoiceType::Fv,
                    code_def: "ABCDEFGHIJKLMNOPQRSTUVWX".into(),
                    rn: rn.into(),
                    amount: Some(dec!(116.00)),
                })
            }),
            rates: None,
            currency: None,
        }
    }

    #[test]
    fn the_last_invoice_with_this_rn_is_certified_with_its_counters() {
        match verdict_from_device_state(&intent("F-1"), &state(Some("F-1"))) {
            C1hVerdict::Certified(c) => {
                assert_eq!(c.counters(), "5/7 FV");
                assert_eq!(c.code_def, "ABCDEFGHIJKLMNOPQRSTUVWX");
                assert!(c
                    .qr_code()
                    .starts_with("RDCDEF01;NIM001;ABCDEFGHIJKLMNOPQRSTUVWX;A1234567B;"));
            }
            other => panic!("expected certified, got {other:?}"),
        }
    }

    #[test]
    fn another_last_invoice_or_none_means_not_finalized() {
        assert_eq!(
            verdict_from_device_state(&intent("F-1"), &state(Some("F-0"))),
            C1hVerdict::NotFinalized
        );
        let mut fresh = state(None);
        fresh.tc = 0;
        assert_eq!(
            verdict_from_device_state(&intent("F-1"), &fresh),
            C1hVerdict::NotFinalized
        );
    }

    #[test]
    fn another_fn_settles_only_if_the_counter_did_not_move() {
        let mut settled = intent("F-1");
        settled.device_tc = Some(7);
        assert_eq!(
            verdict_from_device_state(&settled, &state(Some("F-0"))),
            C1hVerdict::NotFinalized
        );
        settled.device_tc = Some(6);
        assert!(matches!(
            verdict_from_device_state(&settled, &state(Some("F-1 "))),
            C1hVerdict::CannotTell(_)
        ));
        // A box that counts invoices but names none.
        let mut silent = state(None);
        assert!(matches!(
            verdict_from_device_state(&intent("F-1"), &silent),
            C1hVerdict::CannotTell(_)
        ));
        silent.tc = 0;
        assert_eq!(
            verdict_from_device_state(&intent("F-1"), &silent),
            C1hVerdict::NotFinalized
        );
    }

    #[test]
    fn a_last_invoice_c1h_cannot_read_settles_nothing() {
        let mut unreadable = state(Some("F-1"));
        unreadable.last = Last::Unreadable("lastFN is empty".into());
        assert!(matches!(
            verdict_from_device_state(&intent("F-1"), &unreadable),
            C1hVerdict::CannotTell(_)
        ));
    }
}
