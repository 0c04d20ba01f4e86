//! Injected faults: what a real DGI server and the network in between do to a client (slow
//! answers, 5xx, resets, lost answers, early expiry, expired token, odd JSON). Set at start
//! ([`super::EdefOptions::faults`], `--latency-ms`), at run time through a [`FaultHandle`], or
//! through the control endpoint `POST /_sim/faults` ([`FaultPatch::from_json`]). What each one
//! does and takes is [`EDEF_FAULTS`]. The counts (`..._next...`) count down as they act.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::state::{lock, EmcfState};
use crate::faults::spec::{FaultKind, FaultList, FaultSpec, FaultValue, FromFault, SetBy, NBSP};

/// Longest latency the simulator applies, whatever is asked.
pub const MAX_LATENCY: Duration = Duration::from_secs(600);

/// [`MAX_LATENCY`] in milliseconds, the most `latency_ms` takes.
const MAX_LATENCY_MS: u64 = 600_000;

/// `latency_ms` (also the flag `--latency-ms` of `emcf-sim edef`).
pub const LATENCY_MS: FaultSpec = FaultSpec {
    name: "latency_ms",
    kind: FaultKind::Milliseconds {
        max: MAX_LATENCY_MS,
    },
    what: "Every API answer (not the control endpoint's) is written this many milliseconds \
           after the work is done. Also --latency-ms at start.",
    example: "250",
};

/// The web API simulator's faults: members of the JSON of `POST /_sim/faults`, the fields
/// of [`EdefFaults`].
pub const EDEF_FAULTS: FaultList = FaultList {
    title: "Faults of the web API (emcf-sim edef), set while it runs",
    set_by: SetBy::ControlEndpoint,
    intro: "All off by default. POST /_sim/faults with a JSON object of some of them changes \
            those and leaves the others; GET /_sim/faults reads them all, DELETE /_sim/faults \
            turns them all off. A wrong name or value is refused (HTTP 400; errorDesc, in \
            French, names the fault, what it takes and an example) and changes nothing. The \
            counts count down as they act: for the next one, true is the preferred form (1 is \
            the same); a number for several.",
    how: "curl -X POST http://127.0.0.1:8088/_sim/faults -d '{\"drop_next_confirm_answer\": true}'",
    faults: &[
        LATENCY_MS,
        FaultSpec {
            name: "fail_next_5xx",
            kind: FaultKind::NextCount,
            what: "The next API calls answer HTTP 503 with an HTML page, doing nothing.",
            example: "true",
        },
        FaultSpec {
            name: "reset_next",
            kind: FaultKind::NextCount,
            what: "The next API calls get their connection closed without an answer, doing \
                   nothing.",
            example: "true",
        },
        FaultSpec {
            name: "fail_next_confirm_5xx",
            kind: FaultKind::NextCount,
            what: "The next confirmations answer HTTP 503, doing nothing (the request stays \
                   pending): a 5xx after the confirmation was sent.",
            example: "true",
        },
        FaultSpec {
            name: "drop_next_confirm_answer",
            kind: FaultKind::NextCount,
            what: "The next successful confirmations finalize the invoice, then close the \
                   connection without an answer (the lost answer).",
            example: "true",
        },
        FaultSpec {
            name: "drop_next_request_answer",
            kind: FaultKind::NextCount,
            what: "The next successful invoice requests become pending, then the connection \
                   closes without an answer.",
            example: "true",
        },
        FaultSpec {
            name: "expire_next_request",
            kind: FaultKind::NextCount,
            what: "The next successful invoice requests are answered (with their uid), then \
                   forgotten at once as if expired: their confirmation or cancellation gets \
                   error 20.",
            example: "true",
        },
        FaultSpec {
            name: "expire_all_pending",
            kind: FaultKind::OneShot,
            what: "Forgets every pending request now (early expiry).",
            example: "true",
        },
        FaultSpec {
            name: "token_expired",
            kind: FaultKind::OnOff,
            what: "Every API call answers 401 (expired token).",
            example: "true",
        },
        FaultSpec {
            name: "errors_on_200",
            kind: FaultKind::OnOff,
            what: "DGI refusals (errorCode) come on HTTP 200 instead of 400.",
            example: "true",
        },
        FaultSpec {
            name: "numbers_as_strings",
            kind: FaultKind::OnOff,
            what: "Amounts and rates in the answers are JSON strings (\"12.50\").",
            example: "true",
        },
        FaultSpec {
            name: "upper_case_keys",
            kind: FaultKind::OnOff,
            what: "taxGroups answers uppercase keys ({\"A\": 0, \"B\": 16, ...}).",
            example: "true",
        },
    ],
};

/// The faults of an e-DEF simulator, all off by default; each field is the fault of
/// [`EDEF_FAULTS`] with its name. Its JSON form (`GET /_sim/faults`) uses these names; a
/// count reads as the number of times it is still to act.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EdefFaults {
    /// Milliseconds every answer waits (at most [`MAX_LATENCY`]).
    pub latency_ms: u64,
    /// API calls still to answer 503.
    pub fail_next_5xx: u32,
    /// API calls still to reset.
    pub reset_next: u32,
    /// Confirmations still to answer 503.
    pub fail_next_confirm_5xx: u32,
    /// Successful confirmations whose answer is still to be dropped.
    pub drop_next_confirm_answer: u32,
    /// Successful requests whose answer is still to be dropped.
    pub drop_next_request_answer: u32,
    /// Successful requests still to be forgotten once answered.
    pub expire_next_request: u32,
    /// One-shot: forget every pending request now; always `false` once applied.
    pub expire_all_pending: bool,
    /// Every API call answers 401.
    pub token_expired: bool,
    /// DGI refusals on HTTP 200.
    pub errors_on_200: bool,
    /// Amounts and rates as JSON strings.
    pub numbers_as_strings: bool,
    /// `taxGroups` with uppercase keys.
    pub upper_case_keys: bool,
}

impl EdefFaults {
    /// How long every answer waits.
    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms).min(MAX_LATENCY)
    }
}

/// A change to some faults: the members present replace the current values, the others
/// stay (the body of `POST /_sim/faults`, read by [`FaultPatch::from_json`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPatch {
    /// See [`EdefFaults::latency_ms`].
    pub latency_ms: Option<u64>,
    /// See [`EdefFaults::fail_next_5xx`].
    pub fail_next_5xx: Option<u32>,
    /// See [`EdefFaults::reset_next`].
    pub reset_next: Option<u32>,
    /// See [`EdefFaults::fail_next_confirm_5xx`].
    pub fail_next_confirm_5xx: Option<u32>,
    /// See [`EdefFaults::drop_next_confirm_answer`].
    pub drop_next_confirm_answer: Option<u32>,
    /// See [`EdefFaults::drop_next_request_answer`].
    pub drop_next_request_answer: Option<u32>,
    /// See [`EdefFaults::expire_next_request`].
    pub expire_next_request: Option<u32>,
    /// See [`EdefFaults::expire_all_pending`].
    pub expire_all_pending: Option<bool>,
    /// See [`EdefFaults::token_expired`].
    pub token_expired: Option<bool>,
    /// See [`EdefFaults::errors_on_200`].
    pub errors_on_200: Option<bool>,
    /// See [`EdefFaults::numbers_as_strings`].
    pub numbers_as_strings: Option<bool>,
    /// See [`EdefFaults::upper_case_keys`].
    pub upper_case_keys: Option<bool>,
}

/// Why the body of `POST /_sim/faults` is refused; its `Display` is the French `errorDesc`
/// (the simulator answers in French, as the DGI does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultPatchError {
    /// The body is empty.
    Empty,
    /// The body is not JSON; where the reading stopped.
    NotJson {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
    },
    /// The body is JSON, but not an object.
    NotAnObject,
    /// A member that is no fault.
    Unknown(String),
    /// A fault given a value it does not take.
    BadValue {
        /// The fault.
        fault: FaultSpec,
        /// The value, as sent (shortened).
        value: String,
    },
}

impl fmt::Display for FaultPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let example = r#"{"drop_next_confirm_answer": true}"#;
        match self {
            FaultPatchError::Empty => write!(
                f,
                "le corps est vide{NBSP}: envoyez un objet JSON des pannes simulées à changer, \
                 par exemple {example}"
            ),
            FaultPatchError::NotJson { line, column } => write!(
                f,
                "le corps n'est pas du JSON lisible (ligne {line}, colonne {column}){NBSP}: \
                 envoyez un objet JSON des pannes simulées à changer, par exemple {example}"
            ),
            FaultPatchError::NotAnObject => write!(
                f,
                "le corps doit être un objet JSON des pannes simulées à changer, par exemple \
                 {example}"
            ),
            FaultPatchError::Unknown(name) => {
                let known: Vec<&str> = EDEF_FAULTS.faults.iter().map(|s| s.name).collect();
                write!(
                    f,
                    "panne simulée inconnue{NBSP}: «{NBSP}{name}{NBSP}»{NBSP}; les pannes \
                     simulées sont{NBSP}: {} (emcf-sim edef --help les décrit)",
                    known.join(", ")
                )
            }
            FaultPatchError::BadValue { fault, value } => write!(
                f,
                "valeur refusée pour la panne simulée {}{NBSP}: «{NBSP}{value}{NBSP}»{NBSP}; \
                 elle prend {}, par exemple {}",
                fault.name,
                fault.kind.values_fr(),
                fault.json_example()
            ),
        }
    }
}

impl std::error::Error for FaultPatchError {}

/// At most this many characters of a refused name or value are repeated in the refusal.
const SHOWN: usize = 40;

/// `text` cut to [`SHOWN`] characters.
fn shown(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(SHOWN).collect();
    cut.push('…');
    cut
}

impl FaultPatch {
    /// Reads the body of `POST /_sim/faults`: a JSON object whose members are faults of
    /// [`EDEF_FAULTS`], each with a value its kind takes. Either all of it is read, or it is
    /// refused, saying which member and why.
    pub fn from_json(body: &[u8]) -> Result<FaultPatch, FaultPatchError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(FaultPatchError::Empty);
        }
        let value: Value =
            serde_json::from_slice(body).map_err(|error| FaultPatchError::NotJson {
                line: error.line(),
                column: error.column().max(1),
            })?;
        let Value::Object(members) = value else {
            return Err(FaultPatchError::NotAnObject);
        };
        let mut patch = FaultPatch::default();
        for (name, value) in &members {
            let fault = EDEF_FAULTS
                .faults
                .iter()
                .find(|fault| fault.name == name)
                .ok_or_else(|| FaultPatchError::Unknown(shown(name)))?;
            let refused = || FaultPatchError::BadValue {
                fault: *fault,
                value: shown(&value.to_string()),
            };
            let read = fault.kind.read_json(value).ok_or_else(refused)?;
            patch.set(fault.name, read).ok_or_else(refused)?;
        }
        Ok(patch)
    }

    /// Sets the member `name` to `value`; `None` if there is no such member or the value is
    /// not of its type.
    fn set(&mut self, name: &str, value: FaultValue) -> Option<()> {
        fn put<T: FromFault>(member: &mut Option<T>, value: FaultValue) -> Option<()> {
            *member = Some(T::from_fault(value)?);
            Some(())
        }
        match name {
            "latency_ms" => put(&mut self.latency_ms, value),
            "fail_next_5xx" => put(&mut self.fail_next_5xx, value),
            "reset_next" => put(&mut self.reset_next, value),
            "fail_next_confirm_5xx" => put(&mut self.fail_next_confirm_5xx, value),
            "drop_next_confirm_answer" => put(&mut self.drop_next_confirm_answer, value),
            "drop_next_request_answer" => put(&mut self.drop_next_request_answer, value),
            "expire_next_request" => put(&mut self.expire_next_request, value),
            "expire_all_pending" => put(&mut self.expire_all_pending, value),
            "token_expired" => put(&mut self.token_expired, value),
            "errors_on_200" => put(&mut self.errors_on_200, value),
            "numbers_as_strings" => put(&mut self.numbers_as_strings, value),
            "upper_case_keys" => put(&mut self.upper_case_keys, value),
            _ => None,
        }
    }

    /// Applies the members present to `faults`.
    pub fn apply(&self, faults: &mut EdefFaults) {
        fn set<T: Copy>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut faults.latency_ms, self.latency_ms);
        set(&mut faults.fail_next_5xx, self.fail_next_5xx);
        set(&mut faults.reset_next, self.reset_next);
        set(
            &mut faults.fail_next_confirm_5xx,
            self.fail_next_confirm_5xx,
        );
        set(
            &mut faults.drop_next_confirm_answer,
            self.drop_next_confirm_answer,
        );
        set(
            &mut faults.drop_next_request_answer,
            self.drop_next_request_answer,
        );
        set(&mut faults.expire_next_request, self.expire_next_request);
        set(&mut faults.expire_all_pending, self.expire_all_pending);
        set(&mut faults.token_expired, self.token_expired);
        set(&mut faults.errors_on_200, self.errors_on_200);
        set(&mut faults.numbers_as_strings, self.numbers_as_strings);
        set(&mut faults.upper_case_keys, self.upper_case_keys);
    }
}

/// Changes the faults of a running simulator. Cheap to clone.
#[derive(Debug, Clone)]
pub struct FaultHandle {
    faults: Arc<Mutex<EdefFaults>>,
    state: Arc<Mutex<EmcfState>>,
}

impl FaultHandle {
    /// A handle on `faults` of the e-MCF `state`; `expire_all_pending` acts at once.
    pub(crate) fn new(faults: EdefFaults, state: Arc<Mutex<EmcfState>>) -> FaultHandle {
        let handle = FaultHandle {
            faults: Arc::new(Mutex::new(EdefFaults::default())),
            state,
        };
        handle.set(faults);
        handle
    }

    /// The current faults.
    pub fn get(&self) -> EdefFaults {
        lock(&self.faults).clone()
    }

    /// Replaces every fault.
    pub fn set(&self, faults: EdefFaults) {
        self.update(|current| *current = faults);
    }

    /// Changes some faults; returns them as they are afterwards. With
    /// `expire_all_pending`, every pending request is forgotten before this returns.
    pub fn update(&self, change: impl FnOnce(&mut EdefFaults)) -> EdefFaults {
        let (expire, after) = {
            let mut faults = lock(&self.faults);
            change(&mut faults);
            let expire = std::mem::take(&mut faults.expire_all_pending);
            (expire, faults.clone())
        };
        // Never both locks at once: the API locks the state, then the faults.
        if expire {
            lock(&self.state).expire_all();
        }
        after
    }

    /// Applies a control-endpoint patch; returns the faults afterwards.
    pub fn apply(&self, patch: &FaultPatch) -> EdefFaults {
        self.update(|faults| patch.apply(faults))
    }

    /// Counts down `reset_next`; whether this call is to be reset.
    pub(crate) fn take_reset(&self) -> bool {
        take(&mut lock(&self.faults).reset_next)
    }

    /// Counts down `fail_next_5xx`; whether this call answers 503.
    pub(crate) fn take_5xx(&self) -> bool {
        take(&mut lock(&self.faults).fail_next_5xx)
    }

    /// Counts down `fail_next_confirm_5xx`; whether this confirm answers 503.
    pub(crate) fn take_confirm_5xx(&self) -> bool {
        take(&mut lock(&self.faults).fail_next_confirm_5xx)
    }

    /// Counts down `drop_next_confirm_answer`; whether this confirm's answer is dropped.
    pub(crate) fn take_drop_confirm(&self) -> bool {
        take(&mut lock(&self.faults).drop_next_confirm_answer)
    }

    /// Counts down `drop_next_request_answer`; whether this request's answer is dropped.
    pub(crate) fn take_drop_request(&self) -> bool {
        take(&mut lock(&self.faults).drop_next_request_answer)
    }

    /// Counts down `expire_next_request`; whether this request is forgotten once answered.
    pub(crate) fn take_expire_request(&self) -> bool {
        take(&mut lock(&self.faults).expire_next_request)
    }
}

/// Counts `counter` down; whether it was above 0.
fn take(counter: &mut u32) -> bool {
    if *counter == 0 {
        return false;
    }
    *counter -= 1;
    true
}

#[cfg(test)]
mod tests;
