//! One invoice on the box (docs/design.md §4): its place in the box's order (`BoxWaiting`),
//! the port leased (`BoxLane`), then one session on that port in the invoice's own task
//! (`BoxLane::certify`): C1h (ready, NIF, no stale invoice, rates), the invoice's commands
//! (`commands.rs`), intent journaled with the register's view of the box, C1h's counters
//! checked against that view (register_behind.rs, continuity.rs), 38h, certification
//! journaled. Any failure before 38h cancels (38h `C`) so the box is never left
//! blocked; an unknown 38h outcome is settled from C1h (`settle_from_c1h.rs`), never resent or
//! cancelled blindly.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;

use mcf_sfe::reply::{DeviceState, Subtotal};
use mcf_sfe::{Command, Reply};
use rust_decimal::Decimal;
use tracing::{error, warn};

use super::commands::{cancel, device_totals, prepare, security_elements};
use super::readings::{rates_for, report_certification_oddities};
use super::settle_from_c1h::{settle, BoxSettled, SettleError};
use super::unavailable;
use crate::certify::channel::{Job, OnChannel, RunFailure};
use crate::certify::continuity::{Seen, SeenIn};
use crate::certify::invoice::Seller;
use crate::certify::register_behind::Said;
use crate::certify::register_writer::RegisterWriter;
use crate::certify::CertifyError;
use crate::device::{DeviceError, DeviceHandle, FinalizeOutcome, Lease, PortSession, Turn};
use crate::failpoint;
use crate::model::{BoxCounters, DeviceView, Environment, Intent, IntentId, RegisterEntry};
use crate::msg;

/// One invoice's run: the job, the register, the device's name.
struct Run<'a> {
    pub job: &'a Job,
    pub journal: &'a RegisterWriter,
    pub device: &'a str,
}

/// What C1h said before the invoice, and what the register knew of the box then.
struct Before {
    state: DeviceState,
    known: Option<BoxCounters>,
}

/// A place in the box's arrival order.
pub struct BoxWaiting {
    pub(super) device: DeviceHandle,
    pub(super) turn: Turn,
}

impl BoxWaiting {
    /// The port leased, after every earlier arrival.
    pub(crate) async fn acquire(self) -> Result<BoxLane, CertifyError> {
        let BoxWaiting { device, turn } = self;
        let lease = device.lease_in_turn(turn).await.map_err(unavailable)?;
        Ok(BoxLane { lease })
    }
}

/// The box's port, leased for one invoice.
pub struct BoxLane {
    lease: Lease,
}

impl BoxLane {
    /// One invoice on the leased port, in the invoice's own task: each command is one call on
    /// the port, with no hop between tasks. The box is marked in doubt before the lease (and
    /// with it the port) is given back.
    pub(crate) async fn certify(
        mut self,
        job: Job,
        journal: RegisterWriter,
    ) -> Result<RegisterEntry, RunFailure> {
        let mut session = self.lease.session();
        let device = session.device().to_owned();
        let run = Run {
            job: &job,
            journal: &journal,
            device: &device,
        };
        // A bug that panics mid-invoice must not leave an intent behind unnoticed: the
        // device is then treated as in doubt until reconciliation finds nothing open. The
        // whole run is inside, so that no panic drops the lease before the mark.
        let outcome = AssertUnwindSafe(async {
            // The request beside the bytes it became, in the wire capture if one is written:
            // a capture that can be replayed as a regression test (tests/device/captures.rs).
            if session.capturing() {
                if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&job.body) {
                    session.annotate_capture(format!("invoice {value}")).await;
                }
            }
            run_invoice(&mut session, &run).await
        })
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            error!(
                "the certification panicked: settling the device before it takes another invoice"
            );
            Err(RunFailure::Panicked)
        });
        if matches!(outcome, Err(RunFailure::InDoubt(_) | RunFailure::Panicked)) {
            // Marked before the lease is dropped, so that nothing else runs on the box first.
            job.in_doubt.mark(&device);
        }
        outcome
    }
}

/// Runs the whole invoice on `session`.
async fn run_invoice(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
) -> Result<RegisterEntry, RunFailure> {
    let state = check_state(session, run).await?;
    let rates = rates_for(&run.job.invoice, &state, session.fallback_rates())?;
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
    failpoint::pause("before_intent").await;
    let intent = intent_of(run, &subtotal, expected.as_ref(), state.tc);
    // What the register held of this box before this invoice, read with its intent
    // (production: a sandbox box is one of the gateway's own simulators).
    let production = run.job.environment == Environment::Production;
    let view_of = production.then(|| state.mid.clone());
    let quota = run.job.quota;
    let (intent_id, view) = match run.journal.intent(intent.clone(), quota, view_of).await {
        Ok(journaled) => journaled,
        Err(refused) => {
            // Never finalized while the register cannot write: the certification could not
            // be journaled. An intent journaled meanwhile is settled from C1h (not finalized)
            // once the register can be written again; the box waits until then.
            cancel(session, run.device).await;
            if refused.journaled.is_some() {
                run.job.in_doubt.mark(run.device);
            }
            return Err(refused.error.into());
        }
    };
    failpoint::hit("after_intent");
    let known = against_register(session, run, &state, intent_id, view).await?;
    let before = Before { state, known };
    finalize(session, run, &before, intent_id, &intent, &subtotal).await
}

/// C1h, then what it must show before an invoice: the organization's NIF (153 otherwise,
/// whatever else is odd), no invoice left open (cancelled). Its counters are compared with the
/// register's once the intent is journaled ([`against_register`]).
async fn check_state(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
) -> Result<DeviceState, CertifyError> {
    let state = device_state(session, run).await?;
    let production = run.job.environment == Environment::Production;
    if production && state.nif != run.job.org.nif {
        return Err(CertifyError::WrongDevice {
            device_nif: state.nif,
            org_nif: run.job.org.nif.clone(),
        });
    }
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
    Ok(state)
}

/// The C1h read before the invoice against the register as `view` holds it (read with the
/// intent: `None` in the sandbox), before 38h. A box ahead of its register (certifications
/// the register lost) certifies nothing (register_behind.rs): the invoice open on the box is
/// cancelled, so that its counter does not move, the intent abandoned (on PostgreSQL its
/// quota unit given back), 171. Then counter continuity; returns what the register knew of
/// the box before this invoice, which its certification is checked against too.
async fn against_register(
    session: &mut PortSession<'_>,
    run: &Run<'_>,
    state: &DeviceState,
    intent_id: IntentId,
    view: Option<DeviceView>,
) -> Result<Option<BoxCounters>, RunFailure> {
    let Some(view) = view else {
        return Ok(None);
    };
    let said = Said {
        device: run.device,
        nim: &state.mid,
        nif: &state.nif,
        tc: state.tc,
        seen_in: "C1h",
        explained: Vec::new(),
        last: super::readings::last_invoice(state.tc, &state.last),
    };
    if let Err(refused) = run.journal.check_ahead(said, &view).await {
        cancel(session, run.device).await;
        let reason = format!("not finalized: {refused}");
        if let Err(error) = run.journal.abandoned(intent_id, reason).await {
            // Settled from C1h (not finalized: the box's counter did not move for it) once
            // the register can be written; the box waits until then. The store's error is
            // the failure, so that the service marks the box and starts its settling (the
            // stop answers 171 to the next invoices).
            error!(device = run.device, %error, "an intent not finalized could not be journaled as abandoned");
            run.job.in_doubt.mark(run.device);
            return Err(error.into());
        }
        return Err(refused.into());
    }
    let seen = seen(run, &state.mid, &state.nif, state.tc, SeenIn::State);
    run.journal
        .check_continuity(view.known.as_ref(), seen)
        .await;
    Ok(view.known)
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
            failpoint::pause("after_finalize").await;
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
            match run
                .journal
                .certified(intent_id, intent, security, "finalize")
                .await
            {
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
        Ok(BoxSettled::Certified(entry)) => Ok(*entry),
        Ok(BoxSettled::Abandoned) => Err(CertifyError::DeviceUnavailable {
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
    let totals = device_totals(subtotal, usd_equivalent);
    job.intent(run.device, totals, OnChannel::Box { tc })
}
