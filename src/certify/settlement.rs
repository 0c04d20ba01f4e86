//! Invoices in doubt that only an administrator can settle (a web API confirm whose answer
//! was lost and whose uid left the DGI's pending list): listed with why, counted for
//! `/metrics` and the dashboard, and settled by a person (`emcf-gateway intent list` /
//! `intent resolve`): certified with the security elements read on the DGI's portal, or not
//! certified. Either is journaled with who and when; nothing is guessed by the gateway.

use chrono::{DateTime, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use tracing::warn;

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
    /// A security element read from the portal is missing or malformed.
    #[error("{0}")]
    BadElement(Message),
    /// The register could not take it.
    #[error(transparent)]
    Certify(#[from] CertifyError),
}

impl ResolveError {
    /// What is wrong, in `lang` (`Display` is the English, for logs).
    pub fn describe(&self, lang: Lang) -> String {
        match self {
            ResolveError::NoName => msg!("resolve-no-name").render(lang),
            ResolveError::NotAwaiting(id) => msg!("resolve-not-awaiting", id = *id).render(lang),
            ResolveError::BadElement(message) => message.render(lang),
            ResolveError::Certify(error) => error.describe(lang),
        }
    }
}

/// Longest text of an element, a name or a note.
const MAX_TEXT: usize = 500;

impl Resolution {
    /// The elements as typed by a person: present, short, and `counters` as `FC/TC TYPE`.
    pub fn check(&self) -> Result<(), ResolveError> {
        let Resolution::Certified {
            code_def,
            qr_code,
            counters,
            nim,
            ..
        } = self
        else {
            return Ok(());
        };
        for (name, value) in [
            ("codeDEFDGI", code_def),
            ("qrCode", qr_code),
            ("counters", counters),
            ("nim", nim),
        ] {
            if value.trim().is_empty() {
                return Err(ResolveError::BadElement(msg!(
                    "resolve-element-missing",
                    name = name
                )));
            }
            if value.len() > MAX_TEXT || value.chars().any(char::is_control) {
                return Err(ResolveError::BadElement(msg!(
                    "resolve-element-bad",
                    name = name
                )));
            }
        }
        if !counters_well_formed(counters.trim()) {
            return Err(ResolveError::BadElement(msg!(
                "resolve-counters-bad",
                counters = counters.as_str()
            )));
        }
        Ok(())
    }
}

/// `FC/TC TYPE`: two numbers and a two-letter invoice type.
fn counters_well_formed(counters: &str) -> bool {
    let Some((numbers, kind)) = counters.split_once(' ') else {
        return false;
    };
    let Some((fc, tc)) = numbers.split_once('/') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit());
    digits(fc) && digits(tc) && kind.len() == 2 && kind.bytes().all(|b| b.is_ascii_uppercase())
}

impl Certifier {
    /// The open intents of the register, each with whether it waits for an administrator.
    pub fn open_intents(&self) -> Result<Vec<OpenIntent>, CertifyError> {
        let awaiting = self.awaiting_administrator();
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
        if by.len() > MAX_TEXT || note.len() > MAX_TEXT {
            return Err(ResolveError::BadElement(msg!(
                "resolve-text-too-long",
                max = MAX_TEXT
            )));
        }
        resolution.check()?;
        let awaiting = self.awaiting_administrator();
        if !awaiting.iter().any(|(id, _)| *id == intent) {
            return Err(ResolveError::NotAwaiting(intent));
        }
        let Some((_, open)) = self
            .store
            .open_intents()
            .map_err(CertifyError::from)?
            .into_iter()
            .find(|(id, _)| *id == intent)
        else {
            return Err(ResolveError::NotAwaiting(intent));
        };
        let outcome = match resolution {
            Resolution::Certified {
                code_def,
                qr_code,
                counters,
                nim,
                date_time,
            } => {
                let security = SecurityElements {
                    code_def: code_def.trim().to_owned(),
                    qr_code: qr_code.trim().to_owned(),
                    counters: counters.trim().to_owned(),
                    nim: nim.trim().to_owned(),
                    date_time,
                    date_time_as_sent: None,
                };
                let source = format!("administrator: {by}; {note}");
                Some(self.journal.certified(intent, security, &source).await?)
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
    pub(super) fn explain_in_flight(
        &self,
        principal: &Principal,
        error: CertifyError,
    ) -> CertifyError {
        let CertifyError::InFlight { rn } = &error else {
            return error;
        };
        let open = self
            .store
            .open_intent_for(&principal.org.id, principal.environment, rn)
            .ok()
            .flatten();
        match open {
            Some(id)
                if self
                    .awaiting_administrator()
                    .iter()
                    .any(|(other, _)| *other == id) =>
            {
                CertifyError::AwaitingAdministrator { rn: rn.clone() }
            }
            _ => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certified(counters: &str, code_def: &str) -> Resolution {
        Resolution::Certified {
            code_def: code_def.into(),
            qr_code: "DGI-RDC;CD01000001-1;X".into(),
            counters: counters.into(),
            nim: "CD01000001-1".into(),
            date_time: NaiveDateTime::default(),
        }
    }

    #[test]
    fn elements_typed_by_a_person_are_checked() {
        assert!(certified("12/345 FV", "ABCD-1234").check().is_ok());
        assert!(certified(" 1/1 FA ", "ABCD").check().is_ok());
        assert!(Resolution::NotCertified.check().is_ok());
        for (counters, code) in [
            ("12/345", "ABCD"),
            ("12-345 FV", "ABCD"),
            ("12/345 fv", "ABCD"),
            ("/345 FV", "ABCD"),
            ("12/345 FV", " "),
            ("12/345 FV", "AB\nCD"),
        ] {
            let error = certified(counters, code).check().unwrap_err();
            assert!(
                matches!(error, ResolveError::BadElement(_)),
                "{counters:?} {code:?}: {error}"
            );
        }
    }
}
