//! The certification's last steps, once an invoice is admitted: acquire its channel (503
//! while it is in doubt, down or full), run it to the end in a task of its own (even if the
//! client leaves), and conclude from how the run ended (a store failure settles the channel,
//! a certification not journaled is kept: `certify/unrecorded.rs`).

use super::*;

impl Certifier {
    /// Acquire: the channel (a sandbox is started now), after every earlier arrival; 503 when
    /// it cannot be had or is in doubt. A client that leaves while queued here costs nothing.
    pub(super) async fn acquire(
        &self,
        principal: &Principal,
        arrival: Arrival,
    ) -> Result<(SharedChannel, Lane), CertifyError> {
        let (channel, waiting) = match arrival.place {
            Some(place) => place,
            None => {
                let channel = self
                    .channels
                    .for_invoice(&principal.org, principal.environment)
                    .await?;
                let waiting = channel.arrive();
                (channel, waiting)
            }
        };
        self.in_doubt.refuse(channel.name())?;
        let lane = waiting.acquire().await?;
        // Checked again with the channel held: an invoice in doubt must be settled before the
        // channel finalizes anything else, or it could no longer tell.
        self.in_doubt.refuse(channel.name())?;
        self.journal.registers_behind().refuse(channel.name())?;
        Ok((channel, lane))
    }

    /// Certify: on the channel, in a task of its own that runs to the end even if the client
    /// leaves (hyper drops the handler future); the claims are held until it ends.
    pub(super) async fn run(
        self: &Arc<Self>,
        channel: SharedChannel,
        lane: Lane,
        job: Job,
        held: Held,
    ) -> Result<RegisterEntry, CertifyError> {
        let this = Arc::clone(self);
        let name = channel.name().to_owned();
        let rn = job.invoice.rn.clone();
        let span = tracing::info_span!("invoice", org = %job.org.id, rn = %rn, device = %name);
        let task = tokio::spawn(
            async move {
                let _held = held;
                let in_doubt = job.in_doubt.clone();
                // A lane that panics (a bug) may have left an intent open: its channel is
                // settled like one in doubt, whatever the channel.
                let outcome = AssertUnwindSafe(lane.certify(job, this.journal.clone()))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| {
                        error!("the certification panicked: settling the channel before it takes another invoice");
                        in_doubt.mark(&name);
                        Err(RunFailure::Panicked)
                    });
                this.conclude(&name, &rn, outcome).await
            }
            .instrument(span),
        );
        task.await
            .map_err(|e| CertifyError::Internal(format!("certification task failed: {e}")))?
    }

    /// Answer: what the run's outcome means for the client, and what it leaves to settle.
    async fn conclude(
        self: &Arc<Self>,
        channel: &str,
        rn: &str,
        outcome: Result<RegisterEntry, RunFailure>,
    ) -> Result<RegisterEntry, CertifyError> {
        match outcome {
            Ok(entry) => {
                failpoint::hit("after_certified");
                info!(sequence = entry.sequence, "certified");
                for warning in self.warnings(&entry).await {
                    warn!(
                        sequence = entry.sequence,
                        code = warning.code,
                        "certified with a warning: {}",
                        warning.message
                    );
                }
                Ok(entry)
            }
            Err(RunFailure::Failed(CertifyError::Store(error))) => {
                // Told by the error itself, not by what the watch sees after it (the journal
                // may have resumed meanwhile, or the index been reopening).
                let this = Arc::clone(self);
                let (error, kind) = tokio::task::spawn_blocking(move || {
                    let kind = this.unwritable_kind(&error);
                    (error, kind)
                })
                .await
                .map_err(crate::certify::register_writer::task_failed)?;
                self.observe_storage().await;
                if matches!(error, StoreError::Damaged { .. }) {
                    self.store_failed.store(true, Ordering::SeqCst);
                    return Err(CertifyError::Store(error));
                }
                // What was written before it may leave an intent open (an abandon not
                // journaled): the channel is settled before it takes another invoice, once
                // the register can be written again.
                self.in_doubt.mark(channel);
                self.reconciler.spawn(channel.to_owned());
                match kind {
                    Some(kind) => Err(CertifyError::RegisterUnwritable { kind }),
                    None => Err(CertifyError::Store(error)),
                }
            }
            Err(RunFailure::Failed(error)) => Err(error),
            Err(RunFailure::Panicked) => {
                self.reconciler.spawn(channel.to_owned());
                Err(CertifyError::Internal(
                    "the certification failed unexpectedly; the gateway settles it with the device"
                        .to_string(),
                ))
            }
            Err(RunFailure::InDoubt(intent)) if self.journal.unrecorded().contains(intent) => {
                // Certified on the channel, not journaled yet: kept, and journaled as soon as
                // the register can be written; the channel waits until then.
                self.observe_storage().await;
                self.reconciler.spawn(channel.to_owned());
                Err(self.not_recorded(rn, channel))
            }
            Err(RunFailure::InDoubt(intent)) => {
                warn!(
                    intent,
                    "outcome unknown: the device takes no invoice until settled"
                );
                self.reconciler.spawn(channel.to_owned());
                Err(CertifyError::OutcomeUnknown {
                    rn: rn.to_owned(),
                    retry_after: Duration::from_secs(5),
                })
            }
        }
    }
}
