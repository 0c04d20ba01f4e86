//! A confirm whose answer was lost (docs/web-api.md §6: no call returns a confirmed uid's
//! elements again), settled from what the DGI says, never guessed:
//! - confirmed by this process but not journaled yet: journaled now;
//! - the uid still in the e-MCF's pending list: confirmed again;
//! - the uid gone: confirmed, cancelled or expired, the API cannot say which. The rn answers
//!   409 (111) and an administrator settles it from the DGI's portal (`intent resolve`).

use std::sync::Arc;

use edef::{ConfirmBody, Confirmation};
use tracing::{error, info, warn};

use super::calls::ApiError;
use super::Shared;
use crate::certify::register_writer::RegisterWriter;
use crate::certify::CertifyError;
use crate::model::{Intent, IntentId, RegisterEntry, SecurityElements};

/// What settling one intent concluded.
pub(super) enum WebApiSettled {
    /// Certified and journaled.
    Certified(Box<RegisterEntry>),
    /// Only an administrator can tell.
    AwaitingAdministrator,
    /// Never confirmed (cancelled while the register could not write): journaled as
    /// abandoned.
    Abandoned,
    /// The DGI cannot be asked now: try again later.
    NotYet,
}

/// Settles `open` (this channel's open intents): `Ok(true)` when each is journaled or waits
/// for an administrator, `Ok(false)` when the DGI cannot be asked now.
pub(super) async fn settle_all(
    shared: &Arc<Shared>,
    open: Vec<(IntentId, Intent)>,
    journal: &RegisterWriter,
) -> Result<bool, CertifyError> {
    let mut done = true;
    for (id, intent) in open {
        let live = intent
            .channel_ref
            .as_deref()
            .is_some_and(|uid| shared.is_live(uid));
        if live || super::lock(&shared.awaiting).contains_key(&id) {
            // A lane of this process holds it, or it already waits for an administrator.
            continue;
        }
        match settle_one(shared, journal, id, &intent).await? {
            WebApiSettled::Certified(_)
            | WebApiSettled::AwaitingAdministrator
            | WebApiSettled::Abandoned => {}
            WebApiSettled::NotYet => done = false,
        }
    }
    Ok(done)
}

/// Settles one open intent.
pub(super) async fn settle_one(
    shared: &Arc<Shared>,
    journal: &RegisterWriter,
    id: IntentId,
    intent: &Intent,
) -> Result<WebApiSettled, CertifyError> {
    let device = shared.settings.name.as_str();
    if let Some(confirmation) = shared.kept_confirmation(id) {
        let entry = journal
            .certified(id, intent, security_of(shared, &confirmation), "finalize")
            .await?;
        shared.forget_confirmation(id);
        info!(device, rn = %intent.rn, "a certification kept in memory is now journaled");
        return Ok(WebApiSettled::Certified(Box::new(entry)));
    }
    let uid = intent.channel_ref.as_deref();
    if let Some(uid) = uid.filter(|uid| shared.was_never_confirmed(uid)) {
        let reason = "not confirmed: the register could not be written; the request was cancelled";
        journal.abandoned(id, reason.to_owned()).await?;
        shared.forget_unconfirmed(uid);
        info!(device, rn = %intent.rn, "a request never confirmed while the register could not write is journaled as abandoned");
        return Ok(WebApiSettled::Abandoned);
    }
    let Some(uid) = intent.channel_ref.clone() else {
        let why = "the intent names no request of the DGI (no uid)".to_owned();
        return Ok(await_administrator(shared, id, intent, why));
    };
    let Some(pending) = pending_on_dgi(shared, &uid, &intent.rn).await else {
        return Ok(WebApiSettled::NotYet);
    };
    if !pending {
        let why = format!(
            "the DGI's answer to the confirm of request {uid} was lost and the request is no longer pending: it was confirmed, cancelled or expired, and the API cannot say which"
        );
        return Ok(await_administrator(shared, id, intent, why));
    }
    if !journal.may_call_dgi() {
        // This replica's own lease may have run out: another may be settling it now.
        return Ok(WebApiSettled::NotYet);
    }
    let totals = ConfirmBody {
        total: intent.totals.total,
        vtotal: intent.totals.vat,
    };
    match shared.api.confirm(&uid, totals).await {
        Ok(confirmation) => {
            let security = security_of(shared, &confirmation);
            match journal.certified(id, intent, security, "reconciled").await {
                Ok(entry) => {
                    info!(device, rn = %intent.rn, "still pending on the DGI: confirmed again and journaled");
                    Ok(WebApiSettled::Certified(Box::new(entry)))
                }
                Err(error) => {
                    if !journal.unrecorded().contains(id) {
                        shared.keep_confirmed(id, confirmation);
                    }
                    Err(error)
                }
            }
        }
        Err(ApiError::NoAnswer(reason) | ApiError::NotSent(reason)) => {
            warn!(device, %reason, rn = %intent.rn, "the second confirm got no answer either; will ask again");
            Ok(WebApiSettled::NotYet)
        }
        Err(error) => {
            let why = format!("the second confirm of request {uid} failed: {error}");
            Ok(await_administrator(shared, id, intent, why))
        }
    }
}

/// Whether `uid` is in the e-MCF's pending list; `None` when the DGI cannot tell now.
pub(super) async fn pending_on_dgi(shared: &Shared, uid: &str, rn: &str) -> Option<bool> {
    let device = shared.settings.name.as_str();
    let status = match shared.api.status().await {
        Ok(status) => status,
        Err(error) => {
            warn!(device, %error, rn, "the DGI cannot tell now whether the request is pending; will ask again");
            return None;
        }
    };
    let Some(pending) = status.pending else {
        error!(
            device,
            "the DGI's status has no pendingRequestsList: the outcome cannot be settled"
        );
        return None;
    };
    Some(pending.iter().any(|p| p.uid == uid))
}

pub(super) fn await_administrator(
    shared: &Shared,
    id: IntentId,
    intent: &Intent,
    why: String,
) -> WebApiSettled {
    error!(device = %shared.settings.name, rn = %intent.rn, org = %intent.org, reason = %why,
        "invoice in doubt: an administrator must settle it (emcf-gateway intent list / intent resolve)");
    shared.await_administrator(id, why);
    WebApiSettled::AwaitingAdministrator
}

/// The register's security elements of a confirmation: kept as sent; `dateTime` read in the
/// forms seen, the gateway's clock when it cannot be read (noted once).
pub(super) fn security_of(shared: &Shared, confirmation: &Confirmation) -> SecurityElements {
    let date_time = match edef::reply::local_date_time(&confirmation.date_time) {
        Some(at) => at,
        None => {
            shared
                .health
                .odd_date_time(&shared.settings.name, &confirmation.date_time);
            chrono::Utc::now().naive_utc()
        }
    };
    let as_sent = date_time.format("%Y-%m-%dT%H:%M:%S").to_string();
    SecurityElements {
        code_def: confirmation.code_def.clone(),
        qr_code: confirmation.qr_code.clone(),
        counters: confirmation.counters.clone(),
        nim: confirmation.nim.clone(),
        date_time,
        date_time_as_sent: (as_sent != confirmation.date_time)
            .then(|| confirmation.date_time.clone()),
    }
}
