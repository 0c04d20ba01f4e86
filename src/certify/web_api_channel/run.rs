//! One invoice on the web API: a place in the channel's arrival order (`WebApiWaiting`), a place
//! in the pending window (`WebApiLane`), then request -> check the calculation -> intent with
//! the uid (fsync) -> confirm -> certification (fsync). Before the intent, any failure cancels
//! the request; after it, a confirm whose answer is lost is settled from the DGI's pending
//! list (`settle_from_pending.rs`), never sent again blindly and never guessed.
//!
//! The place in the window is given back when the confirm is sent, not when it is answered:
//! the DGI counts a request as pending until it has processed the confirm, so for a moment it
//! may count one more than the window; a request it refuses for that (error 1, nothing
//! created) is sent again after a short wait ([`WINDOW_FULL_WAITS`]). This keeps the DGI's
//! ten places busy with requests rather than with answers travelling back
//! (docs/design.md §4a, the throughput figure of `scripts/bench`).

use std::time::{Duration, Instant};

use edef::{Calculation, ConfirmBody, Confirmation};
use tokio::sync::{OwnedRwLockReadGuard, OwnedSemaphorePermit};
use tracing::{debug, error, warn};

use super::calls::ApiError;
use super::invoice::{changed_rates, check, request_of, totals_of};
use super::settle_from_pending::{
    await_administrator, pending_on_dgi, security_of, settle_one, WebApiSettled,
};
use super::window::{self, SharedPlace};
use super::Shared;
use crate::arrivals::Turn;
use crate::certify::channel::{Job, OnChannel, RunFailure};
use crate::certify::error::database_unreachable;
use crate::certify::invoice::Seller;
use crate::certify::register_behind::{Said, SEEN_IN_CONFIRM};
use crate::certify::register_writer::RegisterWriter;
use crate::certify::CertifyError;
use crate::failpoint;
use crate::model::{total_counter, DeviceView, Environment, Intent, IntentId, RegisterEntry};
use crate::msg;
use std::sync::Arc;

/// A place in the channel's arrival order.
pub struct WebApiWaiting {
    shared: Arc<Shared>,
    turn: Turn,
}

impl WebApiWaiting {
    pub(super) fn new(shared: &Arc<Shared>) -> WebApiWaiting {
        WebApiWaiting {
            shared: Arc::clone(shared),
            turn: shared.arrivals.take(),
        }
    }

    /// A place in the pending window, after every earlier arrival.
    pub(crate) async fn acquire(self) -> Result<WebApiLane, CertifyError> {
        let WebApiWaiting { shared, turn } = self;
        shared.health.refuse_if_down(&shared.settings.name)?;
        let waiting = shared
            .waiting
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let counted = Decrement(Arc::clone(&shared));
        if waiting >= shared.settings.queue_capacity {
            return Err(CertifyError::QueueFull {
                retry_after: Duration::from_secs(2),
            });
        }
        // Every earlier arrival enters the window's queue first (it is FIFO).
        turn.wait().await;
        let mut permit = Box::pin(Arc::clone(&shared.window).acquire_owned());
        // Polled once before the turn ends: the place in the window's queue is taken in
        // arrival order.
        let first_poll = futures::poll!(permit.as_mut());
        turn.finish();
        let permit = match first_poll {
            std::task::Poll::Ready(result) => result,
            std::task::Poll::Pending => permit.await,
        }
        .map_err(|_| CertifyError::DeviceUnavailable {
            reason: msg!("reason-stopping"),
            retry_after: Duration::from_secs(5),
        })?;
        // Over PostgreSQL, a place of the window the replicas share, too.
        let shared_place = window::take(&shared).await?;
        drop(counted);
        let running = Arc::clone(&shared.running).read_owned().await;
        Ok(WebApiLane {
            shared,
            permit,
            shared_place,
            _running: running,
        })
    }
}

/// Counts an invoice out of the waiting ones when dropped.
struct Decrement(Arc<Shared>);

impl Drop for Decrement {
    fn drop(&mut self) {
        self.0
            .waiting
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A place in the pending window, for one invoice.
pub struct WebApiLane {
    shared: Arc<Shared>,
    permit: OwnedSemaphorePermit,
    /// The place of the window shared by the replicas (PostgreSQL), if it is shared.
    shared_place: Option<SharedPlace>,
    /// Until the invoice's end (the stop waits for it).
    _running: OwnedRwLockReadGuard<()>,
}

impl WebApiLane {
    /// One invoice: request, check, intent with the uid, confirm, certification. The channel
    /// is marked in doubt before the place in the window is given back.
    pub(crate) async fn certify(
        self,
        job: Job,
        journal: RegisterWriter,
    ) -> Result<RegisterEntry, RunFailure> {
        let WebApiLane {
            shared,
            permit,
            shared_place,
            _running,
        } = self;
        let place = Place(std::sync::Mutex::new(Some((permit, shared_place))));
        let outcome = run_invoice(&shared, &job, &journal, &place).await;
        if matches!(outcome, Err(RunFailure::InDoubt(_))) {
            job.in_doubt.mark(&shared.settings.name);
        }
        place.give_back();
        outcome
    }
}

/// The invoice's place in the pending window (this process's, and the replicas' shared one),
/// given back once its confirm is sent (or when the run ends, whatever the way).
struct Place(std::sync::Mutex<Option<(OwnedSemaphorePermit, Option<SharedPlace>)>>);

impl Place {
    fn give_back(&self) {
        // The shared place is given back in the background when dropped (`window.rs`).
        let held = crate::sync::lock(&self.0).take();
        drop(held);
    }

    /// Notes the uid of the request sent under the shared place, if any (see `window.rs`).
    async fn note(&self, uid: &str) -> Result<(), CertifyError> {
        let note = crate::sync::lock(&self.0)
            .as_ref()
            .and_then(|(_, shared_place)| shared_place.as_ref().map(SharedPlace::note));
        match note {
            Some(note) => note.note(uid).await,
            None => Ok(()),
        }
    }
}

/// Waits (ms) before sending again a request the DGI refused because its window was full.
const WINDOW_FULL_WAITS: [u64; 6] = [20, 40, 80, 160, 320, 640];

/// What the run holds of its request on the DGI.
struct Requested {
    calculation: Calculation,
    at: Instant,
}

async fn run_invoice(
    shared: &Arc<Shared>,
    job: &Job,
    journal: &RegisterWriter,
    place: &Place,
) -> Result<RegisterEntry, RunFailure> {
    shared.health.refuse_foreign_nif(&job.org.nif)?;
    let rates = shared
        .health
        .rates(&shared.api, shared.settings.rates_interval)
        .await?;
    let expected = job
        .invoice
        .expected_totals(&rates)
        .ok_or(CertifyError::TotalsTooLarge)?;
    if expected.total.is_zero() {
        return Err(CertifyError::ZeroTotal.into());
    }
    // The exact total is known now: a credit note's share, the organization's largest total
    // (180, 181), before anything is requested.
    job.ceiling.check_total(expected.total)?;
    let seller = Seller {
        nif: job.org.nif.clone(),
        isf: job.org.isf.clone(),
    };
    let body = request_of(
        &job.invoice,
        &seller,
        shared.settings.cdf_currency,
        shared.settings.anonymous_client,
    );
    let calculation = request(shared, journal, &body).await?;
    // The request's age counts from its answer: the note below takes time too.
    let at = Instant::now();
    shared.health.answered();
    if let Err(error) = place.note(&calculation.uid).await {
        // Its place in the window the replicas share could not be noted as this request's:
        // never confirmed.
        cancel(shared, &calculation.uid).await;
        return Err(error.into());
    }
    // Held by this lane until it returns or unwinds: never cancelled as a stray, never settled
    // behind its back, and released even by a panic.
    let _held = shared.hold_uid(&calculation.uid);
    // A uid the DGI hands out now names a new request: whatever was remembered of an older
    // request with the same uid (never confirmed) is not this one's.
    shared.forget_unconfirmed(&calculation.uid);
    let requested = Requested { calculation, at };
    certify_requested(shared, job, journal, &requested, &expected, &rates, place).await
}

/// The invoice request, sent again while the DGI says its window is full (nothing created),
/// each time only while this replica's own lease surely holds.
async fn request(
    shared: &Shared,
    journal: &RegisterWriter,
    body: &edef::InvoiceRequest,
) -> Result<Calculation, CertifyError> {
    let device = shared.settings.name.as_str();
    let mut waits = WINDOW_FULL_WAITS.iter();
    loop {
        if !journal.may_call_dgi() {
            // This replica's own lease may have run out (its database away): no request that
            // another replica could not tell from a stray.
            return Err(CertifyError::DeviceUnavailable {
                reason: msg!("reason-replica-lease"),
                retry_after: Duration::from_secs(2),
            });
        }
        match shared.api.request(body).await {
            Ok(calculation) => return Ok(calculation),
            Err(error) if error.is_window_full() => match waits.next() {
                Some(&ms) => {
                    debug!(
                        device,
                        ms, "the DGI's pending window is full: requesting again shortly"
                    );
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                None => return Err(shared.health.request_failed(device, error)),
            },
            Err(error) => return Err(shared.health.request_failed(device, error)),
        }
    }
}

async fn certify_requested(
    shared: &Arc<Shared>,
    job: &Job,
    journal: &RegisterWriter,
    requested: &Requested,
    expected: &crate::certify::invoice::Totals,
    rates: &super::invoice::Rates,
    place: &Place,
) -> Result<RegisterEntry, RunFailure> {
    let device = shared.settings.name.as_str();
    let calculation = &requested.calculation;
    if let Err(mismatch) = check(calculation, expected) {
        let changed = changed_rates(calculation, rates);
        if !changed.is_empty() {
            warn!(device, groups = ?changed, "the DGI's rates differ from those read before: reading them again");
            shared.health.forget_rates();
        }
        cancel(shared, &calculation.uid).await;
        return Err(mismatch.into());
    }
    failpoint::hit("before_intent");
    let usd = job.invoice.usd_rate.as_ref().and(expected.usd_equivalent);
    let uid = calculation.uid.clone();
    let intent = job.intent(
        device,
        totals_of(calculation, usd),
        OnChannel::WebApi { uid },
    );
    let intent_id = match journal.intent(intent.clone(), job.quota, None).await {
        Ok((id, _)) => id,
        Err(refused) => {
            // Never confirmed while the register cannot write: the certification could not be
            // journaled. An intent journaled meanwhile, or perhaps journaled (the database lost
            // while it committed), is journaled as abandoned by the next settling, once the
            // register can be written again.
            cancel(shared, &calculation.uid).await;
            let perhaps_journaled =
                matches!(&refused.error, CertifyError::Store(error) if database_unreachable(error));
            if refused.journaled.is_some() || perhaps_journaled {
                shared.never_confirmed(&calculation.uid);
            }
            return Err(refused.error.into());
        }
    };
    failpoint::hit("after_intent");
    if !journal.may_call_dgi() {
        // This replica's own lease may have run out: another replica may take the invoice
        // over and confirm it. Not confirmed here; settled by whoever owns it then.
        warn!(device = %shared.settings.name, rn = %intent.rn, "this replica's lease may have run out: the request is left for whoever owns the invoice to settle");
        return Err(RunFailure::InDoubt(intent_id));
    }
    if requested.at.elapsed() > shared.settings.hold {
        // Held too long (a slow disk): never confirm a request about to expire.
        cancel(shared, &calculation.uid).await;
        let reason = format!(
            "not confirmed: journaling took longer than the hold of {} s; the request was cancelled",
            shared.settings.hold.as_secs()
        );
        abandon(shared, journal, intent_id, &calculation.uid, reason).await?;
        return Err(CertifyError::DeviceUnavailable {
            reason: msg!("reason-dgi-request-expired"),
            retry_after: Duration::from_secs(2),
        }
        .into());
    }
    confirm(shared, job, journal, intent_id, &intent, calculation, place).await
}

/// Confirms, and what the answer means for the register.
async fn confirm(
    shared: &Arc<Shared>,
    job: &Job,
    journal: &RegisterWriter,
    intent_id: IntentId,
    intent: &Intent,
    calculation: &Calculation,
    place: &Place,
) -> Result<RegisterEntry, RunFailure> {
    let device = shared.settings.name.as_str();
    let totals = ConfirmBody {
        total: calculation.total,
        vtotal: calculation.vat_total,
    };
    place.give_back();
    match shared.api.confirm(&calculation.uid, totals).await {
        Ok(confirmation) => {
            failpoint::hit("after_finalize");
            failpoint::pause("after_finalize").await;
            shared.health.answered();
            certified(shared, job, journal, intent_id, intent, &confirmation).await
        }
        Err(ApiError::NotSent(reason)) => {
            // The confirm never left: nothing was finalized. The request expires unconfirmed.
            warn!(device, %reason, "the confirm could not be sent; the request is left to expire");
            shared.health.unreachable(&reason);
            cancel(shared, &calculation.uid).await;
            abandon(
                shared,
                journal,
                intent_id,
                &calculation.uid,
                format!("confirm not sent: {reason}"),
            )
            .await?;
            Err(CertifyError::DeviceUnavailable {
                reason: msg!("reason-dgi-confirm-unreachable", detail = &reason),
                retry_after: Duration::from_secs(10),
            }
            .into())
        }
        Err(ApiError::Token(reason)) => {
            // Rejected before it was processed: nothing was finalized.
            shared.health.token_rejected(device, &reason);
            abandon(
                shared,
                journal,
                intent_id,
                &calculation.uid,
                format!("confirm refused: {reason}"),
            )
            .await?;
            Err(CertifyError::TokenRejected {
                device: device.to_owned(),
                reason,
            }
            .into())
        }
        Err(ApiError::Refused(refusal)) => {
            refused_confirm(
                shared,
                journal,
                intent_id,
                intent,
                &calculation.uid,
                refusal,
            )
            .await
        }
        Err(error @ (ApiError::NoAnswer(_) | ApiError::Unreadable(_))) => {
            warn!(device, %error, rn = %intent.rn, "the confirm's answer was lost: asking the DGI whether the request is still pending");
            match settle_one(shared, journal, intent_id, intent).await {
                Ok(WebApiSettled::Certified(entry)) => Ok(*entry),
                Ok(WebApiSettled::AwaitingAdministrator) => {
                    Err(CertifyError::AwaitingAdministrator {
                        rn: intent.rn.clone(),
                    }
                    .into())
                }
                Ok(WebApiSettled::NotYet | WebApiSettled::Abandoned) | Err(_) => {
                    Err(RunFailure::InDoubt(intent_id))
                }
            }
        }
    }
}

/// A confirm the DGI refused. While the request is still pending the refusal is plain:
/// nothing was finalized, the request is cancelled and the ERP hears the DGI's reason (422);
/// if the cancel is not accepted, the intent stays in doubt (settled from the pending list).
/// A request no longer pending is another matter: "missing or already finalized/cancelled"
/// (Benin's error 20) covers an expired request, but also a confirm repeated on the way (a
/// proxy may send a PUT again) whose first copy finalized it. Never guessed: in doubt, for an
/// administrator.
async fn refused_confirm(
    shared: &Arc<Shared>,
    journal: &RegisterWriter,
    intent_id: IntentId,
    intent: &Intent,
    uid: &str,
    refusal: edef::DgiError,
) -> Result<RegisterEntry, RunFailure> {
    match pending_on_dgi(shared, uid, &intent.rn).await {
        Some(true) => {
            if !cancel(shared, uid).await {
                // Still pending a moment ago, but the cancel was refused or its answer lost:
                // a copy of the confirm may have finalized it meanwhile. Never guessed: the
                // intent stays open and is settled from the pending list.
                return Err(RunFailure::InDoubt(intent_id));
            }
            abandon(
                shared,
                journal,
                intent_id,
                uid,
                format!("confirm refused by the DGI: {refusal}"),
            )
            .await?;
            Err(CertifyError::DgiRefused {
                code: refusal.code,
                text: refusal.description,
            }
            .into())
        }
        Some(false) => {
            let why = format!(
                "the DGI refused the confirm of request {uid} ({refusal}) and the request is no longer pending: it expired, was cancelled, or was confirmed by a copy of the confirm, and the API cannot say which"
            );
            await_administrator(shared, intent_id, intent, why);
            Err(CertifyError::AwaitingAdministrator {
                rn: intent.rn.clone(),
            }
            .into())
        }
        None => Err(RunFailure::InDoubt(intent_id)),
    }
}

/// Journals the certification; the DGI certified it, so a failed write leaves the intent
/// open (in doubt), never answered 200 and never lost. In production, the register's view
/// of the channel is read with it, and the confirmation's counter checked against it.
async fn certified(
    shared: &Arc<Shared>,
    job: &Job,
    journal: &RegisterWriter,
    intent_id: IntentId,
    intent: &Intent,
    confirmation: &Confirmation,
) -> Result<RegisterEntry, RunFailure> {
    let device = shared.settings.name.as_str();
    let security = security_of(shared, confirmation);
    let production = job.environment == Environment::Production;
    let written = if production {
        shared.health.check_nim(device, &confirmation.nim);
        journal
            .certified_with_view(intent_id, intent, security, "finalize")
            .await
            .map(|(entry, view)| (entry, Some(view)))
    } else {
        journal
            .certified(intent_id, intent, security, "finalize")
            .await
            .map(|entry| (entry, None))
    };
    match written {
        Ok((entry, view)) => {
            if let Some(view) = view {
                ahead_of_register(job, journal, device, confirmation, &view).await;
            }
            Ok(entry)
        }
        Err(error) => {
            error!(device, %error, code_def = %confirmation.code_def, counters = %confirmation.counters,
                "certified by the DGI but not journaled: kept in memory until the register can be written");
            if production {
                ahead_after_failed_write(job, journal, device, intent_id, confirmation).await;
            }
            // Kept once: by the register writer while the register cannot write (journaled
            // by the storage watch), here otherwise (journaled by the next settling).
            if !journal.unrecorded().contains(intent_id) {
                shared.keep_confirmed(intent_id, confirmation.clone());
            }
            Err(RunFailure::InDoubt(intent_id))
        }
    }
}

/// A web API e-MCF's counter is known only from a confirmation (docs/web-api.md): one ahead
/// of the register (numbers it holds neither as entries nor as open intents) stops the
/// channel for the next invoices (172). This one the DGI certified: it is journaled (`view`
/// was read with its certification: the channel's other open intents, the register's
/// counters before this entry) and answered as usual.
async fn ahead_of_register(
    job: &Job,
    journal: &RegisterWriter,
    device: &str,
    confirmation: &Confirmation,
    view: &DeviceView,
) {
    let Some(tc) = total_counter(&confirmation.counters) else {
        return;
    };
    let said = Said {
        device,
        nim: &confirmation.nim,
        nif: &job.org.nif,
        tc,
        seen_in: SEEN_IN_CONFIRM,
        explained: vec![tc],
        last: None,
    };
    match journal.check_ahead(said, view).await {
        Ok(()) | Err(CertifyError::RegisterBehind { .. }) => {}
        Err(error) => warn!(device, %error, "register behind: not checked at this confirmation"),
    }
}

/// The confirmation of a certification the register could not journal, checked all the same
/// against the register read now (without its own intent): once this certification is in
/// the register, numbers missing below it could no longer be seen. When the read shows it
/// recorded after all (a COMMIT whose outcome was unknown, and that happened), the view before
/// it is lost and the check is said skipped; when the register cannot be read either (the
/// database away), likewise (docs/design.md §5a).
async fn ahead_after_failed_write(
    job: &Job,
    journal: &RegisterWriter,
    device: &str,
    intent_id: IntentId,
    confirmation: &Confirmation,
) {
    let Some(tc) = total_counter(&confirmation.counters) else {
        return;
    };
    match journal
        .device_view(device, &confirmation.nim, Some(intent_id))
        .await
    {
        Ok(view) if view.known.as_ref().is_none_or(|known| known.highest() < tc) => {
            ahead_of_register(job, journal, device, confirmation, &view).await;
        }
        Ok(_) => warn!(device, tc, "register behind: not checked at this confirmation (its certification is in the register after all)"),
        Err(error) => warn!(device, %error, "register behind: not checked at this confirmation (the register cannot be read)"),
    }
}

/// Cancels a pending request; whether the DGI accepted it. A failure is logged (the DGI
/// expires the request anyway).
pub(super) async fn cancel(shared: &Shared, uid: &str) -> bool {
    match shared.api.cancel(uid).await {
        Ok(()) => true,
        Err(error) => {
            warn!(device = %shared.settings.name, %error, "the request could not be cancelled; the DGI will expire it");
            false
        }
    }
}

/// Records that `intent_id`'s request `uid` was never confirmed (abandoned). If the register
/// cannot take it now (its database away), the request is remembered as never confirmed, so
/// that the settling abandons it once the register answers, without an administrator.
async fn abandon(
    shared: &Shared,
    journal: &RegisterWriter,
    intent_id: IntentId,
    uid: &str,
    reason: String,
) -> Result<(), CertifyError> {
    journal
        .abandoned(intent_id, reason)
        .await
        .inspect_err(|_| shared.never_confirmed(uid))
}
