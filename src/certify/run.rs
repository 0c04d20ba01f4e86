//! One invoice on the device, as one session (DESIGN.md section 4, steps 5 to 7):
//! C1 (ready, NIF, no stale invoice), C3, C0, 31..., 36..., 33 (compared with the gateway's own
//! computation), payments checked then 35..., intent journaled, 38, certification journaled.
//! Any failure before 38 cancels (38 `C`) so the box is never left blocked; an unknown 38
//! outcome is reconciled from C1h, never resent or cancelled blindly.

use std::sync::Arc;

use std::time::Duration;

use chrono::{DateTime, FixedOffset, Utc};
use mcf_sfe::command::code;
use mcf_sfe::reply::{Anomaly, DeviceState, Subtotal};
use mcf_sfe::types::TaxGroup;
use mcf_sfe::{Command, Reply};
use rust_decimal::Decimal;
use tracing::{error, info, warn};

use crate::certify::compare::compare_subtotal;
use crate::certify::continuity::{self, SeenIn};
use crate::certify::readings::{rates_for, report_certification_oddities};
use crate::certify::reconcile::{settle, SettleError, Settled};
use crate::certify::record::{self, record_abandonment, record_certification};
use crate::certify::validate::{Seller, ValidInvoice};
use crate::certify::CertifyError;
use crate::device::{DeviceError, FinalizeOutcome, Session};
use crate::failpoint;
use crate::model::{DeviceTotals, Environment, Intent, IntentId, Organization, RegisterEntry};
use crate::store::Store;

/// Everything one run needs besides the session.
pub(crate) struct RunContext<'a> {
    pub store: &'a Arc<Store>,
    pub org: &'a Organization,
    pub environment: Environment,
    pub key_id: &'a str,
    pub device: &'a str,
    pub invoice: &'a ValidInvoice,
    pub received_at: DateTime<Utc>,
    pub offset: FixedOffset,
    pub idempotency_key: Option<String>,
}

/// How a run ended when it did not certify.
pub(crate) enum RunFailure {
    /// Nothing is open on the device and nothing is pending: a plain error.
    Failed(CertifyError),
    /// 38h was sent and its outcome is still unknown: the intent stays open and must be
    /// reconciled before the device takes another invoice.
    InDoubt(IntentId),
    /// The run panicked (a bug): whether an intent is open is not known here, so the device
    /// is settled like one in doubt.
    Panicked,
}

impl From<CertifyError> for RunFailure {
    fn from(error: CertifyError) -> Self {
        RunFailure::Failed(error)
    }
}

/// Runs the whole invoice on `session`.
pub(crate) async fn run_invoice(
    session: &mut Session,
    ctx: &RunContext<'_>,
) -> Result<RegisterEntry, RunFailure> {
    let state = device_state(session, ctx).await?;
    let production = ctx.environment == Environment::Production;
    // First the NIF: a box of another taxpayer is that (153), whatever else is odd.
    if production && state.nif != ctx.org.nif {
        return Err(CertifyError::WrongDevice {
            device_nif: state.nif,
            org_nif: ctx.org.nif.clone(),
        }
        .into());
    }
    // What the register knew of this box before this invoice: the C1h now and the R: later
    // are both checked against it.
    let known = if production {
        continuity::known(ctx.store, &state.mid).await
    } else {
        None
    };
    let seen = |nim, nif, tc, seen_in| continuity::Seen {
        device: ctx.device,
        nim,
        nif,
        tc,
        seen_in,
    };
    continuity::check(
        ctx.store,
        known.as_ref(),
        seen(&state.mid, &state.nif, state.tc, SeenIn::State),
    )
    .await;
    match session.invoice_open() {
        Some(false) => {}
        Some(true) => {
            warn!(
                device = ctx.device,
                "an invoice was left open on the device: cancelling it"
            );
            cancel(session, ctx.device).await;
        }
        // A box whose status bytes are not read: cancel whatever may be open (PROTOCOL.md §7).
        None => cancel(session, ctx.device).await,
    }
    let rates = rates_for(ctx.invoice, &state, session.fallback_rates())?;
    let (subtotal, expected) = match prepare(session, ctx, &rates).await {
        Ok(prepared) => prepared,
        Err(error) => {
            cancel(session, ctx.device).await;
            return Err(error.into());
        }
    };
    failpoint::hit("before_intent");
    let intent = intent_of(ctx, &subtotal, expected.as_ref(), state.tc);
    let journaled = intent.clone();
    let intent_id =
        match record::blocking(ctx.store, move |store| store.record_intent(journaled)).await {
            Ok(id) => id,
            Err(error) => {
                cancel(session, ctx.device).await;
                return Err(error.into());
            }
        };
    failpoint::hit("after_intent");
    let credit_note = ctx.invoice.invoice_type.is_credit_note();
    match session
        .finalize(subtotal.finalize_totals(), credit_note)
        .await
    {
        Ok(FinalizeOutcome::Certified(certification)) => {
            failpoint::hit("after_finalize");
            if certification
                .rn
                .as_deref()
                .is_some_and(|rn| rn != ctx.invoice.rn)
            {
                // The box answered for another invoice: do not trust it, ask C1h.
                error!(
                    device = ctx.device,
                    "38h answered with another FN; reconciling"
                );
                return reconcile_now(session, ctx, intent_id, &intent).await;
            }
            // Journaled first: nothing but the fsync stands between R: and the register.
            match record_certification(ctx.store, ctx.offset, intent_id, &certification, "finalize")
                .await
            {
                Ok(entry) => {
                    report_certification_oddities(session, ctx.invoice, &state, &certification)
                        .await;
                    continuity::check(
                        ctx.store,
                        known.as_ref(),
                        seen(
                            &certification.mid,
                            &certification.nif,
                            certification.tc,
                            SeenIn::Certification,
                        ),
                    )
                    .await;
                    Ok(entry)
                }
                Err(error) => {
                    // The device certified it: the intent stays open and is settled from C1h
                    // once the register can be written again. Never lost, never answered 200.
                    error!(device = ctx.device, %error, "certified on the device but not journaled");
                    Err(RunFailure::InDoubt(intent_id))
                }
            }
        }
        Ok(FinalizeOutcome::Refused(text)) => {
            cancel(session, ctx.device).await;
            let reason = format!("refused by the device: {text}");
            record_abandonment(ctx.store, intent_id, reason).await?;
            Err(CertifyError::DeviceRefused { text }.into())
        }
        Err(DeviceError::Encode(field)) => {
            // Nothing was sent: the totals did not encode.
            cancel(session, ctx.device).await;
            record_abandonment(ctx.store, intent_id, format!("38h not sent: {field}")).await?;
            Err(CertifyError::Internal(format!("38h could not be encoded: {field}")).into())
        }
        Err(other) => {
            warn!(device = ctx.device, error = %other, "outcome of 38h unknown; reconciling");
            reconcile_now(session, ctx, intent_id, &intent).await
        }
    }
}

/// C1h: the device state, needed for its NIF, counters and tax rates. When the state cannot
/// be read but its NIF can, a NIF of another taxpayer still says so (153).
async fn device_state(
    session: &mut Session,
    ctx: &RunContext<'_>,
) -> Result<DeviceState, CertifyError> {
    match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => Ok(state),
        // Not the client's invoice that is refused: the box will not say what it is.
        Ok(Reply::Refused(text)) => Err(CertifyError::DeviceNotReady {
            reason: format!(
                "it refused to give its state (C1h): {}",
                if text.is_empty() { "no text" } else { &text }
            ),
        }),
        Ok(other) => Err(CertifyError::Internal(format!(
            "unexpected answer to C1h: {other:?}"
        ))),
        Err(DeviceError::UnreadableState { nif: Some(nif), .. })
            if ctx.environment == Environment::Production && nif != ctx.org.nif =>
        {
            Err(CertifyError::WrongDevice {
                device_nif: nif,
                org_nif: ctx.org.nif.clone(),
            })
        }
        Err(error) => Err(CertifyError::from_device(error)),
    }
}

/// C3, C0, items, comments, 33 (checked), payments (checked): everything before the intent.
/// Returns the box's subtotal and the gateway's own, when the rates let it compute one.
async fn prepare(
    session: &mut Session,
    ctx: &RunContext<'_>,
    rates: &[Option<Decimal>; TaxGroup::COUNT],
) -> Result<(Subtotal, Option<Subtotal>), CertifyError> {
    let invoice = ctx.invoice;
    let seller = Seller {
        nif: ctx.org.nif.clone(),
        isf: ctx.org.isf.clone(),
    };
    let expected = invoice.expected_subtotal(rates);
    if let Some(expected) = &expected {
        if expected.total.is_zero() {
            // The box takes only positive payments and needs one to finalize.
            return Err(CertifyError::ZeroTotal);
        }
        if Reply::Subtotal(expected.clone())
            .encode(code::SUBTOTAL)
            .is_err()
        {
            return Err(CertifyError::TotalsTooLarge);
        }
    }
    // Always sent, empty when there is no client: it also clears a client left by an
    // invoice that was cancelled.
    expect_done(session, Command::SetClient(invoice.client.clone())).await?;
    expect_done(session, Command::OpenInvoice(invoice.open_command(&seller))).await?;
    for item in &invoice.items {
        let rate = rates[item.group.index()];
        expect_done(session, Command::Item(item.to_command(rate))).await?;
    }
    for comment in &invoice.comments {
        expect_done(session, Command::Comment(comment.clone())).await?;
    }
    let subtotal = match session
        .execute(Command::Subtotal)
        .await
        .map_err(CertifyError::from_device)?
    {
        Reply::Subtotal(subtotal) => subtotal,
        Reply::Refused(text) => return Err(CertifyError::DeviceRefused { text }),
        other => {
            return Err(CertifyError::Internal(format!(
                "unexpected answer to 33h: {other:?}"
            )))
        }
    };
    if let Some(expected) = &expected {
        compare_subtotal(expected, &subtotal)?;
        if expected.mcur != subtotal.mcur {
            // Information only: some boxes send 0.00, or nothing, for every invoice.
            let anomaly = Anomaly {
                field: "MCUR",
                raw: subtotal.mcur.clone(),
                expected:
                    "the invoice's total at its USD rate, or empty without one (PROTOCOL.md §8)",
            };
            session.report_anomaly(code::SUBTOTAL, anomaly).await;
        }
    }
    let paid = invoice.payments_total();
    if !invoice.payments.is_empty() && paid < subtotal.total {
        return Err(CertifyError::PaymentsShort {
            paid,
            total: subtotal.total,
        });
    }
    for payment in invoice.payment_commands(subtotal.total) {
        expect_done(session, Command::Payment(payment)).await?;
    }
    Ok((subtotal, expected))
}

/// Sends a command whose only good answer is an empty reply.
async fn expect_done(session: &mut Session, command: Command) -> Result<(), CertifyError> {
    let code = command.code();
    match session
        .execute(command)
        .await
        .map_err(CertifyError::from_device)?
    {
        Reply::Done => Ok(()),
        Reply::Refused(text) => Err(CertifyError::DeviceRefused { text }),
        other => Err(CertifyError::Internal(format!(
            "unexpected answer to {code:02X}h: {other:?}"
        ))),
    }
}

/// 38h `C`, best effort: the box must not stay blocked, and a refusal means nothing was open.
pub(crate) async fn cancel(session: &mut Session, device: &str) {
    match session.execute(Command::Cancel).await {
        Ok(Reply::Refused(text)) => info!(device, %text, "cancel: nothing to cancel"),
        Ok(_) => info!(device, "open invoice cancelled"),
        Err(error) => warn!(device, %error, "cancel could not be sent"),
    }
}

/// Reconciles the intent on the same session right away; if the device cannot tell now,
/// the intent stays open (in doubt).
async fn reconcile_now(
    session: &mut Session,
    ctx: &RunContext<'_>,
    intent_id: IntentId,
    intent: &Intent,
) -> Result<RegisterEntry, RunFailure> {
    match settle(session, ctx.store, ctx.offset, intent_id, intent).await {
        Ok(Settled::Certified(entry)) => Ok(*entry),
        Ok(Settled::Abandoned) => Err(CertifyError::DeviceUnavailable {
            reason:
                "the device did not confirm the invoice; it was cancelled and nothing was certified"
                    .to_string(),
            retry_after: Duration::from_secs(2),
        }
        .into()),
        Err(SettleError::Unreachable(reason)) => {
            warn!(device = ctx.device, %reason, "reconciliation must wait for the device");
            Err(RunFailure::InDoubt(intent_id))
        }
        Err(SettleError::CannotTell(reason)) => {
            error!(device = ctx.device, %reason, "reconciliation cannot conclude");
            Err(RunFailure::InDoubt(intent_id))
        }
        Err(SettleError::Store(error)) => {
            error!(device = ctx.device, %error, "reconciliation could not be journaled");
            Err(RunFailure::InDoubt(intent_id))
        }
    }
}

fn intent_of(
    ctx: &RunContext<'_>,
    subtotal: &Subtotal,
    expected: Option<&Subtotal>,
    device_tc: u64,
) -> Intent {
    // The USD total the API answers: the gateway's own (PROTOCOL.md §8, from the box's MV,
    // equal to the gateway's), the box's MCUR when it cannot be computed.
    let usd_equivalent = ctx.invoice.usd_rate.as_ref().and_then(|_| {
        expected
            .and_then(Subtotal::usd_equivalent)
            .or_else(|| subtotal.usd_equivalent())
    });
    Intent {
        org: ctx.org.id.clone(),
        environment: ctx.environment,
        rn: ctx.invoice.rn.clone(),
        invoice_type: ctx.invoice.invoice_type.to_string(),
        key_id: ctx.key_id.to_string(),
        device: ctx.device.to_string(),
        request_digest: ctx.invoice.digest.clone(),
        received_at: ctx.received_at,
        totals: device_totals(subtotal, usd_equivalent),
        nif: ctx.org.nif.clone(),
        isf: ctx.org.isf.clone(),
        idempotency_key: ctx.idempotency_key.clone(),
        device_tc: Some(device_tc),
    }
}

/// The device's totals, keeping only the groups that have an amount.
pub(crate) fn device_totals(subtotal: &Subtotal, usd_equivalent: Option<Decimal>) -> DeviceTotals {
    let pick = |amounts: &[Decimal; TaxGroup::COUNT]| {
        TaxGroup::all()
            .zip(amounts.iter())
            .filter(|(_, amount)| !amount.is_zero())
            .map(|(group, amount)| (group.letter(), *amount))
            .collect::<Vec<_>>()
    };
    DeviceTotals {
        total: subtotal.total,
        vat: subtotal.vat(),
        group_ttc: pick(&subtotal.group_ttc),
        group_vat: pick(&subtotal.group_vat),
        specific_tax: subtotal.specific_tax,
        usd_equivalent,
        mcur: (!subtotal.mcur.is_empty()).then(|| subtotal.mcur.clone()),
    }
}
