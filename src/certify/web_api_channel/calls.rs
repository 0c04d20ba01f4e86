//! The API's calls, typed: each answer read with the tolerant reader of `protocols/edef`, its
//! anomalies logged once per channel and counted, and every way a call can fail said in one
//! [`ApiError`] the channel maps to the client's answer.

use std::collections::HashSet;
use std::sync::Mutex;

use edef::paths::{self, Action, ActionCase};
use edef::reply::{refusal_in, Read};
use edef::{
    Anomaly, Calculation, ConfirmBody, Confirmation, DgiError, EmcfStatus, InvoiceRequest,
    ReplyError, TaxRates,
};
use hyper::Method;
use tracing::warn;

use super::client::{Answer, CallError, DgiClient};
use super::token::TokenError;
use crate::certify::TokenReason;

/// Why a call did not give what was asked.
#[derive(Debug, thiserror::Error)]
pub(super) enum ApiError {
    /// Nothing reached the DGI.
    #[error("{0}")]
    NotSent(String),
    /// The token cannot be used, or the DGI rejected it (401/403).
    #[error("{0}")]
    Token(TokenReason),
    /// The request may have reached the DGI; no usable answer came back (timeout, reset,
    /// a 5xx): what it did is not known.
    #[error("{0}")]
    NoAnswer(String),
    /// The DGI refused (an `errorCode`, on a 2xx or a 4xx).
    #[error("{0}")]
    Refused(DgiError),
    /// A 2xx or 4xx whose body cannot be read as the answer.
    #[error("{0}")]
    Unreadable(String),
}

/// The DGI's error code for "too many pending requests" (docs/web-api.md §7).
const TOO_MANY_PENDING: &str = "1";

impl ApiError {
    /// The DGI refused a request because its pending window is full: nothing was created.
    pub(super) fn is_window_full(&self) -> bool {
        matches!(self, ApiError::Refused(refusal) if refusal.code == TOO_MANY_PENDING)
    }
}

impl From<CallError> for ApiError {
    fn from(error: CallError) -> Self {
        match error {
            CallError::NotSent(text) => ApiError::NotSent(text),
            CallError::Token(error) => ApiError::Token(error.into()),
            CallError::Lost(text) => ApiError::NoAnswer(text),
        }
    }
}

impl From<TokenError> for ApiError {
    fn from(error: TokenError) -> Self {
        ApiError::Token(error.into())
    }
}

/// The anomalies already logged by one channel: each is logged once, counted every time.
#[derive(Default)]
pub(super) struct Oddities {
    seen: Mutex<HashSet<(String, String)>>,
}

impl Oddities {
    fn report(&self, device: &str, call: &str, anomalies: Vec<Anomaly>) {
        for anomaly in anomalies {
            crate::metrics::device_reply_anomaly(device, 0, &format!("{call}.{}", anomaly.field));
            let key = (format!("{call}.{}", anomaly.field), anomaly.what.clone());
            let first = crate::sync::lock(&self.seen).insert(key);
            if first {
                warn!(
                    device,
                    call,
                    field = %anomaly.field,
                    what = %anomaly.what,
                    "the DGI's answer differs from what is documented (logged once, counted)"
                );
            }
        }
    }
}

/// The calls of one e-MCF.
pub(super) struct Api {
    pub client: DgiClient,
    pub device: String,
    pub action_case: ActionCase,
    pub oddities: Oddities,
}

impl Api {
    /// `GET /api/invoice`.
    pub(super) async fn status(&self) -> Result<EmcfStatus, ApiError> {
        let answer = self
            .call("status", Method::GET, paths::INVOICE, None)
            .await?;
        self.read("status", answer, EmcfStatus::read)
    }

    /// `GET /api/info/taxGroups`.
    pub(super) async fn tax_rates(&self) -> Result<TaxRates, ApiError> {
        let answer = self
            .call("taxGroups", Method::GET, paths::TAX_GROUPS, None)
            .await?;
        self.read("taxGroups", answer, TaxRates::read)
    }

    /// `POST /api/invoice`.
    pub(super) async fn request(&self, invoice: &InvoiceRequest) -> Result<Calculation, ApiError> {
        let body = serde_json::to_vec(invoice)
            .map_err(|e| ApiError::NotSent(format!("the request could not be written: {e}")))?;
        let answer = self
            .call("request", Method::POST, paths::INVOICE, Some(body))
            .await?;
        self.read("request", answer, Calculation::read)
    }

    /// `PUT /api/invoice/{uid}/confirm`.
    pub(super) async fn confirm(
        &self,
        uid: &str,
        totals: ConfirmBody,
    ) -> Result<Confirmation, ApiError> {
        let body = serde_json::to_vec(&totals)
            .map_err(|e| ApiError::NotSent(format!("the confirm could not be written: {e}")))?;
        let path = paths::action(uid, Action::Confirm, self.action_case);
        let answer = self.call("confirm", Method::PUT, &path, Some(body)).await?;
        self.read("confirm", answer, Confirmation::read)
    }

    /// `PUT /api/invoice/{uid}/cancel`: `Ok` when the DGI took it (its answer's body is not
    /// documented and not read).
    pub(super) async fn cancel(&self, uid: &str) -> Result<(), ApiError> {
        let path = paths::action(uid, Action::Cancel, self.action_case);
        let answer = self.call("cancel", Method::PUT, &path, None).await?;
        match answer.status {
            200..=299 => match refusal_in(&answer.body) {
                Some(refusal) => Err(ApiError::Refused(refusal)),
                None => Ok(()),
            },
            _ => Err(self.failure(&answer)),
        }
    }

    /// One call, its time counted in `emcf_device_round_trip_seconds{command=call}` whatever
    /// its outcome (the bench's overhead figure subtracts it).
    async fn call(
        &self,
        call: &'static str,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, ApiError> {
        let started = std::time::Instant::now();
        let answer = self.client.call(method, path, body).await;
        crate::metrics::web_api_round_trip(&self.device, call, started.elapsed());
        Ok(answer?)
    }

    /// Reads a 2xx with `reader`; anything else is a failure.
    fn read<T>(
        &self,
        call: &str,
        answer: Answer,
        reader: fn(&[u8]) -> Result<Read<T>, ReplyError>,
    ) -> Result<T, ApiError> {
        if !(200..300).contains(&answer.status) {
            return Err(self.failure(&answer));
        }
        let read = reader(&answer.body).map_err(|e| {
            ApiError::Unreadable(format!("the DGI's answer to {call} cannot be read: {e}"))
        })?;
        self.oddities.report(&self.device, call, read.anomalies);
        read.outcome.map_err(ApiError::Refused)
    }

    /// What a non-2xx answer means.
    fn failure(&self, answer: &Answer) -> ApiError {
        match answer.status {
            401 | 403 => ApiError::Token(TokenReason::Rejected {
                status: answer.status,
            }),
            500..=599 => ApiError::NoAnswer(format!("the DGI answered HTTP {}", answer.status)),
            status => match refusal_in(&answer.body) {
                Some(refusal) => ApiError::Refused(refusal),
                None => ApiError::Unreadable(format!(
                    "the DGI answered HTTP {status} without an error code"
                )),
            },
        }
    }
}
