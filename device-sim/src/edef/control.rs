//! The control endpoint, for tests and sandboxes (no token, no faults, never delayed):
//!
//! - `GET /_sim/state`: `{"pending":[uid...],"finalized":[{"uid","rn","type","codeDEFDGI",
//!   "counters","total","vtotal","reference","at"}...],"refusedFull":N}` (expired requests
//!   removed first; `refusedFull`: requests refused because the window was full);
//! - `GET /_sim/faults`: the current [`EdefFaults`] as JSON;
//! - `POST /_sim/faults`: a [`FaultPatch`] (the members given replace the current values),
//!   answers the faults afterwards; a body that is not one ([`FaultPatch::from_json`]: an
//!   unknown fault, a value its kind does not take) is a 400 saying which and why, and
//!   changes nothing;
//! - `DELETE /_sim/faults`: every fault off.

use std::time::Instant;

use hyper::{Method, StatusCode};

use super::answer::Answer;
use super::api::Api;
use super::faults::{EdefFaults, FaultPatch};
use super::json::{JsonObject, NumberStyle};
use super::state::lock;
use super::DateFormat;

/// The path prefix of the control endpoint.
pub(crate) const PREFIX: &str = "/_sim/";

/// Answers a control call.
pub(crate) fn handle(api: &Api, method: &Method, path: &str, body: &[u8]) -> Answer {
    let name = path
        .strip_prefix(PREFIX)
        .unwrap_or_default()
        .trim_end_matches('/');
    match (method, name) {
        (&Method::GET, "state") => Answer::json(StatusCode::OK, state(api)),
        (&Method::GET, "faults") => faults_answer(&api.faults.get()),
        (&Method::POST, "faults") => match FaultPatch::from_json(body) {
            Ok(patch) => faults_answer(&api.faults.apply(&patch)),
            Err(error) => Answer::http_error(StatusCode::BAD_REQUEST, &error.to_string()),
        },
        (&Method::DELETE, "faults") => {
            api.faults.set(EdefFaults::default());
            faults_answer(&api.faults.get())
        }
        (_, "state" | "faults") => Answer::method_not_allowed(method, path),
        _ => Answer::not_found(path),
    }
}

/// `GET /_sim/state`.
fn state(api: &Api) -> String {
    let mut state = lock(&api.state);
    state.purge_expired(Instant::now());
    let finalized = state
        .finalized()
        .iter()
        .map(|invoice| {
            JsonObject::new()
                .text("uid", &invoice.uid)
                .text("rn", &invoice.rn)
                .text("type", invoice.invoice_type.as_str())
                .text("codeDEFDGI", &invoice.code_def)
                .text("counters", &invoice.counters)
                .amount("total", invoice.total, NumberStyle::Number)
                .amount("vtotal", invoice.vat, NumberStyle::Number)
                .optional_text("reference", invoice.reference.as_deref())
                .text("at", &DateFormat::Iso.format(invoice.at))
        })
        .collect();
    JsonObject::new()
        .text_array(
            "pending",
            state.pending().iter().map(|request| request.uid.as_str()),
        )
        .array("finalized", finalized)
        .integer("refusedFull", state.refused_full())
        .finish()
}

fn faults_answer(faults: &EdefFaults) -> Answer {
    match serde_json::to_string(faults) {
        Ok(body) => Answer::json(StatusCode::OK, body),
        Err(error) => Answer::http_error(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
    }
}
