//! Invoices in doubt that only an administrator can settle (a web API confirm whose answer
//! was lost and whose uid left the DGI's pending list): listed with why, counted for
//! `/metrics` and the dashboard, and settled by a person (`emcf-gateway intent list` /
//! `intent resolve`): certified with the security elements read on the DGI's portal, or not
//! certified. Either is journaled with who and when; nothing is guessed by the gateway.
//!
//! What a person types becomes the register's security elements: each is checked against
//! the form the channel produces ([`elements`]), and a codeDEFDGI the register already holds
//! (the original's, pasted for its credit note) is refused.

mod elements;

use elements::check_free_text;
pub use elements::Expected;

use chrono::{DateTime, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use tracing::warn;

use super::register_writer::blocking;
use super::{Certifier, CertifyError, Principal};
use crate::i18n::{Lang, Message};
use crate::model::{Environment, IntentId, RegisterEntry, SecurityElements};
use crate::msg;

/// An open intent, as an administrator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIntent {
    /// Its id (what `intent resolve` takes).
    pub intent: IntentId,
    /// Organization.
    pub org: String,
    /// Production or sandbox.
    pub environment: Environment,
    /// The client's invoice number.
    pub rn: String,
    /// FV, FA...
    pub invoice_type: String,
    /// The channel it ran on.
    pub device: String,
    /// When the request arrived (UTC).
    pub received_at: DateTime<Utc>,
    /// The total the channel computed.
    pub total: Decimal,
    /// The channel's id of the request (the web API's uid), to look it up on the DGI's portal.
    pub channel_ref: Option<String>,
    /// `awaiting_administrator` or `settling` (the gateway is still asking the channel).
    pub state: String,
    /// Why it waits for an administrator.
    pub reason: Option<String>,
}

/// What an administrator found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Resolution {
    /// Certified, with the security elements read from the DGI's portal.
    Certified {
        /// codeDEFDGI.
        code_def: String,
        /// The QR code's text.
        qr_code: String,
        /// `FC/TC type`.
        counters: String,
        /// The e-MCF's NIM.
        nim: String,
        /// The certification's date-time, `yyyy-MM-ddTHH:mm:ss`.
        date_time: NaiveDateTime,
    },
    /// Not certified (the DGI shows no such invoice): the rn may be certified again.
    NotCertified,
}

/// Why an intent could not be settled as asked.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Who settles it is journaled: a name is needed.
    #[error("{}", self.describe(Lang::En))]
    NoName,
    /// The intent is not one waiting for an administrator.
    #[error("{}", self.describe(Lang::En))]
    NotAwaiting(IntentId),
    /// A security element read from the portal (or the name, the note) is missing or not of
    /// the form expected.
    #[error("{0}")]
    BadElement(BadElement),
    /// The register could not take it.
    #[error(transparent)]
    Certify(#[from] CertifyError),
}

/// Which field an administrator typed wrong, and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BadElement {
    /// `codeDEFDGI`, `qrCode`, `counters`, `nim`, `by` or `note`.
    pub field: &'static str,
    /// What is wrong and the form expected, naming the field.
    pub message: Message,
}

fn bad(field: &'static str, message: Message) -> ResolveError {
    ResolveError::BadElement(BadElement { field, message })
}

impl ResolveError {
    /// What is wrong, in `lang` (`Display` is the English, for logs).
    pub fn describe(&self, lang: Lang) -> String {
        match self {
            ResolveError::NoName => msg!("resolve-no-name").render(lang),
            ResolveError::NotAwaiting(id) => msg!("resolve-not-awaiting", id = *id).render(lang),
            ResolveError::BadElement(bad) => bad.message.render(lang),
            ResolveError::Certify(error) => error.describe(lang),
        }
    }
}

impl Certifier {
    /// The open intents of the register, each with whether it waits for an administrator.
    pub fn open_intents(&self) -> Result<Vec<OpenIntent>, CertifyError> {
        let awaiting = self.awaiting_everywhere()?;
        Ok(self
            .store
            .open_intents()?
            .into_iter()
            .map(|(id, intent)| {
                let reason = awaiting
                    .iter()
                    .find(|(other, _)| *other == id)
                    .map(|(_, why)| why.clone());
                OpenIntent {
                    intent: id,
                    org: intent.org,
                    environment: intent.environment,
                    rn: intent.rn,
                    invoice_type: intent.invoice_type,
                    device: intent.device,
                    received_at: intent.received_at,
                    total: intent.totals.total,
                    channel_ref: intent.channel_ref,
                    state: if reason.is_some() {
                        "awaiting_administrator".into()
                    } else {
                        "settling".into()
                    },
                    reason,
                }
            })
            .collect())
    }

    /// The invoices of organization `org` waiting for an administrator (the dashboard's).
    pub fn in_doubt_of(&self, org: &str) -> Result<Vec<OpenIntent>, CertifyError> {
        Ok(self
            .open_intents()?
            .into_iter()
            .filter(|open| open.org == org && open.reason.is_some())
            .collect())
    }

    /// Every intent waiting for an administrator, and why, over all channels.
    pub fn awaiting_administrator(&self) -> Vec<(IntentId, String)> {
        self.channels
            .all()
            .into_iter()
            .flat_map(|(channel, _)| channel.awaiting_administrator())
            .collect()
    }

    /// The invoices waiting for an administrator, as this process's channels keep them and
    /// as any replica said in the register (blocking: a read of the store).
    fn awaiting_everywhere(&self) -> Result<Vec<(IntentId, String)>, CertifyError> {
        Ok(self.with_awaiting_of_others(self.store.awaiting_administrator()?))
    }

    /// [`Certifier::awaiting_everywhere`], the store read off the runtime's workers.
    async fn awaiting_now(&self) -> Result<Vec<(IntentId, String)>, CertifyError> {
        let marked = blocking(&self.store, |store| store.awaiting_administrator()).await?;
        Ok(self.with_awaiting_of_others(marked))
    }

    fn with_awaiting_of_others(&self, marked: Vec<(IntentId, String)>) -> Vec<(IntentId, String)> {
        let mut awaiting = self.awaiting_administrator();
        for (id, why) in marked {
            if !awaiting.iter().any(|(other, _)| *other == id) {
                awaiting.push((id, why));
            }
        }
        awaiting
    }

    /// The number of invoices waiting for an administrator, per channel.
    pub fn awaiting_counts(&self) -> Vec<(String, u64)> {
        self.channels
            .all()
            .into_iter()
            .map(|(channel, _)| {
                let count = channel.awaiting_administrator().len() as u64;
                (channel.name().to_owned(), count)
            })
            .collect()
    }

    /// Settles `intent` as `resolution`, journaled with `by` (who) and `note`. Only an intent
    /// the gateway says waits for an administrator can be settled this way.
    pub async fn resolve_intent(
        &self,
        intent: IntentId,
        resolution: Resolution,
        by: &str,
        note: &str,
    ) -> Result<Option<RegisterEntry>, ResolveError> {
        let by = by.trim();
        if by.is_empty() {
            return Err(ResolveError::NoName);
        }
        check_free_text("by", by)?;
        check_free_text("note", note)?;
        let awaiting = self.awaiting_now().await?;
        if !awaiting.iter().any(|(id, _)| *id == intent) {
            return Err(ResolveError::NotAwaiting(intent));
        }
        let Some((_, open)) = blocking(&self.store, |store| store.open_intents())
            .await?
            .into_iter()
            .find(|(id, _)| *id == intent)
        else {
            return Err(ResolveError::NotAwaiting(intent));
        };
        // Found so by another replica: settled here, as this replica's now.
        if !blocking(&self.store, move |store| store.adopt_awaiting(intent)).await? {
            return Err(ResolveError::NotAwaiting(intent));
        }
        // The QR code's form as this channel gives it: the organization's last entry
        // certified through it, if any.
        let model = self
            .store
            .org_entries_back(&open.org, open.environment, u64::MAX, 1, |entry| {
                entry.request.device == open.device
            })
            .map_err(CertifyError::from)?
            .into_iter()
            .next();
        let resolution = resolution.check(&Expected {
            invoice_type: &open.invoice_type,
            nif: &open.nif,
            model: model.as_ref(),
        })?;
        if let Resolution::Certified { code_def, .. } = &resolution {
            let reference = open
                .content()
                .and_then(Result::ok)
                .and_then(|content| content.reference);
            let taken = reference.as_deref() == Some(code_def.as_str())
                || self
                    .store
                    .holds_code(&open.org, open.environment, code_def)
                    .map_err(CertifyError::from)?;
            if taken {
                return Err(bad(
                    "codeDEFDGI",
                    msg!("resolve-code-def-taken", code_def = code_def.as_str()),
                ));
            }
        }
        let outcome = match resolution {
            Resolution::Certified {
                code_def,
                qr_code,
                counters,
                nim,
                date_time,
            } => {
                let security = SecurityElements {
                    code_def,
                    qr_code,
                    counters,
                    nim,
                    date_time,
                    date_time_as_sent: None,
                };
                let source = format!("administrator: {by}; {note}");
                Some(
                    self.journal
                        .certified(intent, &open, security, &source)
                        .await?,
                )
            }
            Resolution::NotCertified => {
                let reason = format!("settled by an administrator as not certified: {by}; {note}");
                self.journal.abandoned(intent, reason).await?;
                None
            }
        };
        warn!(rn = %open.rn, org = %open.org, %intent, by, "an invoice in doubt was settled by an administrator");
        if let Some(channel) = self.channels.by_name(&open.device) {
            channel.settled_by_administrator(intent);
        }
        Ok(outcome)
    }

    /// `InFlight` for an rn whose intent waits for an administrator says so.
    pub(super) async fn explain_in_flight(
        &self,
        principal: &Principal,
        error: CertifyError,
    ) -> CertifyError {
        let CertifyError::InFlight { rn } = &error else {
            return error;
        };
        let (org, environment, asked) =
            (principal.org.id.clone(), principal.environment, rn.clone());
        let open = blocking(&self.store, move |store| {
            store.open_intent_for(&org, environment, &asked)
        })
        .await
        .ok()
        .flatten();
        let Some(id) = open else { return error };
        let awaiting = self.awaiting_now().await.unwrap_or_default();
        if awaiting.iter().any(|(other, _)| *other == id) {
            return CertifyError::AwaitingAdministrator { rn: rn.clone() };
        }
        error
    }
}
