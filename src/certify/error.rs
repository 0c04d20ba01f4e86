//! Why a certification (or a lookup) did not succeed. Each variant has one stable error code;
//! the HTTP layer maps variants to statuses (docs/error-codes.md has the table).

use std::time::Duration;

use rust_decimal::Decimal;

use crate::certify::invoice::ValidationError;
use crate::store::StoreError;

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

/// A certification or lookup that did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// The request body broke a rule (400).
    #[error("{0}")]
    Validation(#[from] ValidationError),
    /// The API key was refused (401).
    #[error("{}", match .0 {
        AuthFailure::Missing => "missing API key: send the header 'Authorization: Bearer <key>'",
        AuthFailure::Invalid => "invalid API key",
        AuthFailure::Disabled => "this API key is disabled",
    })]
    Unauthorized(AuthFailure),
    /// The rn was certified before with other content (409).
    #[error(
        "invoice {rn} was already certified with different content; a new invoice needs a new rn"
    )]
    DuplicateRn {
        /// The client's invoice number.
        rn: String,
    },
    /// The `Idempotency-Key` was used before with another request (422).
    #[error("this Idempotency-Key was already used with a different request (invoice {rn}); a new request needs a new key")]
    IdempotencyKeyReused {
        /// The rn the key is bound to.
        rn: String,
    },
    /// The `Idempotency-Key` header is malformed (400).
    #[error("the Idempotency-Key header must be 1 to 255 printable ASCII characters, optionally in double quotes")]
    BadIdempotencyKey,
    /// The rn is being certified right now, or its outcome is being reconciled (409).
    #[error("invoice {rn} is being certified; retry later to get its result")]
    InFlight {
        /// The client's invoice number.
        rn: String,
    },
    /// The annual quota is used up (429).
    #[error("the annual invoice quota of this organization is reached ({used} of {quota} in {year}); ask the administrator to upgrade the plan")]
    QuotaExhausted {
        /// Certified this year.
        used: u64,
        /// The plan's quota.
        quota: u64,
        /// Quota year.
        year: i32,
    },
    /// The device refused the invoice with a text (422), or without one (an empty reply with
    /// its refusal status bit).
    #[error("the e-MCF device refused the invoice: {}", refusal_text(.text))]
    DeviceRefused {
        /// The device's text.
        text: String,
    },
    /// The payments do not cover the device's total (400).
    #[error(
        "the payments ({paid}) do not cover the invoice total computed by the device ({total})"
    )]
    PaymentsShort {
        /// Sum of the payments sent.
        paid: Decimal,
        /// The device's total.
        total: Decimal,
    },
    /// Every line is free: the device cannot finalize an invoice without a positive payment (400).
    #[error("the invoice total is 0: the device needs a positive payment to finalize, so an invoice of free lines only cannot be certified")]
    ZeroTotal,
    /// A field of the device's 33h subtotal differs from the gateway's own computation (422).
    #[error("the device's {field} ({device}) differs from the gateway's computation ({expected}); the invoice was cancelled")]
    TotalsMismatch {
        /// The 33h field (MV, MVB, MTB, MTS...).
        field: &'static str,
        /// The device's value (or why there is none).
        device: String,
        /// The gateway's value.
        expected: String,
    },
    /// A figure of the DGI's calculation differs from the gateway's own computation (422).
    #[error("the DGI's {field} ({dgi}) differs from the gateway's computation ({expected}); the request was cancelled and nothing was certified")]
    TotalsMismatchDgi {
        /// The calculation's field (`total`, `vtotal`, `tab`, `vab`...).
        field: String,
        /// The DGI's value.
        dgi: String,
        /// The gateway's value.
        expected: String,
    },
    /// The DGI's web API refused the invoice (422), with its own code and text.
    #[error("the DGI refused the invoice (DGI error {code}: {text})")]
    DgiRefused {
        /// The DGI's `errorCode`.
        code: String,
        /// The DGI's `errorDesc`.
        text: String,
    },
    /// The e-MCF's token for the web API is missing, unreadable, expired or rejected (503: an
    /// operator must install a new one).
    #[error("the DGI web API does not accept this gateway's token for device {device}: {reason}; an administrator must install a new token")]
    TokenRejected {
        /// The device entry.
        device: String,
        /// Why, without the token.
        reason: String,
    },
    /// The rn's outcome with the DGI is not known and only an administrator can settle it (409).
    #[error("invoice {rn}: the DGI's answer to its confirmation was lost and the DGI no longer lists it as pending, so whether it was certified is not known; an administrator must settle it (emcf-gateway intent resolve). Do not send it again under another rn")]
    AwaitingAdministrator {
        /// The client's invoice number.
        rn: String,
    },
    /// The invoice's totals would not fit the device's 33h reply frame (422).
    #[error("the invoice's totals are too large for the device's subtotal reply (too many tax groups with large amounts); split the invoice")]
    TotalsTooLarge,
    /// The device is personalized for another taxpayer (503: configuration).
    #[error("the e-MCF device is personalized for NIF {device_nif}, not this organization's NIF {org_nif}; the device binding must be fixed")]
    WrongDevice {
        /// The device's NIF.
        device_nif: String,
        /// The organization's NIF.
        org_nif: String,
    },
    /// The device answers but cannot certify now: its state cannot be read, or it does not
    /// give a rate the invoice needs (503: a setting or a person must act).
    #[error("the e-MCF device cannot certify now: {reason}")]
    DeviceNotReady {
        /// Why, in words.
        reason: String,
    },
    /// The device cannot be reached or is busy (503).
    #[error("the e-MCF device is unavailable: {reason}")]
    DeviceUnavailable {
        /// Why.
        reason: String,
        /// When to retry.
        retry_after: Duration,
    },
    /// The device's queue is full (503).
    #[error("the e-MCF device is busy (queue full); retry shortly")]
    QueueFull {
        /// When to retry.
        retry_after: Duration,
    },
    /// The device did not confirm the finalization; it is being reconciled (503).
    #[error("the e-MCF device did not confirm invoice {rn}; the gateway is checking it with the device, retry the same request to get the result")]
    OutcomeUnknown {
        /// The client's invoice number.
        rn: String,
        /// When to retry.
        retry_after: Duration,
    },
    /// The register (journal or index) failed (503).
    #[error("the invoice register is unavailable: {0}")]
    Store(#[from] StoreError),
    /// No certified invoice with that rn (404).
    #[error("no certified invoice with rn {rn}")]
    NotFound {
        /// The client's invoice number.
        rn: String,
    },
    /// A bug or an unexpected state (500).
    #[error("internal error: {0}")]
    Internal(String),
}

/// The box's refusal text, or what stood for it.
fn refusal_text(text: &str) -> &str {
    if text.is_empty() {
        "no text (an empty reply with the refusal status bit)"
    } else {
        text
    }
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
            CertifyError::Store(_) => 160,
            CertifyError::NotFound { .. } => 170,
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
            CertifyError::Store(_) | CertifyError::WrongDevice { .. } => {
                Some(Duration::from_secs(30))
            }
            CertifyError::DeviceNotReady { .. } => Some(Duration::from_secs(60)),
            CertifyError::TokenRejected { .. } => Some(Duration::from_secs(300)),
            CertifyError::AwaitingAdministrator { .. } => Some(Duration::from_secs(300)),
            _ => None,
        }
    }

    /// The request field at fault, if one is.
    pub fn field(&self) -> Option<&str> {
        match self {
            CertifyError::Validation(e) => e.field.as_deref(),
            CertifyError::PaymentsShort { .. } => Some("payments"),
            CertifyError::ZeroTotal => Some("items"),
            CertifyError::BadIdempotencyKey => Some("Idempotency-Key"),
            _ => None,
        }
    }
}
