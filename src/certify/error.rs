//! Why a certification (or a lookup) did not succeed. Each variant has one stable error code;
//! the HTTP layer maps variants to statuses (docs/error-codes.md has the table).

use std::time::Duration;

use rust_decimal::Decimal;

use crate::certify::invoice::ValidationError;
use crate::certify::StorageFaultKind;
use crate::i18n::{Arg, Lang, Message};
use crate::msg;
use crate::store::StoreError;

mod credit;
mod token;

pub use credit::CreditExcess;
pub use token::TokenReason;

/// When to try again while the register's database does not answer (165): a server
/// restarting or failing over is back within seconds.
const DATABASE_RETRY: Duration = Duration::from_secs(5);

/// Whether the register's PostgreSQL server could not be reached (or a COMMIT's outcome is
/// unknown): 503, 165, worth a retry within seconds.
pub(crate) fn database_unreachable(error: &StoreError) -> bool {
    matches!(error, StoreError::Database(e) if e.is_unreachable())
}

/// Why the API key was refused (all HTTP 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization: Bearer ...` header.
    Missing,
    /// Not a key of this gateway (malformed, bad checksum, unknown id, wrong secret).
    Invalid,
    /// A known key that an admin disabled.
    Disabled,
}

/// A certification or lookup that did not succeed. Its text for the client is
/// [`CertifyError::describe`] in the reader's language; `Display` is the English one, for logs.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// The request body broke a rule (400).
    #[error("{0}")]
    Validation(#[from] ValidationError),
    /// The API key was refused (401).
    #[error("{}", self.describe(Lang::En))]
    Unauthorized(AuthFailure),
    /// The rn was certified before with other content (409).
    #[error("{}", self.describe(Lang::En))]
    DuplicateRn {
        /// The client's invoice number.
        rn: String,
    },
    /// The `Idempotency-Key` was used before with another request (422).
    #[error("{}", self.describe(Lang::En))]
    IdempotencyKeyReused {
        /// The rn the key is bound to.
        rn: String,
    },
    /// The `Idempotency-Key` header is malformed (400).
    #[error("{}", self.describe(Lang::En))]
    BadIdempotencyKey,
    /// The rn is being certified right now, or its outcome is being reconciled (409).
    #[error("{}", self.describe(Lang::En))]
    InFlight {
        /// The client's invoice number.
        rn: String,
    },
    /// The annual quota is used up (429).
    #[error("{}", self.describe(Lang::En))]
    QuotaExhausted {
        /// Certified this year.
        used: u64,
        /// The plan's quota.
        quota: u64,
        /// Quota year.
        year: i32,
    },
    /// A credit note would take more than its original has left (422, nothing sent): its
    /// total, added to the credit notes of the same original this register certified (or is
    /// certifying), is above the original's total.
    #[error("{}", self.describe(Lang::En))]
    CreditExceedsOriginal(Box<CreditExcess>),
    /// The invoice's total is above its organization's `max_invoice_total` (422, nothing
    /// sent).
    #[error("{}", self.describe(Lang::En))]
    AboveMaxTotal {
        /// The invoice's total (TTC, CDF), or the least it can be (`at_least`).
        total: Decimal,
        /// Whether `total` is a lower bound (an `ht` invoice before its VAT rates are known).
        at_least: bool,
        /// The organization's largest invoice total.
        max: Decimal,
    },
    /// The device refused the invoice with a text (422), or without one (an empty reply with
    /// its refusal status bit).
    #[error("{}", self.describe(Lang::En))]
    DeviceRefused {
        /// The device's text.
        text: String,
    },
    /// The payments do not cover the device's total (400).
    #[error("{}", self.describe(Lang::En))]
    PaymentsShort {
        /// Sum of the payments sent.
        paid: Decimal,
        /// The device's total.
        total: Decimal,
    },
    /// Every line is free: the device cannot finalize an invoice without a positive payment (400).
    #[error("{}", self.describe(Lang::En))]
    ZeroTotal,
    /// A field of the device's 33h subtotal differs from the gateway's own computation (422).
    #[error("{}", self.describe(Lang::En))]
    TotalsMismatch {
        /// The 33h field (MV, MVB, MTB, MTS...).
        field: &'static str,
        /// The device's value; `None` when its 33h reply does not carry the field.
        device: Option<String>,
        /// The gateway's value.
        expected: String,
    },
    /// A figure of the DGI's calculation differs from the gateway's own computation (422).
    #[error("{}", self.describe(Lang::En))]
    TotalsMismatchDgi {
        /// The calculation's field (`total`, `vtotal`, `tab`, `vab`...).
        field: String,
        /// The DGI's value.
        dgi: String,
        /// The gateway's value.
        expected: String,
    },
    /// The DGI's web API refused the invoice (422), with its own code and text.
    #[error("{}", self.describe(Lang::En))]
    DgiRefused {
        /// The DGI's `errorCode`.
        code: String,
        /// The DGI's `errorDesc`.
        text: String,
    },
    /// The e-MCF's token for the web API is missing, unreadable, expired or rejected (503
    /// without `Retry-After`: an operator must install a new one).
    #[error("{}", self.log_text())]
    TokenRejected {
        /// The device entry.
        device: String,
        /// Why, without the token.
        reason: TokenReason,
    },
    /// The rn's outcome with the DGI is not known and only an administrator can settle it (409).
    #[error("{}", self.describe(Lang::En))]
    AwaitingAdministrator {
        /// The client's invoice number.
        rn: String,
    },
    /// The invoice's totals would not fit the device's 33h reply frame (422).
    #[error("{}", self.describe(Lang::En))]
    TotalsTooLarge,
    /// The device is personalized for another taxpayer (503 without `Retry-After`: the
    /// configuration must be fixed).
    #[error("{}", self.describe(Lang::En))]
    WrongDevice {
        /// The device's NIF.
        device_nif: String,
        /// The organization's NIF.
        org_nif: String,
    },
    /// The organization's device is not in this gateway's configuration (503 without
    /// `Retry-After`: the gateway's setup must be fixed, a retry cannot help).
    #[error("{}", self.describe(Lang::En))]
    DeviceNotConfigured {
        /// The device entry the organization is bound to.
        device: String,
    },
    /// A sandbox key on a gateway that runs no sandbox (503 without `Retry-After`, like
    /// [`CertifyError::DeviceNotConfigured`]).
    #[error("{}", self.describe(Lang::En))]
    NoSandbox,
    /// The device answers but cannot certify now: its state cannot be read, or it does not
    /// give a rate the invoice needs (503: a setting or a person must act).
    #[error("{}", self.log_text())]
    DeviceNotReady {
        /// Why, in words.
        reason: Message,
    },
    /// The device cannot be reached or is busy (503).
    #[error("{}", self.log_text())]
    DeviceUnavailable {
        /// Why.
        reason: Message,
        /// When to retry.
        retry_after: Duration,
    },
    /// The device's queue is full (503).
    #[error("{}", self.describe(Lang::En))]
    QueueFull {
        /// When to retry.
        retry_after: Duration,
    },
    /// The device did not confirm the finalization; it is being reconciled (503).
    #[error("{}", self.describe(Lang::En))]
    OutcomeUnknown {
        /// The client's invoice number.
        rn: String,
        /// When to retry.
        retry_after: Duration,
    },
    /// The register (journal or index) failed (503).
    #[error("{}", self.log_text())]
    Store(#[from] StoreError),
    /// The register cannot be written now (disk full, read-only, I/O error): refused before
    /// any device or quota (503; 161, 162, 163).
    #[error("{}", self.describe(Lang::En))]
    RegisterUnwritable {
        /// Why.
        kind: StorageFaultKind,
    },
    /// The channel certified the invoice but the register could not record it yet: kept, and
    /// journaled as soon as it can; the retry gets the same certification (503, 164).
    #[error("{}", self.describe(Lang::En))]
    CertifiedNotRecorded {
        /// The client's invoice number.
        rn: String,
        /// What certified it: `box` or `web_api` (as `Channel::kind`).
        channel: &'static str,
    },
    /// No certified invoice with that rn (404).
    #[error("{}", self.describe(Lang::En))]
    NotFound {
        /// The client's invoice number.
        rn: String,
    },
    /// The channel is ahead of its register: it certified invoices the register holds
    /// neither as entries nor as open intents (a register restored from an older copy, a
    /// disk that lost its last records). It certifies nothing until an administrator
    /// settles it (503 with `Retry-After`; 171 for a box, 172 for a web API e-MCF).
    #[error("{}", self.describe(Lang::En))]
    RegisterBehind {
        /// `box` or `web_api`.
        channel: &'static str,
        /// The channel's counter numbers the register does not hold.
        missing: Vec<u64>,
    },
    /// The organization's device certified this rn (counter number `number`) and the
    /// register lost it; an administrator acknowledged it with its rn: never certified again
    /// (409, 173).
    #[error("{}", self.describe(Lang::En))]
    LostRn {
        /// The client's invoice number.
        rn: String,
        /// The device's counter number (TC) it was certified under.
        number: u64,
    },
    /// A bug or an unexpected state (500).
    #[error("{}", self.log_text())]
    Internal(String),
}

impl CertifyError {
    /// The stable numeric code of this error (validation codes come from the rule).
    pub fn code(&self) -> u16 {
        match self {
            CertifyError::Validation(e) => e.code,
            CertifyError::Unauthorized(AuthFailure::Missing) => 100,
            CertifyError::Unauthorized(AuthFailure::Invalid) => 101,
            CertifyError::Unauthorized(AuthFailure::Disabled) => 102,
            CertifyError::DuplicateRn { .. } => 110,
            CertifyError::LostRn { .. } => 173,
            CertifyError::InFlight { .. } | CertifyError::AwaitingAdministrator { .. } => 111,
            CertifyError::IdempotencyKeyReused { .. } => 112,
            CertifyError::BadIdempotencyKey => 113,
            CertifyError::QuotaExhausted { .. } => 130,
            CertifyError::DeviceRefused { .. } => 140,
            CertifyError::PaymentsShort { .. } => 141,
            CertifyError::ZeroTotal => 142,
            CertifyError::TotalsMismatch { .. } | CertifyError::TotalsMismatchDgi { .. } => 143,
            CertifyError::DgiRefused { .. } => 145,
            CertifyError::TotalsTooLarge => 144,
            CertifyError::DeviceUnavailable { .. } => 150,
            CertifyError::QueueFull { .. } => 151,
            CertifyError::OutcomeUnknown { .. } => 152,
            CertifyError::WrongDevice { .. } => 153,
            CertifyError::DeviceNotReady { .. } => 154,
            CertifyError::TokenRejected { .. } => 155,
            CertifyError::DeviceNotConfigured { .. } | CertifyError::NoSandbox => 156,
            CertifyError::Store(error) if database_unreachable(error) => 165,
            CertifyError::Store(_) => 160,
            CertifyError::RegisterUnwritable { kind } => kind.code(),
            CertifyError::CertifiedNotRecorded { .. } => 164,
            CertifyError::NotFound { .. } => 170,
            CertifyError::RegisterBehind { channel, .. } if *channel == "web_api" => 172,
            CertifyError::RegisterBehind { .. } => 171,
            CertifyError::CreditExceedsOriginal(_) => 180,
            CertifyError::AboveMaxTotal { .. } => 181,
            CertifyError::Internal(_) => 199,
        }
    }

    /// When the client should retry, for errors that are worth retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CertifyError::DeviceUnavailable { retry_after, .. }
            | CertifyError::QueueFull { retry_after }
            | CertifyError::OutcomeUnknown { retry_after, .. } => Some(*retry_after),
            CertifyError::InFlight { .. } => Some(Duration::from_secs(2)),
            CertifyError::Store(error) if database_unreachable(error) => Some(DATABASE_RETRY),
            CertifyError::RegisterUnwritable {
                kind: StorageFaultKind::Database,
            } => Some(DATABASE_RETRY),
            CertifyError::Store(_) | CertifyError::RegisterUnwritable { .. } => {
                Some(Duration::from_secs(30))
            }
            CertifyError::CertifiedNotRecorded { .. } => Some(Duration::from_secs(10)),
            CertifyError::DeviceNotReady { .. } => Some(Duration::from_secs(60)),
            CertifyError::AwaitingAdministrator { .. } | CertifyError::RegisterBehind { .. } => {
                Some(Duration::from_secs(300))
            }
            // The setup is wrong (a device of another taxpayer, a token to install, a device
            // or sandbox this gateway does not have): a person must act, a retry cannot help.
            CertifyError::WrongDevice { .. }
            | CertifyError::TokenRejected { .. }
            | CertifyError::DeviceNotConfigured { .. }
            | CertifyError::NoSandbox => None,
            // The request itself must change (or the key, the plan): never worth a retry.
            CertifyError::Validation(_)
            | CertifyError::Unauthorized(_)
            | CertifyError::DuplicateRn { .. }
            | CertifyError::LostRn { .. }
            | CertifyError::IdempotencyKeyReused { .. }
            | CertifyError::BadIdempotencyKey
            | CertifyError::QuotaExhausted { .. }
            | CertifyError::DeviceRefused { .. }
            | CertifyError::PaymentsShort { .. }
            | CertifyError::ZeroTotal
            | CertifyError::TotalsMismatch { .. }
            | CertifyError::TotalsMismatchDgi { .. }
            | CertifyError::DgiRefused { .. }
            | CertifyError::TotalsTooLarge
            | CertifyError::NotFound { .. }
            | CertifyError::CreditExceedsOriginal(_)
            | CertifyError::AboveMaxTotal { .. }
            | CertifyError::Internal(_) => None,
        }
    }

    /// The request field at fault, if one is.
    pub fn field(&self) -> Option<&str> {
        match self {
            CertifyError::Validation(e) => e.field.as_deref(),
            CertifyError::PaymentsShort { .. } => Some("payments"),
            CertifyError::ZeroTotal
            | CertifyError::CreditExceedsOriginal(_)
            | CertifyError::AboveMaxTotal { .. } => Some("items"),
            CertifyError::BadIdempotencyKey => Some("Idempotency-Key"),
            _ => None,
        }
    }

    /// The text for the client (`errorDesc`) in `lang`. The device's refusal text, the DGI's
    /// own text and technical details (the register's, a bug's) are quoted as they are.
    pub fn describe(&self, lang: Lang) -> String {
        self.message(lang).render(lang)
    }

    /// The English for logs: the client's text, then the technical detail it leaves out (the
    /// register's, the system's, a library's words, which only the log says).
    fn log_text(&self) -> String {
        let text = self.describe(Lang::En);
        let detail = match self {
            CertifyError::DeviceNotReady { reason }
            | CertifyError::DeviceUnavailable { reason, .. } => {
                reason.args().iter().find_map(|(name, value)| match value {
                    Arg::Text(detail) if *name == "detail" => Some(detail.clone()),
                    _ => None,
                })
            }
            CertifyError::TokenRejected { reason, .. } => Some(reason.to_string()),
            CertifyError::Store(error) => Some(error.to_string()),
            CertifyError::Internal(detail) => Some(detail.clone()),
            _ => None,
        };
        match detail {
            Some(detail) if !detail.is_empty() => format!("{text} ({detail})"),
            _ => text,
        }
    }

    /// The catalogue message, with any nested reason already rendered in `lang`.
    fn message(&self, lang: Lang) -> Message {
        // An amount inside a sentence, as the reader writes it ("30 000,00 CDF"); the API's
        // data fields keep the plain form.
        let amount = |value: Decimal| {
            crate::i18n::format::amount(value, crate::model::FISCAL_CURRENCY, lang)
        };
        match self {
            CertifyError::Validation(e) => e.message.clone(),
            CertifyError::Unauthorized(AuthFailure::Missing) => msg!("err-api-key-missing"),
            CertifyError::Unauthorized(AuthFailure::Invalid) => msg!("err-api-key-invalid"),
            CertifyError::Unauthorized(AuthFailure::Disabled) => msg!("err-api-key-disabled"),
            CertifyError::DuplicateRn { rn } => msg!("err-duplicate-rn", rn = rn),
            CertifyError::LostRn { rn, number } => {
                msg!("err-lost-rn", rn = rn, number = *number)
            }
            CertifyError::IdempotencyKeyReused { rn } => {
                msg!("err-idempotency-key-reused", rn = rn)
            }
            CertifyError::BadIdempotencyKey => msg!("err-idempotency-key-malformed"),
            CertifyError::InFlight { rn } => msg!("err-in-flight", rn = rn),
            CertifyError::QuotaExhausted { used, quota, year } => msg!(
                "err-quota-exhausted",
                used = *used,
                quota = *quota,
                year = year.to_string()
            ),
            CertifyError::DeviceRefused { text } if text.is_empty() => {
                msg!("err-device-refused-silently")
            }
            CertifyError::DeviceRefused { text } => msg!("err-device-refused", text = text),
            CertifyError::PaymentsShort { paid, total } => {
                msg!("err-payments-short", paid = *paid, total = *total)
            }
            CertifyError::ZeroTotal => msg!("err-zero-total"),
            CertifyError::TotalsMismatch {
                field,
                device: Some(device),
                expected,
            } => msg!(
                "err-totals-mismatch",
                field = *field,
                device = device,
                expected = expected
            ),
            CertifyError::TotalsMismatch {
                field,
                device: None,
                expected,
            } => msg!(
                "err-totals-mismatch-absent",
                field = *field,
                expected = expected
            ),
            CertifyError::TotalsMismatchDgi {
                field,
                dgi,
                expected,
            } => msg!(
                "err-totals-mismatch-dgi",
                field = field,
                dgi = dgi,
                expected = expected
            ),
            CertifyError::DgiRefused { code, text } => {
                msg!("err-dgi-refused", code = code, text = text)
            }
            CertifyError::TokenRejected { device, reason } => msg!(
                "err-token-rejected",
                device = device,
                reason = reason.message().render(lang)
            ),
            CertifyError::AwaitingAdministrator { rn } => {
                msg!("err-awaiting-administrator", rn = rn)
            }
            CertifyError::TotalsTooLarge => msg!("err-totals-too-large"),
            CertifyError::WrongDevice {
                device_nif,
                org_nif,
            } => msg!(
                "err-wrong-device",
                device_nif = device_nif,
                org_nif = org_nif
            ),
            CertifyError::DeviceNotConfigured { device } => {
                msg!("err-device-not-configured", device = device)
            }
            CertifyError::NoSandbox => msg!("err-no-sandbox"),
            CertifyError::DeviceNotReady { reason } => {
                msg!("err-device-not-ready", reason = reason.render(lang))
            }
            CertifyError::DeviceUnavailable { reason, .. } => {
                msg!("err-device-unavailable", reason = reason.render(lang))
            }
            CertifyError::QueueFull { .. } => msg!("err-queue-full"),
            CertifyError::OutcomeUnknown { rn, .. } => msg!("err-outcome-unknown", rn = rn),
            CertifyError::Store(error) if database_unreachable(error) => {
                msg!("err-database-unavailable")
            }
            CertifyError::Store(_) => msg!("err-register-unavailable"),
            CertifyError::RegisterUnwritable { kind } => {
                msg!("err-register-unwritable", why = kind.why())
            }
            CertifyError::CertifiedNotRecorded { rn, channel } => {
                msg!("err-certified-not-recorded", rn = rn, channel = *channel)
            }
            CertifyError::NotFound { rn } => msg!("err-not-found", rn = rn),
            CertifyError::CreditExceedsOriginal(excess) => msg!(
                "err-credit-exceeds-original",
                total = amount(excess.total),
                bound = bound(excess.at_least),
                original_rn = &excess.original_rn,
                reference = &excess.reference,
                original_total = amount(excess.original_total),
                credited = amount(excess.credited),
                pending = amount(excess.pending),
                room = amount(excess.room.max(Decimal::ZERO))
            ),
            CertifyError::AboveMaxTotal {
                total,
                at_least,
                max,
            } => msg!(
                "err-above-max-total",
                total = amount(*total),
                bound = bound(*at_least),
                max = amount(*max)
            ),
            CertifyError::RegisterBehind { channel, missing } => {
                let missing = crate::model::numbers_text(missing);
                if *channel == "web_api" {
                    msg!("err-register-behind-web-api", missing = missing)
                } else {
                    msg!("err-register-behind", missing = missing)
                }
            }
            CertifyError::Internal(_) => msg!("err-internal"),
        }
    }
}

/// The key the messages' `$bound` selects by: whether an amount is exact or a lower bound.
fn bound(at_least: bool) -> &'static str {
    if at_least {
        "at-least"
    } else {
        "exact"
    }
}

#[cfg(test)]
mod tests;
