//! The e-DEF endpoints: routing, the bearer token, and each call's work against the
//! e-MCF's state. Synchronous: the transport (latency, 5xx, resets) is the server's.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{FixedOffset, NaiveDateTime, SecondsFormat, SubsecRound, Utc};
use hyper::{Method, StatusCode};
use mcf_sfe::fields;
use mcf_sfe::types::TaxpayerKey;

use super::answer::Answer;
use super::compute::{self, Checks};
use super::dgi_error::DgiError;
use super::faults::{EdefFaults, FaultHandle};
use super::json::{JsonObject, NumberStyle};
use super::lenient::required_decimal;
use super::reference::{self, ListKind};
use super::request::{parse_body, ConfirmRequest};
use super::state::{lock, EmcfState, FinalizedInvoice, Signer};
use super::EdefOptions;
use crate::config::DeviceConfig;

/// The DGI's clock: Kinshasa time (WAT, UTC+01:00, no daylight saving). A constant: checked
/// when compiling, it cannot fail at run time.
const KINSHASA: FixedOffset = match FixedOffset::east_opt(3600) {
    Some(offset) => offset,
    None => panic!("UTC+01:00 is a valid offset"),
};

/// One API call, as the server read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    /// HTTP method.
    pub method: &'a Method,
    /// Path, without the query.
    pub path: &'a str,
    /// The `Authorization` header, if any.
    pub authorization: Option<&'a str>,
    /// The body.
    pub body: &'a [u8],
}

/// Which endpoint a call is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// `GET /api/invoice`
    Status,
    /// `POST /api/invoice`
    Request,
    /// `PUT|POST /api/invoice/{uid}/confirm`
    Confirm(String),
    /// `PUT|POST /api/invoice/{uid}/cancel`
    Cancel(String),
    /// `GET /api/info/status`
    InfoStatus,
    /// `GET /api/info/taxGroups`
    TaxGroups,
    /// `GET /api/info/currencyRates`
    CurrencyRates,
    /// `GET /api/info/<kind>Types`
    List(ListKind),
}

/// The simulated DGI behind one e-MCF's token.
#[derive(Debug)]
pub(crate) struct Api {
    /// How it was started.
    pub options: EdefOptions,
    /// The faults, shared with the server and the [`FaultHandle`]s given out.
    pub faults: FaultHandle,
    /// The e-MCF's memory.
    pub state: Arc<Mutex<EmcfState>>,
}

impl Api {
    /// Answers an API call (not a control call). Unknown paths are 404, a known path with
    /// another verb 405, then the token is checked (401).
    pub(crate) fn handle(&self, call: Call<'_>) -> Answer {
        let route = match route(call.method, call.path) {
            Ok(route) => route,
            Err(answer) => return answer,
        };
        let faults = self.faults.get();
        if let Err(answer) = self.authorize(call.authorization, &faults) {
            return answer;
        }
        let style = if faults.numbers_as_strings {
            NumberStyle::Text
        } else {
            NumberStyle::Number
        };
        let result = match route {
            Route::Status => Ok(self.status()),
            Route::Request => self.request(call.body, style),
            Route::Confirm(uid) => self.confirm(&uid, call.body),
            Route::Cancel(uid) => self.cancel(&uid),
            Route::InfoStatus => Ok(self.info_status()),
            Route::TaxGroups => Ok(reference::tax_groups(
                &self.options.rates,
                faults.upper_case_keys,
                style,
            )),
            Route::CurrencyRates => Ok(reference::currency_rates(
                Utc::now().with_timezone(&KINSHASA).date_naive(),
                style,
            )),
            Route::List(kind) => Ok(kind.answer()),
        };
        match result {
            Ok(body) => Answer::json(StatusCode::OK, body),
            Err(Outcome::Refused(error)) => Answer::refusal(&error, faults.errors_on_200),
            Err(Outcome::Dropped) => Answer::dropped(),
        }
    }

    /// 401 unless the call carries the token (`Bearer <token>` or the bare token) and the
    /// token is still valid.
    fn authorize(&self, header: Option<&str>, faults: &EdefFaults) -> Result<(), Answer> {
        let given = header
            .map(str::trim)
            .map(|value| match value.split_once(' ') {
                Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
                _ => value,
            });
        if given != Some(self.options.token.as_str()) {
            return Err(Answer::http_error(
                StatusCode::UNAUTHORIZED,
                "jeton absent ou invalide",
            ));
        }
        if faults.token_expired || Utc::now() > self.options.token_valid_until {
            return Err(Answer::http_error(StatusCode::UNAUTHORIZED, "jeton expiré"));
        }
        Ok(())
    }

    /// `GET /api/invoice`.
    fn status(&self) -> String {
        let mut state = lock(&self.state);
        state.purge_expired(Instant::now());
        let list = state
            .pending()
            .iter()
            .map(|request| {
                JsonObject::new()
                    .text("date", &rfc3339(request.created_at))
                    .text("uid", &request.uid)
            })
            .collect::<Vec<_>>();
        self.header()
            .integer("pendingRequestsCount", list.len() as u64)
            .array("pendingRequestsList", list)
            .finish()
    }

    /// `POST /api/invoice`.
    fn request(&self, body: &[u8], style: NumberStyle) -> Result<String, Outcome> {
        let now = Instant::now();
        let (answer, uid) = {
            let mut state = lock(&self.state);
            state.purge_expired(now);
            if state.pending().len() >= self.options.pending_limit {
                state.refuse_full();
                return Err(Outcome::Refused(DgiError::TooManyPending {
                    limit: self.options.pending_limit,
                }));
            }
            let checks = Checks {
                nif: &self.options.nif,
                rates: &self.options.rates,
                state: &state,
            };
            let calculation = compute::calculate(body, &checks)?;
            let salt = format!("{}|{}", self.options.signing_key, self.options.nim);
            let uid = state.add_pending(calculation.clone(), now, self.options.expiry, &salt);
            (calculation.answer(&uid, style), uid)
        };
        // Never both locks at once: the faults are read after the state is released.
        if self.faults.take_expire_request() {
            // Answered as usual, but already expired for every later call.
            let _ = lock(&self.state).cancel(&uid);
        }
        if self.faults.take_drop_request() {
            return Err(Outcome::Dropped);
        }
        Ok(answer)
    }

    /// `PUT /api/invoice/{uid}/confirm`.
    fn confirm(&self, uid: &str, body: &[u8]) -> Result<String, Outcome> {
        let finalized = {
            let mut state = lock(&self.state);
            state.purge_expired(Instant::now());
            let calculation = state.pending_calculation(uid)?;
            let totals: ConfirmRequest = parse_body(body)?;
            let total = required_decimal("total", &totals.total)?;
            let vtotal = required_decimal("vtotal", &totals.vtotal)?;
            if total != calculation.total || vtotal != calculation.vat_total {
                return Err(Outcome::Refused(DgiError::processing(format!(
                    "les totaux ne correspondent pas au calcul: total {total} reçu, {:.2} \
                     calculé; vtotal {vtotal} reçu, {:.2} calculé",
                    calculation.total, calculation.vat_total
                ))));
            }
            let signer = Signer {
                nim: &self.options.nim,
                signing_key: &self.options.signing_key,
            };
            state.finalize(uid, signer, dgi_clock())?
        };
        let answer = self.confirmation(&finalized);
        if self.faults.take_drop_confirm() {
            return Err(Outcome::Dropped);
        }
        Ok(answer)
    }

    /// The security elements of `invoice`.
    fn confirmation(&self, invoice: &FinalizedInvoice) -> String {
        let options = &self.options;
        let qr_code = format!(
            "DGI-RDC;{};{};{};{}",
            options.nim,
            invoice.code_def,
            options.nif,
            fields::datetime(invoice.at)
        );
        JsonObject::new()
            .text("dateTime", &options.date_format.format(invoice.at))
            .text("qrCode", &qr_code)
            .text("codeDEFDGI", &invoice.code_def)
            .text("counters", &invoice.counters)
            .text("nim", &options.nim)
            .null("errorCode")
            .null("errorDesc")
            .finish()
    }

    /// `PUT /api/invoice/{uid}/cancel`.
    fn cancel(&self, uid: &str) -> Result<String, Outcome> {
        {
            let mut state = lock(&self.state);
            state.purge_expired(Instant::now());
            state.cancel(uid)?;
        }
        Ok(JsonObject::new()
            .text("uid", &uid.to_ascii_lowercase())
            .text("status", "cancelled")
            .null("errorCode")
            .null("errorDesc")
            .finish())
    }

    /// `GET /api/info/status`.
    fn info_status(&self) -> String {
        let device = DeviceConfig::default();
        let taxpayer = |key| device.taxpayer_value(key);
        let emcf = JsonObject::new()
            .text("nim", &self.options.nim)
            .text("status", "active")
            .text("shopName", taxpayer(TaxpayerKey::I0))
            .text("address1", taxpayer(TaxpayerKey::I1))
            .text("address2", taxpayer(TaxpayerKey::D1))
            .text("address3", "")
            .text("contact1", taxpayer(TaxpayerKey::I2))
            .text("contact2", taxpayer(TaxpayerKey::I3))
            .text("contact3", "");
        self.header().array("emcfList", vec![emcf]).finish()
    }

    /// The fields every status answer starts with.
    fn header(&self) -> JsonObject {
        JsonObject::new()
            .boolean("status", true)
            .text("version", "1.0")
            .text("nif", &self.options.nif)
            .text("nim", &self.options.nim)
            .text("tokenValid", &rfc3339(self.options.token_valid_until))
            .text("serverDateTime", &rfc3339(Utc::now()))
    }
}

/// Why a call has no JSON success answer.
#[derive(Debug)]
enum Outcome {
    /// A DGI refusal.
    Refused(DgiError),
    /// The work is done but the answer is lost (a fault).
    Dropped,
}

impl From<DgiError> for Outcome {
    fn from(error: DgiError) -> Outcome {
        Outcome::Refused(error)
    }
}

/// The route of `path` (any case, trailing `/` allowed); 404 or 405 when there is none.
fn route(method: &Method, path: &str) -> Result<Route, Answer> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let lower: Vec<String> = segments.iter().map(|s| s.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    let get = method == Method::GET;
    let put_or_post = method == Method::PUT || method == Method::POST;
    let (route, allowed) = match lower.as_slice() {
        ["api", "invoice"] if method == Method::POST => (Route::Request, true),
        ["api", "invoice"] => (Route::Status, get),
        ["api", "invoice", _, "confirm"] => (Route::Confirm(segments[2].to_owned()), put_or_post),
        ["api", "invoice", _, "cancel"] => (Route::Cancel(segments[2].to_owned()), put_or_post),
        ["api", "info", "status"] => (Route::InfoStatus, get),
        ["api", "info", "taxgroups"] => (Route::TaxGroups, get),
        ["api", "info", "currencyrates"] => (Route::CurrencyRates, get),
        ["api", "info", list] => match ListKind::from_segment(list) {
            Some(kind) => (Route::List(kind), get),
            None => return Err(Answer::not_found(path)),
        },
        _ => return Err(Answer::not_found(path)),
    };
    if allowed {
        Ok(route)
    } else {
        Err(Answer::method_not_allowed(method, path))
    }
}

/// Now on the DGI's clock, whole seconds.
fn dgi_clock() -> NaiveDateTime {
    Utc::now()
        .with_timezone(&KINSHASA)
        .naive_local()
        .trunc_subsecs(0)
}

/// `2026-03-01T10:00:00Z`
fn rfc3339(at: chrono::DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests;
