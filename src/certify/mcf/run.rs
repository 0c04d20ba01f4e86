//! One invoice on the box (docs/design.md §4): its place in the box's order (`BoxWaiting`),
//! the port leased (`BoxLane`), then one session run inside the actor task that owns the port
//! (`CertifyOnBox`): C1h (ready, NIF, counters, no stale invoice, rates), the invoice's
//! commands (`commands.rs`), intent journaled, 38h, certification journaled. Any failure before 38h cancels (38h `C`) so the box is never left
//! blocked; an unknown 38h outcome is settled from C1h (`settle.rs`), never resent or
//! cancelled blindly.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use mcf_sfe::reply::{DeviceState, Subtotal};
use mcf_sfe::{Command, Reply};
use rust_decimal::Decimal;
use tracing::{error, warn};

use super::commands::{cancel, device_totals, prepare, security_elements};
use super::readings::{rates_for, report_certification_oddities};
use super::settle::{settle, SettleError, Settled};
use super::unavailable;
use crate::certify::backend::{Job, Lane, RunFailure, Waiting};
use crate::certify::continuity::{Seen, SeenIn};
use crate::certify::invoice::Seller;
use crate::certify::journal::Journal;
use crate::certify::CertifyError;
use crate::device::{
    DeviceError, DeviceHandle, FinalizeOutcome, Lease, PortSession, SessionJob, Turn,
};
use crate::failpoint;
use crate::model::{BoxCounters, Environment, Intent, IntentId, RegisterEntry};
use crate::msg;

/// One invoice's run: the job, the register, the device's name.
struct Run<'a> {
    pub job: &'a Job,
    pub journal: &'a Journal,
    pub device: &'a str,
}

/// What C1h said before the invoice, and what the register knew of the box then.
struct Before {
    state: DeviceState,
    known: Option<BoxCounters>,
}

/// A place in the box's arrival order.
pub(super) struct BoxWaiting {
    pub device: DeviceHandle,
    pub turn: Turn,
}

impl Waiting for BoxWaiting {
    fn acquire(self: Box<Self>) -> BoxFuture<'static, Result<Box<dyn Lane>, CertifyError>> {
        Box::pin(async move {
            let BoxWaiting { device, turn } = *self;
            let lease = device.lease_in_turn(turn).await.map_err(unavailable)?;
            let device = device.name().to_owned();
            Ok(Box::new(BoxLane { device, lease }) as Box<dyn Lane>)
        })
    }
}

/// The box's port, reserved for one invoice.
struct BoxLane {
    device: String,
    lease: Lease,
}

impl Lane for BoxLane {
    fn certify(
        self: Box<Self>,
        job: Job,
        journal: Journal,
    ) -> BoxFuture<'static, Result<RegisterEntry, RunFailure>> {
        Box::pin(async move {
            let (device, in_doubt) = (self.device, job.in_doubt.clone());
            let on_box = CertifyOnBox { job, journal };
            match self.lease.run(on_box).await {
                Ok(outcome) => outcome,
                // The job started and died unanswered: it may have sent 38h. Settled like a
                // run that panicked (the box takes nothing before C1h has been read).
                Err(DeviceError::JobAborted) => {
                    error!(%device, "the invoice's work on the box ended without an answer: settling from C1h");
                    in_doubt.mark(&device);
                    Err(RunFailure::Panicked)
                }
                // The actor stopped before the job reached it: nothing was sent.
                Err(error) => Err(RunFailure::Failed(unavailable(error))),
            }
        })
    }
}

/// One invoice, run inside the actor task that owns the port: each command is one call on
/// the port, with no hop between tasks.
struct CertifyOnBox {
    job: Job,
    journal: Journal,
}

impl SessionJob for CertifyOnBox {
    type Output = Result<RegisterEntry, RunFailure>;

    fn run(self: Box<Self>, mut session: PortSession<'_>) -> BoxFuture<'_, Self::Output> {
        Box::pin(async move {
            let CertifyOnBox { job, journal } = *self;
            let device = session.device().to_owned();
            // The request beside the bytes it became, in the wire capture if one is written: a
            // capture that can be replayed as a regression test (tests/device/captures.rs).
            if session.capturing() {
                if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&job.body) {
                    session.annotate_capture(format!("invoice {value}")).await;
                }
            }
            let run = Run {
                job: &job,
                journal: &journal,
                device: &device,
            };
            // A bug that panics mid-invoice must not leave an intent behind unnoticed: the
            // device is then treated as in doubt until reconciliation finds nothing open.
            let outcome = AssertUnwindSafe(run_invoice(&mut session, &run))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    error!("the certification panicked: settling the device before it takes another invoice");
                    Err(RunFailure::Panicked)
                });
            if matches!(outcome, Err(RunFailure::InDoubt(_) | RunFailure::Panicked)) {
                // Marked before the session ends, so that nothing else runs on the box first.
                job.in_doubt.mark(&device);
            }
            outcome
        })
    }
}

/// Runs the whole invoice on `session`.
async fn run_invoice(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
) -> Result<RegisterEntry, RunFailure> {
    let before = check_state(session, run).await?;
    let rates = rates_for(&run.job.invoice, &before.state, session.fallback_rates())?;
    // The exact total is known now: a credit note's share, the organization's largest total
    // (180, 181), before the invoice is opened on the box.
    run.job.ceiling.check_with_rates(&run.job.invoice, &rates)?;
    let seller = Seller {
        nif: run.job.org.nif.clone(),
        isf: run.job.org.isf.clone(),
    };
    let (subtotal, expected) = match prepare(session, &run.job.invoice, &seller, &rates).await {
        Ok(prepared) => prepared,
        Err(error) => {
            cancel(session, run.device).await;
            return Err(error.into());
        }
    };
    failpoint::hit("before_intent");
    let intent = intent_of(run, &subtotal, expected.as_ref(), before.state.tc);
    let intent_id = match run.journal.intent(intent.clone()).await {
        Ok(id) => id,
        Err(error) => {
            cancel(session, run.device).await;
            return Err(error.into());
        }
    };
    failpoint::hit("after_intent");
    finalize(session, run, &before, intent_id, &intent, &subtotal).await
}

/// C1h, then what it must show before an invoice: the organization's NIF (153 otherwise,
/// whatever else is odd), counters that follow the register's (a fiscal anomaly otherwise,
/// never a refusal), no invoice left open (cancelled).
async fn check_state(session: &mut PortSession<'_>, run: &Run<'_>) -> Result<Before, CertifyError> {
    let state = device_state(session, run).await?;
    let production = run.job.environment == Environment::Production;
    if production && state.nif != run.job.org.nif {
        return Err(CertifyError::WrongDevice {
            device_nif: state.nif,
            org_nif: run.job.org.nif.clone(),
        });
    }
    // What the register knew of this box before this invoice: the C1h now and the R: later
    // are both checked against it.
    let known = if production {
        run.journal.known_counters(&state.mid).await
    } else {
        None
    };
    let seen = seen(run, &state.mid, &state.nif, state.tc, SeenIn::State);
    run.journal.check_continuity(known.as_ref(), seen).await;
    match session.invoice_open() {
        Some(false) => {}
        Some(true) => {
            warn!(
                device = run.device,
                "an invoice was left open on the device: cancelling it"
            );
            cancel(session, run.device).await;
        }
        // A box whose status bytes are not read: cancel whatever may be open (PROTOCOL.md §7).
        None => cancel(session, run.device).await,
    }
    Ok(Before { state, known })
}

fn seen<'a>(run: &Run<'a>, nim: &'a str, nif: &'a str, tc: u64, seen_in: SeenIn) -> Seen<'a> {
    Seen {
        device: run.device,
        nim,
        nif,
        tc,
        seen_in,
    }
}

/// 38h with the box's totals, and what its answer means for the register.
async fn finalize(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
    before: &Before,
    intent_id: IntentId,
    intent: &Intent,
    subtotal: &Subtotal,
) -> Result<RegisterEntry, RunFailure> {
    let credit_note = run.job.invoice.invoice_type.is_credit_note();
    match session
        .finalize(subtotal.finalize_totals(), credit_note)
        .await
    {
        Ok(FinalizeOutcome::Certified(certification)) => {
            failpoint::hit("after_finalize");
            if certification
                .rn
                .as_deref()
                .is_some_and(|rn| rn != run.job.invoice.rn)
            {
                // The box answered for another invoice: do not trust it, ask C1h.
                error!(
                    device = run.device,
                    "38h answered with another FN; reconciling"
                );
                return reconcile_now(session, run, intent_id, intent).await;
            }
            // Journaled first: nothing but the fsync stands between R: and the register.
            let security = security_elements(&certification);
            match run.journal.certified(intent_id, security, "finalize").await {
                Ok(entry) => {
                    let state = &before.state;
                    report_certification_oddities(session, &run.job.invoice, state, &certification)
                        .await;
                    let seen = seen(
                        run,
                        &certification.mid,
                        &certification.nif,
                        certification.tc,
                        SeenIn::Certification,
                    );
                    run.journal
                        .check_continuity(before.known.as_ref(), seen)
                        .await;
                    Ok(entry)
                }
                Err(error) => {
                    // The device certified it: the intent stays open and is settled from C1h
                    // once the register can be written again. Never lost, never answered 200.
                    error!(device = run.device, %error, "certified on the device but not journaled");
                    Err(RunFailure::InDoubt(intent_id))
                }
            }
        }
        Ok(FinalizeOutcome::Refused(text)) => {
            cancel(session, run.device).await;
            let reason = format!("refused by the device: {text}");
            run.journal.abandoned(intent_id, reason).await?;
            Err(CertifyError::DeviceRefused { text }.into())
        }
        Err(DeviceError::Encode(field)) => {
            // Nothing was sent: the totals did not encode.
            cancel(session, run.device).await;
            let reason = format!("38h not sent: {field}");
            run.journal.abandoned(intent_id, reason).await?;
            Err(CertifyError::Internal(format!("38h could not be encoded: {field}")).into())
        }
        Err(other) => {
            warn!(device = run.device, error = %other, "outcome of 38h unknown; reconciling");
            reconcile_now(session, run, intent_id, intent).await
        }
    }
}

/// C1h: the device state, needed for its NIF, counters and tax rates. When the state cannot
/// be read but its NIF can, a NIF of another taxpayer still says so (153).
async fn device_state(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
) -> Result<DeviceState, CertifyError> {
    match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => Ok(state),
        // Not the client's invoice that is refused: the box will not say what it is.
        Ok(Reply::Refused(text)) => Err(CertifyError::DeviceNotReady {
            reason: if text.is_empty() {
                msg!("reason-state-refused-silently")
            } else {
                msg!("reason-state-refused", text = text)
            },
        }),
        Ok(other) => Err(CertifyError::Internal(format!(
            "unexpected answer to C1h: {other:?}"
        ))),
        Err(DeviceError::UnreadableState { nif: Some(nif), .. })
            if run.job.environment == Environment::Production && nif != run.job.org.nif =>
        {
            Err(CertifyError::WrongDevice {
                device_nif: nif,
                org_nif: run.job.org.nif.clone(),
            })
        }
        Err(error) => Err(unavailable(error)),
    }
}

/// Reconciles the intent on the same session right away; if the device cannot tell now,
/// the intent stays open (in doubt).
async fn reconcile_now(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
    intent_id: IntentId,
    intent: &Intent,
) -> Result<RegisterEntry, RunFailure> {
    match settle(session, run.journal, intent_id, intent).await {
        Ok(Settled::Certified(entry)) => Ok(*entry),
        Ok(Settled::Abandoned) => Err(CertifyError::DeviceUnavailable {
            reason: msg!("reason-not-confirmed-cancelled"),
            retry_after: Duration::from_secs(2),
        }
        .into()),
        Err(SettleError::Unreachable(reason)) => {
            warn!(device = run.device, %reason, "reconciliation must wait for the device");
            Err(RunFailure::InDoubt(intent_id))
        }
        Err(SettleError::CannotTell(reason)) => {
            error!(device = run.device, %reason, "reconciliation cannot conclude");
            Err(RunFailure::InDoubt(intent_id))
        }
        Err(SettleError::Store(error)) => {
            error!(device = run.device, %error, "reconciliation could not be journaled");
            Err(RunFailure::InDoubt(intent_id))
        }
    }
}

fn intent_of(run: &Run<'_>, subtotal: &Subtotal, expected: Option<&Subtotal>, tc: u64) -> Intent {
    let job = run.job;
    // The USD total the API answers: the gateway's own (PROTOCOL.md §8, from the box's MV,
    // equal to the gateway's), the box's MCUR when it cannot be computed.
    let usd_equivalent: Option<Decimal> = job.invoice.usd_rate.as_ref().and_then(|_| {
        expected
            .and_then(Subtotal::usd_equivalent)
            .or_else(|| subtotal.usd_equivalent())
    });
    Intent {
        org: job.org.id.clone(),
        environment: job.environment,
        rn: job.invoice.rn.clone(),
        invoice_type: job.invoice.invoice_type.to_string(),
        key_id: job.key_id.clone(),
        device: run.device.to_string(),
        request_digest: job.invoice.digest.clone(),
        received_at: job.received_at,
        totals: device_totals(subtotal, usd_equivalent),
        nif: job.org.nif.clone(),
        isf: job.org.isf.clone(),
        idempotency_key: job.idempotency_key.clone(),
        device_tc: Some(tc),
        channel_ref: None,
        invoice: Some(job.invoice.canonical.clone()),
    }
}
